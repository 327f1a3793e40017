/* ops_unpool.c — MaxUnpool: zeros, and every X element moved to the flat output index beside it
 * (element moves, any type). */
#include <string.h>

#include "move.h"
#include "op.h"
#include "spatial.h"

/* Output shape: output_shape's values when given, else (in - 1) * stride + kernel - pads. */
static om_kind unpool_shape(om_ctx *c, int64_t *d)
{
	const om_tensor *X = c->in[0], *I = c->nin > 1 ? c->in[1] : NULL;
	if (!X || !I || X->rank < 3 || I->rank != X->rank || I->dtype != OM_INT64)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"needs X of rank >= 3 and int64 indices of its shape");
	for (int32_t i = 0; i < X->rank; i++)
		if (I->dims[i] != X->dims[i])
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"indices and X differ on axis %d", i);
	int32_t n = X->rank - 2;
	const int64_t *kernel;
	om_spatial sp = {.n = n};
	om_kind rc = om_spatial_kernel_attr(c, n, &kernel);
	if (!rc && !kernel)
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "kernel_shape is required");
	if (rc || (rc = om_spatial_strides(c, &sp)))
		return rc;
	int64_t cnt;
	const int64_t *pads = om_attr_ints(c->node, "pads", &cnt);
	if (pads && cnt != 2 * n)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "pads needs %d entries",
				2 * n);
	const om_tensor *os = c->nin > 2 ? c->in[2] : NULL;
	if (os) {
		if ((rc = om_read_ints(c, os, d, OM_MAX_RANK, &cnt)))
			return rc;
		if (cnt != X->rank)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"output_shape has %lld entries for rank %d", (long long)cnt,
					X->rank);
	} else {
		d[0] = X->dims[0], d[1] = X->dims[1];
		for (int32_t i = 0; i < n; i++) {
			int64_t pb = pads ? pads[i] : 0, pe = pads ? pads[i + n] : 0;
			if (pb < 0 || pe < 0 || pb > OM_SP_LIMIT || pe > OM_SP_LIMIT ||
			    X->dims[i + 2] > OM_SP_LIMIT)
				return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
						"pads or extent out of range");
			int64_t in = X->dims[i + 2];
			d[i + 2] = in ? (in - 1) * sp.stride[i] + kernel[i] - pb - pe : 0;
		}
	}
	for (int32_t i = 0; i < X->rank; i++)
		if (d[i] < 0 || d[i] > ((int64_t)1 << 40) || (i < 2 && d[i] != X->dims[i]))
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"output extent %lld on axis %d", (long long)d[i], i);
	return OM_OK;
}

static om_kind unpool_infer(om_ctx *c)
{
	int64_t d[OM_MAX_RANK];
	om_kind rc = unpool_shape(c, d);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, d);
	return rc;
}

/* Zeros, then every X element moved to the flat output index beside it (any element type). */
static om_kind unpool_kernel(om_ctx *c)
{
	const om_tensor *X = c->in[0], *I = c->in[1];
	om_tensor *Y = c->out[0];
	size_t es = om_dtype_size(X->dtype);
	if (!es || X->dtype == OM_STRING)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "MaxUnpool of %s",
				om_dtype_name(X->dtype));
	memset(Y->data, 0, Y->nbytes);
	const int64_t *idx = I->data;
	int64_t nx = om_tensor_numel(X), ny = om_tensor_numel(Y);
	for (int64_t i = 0; i < nx; i++) {
		if (idx[i] < 0 || idx[i] >= ny)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"index %lld is outside the %lld outputs", (long long)idx[i],
					(long long)ny);
		om_move1((char *)Y->data + (size_t)idx[i] * es,
			 (const char *)X->data + (size_t)i * es, es);
	}
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_MaxUnpool_9_v22[] = {{"kernel_shape", OM_ATTR_INTS, 1},
	{"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* MaxUnpool-22: X I [output_shape] -> output */
static const om_sig sig_MaxUnpool_9_v22 = {22, 2, 3, 1, 1, 0x4, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_MaxUnpool_9_v22, NULL};
static const om_sig_attr attrs_MaxUnpool_9[] = {{"kernel_shape", OM_ATTR_INTS, 1},
	{"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* MaxUnpool-9: X I [output_shape] -> output */
static const om_sig sig_MaxUnpool_9 = {9, 2, 3, 1, 1, 0x4, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_MaxUnpool_9, &sig_MaxUnpool_9_v22};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"MaxUnpool", "", 9, unpool_infer, unpool_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_MaxUnpool_9, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_unpool = OM_TABLE(rows);
