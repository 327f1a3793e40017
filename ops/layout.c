/* layout.c — the channel-blocked layout's helpers (layout.h). */
#include <stdlib.h>
#include <string.h>

#include "layout.h"

#ifdef OM_HAVE_DNNL
#include <dnnl.h>
#endif

int32_t om_layout_block(void)
{
#ifdef OM_HAVE_DNNL
	const unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
	if ((isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core)
		return 16;
	if ((isa & dnnl_cpu_isa_avx2) == dnnl_cpu_isa_avx2)
		return 8;
#endif
	return 0;
}

void om_layout_dims(const int64_t *d, int32_t block, int64_t *out)
{
	const int64_t C = d[1], b = om_layout_lanes(block, C);
	out[0] = d[0];
	out[1] = (C + b - 1) / b;
	out[2] = d[2];
	out[3] = d[3];
	out[4] = b;
}

om_tensor om_layout_logical(const om_tensor *t, int64_t C)
{
	om_tensor v = *t;
	v.rank = 4;
	v.dims[1] = C;
	return v;
}

void om_layout_elementwise(const om_ctx *c, om_layout_req *r)
{
	*r = (om_layout_req){0};
	const om_tensor *y = c->nout == 1 ? c->out[0] : NULL;
	if (!y || y->rank != 4 || y->dtype != OM_FLOAT || c->nin > 32)
		return;
	uint64_t may = OM_LAYOUT_OUT(0);
	for (int32_t i = 0; i < c->nin; i++) {
		const om_tensor *x = c->in[i];
		if (!x || (x->rank <= 4 && om_tensor_numel(x) == 1))
			continue;
		const bool full = x->dims[2] == y->dims[2] && x->dims[3] == y->dims[3];
		const bool chan = x->dims[2] == 1 && x->dims[3] == 1;
		if (x->rank != 4 || x->dtype != OM_FLOAT || x->dims[0] != y->dims[0] ||
		    x->dims[1] != y->dims[1] || !(full || chan))
			return;
		may |= OM_LAYOUT_IN(i);
	}
	r->may = r->tied = may;
}

void om_layout_divide(const om_ctx *c, om_layout_req *r)
{
	om_layout_elementwise(c, r);
	const om_tensor *d = c->nin == 2 ? c->in[1] : NULL;
	const float *v = d && d->dtype == OM_FLOAT && d->data && om_tensor_numel(d) == 1 &&
				 (c->const_in & OM_LAYOUT_IN(1))
			     ? d->data
			     : NULL;
	if ((r->may & OM_LAYOUT_IN(1)) || !v || !(v[0] != 0.0f && v[0] - v[0] == 0.0f))
		*r = (om_layout_req){0};
}

/* pixels a tile of the conversions: a tile's lanes stay in cache while each channel's row of
 * it is read or written in one pass (whole planes a lane at a time went through the cache b
 * times) */
enum { LAYOUT_TILE = 32 };

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#include <immintrin.h>
#define LAYOUT_AVX512 1

/* r[i] = element i of each of the 16 vectors r (a 16x16 transposition in registers) */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
transpose16(__m512 r[16])
{
	__m512 t[16];
	for (int i = 0; i < 16; i += 2) { /* pairs of rows interleaved by element */
		t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
	}
	for (int i = 0; i < 16; i += 4) { /* quads of rows by pairs: 4x4 blocks per 128 bits */
		const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
		const __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
		r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
		r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
		r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
		r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
	}
	for (int i = 0; i < 4; i++) { /* 128-bit blocks of rows 0-3 with 4-7, 8-11 with 12-15 */
		t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
		t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
		t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
		t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
	}
	for (int i = 0; i < 8; i++) { /* and the halves */
		r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
		r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
	}
}

/* y (P pixels of 16 lanes) = the c <= 16 rows of P floats at x, ldx apart (lanes c.. 0) */
__attribute__((target("avx512f"))) static void block16(const float *x, int64_t ldx, int64_t c,
							int64_t P, float *y)
{
	for (int64_t p = 0; p < P; p += 16) {
		const int64_t n = P - p < 16 ? P - p : 16;
		const __mmask16 m = (__mmask16)((1u << n) - 1);
		__m512 r[16];
		for (int64_t l = 0; l < 16; l++)
			r[l] = l < c ? _mm512_maskz_loadu_ps(m, x + l * ldx + p)
				     : _mm512_setzero_ps();
		transpose16(r);
		for (int64_t i = 0; i < n; i++)
			_mm512_storeu_ps(y + (p + i) * 16, r[i]);
	}
}

/* the c <= 16 rows of P floats at y, ldy apart = lanes 0..c-1 of x (P pixels of 16 lanes) */
__attribute__((target("avx512f"))) static void unblock16(const float *x, int64_t c, int64_t P,
							  float *y, int64_t ldy)
{
	for (int64_t p = 0; p < P; p += 16) {
		const int64_t n = P - p < 16 ? P - p : 16;
		const __mmask16 m = (__mmask16)((1u << n) - 1);
		__m512 r[16];
		for (int64_t i = 0; i < 16; i++)
			r[i] = i < n ? _mm512_loadu_ps(x + (p + i) * 16) : _mm512_setzero_ps();
		transpose16(r);
		for (int64_t l = 0; l < c; l++)
			_mm512_mask_storeu_ps(y + l * ldy + p, m, r[l]);
	}
}
#endif

void om_layout_block_f32(const float *x, int64_t N, int64_t C, int64_t P, int64_t b, float *y)
{
	const int64_t Cb = (C + b - 1) / b;
#ifdef LAYOUT_AVX512
	if (b == 16 && __builtin_cpu_supports("avx512f")) {
		for (int64_t n = 0; n < N; n++)
			for (int64_t cb = 0; cb < Cb; cb++)
				block16(x + (n * C + cb * 16) * P, P, C - cb * 16, P,
					y + (n * Cb + cb) * P * 16);
		return;
	}
#endif
	for (int64_t n = 0; n < N; n++)
		for (int64_t cb = 0; cb < Cb; cb++) {
			float *o = y + (n * Cb + cb) * P * b;
			for (int64_t p0 = 0; p0 < P; p0 += LAYOUT_TILE) {
				const int64_t p1 = p0 + LAYOUT_TILE < P ? p0 + LAYOUT_TILE : P;
				for (int64_t l = 0; l < b; l++) {
					const int64_t ch = cb * b + l;
					const float *s = x + (n * C + ch) * P;
					for (int64_t p = p0; p < p1; p++)
						o[p * b + l] = ch < C ? s[p] : 0.0f;
				}
			}
		}
}

void om_layout_nhwc_u8(const uint8_t *x, int64_t N, int64_t C, int64_t P, bool to_nhwc,
		       uint8_t *y)
{
	enum { T = 32 }; /* tiles of T channels x T positions: both sides' lines stay in L1 */
	for (int64_t n = 0; n < N; n++, x += C * P, y += C * P)
		for (int64_t c0 = 0; c0 < C; c0 += T)
			for (int64_t p0 = 0; p0 < P; p0 += T) {
				const int64_t c1 = c0 + T < C ? c0 + T : C, p1 = p0 + T < P ? p0 + T : P;
				for (int64_t ch = c0; ch < c1; ch++)
					for (int64_t p = p0; p < p1; p++)
						if (to_nhwc)
							y[p * C + ch] = x[ch * P + p];
						else
							y[ch * P + p] = x[p * C + ch];
			}
}

void om_layout_per_tensor(const om_ctx *c, om_layout_req *r)
{
	*r = (om_layout_req){0};
	const om_tensor *x = c->in[0], *s = c->nin > 1 ? c->in[1] : NULL;
	const om_tensor *z = c->nin > 2 ? c->in[2] : NULL;
	if (c->exact || c->block != OM_BLOCK_NHWC || !x || x->rank != 4 || !s ||
	    om_tensor_numel(s) != 1 || s->rank > 1 || (z && om_tensor_numel(z) != 1) ||
	    c->nout != 1 || !c->out[0])
		return;
	r->block = OM_BLOCK_NHWC;
	r->may = r->tied = OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0);
}

void om_layout_unblock_f32(const float *x, int64_t N, int64_t C, int64_t P, int64_t b, float *y)
{
	const int64_t Cb = (C + b - 1) / b;
#ifdef LAYOUT_AVX512
	if (b == 16 && __builtin_cpu_supports("avx512f")) {
		for (int64_t n = 0; n < N; n++)
			for (int64_t cb = 0; cb < Cb; cb++)
				unblock16(x + (n * Cb + cb) * P * 16,
					  C - cb * 16 < 16 ? C - cb * 16 : 16, P,
					  y + (n * C + cb * 16) * P, P);
		return;
	}
#endif
	for (int64_t n = 0; n < N; n++)
		for (int64_t p0 = 0; p0 < P; p0 += LAYOUT_TILE) {
			const int64_t p1 = p0 + LAYOUT_TILE < P ? p0 + LAYOUT_TILE : P;
			for (int64_t ch = 0; ch < C; ch++) {
				const float *s = x + (n * Cb + ch / b) * P * b + ch % b;
				float *o = y + (n * C + ch) * P;
				for (int64_t p = p0; p < p1; p++)
					o[p] = s[p * b];
			}
		}
}

om_kind om_layout_plain_side(om_ctx *c, uint64_t bit, const om_tensor *t, int64_t C,
			     bool convert, om_tensor *plain, float **buf)
{
	*plain = *t;
	*buf = NULL;
	if (!(c->blocked & bit))
		return OM_OK;
	*plain = om_layout_logical(t, C);
	plain->nbytes = sizeof(float) * (size_t)om_tensor_numel(plain);
	om_kind rc = om_ctx_scratch(c, plain->nbytes, "a plain copy of a blocked tensor",
				    (void **)buf);
	if (rc)
		return rc;
	if (convert)
		om_layout_unblock_f32(t->data, t->dims[0], C, t->dims[2] * t->dims[3], t->dims[4],
				      *buf);
	plain->data = *buf;
	return OM_OK;
}
