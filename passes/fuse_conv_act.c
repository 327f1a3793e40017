/*
 * fuse_conv_act.c — the fuse_conv_activation pass of om_optimize: Conv, optionally followed
 * by an Add of a tensor Z of the Conv output's shape (a residual), followed by an activation
 * (Relu, Tanh, Sigmoid, LeakyRelu, HardSigmoid, Clip with constant min and max), becomes
 * ONNX Runtime's com.microsoft FusedConv(X, W, B, Z) with the Conv's attributes plus
 * `activation` and `activation_params` (LeakyRelu: alpha; HardSigmoid: alpha, beta; Clip:
 * min, max). Y = activation(Conv(X, W, B) + Z). A Conv + Add without an activation becomes a
 * FusedConv without one.
 *
 * Conditions: the Conv is of the default domain, its output is float and private to the
 * chain, as is the Add's when an activation follows; Z is float with the Conv output's
 * inferred shape (numbers or the same symbols: an Add that broadcasts is left alone). The
 * pass runs only when the registry has a FusedConv row (kernels/conv/ops_conv.c).
 */
#include <string.h>

#include "activation.h"
#include "match.h"

typedef struct act_info {
	const char *name; /* FusedConv's activation */
	int32_t nparams;
	float params[2];
} act_info;

typedef struct scalar_arg {
	const om_graph *g;
	const om_node *n;
} scalar_arg;

static bool scalar_input(void *arg, int32_t k, double *v)
{
	const scalar_arg *s = arg;
	return om_match_scalar(s->g, s->n->in[k], 0, v);
}

/* The activation of node a with its parameters; false when a is none FusedConv takes. */
static bool activation(const om_graph *g, const om_node *a, act_info *ai)
{
	om_act act;
	scalar_arg sa = {g, a};
	if (!om_act_of(a, om_node_code(g->model, a), om_model_opset(g->model, a->domain),
		       scalar_input, &sa, &act))
		return false;
	ai->name = om_act_fused_name(act.kind, &ai->nparams);
	ai->params[0] = act.alpha;
	ai->params[1] = act.beta;
	return ai->name != NULL;
}

/* The Conv producing x, float, with x private to the chain */
static om_node *conv_of(om_pass_ctx *c, const om_graph *g, om_value *x)
{
	om_node *cv = om_match_producer(g, x, OM_OPC_CONV);
	const om_type *t = om_match_type(c, g, x);
	if (!cv || cv->nin < 2 || cv->nin > 3 || cv->nout != 1 || !cv->in[0] || !cv->in[1] ||
	    !t || t->elem != OM_FLOAT || !om_match_private(c, g, x, 1))
		return NULL;
	return cv;
}

/* Z of Add `add` reading the Conv output y: same inferred type and shape as y */
static om_value *residual(om_pass_ctx *c, const om_graph *g, const om_node *add, om_value *y)
{
	om_value *z = add->nout == 1 ? om_match_other(add, y) : NULL;
	const om_type *ty = om_match_type(c, g, y), *tz = om_match_type(c, g, z);
	if (!ty || !tz || tz->elem != ty->elem || tz->rank != ty->rank)
		return NULL;
	for (int32_t d = 0; d < ty->rank; d++)
		if (!om_dims_equal(ty->dims[d], tz->dims[d]))
			return NULL;
	return z;
}

static om_kind rewrite(om_pass_ctx *c, om_graph *g, om_node *cv, om_value *z, om_node *last,
		       const act_info *ai)
{
	om_value *in[4] = {cv->in[0], cv->in[1], cv->nin > 2 ? cv->in[2] : NULL, z};
	om_attr *attrs = cv->nattr ? om_arena_memdup(g->model->arena, cv->attrs,
						     sizeof *attrs * (size_t)cv->nattr) : NULL;
	int32_t nattr = cv->nattr;
	om_kind rc = om_import_domain(c->m, OM_MS_DOMAIN, c->st);
	if (!rc && cv->nattr && !attrs)
		rc = om_error(c->st, OM_ERR_NOMEM, cv, "out of memory");
	if (!rc)
		rc = om_node_become(c, g, last, OM_MS_DOMAIN, "FusedConv", z ? 4 : 3, in, c->st);
	if (rc)
		return rc;
	last->attrs = attrs;
	last->nattr = nattr;
	last->name = cv->name;
	if (ai) { /* om_node_set_attr moves the array: fill each attribute before the next */
		om_attr *a = om_node_set_attr(last, "activation", OM_ATTR_STRING);
		if (!a)
			return om_error(c->st, OM_ERR_NOMEM, cv, "out of memory");
		a->s = (om_str){ai->name, (int64_t)strlen(ai->name)};
		if (ai->nparams) {
			a = om_node_set_attr(last, "activation_params", OM_ATTR_FLOATS);
			float *f = om_arena_memdup(g->model->arena, ai->params,
						   sizeof(float) * (size_t)ai->nparams);
			if (!a || !f)
				return om_error(c->st, OM_ERR_NOMEM, cv, "out of memory");
			a->floats = f;
			a->n = ai->nparams;
		}
	}
	om_node_kill(c, cv);
	return OM_OK;
}

/* Conv [+ Add(Z)] + activation ending at node a; *done when rewritten */
static om_kind fuse_act(om_pass_ctx *c, om_graph *g, om_node *a, bool *done)
{
	act_info ai;
	*done = false;
	if (!activation(g, a, &ai))
		return OM_OK;
	om_node *cv = conv_of(c, g, a->in[0]), *add = NULL;
	om_value *z = NULL;
	if (!cv) {
		add = om_match_producer(g, a->in[0], OM_OPC_ADD);
		if (!add || add->nin != 2 || !om_match_private(c, g, a->in[0], 1))
			return OM_OK;
		for (int k = 0; k < 2 && !cv; k++)
			if ((cv = conv_of(c, g, add->in[k])) &&
			    !(z = residual(c, g, add, add->in[k])))
				cv = NULL;
		if (!cv)
			return OM_OK;
	}
	om_kind rc = rewrite(c, g, cv, z, a, &ai);
	if (!rc && add)
		om_node_kill(c, add);
	*done = !rc;
	return rc;
}

/* Conv + Add(Z) with no activation after it, at Add node n */
static om_kind fuse_add(om_pass_ctx *c, om_graph *g, om_node *n, bool *done)
{
	*done = false;
	if (n->nin != 2 || n->nout != 1 || !n->out[0])
		return OM_OK;
	for (int k = 0; k < 2; k++) {
		om_node *cv = conv_of(c, g, n->in[k]);
		om_value *z = cv ? residual(c, g, n, n->in[k]) : NULL;
		if (!z)
			continue;
		om_kind rc = rewrite(c, g, cv, z, n, NULL);
		*done = !rc;
		return rc;
	}
	return OM_OK;
}

om_kind om_pass_fuse_conv_act(om_pass_ctx *c, om_graph *g, int *changes)
{
	if (!om_match_runnable(c->m, OM_MS_DOMAIN, "FusedConv"))
		return OM_OK;
	/* activations first, so that an Add followed by one joins the activation's fusion */
	om_kind rc = om_rewrite_each(c, g, 0, fuse_act, changes);
	if (!rc)
		rc = om_rewrite_each(c, g, OM_OPC_BIT(OM_OPC_ADD), fuse_add, changes);
	return rc;
}
