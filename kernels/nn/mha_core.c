/* mha_core.c — the attention core of com.microsoft MultiHeadAttention, Attention and
 * QAttention, one (batch, head) pair at a time: its keys and values (the past's rows, then the
 * new rows with their bias) into the present outputs and float rows (a float present is read
 * in place), then, a pass of query rows at a time, scores = scale * QK' + (attention_bias +
 * mask) through om_sgemm (ONNX Runtime's alpha and beta = 1 over the bias and mask it fills
 * in first), the causal frontier, softmax (exact mode in double through attn_rows.h, fast mode
 * fastmath.h's) and the product with the values. float16/bfloat16 plans compute in float,
 * their outputs (and present rows) rounded to the type, as ONNX Runtime 1.30's kernel does. */
#include <stdlib.h>
#include <string.h>

#include "attn_rows.h"
#include "f32_array.h"
#include "fastmath.h"
#include "gemm.h"
#include "mha.h"
#include "parallel.h"

int om_mha_mask_kind(const mha_plan *p, const om_tensor *m)
{
	if (m->rank == 1 && m->dims[0] == p->B)
		return MHA_MASK_END;
	if (m->rank == 1 && m->dims[0] == 2 * p->B)
		return MHA_MASK_END_START;
	if (m->rank == 1 && m->dims[0] == 3 * p->B + 2)
		return MHA_MASK_END; /* ONNX Runtime's CPU kernel reads its first B: ends */
	if (m->rank == 2 && m->dims[0] == p->B && m->dims[1] == p->T)
		return MHA_MASK_2D;
	if (m->rank == 3 && m->dims[0] == p->B && m->dims[1] == p->S && m->dims[2] == p->T)
		return MHA_MASK_3D;
	return -1;
}

bool om_mha_attention_bias(mha_plan *p, const om_tensor *ab)
{
	if (ab->dtype != p->dt || ab->rank != 4 || (ab->dims[0] != 1 && ab->dims[0] != p->B) ||
	    (ab->dims[1] != 1 && ab->dims[1] != p->N) || ab->dims[2] != p->S ||
	    ab->dims[3] != p->T)
		return false;
	p->bias = ab->data;
	p->bias_h = ab->dims[1] == 1 ? 0 : p->S * p->T;
	p->bias_b = ab->dims[0] == 1 ? 0 : ab->dims[1] * p->S * p->T;
	return true;
}

/* query rows per pass: a pass's scores stay within 4 MB */
static int64_t mha_chunk(const mha_plan *p)
{
	const int64_t most = ((int64_t)1 << 20) / (p->T > 0 ? p->T : 1);
	return most < 1 ? 1 : most < p->S ? most : p->S;
}

/* a row's floats of scratch for a bias: the longer of a key and a value row */
static int64_t mha_tmp_floats(const mha_plan *p)
{
	return p->Dk > p->Dv ? p->Dk : p->Dv;
}

/* one slot's floats: keys, values, a pass's queries, scores and outputs, a
 * row of conversions, then T doubles (at an even float) */
static int64_t mha_scratch_floats(const mha_plan *p, int64_t chunk)
{
	const int64_t f = p->T * (p->Dk + p->Dv) + chunk * (p->Dk + p->T + p->Dv) +
			  mha_tmp_floats(p);
	return (f + 1) / 2 * 2 + 2 * p->T + 2;
}

/* row s of head h of batch b from src (D values) as floats into x, src's bias added in float;
 * tmp: D floats */
static void load_row(const mha_src *src, int64_t b, int64_t s, int64_t h, int64_t D, float *x,
		     float *tmp)
{
	const size_t es = om_dtype_size(src->dt);
	const int64_t at = b * src->sb + s * src->ss + h * src->sh;
	om_to_f32(src->dt, src->data + (size_t)at * es, D, x);
	if (!src->bias)
		return;
	om_to_f32(src->dt, src->bias + (size_t)(h * D) * es, D, tmp);
	for (int64_t d = 0; d < D; d++)
		x[d] += tmp[d];
}

/* the T rows of keys or values of (b, h): the past's P, then the L new ones; into the present
 * (pr, the plan's type) when there is one, and as floats into f */
static void gather_rows(const mha_plan *p, const mha_src *past, const mha_src *src, int64_t b,
			int64_t h, int64_t D, char *pr, float *f, float *tmp)
{
	const size_t rowb = (size_t)D * p->es;
	for (int64_t j = 0; j < p->P; j++) {
		const int64_t at = b * past->sb + j * past->ss + h * past->sh;
		const char *row = past->data + (size_t)at * p->es;
		if (pr)
			memcpy(pr + (size_t)j * rowb, row, rowb);
		if (f != (float *)pr)
			om_to_f32(p->dt, row, D, f + j * D);
	}
	for (int64_t j = 0; j < p->L; j++) {
		float *x = f + (p->P + j) * D;
		load_row(src, b, j, h, D, x, tmp);
		if (pr && f != (float *)pr)
			om_from_f32(p->dt, x, D, pr + (size_t)(p->P + j) * rowb);
	}
}

/* whether key j is masked for query s of batch b (ONNX Runtime's PrepareMask) */
static bool masked(const mha_plan *p, int64_t b, int64_t s, int64_t j)
{
	const int32_t *m = p->mask_data;
	switch (p->mask) {
	case MHA_MASK_END:
		return j >= m[b];
	case MHA_MASK_END_START:
		return j >= m[b] || j < m[p->B + b];
	case MHA_MASK_2D:
		return m[b * p->T + j] <= 0;
	case MHA_MASK_3D:
		return m[(b * p->S + s) * p->T + j] <= 0;
	default:
		return false;
	}
}

/* row s's addend of the scores: attention_bias + mask; false when the plan has neither */
static bool fill_addend(const mha_plan *p, int64_t b, int64_t h, int64_t s, float *x)
{
	if (!p->bias && p->mask == MHA_MASK_NONE)
		return false;
	if (p->bias) {
		const int64_t at = b * p->bias_b + h * p->bias_h + s * p->T;
		om_to_f32(p->dt, p->bias + (size_t)at * p->es, p->T, x);
	} else {
		memset(x, 0, sizeof(float) * (size_t)p->T);
	}
	for (int64_t j = 0; p->mask != MHA_MASK_NONE && j < p->T; j++)
		x[j] += masked(p, b, s, j) ? p->filter : 0.0f;
	return true;
}

/* softmax of the first n of x's T scores, zeros after */
static void row_softmax(const mha_plan *p, float *x, int64_t n, double *d)
{
	if (p->exact) {
		for (int64_t j = 0; j < n; j++)
			d[j] = x[j];
		om_attn_softmax(d, n, NULL);
		for (int64_t j = 0; j < n; j++)
			x[j] = (float)d[j];
	} else {
		om_fast_softmax_f32(1, n, x, x, false);
	}
	memset(x + n, 0, sizeof(float) * (size_t)(p->T - n));
}

typedef struct mha_job {
	const mha_plan *p;
	const mha_out *o;
	int64_t chunk, per_slot;
	float *scratch;
} mha_job;

/* query rows [s0, s1) of (b, h) against keys kf and values vf; w: the pass's buffers */
static void mha_pass(const mha_plan *p, const mha_out *o, int64_t b, int64_t h, int64_t s0,
		     int64_t s1, const float *kf, const float *vf, float *w, double *d)
{
	const int64_t n = s1 - s0, T = p->T;
	float *q = w, *sc = q + n * p->Dk, *y = sc + n * T, *tmp = y + n * p->Dv;
	bool add = false;
	for (int64_t s = s0; s < s1; s++) {
		load_row(&p->q, b, s, h, p->Dk, q + (s - s0) * p->Dk, tmp);
		add = fill_addend(p, b, h, s, sc + (s - s0) * T);
	}
	om_sgemm(p->exact, false, true, n, T, p->Dk, p->scale, q, p->Dk, kf, p->Dk, add ? 1 : 0,
		 sc, T);
	for (int64_t s = s0; s < s1; s++) {
		const int64_t hi = p->causal && p->P + s + 1 < T ? p->P + s + 1 : T;
		row_softmax(p, sc + (s - s0) * T, hi, d);
	}
	om_sgemm(p->exact, false, false, n, p->Dv, T, 1, sc, T, vf, p->Dv, 0, y, p->Dv);
	const int64_t width = p->N * p->Dv;
	for (int64_t s = s0; s < s1; s++) {
		const size_t at = (size_t)((b * p->S + s) * width + h * p->Dv);
		om_from_f32(p->dt, y + (s - s0) * p->Dv, p->Dv, o->y + at * p->es);
	}
}

static void mha_piece(void *arg, int64_t lo, int64_t hi, int slot)
{
	const mha_job *j = arg;
	const mha_plan *p = j->p;
	float *f = j->scratch + (size_t)slot * (size_t)j->per_slot;
	float *kf = f, *vf = kf + p->T * p->Dk, *w = vf + p->T * p->Dv;
	const int64_t used = mha_scratch_floats(p, j->chunk) - 2 * p->T - 2;
	double *d = (double *)(f + used);
	float *tmp = w + j->chunk * (p->Dk + p->T + p->Dv);
	for (int64_t i = lo; i < hi; i++) {
		const int64_t b = i / p->N, h = i % p->N;
		char *pk = j->o->pk ? j->o->pk + (size_t)(i * p->T * p->Dk) * p->es : NULL;
		char *pv = j->o->pv ? j->o->pv + (size_t)(i * p->T * p->Dv) * p->es : NULL;
		/* a float present holds the rows the products read */
		float *k = pk && p->dt == OM_FLOAT ? (float *)pk : kf;
		float *v = pv && p->dt == OM_FLOAT ? (float *)pv : vf;
		gather_rows(p, &p->pk, &p->k, b, h, p->Dk, pk, k, tmp);
		gather_rows(p, &p->pv, &p->v, b, h, p->Dv, pv, v, tmp);
		for (int64_t s0 = 0; s0 < p->S; s0 += j->chunk)
			mha_pass(p, j->o, b, h, s0, s0 + j->chunk < p->S ? s0 + j->chunk : p->S, k,
				 v, w, d);
	}
}

om_kind om_mha_run(om_ctx *c, const mha_plan *p, const mha_out *o)
{
	const int64_t n = p->B * p->N;
	if (n == 0 || p->S == 0)
		return OM_OK;
	const int64_t chunk = mha_chunk(p);
	/* a slot's scratch starts at a multiple of 16 floats: its doubles align */
	const int64_t per = (mha_scratch_floats(p, chunk) + 15) / 16 * 16;
	const int slots = om_par_slots(c->threads, n, 1);
	const size_t bytes = sizeof(float) * (size_t)per * (size_t)slots;
	float *scratch;
	om_kind rc = om_ctx_scratch(c, bytes, "attention scratch", (void **)&scratch);
	if (rc)
		return rc;
	mha_job j = {p, o, chunk, per, scratch};
	om_par_for_slots(c->threads, n, 1, mha_piece, &j);
	om_ctx_scratch_done(c, scratch);
	return OM_OK;
}
