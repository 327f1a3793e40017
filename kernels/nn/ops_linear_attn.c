/* ops_linear_attn.c — LinearAttention (opset 27): the recurrent linear attention of packed
 * (B, T, H*D) query, key and value with a (B, H_kv, d_k, d_v) state, token by token:
 * "linear" S += k v^T; "gated" S = exp(g) S + k v^T; "delta" and "gated_delta" write
 * beta (v - S^T k) instead of v (S decayed first); o = scale q^T S. Query heads share their
 * KV head's state in groups of q_num_heads / kv_num_heads. The state is kept in double;
 * outputs are stored in the query's type, present_state in past_state's (else the query's). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detmath.h"
#include "numrun.h"
#include "op.h"

enum { LA_GATED = 1, LA_DELTA = 2 }; /* the update rule's bits */

typedef struct la_plan {
	int64_t B, T, Hq, Hkv, dk, dv;
	int rule;
	bool decay_per_head; /* decay (B, T, H_kv) rather than (B, T, H_kv * d_k) */
	int64_t beta_last;   /* H_kv or 1 */
	double scale;
	const om_tensor *q, *k, *v, *past, *decay, *beta;
	int32_t sdt;         /* present_state's type */
} la_plan;

static om_kind la_bad(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", what);
}

static bool la_type(int32_t dt)
{
	return dt == OM_FLOAT || dt == OM_FLOAT16 || dt == OM_BFLOAT16;
}

/* decay and beta: present exactly as the rule needs them, (B, T, *) of the query's type */
static om_kind la_gates(om_ctx *c, la_plan *p)
{
	const om_tensor *g = p->decay, *bt = p->beta;
	if (!!(p->rule & LA_GATED) != !!g)
		return la_bad(c, (p->rule & LA_GATED) ? "the gated rules need decay"
						      : "decay is only for the gated rules");
	if (!!(p->rule & LA_DELTA) != !!bt)
		return la_bad(c, (p->rule & LA_DELTA) ? "the delta rules need beta"
						      : "beta is only for the delta rules");
	if (g) {
		if (g->dtype != p->q->dtype || g->rank != 3 || g->dims[0] != p->B ||
		    g->dims[1] != p->T)
			return la_bad(c, "decay must be (B, T, *) of the query's type");
		if (g->dims[2] == p->Hkv)
			p->decay_per_head = true;
		else if (g->dims[2] != p->Hkv * p->dk)
			return la_bad(c, "decay's last extent must be kv_num_heads or "
					 "kv_num_heads * d_k");
	}
	if (bt) {
		if (bt->dtype != p->q->dtype || bt->rank != 3 || bt->dims[0] != p->B ||
		    bt->dims[1] != p->T)
			return la_bad(c, "beta must be (B, T, *) of the query's type");
		if (bt->dims[2] != p->Hkv && bt->dims[2] != 1)
			return la_bad(c, "beta's last extent must be kv_num_heads or 1");
		p->beta_last = bt->dims[2];
	}
	return OM_OK;
}

static om_kind la_plan_make(om_ctx *c, la_plan *p)
{
	static const char *const rules[] = {"linear", "gated", "delta", "gated_delta", NULL};
	memset(p, 0, sizeof *p);
	p->q = om_ctx_in(c, 0), p->k = om_ctx_in(c, 1), p->v = om_ctx_in(c, 2);
	p->past = om_ctx_in(c, 3), p->decay = om_ctx_in(c, 4), p->beta = om_ctx_in(c, 5);
	const om_tensor *q = p->q, *k = p->k, *v = p->v;
	if (!q || !k || !v)
		return la_bad(c, "needs query, key and value");
	if (!la_type(q->dtype) || k->dtype != q->dtype || v->dtype != q->dtype)
		return la_bad(c, "query, key and value must be one of float, float16, bfloat16");
	if (q->rank != 3 || k->rank != 3 || v->rank != 3)
		return la_bad(c, "query, key and value must be 3-D (B, T, H*D)");
	const int r = om_attr_choice(c->node, "update_rule", rules, 3);
	if (r < 0)
		return la_bad(c, "update_rule must be linear, gated, delta or gated_delta");
	p->rule = r; /* linear 0, gated 1, delta 2, gated_delta 3: the bits */
	p->Hq = om_attr_int(c->node, "q_num_heads", 0);
	p->Hkv = om_attr_int(c->node, "kv_num_heads", 0);
	if (p->Hq <= 0 || p->Hkv <= 0 || p->Hq % p->Hkv)
		return la_bad(c, "q_num_heads must be a positive multiple of kv_num_heads > 0");
	p->B = q->dims[0], p->T = q->dims[1];
	if (k->dims[0] != p->B || v->dims[0] != p->B || k->dims[1] != p->T ||
	    v->dims[1] != p->T)
		return la_bad(c, "query, key and value differ in batch or length");
	if (q->dims[2] % p->Hq || v->dims[2] % p->Hkv)
		return la_bad(c, "hidden sizes do not split into the heads");
	p->dk = q->dims[2] / p->Hq, p->dv = v->dims[2] / p->Hkv;
	if (k->dims[2] != p->Hkv * p->dk)
		return la_bad(c, "key's hidden size must be kv_num_heads * d_k");
	const om_tensor *ps = p->past;
	p->sdt = q->dtype;
	if (ps) {
		if (!la_type(ps->dtype) || ps->rank != 4 || ps->dims[0] != p->B ||
		    ps->dims[1] != p->Hkv || ps->dims[2] != p->dk || ps->dims[3] != p->dv)
			return la_bad(c, "past_state must be (B, kv_num_heads, d_k, d_v) of a float "
					 "type");
		p->sdt = ps->dtype;
	}
	if (p->dv && p->Hq > INT64_MAX / p->dv) /* Hq is free when query's hidden size is 0 */
		return la_bad(c, "the output is too large");
	const int64_t sd[4] = {p->B, p->Hkv, p->dk, p->dv};
	const int64_t od[3] = {p->B, p->T, p->Hq * p->dv};
	if (om_shape_numel(4, sd) < 0 || om_shape_numel(3, od) < 0)
		return la_bad(c, "the state or output is too large");
	const double s = om_attr_float(c->node, "scale", 0.0f);
	p->scale = s != 0 ? s : 1 / sqrt((double)p->dk); /* d_k 0: no term to scale */
	return la_gates(c, p);
}

static om_kind la_infer(om_ctx *c)
{
	la_plan p;
	om_kind rc = la_plan_make(c, &p);
	if (rc)
		return rc;
	const int64_t od[3] = {p.B, p.T, p.Hq * p.dv};
	const int64_t sd[4] = {p.B, p.Hkv, p.dk, p.dv};
	om_set_shape(c->out[0], p.q->dtype, 3, od);
	if (c->nout > 1 && c->out[1])
		om_set_shape(c->out[1], p.sdt, 4, sd);
	return OM_OK;
}

/* one KV head (b, h) over all T tokens: S (dk x dv, double) updated in place; the scratch
 * holds a query/key row (dk), a value row (dv), the decay row (dk) and an output row (dv) */
static void la_head(const la_plan *p, int64_t b, int64_t h, double *S, double *w,
		    void *out)
{
	const int64_t dk = p->dk, dv = p->dv, G = p->Hq / p->Hkv;
	const int32_t dt = p->q->dtype;
	const size_t es = om_dtype_size(dt);
	double *kr = w, *vr = kr + dk, *gr = vr + dv, *o = gr + dk, *qr = o + dv;
	for (int64_t t = 0; t < p->T; t++) {
		const int64_t bt = b * p->T + t;
		om_load_f64(dt, (const char *)p->k->data + (size_t)((bt * p->Hkv + h) * dk) * es, 1,
			    dk, kr);
		om_load_f64(dt, (const char *)p->v->data + (size_t)((bt * p->Hkv + h) * dv) * es, 1,
			    dv, vr);
		if (p->rule & LA_GATED) {
			if (p->decay_per_head) {
				double g = 0;
				om_load_f64(dt, (const char *)p->decay->data +
						    (size_t)(bt * p->Hkv + h) * es, 1, 1, &g);
				for (int64_t d = 0; d < dk; d++)
					gr[d] = g;
			} else {
				om_load_f64(dt, (const char *)p->decay->data +
						    (size_t)((bt * p->Hkv + h) * dk) * es, 1, dk, gr);
			}
			for (int64_t d = 0; d < dk; d++) {
				const double e = om_det_exp(gr[d]);
				for (int64_t m = 0; m < dv; m++)
					S[d * dv + m] *= e;
			}
		}
		if (p->rule & LA_DELTA) {
			double beta = 0;
			const int64_t bi = bt * p->beta_last + (p->beta_last == 1 ? 0 : h);
			om_load_f64(dt, (const char *)p->beta->data + (size_t)bi * es, 1, 1, &beta);
			for (int64_t m = 0; m < dv; m++)
				o[m] = 0;
			for (int64_t d = 0; d < dk; d++)
				for (int64_t m = 0; m < dv; m++)
					o[m] += S[d * dv + m] * kr[d];
			for (int64_t m = 0; m < dv; m++)
				vr[m] = beta * (vr[m] - o[m]);
		}
		for (int64_t d = 0; d < dk; d++)
			for (int64_t m = 0; m < dv; m++)
				S[d * dv + m] += kr[d] * vr[m];
		for (int64_t gi = 0; gi < G; gi++) {
			const int64_t hq = h * G + gi;
			om_load_f64(dt, (const char *)p->q->data + (size_t)((bt * p->Hq + hq) * dk) * es,
				    1, dk, qr);
			for (int64_t m = 0; m < dv; m++)
				o[m] = 0;
			for (int64_t d = 0; d < dk; d++)
				for (int64_t m = 0; m < dv; m++)
					o[m] += qr[d] * S[d * dv + m];
			for (int64_t m = 0; m < dv; m++)
				o[m] = dk ? p->scale * o[m] : 0;
			om_store_f64(dt, (char *)out + (size_t)((bt * p->Hq + hq) * dv) * es, 1, o, dv);
		}
	}
}

static om_kind la_kernel(om_ctx *c)
{
	la_plan p;
	om_kind rc = la_plan_make(c, &p);
	if (rc)
		return rc;
	const size_t ns = (size_t)(p.dk * p.dv), nw = (size_t)(3 * p.dk + 2 * p.dv);
	if (om_ctx_reserve(c, (ns + nw + 1) * sizeof(double), "the recurrent state"))
		return c->st->kind;
	double *S = malloc((ns + nw + 1) * sizeof(double));
	if (!S)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	om_tensor *pres = c->nout > 1 ? c->out[1] : NULL;
	const size_t ses = om_dtype_size(p.sdt);
	for (int64_t b = 0; b < p.B; b++)
		for (int64_t h = 0; h < p.Hkv; h++) {
			const size_t at = (size_t)((b * p.Hkv + h) * (int64_t)ns);
			if (p.past)
				om_load_f64(p.sdt, (const char *)p.past->data + at * ses, 1,
					    (int64_t)ns, S);
			else
				for (size_t i = 0; i < ns; i++)
					S[i] = 0;
			la_head(&p, b, h, S, S + ns, c->out[0]->data);
			if (pres)
				om_store_f64(p.sdt, (char *)pres->data + at * ses, 1, S, (int64_t)ns);
		}
	free(S);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_LinearAttention_27[] = {{"chunk_size", OM_ATTR_INT, 0},
	{"kv_num_heads", OM_ATTR_INT, 1}, {"q_num_heads", OM_ATTR_INT, 1},
	{"scale", OM_ATTR_FLOAT, 0}, {"update_rule", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* LinearAttention-27: query key value [past_state] [decay] [beta] -> output present_state */
static const om_sig sig_LinearAttention_27 = {27, 3, 6, 2, 2, 0x38, 0x0, 0x3f, 0x3, 0x3f, 0x3,
	attrs_LinearAttention_27, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"LinearAttention", "", 27, la_infer, la_kernel, OM_OP_EXACT, &sig_LinearAttention_27,
	 OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_linear_attn = OM_TABLE(rows);
