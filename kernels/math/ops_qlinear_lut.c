/* ops_qlinear_lut.c — com.microsoft QLinearSigmoid, QLinearLeakyRelu and QLinearConcat: ONNX
 * Runtime's 8-bit ops that map each input byte through a 256-entry table. An entry is
 * byte i dequantized (x_scale * (i - x_zero_point), in float), the function (the logistic
 * function as MLAS's FMA3 kernel computes it, LeakyRelu, or the identity), then quantized
 * with y's scale and zero point as QuantizeLinear does (divided, round half to even,
 * saturated: quant_loops.c). Sigmoid and LeakyRelu keep their table in the step's state,
 * keyed by the parameters it was built from; Concat copies an input whose scale and zero
 * point are Y's and builds a table per run for each other input, as ONNX Runtime 1.30. */
#include <math.h>
#include <string.h>

#include "lut8.h"
#include "op.h"
#include "parallel.h"
#include "qparam.h"
#include "quant_loops.h"

/* the table rows (om_op.param): which function */
enum { QLUT_SIGMOID = 0, QLUT_LEAKY_RELU = 1, QLUT_IDENTITY = 2 };

/* MLAS's logistic function (Eigen's rational approximation over [-18, 18], FMA3 order) */
static float qlut_logistic(float x)
{
	static const float a[5] = {4.37031012579801e-11f, 1.15627324459942e-07f,
				   6.08574864600143e-05f, 8.51377133304701e-03f,
				   2.48287947061529e-01f};
	static const float b[6] = {6.10247389755681e-13f, 5.76102136993427e-09f,
				   6.29106785017040e-06f, 1.70198817374094e-03f,
				   1.16817656904453e-01f, 9.93151921023180e-01f};
	x = x < -18.0f ? -18.0f : x > 18.0f ? 18.0f : x;
	const float x2 = x * x;
	float p = a[0], q = b[0];
	for (int k = 1; k < 5; k++)
		p = fmaf(p, x2, a[k]);
	for (int k = 1; k < 6; k++)
		q = fmaf(q, x2, b[k]);
	const float y = p * x / q + 0.5f;
	return y < 0.0f ? 0.0f : y > 1.0f ? 1.0f : y;
}

/* table[i] for byte i of an int8 (sgn) or uint8 x with parameters xp, into y's */
static void qlut_build(uint8_t table[256], int fn, float alpha, bool sgn, om_qparam xp,
		       om_qparam yp)
{
	float v[256];
	for (int i = 0; i < 256; i++) {
		const float x = xp.scale * (float)((sgn ? (int8_t)i : i) - xp.zp);
		v[i] = fn == QLUT_SIGMOID ? qlut_logistic(x)
		       : fn == QLUT_LEAKY_RELU ? (x >= 0.0f ? x : alpha * x)
		       : x;
	}
	const float zp = (float)yp.zp;
	const om_qloop q = {.x = v, .y = table, .sc = &yp.scale, .zp = &zp, .n = 256,
			    .inner = 256, .A = 1, .qdt = sgn ? OM_INT8 : OM_UINT8,
			    .quantize = true};
	om_qloop_run(&q, 1);
}

typedef struct qlut_job {
	const uint8_t *x, *table;
	uint8_t *y;
} qlut_job;

static void qlut_piece(void *arg, int64_t lo, int64_t hi)
{
	const qlut_job *j = arg;
	om_lut8(j->table, j->x + lo, j->y + lo, hi - lo);
}

/* ---- QLinearSigmoid, QLinearLeakyRelu: X x_scale [x_zp] y_scale [y_zp] -> Y --------------- */

static om_kind qact_check(om_ctx *c, om_qparam *xp, om_qparam *yp)
{
	const om_tensor *x = c->in[0];
	if (!x || !om_is_q8(x->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "X int8 or uint8");
	om_kind rc = om_qparam_get(c, 1, 2, x->dtype, xp);
	return rc ? rc : om_qparam_get(c, 3, 4, x->dtype, yp);
}

static om_kind qact_infer(om_ctx *c)
{
	om_kind rc = qact_check(c, NULL, NULL);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	return rc;
}

/* the step's table, for the parameters in its key */
typedef struct qact_state {
	int64_t key[5]; /* x scale bits, x zp, y scale bits, y zp, alpha bits */
	uint8_t table[256];
} qact_state;

static om_kind qact_kernel(om_ctx *c)
{
	om_qparam xp, yp;
	om_kind rc = qact_check(c, &xp, &yp);
	if (rc)
		return rc;
	const bool sgn = c->in[0]->dtype == OM_INT8;
	const float alpha = (float)om_attr_float(c->node, "alpha", 0.01f);
	uint32_t bits[3];
	memcpy(&bits[0], &xp.scale, 4), memcpy(&bits[1], &yp.scale, 4), memcpy(&bits[2], &alpha, 4);
	const int64_t key[5] = {bits[0], xp.zp, bits[1], yp.zp, bits[2]};
	bool made = false;
	qact_state *s = om_ctx_state_keyed(c, NULL, key, 5, sizeof *s, &made);
	uint8_t local[256];
	uint8_t *table = s ? s->table : local;
	if (!s || made)
		qlut_build(table, c->op->param, alpha, sgn, xp, yp);
	qlut_job j = {c->in[0]->data, table, c->out[0]->data};
	om_par_for(c->threads, om_tensor_numel(c->in[0]), 65536, qlut_piece, &j);
	return OM_OK;
}

/* ---- QLinearConcat: Y_scale Y_zero_point (X x_scale x_zero_point)... -> Y ----------------- */

static om_kind qcat_geometry(om_ctx *c, int32_t *axis, int64_t *dims)
{
	const om_tensor *yz = om_ctx_in(c, 1);
	if (c->nin < 5 || (c->nin - 2) % 3 || !yz || !om_is_q8(yz->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"needs Y_scale, an 8-bit Y_zero_point and (X, scale, zero point) "
				"triplets");
	om_kind rc = om_qparam_get(c, 0, 1, yz->dtype, NULL);
	const om_tensor *x0 = c->in[2];
	if (!rc && x0)
		rc = om_norm_axis(c, om_attr_int(c->node, "axis", 0), x0->rank, axis);
	if (rc || !x0 || x0->rank < 1)
		return rc ? rc : om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "X of rank >= 1");
	memcpy(dims, x0->dims, sizeof *dims * (size_t)x0->rank);
	dims[*axis] = 0;
	for (int32_t t = 2; t < c->nin; t += 3) {
		const om_tensor *x = c->in[t];
		if ((rc = om_qparam_get(c, t + 1, t + 2, yz->dtype, NULL)))
			return rc;
		if (!x || x->dtype != yz->dtype || x->rank != x0->rank)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"input %d: of Y's type and X's rank", t);
		for (int32_t d = 0; d < x->rank; d++)
			if (d != *axis && x->dims[d] != x0->dims[d])
				return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
						"input %d: dim %d differs", t, d);
		dims[*axis] += x->dims[*axis];
	}
	return OM_OK;
}

static om_kind qcat_infer(om_ctx *c)
{
	int32_t axis = 0;
	int64_t dims[OM_MAX_RANK];
	om_kind rc = qcat_geometry(c, &axis, dims);
	if (!rc)
		om_set_shape(c->out[0], c->in[1]->dtype, c->in[2]->rank, dims);
	return rc;
}

static om_kind qcat_kernel(om_ctx *c)
{
	int32_t axis = 0;
	int64_t dims[OM_MAX_RANK];
	om_kind rc = qcat_geometry(c, &axis, dims);
	if (rc)
		return rc;
	const om_tensor *x0 = c->in[2];
	const bool sgn = c->in[1]->dtype == OM_INT8;
	int64_t outer = 1, inner = 1;
	for (int32_t d = 0; d < x0->rank; d++)
		if (d < axis)
			outer *= dims[d];
		else if (d > axis)
			inner *= dims[d];
	om_qparam yp;
	om_qparam_get(c, 0, 1, c->in[1]->dtype, &yp);
	const int64_t ypitch = dims[axis] * inner;
	uint8_t *y = c->out[0]->data;
	for (int32_t t = 2; t < c->nin; t += 3) {
		const om_tensor *x = c->in[t];
		const int64_t pitch = x->dims[axis] * inner;
		om_qparam xp;
		om_qparam_get(c, t + 1, t + 2, x->dtype, &xp);
		const bool copy = xp.scale == yp.scale && xp.zp == yp.zp;
		uint8_t table[256];
		if (!copy)
			qlut_build(table, QLUT_IDENTITY, 0, sgn, xp, yp);
		const uint8_t *src = x->data;
		for (int64_t o = 0; o < outer && pitch; o++) {
			uint8_t *dst = y + o * ypitch;
			if (copy)
				memcpy(dst, src + o * pitch, (size_t)pitch);
			else
				om_lut8(table, src + o * pitch, dst, pitch);
		}
		y += pitch;
	}
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_ms_QLinearLeakyRelu_1[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{NULL, 0, 0}};
/* QLinearLeakyRelu-1: X X_scale [X_zero_point] Y_scale [Y_zero_point] -> Y */
static const om_sig sig_ms_QLinearLeakyRelu_1 = {1, 4, 5, 1, 1, 0x14, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_ms_QLinearLeakyRelu_1, NULL};
/* QLinearSigmoid-1: X X_scale [X_zero_point] Y_scale [Y_zero_point] -> Y */
static const om_sig sig_ms_QLinearSigmoid_1 = {1, 4, 5, 1, 1, 0x14, 0x0, 0x0, 0x0, 0x0, 0x0,
	NULL, NULL};
static const om_sig_attr attrs_ms_QLinearConcat_1[] = {{"axis", OM_ATTR_INT, 1}, {NULL, 0, 0}};
/* QLinearConcat-1: Y_scale Y_zero_point inputs... -> Y */
static const om_sig sig_ms_QLinearConcat_1 = {1, 3, OM_MANY, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_ms_QLinearConcat_1, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"QLinearSigmoid", "com.microsoft", 1, qact_infer, qact_kernel, OM_OP_EXACT,
	 &sig_ms_QLinearSigmoid_1, OM_OPC_NONE, NULL, QLUT_SIGMOID, NULL},
	{"QLinearLeakyRelu", "com.microsoft", 1, qact_infer, qact_kernel, OM_OP_EXACT,
	 &sig_ms_QLinearLeakyRelu_1, OM_OPC_NONE, NULL, QLUT_LEAKY_RELU, NULL},
	{"QLinearConcat", "com.microsoft", 1, qcat_infer, qcat_kernel, OM_OP_EXACT,
	 &sig_ms_QLinearConcat_1, OM_OPC_NONE, NULL, QLUT_IDENTITY, NULL},
};

const om_op_table om_ops_qlinear_lut = OM_TABLE(rows);
