/* conv_int.c — the integer convolution sums of fast mode (conv_int.h). */
#include <math.h>
#include <string.h>

#include "clones.h"
#include "conv_int.h"
#include "gemm_int.h"
#include "im2col.h"

/* Kg at which a sum of products of magnitude 255 x 255 could reach 2^30 (so that a bias of
 * magnitude 2^30 at most added to it stays in int32: om_conv_requant) */
enum { CI_MAX_KG = 16513 };

bool om_conv_igemm_takes(const om_ctx *c, int64_t Kg)
{
	return !c->exact && Kg > 0 && Kg < CI_MAX_KG &&
	       strcmp(om_igemm_path(&(om_igemm){.K = Kg}), "int32-loop");
}

static int32_t zp8(const om_tensor *t, int64_t i)
{
	return t->dtype == OM_INT8 ? ((const int8_t *)t->data)[i] : ((const uint8_t *)t->data)[i];
}

om_kind om_conv_igemm(om_ctx *c, const om_conv_int *q, int32_t *y)
{
	const om_spatial *sp = q->sp;
	int64_t P = 1, Pin = 1, taps = 1;
	for (int32_t i = 0; i < sp->n; i++)
		P *= sp->out[i], Pin *= sp->in[i], taps *= sp->k[i];
	const int64_t Cg = q->C / q->group, Mg = q->M / q->group, Kg = Cg * taps;
	const int64_t OL = sp->out[sp->n - 1], nwz = q->wz ? om_tensor_numel(q->wz) : 0;
	const int32_t xz = q->xz ? zp8(q->xz, 0) : 0;
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
		wz[m] = zp8(q->wz, nwz == 1 ? 0 : m);
	om_ctx_chose(c, OM_CONV_IGEMM);
	const uint8_t *X = q->X->data, *W = q->W->data;
	for (int64_t n = 0; n < q->N && P > 0; n++)
		for (int64_t gi = 0; gi < q->group; gi++) {
			const uint8_t *img = X + (n * q->C + gi * Cg) * Pin;
			if (!plain)
				om_im2col_u8(img, Cg, sp, 0, P / OL, (uint8_t)xz, col);
			const om_igemm g = {.M = Mg, .N = P, .K = Kg, .A = W + gi * Mg * Kg,
					    .B = plain ? img : col, .lda = Kg, .ldb = P, .ldc = P,
					    .a_signed = q->W->dtype == OM_INT8,
					    .b_signed = q->X->dtype == OM_INT8, .za = wz + gi * Mg,
					    .nza = Mg, .zb = &xz, .nzb = 1,
					    .C = y + (n * q->M + gi * Mg) * P};
			if (!om_igemm_run(&g, c->threads)) {
				om_ctx_scratch_done(c, wz);
				return om_error(c->st, OM_ERR_NOMEM, c->node,
						"no memory for the integer product");
			}
		}
	om_ctx_scratch_done(c, wz);
	return OM_OK;
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
/* requant32's loop on AVX2 in 8 lanes: vmaxps and vminps clamp (a NaN to lo, as there), then
 * packs (a third of requant32's auto-vectorized blends) */
__attribute__((target("avx2"))) static int64_t requant32_avx2(const int32_t *s, int64_t n,
							       int32_t bias, float scale, float zp,
							       bool s8, void *y)
{
	const __m256i b = _mm256_set1_epi32(bias);
	const __m256 sc = _mm256_set1_ps(scale), z = _mm256_set1_ps(zp);
	const __m256 lo = _mm256_set1_ps(s8 ? -128.0f : 0.0f), hi = _mm256_set1_ps(s8 ? 127 : 255);
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const __m256i v = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(s + i)), b);
		__m256 q = _mm256_round_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(v), sc),
					   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		q = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, z), lo), hi);
		const __m256i k = _mm256_cvtps_epi32(q);
		const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(k),
						  _mm256_extracti128_si256(k, 1));
		const __m128i bytes = s8 ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
		_mm_storel_epi64((__m128i *)((char *)y + i), bytes);
	}
	return i;
}
#endif

void om_conv_requant(const int32_t *s, int64_t n, int64_t bias, float scale, float zp, bool s8,
		     void *y)
{
	/* |s| < 2^30 (om_conv_igemm's sums: CI_MAX_KG) */
	const bool narrow = bias >= -(INT64_C(1) << 30) && bias <= (INT64_C(1) << 30);
#if defined(__x86_64__) && defined(__GNUC__)
	if (narrow && __builtin_cpu_supports("avx2")) {
		const int64_t done = requant32_avx2(s, n, (int32_t)bias, scale, zp, s8, y);
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
