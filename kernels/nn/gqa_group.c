/* gqa_group.c — com.microsoft GroupQueryAttention on one (batch, kv head) group: its present
 * rows (the past rows the batch keeps, the new tokens rotated (quantized for a quantized
 * cache), zeros after), then, a pass of query rows at a time, the group's query heads
 * together: scores against the present keys read in place (float: om_sgemm; float16/bfloat16
 * rows converted, quantized rows dequantized, to float once per group), the
 * window and causal frontier, softcap, bias and softmax (exact mode and sinks in double through
 * attn_rows.h, fast mode in float through fastmath.h), and the product with the present
 * values; gqa_run runs every group over the threads (GroupQueryAttention, and Attention's fast
 * path). */
#include <string.h>

#include "attn_rows.h"
#include "f32_array.h"
#include "fastmath.h"
#include "gemm.h"
#include "gqa.h"
#include "numrun.h"
#include "parallel.h"

int64_t gqa_chunk(const gqa_plan *p)
{
	const int64_t most = ((int64_t)1 << 20) / (p->G * (p->Tp > 0 ? p->Tp : 1));
	return most < 1 ? 1 : most < p->S ? most : p->S;
}

int64_t gqa_scratch_floats(const gqa_plan *p, int64_t chunk)
{
	const int64_t rows = p->G * chunk;
	/* q, k, v, scores, outputs; doubles: a row of scores or a head row, cos and sin */
	return rows * p->D * 2 + 2 * p->Tp * p->D + rows * p->Tp + 1 +
	       2 * (p->Tp + p->D + p->rd + 2) + p->D * 2;
}

int64_t gqa_total(const gqa_plan *p, int64_t b)
{
	return (int64_t)((const int32_t *)p->seqlens->data)[b] + 1;
}

int64_t gqa_past(const gqa_plan *p, int64_t b)
{
	return p->first ? 0 : gqa_total(p, b) - p->S;
}

int64_t gqa_position(const gqa_plan *p, int64_t b, int64_t s)
{
	const int64_t *ids = p->pos ? p->pos->data : NULL;
	if (!ids)
		return gqa_past(p, b) + s;
	/* a first prompt takes position_ids[0][0] + s in every batch (ONNX Runtime 1.30) */
	return p->first ? ids[0] + s : ids[b * p->S + s];
}

/* token s of batch b, head `head` of src: its D values into x, rotated when the plan rotates
 * (in double, d: 2 rd doubles of scratch) */
static void load_head(const gqa_plan *p, const gqa_src *src, int64_t b, int64_t s,
		      int64_t head, float *x, double *d)
{
	const int64_t at = (b * p->S + s) * src->row + src->off + head * p->D;
	om_to_f32(p->dt, src->data + (size_t)at * p->es, p->D, x);
	if (!p->rd)
		return;
	const int64_t half = p->rd / 2;
	const size_t co = (size_t)(gqa_position(p, b, s) * half) * p->es;
	double *cs = d + p->rd;
	om_load_f64(p->dt, (const char *)p->cs->data + co, 1, half, cs);
	om_load_f64(p->dt, (const char *)p->sn->data + co, 1, half, cs + half);
	for (int64_t i = 0; i < p->rd; i++)
		d[i] = x[i];
	om_attn_rotate(d, cs, cs + half, p->rd, p->interleaved);
	for (int64_t i = 0; i < p->rd; i++)
		x[i] = (float)d[i];
}

/* a new token's key (rotated: x holds it in float) or value row into a quantized cache row:
 * the values rounded to the plan's type first, as ONNX Runtime quantizes them from there
 * (tmp: D elements of the plan's type) */
static void quantize_row(const gqa_plan *p, const float *scale, float *x, void *tmp, void *row)
{
	if (p->dt != OM_FLOAT) {
		om_from_f32(p->dt, x, p->D, tmp);
		om_to_f32(p->dt, tmp, p->D, x);
	}
	gqa_kv_quantize(p, scale, x, row);
}

/* present rows of group (b, kh): the past's first `past` rows, the S new tokens, zeros
 * (x: D floats, d: 2 rd doubles, tmp: D elements of the plan's type, of scratch) */
static void write_present(const gqa_plan *p, const gqa_out *o, int64_t b, int64_t kh,
			  int64_t past, float *x, double *d, void *tmp)
{
	const size_t rowb = p->crowb;
	char *pk = o->pk + (size_t)((b * p->Hkv + kh) * p->Tp) * rowb;
	char *pv = o->pv + (size_t)((b * p->Hkv + kh) * p->Tp) * rowb;
	const float *ksc = p->qbits ? p->ksc + kh * p->sc_head : NULL;
	const float *vsc = p->qbits ? p->vsc + kh * p->sc_head : NULL;
	if (past > 0) {
		const size_t from = (size_t)((b * p->Hkv + kh) * p->P) * rowb;
		memcpy(pk, (const char *)p->pk->data + from, (size_t)past * rowb);
		memcpy(pv, (const char *)p->pv->data + from, (size_t)past * rowb);
	}
	for (int64_t s = 0; s < p->S; s++) {
		char *kr = pk + (size_t)(past + s) * rowb, *vr = pv + (size_t)(past + s) * rowb;
		const int64_t at = (b * p->S + s) * p->v.row + p->v.off + kh * p->D;
		if (p->qbits) {
			om_to_f32(p->dt, p->v.data + (size_t)at * p->es, p->D, x);
			quantize_row(p, vsc, x, tmp, vr);
			load_head(p, &p->k, b, s, kh, x, d);
			quantize_row(p, ksc, x, tmp, kr);
			continue;
		}
		memcpy(vr, p->v.data + (size_t)at * p->es, rowb);
		if (p->rd) {
			load_head(p, &p->k, b, s, kh, x, d);
			om_from_f32(p->dt, x, p->D, kr);
		} else {
			const int64_t ak = (b * p->S + s) * p->k.row + p->k.off + kh * p->D;
			memcpy(kr, p->k.data + (size_t)ak * p->es, rowb);
		}
	}
	const int64_t end = past + p->S;
	memset(pk + (size_t)end * rowb, 0, (size_t)(p->Tp - end) * rowb);
	memset(pv + (size_t)end * rowb, 0, (size_t)(p->Tp - end) * rowb);
}

static double bias_at(const gqa_plan *p, int64_t b, int64_t h, int64_t s, int64_t j)
{
	const int64_t at = b * p->bias_b + h * p->bias_h + s * p->total + j;
	double v = 0;
	om_load_f64(p->dt, (const char *)p->bias->data + (size_t)at * p->es, 1, 1, &v);
	return v;
}

/* the keys query row s of batch b sees: [*lo, *hi). A padding row past the batch's total T (a
 * first prompt shorter than S) differs by path in ONNX Runtime 1.30's CPU kernel, which omopt
 * follows: in its float path without softcap, smooth_softmax or qk_output (measured), and here
 * also without attention_bias, head_sink or a quantized cache (not measured), the local window
 * counts back from the row's own position past + s + 1, so the row sees [past + s + 1 - window,
 * T), none when that is empty (its output is zeros); otherwise (float16 too) from the frontier
 * T, the last window keys */
static void row_range(const gqa_plan *p, int64_t T, int64_t past, int64_t s, int64_t *lo,
		      int64_t *hi)
{
	const bool own = p->dt == OM_FLOAT && !(p->softcap > 0) && !p->smooth && !p->sink &&
			 !p->bias && !p->qk_mode && !p->qbits;
	const int64_t at = p->causal ? past + s + 1 : T;
	const int64_t L = at < T ? at : T, from = own ? at : L;
	const int64_t w = p->window > 0 && from > p->window ? from - p->window : 0;
	*hi = L;
	*lo = w < L ? w : L;
}

typedef struct gqa_row {
	int64_t b, h, s, lo, hi; /* batch, query head, token, keys [lo, hi) */
} gqa_row;

/* output_qk's row: zeros but for the keys the row sees, x from there */
static void qk_store(const gqa_plan *p, const gqa_out *o, const gqa_row *r, const double *x)
{
	char *q = o->qk + (size_t)(((r->b * p->Hq + r->h) * p->S + r->s) * p->total) * p->es;
	memset(q, 0, (size_t)p->total * p->es);
	om_store_f64(p->dt, q + (size_t)r->lo * p->es, 1, x, r->hi - r->lo);
}

/* softcap, bias and softmax over x's n = hi - lo scores (row r); d: n doubles of scratch */
static void row_softmax(const gqa_plan *p, const gqa_out *o, const gqa_row *r, float *x,
			double *d)
{
	const int64_t n = r->hi - r->lo;
	double sinkv = 0;
	const bool has_sink = p->sink || p->smooth;
	if (p->sink)
		om_load_f64(p->dt, (const char *)p->sink->data + (size_t)r->h * p->es, 1, 1,
			    &sinkv);
	if (!p->exact && !has_sink && !p->bias && p->qk_mode == 0) {
		if (p->softcap > 0) {
			for (int64_t j = 0; j < n; j++)
				x[j] /= p->softcap;
			om_fast_tanh_f32(n, x, x);
			for (int64_t j = 0; j < n; j++)
				x[j] *= p->softcap;
		}
		om_fast_softmax_f32(1, n, x, x, false);
		return;
	}
	for (int64_t j = 0; j < n; j++) {
		double v = x[j];
		if (p->softcap > 0)
			v = p->softcap * om_attn_tanh(v / p->softcap);
		d[j] = p->bias ? v + bias_at(p, r->b, r->h, r->s, r->lo + j) : v;
	}
	if (p->qk_mode == 1)
		qk_store(p, o, r, d);
	om_attn_softmax(d, n, has_sink ? &sinkv : NULL);
	if (p->qk_mode == 2)
		qk_store(p, o, r, d);
	for (int64_t j = 0; j < n; j++)
		x[j] = (float)d[j];
}

typedef struct gqa_bufs {
	float *q, *k, *v, *sc, *y;
	double *d;
	void *tmp; /* one head row in the plan's type */
} gqa_bufs;

/* query rows [s0, s1) of group (b, kh) against its T present rows */
static void group_pass(const gqa_plan *p, const gqa_out *o, const gqa_bufs *w, int64_t b,
		       int64_t kh, int64_t T, int64_t past, int64_t s0, int64_t s1)
{
	const int64_t n = s1 - s0, M = p->G * n, D = p->D;
	int64_t c0, c1, lo, hi;
	row_range(p, T, past, s0, &c0, &hi);
	row_range(p, T, past, s1 - 1, &lo, &c1);
	const int64_t nc = c1 - c0;
	if (nc == 0) { /* padding rows that see no key (row_range): zeros */
		for (int64_t g = 0; g < p->G; g++)
			for (int64_t s = s0; s < s1; s++) {
				const int64_t at = ((b * p->S + s) * p->Hq + kh * p->G + g) * D;
				memset(o->y + (size_t)at * p->es, 0, (size_t)D * p->es);
				if (p->qk_mode)
					qk_store(p, o, &(gqa_row){b, kh * p->G + g, s, 0, 0}, w->d);
			}
		return;
	}
	for (int64_t g = 0; g < p->G; g++)
		for (int64_t s = s0; s < s1; s++) {
			float *q = w->q + (g * n + s - s0) * D;
			load_head(p, &p->q, b, s, kh * p->G + g, q, w->d);
			/* rounded to the type, as ONNX Runtime's rotated query is */
			if (p->dt != OM_FLOAT && p->rd) {
				om_from_f32(p->dt, q, p->rd, w->tmp);
				om_to_f32(p->dt, w->tmp, p->rd, q);
			}
		}
	om_sgemm(p->exact, false, true, M, nc, D, p->scale, w->q, D, w->k + c0 * D, D, 0, w->sc,
		 nc);
	for (int64_t g = 0; g < p->G; g++)
		for (int64_t s = s0; s < s1; s++) {
			float *x = w->sc + (g * n + s - s0) * nc;
			gqa_row r = {b, kh * p->G + g, s, 0, 0};
			row_range(p, T, past, s, &r.lo, &r.hi);
			row_softmax(p, o, &r, x + r.lo - c0, w->d);
			memset(x, 0, sizeof(float) * (size_t)(r.lo - c0));
			memset(x + r.hi - c0, 0, sizeof(float) * (size_t)(c1 - r.hi));
		}
	om_sgemm(p->exact, false, false, M, D, nc, 1, w->sc, nc, w->v + c0 * D, D, 0, w->y, D);
	for (int64_t g = 0; g < p->G; g++)
		for (int64_t s = s0; s < s1; s++) {
			const int64_t at = ((b * p->S + s) * p->Hq + kh * p->G + g) * D;
			om_from_f32(p->dt, w->y + (g * n + s - s0) * D, D,
					 o->y + (size_t)at * p->es);
		}
}

void gqa_group(const gqa_plan *p, const gqa_out *o, int64_t i, int64_t chunk, float *f)
{
	const int64_t b = i / p->Hkv, kh = i % p->Hkv, D = p->D, rows = p->G * chunk;
	const int64_t T = gqa_total(p, b), past = gqa_past(p, b);
	gqa_bufs w;
	w.q = f, w.y = f + rows * D, w.sc = w.y + rows * D;
	float *kf = w.sc + rows * p->Tp, *vf = kf + p->Tp * D;
	const int64_t used = 2 * rows * D + rows * p->Tp + 2 * p->Tp * D;
	w.d = (double *)(f + used + (used & 1)); /* f is malloc'd: doubles align at even floats */
	w.tmp = w.d + p->Tp + D + p->rd + 2;
	write_present(p, o, b, kh, past, w.y, w.d, w.tmp);
	const size_t at = (size_t)((b * p->Hkv + kh) * p->Tp * D);
	if (p->qbits) { /* the codes of the T rows the batch reads, to float */
		const size_t row0 = (size_t)((b * p->Hkv + kh) * p->Tp) * p->crowb;
		gqa_kv_dequantize(p, p->ksc + kh * p->sc_head, o->pk + row0, T, kf);
		gqa_kv_dequantize(p, p->vsc + kh * p->sc_head, o->pv + row0, T, vf);
		w.k = kf, w.v = vf;
	} else if (p->dt == OM_FLOAT) {
		w.k = (float *)o->pk + at, w.v = (float *)o->pv + at;
	} else {
		om_to_f32(p->dt, o->pk + at * p->es, T * D, kf);
		om_to_f32(p->dt, o->pv + at * p->es, T * D, vf);
		w.k = kf, w.v = vf;
	}
	for (int64_t s0 = 0; s0 < p->S; s0 += chunk)
		group_pass(p, o, &w, b, kh, T, past, s0, s0 + chunk < p->S ? s0 + chunk : p->S);
}

typedef struct gqa_job {
	const gqa_plan *p;
	const gqa_out *o;
	int64_t chunk, per_slot;
	float *scratch;
} gqa_job;

static void gqa_piece(void *arg, int64_t lo, int64_t hi, int slot)
{
	const gqa_job *j = arg;
	for (int64_t i = lo; i < hi; i++)
		gqa_group(j->p, j->o, i, j->chunk, j->scratch + (size_t)slot * (size_t)j->per_slot);
}

om_kind gqa_run(om_ctx *c, const gqa_plan *p, const char *what)
{
	const int64_t n = p->B * p->Hkv, chunk = gqa_chunk(p);
	/* a slot's scratch starts at a multiple of 16 floats: its doubles align (gqa_group) */
	const int64_t per = (gqa_scratch_floats(p, chunk) + 15) / 16 * 16;
	const int slots = om_par_slots(c->threads, n, 1);
	const size_t cache = (size_t)(p->B * p->Hkv * p->Tp) * p->crowb;
	om_tensor *pk = c->nout > 1 ? c->out[1] : NULL, *pv = c->nout > 2 ? c->out[2] : NULL;
	const size_t own = (pk ? 0 : cache) + (pv ? 0 : cache); /* absent presents: scratch */
	const size_t bytes = sizeof(float) * (size_t)per * (size_t)slots + own;
	float *scratch;
	const om_kind rc = om_ctx_scratch(c, bytes, what, (void **)&scratch);
	if (rc)
		return rc;
	char *mine = (char *)(scratch + (size_t)per * (size_t)slots);
	gqa_out o = {c->out[0]->data, pk ? pk->data : mine, pv ? pv->data : mine + (pk ? 0 : cache),
		     p->qk_mode ? c->out[3]->data : NULL};
	gqa_job j = {p, &o, chunk, per, scratch};
	om_par_for_slots(c->threads, n, 1, gqa_piece, &j);
	om_ctx_scratch_done(c, scratch);
	return OM_OK;
}
