/* ops_random.c — RandomNormal, RandomUniform, their -Like forms, Bernoulli and Multinomial:
 * rows with shape inference and no kernel yet. Their outputs differ from run to run
 * (OM_OP_RANDOM), so they are never folded, evaluated at plan time or merged. */
#include "op.h"

static om_kind bad(om_ctx *c, const char *msg)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", msg);
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
	if (c->out[0])
		om_set_shape(c->out[0], (int32_t)om_attr_int(c->node, "dtype", x->dtype), x->rank,
			     x->dims);
	return OM_OK;
}

/* Multinomial: input [batch, classes] -> [batch, sample_size], int32 by default */
static om_kind multinomial_infer(om_ctx *c)
{
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL;
	if (!x || x->rank != 2)
		return bad(c, "input must be 2-D [batch, classes]");
	int64_t n = om_attr_int(c->node, "sample_size", 1);
	if (n < 0)
		return bad(c, "sample_size is negative");
	int64_t dims[2] = {x->dims[0], n};
	if (c->out[0])
		om_set_shape(c->out[0], (int32_t)om_attr_int(c->node, "dtype", OM_INT32), 2, dims);
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
	{"RandomNormal", "", 1, random_infer, NULL, OM_OP_RANDOM, &sig_RandomNormal_1, OM_OPC_NONE,
	 NULL, 0, NULL},
	{"RandomUniform", "", 1, random_infer, NULL, OM_OP_RANDOM, &sig_RandomUniform_1,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"RandomNormalLike", "", 1, like_infer, NULL, OM_OP_RANDOM, &sig_RandomNormalLike_1,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"RandomUniformLike", "", 1, like_infer, NULL, OM_OP_RANDOM, &sig_RandomUniformLike_1,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"Bernoulli", "", 15, like_infer, NULL, OM_OP_RANDOM, &sig_Bernoulli_15, OM_OPC_NONE, NULL,
	 0, NULL},
	{"Multinomial", "", 7, multinomial_infer, NULL, OM_OP_RANDOM, &sig_Multinomial_7,
	 OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_random = OM_TABLE(rows);
