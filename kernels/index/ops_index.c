/* ops_index.c — Gather, GatherElements, GatherND, and the table of the indexing operators
 * (ScatterND, OneHot, NonZero and TopK live in index_*.c). Seed §1–2. */
#include "index_util.h"
#include "move.h"
#include "shape_util.h"

static int64_t prod(const int64_t *d, int32_t from, int32_t to)
{
	int64_t p = 1;
	for (int32_t i = from; i < to; i++)
		p *= d[i];
	return p;
}

static om_kind need_rank(om_ctx *c, const om_tensor *t, int32_t min, const char *what)
{
	if (t->rank < min)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s must have rank >= %d",
				what, min);
	return OM_OK;
}

/* ---- Gather -------------------------------------------------------------------------------- */

static om_kind gather_infer(om_ctx *c)
{
	const om_tensor *x = c->in[0], *ix = c->in[1];
	om_kind rc;
	int32_t axis;
	if ((rc = need_rank(c, x, 1, "data")) || (rc = om_ix_check_index_type(c, ix, "indices")) ||
	    (rc = om_norm_axis(c, om_attr_int(c->node, "axis", 0), x->rank, &axis)))
		return rc;
	int64_t dims[2 * OM_MAX_RANK];
	int32_t r = 0;
	for (int32_t i = 0; i < axis; i++)
		dims[r++] = x->dims[i];
	for (int32_t i = 0; i < ix->rank; i++)
		dims[r++] = ix->dims[i];
	for (int32_t i = axis + 1; i < x->rank; i++)
		dims[r++] = x->dims[i];
	return om_ix_set_shape(c, c->out[0], x->dtype, r, dims);
}

static om_kind gather_move(om_ctx *c)
{
	const om_tensor *x = c->in[0], *ix = c->in[1];
	int32_t axis;
	om_kind rc = om_norm_axis(c, om_attr_int(c->node, "axis", 0), x->rank, &axis);
	if (rc)
		return rc;
	const int64_t n = x->dims[axis];
	if ((rc = om_ix_check_indices(c, ix, n, "index")))
		return rc;
	const size_t size = om_move_size(x->dtype);
	const int64_t outer = prod(x->dims, 0, axis), inner = prod(x->dims, axis + 1, x->rank);
	const int64_t ni = om_tensor_numel(ix);
	const unsigned char *src = x->data;
	unsigned char *dst = c->out[0]->data;
	const size_t row = (size_t)inner * size;
	/* rows of a table the session keeps out of memory: read from the model file */
	bool by_file = row >= OM_READ_CONST_MIN;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < ni; j++) {
			int64_t k = om_ix_at(ix, j);
			k += k < 0 ? n : 0;
			const size_t at = (size_t)((o * n + k) * inner) * size;
			if (!by_file || !(by_file = om_ctx_read_const(c, 0, at, row, dst)))
				om_move_n(dst, src + at, size, inner);
			dst += row;
		}
	return OM_OK;
}

/* ---- GatherElements ---------------------------------------------------------------------- */

static om_kind gather_elements_infer(om_ctx *c)
{
	const om_tensor *x = c->in[0], *ix = c->in[1];
	om_kind rc;
	int32_t axis;
	if ((rc = need_rank(c, x, 1, "data")) || (rc = om_ix_check_index_type(c, ix, "indices")) ||
	    (rc = om_norm_axis(c, om_attr_int(c->node, "axis", 0), x->rank, &axis)))
		return rc;
	if (ix->rank != x->rank)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"indices have rank %d, data rank %d", ix->rank, x->rank);
	for (int32_t i = 0; i < x->rank; i++)
		if (i != axis && ix->dims[i] > x->dims[i])
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"indices extent %lld exceeds data extent %lld at axis %d",
					(long long)ix->dims[i], (long long)x->dims[i], i);
	return om_ix_set_shape(c, c->out[0], x->dtype, ix->rank, ix->dims);
}

static om_kind gather_elements_move(om_ctx *c)
{
	const om_tensor *x = c->in[0], *ix = c->in[1];
	int32_t axis;
	om_kind rc = om_norm_axis(c, om_attr_int(c->node, "axis", 0), x->rank, &axis);
	if (rc)
		return rc;
	const int64_t n = x->dims[axis];
	if ((rc = om_ix_check_indices(c, ix, n, "index")))
		return rc;
	const size_t size = om_move_size(x->dtype);
	const int32_t r = x->rank;
	int64_t stride[OM_MAX_RANK], pos[OM_MAX_RANK] = {0};
	for (int32_t i = r - 1, s = 1; i >= 0; s *= x->dims[i], i--)
		stride[i] = s;
	const int64_t total = om_tensor_numel(ix);
	const unsigned char *src = x->data;
	unsigned char *dst = c->out[0]->data;
	int64_t base = 0; /* offset of pos in data, axis coordinate left out */
	for (int64_t e = 0; e < total; e++) {
		int64_t k = om_ix_at(ix, e);
		k += k < 0 ? n : 0;
		const int64_t from = base + k * stride[axis];
		om_move1(dst + (size_t)e * size, src + (size_t)from * size, size);
		for (int32_t d = r - 1; d >= 0; d--) { /* odometer over the indices' shape */
			if (++pos[d] < ix->dims[d]) {
				base += d == axis ? 0 : stride[d];
				break;
			}
			base -= d == axis ? 0 : (pos[d] - 1) * stride[d];
			pos[d] = 0;
		}
	}
	return OM_OK;
}

/* ---- GatherND -------------------------------------------------------------------------------- */

enum gnd_form { GND_PLAIN, GND_BATCH_DIMS /* GatherND-12 */ }; /* the row's param */

typedef struct gnd_geom {
	int32_t b;      /* batch_dims */
	int64_t k;      /* index tuple length */
	int64_t batches, tuples, slice, per_batch;
} gnd_geom;

static om_kind gnd_check(om_ctx *c, gnd_geom *g)
{
	const om_tensor *x = c->in[0], *ix = c->in[1];
	om_kind rc;
	if ((rc = need_rank(c, x, 1, "data")) || (rc = need_rank(c, ix, 1, "indices")) ||
	    (rc = om_ix_check_index_type(c, ix, "indices")))
		return rc;
	int64_t b = c->op->param == GND_BATCH_DIMS ? om_attr_int(c->node, "batch_dims", 0) : 0;
	if (b < 0 || b >= x->rank || b >= ix->rank)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"batch_dims %lld must be in [0, min(rank(data), rank(indices)))",
				(long long)b);
	int64_t k = ix->dims[ix->rank - 1];
	if (k < 0 || k > x->rank - b)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"index tuples of length %lld exceed rank(data) - batch_dims = %lld",
				(long long)k, (long long)(x->rank - b));
	for (int32_t i = 0; i < b; i++)
		if (ix->dims[i] != x->dims[i])
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"batch extent %d differs: indices %lld, data %lld", i,
					(long long)ix->dims[i], (long long)x->dims[i]);
	g->b = (int32_t)b;
	g->k = k;
	g->batches = prod(x->dims, 0, g->b);
	g->tuples = prod(ix->dims, g->b, ix->rank - 1);
	g->slice = prod(x->dims, g->b + (int32_t)k, x->rank);
	g->per_batch = prod(x->dims, g->b, x->rank);
	return OM_OK;
}

static om_kind gather_nd_infer(om_ctx *c)
{
	gnd_geom g;
	om_kind rc = gnd_check(c, &g);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0], *ix = c->in[1];
	int64_t dims[2 * OM_MAX_RANK];
	int32_t r = 0;
	for (int32_t i = 0; i < ix->rank - 1; i++)
		dims[r++] = ix->dims[i];
	for (int32_t i = g.b + (int32_t)g.k; i < x->rank; i++)
		dims[r++] = x->dims[i];
	return om_ix_set_shape(c, c->out[0], x->dtype, r, dims);
}

static om_kind gather_nd_move(om_ctx *c)
{
	gnd_geom g;
	om_kind rc = gnd_check(c, &g);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0], *ix = c->in[1];
	const int64_t ntuples = g.batches * g.tuples, *tdims = x->dims + g.b;
	if ((rc = om_ix_check_tuples(c, ix, ntuples, g.k, tdims)))
		return rc;
	const size_t size = om_move_size(x->dtype);
	const unsigned char *src = x->data;
	unsigned char *dst = c->out[0]->data;
	for (int64_t t = 0; t < ntuples; t++) {
		const int64_t batch = t / (g.tuples ? g.tuples : 1);
		const int64_t off =
			batch * g.per_batch + om_ix_tuple_offset(ix, t, g.k, tdims) * g.slice;
		om_move_n(dst + (size_t)(t * g.slice) * size, src + (size_t)off * size, size,
			  g.slice);
	}
	return OM_OK;
}

/* 4-bit unpacking and, when folding, string ownership: om_move_run (shape_util.h) */
static om_kind gather_kernel(om_ctx *c) { return om_move_run(c, gather_move); }
static om_kind gather_elements_kernel(om_ctx *c) { return om_move_run(c, gather_elements_move); }
static om_kind gather_nd_kernel(om_ctx *c) { return om_move_run(c, gather_nd_move); }

/* ---- table ---------------------------------------------------------------------------------- */

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_Gather_1_v13[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Gather-13: data indices -> output */
static const om_sig sig_Gather_1_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_Gather_1_v13, NULL};
static const om_sig_attr attrs_Gather_1[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Gather-1: data indices -> output */
static const om_sig sig_Gather_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Gather_1,
	&sig_Gather_1_v13};
static const om_sig_attr attrs_GatherElements_11_v13[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GatherElements-13: data indices -> output */
static const om_sig sig_GatherElements_11_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_GatherElements_11_v13, NULL};
static const om_sig_attr attrs_GatherElements_11[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GatherElements-11: data indices -> output */
static const om_sig sig_GatherElements_11 = {11, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_GatherElements_11, &sig_GatherElements_11_v13};
/* GatherND-11: data indices -> output */
static const om_sig sig_GatherND_11 = {11, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL, NULL};
static const om_sig_attr attrs_GatherND_12_v13[] = {{"batch_dims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GatherND-13: data indices -> output */
static const om_sig sig_GatherND_12_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_GatherND_12_v13, NULL};
static const om_sig_attr attrs_GatherND_12[] = {{"batch_dims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GatherND-12: data indices -> output */
static const om_sig sig_GatherND_12 = {12, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_GatherND_12, &sig_GatherND_12_v13};
/* ScatterND-13: data indices updates -> output */
static const om_sig sig_ScatterND_11_v13 = {13, 3, 3, 1, 1, 0x0, 0x0, 0x5, 0x1, 0x5, 0x1, NULL,
	NULL};
/* ScatterND-11: data indices updates -> output */
static const om_sig sig_ScatterND_11 = {11, 3, 3, 1, 1, 0x0, 0x0, 0x5, 0x1, 0x0, 0x0, NULL,
	&sig_ScatterND_11_v13};
static const om_sig_attr attrs_ScatterND_16[] = {{"reduction", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* ScatterND-16: data indices updates -> output */
static const om_sig sig_ScatterND_16 = {16, 3, 3, 1, 1, 0x0, 0x0, 0x5, 0x1, 0x5, 0x1,
	attrs_ScatterND_16, NULL};
static const om_sig_attr attrs_ScatterND_18[] = {{"reduction", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* ScatterND-18: data indices updates -> output */
static const om_sig sig_ScatterND_18 = {18, 3, 3, 1, 1, 0x0, 0x0, 0x5, 0x1, 0x5, 0x1,
	attrs_ScatterND_18, NULL};
static const om_sig_attr attrs_OneHot_9[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* OneHot-9: indices depth values -> output */
static const om_sig sig_OneHot_9 = {9, 3, 3, 1, 1, 0x0, 0x0, 0x7, 0x1, 0x0, 0x0, attrs_OneHot_9,
	NULL};
/* NonZero-13: X -> Y */
static const om_sig sig_NonZero_9_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x1, 0x0, NULL, NULL};
/* NonZero-9: X -> Y */
static const om_sig sig_NonZero_9 = {9, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x0, 0x0, NULL,
	&sig_NonZero_9_v13};
static const om_sig_attr attrs_TopK_1[] = {{"axis", OM_ATTR_INT, 0}, {"k", OM_ATTR_INT, 1},
	{NULL, 0, 0}};
/* TopK-1: X -> Values Indices */
static const om_sig sig_TopK_1 = {1, 1, 1, 2, 2, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_TopK_1, NULL};
static const om_sig_attr attrs_TopK_10[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* TopK-10: X K -> Values Indices */
static const om_sig sig_TopK_10 = {10, 2, 2, 2, 2, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_TopK_10,
	NULL};
static const om_sig_attr attrs_TopK_11_v24[] = {{"axis", OM_ATTR_INT, 0},
	{"largest", OM_ATTR_INT, 0}, {"sorted", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* TopK-24: X K -> Values Indices */
static const om_sig sig_TopK_11_v24 = {24, 2, 2, 2, 2, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_TopK_11_v24, NULL};
static const om_sig_attr attrs_TopK_11[] = {{"axis", OM_ATTR_INT, 0}, {"largest", OM_ATTR_INT, 0},
	{"sorted", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* TopK-11: X K -> Values Indices */
static const om_sig sig_TopK_11 = {11, 2, 2, 2, 2, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_TopK_11,
	&sig_TopK_11_v24};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"Gather", "", 1, gather_infer, gather_kernel, OM_OP_EXACT | OM_OP_UNALIGNED | OM_OP_SELECT,
	 &sig_Gather_1, OM_OPC_GATHER, NULL, 0, NULL},
	{"GatherElements", "", 11, gather_elements_infer, gather_elements_kernel, OM_OP_EXACT,
	 &sig_GatherElements_11, OM_OPC_NONE, NULL, 0, NULL},
	{"GatherND", "", 11, gather_nd_infer, gather_nd_kernel, OM_OP_EXACT, &sig_GatherND_11,
	 OM_OPC_NONE, NULL, GND_PLAIN, NULL},
	{"GatherND", "", 12, gather_nd_infer, gather_nd_kernel, OM_OP_EXACT, &sig_GatherND_12,
	 OM_OPC_NONE, NULL, GND_BATCH_DIMS, NULL},
	{"ScatterND", "", 11, om_scatternd_infer, om_scatternd_kernel, OM_OP_EXACT,
	 &sig_ScatterND_11, OM_OPC_NONE, NULL, OM_RED_NONE, NULL},
	{"ScatterND", "", 16, om_scatternd_infer, om_scatternd_kernel, OM_OP_EXACT,
	 &sig_ScatterND_16, OM_OPC_NONE, NULL, OM_RED_MUL, NULL}, /* add mul */
	{"ScatterND", "", 18, om_scatternd_infer, om_scatternd_kernel, OM_OP_EXACT,
	 &sig_ScatterND_18, OM_OPC_NONE, NULL, OM_RED_MIN, NULL}, /* max min */
	{"OneHot", "", 9, om_onehot_infer, om_onehot_kernel, OM_OP_EXACT, &sig_OneHot_9,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"NonZero", "", 9, om_nonzero_infer, om_nonzero_kernel,
	 OM_OP_EXACT | OM_OP_DATA_DEPENDENT, &sig_NonZero_9, OM_OPC_NONE, NULL, 0, NULL},
	{"TopK", "", 1, om_topk_infer, om_topk_kernel, OM_OP_EXACT, &sig_TopK_1, OM_OPC_NONE, NULL,
	 0, NULL},
	{"TopK", "", 10, om_topk_infer, om_topk_kernel, OM_OP_EXACT,
	 &sig_TopK_10, OM_OPC_NONE, NULL, OM_TOPK_K_INPUT, NULL},
	{"TopK", "", 11, om_topk_infer, om_topk_kernel, OM_OP_EXACT,
	 &sig_TopK_11, OM_OPC_NONE, NULL, OM_TOPK_K_INPUT | OM_TOPK_LARGEST, NULL},
};

const om_op_table om_ops_index = OM_TABLE(rows);
