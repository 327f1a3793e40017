/* conv_dw_lanes.c — depthwise QLinearConv 8 output channels a vector (conv_dw_lanes.h).
 * A group of 8 output channels: their input planes' bytes interleaved (8 x 8 transposes),
 * then less X's zero point as floats into phase planes whose positions hold 8 lanes; each
 * flat output position is a vector of the 8 channels' sums, 8 positions a pass of fused
 * multiply-adds (exact: integer sums below 2^24); the sums requantized per lane, transposed
 * back to the channels' rows of bytes. */
#include <string.h>

#include "conv_dw_lanes.h"
#include "parallel.h"
#include "requant8_avx2.h"

enum { DL = 8 };                 /* output channels a vector */
enum { DL_MAX_POS = 1 << 15 };   /* phase positions: 1 MiB of a group's floats */
enum { DL_GRAIN_MACS = 1 << 16 }; /* multiply-adds worth a thread */

#if defined(__x86_64__) && defined(__GNUC__)
#define DL_AVX2 __attribute__((target("avx2,fma")))

bool om_qconv_dw_lanes_takes(const om_dw_flat *f, bool narrow)
{
	return narrow && f->nbuf <= DL_MAX_POS && __builtin_cpu_supports("avx2") &&
	       __builtin_cpu_supports("fma");
}

typedef struct dwl_job {
	const om_conv_int *q;
	const om_qconv_out *r;
	const om_dw_plane *p;
	const om_dw_flat *f;
	const int64_t *tap;
	int64_t groups; /* groups of DL output channels an image */
	size_t per;	/* bytes a slot: the phase planes (xq, padding zeroed once), the weights
			 * (wv), biases and scales a lane, the interleaved bytes (xt), the flat
			 * output bytes of each lane (yb) */
	char *buf;
	uint8_t *y;
} dwl_job;

/* the slot's arrays, at offsets of whole 64 bytes */
typedef struct dwl_slot {
	float *xq, *wv, *scale;
	int32_t *bias;
	uint8_t *xt, *yb;
} dwl_slot;

static size_t round64(size_t n)
{
	return (n + 63) / 64 * 64;
}

/* the slot at base (NULL: none) laid out into s; returns its bytes */
static size_t slot_layout(const dwl_job *j, char *base, dwl_slot *s)
{
	const om_dw_plane *p = j->p;
	const size_t nk = (size_t)(p->kh * p->kw), pin = (size_t)(p->H * p->W);
	const size_t sizes[6] = {sizeof(float) * DL * (size_t)j->f->nbuf, sizeof(float) * DL * nk,
				 sizeof(float) * DL, sizeof(int32_t) * DL, DL * pin,
				 DL * (size_t)j->f->nyw};
	void *at[6];
	size_t o = 0;
	for (int i = 0; i < 6; i++) {
		at[i] = base ? base + o : NULL;
		o += round64(sizes[i]);
	}
	*s = (dwl_slot){at[0], at[1], at[2], at[3], at[4], at[5]};
	return o;
}

/* o[j / 2] holds, in its low (j even) or high (j odd) 8 bytes, byte j of r[0] ... r[7] (the
 * low 8 bytes of each) */
DL_AVX2 static inline void tr8x8(const __m128i r[DL], __m128i o[DL / 2])
{
	const __m128i t0 = _mm_unpacklo_epi8(r[0], r[1]), t1 = _mm_unpacklo_epi8(r[2], r[3]);
	const __m128i t2 = _mm_unpacklo_epi8(r[4], r[5]), t3 = _mm_unpacklo_epi8(r[6], r[7]);
	const __m128i u0 = _mm_unpacklo_epi16(t0, t1), u1 = _mm_unpackhi_epi16(t0, t1);
	const __m128i u2 = _mm_unpacklo_epi16(t2, t3), u3 = _mm_unpackhi_epi16(t2, t3);
	o[0] = _mm_unpacklo_epi32(u0, u2), o[1] = _mm_unpackhi_epi32(u0, u2);
	o[2] = _mm_unpacklo_epi32(u1, u3), o[3] = _mm_unpackhi_epi32(u1, u3);
}

/* xt[i * DL + c] = src[c][i] for the n bytes of each lane's plane */
DL_AVX2 static void interleave(const uint8_t *const src[DL], int64_t n, uint8_t *restrict xt)
{
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m128i r[DL], o[DL / 2];
		for (int c = 0; c < DL; c++)
			r[c] = _mm_loadl_epi64((const __m128i *)(src[c] + i));
		tr8x8(r, o);
		for (int k = 0; k < DL / 2; k++)
			_mm_storeu_si128((__m128i *)(xt + (i + 2 * k) * DL), o[k]);
	}
	for (; i < n; i++)
		for (int c = 0; c < DL; c++)
			xt[i * DL + c] = src[c][i];
}

/* the interleaved bytes xt (int8 when sgn) less z into the phase planes xq, DL lanes a
 * position (the padding is never written) */
DL_AVX2 static void fill(const om_dw_plane *p, const om_dw_flat *f, const uint8_t *xt, bool sgn,
			 float z, float *restrict xq)
{
	const __m256 zv = _mm256_set1_ps(z);
	OM_DW_PHASE_ROWS(p, f, {
		for (int64_t b = b0; b < b1; b++) {
			const __m128i v =
				_mm_loadl_epi64((const __m128i *)(xt + (src + b * p->sw) * DL));
			const __m256i w = sgn ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
			_mm256_storeu_ps(xq + (dst + b) * DL,
					 _mm256_sub_ps(_mm256_cvtepi32_ps(w), zv));
		}
	})
}

/* the flat outputs' sums, 8 positions a pass, requantized per lane into yb (lane c's flat
 * bytes at c * nyw) */
DL_AVX2 static void taps_requant(const dwl_job *j, const dwl_slot *s)
{
	const om_dw_flat *f = j->f;
	const int64_t nk = j->p->kh * j->p->kw, nyw = f->nyw;
	const __m256i bias = _mm256_loadu_si256((const __m256i *)s->bias);
	const __m256 scale = _mm256_loadu_ps(s->scale);
	for (int64_t k = 0; k < nyw; k += 8) { /* nyw: whole runs of 32 */
		__m256 a[8];
		for (int u = 0; u < 8; u++)
			a[u] = _mm256_setzero_ps();
		for (int64_t t = 0; t < nk; t++) {
			const __m256 w = _mm256_loadu_ps(s->wv + t * DL);
			const float *x = s->xq + (j->tap[t] + k) * DL;
			for (int u = 0; u < 8; u++)
				a[u] = _mm256_fmadd_ps(w, _mm256_loadu_ps(x + u * DL), a[u]);
		}
		__m128i b[8], o[DL / 2];
		for (int u = 0; u < 8; u++) /* integral sums below 2^24: exact as int32 */
			b[u] = om_requant8_avx2(_mm256_cvtps_epi32(a[u]), bias, scale, j->r->y_zp,
						j->r->s8);
		tr8x8(b, o);
		for (int c = 0; c < DL; c += 2) {
			_mm_storel_epi64((__m128i *)(s->yb + c * nyw + k), o[c / 2]);
			_mm_storeh_pd((double *)(s->yb + (c + 1) * nyw + k),
				      _mm_castsi128_pd(o[c / 2]));
		}
	}
}

/* one group: image n, output channels m0 .. m0 + nc - 1 */
DL_AVX2 static void group(const dwl_job *j, const dwl_slot *s, int64_t n, int64_t m0, int64_t nc)
{
	const om_conv_int *q = j->q;
	const om_qconv_out *r = j->r;
	const om_dw_plane *p = j->p;
	const int64_t nk = p->kh * p->kw, Pin = p->H * p->W, P = p->OH * p->OW;
	const int64_t nwz = q->wz ? om_tensor_numel(q->wz) : 0;
	const uint8_t *src[DL];
	for (int c = 0; c < DL; c++) { /* the lanes past nc: channel m0's values, weights 0 */
		const int64_t m = m0 + (c < nc ? c : 0);
		const int32_t wz = nwz ? om_q8_elem(q->wz, nwz == 1 ? 0 : m) : 0;
		for (int64_t t = 0; t < nk; t++)
			s->wv[t * DL + c] = c < nc ? (float)(om_q8_elem(q->W, m * nk + t) - wz) : 0.0f;
		s->bias[c] = r->bias && c < nc ? r->bias[m] : 0;
		s->scale[c] = om_qconv_scale(r, m);
		src[c] = (const uint8_t *)q->X->data + (n * q->C + m / (q->M / q->C)) * Pin;
	}
	interleave(src, Pin, s->xt);
	fill(p, j->f, s->xt, q->X->dtype == OM_INT8, (float)(q->xz ? om_q8_elem(q->xz, 0) : 0),
	     s->xq);
	taps_requant(j, s);
	for (int64_t c = 0; c < nc; c++)
		om_dw_flat_compact_u8(p, j->f, s->yb + c * j->f->nyw, j->y + (n * q->M + m0 + c) * P);
}

static void dwl_piece(void *arg, int64_t g0, int64_t g1, int slot)
{
	const dwl_job *j = arg;
	dwl_slot s;
	slot_layout(j, j->buf + (size_t)slot * j->per, &s);
	for (int64_t g = g0; g < g1; g++) {
		const int64_t n = g / j->groups, m0 = g % j->groups * DL;
		group(j, &s, n, m0, j->q->M - m0 < DL ? j->q->M - m0 : DL);
	}
}

om_kind om_qconv_dw_lanes(om_ctx *c, const om_conv_int *q, const om_qconv_out *r,
			  const om_dw_plane *p, const om_dw_flat *f, const int64_t *tap, void *y)
{
	om_ctx_chose(c, OM_CONV_DW_LANES);
	const int64_t groups = (q->M + DL - 1) / DL, units = q->N * groups;
	if (units < 1 || p->OH * p->OW < 1)
		return OM_OK;
	const double macs = (double)f->nyw * (double)(p->kh * p->kw) * DL;
	const int64_t grain = macs >= DL_GRAIN_MACS ? 1 : (int64_t)(DL_GRAIN_MACS / (macs + 1)) + 1;
	const int slots = om_par_slots(c->threads, units, grain);
	dwl_job j = {q, r, p, f, tap, groups, 0, NULL, y};
	dwl_slot s;
	j.per = slot_layout(&j, NULL, &s);
	om_kind rc = om_ctx_scratch(c, j.per * (size_t)slots, "the depthwise lanes' planes",
				    (void **)&j.buf);
	if (rc)
		return rc;
	for (int i = 0; i < slots; i++)
		memset(j.buf + (size_t)i * j.per, 0, sizeof(float) * DL * (size_t)f->nbuf);
	om_par_for_slots(c->threads, units, grain, dwl_piece, &j);
	om_ctx_scratch_done(c, j.buf);
	return OM_OK;
}

#else
bool om_qconv_dw_lanes_takes(const om_dw_flat *f, bool narrow)
{
	(void)f, (void)narrow;
	return false;
}

om_kind om_qconv_dw_lanes(om_ctx *c, const om_conv_int *q, const om_qconv_out *r,
			  const om_dw_plane *p, const om_dw_flat *f, const int64_t *tap, void *y)
{
	(void)q, (void)r, (void)p, (void)f, (void)tap, (void)y;
	return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "the depthwise lanes need x86-64");
}
#endif
