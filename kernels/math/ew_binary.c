/* ew_binary.c — broadcasting elementwise ops: arithmetic, comparisons, logic, bit ops,
 * variadic Min/Max/Sum/Mean, Where, PRelu and Clip. Every op runs through the broadcast
 * iterator (broadcast.h); its per-type inner loops are generated from one expression. */
/* -O2 vectorizes only loops of known trip count; quiet comparisons let selects vectorize.
 * Results are unchanged: no reassociation, and no contraction into FMA. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
		     "fp-contract=off")
#endif
#include <stdlib.h>
#include <string.h>

#include "broadcast.h"
#include "cast.h"
#include "detmath.h"
#include "ew.h"
#include "f32_array.h"

/* ---- inner-loop generators ------------------------------------------------------------- */

/* o[i] = STORE(OP(a, b)) over a run; the same-step cases are split out so they vectorize. */
#define EW_RUN(T, OT, CT, LD, STORE, OP)                                                   \
	OT *o = o_;                                                                        \
	const T *a = in[0], *b = in[1];                                                    \
	(void)arg;                                                                         \
	if (s[1] && s[2]) {                                                                \
		for (int64_t i = 0; i < n; i++)                                            \
			o[i] = STORE(OP((CT)LD(a[i]), (CT)LD(b[i])));                      \
	} else if (s[1]) {                                                                 \
		const CT y = (CT)LD(b[0]);                                                 \
		for (int64_t i = 0; i < n; i++)                                            \
			o[i] = STORE(OP((CT)LD(a[i]), y));                                 \
	} else if (s[2]) {                                                                 \
		const CT x = (CT)LD(a[0]);                                                 \
		for (int64_t i = 0; i < n; i++)                                            \
			o[i] = STORE(OP(x, (CT)LD(b[i])));                                 \
	} else {                                                                           \
		const OT v = STORE(OP((CT)LD(a[0]), (CT)LD(b[0])));                        \
		for (int64_t i = 0; i < n; i++)                                            \
			o[i] = v;                                                          \
	}

#define EW_FN(OP, DT) ew_##OP##_##DT
#define EW_SIG(OP, DT)                                                                     \
	static void EW_FN(OP, DT)(int64_t n, void *o_, const void *const *in, const int64_t *s, \
				  const void *arg)

/* result in the input type */
#define EW_DEF(OP, DT, T, CT, LD)                                                          \
	EW_SIG(OP, DT) { EW_RUN(T, T, CT, LD, OM_EW_ST_##DT, OP) }
/* result bool */
#define EW_BOOL_OUT(v) ((uint8_t)((v) ? 1 : 0))
#define EW_DEF_CMP(OP, DT, T, CT, LD)                                                      \
	EW_SIG(OP, DT) { EW_RUN(T, uint8_t, CT, LD, EW_BOOL_OUT, OP) }
#define EW_ENTRY(OP, DT, T, CT, LD) [DT] = EW_FN(OP, DT),

/* ---- expressions per type class: _F float, _S signed (int64_t), _U unsigned (uint64_t) -- */

#define ADD_F(x, y) ((x) + (y))
#define ADD_S(x, y) OM_EW_WRAP(+, x, y)
#define ADD_U(x, y) ((x) + (y))
#define SUB_F(x, y) ((x) - (y))
#define SUB_S(x, y) OM_EW_WRAP(-, x, y)
#define SUB_U(x, y) ((x) - (y))
#define MUL_F(x, y) ((x) * (y))
#define MUL_S(x, y) OM_EW_WRAP(*, x, y)
#define MUL_U(x, y) ((x) * (y))
#define CUBE_F(x, y) ((void)(y), (x) * (x) * (x)) /* y is x: Pow by a scalar 3 */
#define CUBE_S(x, y) ((void)(y), OM_EW_WRAP(*, OM_EW_WRAP(*, x, x), x))
#define CUBE_U(x, y) ((void)(y), (x) * (x) * (x))
#define DIV_F(x, y) ((x) / (y))
#define DIV_S(x, y) ew_div_s(x, y)
#define DIV_U(x, y) ((y) ? (x) / (y) : 0)
#define FMOD_F(x, y) fmod((double)(x), (double)(y)) /* exact in every float type */
#define FMOD_S(x, y) ((y) == 0 || (y) == -1 ? 0 : (x) % (y))
#define MOD_S(x, y) ew_mod_s(x, y)
#define MOD_U(x, y) ((y) ? (x) % (y) : 0)
#define FMOD_U(x, y) MOD_U(x, y)
#define MAX_F(x, y) ((x) != (x) || (x) > (y) ? (x) : (y))
#define MIN_F(x, y) ((x) != (x) || (x) < (y) ? (x) : (y))
#define MAX_I(x, y) ((x) > (y) ? (x) : (y))
#define MIN_I(x, y) ((x) < (y) ? (x) : (y))
#define PRELU_F(x, y) ((x) < 0 ? (x) * (y) : (x))
#define PRELU_S(x, y) ((x) < 0 ? OM_EW_WRAP(*, x, y) : (x))
#define PRELU_U(x, y) ((void)(y), (x))
#define EQ(x, y) ((x) == (y))
#define LT(x, y) ((x) < (y))
#define LE(x, y) ((x) <= (y))
#define GT(x, y) ((x) > (y))
#define GE(x, y) ((x) >= (y))
#define AND_B(x, y) ((x) && (y))
#define OR_B(x, y) ((x) || (y))
#define XOR_B(x, y) (!(x) != !(y))
#define BAND(x, y) ((x) & (y))
#define BOR(x, y) ((x) | (y))
#define BXOR(x, y) ((x) ^ (y))
#define SHL(x, y) ((y) < 64 ? (x) << (y) : 0)
#define SHR(x, y) ((y) < 64 ? (x) >> (y) : 0)

/* integer division and modulo without undefined behaviour: a zero divisor gives 0 */
static inline int64_t ew_div_s(int64_t x, int64_t y)
{
	return y == 0 ? 0 : y == -1 ? OM_EW_WRAP(-, 0, x) : x / y;
}

static inline int64_t ew_mod_s(int64_t x, int64_t y)
{
	if (y == 0 || y == -1)
		return 0;
	int64_t r = x % y;
	return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}

/* the per-type tables: [dtype] -> inner loop; NULL where the op does not take the type */
#define EW_TABLE3(name, F, S, U)                                                           \
	OM_EW_FLOATS(EW_DEF, F)                                                            \
	OM_EW_SINTS(EW_DEF, S)                                                             \
	OM_EW_UINTS(EW_DEF, U)                                                             \
	static const om_bcast_fn name[OM_DTYPE_COUNT] = {                                  \
		OM_EW_FLOATS(EW_ENTRY, F) OM_EW_SINTS(EW_ENTRY, S) OM_EW_UINTS(EW_ENTRY, U)};
#define EW_TABLE_INT(name, S, U)                                                           \
	OM_EW_SINTS(EW_DEF, S)                                                             \
	OM_EW_UINTS(EW_DEF, U)                                                             \
	static const om_bcast_fn name[OM_DTYPE_COUNT] = {                                  \
		OM_EW_SINTS(EW_ENTRY, S) OM_EW_UINTS(EW_ENTRY, U)};
#define EW_TABLE_CMP(name, OP)                                                             \
	OM_EW_FLOATS(EW_DEF_CMP, OP)                                                       \
	OM_EW_SINTS(EW_DEF_CMP, OP)                                                        \
	OM_EW_UINTS(EW_DEF_CMP, OP)                                                        \
	static const om_bcast_fn name[OM_DTYPE_COUNT] = {                                  \
		OM_EW_FLOATS(EW_ENTRY, OP) OM_EW_SINTS(EW_ENTRY, OP) OM_EW_UINTS(EW_ENTRY, OP)};

EW_TABLE3(t_add, ADD_F, ADD_S, ADD_U)
EW_TABLE3(t_sub, SUB_F, SUB_S, SUB_U)
EW_TABLE3(t_mul, MUL_F, MUL_S, MUL_U)
EW_TABLE3(t_div, DIV_F, DIV_S, DIV_U)
EW_TABLE3(t_cube, CUBE_F, CUBE_S, CUBE_U)
EW_TABLE3(t_fmod, FMOD_F, FMOD_S, FMOD_U)
EW_TABLE_INT(t_mod, MOD_S, MOD_U)
EW_TABLE3(t_max, MAX_F, MAX_I, MAX_I)
EW_TABLE3(t_min, MIN_F, MIN_I, MIN_I)
EW_TABLE3(t_prelu, PRELU_F, PRELU_S, PRELU_U)
EW_TABLE_INT(t_band, BAND, BAND)
EW_TABLE_INT(t_bor, BOR, BOR)
EW_TABLE_INT(t_bxor, BXOR, BXOR)
OM_EW_UINTS(EW_DEF, SHL)
OM_EW_UINTS(EW_DEF, SHR)
static const om_bcast_fn t_shl[OM_DTYPE_COUNT] = {OM_EW_UINTS(EW_ENTRY, SHL)};
static const om_bcast_fn t_shr[OM_DTYPE_COUNT] = {OM_EW_UINTS(EW_ENTRY, SHR)};

/* Equal also compares strings and bools */
OM_EW_BOOLS(EW_DEF_CMP, EQ)
static void ew_eq_str(int64_t n, void *o_, const void *const *in, const int64_t *s,
		      const void *arg)
{
	(void)arg;
	uint8_t *o = o_;
	const om_str *a = in[0], *b = in[1];
	for (int64_t i = 0; i < n; i++) {
		const om_str *x = &a[i * s[1]], *y = &b[i * s[2]];
		o[i] = x->len == y->len && (!x->len || !memcmp(x->ptr, y->ptr, (size_t)x->len));
	}
}
OM_EW_FLOATS(EW_DEF_CMP, EQ)
OM_EW_SINTS(EW_DEF_CMP, EQ)
OM_EW_UINTS(EW_DEF_CMP, EQ)
static const om_bcast_fn t_eq[OM_DTYPE_COUNT] = {
	OM_EW_FLOATS(EW_ENTRY, EQ) OM_EW_SINTS(EW_ENTRY, EQ) OM_EW_UINTS(EW_ENTRY, EQ)
	OM_EW_BOOLS(EW_ENTRY, EQ)[OM_STRING] = ew_eq_str};
EW_TABLE_CMP(t_lt, LT)
EW_TABLE_CMP(t_le, LE)
EW_TABLE_CMP(t_gt, GT)
EW_TABLE_CMP(t_ge, GE)
OM_EW_BOOLS(EW_DEF, AND_B)
OM_EW_BOOLS(EW_DEF, OR_B)
OM_EW_BOOLS(EW_DEF, XOR_B)
static const om_bcast_fn t_and[OM_DTYPE_COUNT] = {OM_EW_BOOLS(EW_ENTRY, AND_B)};
static const om_bcast_fn t_or[OM_DTYPE_COUNT] = {OM_EW_BOOLS(EW_ENTRY, OR_B)};
static const om_bcast_fn t_xor[OM_DTYPE_COUNT] = {OM_EW_BOOLS(EW_ENTRY, XOR_B)};

/* Pow: the exponent arrives converted to double (any numeric exponent type is allowed) */
static inline int64_t ew_ipow(uint64_t x, double y)
{
	if (y != y)
		return 0;
	if (y != floor(y) || fabs(y) >= 9.2e18) {
		int64_t sx = (int64_t)x;
		return om_ew_f2i(om_det_pow((double)sx, y));
	}
	if (y < 0) { /* 1 / x^k truncated: 1 for x == 1, +-1 for x == -1, else 0 */
		if (x == 1)
			return 1;
		if (x == UINT64_MAX)
			return fmod(-y, 2.0) == 0 ? 1 : -1;
		return 0;
	}
	uint64_t r = 1, k = (uint64_t)y;
	while (k) {
		if (k & 1)
			r *= x;
		x *= x;
		k >>= 1;
	}
	return (int64_t)r;
}
/* detmath.h's pow in double (float operands: one rounding to float at the store) */
#define POW_SF(x, y) om_det_pow((double)(x), sizeof(x) == 4 ? (double)(float)(y) : (y))
#define POW_I(x, y) ew_ipow((uint64_t)(x), y)
#define EW_DEF_POW(OP, DT, T, CT, LD)                                                      \
	EW_SIG(OP, DT)                                                                     \
	{                                                                                  \
		(void)arg;                                                                 \
		T *o = o_;                                                                 \
		const T *a = in[0];                                                        \
		const double *b = in[1];                                                   \
		for (int64_t i = 0; i < n; i++)                                            \
			o[i] = OM_EW_ST_##DT(OP((CT)LD(a[i * s[1]]), b[i * s[2]]));        \
	}
OM_EW_FLOATS(EW_DEF_POW, POW_SF)
OM_EW_SINTS(EW_DEF_POW, POW_I)
OM_EW_UINTS(EW_DEF_POW, POW_I)
static const om_bcast_fn t_pow[OM_DTYPE_COUNT] = {
	OM_EW_FLOATS(EW_ENTRY, POW_SF) OM_EW_SINTS(EW_ENTRY, POW_I) OM_EW_UINTS(EW_ENTRY, POW_I)};

/* Where: a select by element size */
#define EW_DEF_WHERE(T)                                                                    \
	static void ew_where_##T(int64_t n, void *o_, const void *const *in, const int64_t *s, \
				 const void *arg)                                          \
	{                                                                                  \
		(void)arg;                                                                 \
		T *o = o_;                                                                 \
		const uint8_t *c = in[0];                                                  \
		const T *x = in[1], *y = in[2];                                            \
		for (int64_t i = 0; i < n; i++)                                            \
			o[i] = c[i * s[1]] ? x[i * s[2]] : y[i * s[3]];                    \
	}
EW_DEF_WHERE(uint8_t)
EW_DEF_WHERE(uint16_t)
EW_DEF_WHERE(uint32_t)
EW_DEF_WHERE(uint64_t)
EW_DEF_WHERE(om_str)

/* broadcast copy (first operand of the variadic ops) */
#define EW_DEF_COPY(T)                                                                     \
	static void ew_copy_##T(int64_t n, void *o_, const void *const *in, const int64_t *s, \
				const void *arg)                                           \
	{                                                                                  \
		(void)arg;                                                                 \
		T *o = o_;                                                                 \
		const T *x = in[0];                                                        \
		for (int64_t i = 0; i < n; i++)                                            \
			o[i] = x[i * s[1]];                                                \
	}
EW_DEF_COPY(uint8_t)
EW_DEF_COPY(uint16_t)
EW_DEF_COPY(uint32_t)
EW_DEF_COPY(uint64_t)

static om_bcast_fn by_size(size_t size, om_bcast_fn f1, om_bcast_fn f2, om_bcast_fn f4,
			   om_bcast_fn f8)
{
	return size == 1 ? f1 : size == 2 ? f2 : size == 4 ? f4 : size == 8 ? f8 : NULL;
}

/* ---- generic infer and kernels ----------------------------------------------------------- */

static const om_tensor *input(om_ctx *c, int32_t i)
{
	return i < c->nin ? c->in[i] : NULL;
}

static om_kind need_inputs(om_ctx *c, int32_t lo)
{
	for (int32_t i = 0; i < lo; i++)
		if (!input(c, i))
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"input %d is missing", i);
	if (!c->nout || !c->out[0])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "output is missing");
	return OM_OK;
}

static om_kind type_check(om_ctx *c, const om_bcast_fn *tab, int32_t dtype)
{
	if (dtype <= 0 || dtype >= OM_DTYPE_COUNT || !tab[dtype])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%s does not take element type %s", c->node->op,
				om_dtype_name(dtype));
	return OM_OK;
}

static om_kind same_types(om_ctx *c, int32_t from, int32_t to)
{
	for (int32_t i = from; i < to; i++) {
		const om_tensor *t = input(c, i);
		if (t && t->dtype != c->in[from]->dtype)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"input %d is %s, input %d is %s", i,
					om_dtype_name(t->dtype), from,
					om_dtype_name(c->in[from]->dtype));
	}
	return OM_OK;
}

/* two inputs of one type, broadcast; result of that type or bool */
static om_kind bin_infer(om_ctx *c, const om_bcast_fn *tab, bool out_bool)
{
	om_kind rc = need_inputs(c, 2);
	if (!rc)
		rc = same_types(c, 0, 2);
	if (!rc)
		rc = type_check(c, tab, c->in[0]->dtype);
	if (rc)
		return rc;
	return om_bcast_infer(c, 2, c->in, out_bool ? OM_BOOL : c->in[0]->dtype, c->out[0]);
}

/* runs fn over out and nin inputs (NULL fn: type error) */
static om_kind run(om_ctx *c, om_bcast_fn fn, int32_t nin, const om_tensor *const *in,
		   const void *arg)
{
	if (!fn)
		return type_check(c, (const om_bcast_fn[OM_DTYPE_COUNT]){0}, in[0]->dtype);
	om_bcast b;
	om_kind rc = om_bcast_init(c, &b, c->out[0], nin, in);
	if (rc)
		return rc;
	const void *ptr[OM_BCAST_MAX_IN];
	for (int32_t i = 0; i < nin; i++)
		ptr[i] = in[i]->data;
	om_bcast_run(&b, c->out[0]->data, ptr, fn, arg);
	return OM_OK;
}

/* float16 and bfloat16 through the float32 loop, BIN_VIA elements at a time: the bits of
 * their own loops (both compute in float and round once), which convert element by element
 * in software and do not vectorize. A broadcast operand (step 0) is converted once. */
enum { BIN_VIA = 256 };
typedef struct bin_via {
	om_bcast_fn fn; /* the float32 loop */
	int32_t dt;
	bool out_bool; /* fn writes bool: straight into the output */
} bin_via;

static void bin_via_f32(int64_t n, void *o, const void *const *in, const int64_t *s,
			const void *arg)
{
	const bin_via *v = arg;
	float x[2][BIN_VIA], y[BIN_VIA];
	const void *const px[2] = {x[0], x[1]};
	for (int k = 0; k < 2; k++)
		if (!s[k + 1])
			om_to_f32(v->dt, in[k], 1, x[k]);
	for (int64_t i = 0; i < n; i += BIN_VIA) {
		const int64_t m = n - i < BIN_VIA ? n - i : BIN_VIA;
		for (int k = 0; k < 2; k++)
			if (s[k + 1])
				om_to_f32(v->dt, (const uint16_t *)in[k] + i, m, x[k]);
		if (v->out_bool) {
			v->fn(m, (uint8_t *)o + i, px, s, NULL);
		} else {
			v->fn(m, y, px, s, NULL);
			om_from_f32(v->dt, y, m, (uint16_t *)o + i);
		}
	}
}

static om_kind bin_kernel(om_ctx *c, const om_bcast_fn *tab)
{
	const int32_t dt = c->in[0]->dtype;
	if ((dt == OM_FLOAT16 || dt == OM_BFLOAT16) && tab[dt] && tab[OM_FLOAT]) {
		const bin_via v = {tab[OM_FLOAT], dt, c->out[0]->dtype == OM_BOOL};
		return run(c, bin_via_f32, 2, c->in, &v);
	}
	return run(c, dt > 0 && dt < OM_DTYPE_COUNT ? tab[dt] : NULL, 2, c->in, NULL);
}

#define EW_BINARY(Name, tab, out_bool)                                                     \
	om_kind om_ew_infer_##Name(om_ctx *c) { return bin_infer(c, tab, out_bool); }      \
	om_kind om_ew_kernel_##Name(om_ctx *c) { return bin_kernel(c, tab); }

EW_BINARY(Add, t_add, false)
EW_BINARY(Sub, t_sub, false)
EW_BINARY(Mul, t_mul, false)
EW_BINARY(Div, t_div, false)
EW_BINARY(Equal, t_eq, true)
EW_BINARY(Less, t_lt, true)
EW_BINARY(LessOrEqual, t_le, true)
EW_BINARY(Greater, t_gt, true)
EW_BINARY(GreaterOrEqual, t_ge, true)
EW_BINARY(And, t_and, false)
EW_BINARY(Or, t_or, false)
EW_BINARY(Xor, t_xor, false)
EW_BINARY(BitwiseAnd, t_band, false)
EW_BINARY(BitwiseOr, t_bor, false)
EW_BINARY(BitwiseXor, t_bxor, false)
EW_BINARY(PRelu, t_prelu, false)

/* Mod: fmod=1 truncates (C fmod, %); fmod=0 takes the divisor's sign and needs integers */
static const om_bcast_fn *mod_table(om_ctx *c)
{
	return om_attr_int(c->node, "fmod", 0) ? t_fmod : t_mod;
}
om_kind om_ew_infer_Mod(om_ctx *c)
{
	return bin_infer(c, mod_table(c), false);
}
om_kind om_ew_kernel_Mod(om_ctx *c)
{
	return bin_kernel(c, mod_table(c));
}

static const om_bcast_fn *shift_table(om_ctx *c)
{
	static const char *const directions[] = {"LEFT", "RIGHT", NULL};
	const int d = om_attr_choice(c->node, "direction", directions, -1);
	return d == 0 ? t_shl : d == 1 ? t_shr : NULL;
}
om_kind om_ew_infer_BitShift(om_ctx *c)
{
	const om_bcast_fn *tab = shift_table(c);
	if (!tab)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"direction must be LEFT or RIGHT");
	return bin_infer(c, tab, false);
}
om_kind om_ew_kernel_BitShift(om_ctx *c)
{
	const om_bcast_fn *tab = shift_table(c);
	return bin_kernel(c, tab ? tab : t_and);
}

/* Pow: base type decides the result; the exponent may be any numeric type */
om_kind om_ew_infer_Pow(om_ctx *c)
{
	om_kind rc = need_inputs(c, 2);
	if (!rc)
		rc = type_check(c, t_pow, c->in[0]->dtype);
	if (!rc && !om_cast_supported(c->in[1]->dtype, OM_DOUBLE))
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "exponent type %s",
			      om_dtype_name(c->in[1]->dtype));
	if (rc)
		return rc;
	return om_bcast_infer(c, 2, c->in, c->in[0]->dtype, c->out[0]);
}

om_kind om_ew_kernel_Pow(om_ctx *c)
{
	const om_tensor *e = c->in[1];
	int64_t n = om_tensor_numel(e);
	if (n < 0)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "bad exponent shape");
	om_tensor ed = *e;
	ed.dtype = OM_DOUBLE;
	ed.nbytes = sizeof(double) * (size_t)n;
	ed.data = malloc(sizeof(double) * (size_t)(n ? n : 1));
	if (!ed.data)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	om_kind rc = om_cast_elems(c, ed.data, OM_DOUBLE, e->data, e->dtype, n, 1);
	const int32_t bt = c->in[0]->dtype;
	const double e1 = n == 1 && !rc ? *(const double *)ed.data : 0;
	if ((e1 == 2.0 || e1 == 3.0) && bt > 0 && bt < OM_DTYPE_COUNT && t_mul[bt]) {
		/* x*x and x*x*x, as ONNX Runtime computes a scalar exponent of 2 or 3 */
		const om_tensor *x = c->in[0];
		free(ed.data);
		return run(c, (e1 == 2.0 ? t_mul : t_cube)[bt], 2, (const om_tensor *const[]){x, x},
			   NULL);
	}
	if (!rc) {
		int32_t dt = c->in[0]->dtype;
		rc = run(c, dt > 0 && dt < OM_DTYPE_COUNT ? t_pow[dt] : NULL, 2,
			 (const om_tensor *const[]){c->in[0], &ed}, NULL);
	}
	free(ed.data);
	return rc;
}

/* Where(cond, x, y) */
om_kind om_ew_infer_Where(om_ctx *c)
{
	om_kind rc = need_inputs(c, 3);
	if (!rc)
		rc = same_types(c, 1, 3);
	if (rc)
		return rc;
	if (c->in[0]->dtype != OM_BOOL)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "condition is %s, not bool",
				om_dtype_name(c->in[0]->dtype));
	if (om_dtype_size(c->in[1]->dtype) == 0)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "element type %s",
				om_dtype_name(c->in[1]->dtype));
	return om_bcast_infer(c, 3, c->in, c->in[1]->dtype, c->out[0]);
}

om_kind om_ew_kernel_Where(om_ctx *c)
{
	const int32_t dt = c->in[1]->dtype;
	om_bcast_fn fn = dt == OM_STRING ? ew_where_om_str
					 : by_size(om_dtype_size(dt), ew_where_uint8_t,
						   ew_where_uint16_t, ew_where_uint32_t,
						   ew_where_uint64_t);
	om_kind rc = run(c, fn, 3, c->in, NULL);
	if (rc || dt != OM_STRING)
		return rc;
	/* the output owns its strings: replace the borrowed pointers by copies */
	om_str *o = c->out[0]->data;
	const int64_t n = om_tensor_numel(c->out[0]);
	for (int64_t i = 0; i < n; i++) {
		char *p = malloc((size_t)o[i].len + 1);
		if (!p) {
			for (int64_t k = i; k < n; k++)
				o[k].ptr = NULL, o[k].len = 0;
			return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		}
		if (o[i].len)
			memcpy(p, o[i].ptr, (size_t)o[i].len);
		p[o[i].len] = 0;
		o[i].ptr = p;
	}
	return OM_OK;
}

/* ---- variadic: out = in0 (broadcast), then out = op(out, in_i) --------------------------- */

static om_kind var_infer(om_ctx *c, const om_bcast_fn *tab)
{
	om_kind rc = need_inputs(c, 1);
	if (!rc)
		rc = same_types(c, 0, c->nin);
	if (!rc)
		rc = type_check(c, tab, c->in[0]->dtype);
	if (rc)
		return rc;
	return om_bcast_infer(c, c->nin, c->in, c->in[0]->dtype, c->out[0]);
}

static om_kind var_kernel(om_ctx *c, const om_bcast_fn *tab, int32_t nin,
			  const om_tensor *const *in)
{
	om_tensor *out = c->out[0];
	const int32_t dt = out->dtype;
	if (dt <= 0 || dt >= OM_DTYPE_COUNT || !tab[dt])
		return type_check(c, tab, dt);
	om_kind rc = run(c, by_size(om_dtype_size(dt), ew_copy_uint8_t, ew_copy_uint16_t,
				    ew_copy_uint32_t, ew_copy_uint64_t),
			 1, in, NULL);
	for (int32_t i = 1; i < nin && !rc; i++)
		if (in[i])
			rc = run(c, tab[dt], 2, (const om_tensor *const[]){out, in[i]}, NULL);
	return rc;
}

#define EW_VARIADIC(Name, tab)                                                             \
	om_kind om_ew_infer_##Name(om_ctx *c) { return var_infer(c, tab); }                \
	om_kind om_ew_kernel_##Name(om_ctx *c) { return var_kernel(c, tab, c->nin, c->in); }

EW_VARIADIC(Min, t_min)
EW_VARIADIC(Max, t_max)
EW_VARIADIC(Sum, t_add)

/* Mean = Sum / count, in floating types */
om_kind om_ew_infer_Mean(om_ctx *c)
{
	om_kind rc = var_infer(c, t_add);
	if (!rc && !OM_EW_IS_FLOAT(c->in[0]->dtype))
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "Mean takes float types");
	return rc;
}

om_kind om_ew_kernel_Mean(om_ctx *c)
{
	om_kind rc = var_kernel(c, t_add, c->nin, c->in);
	if (rc)
		return rc;
	const double cnt = (double)c->nin;
	uint64_t buf = 0;
	om_tensor k = {.dtype = c->out[0]->dtype, .rank = 0, .data = &buf};
	k.nbytes = om_dtype_size(k.dtype);
	rc = om_cast_elems(c, &buf, k.dtype, &cnt, OM_DOUBLE, 1, 1);
	if (!rc)
		rc = run(c, t_div[k.dtype], 2, (const om_tensor *const[]){c->out[0], &k}, NULL);
	return rc;
}

/* ---- Clip: min(max(x, lo), hi) with optional scalar bounds -------------------------------- */

static om_kind clip_bounds(om_ctx *c, const om_tensor **lo, const om_tensor **hi)
{
	*lo = input(c, 1);
	*hi = input(c, 2);
	for (int i = 0; i < 2; i++) {
		const om_tensor *b = i ? *hi : *lo;
		if (!b)
			continue;
		if (b->dtype != c->in[0]->dtype)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"bound %d is %s, input is %s", i + 1,
					om_dtype_name(b->dtype), om_dtype_name(c->in[0]->dtype));
		if (om_tensor_numel(b) != 1)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"bound %d is not a scalar", i + 1);
	}
	return OM_OK;
}

static om_kind clip_infer(om_ctx *c)
{
	om_kind rc = need_inputs(c, 1);
	if (!rc)
		rc = type_check(c, t_max, c->in[0]->dtype);
	if (rc)
		return rc;
	om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	return OM_OK;
}

static om_kind clip_run(om_ctx *c, const om_tensor *lo, const om_tensor *hi)
{
	const int32_t dt = c->in[0]->dtype;
	om_tensor scalar_lo, scalar_hi;
	if (lo) { /* a bound of shape [1] acts as a scalar */
		scalar_lo = *lo;
		scalar_lo.rank = 0;
	}
	if (hi) {
		scalar_hi = *hi;
		scalar_hi.rank = 0;
	}
	const om_tensor *x = c->in[0];
	om_kind rc = OM_OK;
	if (lo) {
		rc = run(c, t_max[dt], 2, (const om_tensor *const[]){x, &scalar_lo}, NULL);
		x = c->out[0];
	}
	if (!rc && hi) {
		rc = run(c, t_min[dt], 2, (const om_tensor *const[]){x, &scalar_hi}, NULL);
		x = c->out[0];
	}
	if (!rc && x != c->out[0])
		rc = var_kernel(c, t_max, 1, &x);
	return rc;
}

om_kind om_ew_infer_Clip11(om_ctx *c)
{
	const om_tensor *lo, *hi;
	om_kind rc = clip_infer(c);
	return rc ? rc : clip_bounds(c, &lo, &hi);
}

om_kind om_ew_kernel_Clip11(om_ctx *c)
{
	const om_tensor *lo, *hi;
	om_kind rc = clip_bounds(c, &lo, &hi);
	return rc ? rc : clip_run(c, lo, hi);
}

om_kind om_ew_infer_Clip6(om_ctx *c)
{
	om_kind rc = clip_infer(c);
	if (!rc && !OM_EW_IS_FLOAT(c->in[0]->dtype))
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "Clip-6 takes float types");
	return rc;
}

om_kind om_ew_kernel_Clip6(om_ctx *c)
{
	const int32_t dt = c->in[0]->dtype;
	const float b[2] = {om_attr_float(c->node, "min", -3.4028234663852886e38f),
			    om_attr_float(c->node, "max", 3.4028234663852886e38f)};
	uint64_t buf[2] = {0, 0};
	om_tensor t[2];
	for (int i = 0; i < 2; i++) {
		t[i] = (om_tensor){.dtype = dt, .rank = 0, .data = &buf[i]};
		t[i].nbytes = om_dtype_size(dt);
		om_kind rc = om_cast_elems(c, &buf[i], dt, &b[i], OM_FLOAT, 1, 1);
		if (rc)
			return rc;
	}
	return clip_run(c, &t[0], &t[1]);
}

/* ---- SwiGLU(a, b) = Swish(a, alpha) * b -------------------------------------------------- */

om_kind om_ew_infer_SwiGLU(om_ctx *c)
{
	om_kind rc = bin_infer(c, t_mul, false);
	if (!rc && !OM_EW_IS_FLOAT(c->in[0]->dtype))
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "SwiGLU takes float types");
	return rc;
}

om_kind om_ew_kernel_SwiGLU(om_ctx *c)
{
	const om_tensor *a = c->in[0];
	om_tensor gate;
	om_kind rc = om_tensor_alloc(&gate, a->dtype, a->rank, a->dims, c->st);
	if (rc)
		return rc;
	om_tensor *gp = &gate;
	om_ctx sc = *c;
	sc.nin = 1, sc.nout = 1, sc.out = &gp;
	rc = om_ew_kernel_Swish(&sc);
	if (!rc)
		rc = run(c, t_mul[a->dtype], 2, (const om_tensor *const[]){&gate, c->in[1]}, NULL);
	om_tensor_free(&gate);
	return rc;
}

/* ---- StringConcat: broadcasting concatenation into owned strings ------------------------- */

static void ew_concat_str(int64_t n, void *o_, const void *const *in, const int64_t *s,
			  const void *arg)
{
	bool *nomem = (bool *)arg;
	om_str *o = o_;
	const om_str *a = in[0], *b = in[1];
	for (int64_t i = 0; i < n; i++) {
		const om_str *x = &a[i * s[1]], *y = &b[i * s[2]];
		const size_t lx = x->len > 0 ? (size_t)x->len : 0;
		const size_t ly = y->len > 0 ? (size_t)y->len : 0;
		char *p = malloc(lx + ly + 1);
		if (!p) {
			*nomem = true;
			continue;
		}
		if (lx)
			memcpy(p, x->ptr, lx);
		if (ly)
			memcpy(p + lx, y->ptr, ly);
		p[lx + ly] = 0;
		o[i] = (om_str){p, (int64_t)(lx + ly)};
	}
}

om_kind om_ew_infer_StringConcat(om_ctx *c)
{
	static const om_bcast_fn t_str[OM_DTYPE_COUNT] = {[OM_STRING] = ew_concat_str};
	return bin_infer(c, t_str, false);
}

om_kind om_ew_kernel_StringConcat(om_ctx *c)
{
	if (c->in[0]->dtype != OM_STRING || c->in[1]->dtype != OM_STRING)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "StringConcat takes strings");
	bool nomem = false;
	om_bcast b;
	om_kind rc = om_bcast_init(c, &b, c->out[0], 2, c->in);
	if (rc)
		return rc;
	b.threads = 1; /* ew_concat_str sets one flag on failure */
	om_bcast_run(&b, c->out[0]->data, (const void *const[]){c->in[0]->data, c->in[1]->data},
		     ew_concat_str, &nomem);
	return nomem ? om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory") : OM_OK;
}
