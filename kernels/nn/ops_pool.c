/* ops_pool.c — MaxPool (with Indices), AveragePool and LpPool on float32 (float16/bfloat16, and
 * int8/uint8 for MaxPool, through conversion), up to three spatial axes: the rows, their
 * inference and layout, and which kernel runs (plain: pool_plain.c; channel-blocked:
 * pool_blocked.c). */
/* -O2 vectorizes only loops of known trip count; the row loops here vary. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif

#include <stdlib.h>

#include "f32_bridge.h"
#include "layout.h"
#include "pool_common.h"

static om_kind pool_infer(om_ctx *c)
{
	om_spatial sp;
	om_kind rc = om_pool_geometry(c, &sp);
	if (rc)
		return rc;
	const om_tensor *X = c->in[0];
	int64_t d[OM_MAX_RANK] = {X->dims[0], X->dims[1]};
	for (int32_t i = 0; i < sp.n; i++)
		d[i + 2] = sp.out[i];
	om_set_shape(c->out[0], X->dtype, X->rank, d);
	if (c->nout > 1 && c->out[1]) {
		if (om_pool_kind(c) != POOL_MAX)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "only one output");
		om_set_shape(c->out[1], OM_INT64, X->rank, d);
	}
	return OM_OK;
}

/* ---- windowed pools on channel-blocked tensors (op.h) ------------------------------------- */

/* MaxPool without Indices and AveragePool over two spatial axes on float32 take X and Y
 * channel-blocked, each on its own: each window is taken over 16 lanes at once (ONNX Runtime
 * pools its NCHWc tensors so too). The padding lanes stay finite. X blocked and Y plain (a
 * stem conv's output pooled for a plain reader, resnet's) converts the pooled values, a
 * quarter of X at stride 2, where a tie would convert all of X: resnet18's stem, one thread,
 * reorder of (1, 64, 112, 112) 0.38 ms + NCHW pool 0.45-0.67 -> NHWC pool and unblock. */
static void pool_layout(const om_ctx *c, om_layout_req *r)
{
	*r = (om_layout_req){0};
	const om_tensor *X = c->in[0];
	if (c->exact || om_pool_kind(c) == POOL_LP || !X || X->rank != 4 ||
	    (c->nout > 1 && c->out[1]))
		return;
	if (X->dtype == OM_FLOAT) {
		r->may = OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0);
		return;
	}
	/* int8/uint8 MaxPool between QLinearConvs (an 8-bit value is blocked in NHWC plans
	 * alone): X and Y both NHWC, pooled as float NHWC (pool_kernel), the max of the same
	 * values; it saved a reorder to NCHW and back around every such MaxPool */
	if ((X->dtype == OM_INT8 || X->dtype == OM_UINT8) && om_pool_kind(c) == POOL_MAX &&
	    c->block == OM_BLOCK_NHWC) {
		r->may = r->tied = OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0);
		r->block = OM_BLOCK_NHWC;
	}
}

/* the plain path's name for plain X (om_op.choose) */
static void plain_choose(const om_ctx *c, om_choice *ch)
{
	om_ctx lc = *c;
	om_spatial sp;
	if (om_pool_geometry(&lc, &sp))
		return;
	if (om_pool_via_takes(c, &sp))
		ch->name = OM_POOL_VIA;
	else if (om_pool_max8_takes(c))
		ch->name = OM_POOL_MAX8;
	else
		ch->name = om_pool_path_names[om_pool_plain_path(c, &sp)];
}

/* pool_kernel's path for the shapes in c (om_op.choose): blocked X's kernel, or the plain
 * path (also for plain X pooled into blocked Y) */
static void pool_choose(const om_ctx *c, om_choice *ch)
{
	if (c->blocked & OM_LAYOUT_IN(0))
		ch->name = OM_POOL_BLOCKED;
	else
		plain_choose(c, ch);
}

/* plain X and Y */
static om_kind pool_plain(om_ctx *c)
{
	om_kind rc;
	if (om_pool_via_blocks(c, &rc) || om_pool_max8(c, &rc))
		return rc;
	if (c->in[0]->dtype != OM_FLOAT)
		return om_run_as_f32(c, om_pool_plain_f32, true);
	return om_pool_plain_f32(c);
}

/* One side blocked (float32, 4-D): X blocked is pooled blocked into a buffer that is
 * unblocked into Y; plain X is pooled plain into a buffer that is blocked into Y. */
static om_kind pool_one_side(om_ctx *c)
{
	const om_tensor *X = c->in[0], *Y = c->out[0];
	const bool bin = c->blocked & OM_LAYOUT_IN(0);
	const om_tensor *B = bin ? X : Y, *P = bin ? Y : X;
	if (B->rank != 5 || P->rank != 4 || Y->dims[0] != X->dims[0] ||
	    B->dims[1] != (P->dims[1] + B->dims[4] - 1) / B->dims[4])
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "pool: blocked X or Y's shape");
	const int64_t N = X->dims[0], C = P->dims[1], b = B->dims[4];
	const int64_t OH = Y->dims[2], OW = Y->dims[3];
	om_spatial sp;
	om_kind rc = bin ? OM_OK : om_pool_geometry(c, &sp); /* blocked X: om_pool_blocked's */
	if (rc)
		return rc;
	if (!bin && (sp.n != 2 || sp.out[0] != OH || sp.out[1] != OW))
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "pool: blocked Y's shape");
	om_tensor t = *Y;
	if (bin)
		om_set_shape(&t, OM_FLOAT, 5, (int64_t[]){N, B->dims[1], OH, OW, b});
	else
		om_set_shape(&t, OM_FLOAT, 4, (int64_t[]){N, C, OH, OW});
	t.nbytes = sizeof(float) * (size_t)om_tensor_numel(&t);
	float *buf;
	if ((rc = om_ctx_scratch(c, t.nbytes, "a buffer of pooled values", (void **)&buf)))
		return rc;
	t.data = buf;
	om_tensor *out[1] = {&t};
	om_ctx lc = *c;
	lc.out = out, lc.nout = 1;
	lc.blocked = bin ? OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0) : 0;
	rc = bin ? om_pool_blocked(&lc) : pool_plain(&lc);
	if (!rc && bin)
		om_layout_unblock_f32(buf, N, C, OH * OW, b, Y->data);
	else if (!rc)
		om_layout_block_f32(buf, N, C, OH * OW, b, Y->data);
	om_ctx_scratch_done(c, buf);
	return rc;
}

static om_kind pool_kernel(om_ctx *c)
{
	if (c->blocked == (OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0)))
		return c->in[0]->dtype == OM_FLOAT ? om_pool_blocked(c)
						   : om_run_as_f32(c, om_pool_blocked, true);
	if (c->blocked)
		return pool_one_side(c);
	return pool_plain(c);
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_MaxPool_1_v22[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"dilations", OM_ATTR_INTS, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"pads", OM_ATTR_INTS, 0},
	{"storage_order", OM_ATTR_INT, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* MaxPool-22: X -> Y [Indices] */
static const om_sig sig_MaxPool_1_v22 = {22, 1, 1, 1, 2, 0x0, 0x2, 0x1, 0x1, 0x1, 0x1,
	attrs_MaxPool_1_v22, NULL};
static const om_sig_attr attrs_MaxPool_1_v10[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"dilations", OM_ATTR_INTS, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"pads", OM_ATTR_INTS, 0},
	{"storage_order", OM_ATTR_INT, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* MaxPool-10: X -> Y [Indices] */
static const om_sig sig_MaxPool_1_v10 = {10, 1, 1, 1, 2, 0x0, 0x2, 0x1, 0x1, 0x0, 0x0,
	attrs_MaxPool_1_v10, &sig_MaxPool_1_v22};
static const om_sig_attr attrs_MaxPool_1_v8[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"pads", OM_ATTR_INTS, 0},
	{"storage_order", OM_ATTR_INT, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* MaxPool-8: X -> Y [Indices] */
static const om_sig sig_MaxPool_1_v8 = {8, 1, 1, 1, 2, 0x0, 0x2, 0x1, 0x1, 0x0, 0x0,
	attrs_MaxPool_1_v8, &sig_MaxPool_1_v10};
static const om_sig_attr attrs_MaxPool_1[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* MaxPool-1: X -> Y */
static const om_sig sig_MaxPool_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_MaxPool_1,
	&sig_MaxPool_1_v8};
static const om_sig_attr attrs_AveragePool_1_v22[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"count_include_pad", OM_ATTR_INT, 0},
	{"dilations", OM_ATTR_INTS, 0}, {"kernel_shape", OM_ATTR_INTS, 1},
	{"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* AveragePool-22: X -> Y */
static const om_sig sig_AveragePool_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_AveragePool_1_v22, NULL};
static const om_sig_attr attrs_AveragePool_1_v19[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"count_include_pad", OM_ATTR_INT, 0},
	{"dilations", OM_ATTR_INTS, 0}, {"kernel_shape", OM_ATTR_INTS, 1},
	{"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* AveragePool-19: X -> Y */
static const om_sig sig_AveragePool_1_v19 = {19, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_AveragePool_1_v19, &sig_AveragePool_1_v22};
static const om_sig_attr attrs_AveragePool_1_v10[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"count_include_pad", OM_ATTR_INT, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* AveragePool-10: X -> Y */
static const om_sig sig_AveragePool_1_v10 = {10, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_AveragePool_1_v10, &sig_AveragePool_1_v19};
static const om_sig_attr attrs_AveragePool_1_v7[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"count_include_pad", OM_ATTR_INT, 0}, {"kernel_shape", OM_ATTR_INTS, 1},
	{"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* AveragePool-7: X -> Y */
static const om_sig sig_AveragePool_1_v7 = {7, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_AveragePool_1_v7, &sig_AveragePool_1_v10};
static const om_sig_attr attrs_AveragePool_1[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* AveragePool-1: X -> Y */
static const om_sig sig_AveragePool_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_AveragePool_1, &sig_AveragePool_1_v7};
static const om_sig_attr attrs_LpPool_1_v22[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"dilations", OM_ATTR_INTS, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"p", OM_ATTR_INT, 0}, {"pads", OM_ATTR_INTS, 0},
	{"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* LpPool-22: X -> Y */
static const om_sig sig_LpPool_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_LpPool_1_v22, NULL};
static const om_sig_attr attrs_LpPool_1_v18[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"dilations", OM_ATTR_INTS, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"p", OM_ATTR_INT, 0}, {"pads", OM_ATTR_INTS, 0},
	{"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* LpPool-18: X -> Y */
static const om_sig sig_LpPool_1_v18 = {18, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_LpPool_1_v18, &sig_LpPool_1_v22};
static const om_sig_attr attrs_LpPool_1_v2[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"p", OM_ATTR_INT, 0}, {"pads", OM_ATTR_INTS, 0},
	{"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* LpPool-2: X -> Y */
static const om_sig sig_LpPool_1_v2 = {2, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_LpPool_1_v2, &sig_LpPool_1_v18};
static const om_sig_attr attrs_LpPool_1[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"kernel_shape", OM_ATTR_INTS, 0}, {"p", OM_ATTR_FLOAT, 0}, {"pads", OM_ATTR_INTS, 0},
	{"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* LpPool-1: X -> Y */
static const om_sig sig_LpPool_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_LpPool_1,
	&sig_LpPool_1_v2};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"MaxPool", "", 1, pool_infer, pool_kernel, OM_OP_EXACT | OM_OP_LAYOUT | OM_OP_SELECT,
	 &sig_MaxPool_1, OM_OPC_NONE, pool_layout, POOL_MAX, pool_choose},
	{"AveragePool", "", 1, pool_infer, pool_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_AveragePool_1, OM_OPC_AVERAGE_POOL, pool_layout, POOL_AVG, pool_choose},
	{"LpPool", "", 1, pool_infer, pool_kernel, OM_OP_EXACT | OM_OP_LAYOUT, &sig_LpPool_1,
	 OM_OPC_NONE, NULL, POOL_LP, pool_choose},
};

const om_op_table om_ops_pool = OM_TABLE(rows);
