/* ops_training.c — ai.onnx.preview.training's optimizers: Adagrad, Adam, Momentum (standard
 * and Nesterov), and Gradient's row (below). One optimizer node updates n tensors: inputs R
 * (learning rate, scalar), T (update count, int64 scalar), then n-tensor groups (X; G; H or
 * V, H), outputs the new groups. Each element is computed in double from the spec's formulas
 * and rounded once to its type. */
#include <math.h>
#include <string.h>

#include "detmath.h"
#include "index_util.h"
#include "op.h"
#include "random.h"

/* the row's param: which optimizer, and so how many groups in and out */
enum optimizer { OPT_ADAGRAD, OPT_ADAM, OPT_MOMENTUM };
static const int groups_in[] = {3, 4, 3};  /* X G H; X G V H; X G V */
static const int groups_out[] = {2, 3, 2}; /* X H; X V H; X V */

static om_kind bad(om_ctx *c, const char *msg)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", msg);
}

static bool float_type(int32_t t)
{
	return t == OM_FLOAT || t == OM_DOUBLE;
}

/* n, the tensors per group, after checking the node's arity, types and shapes */
static om_kind check(om_ctx *c, int64_t *n_out)
{
	const int gi = groups_in[c->op->param], go = groups_out[c->op->param];
	if (c->nin < 2 || (c->nin - 2) % gi || c->nin == 2)
		return bad(c, "inputs must be R, T and the same number of tensors per group");
	const int64_t n = (c->nin - 2) / gi;
	if (c->nout != go * n)
		return bad(c, "outputs must be the new values of each updated group");
	const om_tensor *r = c->in[0], *t = c->in[1];
	if (!r || !t)
		return bad(c, "R and T are required");
	if (!float_type(r->dtype) || om_tensor_numel(r) != 1)
		return bad(c, "R must be a float or double scalar");
	if (t->dtype != OM_INT64 || om_tensor_numel(t) != 1)
		return bad(c, "T must be an int64 scalar");
	for (int64_t i = 0; i < n; i++) {
		const om_tensor *x = c->in[2 + i];
		for (int g = 0; g < gi; g++) {
			const om_tensor *v = c->in[2 + g * n + i];
			if (!v)
				return bad(c, "an input is missing");
			if (!float_type(v->dtype) || v->dtype != x->dtype)
				return bad(c, "the tensors of one update must share a float type");
			if (v->rank != x->rank ||
			    memcmp(v->dims, x->dims, sizeof *x->dims * (size_t)x->rank))
				return bad(c, "the tensors of one update must share a shape");
		}
	}
	*n_out = n;
	return OM_OK;
}

static om_kind training_infer(om_ctx *c)
{
	int64_t n;
	om_kind rc = check(c, &n);
	if (rc)
		return rc;
	if (c->op->param == OPT_MOMENTUM) {
		const char *mode = om_attr_string(c->node, "mode", "");
		if (strcmp(mode, "standard") && strcmp(mode, "nesterov"))
			return bad(c, "mode must be \"standard\" or \"nesterov\"");
	}
	const int go = groups_out[c->op->param];
	for (int g = 0; g < go; g++)
		for (int64_t i = 0; i < n; i++) {
			/* output group g is input group 0 (X) then the state groups (2...) */
			const om_tensor *src = c->in[2 + (g ? g + 1 : 0) * n + i];
			if (c->out[g * n + i])
				om_set_shape(c->out[g * n + i], src->dtype, src->rank, src->dims);
		}
	return OM_OK;
}

static double at(const om_tensor *t, int64_t i)
{
	return om_ix_float_at(t, i);
}

static om_kind training_kernel(om_ctx *c)
{
	int64_t n;
	om_kind rc = check(c, &n);
	if (rc)
		return rc;
	const double r = at(c->in[0], 0);
	const int64_t t = *(const int64_t *)c->in[1]->data;
	const double norm = om_attr_float(c->node, "norm_coefficient", 0.0f);
	for (int64_t i = 0; i < n; i++) {
		const om_tensor *x = c->in[2 + i], *g = c->in[2 + n + i];
		const int64_t ne = om_tensor_numel(x);
		om_tensor *xo = c->out[i], *o1 = c->out[n + i];
		om_tensor *o2 = c->op->param == OPT_ADAM ? c->out[2 * n + i] : NULL;
		if (c->op->param == OPT_ADAGRAD) {
			const om_tensor *h = c->in[2 + 2 * n + i];
			const double eps = om_attr_float(c->node, "epsilon", 1e-6f);
			const double decay = om_attr_float(c->node, "decay_factor", 0.0f);
			const double rt = r / (1.0 + (double)t * decay);
			for (int64_t e = 0; e < ne; e++) {
				const double gr = norm * at(x, e) + at(g, e);
				const double hn = at(h, e) + gr * gr;
				if (xo)
					om_random_store(xo, e, at(x, e) - rt * gr / (sqrt(hn) + eps));
				if (o1)
					om_random_store(o1, e, hn);
			}
		} else if (c->op->param == OPT_ADAM) {
			const om_tensor *v = c->in[2 + 2 * n + i], *h = c->in[2 + 3 * n + i];
			const double alpha = om_attr_float(c->node, "alpha", 0.9f);
			const double beta = om_attr_float(c->node, "beta", 0.999f);
			const double eps = om_attr_float(c->node, "epsilon", 1e-6f);
			const double post = om_attr_float(c->node, "norm_coefficient_post", 0.0f);
			const double ra = t > 0 ? r * sqrt(1.0 - om_det_pow(beta, (double)t)) /
							  (1.0 - om_det_pow(alpha, (double)t))
						: r;
			for (int64_t e = 0; e < ne; e++) {
				const double gr = norm * at(x, e) + at(g, e);
				const double vn = alpha * at(v, e) + (1.0 - alpha) * gr;
				const double hn = beta * at(h, e) + (1.0 - beta) * gr * gr;
				const double xn = at(x, e) - ra * (vn / (sqrt(hn) + eps));
				if (xo)
					om_random_store(xo, e, (1.0 - post) * xn);
				if (o1)
					om_random_store(o1, e, vn);
				if (o2)
					om_random_store(o2, e, hn);
			}
		} else {
			const om_tensor *v = c->in[2 + 2 * n + i];
			const double alpha = om_attr_float(c->node, "alpha", 0.0f);
			const double beta = t > 0 ? om_attr_float(c->node, "beta", 0.0f) : 1.0;
			const bool nesterov = !strcmp(om_attr_string(c->node, "mode", ""), "nesterov");
			for (int64_t e = 0; e < ne; e++) {
				const double gr = norm * at(x, e) + at(g, e);
				const double vn = alpha * at(v, e) + beta * gr;
				const double step = nesterov ? gr + alpha * vn : vn;
				if (xo)
					om_random_store(xo, e, at(x, e) - r * step);
				if (o1)
					om_random_store(o1, e, vn);
			}
		}
	}
	return OM_OK;
}

/* ---- Gradient ----
 * Gradient (xs, y, zs) names its forward computation by value names of its graph; a session
 * lowers it into backward nodes before planning (passes/lower_gradient.c, by the op rows'
 * derivative rules). The row types its outputs (dY/dX_i has X_i's type and shape) for the
 * passes and the planner; its kernel only runs for a Gradient the lowering did not replace
 * (one inside a subgraph), and says so. */
static om_kind gradient_infer(om_ctx *c)
{
	const om_attr *xs = om_node_attr(c->node, "xs");
	const int64_t nxs = xs && xs->type == OM_ATTR_STRINGS ? xs->n : 0;
	if (nxs != c->nout || c->nout > c->nin)
		return bad(c, "Gradient has one output per name in xs, and an input for each");
	for (int32_t i = 0; i < c->nout; i++)
		if (c->out[i] && c->in[i])
			om_set_shape(c->out[i], c->in[i]->dtype, c->in[i]->rank, c->in[i]->dims);
	return OM_OK;
}

static om_kind gradient_kernel(om_ctx *c)
{
	return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
			"Gradient runs lowered into backward nodes, which a session does for the "
			"main graph's Gradient nodes only");
}

/* ---- signatures (by hand from ONNX's ai.onnx.preview.training schemas, version 1) ---- */

static const om_sig_attr attrs_Adagrad_1[] = {{"decay_factor", OM_ATTR_FLOAT, 0},
	{"epsilon", OM_ATTR_FLOAT, 0}, {"norm_coefficient", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Adagrad-1: R T inputs... -> outputs... */
static const om_sig sig_Adagrad_1 = {1, 3, OM_MANY, 1, OM_MANY, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_Adagrad_1, NULL};
static const om_sig_attr attrs_Adam_1[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{"beta", OM_ATTR_FLOAT, 0}, {"epsilon", OM_ATTR_FLOAT, 0},
	{"norm_coefficient", OM_ATTR_FLOAT, 0}, {"norm_coefficient_post", OM_ATTR_FLOAT, 0},
	{NULL, 0, 0}};
/* Adam-1: R T inputs... -> outputs... */
static const om_sig sig_Adam_1 = {1, 3, OM_MANY, 1, OM_MANY, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_Adam_1, NULL};
static const om_sig_attr attrs_Momentum_1[] = {{"alpha", OM_ATTR_FLOAT, 1},
	{"beta", OM_ATTR_FLOAT, 1}, {"mode", OM_ATTR_STRING, 1},
	{"norm_coefficient", OM_ATTR_FLOAT, 1}, {NULL, 0, 0}};
/* Momentum-1: R T inputs... -> outputs... */
static const om_sig sig_Momentum_1 = {1, 3, OM_MANY, 1, OM_MANY, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_Momentum_1, NULL};

static const om_sig_attr attrs_Gradient_1[] = {{"xs", OM_ATTR_STRINGS, 1},
	{"y", OM_ATTR_STRING, 1}, {"zs", OM_ATTR_STRINGS, 0}, {NULL, 0, 0}};
/* Gradient-1: Inputs... -> Outputs... */
static const om_sig sig_Gradient_1 = {1, 1, OM_MANY, 1, OM_MANY, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_Gradient_1, NULL};

#define D "ai.onnx.preview.training"
static const om_op rows[] = {
	{"Adagrad", D, 1, training_infer, training_kernel, OM_OP_EXACT, &sig_Adagrad_1,
	 OM_OPC_NONE, NULL, OPT_ADAGRAD, NULL},
	{"Adam", D, 1, training_infer, training_kernel, OM_OP_EXACT, &sig_Adam_1, OM_OPC_NONE,
	 NULL, OPT_ADAM, NULL},
	{"Momentum", D, 1, training_infer, training_kernel, OM_OP_EXACT, &sig_Momentum_1,
	 OM_OPC_NONE, NULL, OPT_MOMENTUM, NULL},
	{"Gradient", D, 1, gradient_infer, gradient_kernel, 0, &sig_Gradient_1, OM_OPC_GRADIENT,
	 NULL, 0, NULL},
};

const om_op_table om_ops_training = OM_TABLE(rows);
