/* ops_random.c — RandomNormal, RandomUniform, their -Like forms, Bernoulli and Multinomial.
 * Element i of an output (Multinomial: sample i of the row-major [batch, sample_size] output)
 * is drawn from Philox4x32-10 block i under the node's key (philox.h, random.h): the seed's
 * when the node has one, so a seeded node gives the same bits in every run, mode and thread
 * count. Their outputs differ from run to run otherwise (OM_OP_RANDOM), so they are never
 * folded, evaluated at plan time or merged. */
#include <math.h>
#include <stdlib.h>

#include "detmath.h"
#include "index_util.h"
#include "op.h"
#include "random.h"

static om_kind bad(om_ctx *c, const char *msg)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", msg);
}

/* the row's param: what one element is */
enum random_draw { DRAW_NORMAL, DRAW_UNIFORM, DRAW_BERNOULLI, DRAW_MULTINOMIAL };

static bool float_type(int32_t t)
{
	return t == OM_FLOAT || t == OM_DOUBLE || t == OM_FLOAT16 || t == OM_BFLOAT16;
}

/* the output type the row allows: a float type (Random*), a number or bool (Bernoulli), int32
 * or int64 (Multinomial) */
static om_kind check_dtype(om_ctx *c, int32_t dtype)
{
	const int32_t p = c->op->param;
	if (p == DRAW_MULTINOMIAL ? dtype == OM_INT32 || dtype == OM_INT64
	    : p == DRAW_BERNOULLI ? om_random_store_type(dtype)
				  : float_type(dtype))
		return OM_OK;
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "dtype %s is not allowed",
			om_dtype_name(dtype));
}

/* RandomNormal, RandomUniform: dtype (float by default) and shape from attributes */
static om_kind random_infer(om_ctx *c)
{
	const om_attr *a = om_node_attr(c->node, "shape");
	if (!a || a->type != OM_ATTR_INTS)
		return bad(c, "attribute 'shape' is missing or not a list of ints");
	int64_t rank = a->n;
	const int64_t *shape = a->ints;
	if (rank > OM_MAX_RANK)
		return bad(c, "attribute 'shape' has too many entries");
	for (int64_t i = 0; i < rank; i++)
		if (shape[i] < 0)
			return bad(c, "attribute 'shape' has a negative extent");
	if (!c->out[0])
		return OM_OK;
	int32_t dtype = (int32_t)om_attr_int(c->node, "dtype", OM_FLOAT);
	om_kind rc = check_dtype(c, dtype);
	if (rc)
		return rc;
	if (om_shape_numel((int32_t)rank, shape) < 0)
		return bad(c, "attribute 'shape' is too large");
	om_set_shape(c->out[0], dtype, (int32_t)rank, shape);
	return OM_OK;
}

/* RandomNormalLike, RandomUniformLike, Bernoulli: input 0's shape, dtype from the attribute
 * or input 0 */
static om_kind like_infer(om_ctx *c)
{
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL;
	if (!x)
		return bad(c, "input 0 is missing");
	/* Bernoulli reads its input as probabilities; the -Like forms only its shape */
	if (c->op->param == DRAW_BERNOULLI && !float_type(x->dtype))
		return bad(c, "input is not a floating-point tensor");
	const int32_t dtype = (int32_t)om_attr_int(c->node, "dtype", x->dtype);
	om_kind rc = check_dtype(c, dtype);
	if (rc)
		return rc;
	if (c->out[0])
		om_set_shape(c->out[0], dtype, x->rank, x->dims);
	return OM_OK;
}

/* Multinomial: input [batch, classes] -> [batch, sample_size], int32 by default */
static om_kind multinomial_infer(om_ctx *c)
{
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL;
	if (!x || x->rank != 2)
		return bad(c, "input must be 2-D [batch, classes]");
	if (!float_type(x->dtype))
		return bad(c, "input is not a floating-point tensor");
	om_kind rc = check_dtype(c, (int32_t)om_attr_int(c->node, "dtype", OM_INT32));
	if (rc)
		return rc;
	int64_t n = om_attr_int(c->node, "sample_size", 1);
	if (n < 0)
		return bad(c, "sample_size is negative");
	if (x->dims[1] == 0 && x->dims[0] > 0 && n > 0)
		return bad(c, "input has no classes to draw from");
	int64_t dims[2] = {x->dims[0], n};
	if (c->out[0])
		om_set_shape(c->out[0], (int32_t)om_attr_int(c->node, "dtype", OM_INT32), 2, dims);
	return OM_OK;
}

/* ---- kernels ---------------------------------------------------------------------------- */

/* a standard normal from block i: Box-Muller on two 53-bit uniforms, in detmath's double
 * functions (the same bits on every instruction set) */
static double normal_at(om_philox_key key, int64_t i)
{
	uint32_t w[4];
	om_philox4x32(key, (uint64_t)i, 0, w);
	const double u1 = om_philox_unit_open0(w[0], w[1]), u2 = om_philox_unit(w[2], w[3]);
	return sqrt(-2.0 * om_det_log(u1)) * om_det_cos(6.283185307179586 * u2);
}

static double uniform_at(om_philox_key key, int64_t i)
{
	uint32_t w[4];
	om_philox4x32(key, (uint64_t)i, 0, w);
	return om_philox_unit(w[0], w[1]);
}

/* a value of dtype in [low, high), just below high: for a draw close to high that rounded up
 * to it when stored. high - |high| * 2^-p (p: dtype's fraction bits) is exact and at least one
 * spacing below high, so it rounds to below high. */
static double below(double low, double high, int32_t dtype)
{
	const int p = dtype == OM_FLOAT16 ? 10 : dtype == OM_BFLOAT16 ? 7 : dtype == OM_FLOAT ? 23 : 52;
	const double step = ldexp(high != 0 ? fabs(high) : high - low, -p);
	return fmax(high - step, low);
}

/* RandomNormal, RandomUniform and their -Like forms: out[0] has its inferred type and shape */
static om_kind random_kernel(om_ctx *c)
{
	om_tensor *y = c->out[0];
	if (!float_type(y->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"dtype %s is not a floating-point type", om_dtype_name(y->dtype));
	const om_philox_key key = om_random_key(c, "seed");
	const int64_t n = om_tensor_numel(y);
	if (c->op->param == DRAW_NORMAL) {
		const double mean = om_attr_float(c->node, "mean", 0.0f);
		const double scale = om_attr_float(c->node, "scale", 1.0f);
		for (int64_t i = 0; i < n; i++)
			om_random_store(y, i, mean + scale * normal_at(key, i));
	} else {
		const double low = om_attr_float(c->node, "low", 0.0f);
		const double high = om_attr_float(c->node, "high", 1.0f);
		for (int64_t i = 0; i < n; i++) {
			om_random_store(y, i, low + (high - low) * uniform_at(key, i));
			if (high > low && om_ix_float_at(y, i) >= high)
				om_random_store(y, i, below(low, high, y->dtype));
		}
	}
	return OM_OK;
}

/* Bernoulli: 1 where a uniform in [0, 1) is below p (so always for p >= 1, never for p <= 0) */
static om_kind bernoulli_kernel(om_ctx *c)
{
	const om_tensor *p = c->in[0];
	om_tensor *y = c->out[0];
	if (!om_ix_is_float(p->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"input of type %s is not a floating-point type",
				om_dtype_name(p->dtype));
	if (!om_random_store_type(y->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "dtype %s is not numeric",
				om_dtype_name(y->dtype));
	const om_philox_key key = om_random_key(c, "seed");
	const int64_t n = om_tensor_numel(y);
	for (int64_t i = 0; i < n; i++)
		om_random_store(y, i, uniform_at(key, i) < om_ix_float_at(p, i) ? 1.0 : 0.0);
	return OM_OK;
}

/* Multinomial: each row of x holds unnormalized log-probabilities of its classes; sample s of
 * row b is the first class whose cumulative weight exceeds a uniform times the total. A row
 * without a positive finite total (all -inf, NaN) gives its last class. */
static om_kind multinomial_kernel(om_ctx *c)
{
	const om_tensor *x = c->in[0];
	om_tensor *y = c->out[0];
	if (!om_ix_is_float(x->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"input of type %s is not a floating-point type",
				om_dtype_name(x->dtype));
	if (y->dtype != OM_INT32 && y->dtype != OM_INT64)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"dtype %s is not int32 or int64", om_dtype_name(y->dtype));
	const int64_t batch = x->dims[0], k = x->dims[1], ns = y->dims[1];
	if (batch == 0 || ns == 0)
		return OM_OK;
	if (k == 0)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "input has no classes");
	if ((uint64_t)k > SIZE_MAX / sizeof(double))
		return om_error(c->st, OM_ERR_NOMEM, c->node, "too many classes");
	om_kind rc = om_ctx_reserve(c, (size_t)k * sizeof(double), "Multinomial's weights");
	if (rc)
		return rc;
	double *cum = malloc((size_t)k * sizeof *cum);
	if (!cum)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	const om_philox_key key = om_random_key(c, "seed");
	for (int64_t b = 0; b < batch; b++) {
		double top = -INFINITY, total = 0;
		for (int64_t j = 0; j < k; j++) {
			const double v = om_ix_float_at(x, b * k + j);
			top = v > top ? v : top;
		}
		for (int64_t j = 0; j < k; j++) {
			const double v = om_ix_float_at(x, b * k + j);
			total += isfinite(top) && v == v ? om_det_exp(v - top) : 0.0;
			cum[j] = total;
		}
		for (int64_t s = 0; s < ns; s++) {
			const double u = uniform_at(key, b * ns + s) * total;
			int64_t lo = 0, hi = k - 1; /* the first j with cum[j] > u, else k - 1 */
			while (lo < hi) {
				const int64_t mid = lo + (hi - lo) / 2;
				if (cum[mid] > u)
					hi = mid;
				else
					lo = mid + 1;
			}
			om_random_store(y, b * ns + s, (double)lo);
		}
	}
	free(cum);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_RandomNormal_1_v22[] = {{"dtype", OM_ATTR_INT, 0},
	{"mean", OM_ATTR_FLOAT, 0}, {"scale", OM_ATTR_FLOAT, 0}, {"seed", OM_ATTR_FLOAT, 0},
	{"shape", OM_ATTR_INTS, 1}, {NULL, 0, 0}};
/* RandomNormal-22: - -> output */
static const om_sig sig_RandomNormal_1_v22 = {22, 0, 0, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x1,
	attrs_RandomNormal_1_v22, NULL};
static const om_sig_attr attrs_RandomNormal_1[] = {{"dtype", OM_ATTR_INT, 0},
	{"mean", OM_ATTR_FLOAT, 0}, {"scale", OM_ATTR_FLOAT, 0}, {"seed", OM_ATTR_FLOAT, 0},
	{"shape", OM_ATTR_INTS, 1}, {NULL, 0, 0}};
/* RandomNormal-1: - -> output */
static const om_sig sig_RandomNormal_1 = {1, 0, 0, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x0,
	attrs_RandomNormal_1, &sig_RandomNormal_1_v22};
static const om_sig_attr attrs_RandomUniform_1_v22[] = {{"dtype", OM_ATTR_INT, 0},
	{"high", OM_ATTR_FLOAT, 0}, {"low", OM_ATTR_FLOAT, 0}, {"seed", OM_ATTR_FLOAT, 0},
	{"shape", OM_ATTR_INTS, 1}, {NULL, 0, 0}};
/* RandomUniform-22: - -> output */
static const om_sig sig_RandomUniform_1_v22 = {22, 0, 0, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x1,
	attrs_RandomUniform_1_v22, NULL};
static const om_sig_attr attrs_RandomUniform_1[] = {{"dtype", OM_ATTR_INT, 0},
	{"high", OM_ATTR_FLOAT, 0}, {"low", OM_ATTR_FLOAT, 0}, {"seed", OM_ATTR_FLOAT, 0},
	{"shape", OM_ATTR_INTS, 1}, {NULL, 0, 0}};
/* RandomUniform-1: - -> output */
static const om_sig sig_RandomUniform_1 = {1, 0, 0, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x0,
	attrs_RandomUniform_1, &sig_RandomUniform_1_v22};
static const om_sig_attr attrs_RandomNormalLike_1_v22[] = {{"dtype", OM_ATTR_INT, 0},
	{"mean", OM_ATTR_FLOAT, 0}, {"scale", OM_ATTR_FLOAT, 0}, {"seed", OM_ATTR_FLOAT, 0},
	{NULL, 0, 0}};
/* RandomNormalLike-22: input -> output */
static const om_sig sig_RandomNormalLike_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_RandomNormalLike_1_v22, NULL};
static const om_sig_attr attrs_RandomNormalLike_1[] = {{"dtype", OM_ATTR_INT, 0},
	{"mean", OM_ATTR_FLOAT, 0}, {"scale", OM_ATTR_FLOAT, 0}, {"seed", OM_ATTR_FLOAT, 0},
	{NULL, 0, 0}};
/* RandomNormalLike-1: input -> output */
static const om_sig sig_RandomNormalLike_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_RandomNormalLike_1, &sig_RandomNormalLike_1_v22};
static const om_sig_attr attrs_RandomUniformLike_1_v22[] = {{"dtype", OM_ATTR_INT, 0},
	{"high", OM_ATTR_FLOAT, 0}, {"low", OM_ATTR_FLOAT, 0}, {"seed", OM_ATTR_FLOAT, 0},
	{NULL, 0, 0}};
/* RandomUniformLike-22: input -> output */
static const om_sig sig_RandomUniformLike_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_RandomUniformLike_1_v22, NULL};
static const om_sig_attr attrs_RandomUniformLike_1[] = {{"dtype", OM_ATTR_INT, 0},
	{"high", OM_ATTR_FLOAT, 0}, {"low", OM_ATTR_FLOAT, 0}, {"seed", OM_ATTR_FLOAT, 0},
	{NULL, 0, 0}};
/* RandomUniformLike-1: input -> output */
static const om_sig sig_RandomUniformLike_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_RandomUniformLike_1, &sig_RandomUniformLike_1_v22};
static const om_sig_attr attrs_Bernoulli_15_v22[] = {{"dtype", OM_ATTR_INT, 0},
	{"seed", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Bernoulli-22: input -> output */
static const om_sig sig_Bernoulli_15_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_Bernoulli_15_v22, NULL};
static const om_sig_attr attrs_Bernoulli_15[] = {{"dtype", OM_ATTR_INT, 0},
	{"seed", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Bernoulli-15: input -> output */
static const om_sig sig_Bernoulli_15 = {15, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x1,
	attrs_Bernoulli_15, &sig_Bernoulli_15_v22};
static const om_sig_attr attrs_Multinomial_7_v22[] = {{"dtype", OM_ATTR_INT, 0},
	{"sample_size", OM_ATTR_INT, 0}, {"seed", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Multinomial-22: input -> output */
static const om_sig sig_Multinomial_7_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x1, 0x0,
	attrs_Multinomial_7_v22, NULL};
static const om_sig_attr attrs_Multinomial_7[] = {{"dtype", OM_ATTR_INT, 0},
	{"sample_size", OM_ATTR_INT, 0}, {"seed", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Multinomial-7: input -> output */
static const om_sig sig_Multinomial_7 = {7, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x0, 0x0,
	attrs_Multinomial_7, &sig_Multinomial_7_v22};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"RandomNormal", "", 1, random_infer, random_kernel, OM_OP_RANDOM | OM_OP_EXACT,
	 &sig_RandomNormal_1, OM_OPC_NONE, NULL, DRAW_NORMAL, NULL},
	{"RandomUniform", "", 1, random_infer, random_kernel, OM_OP_RANDOM | OM_OP_EXACT,
	 &sig_RandomUniform_1, OM_OPC_NONE, NULL, DRAW_UNIFORM, NULL},
	{"RandomNormalLike", "", 1, like_infer, random_kernel, OM_OP_RANDOM | OM_OP_EXACT,
	 &sig_RandomNormalLike_1, OM_OPC_NONE, NULL, DRAW_NORMAL, NULL},
	{"RandomUniformLike", "", 1, like_infer, random_kernel, OM_OP_RANDOM | OM_OP_EXACT,
	 &sig_RandomUniformLike_1, OM_OPC_NONE, NULL, DRAW_UNIFORM, NULL},
	{"Bernoulli", "", 15, like_infer, bernoulli_kernel, OM_OP_RANDOM | OM_OP_EXACT,
	 &sig_Bernoulli_15, OM_OPC_NONE, NULL, DRAW_BERNOULLI, NULL},
	{"Multinomial", "", 7, multinomial_infer, multinomial_kernel, OM_OP_RANDOM | OM_OP_EXACT,
	 &sig_Multinomial_7, OM_OPC_NONE, NULL, DRAW_MULTINOMIAL, NULL},
};

const om_op_table om_ops_random = OM_TABLE(rows);
