/* convt_nhwc.c — 2-D ConvTranspose of one group writing NHWC (convt_nhwc.h).
 *
 * Y[oh, ow, m] = bias[m] + sum over taps (a, b) and input pixels (i, j) with
 * oh = i s0 + a d0 - pb0, ow = j s1 + b d1 - pb1 of sum_c X[c, i, j] W[c, m, a, b].
 * The inner sums for every pixel and tap are one product, T = X^T Wt: (H W) x C times
 * C x (KH KW M), Wt being W with its taps before its outputs, so that each (pixel, tap) row of
 * T is M contiguous values; each output row then adds the T rows that land on it, M lanes at a
 * time. That is the column form of omopt's NCHW kernel (ops_conv.c) turned around: there the
 * columns are an output channel's taps over the input pixels, here a pixel's taps over the
 * output channels, which is what NHWC stores together. */
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "convt_nhwc.h"
#include "gemm.h"
#include "gemm_packed.h"
#include "parallel.h"

/* W (C, M, KH, KW) as Wt (C, KH KW, M), made on the step's first run */
typedef struct ct_state {
	int64_t key[3]; /* C, M, taps */
	float *wt;
	void *packed; /* Wt packed for the product (gemm_packed.h): a state slot */
	void (*release)(void *);
} ct_state;

static void ct_release(void *p)
{
	ct_state *s = p;
	om_ctx slot = {.state = &s->packed, .state_release = &s->release};
	om_ctx_state_reset(&slot);
	free(s->wt);
	s->wt = NULL;
}

static ct_state *ct_get(om_ctx *c, int64_t C, int64_t M, int64_t K, const float *w)
{
	const int64_t key[3] = {C, M, K};
	bool made;
	ct_state *s = om_ctx_state_keyed(c, ct_release, key, 3, sizeof *s, &made);
	if (!s)
		return NULL;
	if (made && (s->wt = malloc(sizeof(float) * (size_t)(C * K * M + 1))))
		for (int64_t ci = 0; ci < C; ci++)
			for (int64_t m = 0; m < M; m++)
				for (int64_t t = 0; t < K; t++)
					s->wt[(ci * K + t) * M + m] = w[(ci * M + m) * K + t];
	return s->wt ? s : NULL;
}


/* output rows [lo, hi) of one image from its product T */
typedef struct ct_job {
	const om_spatial *sp;
	int64_t M;
	const float *t; /* (H W) x (KH KW M) */
	const float *bias;
	const om_conv_epi *post; /* an activation, or NULL */
	float *y;                /* (OH, OW, M) */
} ct_job;

OM_CLONES static void ct_rows(void *arg, int64_t lo, int64_t hi)
{
	const ct_job *j = arg;
	const om_spatial *sp = j->sp;
	const int64_t M = j->M, IH = sp->in[0], IW = sp->in[1], KH = sp->k[0], KW = sp->k[1];
	const int64_t OW = sp->out[1], row = OW * M, tap = KH * KW * M;
	for (int64_t oh = lo; oh < hi; oh++) {
		float *restrict y = j->y + oh * row;
		for (int64_t p = 0; p < OW; p++)
			for (int64_t m = 0; m < M; m++)
				y[p * M + m] = j->bias ? j->bias[m] : 0.0f;
		for (int64_t a = 0; a < KH; a++) {
			const int64_t r = oh + sp->pb[0] - a * sp->dil[0]; /* i s0 */
			if (r < 0 || r % sp->stride[0] || r / sp->stride[0] >= IH)
				continue;
			const float *ti = j->t + r / sp->stride[0] * IW * tap;
			for (int64_t b = 0; b < KW; b++) {
				const int64_t ow0 = b * sp->dil[1] - sp->pb[1]; /* at i = 0 */
				for (int64_t i = 0; i < IW; i++) {
					const int64_t ow = ow0 + i * sp->stride[1];
					if (ow < 0 || ow >= OW)
						continue;
					float *restrict d = y + ow * M;
					const float *restrict s = ti + i * tap + (a * KW + b) * M;
					for (int64_t m = 0; m < M; m++)
						d[m] += s[m];
				}
			}
		}
		if (j->post)
			om_conv_epi_row(j->post, 0, 0, y, row);
	}
}

om_kind om_convt_nhwc(om_ctx *c, const om_spatial *sp, int64_t N, int64_t C, int64_t M,
		      const float *x, bool x_nhwc, const float *w, const float *bias,
		      const om_conv_epi *post, float *y)
{
	const int64_t K = sp->k[0] * sp->k[1], P = sp->in[0] * sp->in[1];
	const int64_t OP = sp->out[0] * sp->out[1];
	ct_state *s = ct_get(c, C, M, K, w);
	if (!s)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "ConvTranspose weights");
	const float *wt = s->wt;
	int64_t nt;
	if (__builtin_mul_overflow(P, K * M, &nt) || nt >= INT64_MAX / 8)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "product too large");
	float *t;
	om_kind rc = om_ctx_scratch(c, sizeof(float) * (size_t)nt, "the ConvTranspose product",
				    (void **)&t);
	if (rc)
		return rc;
	/* Wt packed once for oneDNN's matmul (in its own slot of the state); else om_sgemm,
	 * which packs it again in every call */
	om_ctx pc = *c;
	pc.state = &s->packed, pc.state_release = &s->release;
	const om_gemm_b b = {false, 1, C, K * M, K * M, 0, wt};
	om_gemm_packed *pk = C > 0 && P > 0 ? om_gemm_packed_get(&pc, 1, &b, P) : NULL;
	enum { GRAIN = 1 << 15 }; /* additions worth a thread */
	const int64_t per_row = sp->out[1] * M * (K / (sp->stride[0] * sp->stride[1]) + 1);
	for (int64_t n = 0; n < N; n++) {
		const float *xn = x + n * C * P;
		if (pk && om_gemm_packed_mul(&pc, pk, 0, !x_nhwc, P, 1, xn, x_nhwc ? C : P, 0, t,
					     K * M, &rc)) {
			if (rc)
				break;
		} else if (C > 0 && P > 0) {
			om_sgemm(0, !x_nhwc, false, P, K * M, C, 1, xn, x_nhwc ? C : P, wt, K * M,
				 0, t, K * M);
		} else {
			memset(t, 0, sizeof(float) * (size_t)nt);
		}
		ct_job j = {sp, M, t, bias, post, y + n * OP * M};
		om_par_for(c->threads, sp->out[0], GRAIN / (per_row + 1) + 1, ct_rows, &j);
	}
	om_ctx_scratch_done(c, t);
	return rc;
}
