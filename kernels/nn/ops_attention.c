/* ops_attention.c — Attention (opset 23/24: 3-D or 4-D inputs, grouped KV heads, bool/float
 * mask, causal, past/present key and value, scale, softcap, qk_matmul_output_mode,
 * nonpad_kv_seqlen). Computes in double: both products through om_dgemm, exp from detmath.h;
 * stores in the input's type. In fast mode, a decoder's attention (3-D, no mask) runs on
 * GroupQueryAttention's float kernel (att_via_gqa). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn_rows.h"
#include "gemm.h"
#include "gqa.h"
#include "index_util.h"
#include "numrun.h"
#include "op.h"

/* ---- Attention ------------------------------------------------------------------------- */

typedef struct att_plan {
	int64_t B, Hq, Hkv, Sq, Skv, P, T, D, Dv;
	bool rank3, causal;
	const om_tensor *mask, *pk, *pv, *nonpad;
	int64_t mstride[4], mlast; /* mask strides over [B, Hq, Sq, T]; its last extent */
	double scale, softcap;
	int64_t mode;
} att_plan;

static om_kind att_bad(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", what);
}

/* heads and sizes of query, key and value */
static om_kind att_heads(om_ctx *c, att_plan *p)
{
	const om_tensor *q = c->in[0], *k = c->in[1], *v = c->in[2];
	p->B = q->dims[0];
	if (k->dims[0] != p->B || v->dims[0] != p->B)
		return att_bad(c, "query, key and value differ in batch");
	if (p->rank3) {
		p->Hq = om_attr_int(c->node, "q_num_heads", 0);
		p->Hkv = om_attr_int(c->node, "kv_num_heads", 0);
		if (p->Hq <= 0 || p->Hkv <= 0)
			return att_bad(c, "3-D inputs need q_num_heads and kv_num_heads > 0");
		if (q->dims[2] % p->Hq || k->dims[2] % p->Hkv || v->dims[2] % p->Hkv)
			return att_bad(c, "hidden sizes do not split into the heads");
		p->Sq = q->dims[1], p->Skv = k->dims[1];
		p->D = q->dims[2] / p->Hq, p->Dv = v->dims[2] / p->Hkv;
		if (k->dims[2] / p->Hkv != p->D || v->dims[1] != p->Skv)
			return att_bad(c, "key and value do not match the query");
	} else {
		p->Hq = q->dims[1], p->Hkv = k->dims[1];
		p->Sq = q->dims[2], p->Skv = k->dims[2];
		p->D = q->dims[3], p->Dv = v->dims[3];
		if (k->dims[3] != p->D || v->dims[1] != p->Hkv || v->dims[2] != p->Skv)
			return att_bad(c, "key and value do not match the query");
	}
	if (p->Hkv <= 0 || p->Hq % p->Hkv)
		return att_bad(c, "q_num_heads must be a multiple of kv_num_heads");
	return OM_OK;
}

/* past key/value [B, Hkv, P, D|Dv] */
static om_kind att_past(om_ctx *c, att_plan *p)
{
	p->pk = om_ctx_in(c, 4), p->pv = om_ctx_in(c, 5);
	p->P = 0;
	if (!p->pk && !p->pv)
		return OM_OK;
	if (!p->pk || !p->pv || p->pk->rank != 4 || p->pv->rank != 4)
		return att_bad(c, "past_key and past_value go together, 4-D");
	const int64_t *a = p->pk->dims, *b = p->pv->dims;
	if (a[0] != p->B || a[1] != p->Hkv || a[3] != p->D || b[0] != p->B || b[1] != p->Hkv ||
	    b[2] != a[2] || b[3] != p->Dv || p->pk->dtype != c->in[0]->dtype ||
	    p->pv->dtype != c->in[0]->dtype)
		return att_bad(c, "past_key/past_value shapes do not match key/value");
	p->P = a[2];
	return OM_OK;
}

/* mask broadcast to [B, Hq, Sq, T]; its last axis may be shorter (the rest is masked) */
static om_kind att_mask(om_ctx *c, att_plan *p)
{
	const om_tensor *m = p->mask = om_ctx_in(c, 3);
	for (int i = 0; i < 4; i++)
		p->mstride[i] = 0;
	p->mlast = p->T;
	if (!m)
		return OM_OK;
	if (m->dtype != OM_BOOL && m->dtype != c->in[0]->dtype)
		return att_bad(c, "attn_mask must be bool or the query's type");
	if (m->rank < 1 || m->rank > 4)
		return att_bad(c, "attn_mask must have rank 1 to 4");
	const int64_t want[4] = {p->B, p->Hq, p->Sq, p->T};
	int64_t stride = 1;
	for (int32_t i = m->rank - 1; i >= 0; i--) {
		const int a = 4 - m->rank + i;
		const int64_t d = m->dims[i];
		if (a == 3) {
			if (d > p->T)
				return att_bad(c, "attn_mask is longer than the total sequence");
			p->mlast = d;
		} else if (d != 1 && d != want[a]) {
			return att_bad(c, "attn_mask does not broadcast to the scores");
		}
		p->mstride[a] = d == 1 && a != 3 ? 0 : stride;
		stride *= d;
	}
	return OM_OK;
}

static om_kind att_plan_make(om_ctx *c, att_plan *p)
{
	memset(p, 0, sizeof *p);
	const om_tensor *q = om_ctx_in(c, 0), *k = om_ctx_in(c, 1), *v = om_ctx_in(c, 2);
	if (!q || !k || !v)
		return att_bad(c, "needs query, key and value");
	if (!om_is_float_type(q->dtype) || k->dtype != q->dtype || v->dtype != q->dtype)
		return att_bad(c, "query, key and value must be one float type");
	if ((q->rank != 3 && q->rank != 4) || k->rank != q->rank || v->rank != q->rank)
		return att_bad(c, "query, key and value must all be 3-D or all 4-D");
	p->rank3 = q->rank == 3;
	om_kind rc = att_heads(c, p);
	if (!rc)
		rc = att_past(c, p);
	if (rc)
		return rc;
	p->T = p->P + p->Skv;
	if ((rc = att_mask(c, p)))
		return rc;
	p->nonpad = om_ctx_in(c, 6);
	if (p->nonpad && (p->nonpad->dtype != OM_INT64 || p->nonpad->rank != 1 ||
			  p->nonpad->dims[0] != p->B))
		return att_bad(c, "nonpad_kv_seqlen must be int64 [batch]");
	p->causal = om_attr_int(c->node, "is_causal", 0) != 0;
	p->scale = om_node_attr(c->node, "scale") ? om_attr_float(c->node, "scale", 1)
						   : 1 / sqrt((double)p->D);
	p->softcap = om_attr_float(c->node, "softcap", 0);
	p->mode = om_attr_int(c->node, "qk_matmul_output_mode", 0);
	if (p->mode < 0 || p->mode > 3)
		return att_bad(c, "qk_matmul_output_mode must be 0 to 3");
	if (om_shape_numel(4, (int64_t[]){p->B, p->Hq, p->Sq, p->T}) < 0 ||
	    om_shape_numel(4, (int64_t[]){p->B, p->Hq, p->T, p->D > p->Dv ? p->D : p->Dv}) < 0)
		return att_bad(c, "sizes overflow");
	return OM_OK;
}

static om_kind attention_infer(om_ctx *c)
{
	att_plan p;
	om_kind rc = att_plan_make(c, &p);
	if (rc)
		return rc;
	const int32_t dt = c->in[0]->dtype;
	if (p.rank3)
		om_set_shape(c->out[0], dt, 3, (int64_t[]){p.B, p.Sq, p.Hq * p.Dv});
	else
		om_set_shape(c->out[0], dt, 4, (int64_t[]){p.B, p.Hq, p.Sq, p.Dv});
	if (c->nout > 1 && c->out[1])
		om_set_shape(c->out[1], dt, 4, (int64_t[]){p.B, p.Hkv, p.T, p.D});
	if (c->nout > 2 && c->out[2])
		om_set_shape(c->out[2], dt, 4, (int64_t[]){p.B, p.Hkv, p.T, p.Dv});
	if (c->nout > 3 && c->out[3])
		om_set_shape(c->out[3], dt, 4, (int64_t[]){p.B, p.Hq, p.Sq, p.T});
	return OM_OK;
}

/* dst [B, H, S, E] (heads first) from a 3-D [B, S, H*E] or 4-D [B, H, S, E] tensor, placed at
 * sequence offset `at` of a total length `len` */
static void att_load_heads(const om_tensor *t, bool rank3, int64_t B, int64_t H, int64_t S,
			   int64_t E, double *dst, int64_t at, int64_t len)
{
	const size_t es = om_dtype_size(t->dtype);
	for (int64_t b = 0; b < B; b++)
		for (int64_t h = 0; h < H; h++)
			for (int64_t s = 0; s < S; s++) {
				const int64_t src = rank3 ? ((b * S + s) * H + h) * E
							  : ((b * H + h) * S + s) * E;
				om_load_f64(t->dtype, (const char *)t->data + (size_t)src * es, 1,
					    E, dst + ((b * H + h) * len + at + s) * E);
			}
}

/* the additive bias at (b, h, i, j): mask, causal frontier, padding */
static double att_bias(const att_plan *p, const double *mask, const int64_t *nonpad,
		       int64_t b, int64_t h, int64_t i, int64_t j)
{
	double v = 0;
	if (p->mask) {
		if (j >= p->mlast)
			return -INFINITY;
		const double m = mask[b * p->mstride[0] + h * p->mstride[1] + i * p->mstride[2] +
				      j * p->mstride[3]];
		v = p->mask->dtype == OM_BOOL ? (m != 0 ? 0 : -INFINITY) : m;
	}
	if (p->causal) {
		const int64_t off = p->pk ? p->P : nonpad ? nonpad[b] - p->Sq : 0;
		if (j > i + off)
			return -INFINITY;
	}
	if (nonpad && j >= nonpad[b])
		return -INFINITY;
	return v;
}

typedef struct att_bufs {
	double *q, *k, *v, *s, *qk, *y, *mask;
	int64_t *nonpad;
} att_bufs;

/* scores, bias, softmax and the product with V for head (b, h) */
static void att_head(const om_ctx *c, const att_plan *p, const att_bufs *w, int64_t b,
		     int64_t h)
{
	const int64_t kh = h / (p->Hq / p->Hkv), T = p->T;
	const double *q = w->q + (b * p->Hq + h) * p->Sq * p->D;
	const double *k = w->k + (b * p->Hkv + kh) * T * p->D;
	const double *v = w->v + (b * p->Hkv + kh) * T * p->Dv;
	double *s = w->s, *qk = w->qk + (b * p->Hq + h) * p->Sq * T;
	double *y = w->y + (b * p->Hq + h) * p->Sq * p->Dv;
	om_dgemm(c->exact, false, true, p->Sq, T, p->D, p->scale, q, p->D, k, p->D, 0, s, T);
	for (int64_t i = 0; i < p->Sq; i++) {
		double *r = s + i * T, *o = qk + i * T;
		for (int64_t j = 0; j < T; j++) {
			double x = r[j];
			if (p->mode == 0)
				o[j] = x;
			if (p->softcap > 0)
				x = p->softcap * om_attn_tanh(x / p->softcap);
			if (p->mode == 1)
				o[j] = x;
			x += att_bias(p, w->mask, p->nonpad ? w->nonpad : NULL, b, h, i, j);
			if (p->mode == 2)
				o[j] = x;
			r[j] = x;
		}
		om_attn_softmax(r, T, NULL);
		if (p->mode == 3)
			memcpy(o, r, sizeof(double) * (size_t)T);
	}
	om_dgemm(c->exact, false, false, p->Sq, p->Dv, T, 1, s, T, v, p->Dv, 0, y, p->Dv);
}

static void att_store(const att_plan *p, const att_bufs *w, om_tensor *const *out, int nout)
{
	om_tensor *y = out[0];
	const size_t es = om_dtype_size(y->dtype);
	for (int64_t b = 0; b < p->B; b++)
		for (int64_t h = 0; h < p->Hq; h++)
			for (int64_t s = 0; s < p->Sq; s++) {
				const int64_t at = p->rank3 ? ((b * p->Sq + s) * p->Hq + h) * p->Dv
							    : ((b * p->Hq + h) * p->Sq + s) * p->Dv;
				om_store_f64(y->dtype, (char *)y->data + (size_t)at * es, 1,
					     w->y + ((b * p->Hq + h) * p->Sq + s) * p->Dv, p->Dv);
			}
	const double *src[] = {NULL, w->k, w->v, w->qk};
	const int64_t n[] = {0, p->B * p->Hkv * p->T * p->D, p->B * p->Hkv * p->T * p->Dv,
			     p->B * p->Hq * p->Sq * p->T};
	for (int i = 1; i < 4 && i < nout; i++)
		if (out[i])
			om_store_f64(out[i]->dtype, out[i]->data, 1, src[i], n[i]);
}

/* Fast mode, 3-D inputs, keys as many as queries (a decoder's prompt or step, past or not),
 * no mask, padding lengths or scores output, Dv = D: GroupQueryAttention's float kernel
 * (gqa_group.c) without rotary, past_key/past_value BNSH as its caches, each batch's length
 * P + S as its seqlens_k (the causal frontier j <= i + P alike). Writes the outputs and
 * returns true with *rc set; false (nothing written) otherwise. */
static bool att_via_gqa(om_ctx *c, const att_plan *a, om_kind *rc)
{
	const om_tensor *q = c->in[0];
	if (c->exact || !a->rank3 || a->Skv != a->Sq || a->mask || a->nonpad || a->Dv != a->D ||
	    (c->nout > 3 && c->out[3]) || a->B > 4096 || a->T > INT32_MAX || a->Sq < 1 ||
	    (q->dtype != OM_FLOAT && q->dtype != OM_FLOAT16 && q->dtype != OM_BFLOAT16))
		return false;
	int32_t lens[4096];
	for (int64_t b = 0; b < a->B; b++)
		lens[b] = (int32_t)(a->T - 1);
	const om_tensor seqlens = {.dtype = OM_INT32, .rank = 1, .dims = {a->B}, .data = lens,
				   .nbytes = sizeof(int32_t) * (size_t)a->B};
	const size_t es = om_dtype_size(q->dtype);
	gqa_plan p = {.B = a->B, .S = a->Sq, .Hq = a->Hq, .Hkv = a->Hkv, .G = a->Hq / a->Hkv,
		      .D = a->D, .P = a->P, .total = a->T, .Tp = a->T, .dt = q->dtype, .es = es,
		      .causal = a->causal, .qk_mode = 0, .scale = (float)a->scale,
		      .softcap = (float)a->softcap, .pk = a->pk, .pv = a->pv, .seqlens = &seqlens,
		      .cdt = q->dtype, .crow = a->D, .crowb = (size_t)a->D * es};
	p.q = (gqa_src){q->data, a->Hq * a->D, 0};
	p.k = (gqa_src){c->in[1]->data, a->Hkv * a->D, 0};
	p.v = (gqa_src){c->in[2]->data, a->Hkv * a->D, 0};
	*rc = gqa_run(c, &p, "Attention's scratch");
	return true;
}

static om_kind attention_kernel(om_ctx *c)
{
	att_plan p;
	om_kind rc = att_plan_make(c, &p);
	if (rc || att_via_gqa(c, &p, &rc))
		return rc;
	const int64_t nq = p.B * p.Hq * p.Sq * p.D, nk = p.B * p.Hkv * p.T * p.D;
	const int64_t nv = p.B * p.Hkv * p.T * p.Dv, ns = p.Sq * p.T;
	const int64_t nqk = p.B * p.Hq * p.Sq * p.T, ny = p.B * p.Hq * p.Sq * p.Dv;
	const int64_t nm = p.mask ? om_tensor_numel(p.mask) : 0;
	att_bufs w = {0};
	/* one buffer: the doubles, then the B lengths */
	const size_t nd = (size_t)(nq + nk + nv + ns + nqk + ny + nm);
	if ((rc = om_ctx_scratch(c, sizeof(double) * nd + sizeof(int64_t) * (size_t)p.B,
				 "Attention's heads and scores", (void **)&w.q)))
		return rc;
	w.nonpad = (int64_t *)(w.q + nd);
	w.k = w.q + nq, w.v = w.k + nk, w.s = w.v + nv, w.qk = w.s + ns, w.y = w.qk + nqk;
	w.mask = w.y + ny;
	att_load_heads(c->in[0], p.rank3, p.B, p.Hq, p.Sq, p.D, w.q, 0, p.Sq);
	if (p.pk) {
		att_load_heads(p.pk, false, p.B, p.Hkv, p.P, p.D, w.k, 0, p.T);
		att_load_heads(p.pv, false, p.B, p.Hkv, p.P, p.Dv, w.v, 0, p.T);
	}
	att_load_heads(c->in[1], p.rank3, p.B, p.Hkv, p.Skv, p.D, w.k, p.P, p.T);
	att_load_heads(c->in[2], p.rank3, p.B, p.Hkv, p.Skv, p.Dv, w.v, p.P, p.T);
	if (p.mask)
		om_load_f64(p.mask->dtype, p.mask->data, 1, nm, w.mask);
	if (p.nonpad)
		memcpy(w.nonpad, p.nonpad->data, sizeof(int64_t) * (size_t)p.B);
	for (int64_t b = 0; b < p.B; b++)
		for (int64_t h = 0; h < p.Hq; h++)
			att_head(c, &p, &w, b, h);
	att_store(&p, &w, c->out, c->nout);
	om_ctx_scratch_done(c, w.q);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_Attention_23_v25[] = {{"is_causal", OM_ATTR_INT, 0},
	{"kv_num_heads", OM_ATTR_INT, 0}, {"left_window_size", OM_ATTR_INT, 0},
	{"q_num_heads", OM_ATTR_INT, 0}, {"qk_matmul_output_mode", OM_ATTR_INT, 0},
	{"right_window_size", OM_ATTR_INT, 0}, {"scale", OM_ATTR_FLOAT, 0},
	{"softcap", OM_ATTR_FLOAT, 0}, {"softmax_precision", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Attention-25: Q K V [attn_mask] [past_key] [past_value] [nonpad_kv_seqlen]
 * -> Y [present_key] [present_value] [qk_matmul_output] */
static const om_sig sig_Attention_23_v25 = {25, 3, 7, 1, 4, 0x78, 0xe, 0x3f, 0xf, 0x3f, 0xf,
	attrs_Attention_23_v25, NULL};
static const om_sig_attr attrs_Attention_23_v24[] = {{"is_causal", OM_ATTR_INT, 0},
	{"kv_num_heads", OM_ATTR_INT, 0}, {"q_num_heads", OM_ATTR_INT, 0},
	{"qk_matmul_output_mode", OM_ATTR_INT, 0}, {"scale", OM_ATTR_FLOAT, 0},
	{"softcap", OM_ATTR_FLOAT, 0}, {"softmax_precision", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Attention-24: Q K V [attn_mask] [past_key] [past_value] [nonpad_kv_seqlen]
 * -> Y [present_key] [present_value] [qk_matmul_output] */
static const om_sig sig_Attention_23_v24 = {24, 3, 7, 1, 4, 0x78, 0xe, 0x3f, 0xf, 0x3f, 0xf,
	attrs_Attention_23_v24, &sig_Attention_23_v25};
static const om_sig_attr attrs_Attention_23[] = {{"is_causal", OM_ATTR_INT, 0},
	{"kv_num_heads", OM_ATTR_INT, 0}, {"q_num_heads", OM_ATTR_INT, 0},
	{"qk_matmul_output_mode", OM_ATTR_INT, 0}, {"scale", OM_ATTR_FLOAT, 0},
	{"softcap", OM_ATTR_FLOAT, 0}, {"softmax_precision", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Attention-23: Q K V [attn_mask] [past_key] [past_value]
 * -> Y [present_key] [present_value] [qk_matmul_output] */
static const om_sig sig_Attention_23 = {23, 3, 6, 1, 4, 0x38, 0xe, 0x3f, 0xf, 0x3f, 0xf,
	attrs_Attention_23, &sig_Attention_23_v24};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"Attention", "", 23, attention_infer, attention_kernel, OM_OP_EXACT, &sig_Attention_23,
	 OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_attention = OM_TABLE(rows);
