/* ops_rope.c — rotary position embedding: ONNX's RotaryEmbedding (opset 23) and ONNX Runtime's
 * com.microsoft RotaryEmbedding (inputs in another order, position ids required: one offset
 * or one id per token; num_heads optional). Each head row's first rotary_embedding_dim values
 * are rotated in pairs (interleaved: (2i, 2i + 1); else (i, i + rd / 2)) by the cos/sin cache
 * row of the token's position; the rest pass through. Computes in double; stores in X's type. */
#include <stdlib.h>
#include <string.h>

#include "attn_rows.h"
#include "index_util.h"
#include "numrun.h"
#include "op.h"

/* The rows' param: which input order and position ids (ROPE_MS: com.microsoft's) */
enum { ROPE_ONNX = 0, ROPE_MS = 1 };

typedef struct rope_plan {
	int64_t B, S, H, D, rd, C2; /* rd: rotated width; C2: the caches' last extent */
	bool rank3, interleaved;
	const om_tensor *x, *cs, *sn;
	const om_tensor *pos; /* ids [B, S], or NULL: the caches' row is the token's (ONNX) */
	bool offset;          /* pos holds one value: token s takes row pos + s (com.microsoft) */
} rope_plan;

static om_kind rope_bad(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", what);
}

/* heads and head size from X (3-D [B, S, H*D] or 4-D [B, H, S, D]); com.microsoft's 3-D X
 * without num_heads takes its head size from the cache (twice its width) */
static om_kind rope_heads(om_ctx *c, rope_plan *p, bool ms)
{
	const om_tensor *x = p->x;
	p->rank3 = x->rank == 3;
	p->B = x->dims[0];
	p->rd = om_attr_int(c->node, "rotary_embedding_dim", 0);
	if (!p->rank3) {
		p->H = x->dims[1], p->S = x->dims[2], p->D = x->dims[3];
		return OM_OK;
	}
	p->S = x->dims[1];
	p->H = om_attr_int(c->node, "num_heads", 0);
	if (p->H <= 0 && ms && p->rd == 0 && p->cs->rank == 2 && p->cs->dims[1] > 0 &&
	    x->dims[2] % (2 * p->cs->dims[1]) == 0)
		p->H = x->dims[2] / (2 * p->cs->dims[1]);
	if (p->H <= 0 || x->dims[2] % p->H)
		return rope_bad(c, "3-D X needs num_heads dividing its hidden size");
	p->D = x->dims[2] / p->H;
	return OM_OK;
}

/* position ids: ONNX's optional [B, S] (the caches 2-D) or absent (the caches [B, S, *]);
 * com.microsoft's required, one value (an offset) or [B, S], the caches 2-D */
static om_kind rope_positions(om_ctx *c, rope_plan *p, bool ms)
{
	const om_tensor *pos = p->pos, *cs = p->cs;
	if (pos && pos->dtype != OM_INT64 && pos->dtype != OM_INT32)
		return rope_bad(c, "position_ids must be int64");
	if (ms && !pos)
		return rope_bad(c, "com.microsoft RotaryEmbedding needs position_ids");
	p->offset = ms && om_tensor_numel(pos) == 1 && pos->rank <= 1;
	if (pos && !p->offset &&
	    (pos->rank != 2 || pos->dims[0] != p->B || pos->dims[1] != p->S))
		return rope_bad(c, "position_ids must be [batch, sequence]");
	if (pos && cs->rank != 2)
		return rope_bad(c, "with position_ids the caches are 2-D");
	if (!pos && (cs->rank != 3 || cs->dims[0] != p->B || cs->dims[1] != p->S))
		return rope_bad(c, "without position_ids the caches are [batch, sequence, *]");
	return OM_OK;
}

static om_kind rope_plan_make(om_ctx *c, rope_plan *p)
{
	memset(p, 0, sizeof *p);
	const bool ms = c->op->param == ROPE_MS;
	p->x = om_ctx_in(c, 0);
	p->cs = om_ctx_in(c, ms ? 2 : 1), p->sn = om_ctx_in(c, ms ? 3 : 2);
	p->pos = om_ctx_in(c, ms ? 1 : 3);
	const om_tensor *x = p->x, *cs = p->cs, *sn = p->sn;
	if (!x || !cs || !sn || !om_is_float_type(x->dtype) || cs->dtype != x->dtype ||
	    sn->dtype != x->dtype)
		return rope_bad(c, "needs X, cos_cache and sin_cache of one float type");
	if (x->rank != 3 && x->rank != 4)
		return rope_bad(c, "X must be 3-D or 4-D");
	if (cs->rank < 1 || cs->rank != sn->rank ||
	    memcmp(cs->dims, sn->dims, sizeof(int64_t) * (size_t)cs->rank))
		return rope_bad(c, "cos_cache and sin_cache differ in shape");
	om_kind rc = rope_heads(c, p, ms);
	if (!rc)
		rc = rope_positions(c, p, ms);
	if (rc)
		return rc;
	if (p->rd == 0)
		p->rd = p->D;
	if (p->rd < 0 || p->rd > p->D || p->rd % 2)
		return rope_bad(c, "rotary_embedding_dim must be even and at most the head size");
	p->interleaved = om_attr_int(c->node, "interleaved", 0) != 0;
	p->C2 = cs->dims[cs->rank - 1];
	if (p->C2 < p->rd / 2)
		return rope_bad(c, "the caches are narrower than rotary_embedding_dim / 2");
	return OM_OK;
}

static om_kind rope_infer(om_ctx *c)
{
	rope_plan p;
	om_kind rc = rope_plan_make(c, &p);
	if (!rc)
		om_set_shape(c->out[0], p.x->dtype, p.x->rank, p.x->dims);
	return rc;
}

/* the caches' row of token (b, s) */
static int64_t rope_cache_row(const rope_plan *p, int64_t b, int64_t s)
{
	if (!p->pos)
		return b * p->S + s;
	return p->offset ? om_ix_int_at(p->pos, 0) + s : om_ix_int_at(p->pos, b * p->S + s);
}

static om_kind rope_kernel(om_ctx *c)
{
	rope_plan p;
	om_kind rc = rope_plan_make(c, &p);
	if (rc)
		return rc;
	const om_tensor *x = p.x, *cs = p.cs, *sn = p.sn;
	const int64_t rows = p.pos ? cs->dims[0] : p.B * p.S;
	for (int64_t b = 0; p.pos && b < p.B; b++)
		for (int64_t s = 0; s < p.S; s++) {
			const int64_t v = rope_cache_row(&p, b, s);
			if (v < 0 || v >= rows)
				return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
						"position %lld is outside the caches' [0, %lld)",
						(long long)v, (long long)rows);
		}
	double *r = malloc(sizeof(double) * (size_t)(p.D + p.rd + 2));
	if (!r)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	double *cr = r + p.D, *sr = cr + p.rd / 2 + 1;
	const size_t es = om_dtype_size(x->dtype);
	for (int64_t b = 0; b < p.B; b++)
		for (int64_t s = 0; s < p.S; s++) {
			const size_t co = (size_t)(rope_cache_row(&p, b, s) * p.C2) * es;
			om_load_f64(cs->dtype, (const char *)cs->data + co, 1, p.rd / 2, cr);
			om_load_f64(sn->dtype, (const char *)sn->data + co, 1, p.rd / 2, sr);
			for (int64_t h = 0; h < p.H; h++) {
				const int64_t at = p.rank3 ? ((b * p.S + s) * p.H + h) * p.D
							   : ((b * p.H + h) * p.S + s) * p.D;
				om_load_f64(x->dtype, (const char *)x->data + (size_t)at * es, 1,
					    p.D, r);
				om_attn_rotate(r, cr, sr, p.rd, p.interleaved);
				om_store_f64(x->dtype, (char *)c->out[0]->data + (size_t)at * es, 1,
					     r, p.D);
			}
		}
	free(r);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_ms_RotaryEmbedding_1[] = {{"interleaved", OM_ATTR_INT, 0},
	{"is_packed_batching", OM_ATTR_INT, 0}, {"num_heads", OM_ATTR_INT, 0},
	{"rotary_embedding_dim", OM_ATTR_INT, 0}, {"scale", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* RotaryEmbedding-1: input position_ids cos_cache sin_cache -> output */
static const om_sig sig_ms_RotaryEmbedding_1 = {1, 4, 4, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_ms_RotaryEmbedding_1, NULL};
static const om_sig_attr attrs_RotaryEmbedding_23[] = {{"interleaved", OM_ATTR_INT, 0},
	{"num_heads", OM_ATTR_INT, 0}, {"rotary_embedding_dim", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* RotaryEmbedding-23: X cos_cache sin_cache [position_ids] -> Y */
static const om_sig sig_RotaryEmbedding_23 = {23, 3, 4, 1, 1, 0x8, 0x0, 0x7, 0x1, 0x7, 0x1,
	attrs_RotaryEmbedding_23, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"RotaryEmbedding", "", 23, rope_infer, rope_kernel, OM_OP_EXACT, &sig_RotaryEmbedding_23,
	 OM_OPC_NONE, NULL, ROPE_ONNX, NULL},
	{"RotaryEmbedding", "com.microsoft", 1, rope_infer, rope_kernel, OM_OP_EXACT,
	 &sig_ms_RotaryEmbedding_1, OM_OPC_NONE, NULL, ROPE_MS, NULL},
};

const om_op_table om_ops_rope = OM_TABLE(rows);
