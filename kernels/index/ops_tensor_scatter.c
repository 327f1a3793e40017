/* ops_tensor_scatter.c — TensorScatter (opset 24, the KV-cache update): present_cache =
 * past_cache with update's sequence_length rows written along `axis` (not the batch axis) at
 * write_indices[b] (0 when absent) for every slice of batch b; mode "linear" needs
 * 0 <= index <= max_sequence_length - sequence_length, "circular" wraps each row modulo
 * max_sequence_length (a negative index is an error in both, as in ONNX Runtime 1.30).
 * Moves by element size; in a session output 0 may take over past_cache's block
 * (OM_OP_INPLACE), and then only the update's rows move. */
#include <string.h>

#include "index_util.h"
#include "move.h"
#include "shape_util.h"

enum { TS_PAST, TS_UPDATE, TS_INDICES };

typedef struct ts_plan {
	const om_tensor *past, *upd, *wi;
	int32_t axis;
	bool circular;
	int64_t outer, per_batch; /* slices before the axis; of them, per batch entry */
	int64_t max, seq, inner;  /* cache rows, update rows, elements per row */
} ts_plan;

static om_kind ts_bad(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", what);
}

static om_kind ts_plan_make(om_ctx *c, ts_plan *p)
{
	memset(p, 0, sizeof *p);
	p->past = om_ctx_in(c, TS_PAST), p->upd = om_ctx_in(c, TS_UPDATE);
	p->wi = om_ctx_in(c, TS_INDICES);
	const om_tensor *x = p->past, *u = p->upd;
	if (!x || !u)
		return ts_bad(c, "needs past_cache and update");
	const char *mode = om_attr_string(c->node, "mode", "linear");
	p->circular = !strcmp(mode, "circular");
	if (!p->circular && strcmp(mode, "linear"))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"mode '%s' is neither 'linear' nor 'circular'", mode);
	if (x->rank < 2 || u->rank != x->rank || u->dtype != x->dtype)
		return ts_bad(c, "past_cache (rank >= 2) and update must have one rank and type");
	om_kind rc = om_norm_axis(c, om_attr_int(c->node, "axis", -2), x->rank, &p->axis);
	if (rc)
		return rc;
	if (p->axis == 0)
		return ts_bad(c, "axis cannot be the batch axis 0");
	for (int32_t d = 0; d < x->rank; d++)
		if (d != p->axis && u->dims[d] != x->dims[d])
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"update's dim %d (%lld) differs from past_cache's (%lld)",
					d, (long long)u->dims[d], (long long)x->dims[d]);
	p->max = x->dims[p->axis], p->seq = u->dims[p->axis];
	if (p->seq > p->max)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"update's sequence_length %lld exceeds max_sequence_length %lld",
				(long long)p->seq, (long long)p->max);
	if (p->wi && (p->wi->dtype != OM_INT64 || p->wi->rank != 1 ||
		      p->wi->dims[0] != x->dims[0]))
		return ts_bad(c, "write_indices must be int64 [batch_size]");
	p->outer = 1, p->per_batch = 1, p->inner = 1;
	for (int32_t d = 0; d < p->axis; d++)
		p->outer *= x->dims[d];
	for (int32_t d = 1; d < p->axis; d++)
		p->per_batch *= x->dims[d];
	for (int32_t d = p->axis + 1; d < x->rank; d++)
		p->inner *= x->dims[d];
	return OM_OK;
}

static om_kind ts_infer(om_ctx *c)
{
	ts_plan p;
	const om_kind rc = ts_plan_make(c, &p);
	if (rc)
		return rc;
	om_set_shape(c->out[0], p.past->dtype, p.past->rank, p.past->dims);
	return OM_OK;
}

/* the index batch b writes at: checked against the mode (linear: its rows fit the cache) */
static om_kind ts_index(om_ctx *c, const ts_plan *p, int64_t b, int64_t *at)
{
	const int64_t w = p->wi ? ((const int64_t *)p->wi->data)[b] : 0;
	if (w < 0 || (!p->circular && w > p->max - p->seq))
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"write_indices[%lld] = %lld: %lld rows do not fit %lld (%s mode)",
				(long long)b, (long long)w, (long long)p->seq, (long long)p->max,
				p->circular ? "circular" : "linear");
	*at = p->max ? w % p->max : 0;
	return OM_OK;
}

static om_kind ts_move(om_ctx *c)
{
	ts_plan p;
	om_kind rc = ts_plan_make(c, &p);
	if (rc)
		return rc;
	const size_t size = om_move_size(p.past->dtype);
	unsigned char *dst = c->out[0]->data;
	const unsigned char *src = p.upd->data;
	for (int64_t b = 0, at; b < (p.outer ? p.past->dims[0] : 0); b++)
		if ((rc = ts_index(c, &p, b, &at)))
			return rc;
	if (c->out[0]->data != p.past->data) /* not in place: the past rows first */
		om_move_n(dst, p.past->data, size, om_tensor_numel(p.past));
	const size_t row = size * (size_t)p.inner;
	for (int64_t o = 0; o < p.outer; o++) {
		int64_t at = 0;
		(void)ts_index(c, &p, o / p.per_batch, &at); /* checked above */
		unsigned char *slice = dst + (size_t)o * (size_t)p.max * row;
		const unsigned char *from = src + (size_t)o * (size_t)p.seq * row;
		/* linear: at + seq <= max, one run; circular: up to the end, then from row 0 */
		const int64_t first = p.seq < p.max - at ? p.seq : p.max - at;
		om_move_n(slice + (size_t)at * row, from, row, first);
		om_move_n(slice, from + (size_t)first * row, row, p.seq - first);
	}
	return OM_OK;
}

static om_kind ts_kernel(om_ctx *c)
{
	return om_move_run(c, ts_move);
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_TensorScatter_24[] = {{"axis", OM_ATTR_INT, 0},
	{"mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* TensorScatter-24: past_cache update [write_indices] -> present_cache */
static const om_sig sig_TensorScatter_24 = {24, 2, 3, 1, 1, 0x4, 0x0, 0x3, 0x1, 0x3, 0x1,
	attrs_TensorScatter_24, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"TensorScatter", "", 24, ts_infer, ts_kernel, OM_OP_EXACT | OM_OP_INPLACE,
	 &sig_TensorScatter_24, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_tensor_scatter = OM_TABLE(rows);
