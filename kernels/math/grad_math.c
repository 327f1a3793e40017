/* grad_math.c — derivative rules of the element-wise, MatMul and Reduce rows (ops/grad.h):
 * each sets dx[i] = dy/dx_i for the inputs in `want`, from G = dy[0] (the gradient of out[0]),
 * NumPy broadcasting undone by om_grad_unbroadcast. The shape ops' rules: kernels/move. */
#include "grad.h"

#define G (c->dy[0])
#define IN(i) (c->n->in[i])
#define OUT (c->n->out[0])
#define WANT(i) ((c->want >> (i)) & 1)

static om_value *op2(om_grad_ctx *c, const char *op, om_value *a, om_value *b)
{
	return om_grad_op2(c, op, a, b);
}

/* dx[i] = unbroadcast(g) when input i is wanted */
static void set(om_grad_ctx *c, int32_t i, om_value *g)
{
	if (WANT(i))
		c->dx[i] = om_grad_unbroadcast(c, g, OUT, IN(i));
}

static om_kind done(om_grad_ctx *c)
{
	return c->st->kind;
}

static int32_t elem(om_grad_ctx *c)
{
	return om_grad_elem(c, OUT);
}

/* v cast to the output's element type (NULL when a node could not be made) */
static om_value *cast_out(om_grad_ctx *c, om_value *v)
{
	om_node *n = om_grad_node(c, "Cast", 1, (om_value *[]){v});
	om_grad_attr_int(c, n, "to", elem(c));
	return n ? n->out[0] : NULL;
}

static om_kind grad_add(om_grad_ctx *c)
{
	set(c, 0, G);
	set(c, 1, G);
	return done(c);
}

static om_kind grad_sub(om_grad_ctx *c)
{
	set(c, 0, G);
	if (WANT(1))
		set(c, 1, om_grad_op1(c, "Neg", G));
	return done(c);
}

static om_kind grad_mul(om_grad_ctx *c)
{
	if (WANT(0))
		set(c, 0, op2(c, "Mul", G, IN(1)));
	if (WANT(1))
		set(c, 1, op2(c, "Mul", G, IN(0)));
	return done(c);
}

/* d(a / b) = g / b, -g * (a / b) / b */
static om_kind grad_div(om_grad_ctx *c)
{
	if (WANT(0))
		set(c, 0, op2(c, "Div", G, IN(1)));
	if (WANT(1))
		set(c, 1, om_grad_op1(c, "Neg", op2(c, "Div", op2(c, "Mul", G, OUT), IN(1))));
	return done(c);
}

/* Sum: each input gets g, unbroadcast */
static om_kind grad_sum(om_grad_ctx *c)
{
	for (int32_t i = 0; i < c->n->nin && i < 64; i++)
		set(c, i, G);
	return done(c);
}

static om_kind grad_neg(om_grad_ctx *c)
{
	c->dx[0] = om_grad_op1(c, "Neg", G);
	return done(c);
}

/* g where x > 0, else 0 (ReLU's derivative at 0 taken as 0, as PyTorch and ORT do) */
static om_kind grad_relu(om_grad_ctx *c)
{
	om_value *zero = om_grad_scalar(c, elem(c), 0.0);
	c->dx[0] = om_grad_op(c, "Where", 3,
			      (om_value *[]){op2(c, "Greater", IN(0), zero), G, zero});
	return done(c);
}

/* g * y * (1 - y) */
static om_kind grad_sigmoid(om_grad_ctx *c)
{
	om_value *one = om_grad_scalar(c, elem(c), 1.0);
	c->dx[0] = op2(c, "Mul", op2(c, "Mul", G, OUT), op2(c, "Sub", one, OUT));
	return done(c);
}

/* g * (1 - y * y) */
static om_kind grad_tanh(om_grad_ctx *c)
{
	om_value *one = om_grad_scalar(c, elem(c), 1.0);
	c->dx[0] = op2(c, "Mul", G, op2(c, "Sub", one, op2(c, "Mul", OUT, OUT)));
	return done(c);
}

/* g * y */
static om_kind grad_exp(om_grad_ctx *c)
{
	c->dx[0] = op2(c, "Mul", G, OUT);
	return done(c);
}

/* g / x */
static om_kind grad_log(om_grad_ctx *c)
{
	c->dx[0] = op2(c, "Div", G, IN(0));
	return done(c);
}

/* g / (2 y) */
static om_kind grad_sqrt(om_grad_ctx *c)
{
	om_value *two = om_grad_scalar(c, elem(c), 2.0);
	c->dx[0] = op2(c, "Div", G, op2(c, "Mul", OUT, two));
	return done(c);
}

/* x ^ p: g * p * x ^ (p - 1) for the base; the exponent's gradient is not written */
static om_kind grad_pow(om_grad_ctx *c)
{
	if (WANT(1))
		return om_grad_unsupported(c, "the exponent depends on the differentiated values "
					      "(only a constant exponent has a rule)");
	om_value *p = cast_out(c, IN(1));
	om_value *pm1 = op2(c, "Sub", p, om_grad_scalar(c, elem(c), 1.0));
	set(c, 0, op2(c, "Mul", G, op2(c, "Mul", p, op2(c, "Pow", IN(0), pm1))));
	return done(c);
}

/* the last two axes of a rank-r value swapped */
static om_value *swap_last(om_grad_ctx *c, om_value *v, int32_t r)
{
	int64_t perm[OM_MAX_RANK];
	for (int32_t d = 0; d < r; d++)
		perm[d] = d;
	perm[r - 2] = r - 1;
	perm[r - 1] = r - 2;
	om_node *t = om_grad_node(c, "Transpose", 1, &v);
	om_grad_attr_ints(c, t, "perm", perm, r);
	return t ? t->out[0] : NULL;
}

/* A (.., M, K) @ B (.., K, N): dA = G @ B^T, dB = A^T @ G, unbroadcast over the batch dims.
 * 1-D operands (a vector promoted by MatMul) have no rule yet. */
static om_kind grad_matmul(om_grad_ctx *c)
{
	const int32_t ra = om_grad_rank(c, IN(0)), rb = om_grad_rank(c, IN(1));
	if (ra < 2 || rb < 2)
		return om_grad_unsupported(c, "operands of rank 2 or more are differentiated, "
					      "these have unknown or lower ranks");
	if (WANT(0)) {
		om_value *g = op2(c, "MatMul", G, swap_last(c, IN(1), rb));
		c->dx[0] = om_grad_unbroadcast_batch(c, g, OUT, IN(0), 2);
	}
	if (WANT(1)) {
		om_value *g = op2(c, "MatMul", swap_last(c, IN(0), ra), G);
		c->dx[1] = om_grad_unbroadcast_batch(c, g, OUT, IN(1), 2);
	}
	return done(c);
}

/* Reduce with keepdims: g reshaped to x's rank with the reduced axes 1, expanded to x */
static om_value *reduce_back(om_grad_ctx *c)
{
	const om_node *n = c->n;
	const int32_t r = om_grad_rank(c, IN(0));
	if (r < 0) {
		om_grad_unsupported(c, "the rank of its input is not known");
		return NULL;
	}
	om_value *g = G;
	if (!om_attr_int(n, "keepdims", 1)) {
		int64_t axes[OM_MAX_RANK];
		int64_t na = -1;
		const om_attr *aa = om_node_attr(n, "axes");
		if (aa && aa->type == OM_ATTR_INTS && aa->n <= OM_MAX_RANK) {
			na = aa->n;
			for (int64_t i = 0; i < na; i++)
				axes[i] = aa->ints[i];
		} else if (!aa && n->nin > 1 && n->in[1]) {
			na = om_grad_const_ints(c, n->in[1], axes, OM_MAX_RANK);
		} else if (!aa) {
			na = 0;
		}
		if (na < 0) {
			om_grad_unsupported(c, "its axes are not known when the graph is lowered");
			return NULL;
		}
		if (na == 0 && om_attr_int(n, "noop_with_empty_axes", 0))
			return g;
		/* the kept shape: x's with each reduced axis 1 (every axis when none is named) */
		uint32_t reduced = na ? 0 : (1u << r) - 1;
		for (int64_t i = 0; i < na; i++) {
			const int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
			if (a < 0 || a >= r) {
				om_grad_unsupported(c, "an axis is out of range");
				return NULL;
			}
			reduced |= 1u << a;
		}
		int64_t ones[OM_MAX_RANK], keep[OM_MAX_RANK];
		for (int32_t d = 0; d < r; d++) {
			ones[d] = 1;
			keep[d] = !(reduced >> d & 1);
		}
		/* Shape(x) * keep + (1 - keep): the kept shape, symbolic dims included */
		om_value *kept = om_grad_ints(c, keep, r);
		om_value *shape = op2(c, "Add", op2(c, "Mul", om_grad_op1(c, "Shape", IN(0)), kept),
				      op2(c, "Sub", om_grad_ints(c, ones, r), kept));
		g = op2(c, "Reshape", g, shape);
	}
	return op2(c, "Expand", g, om_grad_op1(c, "Shape", IN(0)));
}

static om_kind grad_reduce_sum(om_grad_ctx *c)
{
	c->dx[0] = reduce_back(c);
	return done(c);
}

/* the sum's gradient divided by the count averaged: numel(x) / numel(y) */
static om_kind grad_reduce_mean(om_grad_ctx *c)
{
	om_value *nx = cast_out(c, om_grad_op1(c, "Size", IN(0)));
	om_value *ny = cast_out(c, om_grad_op1(c, "Size", OUT));
	om_value *back = reduce_back(c);
	if (nx && ny)
		c->dx[0] = op2(c, "Div", back, op2(c, "Div", nx, ny));
	return done(c);
}

static const om_grad_rule rules[] = {
	{"Add", "", grad_add},
	{"Sub", "", grad_sub},
	{"Mul", "", grad_mul},
	{"Div", "", grad_div},
	{"Sum", "", grad_sum},
	{"Neg", "", grad_neg},
	{"Relu", "", grad_relu},
	{"Sigmoid", "", grad_sigmoid},
	{"Tanh", "", grad_tanh},
	{"Exp", "", grad_exp},
	{"Log", "", grad_log},
	{"Sqrt", "", grad_sqrt},
	{"Pow", "", grad_pow},
	{"MatMul", "", grad_matmul},
	{"ReduceSum", "", grad_reduce_sum},
	{"ReduceMean", "", grad_reduce_mean},
};

const om_grad_table om_grads_math = {rules, sizeof rules / sizeof rules[0]};
