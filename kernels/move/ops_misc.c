/* ops_misc.c — moves without arithmetic: DepthToSpace (DCR/CRD), SpaceToDepth, Compress (data
 * dependent), ReverseSequence, EyeLike and CenterCropPad. Moves dispatch on element size. */
#include <string.h>

#include "index_util.h"
#include "move.h"
#include "numrun.h"
#include "shape_util.h"

static om_kind misc_bad(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", what);
}

/* ---- DepthToSpace / SpaceToDepth --------------------------------------------------------- */

enum d2s_dir { D2S_TO_DEPTH, D2S_TO_SPACE }; /* the row's param: SpaceToDepth, DepthToSpace */

typedef struct d2s_plan {
	int64_t N, C, H, W, b; /* the input's extents and the block size */
	bool to_space, crd;
} d2s_plan;

static om_kind d2s_plan_make(om_ctx *c, d2s_plan *p, int64_t *y)
{
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL;
	if (!x || x->rank != 4)
		return misc_bad(c, "input must be 4-D");
	p->to_space = c->op->param == D2S_TO_SPACE;
	static const char *const modes[] = {"DCR", "CRD", NULL};
	p->crd = p->to_space && om_attr_choice(c->node, "mode", modes, 0) == 1;
	p->b = om_attr_int(c->node, "blocksize", 0);
	p->N = x->dims[0], p->C = x->dims[1], p->H = x->dims[2], p->W = x->dims[3];
	if (p->b <= 0 || p->b > (int64_t)1 << 20)
		return misc_bad(c, "blocksize must be positive");
	const int64_t bb = p->b * p->b;
	if (p->to_space) {
		if (p->C % bb)
			return misc_bad(c, "channels do not divide by blocksize^2");
		y[0] = p->N, y[1] = p->C / bb, y[2] = p->H * p->b, y[3] = p->W * p->b;
	} else {
		if (p->H % p->b || p->W % p->b)
			return misc_bad(c, "height and width do not divide by blocksize");
		y[0] = p->N, y[1] = p->C * bb, y[2] = p->H / p->b, y[3] = p->W / p->b;
	}
	return OM_OK;
}

static om_kind d2s_infer(om_ctx *c)
{
	d2s_plan p = {0};
	int64_t y[4] = {0};
	om_kind rc = d2s_plan_make(c, &p, y);
	if (rc)
		return rc;
	return om_ix_set_shape(c, c->out[0], c->in[0]->dtype, 4, y);
}

static om_kind d2s_move(om_ctx *c)
{
	d2s_plan p = {0};
	int64_t y[4] = {0};
	om_kind rc = d2s_plan_make(c, &p, y);
	if (rc)
		return rc;
	const size_t size = om_move_size(c->in[0]->dtype);
	const unsigned char *src = c->in[0]->data;
	unsigned char *dst = c->out[0]->data;
	/* walk the space side [N, Cs, Hs, Ws] (Cs = channels per block) and the depth side */
	const int64_t b = p.b, Cs = p.to_space ? y[1] : p.C, Hs = p.to_space ? y[2] : p.H;
	const int64_t Ws = p.to_space ? y[3] : p.W, Cd = Cs * b * b, Hd = Hs / b, Wd = Ws / b;
	for (int64_t n = 0; n < p.N; n++)
		for (int64_t ch = 0; ch < Cs; ch++)
			for (int64_t h = 0; h < Hs; h++)
				for (int64_t w = 0; w < Ws; w++) {
					const int64_t i = h % b, j = w % b;
					const int64_t cd = p.crd ? (ch * b + i) * b + j
								 : (i * b + j) * Cs + ch;
					const int64_t so = ((n * Cs + ch) * Hs + h) * Ws + w;
					const int64_t dp =
						((n * Cd + cd) * Hd + h / b) * Wd + w / b;
					if (p.to_space)
						om_move1(dst + (size_t)so * size,
							 src + (size_t)dp * size, size);
					else
						om_move1(dst + (size_t)dp * size,
							 src + (size_t)so * size, size);
				}
	return OM_OK;
}

static om_kind d2s_kernel(om_ctx *c)
{
	return om_move_run(c, d2s_move);
}

/* ---- Compress ------------------------------------------------------------------------------ */

/* count of the kept slices; NEED_VALUE while the condition is unknown */
static om_kind compress_count(om_ctx *c, int32_t *axis, int64_t *kept, int64_t *extent)
{
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL, *cond = c->nin > 1 ? c->in[1] : NULL;
	if (!x || !cond || cond->dtype != OM_BOOL || cond->rank != 1)
		return misc_bad(c, "needs input and a 1-D bool condition");
	*axis = -1;
	*extent = om_tensor_numel(x);
	if (om_node_attr(c->node, "axis")) {
		om_kind rc = om_norm_axis(c, om_attr_int(c->node, "axis", 0), x->rank, axis);
		if (rc)
			return rc;
		*extent = x->dims[*axis];
	}
	if (!om_has_value(cond))
		return OM_NEED_VALUE;
	const uint8_t *m = cond->data;
	int64_t k = 0;
	for (int64_t i = 0; i < cond->dims[0]; i++) {
		if (m[i] && i >= *extent)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"condition selects index %lld of an extent of %lld",
					(long long)i, (long long)*extent);
		k += m[i] != 0;
	}
	*kept = k;
	return OM_OK;
}

static om_kind compress_infer(om_ctx *c)
{
	int32_t axis;
	int64_t kept, extent;
	om_kind rc = compress_count(c, &axis, &kept, &extent);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	if (axis < 0)
		return om_ix_set_shape(c, c->out[0], x->dtype, 1, &kept);
	int64_t y[OM_MAX_RANK];
	memcpy(y, x->dims, sizeof(int64_t) * (size_t)x->rank);
	y[axis] = kept;
	return om_ix_set_shape(c, c->out[0], x->dtype, x->rank, y);
}

static om_kind compress_move(om_ctx *c)
{
	int32_t axis = 0;
	int64_t kept = 0, extent = 0;
	om_kind rc = compress_count(c, &axis, &kept, &extent);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	int64_t outer = 1, inner = 1;
	for (int32_t d = 0; axis >= 0 && d < x->rank; d++)
		if (d < axis)
			outer *= x->dims[d];
		else if (d > axis)
			inner *= x->dims[d];
	const size_t size = om_move_size(x->dtype), row = (size_t)inner * size;
	const uint8_t *m = c->in[1]->data;
	const int64_t nm = c->in[1]->dims[0] < extent ? c->in[1]->dims[0] : extent;
	const unsigned char *src = x->data;
	unsigned char *dst = c->out[0]->data;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < nm; i++)
			if (m[i]) {
				memcpy(dst, src + (size_t)(o * extent + i) * row, row);
				dst += row;
			}
	return OM_OK;
}

static om_kind compress_kernel(om_ctx *c)
{
	return om_move_run(c, compress_move);
}

/* ---- ReverseSequence ----------------------------------------------------------------------- */

static om_kind rs_check(om_ctx *c, int32_t *ba, int32_t *ta)
{
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL, *l = c->nin > 1 ? c->in[1] : NULL;
	if (!x || !l || x->rank < 2 || l->rank != 1)
		return misc_bad(c, "needs input of rank >= 2 and 1-D sequence_lens");
	om_kind rc = om_ix_check_index_type(c, l, "sequence_lens");
	if (!rc)
		rc = om_norm_axis(c, om_attr_int(c->node, "batch_axis", 1), x->rank, ba);
	if (!rc)
		rc = om_norm_axis(c, om_attr_int(c->node, "time_axis", 0), x->rank, ta);
	if (rc)
		return rc;
	if (*ba == *ta || *ba > 1 || *ta > 1 || l->dims[0] != x->dims[*ba])
		return misc_bad(c, "batch and time axes are 0 and 1; sequence_lens is [batch]");
	return OM_OK;
}

static om_kind rs_infer(om_ctx *c)
{
	int32_t ba, ta;
	om_kind rc = rs_check(c, &ba, &ta);
	if (rc)
		return rc;
	return om_ix_set_shape(c, c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
}

static om_kind rs_move(om_ctx *c)
{
	int32_t ba, ta;
	om_kind rc = rs_check(c, &ba, &ta);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0], *l = c->in[1];
	const int64_t B = x->dims[ba], T = x->dims[ta], n = om_tensor_numel(x);
	for (int64_t b = 0; b < B; b++) {
		const int64_t v = om_ix_at(l, b);
		if (v < 0 || v > T)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"sequence length %lld outside [0, %lld]", (long long)v,
					(long long)T);
	}
	const int64_t inner = n / (B * T > 0 ? B * T : 1), ts = ta == 0 ? B * inner : inner;
	const size_t size = om_move_size(x->dtype), row = (size_t)inner * size;
	const unsigned char *src = x->data;
	unsigned char *dst = c->out[0]->data;
	for (int64_t t = 0; t < T; t++)
		for (int64_t b = 0; b < B; b++) {
			const int64_t len = om_ix_at(l, b), st = t < len ? len - 1 - t : t;
			const int64_t bo = (ta == 0 ? b * inner : b * T * inner);
			const unsigned char *from = src + (size_t)(bo + st * ts) * size;
			memcpy(dst + (size_t)(bo + t * ts) * size, from, row);
		}
	return OM_OK;
}

static om_kind rs_kernel(om_ctx *c)
{
	return om_move_run(c, rs_move);
}

/* ---- EyeLike ------------------------------------------------------------------------------- */

static om_kind eye_infer(om_ctx *c)
{
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL;
	if (!x || x->rank != 2)
		return misc_bad(c, "input must be 2-D");
	const int32_t dt = (int32_t)om_attr_int(c->node, "dtype", x->dtype);
	if (!om_is_float_type(dt) && !om_is_int_type(dt) && dt != OM_BOOL)
		return misc_bad(c, "dtype must be numeric or bool");
	return om_ix_set_shape(c, c->out[0], dt, 2, x->dims);
}

static om_kind eye_kernel(om_ctx *c)
{
	om_kind rc = eye_infer(c);
	if (rc)
		return rc;
	om_tensor *y = c->out[0];
	const int64_t R = y->dims[0], C = y->dims[1], k = om_attr_int(c->node, "k", 0);
	const size_t size = om_dtype_size(y->dtype);
	memset(y->data, 0, (size_t)(R * C) * size);
	const double one = 1;
	for (int64_t i = 0; i < R; i++)
		if (k > -C && k < C && i + k >= 0 && i + k < C)
			om_store_f64(y->dtype, (char *)y->data + (size_t)(i * C + i + k) * size, 1,
				     &one, 1);
	return OM_OK;
}

/* ---- CenterCropPad ------------------------------------------------------------------------- */

/* the target extents, and per axis the box copied: source start, destination start, extent */
typedef struct ccp_plan {
	int64_t y[OM_MAX_RANK], src0[OM_MAX_RANK], dst0[OM_MAX_RANK], box[OM_MAX_RANK];
} ccp_plan;

static om_kind ccp_plan_make(om_ctx *c, ccp_plan *p)
{
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL, *sh = c->nin > 1 ? c->in[1] : NULL;
	if (!x || !sh || sh->rank != 1 || x->rank < 1)
		return misc_bad(c, "needs input of rank >= 1 and a 1-D shape");
	int64_t want[OM_MAX_RANK], k = 0, na = 0;
	om_kind rc = om_read_ints(c, sh, want, OM_MAX_RANK, &k);
	if (rc)
		return rc;
	const int64_t *axes = om_attr_ints(c->node, "axes", &na);
	if (axes ? na != k : k != x->rank)
		return misc_bad(c, "shape must have one entry per axis");
	for (int32_t d = 0; d < x->rank; d++)
		p->y[d] = p->box[d] = x->dims[d], p->src0[d] = p->dst0[d] = 0;
	for (int64_t i = 0; i < k; i++) {
		int32_t a = (int32_t)i;
		if (axes && (rc = om_norm_axis(c, axes[i], x->rank, &a)))
			return rc;
		const int64_t dim = x->dims[a], t = want[i];
		if (t < 0)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "target extent %lld",
					(long long)t);
		p->y[a] = t;
		p->box[a] = t < dim ? t : dim;
		p->src0[a] = t < dim ? (dim - t) / 2 : 0;
		p->dst0[a] = t > dim ? (t - dim) / 2 : 0;
	}
	return OM_OK;
}

static om_kind ccp_infer(om_ctx *c)
{
	ccp_plan p;
	om_kind rc = ccp_plan_make(c, &p);
	if (rc)
		return rc;
	return om_ix_set_shape(c, c->out[0], c->in[0]->dtype, c->in[0]->rank, p.y);
}

static om_kind ccp_move(om_ctx *c)
{
	ccp_plan p;
	om_kind rc = ccp_plan_make(c, &p);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	const int32_t r = x->rank;
	const size_t size = om_move_size(x->dtype);
	memset(c->out[0]->data, 0, (size_t)om_shape_numel(r, p.y) * size);
	if (om_shape_numel(r, p.box) <= 0)
		return OM_OK;
	int64_t xs[OM_MAX_RANK], ys[OM_MAX_RANK], at[OM_MAX_RANK] = {0};
	om_dense_strides(r, x->dims, xs);
	om_dense_strides(r, p.y, ys);
	const int64_t rows = r > 1 ? om_shape_numel(r - 1, p.box) : 1;
	for (int64_t q = 0; q < rows; q++) {
		int64_t so = p.src0[r - 1], dof = p.dst0[r - 1];
		for (int32_t d = 0; d < r - 1; d++)
			so += (p.src0[d] + at[d]) * xs[d], dof += (p.dst0[d] + at[d]) * ys[d];
		memcpy((unsigned char *)c->out[0]->data + (size_t)dof * size,
		       (const unsigned char *)x->data + (size_t)so * size,
		       (size_t)p.box[r - 1] * size);
		for (int32_t d = r - 2; d >= 0 && ++at[d] == p.box[d]; d--)
			at[d] = 0;
	}
	return OM_OK;
}

static om_kind ccp_kernel(om_ctx *c)
{
	return om_move_run(c, ccp_move);
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_DepthToSpace_1_v13[] = {{"blocksize", OM_ATTR_INT, 1},
	{"mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* DepthToSpace-13: input -> output */
static const om_sig sig_DepthToSpace_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_DepthToSpace_1_v13, NULL};
static const om_sig_attr attrs_DepthToSpace_1_v11[] = {{"blocksize", OM_ATTR_INT, 1},
	{"mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* DepthToSpace-11: input -> output */
static const om_sig sig_DepthToSpace_1_v11 = {11, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_DepthToSpace_1_v11, &sig_DepthToSpace_1_v13};
static const om_sig_attr attrs_DepthToSpace_1[] = {{"blocksize", OM_ATTR_INT, 1}, {NULL, 0, 0}};
/* DepthToSpace-1: input -> output */
static const om_sig sig_DepthToSpace_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_DepthToSpace_1, &sig_DepthToSpace_1_v11};
static const om_sig_attr attrs_SpaceToDepth_1_v13[] = {{"blocksize", OM_ATTR_INT, 1}, {NULL, 0, 0}};
/* SpaceToDepth-13: input -> output */
static const om_sig sig_SpaceToDepth_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_SpaceToDepth_1_v13, NULL};
static const om_sig_attr attrs_SpaceToDepth_1[] = {{"blocksize", OM_ATTR_INT, 1}, {NULL, 0, 0}};
/* SpaceToDepth-1: input -> output */
static const om_sig sig_SpaceToDepth_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_SpaceToDepth_1, &sig_SpaceToDepth_1_v13};
static const om_sig_attr attrs_Compress_9[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Compress-9: input condition -> output */
static const om_sig sig_Compress_9 = {9, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Compress_9,
	NULL};
static const om_sig_attr attrs_ReverseSequence_10[] = {{"batch_axis", OM_ATTR_INT, 0},
	{"time_axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReverseSequence-10: input sequence_lens -> Y */
static const om_sig sig_ReverseSequence_10 = {10, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_ReverseSequence_10, NULL};
static const om_sig_attr attrs_EyeLike_9_v22[] = {{"dtype", OM_ATTR_INT, 0}, {"k", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* EyeLike-22: input -> output */
static const om_sig sig_EyeLike_9_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_EyeLike_9_v22, NULL};
static const om_sig_attr attrs_EyeLike_9[] = {{"dtype", OM_ATTR_INT, 0}, {"k", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* EyeLike-9: input -> output */
static const om_sig sig_EyeLike_9 = {9, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_EyeLike_9,
	&sig_EyeLike_9_v22};
static const om_sig_attr attrs_CenterCropPad_18[] = {{"axes", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* CenterCropPad-18: input_data shape -> output_data */
static const om_sig sig_CenterCropPad_18 = {18, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_CenterCropPad_18, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"DepthToSpace", "", 1, d2s_infer, d2s_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_DepthToSpace_1, OM_OPC_NONE, NULL, D2S_TO_SPACE, NULL},
	{"SpaceToDepth", "", 1, d2s_infer, d2s_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_SpaceToDepth_1, OM_OPC_NONE, NULL, D2S_TO_DEPTH, NULL},
	{"Compress", "", 9, compress_infer, compress_kernel, OM_OP_EXACT | OM_OP_DATA_DEPENDENT,
	 &sig_Compress_9, OM_OPC_NONE, NULL, 0, NULL},
	{"ReverseSequence", "", 10, rs_infer, rs_kernel, OM_OP_EXACT, &sig_ReverseSequence_10,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"EyeLike", "", 9, eye_infer, eye_kernel, OM_OP_EXACT, &sig_EyeLike_9, OM_OPC_NONE, NULL,
	 0, NULL},
	{"CenterCropPad", "", 18, ccp_infer, ccp_kernel, OM_OP_EXACT, &sig_CenterCropPad_18,
	 OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_misc = OM_TABLE(rows);
