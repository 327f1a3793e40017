/* conv_int.c — the integer convolution sums of fast mode (conv_int.h). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "clones.h"
#include "conv_int.h"
#include "gemm_int.h"
#include "igemm_quads.h"
#include "im2col.h"
#include "parallel.h"
#include "requant8_avx2.h"

/* Kg at which a sum of products of magnitude 255 x 255 could reach 2^30 (so that a bias of
 * magnitude 2^30 at most added to it stays in int32: om_conv_requant) */
enum { CI_MAX_KG = 16513 };

bool om_conv_igemm_takes(const om_ctx *c, int64_t Kg)
{
	return !c->exact && Kg > 0 && Kg < CI_MAX_KG &&
	       strcmp(om_igemm_path(&(om_igemm){.K = Kg}), "int32-loop");
}

/* requantizes n sums: bias of type BT, SUM(i) the float of s[i] + bias. Through double
 * (exact below 2^53, then one rounding, as (float) of the int64 sum) it vectorizes where int64
 * to float does not; where s + bias cannot leave int32 (requant32_*), int32 lanes give that
 * float as well, in a third of the time (mobilenet_v2's 1x1 convs) */
#define CI_REQUANT(NAME, T, LO, HI, BT, SUM)                                                 \
	OM_CLONES static void NAME(const int32_t *s, int64_t n, BT bias, float scale, float zp, \
				   T *y)                                                      \
	{                                                                                     \
		for (int64_t i = 0; i < n; i++) {                                             \
			float q = rintf((SUM) * scale) + zp;                                  \
			q = q > (LO) ? q : (LO); /* a NaN too */                              \
			q = q < (HI) ? q : (HI);                                              \
			y[i] = (T)(int32_t)q;                                                 \
		}                                                                             \
	}
CI_REQUANT(requant_i8, int8_t, -128.0f, 127.0f, int64_t, (float)((double)s[i] + (double)bias))
CI_REQUANT(requant_u8, uint8_t, 0.0f, 255.0f, int64_t, (float)((double)s[i] + (double)bias))
CI_REQUANT(requant32_i8, int8_t, -128.0f, 127.0f, int32_t, (float)(s[i] + bias))
CI_REQUANT(requant32_u8, uint8_t, 0.0f, 255.0f, int32_t, (float)(s[i] + bias))

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CI_AVX2 __attribute__((target("avx2")))
/* requant32's 8 lanes on AVX2 (requant8_avx2.h), stored */
static inline __attribute__((always_inline)) CI_AVX2 void rq8_v(__m256i s, __m256i b,
							     __m256 sc, float zp, bool s8, void *y)
{
	_mm_storel_epi64((__m128i *)y, om_requant8_avx2(s, b, sc, zp, s8));
}

static inline __attribute__((always_inline)) CI_AVX2 void rq8(const int32_t *s, __m256i b,
							   __m256 sc, float zp, bool s8, void *y)
{
	rq8_v(_mm256_loadu_si256((const __m256i *)s), b, sc, zp, s8, y);
}

/* the whole 8s of n sums of one bias and scale, int32 (or, when f32, integral floats below
 * 2^24: exact as int32); returns how many */
CI_AVX2 static int64_t requant_avx2(const void *s, bool f32, int64_t n, int32_t bias,
				    float scale, float zp, bool s8, void *y)
{
	const __m256i b = _mm256_set1_epi32(bias);
	const __m256 sc = _mm256_set1_ps(scale);
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const __m256i v =
			f32 ? _mm256_cvtps_epi32(_mm256_loadu_ps((const float *)s + i))
			    : _mm256_loadu_si256((const __m256i *)((const int32_t *)s + i));
		rq8_v(v, b, sc, zp, s8, (char *)y + i);
	}
	return i;
}

/* nr rows of 16 sums (row stride ldc), row i of bias[i] (NULL: 0, narrow) and scale[i], into
 * y (row stride ldy) */
CI_AVX2 static void requant16_rows_avx2(const int32_t *s, int64_t ldc, int64_t nr,
					const int32_t *bias, const float *scale, float zp, bool s8,
					uint8_t *y, int64_t ldy)
{
	for (int64_t i = 0; i < nr; i++, s += ldc, y += ldy) {
		const __m256i b = _mm256_set1_epi32(bias ? bias[i] : 0);
		const __m256 sc = _mm256_set1_ps(scale[i]);
		rq8(s, b, sc, zp, s8, y);
		rq8(s + 8, b, sc, zp, s8, y + 8);
	}
}
#define CI_HAVE_AVX2 1
#endif

/* whether biases within 2^30 in magnitude leave s + bias in int32 (|s| < 2^30: CI_MAX_KG) */
static bool narrow_bias(int64_t bias)
{
	return bias >= -(INT64_C(1) << 30) && bias <= (INT64_C(1) << 30);
}

bool om_qconv_bias_narrow(const om_qconv_out *r, int64_t M)
{
	for (int64_t m = 0; r->bias && m < M; m++)
		if (!narrow_bias(r->bias[m]))
			return false;
	return true;
}

void om_conv_requant(const int32_t *s, int64_t n, int64_t bias, float scale, float zp, bool s8,
		     void *y)
{
	/* |s| < 2^30 (om_conv_igemm's sums: CI_MAX_KG) */
	const bool narrow = narrow_bias(bias);
#ifdef CI_HAVE_AVX2
	if (narrow && __builtin_cpu_supports("avx2")) {
		const int64_t done = requant_avx2(s, false, n, (int32_t)bias, scale, zp, s8, y);
		s += done, n -= done, y = (char *)y + done;
	}
#endif
	if (narrow && s8)
		requant32_i8(s, n, (int32_t)bias, scale, zp, y);
	else if (narrow)
		requant32_u8(s, n, (int32_t)bias, scale, zp, y);
	else if (s8)
		requant_i8(s, n, bias, scale, zp, y);
	else
		requant_u8(s, n, bias, scale, zp, y);
}

/* QLinearConv's requantization of the pieces of one product: its rows are output channels m0
 * on, its columns y's (y: the image's M x P bytes) */
typedef struct ci_epi {
	const om_qconv_out *r;
	const float *scale; /* M: x_scale w_scale[m] / y_scale */
	int64_t m0, P;
	uint8_t *y;
	bool rows16; /* whole pieces of 16 columns through requant16_rows_avx2 (AVX2, narrow) */
} ci_epi;

static void requant_piece(void *arg, const int32_t *c, int64_t ldc, int64_t r0, int64_t nr,
			  int64_t c0, int64_t nc);

/* an image's 8-bit columns, split by channels over the threads (each channel's rows a
 * contiguous block of them) */
typedef struct ci_cols {
	const uint8_t *img;
	const om_spatial *sp;
	int64_t Pin, rows, P; /* rows (kernel taps) and columns a channel */
	uint8_t pad;
	uint8_t *col;
} ci_cols;

static void cols_piece(void *arg, int64_t c0, int64_t c1)
{
	const ci_cols *a = arg;
	om_im2col_u8(a->img + c0 * a->Pin, c1 - c0, a->sp, 0, a->P / a->sp->out[a->sp->n - 1],
		     a->pad, a->col + c0 * a->rows * a->P);
}

/* bytes of columns worth a thread */
enum { CI_COLS_GRAIN = 1 << 15 };

/* W packed for the quads' kernel (igemm_quads.h) once a step */
typedef struct ci_quads {
	int64_t key[3]; /* M, Kg, W's address */
	om_iquads_a pa;
} ci_quads;

static void ci_quads_release(void *p)
{
	om_iquads_free_a(&((ci_quads *)p)->pa);
}

/* W through the quads' kernel where it is exact and the faster: an int8 W of zero points 0,
 * a constant of the step (packed once), few of its pairs corrected (om_iquads_pays), a CPU
 * with AVX2 and without VNNI (there oneDNN's u8s8 product is exact); NULL otherwise */
static const om_iquads_a *conv_quads(om_ctx *c, const om_conv_int *q, int64_t Kg)
{
	if (!om_iquads_ok() || om_dnnl_int8_exact() || q->W->dtype != OM_INT8)
		return NULL;
	const int8_t *wz = q->wz ? q->wz->data : NULL;
	for (int64_t i = 0, n = wz ? om_tensor_numel(q->wz) : 0; i < n; i++)
		if (wz[i])
			return NULL;
	bool constant = false;
	for (int32_t i = 0; i < c->nin && i < 64; i++)
		constant |= c->in[i] == q->W && (c->const_in >> i & 1);
	if (!constant)
		return NULL;
	const int64_t key[3] = {q->M, Kg, (int64_t)(uintptr_t)q->W->data};
	_Static_assert(offsetof(ci_quads, key) == 0, "om_ctx_state_keyed: the key first");
	bool made;
	ci_quads *s = om_ctx_state_keyed(c, ci_quads_release, key, 3, sizeof *s, &made);
	if (s && made && om_iquads_pack_a(q->W->data, q->M, Kg, Kg, &s->pa) &&
	    !om_iquads_pays(&s->pa))
		om_iquads_free_a(&s->pa); /* the pairs from then on */
	return s && s->pa.quads ? &s->pa : NULL;
}

/* q's sums into y32 (N x M x P int32), or, with r, requantized into y8 through pieces (y32
 * then only the paths' that compute whole products) */
static om_kind conv_igemm(om_ctx *c, const om_conv_int *q, int32_t *y, const om_qconv_out *r,
			  const float *scale, uint8_t *y8)
{
	const om_spatial *sp = q->sp;
	int64_t P = 1, Pin = 1, taps = 1;
	for (int32_t i = 0; i < sp->n; i++)
		P *= sp->out[i], Pin *= sp->in[i], taps *= sp->k[i];
	const int64_t Cg = q->C / q->group, Mg = q->M / q->group, Kg = Cg * taps;
	const int64_t nwz = q->wz ? om_tensor_numel(q->wz) : 0;
	const int32_t xz = q->xz ? om_q8_elem(q->xz, 0) : 0;
	bool rows16 = false;
#ifdef CI_HAVE_AVX2
	rows16 = r && __builtin_cpu_supports("avx2") && om_qconv_bias_narrow(r, q->M);
#endif
	int64_t ncol;
	if (__builtin_mul_overflow(Kg, P, &ncol) || ncol >= INT64_MAX / 16)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "column buffer too large");
	/* a 1x1 conv of stride 1 without pads: its columns are the image itself */
	bool plain = true;
	for (int32_t i = 0; i < sp->n; i++)
		plain &= sp->k[i] == 1 && sp->stride[i] == 1 && sp->pb[i] == 0 && sp->pe[i] == 0;
	int32_t *wz; /* W's zero points a channel, then the columns (none when plain) */
	om_kind rc = om_ctx_scratch(c, sizeof(int32_t) * (size_t)q->M + (plain ? 0 : (size_t)ncol),
				    "W's zero points and the 8-bit columns", (void **)&wz);
	if (rc)
		return rc;
	uint8_t *const col = (uint8_t *)(wz + q->M);
	memset(wz, 0, sizeof(int32_t) * (size_t)q->M);
	for (int64_t m = 0; m < q->M && nwz; m++)
		wz[m] = om_q8_elem(q->wz, nwz == 1 ? 0 : m);
	const om_iquads_a *quads = conv_quads(c, q, Kg);
	om_ctx_chose(c, OM_CONV_IGEMM);
	const uint8_t *X = q->X->data, *W = q->W->data;
	for (int64_t n = 0; n < q->N && P > 0; n++)
		for (int64_t gi = 0; gi < q->group; gi++) {
			const uint8_t *img = X + (n * q->C + gi * Cg) * Pin;
			if (!plain) {
				ci_cols a = {img, sp, Pin, taps, P, (uint8_t)xz, col};
				om_par_for(c->threads, Cg, 1 + CI_COLS_GRAIN / (taps * P), cols_piece,
					   &a);
			}
			ci_epi e = {r, scale, gi * Mg, P, y8 + n * q->M * P, rows16};
			const om_igemm_epi epi = {requant_piece, &e};
			const om_igemm g = {.M = Mg, .N = P, .K = Kg, .A = W + gi * Mg * Kg,
					    .B = plain ? img : col, .lda = Kg, .ldb = P, .ldc = P,
					    .a_signed = q->W->dtype == OM_INT8,
					    .b_signed = q->X->dtype == OM_INT8, .za = wz + gi * Mg,
					    .nza = Mg, .zb = &xz, .nzb = 1,
					    .C = y + (n * q->M + gi * Mg) * P, .epi = r ? &epi : NULL};
			if (!(quads && om_iquads_run(quads, gi * Mg, &g, c->threads)) &&
			    !om_igemm_run(&g, c->threads)) {
				om_ctx_scratch_done(c, wz);
				return om_error(c->st, OM_ERR_NOMEM, c->node,
						"no memory for the integer product");
			}
		}
	om_ctx_scratch_done(c, wz);
	return OM_OK;
}

om_kind om_conv_igemm(om_ctx *c, const om_conv_int *q, int32_t *y)
{
	return conv_igemm(c, q, y, NULL, NULL, NULL);
}

om_kind om_conv_igemm_q(om_ctx *c, const om_conv_int *q, const om_qconv_out *r, void *y)
{
	int64_t P = 1;
	for (int32_t i = 0; i < q->sp->n; i++)
		P *= q->sp->out[i];
	int32_t *s; /* the int32 sums (the paths that compute whole products), then the scales */
	const size_t ns = sizeof(int32_t) * (size_t)(q->N * q->M * P);
	om_kind rc = om_ctx_scratch(c, ns + sizeof(float) * (size_t)q->M,
				    "the int32 sums and the scales", (void **)&s);
	if (rc)
		return rc;
	float *scale = (float *)((char *)s + ns);
	for (int64_t m = 0; m < q->M; m++)
		scale[m] = om_qconv_scale(r, m);
	rc = conv_igemm(c, q, s, r, scale, y);
	om_ctx_scratch_done(c, s);
	return rc;
}

void om_conv_requant_f32(const float *s, int64_t n, int32_t bias, float scale, float zp, bool s8,
			 void *y)
{
	int64_t i = 0;
#ifdef CI_HAVE_AVX2
	if (__builtin_cpu_supports("avx2"))
		i = requant_avx2(s, true, n, bias, scale, zp, s8, y);
#endif
	for (; i < n; i++) {
		const int32_t v = (int32_t)s[i];
		om_conv_requant(&v, 1, bias, scale, zp, s8, (char *)y + i);
	}
}

/* ci_epi's piece: rows r0 .. r0 + nr (channels m0 + r0 on), columns c0 .. c0 + nc */
static void requant_piece(void *arg, const int32_t *c, int64_t ldc, int64_t r0, int64_t nr,
			  int64_t c0, int64_t nc)
{
	const ci_epi *e = arg;
	const om_qconv_out *r = e->r;
#ifdef CI_HAVE_AVX2
	if (e->rows16 && nc == 16) {
		const int64_t m = e->m0 + r0;
		requant16_rows_avx2(c, ldc, nr, r->bias ? r->bias + m : NULL, e->scale + m, r->y_zp,
				    r->s8, e->y + m * e->P + c0, e->P);
		return;
	}
#endif
	for (int64_t i = 0; i < nr; i++) {
		const int64_t m = e->m0 + r0 + i;
		om_conv_requant(c + i * ldc, nc, r->bias ? r->bias[m] : 0, e->scale[m], r->y_zp,
				r->s8, e->y + m * e->P + c0);
	}
}
