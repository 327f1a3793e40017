/* ops_fold.c — Col2Im (opset 18): columns [N, C * prod(block), L] folded (summed) into images
 * [N, C, image...] through ConvTranspose's om_col2im_add; float. */
#include <string.h>

#include "im2col.h"

static om_kind c2i_plan(om_ctx *c, om_spatial *sp, int64_t *C)
{
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL;
	if (!x || x->dtype != OM_FLOAT || x->rank != 3 || c->nin < 3 || !c->in[1] || !c->in[2])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"needs float input [N, C * block, L], image_shape, block_shape");
	memset(sp, 0, sizeof *sp);
	int64_t ni = 0, nb = 0, np = 0;
	om_kind rc = om_read_ints(c, c->in[1], sp->out, OM_SP_MAX, &ni);
	if (!rc)
		rc = om_read_ints(c, c->in[2], sp->k, OM_SP_MAX, &nb);
	if (rc)
		return rc;
	if (ni != nb || ni < 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"image_shape and block_shape differ in length");
	sp->n = (int32_t)ni;
	if ((rc = om_spatial_strides(c, sp)))
		return rc;
	const int64_t *pads = om_attr_ints(c->node, "pads", &np);
	if (pads && np != 2 * ni)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "pads needs %lld entries",
				(long long)(2 * ni));
	int64_t kprod = 1, L = 1;
	for (int32_t i = 0; i < sp->n; i++) {
		sp->pb[i] = pads ? pads[i] : 0, sp->pe[i] = pads ? pads[ni + i] : 0;
		if (sp->out[i] < 1 || sp->out[i] > OM_SP_LIMIT || sp->k[i] < 1 ||
		    sp->k[i] > OM_SP_LIMIT || sp->pb[i] < 0 || sp->pe[i] < 0 ||
		    sp->pb[i] > OM_SP_LIMIT || sp->pe[i] > OM_SP_LIMIT)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"image, block and pads must be in range");
		const int64_t span =
			sp->out[i] + sp->pb[i] + sp->pe[i] - sp->dil[i] * (sp->k[i] - 1) - 1;
		sp->in[i] = span < 0 ? 0 : span / sp->stride[i] + 1;
		kprod *= sp->k[i], L *= sp->in[i];
	}
	if (x->dims[1] % kprod || x->dims[2] != L)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"input [N, %lld, %lld]: blocks of %lld, L %lld",
				(long long)x->dims[1], (long long)x->dims[2], (long long)kprod,
				(long long)L);
	*C = x->dims[1] / kprod;
	return OM_OK;
}

static om_kind c2i_infer(om_ctx *c)
{
	om_spatial sp;
	int64_t C = 0, y[OM_MAX_RANK];
	om_kind rc = c2i_plan(c, &sp, &C);
	if (rc)
		return rc;
	y[0] = c->in[0]->dims[0], y[1] = C;
	memcpy(y + 2, sp.out, sizeof(int64_t) * (size_t)sp.n);
	if (om_shape_numel(sp.n + 2, y) < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "image size overflows");
	om_set_shape(c->out[0], OM_FLOAT, sp.n + 2, y);
	return OM_OK;
}

static om_kind c2i_kernel(om_ctx *c)
{
	om_spatial sp;
	int64_t C = 0;
	om_kind rc = c2i_plan(c, &sp, &C);
	if (rc)
		return rc;
	const int64_t N = c->in[0]->dims[0], ncol = c->in[0]->dims[1] * c->in[0]->dims[2];
	const int64_t nimg = C * om_shape_numel(sp.n, sp.out);
	float *y = c->out[0]->data;
	memset(y, 0, sizeof(float) * (size_t)(N * nimg));
	for (int64_t n = 0; n < N; n++)
		om_col2im_add((const float *)c->in[0]->data + n * ncol, C, &sp, y + n * nimg);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_Col2Im_18[] = {{"dilations", OM_ATTR_INTS, 0},
	{"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Col2Im-18: input image_shape block_shape -> output */
static const om_sig sig_Col2Im_18 = {18, 3, 3, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, attrs_Col2Im_18,
	NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"Col2Im", "", 18, c2i_infer, c2i_kernel, OM_OP_EXACT, &sig_Col2Im_18, OM_OPC_NONE, NULL,
	 0, NULL},
};

const om_op_table om_ops_fold = OM_TABLE(rows);
