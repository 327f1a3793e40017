/* grad.c — the node builder derivative rules write backward nodes with (grad.h). */
#include <string.h>

#include "grad.h"
#include "random.h"

static om_value *nomem(om_grad_ctx *c)
{
	om_error(c->st, OM_ERR_NOMEM, c->n, "out of memory writing the gradient");
	return NULL;
}

om_node *om_grad_node(om_grad_ctx *c, const char *op, int32_t nin, om_value *const *in)
{
	if (c->st->kind)
		return NULL;
	for (int32_t i = 0; i < nin; i++)
		if (!in[i]) { /* a failed step before has set st */
			if (!c->st->kind)
				om_grad_unsupported(c, "a backward input is missing");
			return NULL;
		}
	om_node *n = om_graph_add_node(c->g, op, "", "", nin, 1);
	om_value *o = n ? om_graph_fresh_value(c->g, "grad") : NULL;
	if (!o)
		return (om_node *)nomem(c);
	for (int32_t i = 0; i < nin; i++)
		n->in[i] = in[i];
	om_node_set_output(n, 0, o);
	return n;
}

om_value *om_grad_op(om_grad_ctx *c, const char *op, int32_t nin, om_value *const *in)
{
	om_node *n = om_grad_node(c, op, nin, in);
	return n ? n->out[0] : NULL;
}

om_value *om_grad_op1(om_grad_ctx *c, const char *op, om_value *a)
{
	return om_grad_op(c, op, 1, (om_value *[]){a});
}

om_value *om_grad_op2(om_grad_ctx *c, const char *op, om_value *a, om_value *b)
{
	return om_grad_op(c, op, 2, (om_value *[]){a, b});
}

bool om_grad_attr_int(om_grad_ctx *c, om_node *n, const char *name, int64_t v)
{
	if (!n)
		return false;
	om_attr *a = om_node_set_attr(n, name, OM_ATTR_INT);
	if (!a)
		return nomem(c), false;
	a->i = v;
	return true;
}

bool om_grad_attr_ints(om_grad_ctx *c, om_node *n, const char *name, const int64_t *v,
		       int64_t count)
{
	if (!n)
		return false;
	om_attr *a = om_node_set_attr(n, name, OM_ATTR_INTS);
	int64_t *p = a ? om_arena_alloc(c->g->model->arena,
					 sizeof *p * (size_t)(count ? count : 1)) : NULL;
	if (!p)
		return nomem(c), false;
	if (count)
		memcpy(p, v, sizeof *p * (size_t)count);
	a->ints = p;
	a->n = count;
	return true;
}

/* a Constant node holding t */
static om_value *constant(om_grad_ctx *c, om_tensor *t)
{
	if (!t)
		return nomem(c);
	om_node *n = om_grad_node(c, "Constant", 0, NULL);
	om_attr *a = n ? om_node_set_attr(n, "value", OM_ATTR_TENSOR) : NULL;
	if (!a)
		return n ? nomem(c) : NULL;
	a->t = t;
	return n->out[0];
}

static bool float_dtype(int32_t dtype)
{
	return dtype == OM_FLOAT16 || dtype == OM_BFLOAT16 || dtype == OM_FLOAT ||
	       dtype == OM_DOUBLE;
}

om_value *om_grad_scalar(om_grad_ctx *c, int32_t dtype, double v)
{
	if (!float_dtype(dtype)) {
		om_error(c->st, OM_ERR_UNSUPPORTED, c->n,
			 "gradient of %s: element type %d is not a float type", c->n->op,
			 (int)dtype);
		return NULL;
	}
	om_tensor *t = om_model_tensor(c->g->model, dtype, 0, NULL);
	if (t)
		om_random_store(t, 0, v);
	return constant(c, t);
}

om_value *om_grad_ints(om_grad_ctx *c, const int64_t *v, int64_t count)
{
	om_tensor *t = om_model_tensor(c->g->model, OM_INT64, 1, &count);
	if (t && count)
		memcpy(t->data, v, sizeof *v * (size_t)count);
	return constant(c, t);
}

om_value *om_grad_fill_like(om_grad_ctx *c, om_value *ref, int32_t dtype, double v)
{
	if (!float_dtype(dtype)) {
		om_error(c->st, OM_ERR_UNSUPPORTED, c->n,
			 "gradient of %s: element type %d is not a float type", c->n->op,
			 (int)dtype);
		return NULL;
	}
	om_node *n = om_grad_node(c, "ConstantOfShape", 1,
				  (om_value *[]){om_grad_op1(c, "Shape", ref)});
	const int64_t one = 1;
	om_tensor *t = n ? om_model_tensor(c->g->model, dtype, 1, &one) : NULL;
	om_attr *a = t ? om_node_set_attr(n, "value", OM_ATTR_TENSOR) : NULL;
	if (!a)
		return n ? nomem(c) : NULL;
	om_random_store(t, 0, v);
	a->t = t;
	return n->out[0];
}

om_value *om_grad_reshape_like(om_grad_ctx *c, om_value *g, om_value *x)
{
	/* allowzero (14): a 0 in Shape(x) is an extent of 0, not "copy g's dim" */
	om_node *n = om_grad_node(c, "Reshape", 2, (om_value *[]){g, om_grad_op1(c, "Shape", x)});
	if (n && c->opset >= 14)
		om_grad_attr_int(c, n, "allowzero", 1);
	return n && !c->st->kind ? n->out[0] : NULL;
}

int32_t om_grad_elem(const om_grad_ctx *c, const om_value *v)
{
	const om_type *t = c->type_of(c->arg, v);
	return t->kind == OM_TYPE_TENSOR ? t->elem : OM_UNDEFINED;
}

int32_t om_grad_rank(const om_grad_ctx *c, const om_value *v)
{
	const om_type *t = c->type_of(c->arg, v);
	return t->kind == OM_TYPE_TENSOR && t->rank <= OM_MAX_RANK ? t->rank : -1;
}

om_value *om_grad_unbroadcast(om_grad_ctx *c, om_value *g, const om_value *out, om_value *x)
{
	return om_grad_unbroadcast_batch(c, g, out, x, 0);
}

om_value *om_grad_unbroadcast_batch(om_grad_ctx *c, om_value *g, const om_value *out,
				    om_value *x, int32_t tail)
{
	if (!g)
		return NULL;
	const om_type *to = c->type_of(c->arg, out), *tx = c->type_of(c->arg, x);
	const int32_t ro = om_grad_rank(c, out), rx = om_grad_rank(c, x);
	if (ro < 0 || rx < 0 || rx > ro || tail > rx) {
		om_error(c->st, OM_ERR_UNSUPPORTED, c->n,
			 "gradient of %s: the rank of '%s' or of '%s' is not known", c->n->op,
			 x->name, out->name);
		return NULL;
	}
	int64_t axes[OM_MAX_RANK];
	int64_t na = 0;
	for (int32_t d = 0; d < ro - rx; d++)
		axes[na++] = d;
	for (int32_t d = 0; d < rx - tail; d++) {
		const om_dim dx = tx->dims[d], dout = to->dims[ro - rx + d];
		if (om_dims_equal(dx, dout))
			continue;
		if (dx.value == 1) {
			axes[na++] = ro - rx + d;
			continue;
		}
		if (dout.value == 1 && dx.value < 0) /* x's dim is 1 too */
			continue;
		om_error(c->st, OM_ERR_UNSUPPORTED, c->n,
			 "gradient of %s: dim %d of '%s' (%s) may or may not be broadcast to %s",
			 c->n->op, (int)d, x->name, dx.param ? dx.param : "?",
			 dout.param ? dout.param : "?");
		return NULL;
	}
	if (!na)
		return g;
	om_value *sum;
	if (c->opset >= 13) {
		sum = om_grad_op2(c, "ReduceSum", g, om_grad_ints(c, axes, na));
	} else {
		om_node *r = om_grad_node(c, "ReduceSum", 1, &g);
		om_grad_attr_ints(c, r, "axes", axes, na);
		sum = r ? r->out[0] : NULL;
	}
	return om_grad_reshape_like(c, sum, x);
}

int64_t om_grad_const_ints(const om_grad_ctx *c, const om_value *v, int64_t *out, int64_t max)
{
	return v && c->ints_of ? c->ints_of(c->arg, v, out, max) : -1;
}

om_kind om_grad_unsupported(om_grad_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_UNSUPPORTED, c->n, "gradient of %s: %s", c->n->op, what);
}
