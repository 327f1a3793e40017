/* ew_unary.c — unary elementwise ops. One expression per op, instantiated for every type the
 * op takes through the type lists of ew.h. Erf, Exp, Gelu, Tanh and Sigmoid (and Swish) on
 * float32 (and the 16-bit floats, computed in float) use detmath.h's branch-free forms, so
 * their loops vectorize and give the same bits everywhere; Log, Elu, Selu, Celu, Softplus,
 * Mish, the trigonometric and hyperbolic functions and every op in double use detmath.h's
 * double forms (float results rounded once from double). No op calls libm's transcendental
 * functions (docs/ops.md, "Exact mode and libm"). */
/* -O2 vectorizes only loops of known trip count; quiet comparisons let selects vectorize
 * (results are unchanged: no reassociation, and detmath.h switches contraction off) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic", "no-trapping-math")
#endif
#include <string.h>
#include <tgmath.h>

#include "clones.h"
#include "detmath.h"
#include "ew.h"
#include "f32_array.h"
#include "fastmath.h"
#include "parallel.h"

typedef struct ew_par {
	double alpha, beta, gamma, lambd, bias;
	int det_neg, det_pos;
} ew_par;

typedef void (*un_fn)(int64_t n, void *out, const void *in, const ew_par *p);

/* out[i] = STORE(OP(x, p, CT)) with x = LD(in[i]) */
#define UN_FN(OP, DT) un_##OP##_##DT
#define UN_DEF_OUT(OP, DT, T, CT, LD, OT, STORE)                                           \
	static inline void UN_FN(OP, DT)(int64_t n, void *o_, const void *a_, const ew_par *p) \
	{                                                                                  \
		typedef CT ct_t;                                                           \
		(void)(ct_t)0;                                                             \
		(void)p;                                                                   \
		OT *o = o_;                                                                \
		const T *a = a_;                                                           \
		for (int64_t i = 0; i < n; i++) {                                          \
			const CT x = (CT)LD(a[i]);                                         \
			o[i] = STORE(OP(x, p, CT));                                        \
		}                                                                          \
	}
#define UN_DEF(OP, DT, T, CT, LD) UN_DEF_OUT(OP, DT, T, CT, LD, T, OM_EW_ST_##DT)
#define UN_BOOL(v) ((uint8_t)((v) ? 1 : 0))
#define UN_DEF_BOOL(OP, DT, T, CT, LD) UN_DEF_OUT(OP, DT, T, CT, LD, uint8_t, UN_BOOL)
#define UN_ENTRY(OP, DT, T, CT, LD) [DT] = UN_FN(OP, DT),

/* ---- expressions (x in the compute type CT, p the attributes) ---------------------------- */

#define K(v) ((ct_t)(v))
#define NEG_F(x, p, CT) (-(x))
#define NEG_S(x, p, CT) OM_EW_WRAP(-, 0, x)
#define ABS_F(x, p, CT) fabs(x)
#define ABS_S(x, p, CT) ((x) < 0 ? OM_EW_WRAP(-, 0, x) : (x))
#define ID_U(x, p, CT) (x)
#define SQRT_F(x, p, CT) sqrt(x)
#define RECIP_F(x, p, CT) (K(1) / (x))
/* detmath.h: float forms where there are, else the double form rounded once (DET_D) */
#define DET_D(f) static inline float ew_##f##_f(float x) { return (float)om_det_##f(x); }
DET_D(log)
DET_D(expm1)
DET_D(sinh)
DET_D(cosh)
DET_D(asinh)
DET_D(acosh)
DET_D(atanh)
DET_D(atan)
DET_D(asin)
DET_D(acos)
DET_D(sin)
DET_D(cos)
DET_D(tan)
/* softplus in double: x + log1p(e^-x) above 0, log1p(e^x) else */
static inline double ew_softplus_d(double x)
{
	return x > 0 ? x + om_det_log1p(om_det_exp(-x)) : om_det_log1p(om_det_exp(x));
}
static inline float ew_softplus_f(float x) { return (float)ew_softplus_d(x); }
/* x tanh(softplus x), in double */
static inline double ew_mish_d(double x) { return x * om_det_tanh(ew_softplus_d(x)); }
static inline float ew_mish_f(float x) { return (float)ew_mish_d(x); }
#define DET(v, f) _Generic((v), float: ew_##f##_f, default: om_det_##f)(v)
#define DET2(v, ff, fd) _Generic((v), float: ff, default: fd)(v)
#define DET_EXP(v) DET2(v, om_det_expf, om_det_exp)
#define DET_ERF(v) DET2(v, om_det_erff, om_det_erf)
#define EXP_F(x, p, CT) DET_EXP(x)
#define LOG_F(x, p, CT) DET(x, log)
#define ERF_F(x, p, CT) DET_ERF(x)
#define TANH_F(x, p, CT) DET2(x, om_det_tanhf, om_det_tanh)
/* FusedConv's epilogue (conv_epilogue.h) calls the same om_det_sigmoidf and om_det_tanhf */
#define SIGMOID_F(x, p, CT) DET2(x, om_det_sigmoidf, om_det_sigmoid)
#define CLAMP01(v, CT) ((v) < 0 ? K(0) : (v) > 1 ? K(1) : (v))
#define HSIG_F(x, p, CT) CLAMP01(K(p->alpha) * (x) + K(p->beta), CT)
#define HSWISH_F(x, p, CT) ((x) * CLAMP01((x) / K(6) + K(0.5), CT))
#define RELU_F(x, p, CT) ((x) < 0 ? K(0) : (x))
#define RELU_S(x, p, CT) ((x) < 0 ? 0 : (x))
#define LRELU_F(x, p, CT) ((x) < 0 ? K(p->alpha) * (x) : (x))
#define ELU_F(x, p, CT) ((x) < 0 ? K(p->alpha) * DET(x, expm1) : (x))
#define SELU_F(x, p, CT) (K(p->gamma) * ((x) <= 0 ? K(p->alpha) * DET(x, expm1) : (x)))
#define SOFTPLUS_F(x, p, CT) DET2(x, ew_softplus_f, ew_softplus_d)
#define SOFTSIGN_F(x, p, CT) ((x) / (K(1) + fabs(x)))
#define GELU_F(x, p, CT) (K(0.5) * (x) * (K(1) + DET_ERF((x) * K(0.7071067811865476))))
/* 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3) */
static inline float ew_gelu_tanh_f(float x)
{
	const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
	return x * om_det_sigmoidf(2.0f * u);
}
static inline double ew_gelu_tanh_d(double x)
{
	return 0.5 * x * (1 + om_det_tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
#define GELU_TANH_F(x, p, CT) _Generic((x), float: ew_gelu_tanh_f, default: ew_gelu_tanh_d)(x)
#define FLOOR_F(x, p, CT) floor(x)
#define CEIL_F(x, p, CT) ceil(x)
#define ROUND_F(x, p, CT) rint(x) /* half to even in the default rounding mode */
#define SIGN_F(x, p, CT) ((x) > 0 ? K(1) : (x) < 0 ? K(-1) : (x) == 0 ? K(0) : (x))
#define SIGN_S(x, p, CT) ((x) > 0 ? 1 : (x) < 0 ? -1 : 0)
#define SIGN_U(x, p, CT) ((x) > 0 ? 1u : 0u)
#define NOT_B(x, p, CT) (!(x))
#define BNOT(x, p, CT) (~(x))
#define ISNAN_F(x, p, CT) ((x) != (x))
#define ISINF_F(x, p, CT) (isinf(x) && ((x) > 0 ? p->det_pos : p->det_neg))
#define SIN_F(x, p, CT) DET(x, sin)
#define COS_F(x, p, CT) DET(x, cos)
#define TAN_F(x, p, CT) DET(x, tan)
#define ASIN_F(x, p, CT) DET(x, asin)
#define ACOS_F(x, p, CT) DET(x, acos)
#define ATAN_F(x, p, CT) DET(x, atan)
#define SINH_F(x, p, CT) DET(x, sinh)
#define COSH_F(x, p, CT) DET(x, cosh)
#define ASINH_F(x, p, CT) DET(x, asinh)
#define ACOSH_F(x, p, CT) DET(x, acosh)
#define ATANH_F(x, p, CT) DET(x, atanh)
#define TRELU_F(x, p, CT) ((x) > K(p->alpha) ? (x) : K(0))
#define CELU_F(x, p, CT)                                                                   \
	((x) > 0 ? (x) : K(p->alpha) * DET((x) / K(p->alpha), expm1))
#define SHRINK_F(x, p, CT)                                                                 \
	((x) < -K(p->lambd) ? (x) + K(p->bias) : (x) > K(p->lambd) ? (x) - K(p->bias) : K(0))
#define MISH_F(x, p, CT) DET2(x, ew_mish_f, ew_mish_d)
#define SWISH_F(x, p, CT) ((x) * SIGMOID_F(K(p->alpha) * (x), p, CT))

/* ---- tables ------------------------------------------------------------------------------ */

#define UN_TABLE_F(name, F)                                                                \
	OM_EW_FLOATS(UN_DEF, F)                                                            \
	static const un_fn name[OM_DTYPE_COUNT] = {OM_EW_FLOATS(UN_ENTRY, F)};
#define UN_TABLE_FS(name, F, S)                                                            \
	OM_EW_FLOATS(UN_DEF, F)                                                            \
	OM_EW_SINTS(UN_DEF, S)                                                             \
	static const un_fn name[OM_DTYPE_COUNT] = {OM_EW_FLOATS(UN_ENTRY, F)               \
							   OM_EW_SINTS(UN_ENTRY, S)};
#define UN_TABLE_FSU(name, F, S, U)                                                        \
	OM_EW_FLOATS(UN_DEF, F)                                                            \
	OM_EW_SINTS(UN_DEF, S)                                                             \
	OM_EW_UINTS(UN_DEF, U)                                                             \
	static const un_fn name[OM_DTYPE_COUNT] = {                                        \
		OM_EW_FLOATS(UN_ENTRY, F) OM_EW_SINTS(UN_ENTRY, S) OM_EW_UINTS(UN_ENTRY, U)};

UN_TABLE_FS(t_neg, NEG_F, NEG_S)
UN_TABLE_FSU(t_abs, ABS_F, ABS_S, ID_U)
UN_TABLE_F(t_sqrt, SQRT_F)
UN_TABLE_F(t_recip, RECIP_F)
UN_TABLE_F(t_exp, EXP_F)
UN_TABLE_F(t_log, LOG_F)
/* Erf and Gelu on float32 run in blocks (om_det_erff_array); the same bits as ERF_F. On x86-64
 * an AVX2 clone is picked at load time: the same operations, no contraction, eight lanes. */
#define UN_CLONES OM_CLONES_AVX2
UN_CLONES static void un_erf_f32(int64_t n, void *o, const void *a, const ew_par *p)
{
	(void)p;
	om_det_erff_array(n, o, a);
}

/* Gelu of m <= GELU_BLOCK floats of x into o (o may be x or a: x[i] is read before o[i] is
 * written); u is scratch */
enum { GELU_BLOCK = 256 };
static inline void gelu_block(int64_t m, float *o, const float *x, float *u)
{
	for (int64_t i = 0; i < m; i++)
		u[i] = x[i] * 0.7071067811865476f;
	om_det_erff_array(m, u, u);
	for (int64_t i = 0; i < m; i++)
		o[i] = 0.5f * x[i] * (1.0f + u[i]);
}

UN_CLONES static void un_gelu_f32(int64_t n, void *o_, const void *a_, const ew_par *p)
{
	(void)p;
	float *o = o_, u[GELU_BLOCK];
	const float *a = a_; /* o may be a */
	for (int64_t i0 = 0; i0 < n; i0 += GELU_BLOCK)
		gelu_block(n - i0 < GELU_BLOCK ? n - i0 : GELU_BLOCK, o + i0, a + i0, u);
}

/* com.microsoft BiasGelu (ops_contrib.c): Gelu(a + b) over rows of d floats, b of d floats,
 * the sum in the same blocks as the Gelu: the bits of Add then Gelu. The clones are static:
 * GCC gives the ifunc of an extern target_clones function default visibility whatever
 * -fvisibility says, which would export it from libomopt.so. */
UN_CLONES static void bias_gelu_f32(int64_t rows, int64_t d, float *o, const float *a,
				    const float *b)
{
	float u[GELU_BLOCK], x[GELU_BLOCK];
	for (int64_t r = 0; r < rows; r++)
		for (int64_t j0 = 0; j0 < d; j0 += GELU_BLOCK) {
			const int64_t m = d - j0 < GELU_BLOCK ? d - j0 : GELU_BLOCK;
			const float *ar = a + r * d + j0, *br = b + j0;
			for (int64_t i = 0; i < m; i++)
				x[i] = ar[i] + br[i];
			gelu_block(m, o + r * d + j0, x, u);
		}
}

void om_ew_bias_gelu_f32(int64_t rows, int64_t d, float *o, const float *a, const float *b)
{
	bias_gelu_f32(rows, d, o, a, b);
}

#define UN_ENTRY_NOT_F32(OP, DT, T, CT, LD) UN_ENTRY_NF_##DT(OP)
#define UN_ENTRY_NF_OM_FLOAT(OP)
#define UN_ENTRY_NF_OM_DOUBLE(OP) [OM_DOUBLE] = UN_FN(OP, OM_DOUBLE),
#define UN_ENTRY_NF_OM_FLOAT16(OP) [OM_FLOAT16] = UN_FN(OP, OM_FLOAT16),
#define UN_ENTRY_NF_OM_BFLOAT16(OP) [OM_BFLOAT16] = UN_FN(OP, OM_BFLOAT16),
/* the loops of the other float types only (float32 has its own: no unused function) */
#define UN_DEF_NOT_F32(OP, DT, T, CT, LD) UN_DEF_NF_##DT(OP, DT, T, CT, LD)
#define UN_DEF_NF_OM_FLOAT(OP, DT, T, CT, LD)
#define UN_DEF_NF_OM_DOUBLE(OP, DT, T, CT, LD) UN_DEF(OP, DT, T, CT, LD)
#define UN_DEF_NF_OM_FLOAT16(OP, DT, T, CT, LD) UN_DEF(OP, DT, T, CT, LD)
#define UN_DEF_NF_OM_BFLOAT16(OP, DT, T, CT, LD) UN_DEF(OP, DT, T, CT, LD)
OM_EW_FLOATS(UN_DEF_NOT_F32, ERF_F)
static const un_fn t_erf[OM_DTYPE_COUNT] = {[OM_FLOAT] = un_erf_f32,
					     OM_EW_FLOATS(UN_ENTRY_NOT_F32, ERF_F)};
/* Tanh, Sigmoid and Swish on float32: the same loops as TANH_F, SIGMOID_F and SWISH_F, with
 * an AVX2 clone (eight lanes, no contraction: the same bits) */
UN_CLONES static void un_tanh_f32(int64_t n, void *o_, const void *a_, const ew_par *p)
{
	(void)p;
	float *o = o_;
	const float *a = a_;
	for (int64_t i = 0; i < n; i++)
		o[i] = om_det_tanhf(a[i]);
}
UN_CLONES static void un_sigmoid_f32(int64_t n, void *o_, const void *a_, const ew_par *p)
{
	(void)p;
	float *o = o_;
	const float *a = a_;
	for (int64_t i = 0; i < n; i++)
		o[i] = om_det_sigmoidf(a[i]);
}
UN_CLONES static void un_swish_f32(int64_t n, void *o_, const void *a_, const ew_par *p)
{
	const float alpha = (float)p->alpha;
	float *o = o_;
	const float *a = a_;
	for (int64_t i = 0; i < n; i++)
		o[i] = a[i] * om_det_sigmoidf(alpha * a[i]);
}
OM_EW_FLOATS(UN_DEF_NOT_F32, TANH_F)
static const un_fn t_tanh[OM_DTYPE_COUNT] = {[OM_FLOAT] = un_tanh_f32,
					      OM_EW_FLOATS(UN_ENTRY_NOT_F32, TANH_F)};
OM_EW_FLOATS(UN_DEF_NOT_F32, SIGMOID_F)
static const un_fn t_sigmoid[OM_DTYPE_COUNT] = {[OM_FLOAT] = un_sigmoid_f32,
						 OM_EW_FLOATS(UN_ENTRY_NOT_F32, SIGMOID_F)};
UN_TABLE_F(t_hsig, HSIG_F)
UN_TABLE_F(t_hswish, HSWISH_F)
UN_TABLE_FS(t_relu, RELU_F, RELU_S)
UN_TABLE_F(t_lrelu, LRELU_F)
UN_TABLE_F(t_elu, ELU_F)
UN_TABLE_F(t_selu, SELU_F)
UN_TABLE_F(t_softplus, SOFTPLUS_F)
UN_TABLE_F(t_softsign, SOFTSIGN_F)
OM_EW_FLOATS(UN_DEF_NOT_F32, GELU_F)
static const un_fn t_gelu[OM_DTYPE_COUNT] = {[OM_FLOAT] = un_gelu_f32,
					      OM_EW_FLOATS(UN_ENTRY_NOT_F32, GELU_F)};
UN_CLONES static void un_gelu_tanh_f32(int64_t n, void *o_, const void *a_, const ew_par *p)
{
	(void)p;
	float *o = o_;
	const float *a = a_;
	for (int64_t i = 0; i < n; i++)
		o[i] = ew_gelu_tanh_f(a[i]);
}
OM_EW_FLOATS(UN_DEF_NOT_F32, GELU_TANH_F)
static const un_fn t_gelu_tanh[OM_DTYPE_COUNT] = {[OM_FLOAT] = un_gelu_tanh_f32,
						   OM_EW_FLOATS(UN_ENTRY_NOT_F32, GELU_TANH_F)};
UN_TABLE_F(t_floor, FLOOR_F)
UN_TABLE_F(t_ceil, CEIL_F)
UN_TABLE_F(t_round, ROUND_F)
UN_TABLE_FSU(t_sign, SIGN_F, SIGN_S, SIGN_U)
UN_TABLE_F(t_sin, SIN_F)
UN_TABLE_F(t_cos, COS_F)
UN_TABLE_F(t_tan, TAN_F)
UN_TABLE_F(t_asin, ASIN_F)
UN_TABLE_F(t_acos, ACOS_F)
UN_TABLE_F(t_atan, ATAN_F)
UN_TABLE_F(t_sinh, SINH_F)
UN_TABLE_F(t_cosh, COSH_F)
UN_TABLE_F(t_asinh, ASINH_F)
UN_TABLE_F(t_acosh, ACOSH_F)
UN_TABLE_F(t_atanh, ATANH_F)
UN_TABLE_F(t_trelu, TRELU_F)
UN_TABLE_F(t_celu, CELU_F)
UN_TABLE_F(t_shrink, SHRINK_F)
UN_TABLE_F(t_mish, MISH_F)
OM_EW_FLOATS(UN_DEF_NOT_F32, SWISH_F)
static const un_fn t_swish[OM_DTYPE_COUNT] = {[OM_FLOAT] = un_swish_f32,
					       OM_EW_FLOATS(UN_ENTRY_NOT_F32, SWISH_F)};
OM_EW_BOOLS(UN_DEF, NOT_B)
static const un_fn t_not[OM_DTYPE_COUNT] = {OM_EW_BOOLS(UN_ENTRY, NOT_B)};
OM_EW_SINTS(UN_DEF, BNOT)
OM_EW_UINTS(UN_DEF, BNOT)
static const un_fn t_bnot[OM_DTYPE_COUNT] = {OM_EW_SINTS(UN_ENTRY, BNOT)
						     OM_EW_UINTS(UN_ENTRY, BNOT)};
OM_EW_FLOATS(UN_DEF_BOOL, ISNAN_F)
OM_EW_FLOATS(UN_DEF_BOOL, ISINF_F)
static const un_fn t_isnan[OM_DTYPE_COUNT] = {OM_EW_FLOATS(UN_ENTRY, ISNAN_F)};
static const un_fn t_isinf[OM_DTYPE_COUNT] = {OM_EW_FLOATS(UN_ENTRY, ISINF_F)};

/* ---- generic infer and kernel ------------------------------------------------------------ */

/* fast mode's float32 loops (num/fastmath.h: FMA, AVX-512; not bit-identical across ISAs) */
typedef void (*un_fast_fn)(int64_t n, float *y, const float *x, const ew_par *p);
static void fast_sigmoid(int64_t n, float *y, const float *x, const ew_par *p)
{
	(void)p;
	om_fast_sigmoid_f32(n, y, x);
}
static void fast_swish(int64_t n, float *y, const float *x, const ew_par *p)
{
	om_fast_swish_f32(n, y, x, (float)p->alpha);
}
static void fast_hardswish(int64_t n, float *y, const float *x, const ew_par *p)
{
	(void)p;
	om_fast_hardswish_f32(n, y, x);
}
static void fast_gelu(int64_t n, float *y, const float *x, const ew_par *p)
{
	(void)p;
	om_fast_gelu_f32(n, y, x);
}

typedef struct un_op {
	const un_fn *tab;
	bool out_bool;
	float alpha, beta, gamma; /* attribute defaults */
	un_fast_fn fast;          /* float32 in fast mode, or NULL */
} un_op;

/* One op over elements of x into y, in pieces (each element's value is the same whichever
 * piece computes it: om_par_for's pieces start at multiples of OM_EW_GRAIN elements, where the
 * vector loops are aligned as they are at element 0) */
typedef struct un_job {
	un_fn fn;
	un_fast_fn fast; /* instead of fn when set */
	int32_t via;     /* 0, or the 16-bit float type run through fn (or fast) on float32 */
	const ew_par *p;
	void *o;
	const void *a;
	size_t osize, asize;
} un_job;

/* float16 and bfloat16 through the float32 loops, UN_VIA elements at a time: the bits of
 * their own loops (both compute in float and round once), which convert element by element
 * in software and do not vectorize (Sigmoid on [128, 1408] float16: 1.8 ms) */
enum { UN_VIA = 256 };
static void un_via_f32(const un_job *j, int64_t n, void *o, const void *a)
{
	float x[UN_VIA], y[UN_VIA];
	for (int64_t i = 0; i < n; i += UN_VIA) {
		const int64_t m = n - i < UN_VIA ? n - i : UN_VIA;
		om_to_f32(j->via, (const uint16_t *)a + i, m, x);
		if (j->fast)
			j->fast(m, y, x, j->p);
		else
			j->fn(m, y, x, j->p);
		om_from_f32(j->via, y, m, (uint16_t *)o + i);
	}
}

static void un_piece(void *arg, int64_t lo, int64_t hi)
{
	const un_job *j = arg;
	void *o = (char *)j->o + (size_t)lo * j->osize;
	const void *a = (const char *)j->a + (size_t)lo * j->asize;
	if (j->via)
		un_via_f32(j, hi - lo, o, a);
	else if (j->fast)
		j->fast(hi - lo, o, a, j->p);
	else
		j->fn(hi - lo, o, a, j->p);
}

static om_kind un_infer(om_ctx *c, const un_op *op)
{
	if (c->nin < 1 || !c->in[0] || !c->nout || !c->out[0])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "input or output missing");
	const int32_t dt = c->in[0]->dtype;
	if (dt <= 0 || dt >= OM_DTYPE_COUNT || !op->tab[dt])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%s does not take element type %s", c->node->op,
				om_dtype_name(dt));
	om_set_shape(c->out[0], op->out_bool ? OM_BOOL : dt, c->in[0]->rank, c->in[0]->dims);
	return OM_OK;
}

static om_kind un_kernel(om_ctx *c, const un_op *op)
{
	const om_node *nd = c->node;
	const int32_t dt = c->in[0]->dtype;
	if (dt <= 0 || dt >= OM_DTYPE_COUNT || !op->tab[dt])
		return un_infer(c, op);
	const om_tensor *x = c->in[0], *y = c->out[0];
	if (x->nbytes < om_tensor_bytes_for(dt, x->rank, x->dims) ||
	    y->nbytes < om_tensor_bytes_for(y->dtype, x->rank, x->dims))
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "buffer below its shape");
	const ew_par p = {
		.alpha = om_attr_float(nd, "alpha", op->alpha),
		.beta = om_attr_float(nd, "beta", op->beta),
		.gamma = om_attr_float(nd, "gamma", op->gamma),
		.lambd = om_attr_float(nd, "lambd", 0.5f),
		.bias = om_attr_float(nd, "bias", 0.0f),
		.det_neg = om_attr_int(nd, "detect_negative", 1) != 0,
		.det_pos = om_attr_int(nd, "detect_positive", 1) != 0,
	};
	un_job j = {.fn = op->tab[dt], .p = &p, .o = y->data, .a = x->data,
		    .osize = om_dtype_size(y->dtype), .asize = om_dtype_size(dt)};
	const bool half = (dt == OM_FLOAT16 || dt == OM_BFLOAT16) && op->tab[OM_FLOAT] &&
			  !op->out_bool;
	if (half)
		j.via = dt, j.fn = op->tab[OM_FLOAT];
	if (!c->exact && op->fast && (dt == OM_FLOAT || half))
		j.fast = op->fast;
	om_par_for(c->threads, om_tensor_numel(x), OM_EW_GRAIN, un_piece, &j);
	return OM_OK;
}

#define EW_UNARY_FAST(Name, tab, out_bool, alpha, beta, gamma, fast)                      \
	static const un_op op_##Name = {tab, out_bool, alpha, beta, gamma, fast};          \
	om_kind om_ew_infer_##Name(om_ctx *c) { return un_infer(c, &op_##Name); }          \
	om_kind om_ew_kernel_##Name(om_ctx *c) { return un_kernel(c, &op_##Name); }
#define EW_UNARY(Name, tab, out_bool, alpha, beta, gamma)                                  \
	static const un_op op_##Name = {tab, out_bool, alpha, beta, gamma, NULL};          \
	om_kind om_ew_infer_##Name(om_ctx *c) { return un_infer(c, &op_##Name); }          \
	om_kind om_ew_kernel_##Name(om_ctx *c) { return un_kernel(c, &op_##Name); }
#define EW_UNARY0(Name, tab) EW_UNARY(Name, tab, false, 0, 0, 0)

EW_UNARY0(Neg, t_neg)
EW_UNARY0(Abs, t_abs)
EW_UNARY0(Sqrt, t_sqrt)
EW_UNARY0(Reciprocal, t_recip)
EW_UNARY0(Exp, t_exp)
EW_UNARY0(Log, t_log)
EW_UNARY0(Erf, t_erf)
EW_UNARY0(Tanh, t_tanh)
EW_UNARY_FAST(Sigmoid, t_sigmoid, false, 0, 0, 0, fast_sigmoid)
EW_UNARY(HardSigmoid, t_hsig, false, 0.2f, 0.5f, 0)
EW_UNARY_FAST(HardSwish, t_hswish, false, 0, 0, 0, fast_hardswish)
EW_UNARY0(Relu, t_relu)
EW_UNARY(LeakyRelu, t_lrelu, false, 0.01f, 0, 0)
EW_UNARY(Elu, t_elu, false, 1.0f, 0, 0)
EW_UNARY(Selu, t_selu, false, 1.67326319217681884765625f, 0, 1.05070102214813232421875f)
EW_UNARY0(Softplus, t_softplus)
EW_UNARY0(Softsign, t_softsign)
/* Gelu: one table per form of `approximate` */
static const un_op op_Gelu = {t_gelu, false, 0, 0, 0, fast_gelu};
static const un_op op_GeluTanh = {t_gelu_tanh, false, 0, 0, 0, NULL};
static const un_op *gelu_op(om_ctx *c)
{
	return !strcmp(om_attr_string(c->node, "approximate", "none"), "tanh") ? &op_GeluTanh
									      : &op_Gelu;
}
om_kind om_ew_infer_Gelu(om_ctx *c) { return un_infer(c, gelu_op(c)); }
om_kind om_ew_kernel_Gelu(om_ctx *c) { return un_kernel(c, gelu_op(c)); }
EW_UNARY0(Floor, t_floor)
EW_UNARY0(Ceil, t_ceil)
EW_UNARY0(Round, t_round)
EW_UNARY0(Sign, t_sign)
EW_UNARY0(Not, t_not)
EW_UNARY0(BitwiseNot, t_bnot)
EW_UNARY(IsNaN, t_isnan, true, 0, 0, 0)
EW_UNARY(IsInf, t_isinf, true, 0, 0, 0)
EW_UNARY0(Sin, t_sin)
EW_UNARY0(Cos, t_cos)
EW_UNARY0(Tan, t_tan)
EW_UNARY0(Asin, t_asin)
EW_UNARY0(Acos, t_acos)
EW_UNARY0(Atan, t_atan)
EW_UNARY0(Sinh, t_sinh)
EW_UNARY0(Cosh, t_cosh)
EW_UNARY0(Asinh, t_asinh)
EW_UNARY0(Acosh, t_acosh)
EW_UNARY0(Atanh, t_atanh)
EW_UNARY(ThresholdedRelu, t_trelu, false, 1.0f, 0, 0)
EW_UNARY(Celu, t_celu, false, 1.0f, 0, 0)
EW_UNARY0(Shrink, t_shrink)
EW_UNARY0(Mish, t_mish)
EW_UNARY_FAST(Swish, t_swish, false, 1.0f, 0, 0, fast_swish)
