/* ops_gqa.c — com.microsoft GroupQueryAttention (ONNX Runtime's docs/ContribOperators.md):
 * query/key/value [B, S, heads * D] or packed QKV, past key/value BNSH, seqlens_k and
 * total_sequence_length, rotary (cos/sin caches, position_ids), local window, softcap,
 * attention_bias, head_sink, smooth_softmax, causal, qk_output, quantized caches (int8 or int4,
 * per tensor or per channel: gqa_kvq.c). Present rows: the past rows a batch keeps, then its
 * new tokens (ONNX Runtime's layout when past and present are separate buffers);
 * sliding_window_cache and the Q/K norms are Unsupported. The row reads the node (this file);
 * gqa_group.c computes, a (batch, kv head) group per piece. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gqa.h"
#include "numrun.h"

enum { GQ_Q, GQ_K, GQ_V, GQ_PK, GQ_PV, GQ_SEQLENS, GQ_TOTAL, GQ_COS, GQ_SIN, GQ_POS, GQ_BIAS,
       GQ_SINK, GQ_KSCALE, GQ_VSCALE, GQ_FIRST_UNSUPPORTED };

static om_kind gq_bad(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", what);
}

static om_kind gq_unsupported(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "%s", what);
}

static bool gq_dims(const om_tensor *t, int32_t rank, const int64_t *dims)
{
	return t->rank == rank && !memcmp(t->dims, dims, sizeof(int64_t) * (size_t)rank);
}

/* heads, head size and where query, key and value's heads are */
static om_kind gq_heads(om_ctx *c, gqa_plan *p)
{
	const om_tensor *q = c->in[GQ_Q], *k = om_ctx_in(c, GQ_K), *v = om_ctx_in(c, GQ_V);
	p->Hq = om_attr_int(c->node, "num_heads", 0);
	p->Hkv = om_attr_int(c->node, "kv_num_heads", 0);
	if (p->Hq <= 0 || p->Hkv <= 0 || p->Hq % p->Hkv)
		return gq_bad(c, "num_heads must be a positive multiple of kv_num_heads > 0");
	if (q->rank != 3)
		return gq_bad(c, "query must be [batch, sequence, hidden]");
	p->G = p->Hq / p->Hkv, p->B = q->dims[0], p->S = q->dims[1], p->packed = !k && !v;
	const int64_t w = q->dims[2];
	if (p->packed) {
		if (w % (p->Hq + 2 * p->Hkv))
			return gq_bad(c, "packed QKV must be (num_heads + 2 kv_num_heads) D wide");
		p->D = w / (p->Hq + 2 * p->Hkv);
		p->q = (gqa_src){q->data, w, 0};
		p->k = (gqa_src){q->data, w, p->Hq * p->D};
		p->v = (gqa_src){q->data, w, (p->Hq + p->Hkv) * p->D};
		return OM_OK;
	}
	if (!k || !v || w % p->Hq)
		return gq_bad(c, "key and value go together; query's width splits into num_heads");
	p->D = w / p->Hq;
	const int64_t kv[3] = {p->B, p->S, p->Hkv * p->D};
	if (k->dtype != p->dt || v->dtype != p->dt || !gq_dims(k, 3, kv) || !gq_dims(v, 3, kv))
		return gq_bad(c, "key and value must be [batch, sequence, kv_num_heads * D]");
	p->q = (gqa_src){q->data, w, 0};
	p->k = (gqa_src){k->data, kv[2], 0};
	p->v = (gqa_src){v->data, kv[2], 0};
	return OM_OK;
}

/* past key/value [B, Hkv, P, D], seqlens_k [B] and total_sequence_length (int32) */
static om_kind gq_cache(om_ctx *c, gqa_plan *p)
{
	p->pk = om_ctx_in(c, GQ_PK), p->pv = om_ctx_in(c, GQ_PV);
	if (!p->pk != !p->pv)
		return gq_bad(c, "past_key and past_value go together");
	if (p->pk && (p->pk->dtype != p->cdt || p->pv->dtype != p->cdt))
		return gq_bad(c, p->qbits ? "a quantized past is int8 (8 bits) or uint8 (4 bits)"
					  : "past_key and past_value are of the query's type");
	p->P = p->pk ? p->pk->dims[2] : 0;
	const int64_t pd[4] = {p->B, p->Hkv, p->P, p->crow};
	if (p->pk && (!gq_dims(p->pk, 4, pd) || !gq_dims(p->pv, 4, pd)))
		return gq_bad(c, "past_key and past_value must be [batch, kv_num_heads, past, "
				 "D (or (D + 1) / 2 for int4 codes)]");
	const om_tensor *sl = om_ctx_in(c, GQ_SEQLENS), *tot = om_ctx_in(c, GQ_TOTAL);
	if (!sl || !tot || sl->dtype != OM_INT32 || tot->dtype != OM_INT32 ||
	    !gq_dims(sl, 1, &p->B) || om_tensor_numel(tot) != 1)
		return gq_bad(c, "seqlens_k: int32 [batch]; total_sequence_length: one int32");
	p->seqlens = sl;
	if (!om_has_value(tot))
		return OM_NEED_VALUE;
	p->total = *(const int32_t *)tot->data;
	if (p->total < 1)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"total_sequence_length %lld is not positive",
				(long long)p->total);
	p->Tp = p->total > p->P ? p->total : p->P;
	p->first = p->S > 1 && p->S == p->total;
	return OM_OK;
}

/* cos/sin caches [rows, rd / 2] and position ids [B, S] (int64) when do_rotary */
static om_kind gq_rotary(om_ctx *c, gqa_plan *p)
{
	p->interleaved = om_attr_int(c->node, "rotary_interleaved", 0) == 1;
	if (om_attr_int(c->node, "do_rotary", 0) != 1) /* ONNX Runtime: 1 is on, others off */
		return OM_OK;
	const om_tensor *cs = p->cs = om_ctx_in(c, GQ_COS), *sn = p->sn = om_ctx_in(c, GQ_SIN);
	if (!cs || !sn || cs->dtype != p->dt || sn->dtype != p->dt || cs->rank != 2 ||
	    !gq_dims(sn, 2, cs->dims) || cs->dims[1] < 1 || 2 * cs->dims[1] > p->D)
		return gq_bad(c, "do_rotary needs cos_cache and sin_cache [rows, <= D / 2]");
	p->rd = 2 * cs->dims[1], p->crows = cs->dims[0];
	const om_tensor *pos = p->pos = om_ctx_in(c, GQ_POS);
	if (pos && (pos->dtype != OM_INT64 || !gq_dims(pos, 2, (int64_t[]){p->B, p->S})))
		return gq_bad(c, "position_ids must be int64 [batch, sequence]");
	return OM_OK;
}

/* attention_bias [B or 1, Hq or 1, S, total], head_sink [Hq] */
static om_kind gq_extras(om_ctx *c, gqa_plan *p)
{
	const om_tensor *bias = p->bias = om_ctx_in(c, GQ_BIAS);
	if (bias) {
		if (bias->dtype != p->dt || bias->rank != 4 ||
		    (bias->dims[0] != 1 && bias->dims[0] != p->B) ||
		    (bias->dims[1] != 1 && bias->dims[1] != p->Hq) || bias->dims[2] != p->S ||
		    (p->total && bias->dims[3] != p->total))
			return gq_bad(c, "attention_bias must be [batch or 1, num_heads or 1, "
					 "sequence, total_sequence_length]");
		p->bias_h = bias->dims[1] == 1 ? 0 : p->S * bias->dims[3];
		p->bias_b = bias->dims[0] == 1 ? 0 : bias->dims[1] * p->S * bias->dims[3];
	}
	const om_tensor *sink = p->sink = om_ctx_in(c, GQ_SINK);
	if (sink && (sink->dtype != p->dt || !gq_dims(sink, 1, &p->Hq)))
		return gq_bad(c, "head_sink must be [num_heads]");
	for (int i = GQ_FIRST_UNSUPPORTED; i < c->nin; i++)
		if (c->in[i]) /* ONNX Runtime 1.30's CPU kernel refuses them too */
			return gq_unsupported(c, "the Q/K norm weights (q_norm_weight, "
						 "k_norm_weight)");
	return OM_OK;
}

/* k_scale and v_scale: float, one value (PER_TENSOR) or kv_num_heads * D (PER_CHANNEL) */
static om_kind gq_scales(om_ctx *c, gqa_plan *p)
{
	const om_tensor *ks = om_ctx_in(c, GQ_KSCALE), *vs = om_ctx_in(c, GQ_VSCALE);
	if (!p->qbits)
		return OM_OK;
	const int64_t n = p->sc_head ? p->Hkv * p->D : 1;
	if (!ks || !vs || ks->dtype != OM_FLOAT || vs->dtype != OM_FLOAT ||
	    om_tensor_numel(ks) != n || om_tensor_numel(vs) != n)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"a quantized cache needs float k_scale and v_scale of %lld values",
				(long long)n);
	p->ksc = ks->data, p->vsc = vs->data;
	return OM_OK;
}

/* k_quant_type = v_quant_type (NONE, PER_TENSOR or PER_CHANNEL), kv_cache_bit_width 8 or 4 */
static om_kind gq_quant(om_ctx *c, gqa_plan *p)
{
	static const char *const kinds[] = {"NONE", "PER_TENSOR", "PER_CHANNEL"};
	const char *kq = om_attr_string(c->node, "k_quant_type", "NONE");
	const char *vq = om_attr_string(c->node, "v_quant_type", "NONE");
	int kind = -1;
	for (int i = 0; i < 3; i++)
		kind = strcmp(kq, kinds[i]) ? kind : i;
	if (kind < 0 || strcmp(vq, kq))
		return gq_unsupported(c, "k_quant_type and v_quant_type other than one of NONE, "
					 "PER_TENSOR and PER_CHANNEL for both");
	p->cdt = p->dt, p->crow = p->D, p->crowb = (size_t)p->D * p->es;
	if (!kind)
		return OM_OK;
	p->qbits = om_attr_int(c->node, "kv_cache_bit_width", 0);
	if (p->qbits != 8 && p->qbits != 4)
		return gq_bad(c, "a quantized cache needs kv_cache_bit_width 8 or 4");
	p->sc_head = kind == 2 ? p->D : 0;
	p->cdt = p->qbits == 8 ? OM_INT8 : OM_UINT8;
	p->crow = p->qbits == 8 ? p->D : (p->D + 1) / 2;
	p->crowb = (size_t)p->crow;
	return OM_OK;
}

static om_kind gq_attrs(om_ctx *c, gqa_plan *p)
{
	const int64_t causal = om_attr_int(c->node, "causal", 1);
	p->window = om_attr_int(c->node, "local_window_size", -1);
	p->window = p->window > 0 ? p->window : 0;
	if ((causal != 0 && causal != 1) || (!causal && p->window))
		return gq_bad(c, "causal is 0 or 1; a local window needs causal");
	p->causal = causal;
	p->qk_mode = om_attr_int(c->node, "qk_output", 0);
	if (p->qk_mode < 0 || p->qk_mode > 2)
		return gq_bad(c, "qk_output must be 0, 1 or 2");
	if (om_attr_int(c->node, "sliding_window_cache", 0))
		return gq_unsupported(c, "sliding_window_cache");
	const float scale = om_attr_float(c->node, "scale", 0);
	p->scale = scale != 0 ? scale : 1.0f / sqrtf((float)p->D);
	p->softcap = om_attr_float(c->node, "softcap", 0);
	p->smooth = om_attr_int(c->node, "smooth_softmax", 0) == 1; /* ONNX Runtime's test */
	return OM_OK;
}

static om_kind gq_plan_make(om_ctx *c, gqa_plan *p)
{
	memset(p, 0, sizeof *p);
	const om_tensor *q = om_ctx_in(c, GQ_Q);
	if (!q || (q->dtype != OM_FLOAT && q->dtype != OM_FLOAT16 && q->dtype != OM_BFLOAT16))
		return gq_bad(c, "query must be float, float16 or bfloat16");
	p->dt = q->dtype, p->es = om_dtype_size(q->dtype), p->exact = c->exact;
	om_kind rc = gq_heads(c, p);
	if (!rc)
		rc = gq_attrs(c, p);
	if (!rc)
		rc = gq_quant(c, p);
	if (!rc)
		rc = gq_scales(c, p);
	if (!rc)
		rc = gq_rotary(c, p);
	if (!rc)
		rc = gq_cache(c, p);
	const om_kind need = rc == OM_NEED_VALUE ? rc : OM_OK;
	if (!rc || need)
		rc = gq_extras(c, p);
	if (!rc && om_shape_numel(4, (int64_t[]){p->B, p->Hq, p->S, p->Tp + p->D}) < 0)
		return gq_bad(c, "sizes overflow");
	return rc ? rc : need;
}

static om_kind gq_infer(om_ctx *c)
{
	gqa_plan p;
	const om_kind rc = gq_plan_make(c, &p);
	if (rc && rc != OM_NEED_VALUE)
		return rc;
	const int64_t T = rc ? -1 : p.Tp, tot = rc ? -1 : p.total;
	om_set_shape(c->out[0], p.dt, 3, (int64_t[]){p.B, p.S, p.Hq * p.D});
	for (int i = 1; i < 3 && i < c->nout; i++)
		if (c->out[i])
			om_set_shape(c->out[i], p.cdt, 4, (int64_t[]){p.B, p.Hkv, T, p.crow});
	if (c->nout > 3 && c->out[3])
		om_set_shape(c->out[3], p.dt, 4, (int64_t[]){p.B, p.Hq, p.S, tot});
	return rc;
}

/* the values the shapes do not settle: each batch's length, its past, the rotary positions */
static om_kind gq_check_values(om_ctx *c, const gqa_plan *p)
{
	for (int64_t b = 0; b < p->B; b++) {
		const int64_t T = gqa_total(p, b), past = gqa_past(p, b);
		if (T < 1 || T > p->total)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"seqlens_k[%lld] = %lld is outside [0, %lld)", (long long)b,
					(long long)T - 1, (long long)p->total);
		if (past < 0 || past > p->P)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"batch %lld: %lld tokens with a past of %lld of %lld rows",
					(long long)b, (long long)p->S, (long long)past,
					(long long)p->P);
		for (int64_t s = 0; p->rd && s < p->S; s++) {
			const int64_t at = gqa_position(p, b, s);
			if (at < 0 || at >= p->crows)
				return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
						"position %lld is outside the caches' %lld rows",
						(long long)at, (long long)p->crows);
		}
	}
	if (p->qk_mode && (c->nout < 4 || !c->out[3]))
		return gq_bad(c, "qk_output needs the output_qk output");
	return OM_OK;
}

static om_kind gq_kernel(om_ctx *c)
{
	gqa_plan p;
	om_kind rc = gq_plan_make(c, &p);
	if (rc == OM_NEED_VALUE)
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "total_sequence_length unknown");
	if (rc || (rc = gq_check_values(c, &p)))
		return rc;
	return gqa_run(c, &p, "GroupQueryAttention's scratch");
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_ms_GroupQueryAttention_1[] = {{"causal", OM_ATTR_INT, 0},
	{"do_rotary", OM_ATTR_INT, 0}, {"k_quant_type", OM_ATTR_STRING, 0},
	{"kv_cache_bit_width", OM_ATTR_INT, 0}, {"kv_num_heads", OM_ATTR_INT, 1},
	{"local_window_size", OM_ATTR_INT, 0}, {"num_heads", OM_ATTR_INT, 1},
	{"qk_norm_epsilon", OM_ATTR_FLOAT, 0}, {"qk_output", OM_ATTR_INT, 0},
	{"rotary_interleaved", OM_ATTR_INT, 0}, {"scale", OM_ATTR_FLOAT, 0},
	{"sliding_window_cache", OM_ATTR_INT, 0}, {"smooth_softmax", OM_ATTR_INT, 0},
	{"softcap", OM_ATTR_FLOAT, 0}, {"v_quant_type", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* GroupQueryAttention-1: query [key] [value] [past_key] [past_value] seqlens_k
 * total_sequence_length [cos_cache] [sin_cache] [position_ids] [attention_bias] [head_sink]
 * [k_scale] [v_scale] [q_norm_weight] [k_norm_weight]
 * -> output [present_key] [present_value] [output_qk] */
static const om_sig sig_ms_GroupQueryAttention_1 = {1, 7, 16, 1, 4, 0xff9e, 0xe, 0x0, 0x0, 0x0,
	0x0, attrs_ms_GroupQueryAttention_1, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"GroupQueryAttention", "com.microsoft", 1, gq_infer, gq_kernel, OM_OP_EXACT,
	 &sig_ms_GroupQueryAttention_1, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_gqa = OM_TABLE(rows);
