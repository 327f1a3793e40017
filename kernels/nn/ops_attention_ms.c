/* ops_attention_ms.c — com.microsoft Attention and QAttention (ONNX Runtime's
 * docs/ContribOperators.md and CPU kernels), BERT-style self attention with the input
 * projection: input [B, S, Hin] times weights [Hin, D + D + Dv] (qkv_hidden_sizes, or three
 * equal parts) plus bias, split into query, key and value, then mha_core.c's attention with
 * mask_index (int32: [B] end positions, [2B] end and start positions, the first B of [3B + 2],
 * [B, T], [B, S, T]), past [2, B, N, P, H] -> present [2, B, N, P + S, H], attention_bias,
 * unidirectional, scale, mask_filter_value. Attention takes float, float16 and bfloat16 (the
 * product in float, its result rounded to the type); QAttention takes 8-bit input and weights
 * with their scales and zero points (one, or one per column for the weights): the integer sums
 * exact (om_igemm_run; in fast mode a constant int8 weight packed once, om_igemm_pack), then float(sum) * (input_scale * weight_scale[j]) + bias[j], a float
 * result. do_rotary, past_present_share_buffer (past_sequence_length) and 4-D masks are
 * Unsupported, as in ONNX Runtime's CPU kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn_rows.h"
#include "f32_array.h"
#include "gemm.h"
#include "gemm_int.h"
#include "igemm_packed.h"
#include "mha.h"
#include "qparam.h"

/* the two rows (om_op.param), and where each has its inputs (-1: none) */
enum { AM_FLOAT = 0, AM_QUANT = 1 };
typedef struct am_slots {
	int bias, mask, past, abias, past_len, in_scale, w_scale, in_zp, w_zp;
} am_slots;
static const am_slots AM_SLOTS[2] = {{2, 3, 4, 5, 6, -1, -1, -1, -1},
				     {2, 5, 8, -1, -1, 3, 4, 6, 7}};

static om_kind am_bad(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", what);
}

static om_kind am_unsupported(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "%s", what);
}

static bool is8(int32_t t)
{
	return t == OM_INT8 || t == OM_UINT8;
}

/* the projection's geometry: Hin, D (query and key) and Dv, the element types */
typedef struct am_geom {
	int64_t Hin, D, Dv, W; /* W = D + D + Dv: the projection's columns */
} am_geom;

static om_kind am_types(om_ctx *c, const am_slots *sl, mha_plan *p)
{
	const om_tensor *x = c->in[0], *w = c->in[1], *bias = om_ctx_in(c, sl->bias);
	if (c->op->param == AM_FLOAT) {
		if ((x->dtype != OM_FLOAT && x->dtype != OM_FLOAT16 && x->dtype != OM_BFLOAT16) ||
		    w->dtype != x->dtype || (bias && bias->dtype != x->dtype))
			return am_bad(c, "input, weights and bias of one type: float, float16 "
					 "or bfloat16");
		p->dt = x->dtype;
		return OM_OK;
	}
	if (!is8(x->dtype) || !is8(w->dtype) || !bias || bias->dtype != OM_FLOAT)
		return am_bad(c, "input and weight 8-bit, bias float");
	p->dt = OM_FLOAT;
	return OM_OK;
}

/* Hin, D, Dv from weights [Hin, W] and qkv_hidden_sizes; B, S, N and the head sizes */
static om_kind am_geometry(om_ctx *c, const am_slots *sl, mha_plan *p, am_geom *g)
{
	const om_tensor *x = c->in[0], *w = c->in[1], *bias = om_ctx_in(c, sl->bias);
	if (x->rank != 3 || w->rank != 2 || w->dims[0] != x->dims[2])
		return am_bad(c, "input must be [batch, sequence, input_hidden] and weights "
				 "[input_hidden, columns]");
	g->Hin = w->dims[0], g->W = w->dims[1];
	int64_t n = 0;
	const int64_t *hs = c->op->param == AM_FLOAT ?
			    om_attr_ints(c->node, "qkv_hidden_sizes", &n) : NULL;
	if (hs && (n != 3 || hs[0] != hs[1] || hs[0] <= 0 || hs[2] <= 0 ||
		   hs[0] + hs[1] + hs[2] != g->W))
		return am_bad(c, "qkv_hidden_sizes must be 3 positive sizes, query's and key's "
				 "equal, summing to the weights' columns");
	g->D = hs ? hs[0] : g->W / 3, g->Dv = hs ? hs[2] : g->W / 3;
	p->N = om_attr_int(c->node, "num_heads", 0);
	if (p->N <= 0 || (!hs && g->W % 3) || g->D % p->N || g->Dv % p->N)
		return am_bad(c, "num_heads must divide the hidden sizes (weights of 3 equal "
				 "parts without qkv_hidden_sizes)");
	if (bias && !(bias->rank == 1 && bias->dims[0] == g->W))
		return am_bad(c, "bias must be [weights' columns]");
	p->B = x->dims[0], p->S = x->dims[1], p->L = p->S;
	p->Dk = g->D / p->N, p->Dv = g->Dv / p->N;
	return OM_OK;
}

/* past [2, B, N, P, H]: its key half and value half */
static om_kind am_past(om_ctx *c, const am_slots *sl, mha_plan *p)
{
	const om_tensor *past = om_ctx_in(c, sl->past);
	if (!past)
		return OM_OK;
	if (p->Dk != p->Dv)
		return am_bad(c, "a past needs query, key and value of one hidden size");
	p->P = past->rank == 5 ? past->dims[3] : -1;
	if (past->dtype != p->dt ||
	    !(past->rank == 5 && past->dims[0] == 2 && past->dims[1] == p->B &&
	      past->dims[2] == p->N && past->dims[4] == p->Dk))
		return am_bad(c, "past must be [2, batch, num_heads, past, head_size]");
	const int64_t half = p->B * p->N * p->P * p->Dk;
	p->pk = (mha_src){past->data, p->dt, p->N * p->P * p->Dk, p->Dk, p->P * p->Dk, NULL};
	p->pv = p->pk;
	p->pv.data += (size_t)half * p->es;
	return OM_OK;
}

static om_kind am_masks(om_ctx *c, const am_slots *sl, mha_plan *p)
{
	const om_tensor *m = om_ctx_in(c, sl->mask), *ab = om_ctx_in(c, sl->abias);
	if (m) {
		if (m->rank == 4)
			return am_unsupported(c, "a 4-D mask_index (ONNX Runtime's CPU kernel has "
						 "none either)");
		p->mask = m->dtype == OM_INT32 ? om_mha_mask_kind(p, m) : -1;
		if (p->mask < 0)
			return am_bad(c, "mask_index must be int32 [batch], [2 batch], [3 batch "
					 "+ 2], [batch, total] or [batch, sequence, total]");
		p->mask_data = m->data;
	}
	if (ab && !om_mha_attention_bias(p, ab))
		return am_bad(c, "attention_bias must be [batch or 1, num_heads or 1, sequence, "
				 "total] of the input's type");
	return OM_OK;
}

/* QAttention's scales and zero points: one value, or one per column for the weight's */
static om_kind am_quant_params(om_ctx *c, const am_slots *sl, const am_geom *g)
{
	const om_tensor *is = c->in[sl->in_scale], *ws = c->in[sl->w_scale];
	const om_tensor *iz = om_ctx_in(c, sl->in_zp), *wz = om_ctx_in(c, sl->w_zp);
	const int64_t nw = om_tensor_numel(ws);
	if (is->dtype != OM_FLOAT || om_tensor_numel(is) != 1 || ws->dtype != OM_FLOAT ||
	    (nw != 1 && !(ws->rank == 1 && nw == g->W)) ||
	    (iz && (iz->dtype != c->in[0]->dtype || om_tensor_numel(iz) != 1)) ||
	    (wz && (wz->dtype != c->in[1]->dtype ||
		    (om_tensor_numel(wz) != 1 && !(wz->rank == 1 && wz->dims[0] == g->W)))))
		return am_bad(c, "scales float, zero points of their tensor's type: one value, "
				 "or the weight's one per column");
	return OM_OK;
}

static om_kind am_plan_make(om_ctx *c, mha_plan *p, am_geom *g)
{
	const am_slots *sl = &AM_SLOTS[c->op->param];
	memset(p, 0, sizeof *p);
	p->exact = c->exact;
	om_kind rc = am_types(c, sl, p);
	if (!rc)
		rc = am_geometry(c, sl, p, g);
	if (rc)
		return rc;
	p->es = om_dtype_size(p->dt);
	if (om_attr_int(c->node, "do_rotary", 0))
		return am_unsupported(c, "do_rotary (ONNX Runtime's CPU kernel has none either)");
	if (om_attr_int(c->node, "past_present_share_buffer", 0) || om_ctx_in(c, sl->past_len))
		return am_unsupported(c, "past_present_share_buffer is not supported");
	if ((rc = am_past(c, sl, p)))
		return rc;
	p->T = p->P + p->L;
	if ((rc = am_masks(c, sl, p)))
		return rc;
	if (c->op->param == AM_QUANT && (rc = am_quant_params(c, sl, g)))
		return rc;
	const int64_t uni = om_attr_int(c->node, "unidirectional", 0);
	if (uni != 0 && uni != 1)
		return am_bad(c, "unidirectional must be 0 or 1");
	p->causal = uni && p->S > 1; /* ONNX Runtime: a causal mask only over several queries */
	const float scale = om_attr_float(c->node, "scale", 0);
	p->scale = scale != 0 ? scale : 1.0f / sqrtf((float)p->Dk);
	p->filter = om_attr_float(c->node, "mask_filter_value", -10000.0f);
	if (om_shape_numel(4, (int64_t[]){p->B * p->S, g->W + g->Hin, p->N, p->T + 1}) < 0)
		return am_bad(c, "sizes overflow");
	return OM_OK;
}

static om_kind am_infer(om_ctx *c)
{
	mha_plan p;
	am_geom g;
	const om_kind rc = am_plan_make(c, &p, &g);
	if (rc)
		return rc;
	om_set_shape(c->out[0], p.dt, 3, (int64_t[]){p.B, p.S, p.N * p.Dv});
	if (c->nout > 1 && c->out[1])
		om_set_shape(c->out[1], p.dt, 5, (int64_t[]){2, p.B, p.N, p.T, p.Dk});
	return OM_OK;
}

/* the int32 sums read and the floats written at the same place */
typedef int32_t am_acc __attribute__((may_alias));

/* QAttention's projection into y [B S, W] (floats): exact int32 sums, then
 * float(sum) * (input_scale * weight_scale[j]) + bias[j] */
static bool am_project_quant(om_ctx *c, const am_geom *g, int64_t M, float *y)
{
	const am_slots *sl = &AM_SLOTS[AM_QUANT];
	const om_tensor *x = c->in[0], *w = c->in[1], *ws = c->in[sl->w_scale];
	const om_tensor *iz = om_ctx_in(c, sl->in_zp), *wz = om_ctx_in(c, sl->w_zp);
	const float *bias = c->in[sl->bias]->data, *wsc = ws->data;
	const float is = *(const float *)c->in[sl->in_scale]->data;
	const int64_t nws = om_tensor_numel(ws), nwz = wz ? om_tensor_numel(wz) : 0;
	const int32_t za = iz ? om_q8_elem(iz, 0) : 0;
	int32_t *zb = malloc(sizeof(int32_t) * (size_t)(nwz + 1));
	float *s = malloc(sizeof(float) * (size_t)(g->W + 1));
	bool ok = zb && s;
	for (int64_t j = 0; ok && j < nwz; j++)
		zb[j] = om_q8_elem(wz, j);
	for (int64_t j = 0; ok && j < g->W; j++)
		s[j] = is * wsc[nws == 1 ? 0 : j];
	if (ok) {
		const om_igemm ig = {.M = M, .N = g->W, .K = g->Hin, .A = x->data, .B = w->data,
				     .lda = g->Hin, .ldb = g->W, .ldc = g->W,
				     .a_signed = x->dtype == OM_INT8,
				     .b_signed = w->dtype == OM_INT8,
				     .za = &za, .nza = 1, .zb = wz ? zb : NULL, .nzb = nwz,
				     .C = (int32_t *)y};
		om_igemm pg = ig;
		pg.zb = NULL, pg.nzb = 0;
		om_igemm_pk *pk = om_igemm_packed_get(c, 1, g->Hin, g->W, g->W, false, zb, nwz);
		ok = (pk && om_igemm_pk_run(pk, &pg, c->threads)) || om_igemm_run(&ig, c->threads);
	}
	const am_acc *acc = (const am_acc *)y;
	for (int64_t i = 0; ok && i < M * g->W; i++) {
		const float v = (float)acc[i] * s[i % g->W]; /* rounded before the sum */
		y[i] = v + bias[i % g->W];
	}
	free(zb), free(s);
	return ok;
}

/* Attention's projection into y [B S, W] (floats): bias + input x weights in float; half
 * types through float copies of the input and weights in cp (M Hin + Hin W floats) */
static void am_project_float(om_ctx *c, const am_geom *g, int64_t M, float *y, float *cp)
{
	const om_tensor *x = c->in[0], *w = c->in[1], *bias = om_ctx_in(c, AM_SLOTS[0].bias);
	const int32_t dt = x->dtype;
	float *xf = NULL, *wf = NULL;
	if (dt != OM_FLOAT) {
		xf = cp;
		wf = cp + M * g->Hin;
		om_to_f32(dt, x->data, M * g->Hin, xf);
		om_to_f32(dt, w->data, g->Hin * g->W, wf);
	}
	for (int64_t i = 0; bias && i < M; i++)
		om_to_f32(dt, bias->data, g->W, y + i * g->W);
	om_sgemm(c->exact, false, false, M, g->W, g->Hin, 1, xf ? xf : x->data, g->Hin,
		 wf ? wf : w->data, g->W, bias ? 1 : 0, y, g->W);
}

static om_kind am_kernel(om_ctx *c)
{
	mha_plan p;
	am_geom g;
	om_kind rc = am_plan_make(c, &p, &g);
	if (rc)
		return rc;
	const int64_t M = p.B * p.S;
	const size_t bytes = sizeof(float) * (size_t)(M * g.W + 1);
	/* half types: float copies of the input and weights too (am_project_float), after y */
	const size_t copies = p.dt == OM_FLOAT || c->op->param == AM_QUANT ? 0 :
			      sizeof(float) * (size_t)(M * g.Hin + g.Hin * g.W);
	float *y;
	if ((rc = om_ctx_scratch(c, bytes + copies, "the projection of query, key and value",
				 (void **)&y)))
		return rc;
	if (c->op->param != AM_QUANT)
		am_project_float(c, &g, M, y, copies ? y + M * g.W + 1 : NULL);
	else if (!am_project_quant(c, &g, M, y)) {
		om_ctx_scratch_done(c, y);
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	}
	/* query, key and value in float, unrounded (ONNX Runtime 1.30 computes half types so) */
	const int64_t W = g.W;
	p.q = (mha_src){(const char *)y, OM_FLOAT, p.S * W, W, p.Dk, NULL};
	p.k = (mha_src){(const char *)(y + g.D), OM_FLOAT, p.S * W, W, p.Dk, NULL};
	p.v = (mha_src){(const char *)(y + 2 * g.D), OM_FLOAT, p.S * W, W, p.Dv, NULL};
	om_tensor *pr = c->nout > 1 ? c->out[1] : NULL;
	const size_t half = (size_t)(p.B * p.N * p.T * p.Dk) * p.es;
	const mha_out o = {c->out[0]->data, pr ? pr->data : NULL, pr ? (char *)pr->data + half :
				 NULL};
	rc = om_mha_run(c, &p, &o);
	om_ctx_scratch_done(c, y);
	return rc;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_ms_Attention_1[] = {{"do_rotary", OM_ATTR_INT, 0},
	{"mask_filter_value", OM_ATTR_FLOAT, 0}, {"num_heads", OM_ATTR_INT, 1},
	{"past_present_share_buffer", OM_ATTR_INT, 0}, {"qkv_hidden_sizes", OM_ATTR_INTS, 0},
	{"rotary_embedding_dim", OM_ATTR_INT, 0}, {"scale", OM_ATTR_FLOAT, 0},
	{"unidirectional", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Attention-1: input weights [bias] [mask_index] [past] [attention_bias]
 * [past_sequence_length] -> output [present] */
static const om_sig sig_ms_Attention_1 = {1, 2, 7, 1, 2, 0x7c, 0x2, 0x0, 0x0, 0x0, 0x0,
	attrs_ms_Attention_1, NULL};
static const om_sig_attr attrs_ms_QAttention_1[] = {{"do_rotary", OM_ATTR_INT, 0},
	{"mask_filter_value", OM_ATTR_FLOAT, 0}, {"num_heads", OM_ATTR_INT, 1},
	{"past_present_share_buffer", OM_ATTR_INT, 0}, {"scale", OM_ATTR_FLOAT, 0},
	{"unidirectional", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* QAttention-1: input weight bias input_scale weight_scale [mask_index] [input_zero_point]
 * [weight_zero_point] [past] -> output [present] */
static const om_sig sig_ms_QAttention_1 = {1, 5, 9, 1, 2, 0x1e0, 0x2, 0x0, 0x0, 0x0, 0x0,
	attrs_ms_QAttention_1, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"Attention", "com.microsoft", 1, am_infer, am_kernel, OM_OP_EXACT, &sig_ms_Attention_1,
	 OM_OPC_NONE, NULL, AM_FLOAT, NULL},
	{"QAttention", "com.microsoft", 1, am_infer, am_kernel, OM_OP_EXACT,
	 &sig_ms_QAttention_1, OM_OPC_NONE, NULL, AM_QUANT, NULL},
};

const om_op_table om_ops_attention_ms = OM_TABLE(rows);
