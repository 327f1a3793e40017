/* ops_mha.c — com.microsoft MultiHeadAttention (ONNX Runtime's docs/ContribOperators.md and
 * its CPU kernel): query [B, S, D]; key/value [B, L, D] / [B, L, Dv] with an optional bias
 * [D + D + Dv], packed KV [B, L, N, 2, H] (value absent, no bias), or key/value already
 * [B, N, L, H] (a cross attention's cached keys: no bias, no past); past_key/past_value
 * [B, N, P, H] -> present_key/present_value [B, N, P + L, H]; key_padding_mask (int32: [B] end
 * positions, the first B of [3B + 2], [B, T], [B, S, T]), attention_bias [B or 1, N or 1, S, T],
 * num_heads, scale, unidirectional, mask_filter_value. float, float16 and bfloat16. Packed QKV,
 * past_sequence_length (a shared buffer), cache_indirection and the qk output are Unsupported.
 * The row reads the node into mha.h's plan; mha_core.c computes. */
#include <math.h>
#include <string.h>

#include "mha.h"

enum { MH_Q, MH_K, MH_V, MH_BIAS, MH_MASK, MH_ABIAS, MH_PK, MH_PV, MH_PAST_LEN, MH_CACHE_IND };

static om_kind mh_bad(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", what);
}

static om_kind mh_unsupported(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "%s", what);
}

static bool dims_are(const om_tensor *t, int32_t rank, const int64_t *dims)
{
	return t->rank == rank && !memcmp(t->dims, dims, sizeof(int64_t) * (size_t)rank);
}

/* key and value [B, L, N * H]: rows of a [B, L, width] tensor, their parts of the bias */
static om_kind mh_kv_3d(om_ctx *c, mha_plan *p, const om_tensor *k, const om_tensor *v)
{
	if (v->rank != 3 || k->dims[0] != p->B || v->dims[0] != p->B || v->dims[1] != k->dims[1] ||
	    k->dims[2] != p->N * p->Dk || v->dims[2] % p->N)
		return mh_bad(c, "key must be [batch, L, hidden] and value [batch, L, v_hidden]");
	p->L = k->dims[1], p->Dv = v->dims[2] / p->N;
	p->k = (mha_src){k->data, p->dt, p->L * k->dims[2], k->dims[2], p->Dk, NULL};
	p->v = (mha_src){v->data, p->dt, p->L * v->dims[2], v->dims[2], p->Dv, NULL};
	return OM_OK;
}

/* key/value of the node's layouts, bias split over query, key and value */
static om_kind mh_kv(om_ctx *c, mha_plan *p)
{
	const om_tensor *k = om_ctx_in(c, MH_K), *v = om_ctx_in(c, MH_V);
	const om_tensor *bias = om_ctx_in(c, MH_BIAS);
	if (!k)
		return mh_unsupported(c, "packed QKV (no key) is not supported");
	if (k->dtype != p->dt || (v && v->dtype != p->dt))
		return mh_bad(c, "key and value must have query's type");
	om_kind rc = OM_OK;
	if (k->rank == 3 && v) {
		rc = mh_kv_3d(c, p, k, v);
	} else if (k->rank == 5 && !v) {
		const int64_t L = k->dims[1], row = p->N * 2 * p->Dk;
		if (!dims_are(k, 5, (int64_t[]){p->B, L, p->N, 2, p->Dk}) || bias)
			return mh_bad(c, "packed KV must be [batch, L, num_heads, 2, head_size], "
					 "without bias");
		p->L = L, p->Dv = p->Dk;
		p->k = (mha_src){k->data, p->dt, L * row, row, 2 * p->Dk, NULL};
		p->v = (mha_src){(const char *)k->data + (size_t)p->Dk * p->es, p->dt, L * row, row,
				 2 * p->Dk, NULL};
	} else if (k->rank == 4 && v && v->rank == 4) {
		const int64_t L = k->dims[2];
		if (!dims_are(k, 4, (int64_t[]){p->B, p->N, L, p->Dk}) || v->dims[0] != p->B ||
		    v->dims[1] != p->N || v->dims[2] != L || bias)
			return mh_bad(c, "key and value [batch, num_heads, L, head_size] take "
					 "no bias");
		p->L = L, p->Dv = v->dims[3];
		p->k = (mha_src){k->data, p->dt, p->N * L * p->Dk, p->Dk, L * p->Dk, NULL};
		p->v = (mha_src){v->data, p->dt, p->N * L * p->Dv, p->Dv, L * p->Dv, NULL};
	} else {
		return mh_bad(c, "key and value: 3-D, 4-D together, or packed KV (5-D) alone");
	}
	if (rc || !bias)
		return rc;
	const int64_t D = p->N * p->Dk;
	if (bias->dtype != p->dt || !dims_are(bias, 1, (int64_t[]){2 * D + p->N * p->Dv}))
		return mh_bad(c, "bias must be [hidden + hidden + v_hidden] of query's type");
	const char *b = bias->data;
	p->q.bias = b, p->k.bias = b + (size_t)D * p->es, p->v.bias = b + (size_t)(2 * D) * p->es;
	return OM_OK;
}

/* past_key/past_value [B, N, P, H] (3-D key and value only) */
static om_kind mh_past(om_ctx *c, mha_plan *p)
{
	const om_tensor *pk = om_ctx_in(c, MH_PK), *pv = om_ctx_in(c, MH_PV);
	if (!pk != !pv)
		return mh_bad(c, "past_key and past_value go together");
	if (om_ctx_in(c, MH_PAST_LEN) || om_ctx_in(c, MH_CACHE_IND))
		return mh_unsupported(c, "past_sequence_length (a shared KV buffer) and "
					 "cache_indirection are not supported");
	if (!pk)
		return OM_OK;
	if (om_ctx_in(c, MH_K)->rank == 4)
		return mh_bad(c, "past_key and past_value must be absent when key is 4-D");
	p->P = pk->rank == 4 ? pk->dims[2] : -1;
	if (pk->dtype != p->dt || pv->dtype != p->dt ||
	    !dims_are(pk, 4, (int64_t[]){p->B, p->N, p->P, p->Dk}) ||
	    !dims_are(pv, 4, (int64_t[]){p->B, p->N, p->P, p->Dv}))
		return mh_bad(c, "past_key and past_value must be [batch, num_heads, past, "
				 "head_size]");
	p->pk = (mha_src){pk->data, p->dt, p->N * p->P * p->Dk, p->Dk, p->P * p->Dk, NULL};
	p->pv = (mha_src){pv->data, p->dt, p->N * p->P * p->Dv, p->Dv, p->P * p->Dv, NULL};
	return OM_OK;
}

/* key_padding_mask and attention_bias against the plan's sizes */
static om_kind mh_masks(om_ctx *c, mha_plan *p)
{
	const om_tensor *m = om_ctx_in(c, MH_MASK), *ab = om_ctx_in(c, MH_ABIAS);
	if (m) {
		p->mask = m->dtype == OM_INT32 ? om_mha_mask_kind(p, m) : -1;
		if (p->mask < 0)
			return mh_bad(c, "key_padding_mask must be int32 [batch], [3 batch + 2], "
					 "[batch, total] or [batch, sequence, total]");
		p->mask_data = m->data;
	}
	if (ab && !om_mha_attention_bias(p, ab))
		return mh_bad(c, "attention_bias must be [batch or 1, num_heads or 1, sequence, "
				 "total] of query's type");
	return OM_OK;
}

static om_kind mh_plan_make(om_ctx *c, mha_plan *p)
{
	memset(p, 0, sizeof *p);
	const om_tensor *q = c->in[MH_Q];
	if (q->dtype != OM_FLOAT && q->dtype != OM_FLOAT16 && q->dtype != OM_BFLOAT16)
		return mh_bad(c, "query must be float, float16 or bfloat16");
	if (q->rank != 3)
		return mh_unsupported(c, "query must be [batch, sequence, hidden] (packed QKV is "
					 "not supported)");
	p->dt = q->dtype, p->es = om_dtype_size(q->dtype), p->exact = c->exact;
	p->N = om_attr_int(c->node, "num_heads", 0);
	if (p->N <= 0 || q->dims[2] % p->N)
		return mh_bad(c, "num_heads must be positive and divide query's hidden size");
	p->B = q->dims[0], p->S = q->dims[1], p->Dk = q->dims[2] / p->N;
	p->q = (mha_src){q->data, p->dt, p->S * q->dims[2], q->dims[2], p->Dk, NULL};
	om_kind rc = mh_kv(c, p);
	if (!rc)
		rc = mh_past(c, p);
	if (rc)
		return rc;
	p->T = p->P + p->L;
	if ((rc = mh_masks(c, p)))
		return rc;
	const int64_t uni = om_attr_int(c->node, "unidirectional", 0);
	if (uni != 0 && uni != 1)
		return mh_bad(c, "unidirectional must be 0 or 1");
	p->causal = uni && p->S > 1; /* ONNX Runtime: a causal mask only over several queries */
	const float scale = om_attr_float(c->node, "scale", 0);
	p->scale = scale != 0 ? scale : 1.0f / sqrtf((float)p->Dk);
	p->filter = om_attr_float(c->node, "mask_filter_value", -10000.0f);
	if (c->nout > 3 && c->out[3])
		return mh_unsupported(c, "the qk output is not supported");
	if (om_shape_numel(4, (int64_t[]){p->B, p->N, p->S + p->T, p->Dk + p->Dv + p->T}) < 0)
		return mh_bad(c, "sizes overflow");
	return OM_OK;
}

static om_kind mh_infer(om_ctx *c)
{
	mha_plan p;
	const om_kind rc = mh_plan_make(c, &p);
	if (rc)
		return rc;
	om_set_shape(c->out[0], p.dt, 3, (int64_t[]){p.B, p.S, p.N * p.Dv});
	if (c->nout > 1 && c->out[1])
		om_set_shape(c->out[1], p.dt, 4, (int64_t[]){p.B, p.N, p.T, p.Dk});
	if (c->nout > 2 && c->out[2])
		om_set_shape(c->out[2], p.dt, 4, (int64_t[]){p.B, p.N, p.T, p.Dv});
	return OM_OK;
}

static om_kind mh_kernel(om_ctx *c)
{
	mha_plan p;
	const om_kind rc = mh_plan_make(c, &p);
	if (rc)
		return rc;
	om_tensor *pk = c->nout > 1 ? c->out[1] : NULL, *pv = c->nout > 2 ? c->out[2] : NULL;
	const mha_out o = {c->out[0]->data, pk ? pk->data : NULL, pv ? pv->data : NULL};
	return om_mha_run(c, &p, &o);
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_ms_MultiHeadAttention_1[] = {
	{"mask_filter_value", OM_ATTR_FLOAT, 0}, {"num_heads", OM_ATTR_INT, 1},
	{"scale", OM_ATTR_FLOAT, 0}, {"unidirectional", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* MultiHeadAttention-1: query [key] [value] [bias] [key_padding_mask] [attention_bias]
 * [past_key] [past_value] [past_sequence_length] [cache_indirection]
 * -> output [present_key] [present_value] [qk] */
static const om_sig sig_ms_MultiHeadAttention_1 = {1, 1, 10, 1, 4, 0x3fe, 0xe, 0x0, 0x0, 0x0,
	0x0, attrs_ms_MultiHeadAttention_1, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"MultiHeadAttention", "com.microsoft", 1, mh_infer, mh_kernel, OM_OP_EXACT,
	 &sig_ms_MultiHeadAttention_1, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_mha = OM_TABLE(rows);
