/* lower_gradient.c — each ai.onnx.preview.training Gradient node of the main graph replaced by
 * the backward nodes of its forward computation (reverse-mode differentiation): the nodes on
 * the paths from the values named in xs to y, differentiated by their rows' derivative rules
 * (ops/grad.h, om_op_grad) from the last to the first, seeded with ones of y's shape (the
 * spec's implicit dY/dY). The values named in xs and zs are the inputs of the differentiated
 * graph: nothing is differentiated past them. A session runs this on a copy of the model
 * before planning (api/session_create.c); om_simplify leaves Gradient as it is. */
#include <stdlib.h>
#include <string.h>

#include "grad.h"
#include "pass.h"
#include "registry.h"

enum { V_X = 1, V_Z = 2, V_NEEDED = 4 };

/* what the lowering of one Gradient knows of a value */
typedef struct ventry {
	const om_value *key;
	uint32_t flags;
	om_value *grad; /* dy/dv so far; NULL: zero */
	UT_hash_handle hh;
} ventry;

typedef struct lower {
	om_pass_ctx *pc;
	om_graph *g;
	ventry *map;
	bool nomem;
	om_status *st;
} lower;

static const om_type unknown_type = {OM_TYPE_UNKNOWN, OM_UNDEFINED, -1, NULL, NULL};

static const om_type *type_of(void *arg, const om_value *v)
{
	lower *l = arg;
	const om_vinfo *vi = om_vinfo_get(l->pc, l->g, (om_value *)v);
	return vi ? &vi->type : &unknown_type;
}

static int64_t ints_of(void *arg, const om_value *v, int64_t *out, int64_t max)
{
	lower *l = arg;
	const om_vinfo *vi = om_vinfo_get(l->pc, l->g, (om_value *)v);
	if (!vi || vi->npv < 0 || vi->npv > max)
		return -1;
	for (int32_t i = 0; i < vi->npv; i++) {
		if (vi->pv[i].kind != OM_PE_NUM)
			return -1;
		out[i] = vi->pv[i].num;
	}
	return vi->npv;
}

static ventry *entry(lower *l, const om_value *v, bool make)
{
	ventry *e = NULL;
	HASH_FIND_PTR(l->map, &v, e);
	if (e || !make)
		return e;
	if (!(e = calloc(1, sizeof *e))) {
		l->nomem = true;
		return NULL;
	}
	e->key = v;
	HASH_ADD_PTR(l->map, key, e);
	ventry *in = NULL;
	HASH_FIND_PTR(l->map, &v, in);
	if (!in) { /* HASH_NONFATAL_OOM left it out */
		free(e);
		l->nomem = true;
		return NULL;
	}
	return e;
}

static uint32_t flags_of(lower *l, const om_value *v)
{
	const ventry *e = v ? entry(l, v, false) : NULL;
	return e ? e->flags : 0;
}

static void clear(lower *l)
{
	ventry *e, *t;
	HASH_ITER(hh, l->map, e, t) {
		HASH_DEL(l->map, e);
		free(e);
	}
}

/* the value an attribute's string names in g, or NULL */
static om_value *named(om_graph *g, om_str s)
{
	char buf[256];
	char *name = s.len < (int64_t)sizeof buf ? buf : malloc((size_t)s.len + 1);
	if (!name || s.len < 0)
		return NULL;
	memcpy(name, s.ptr, (size_t)s.len);
	name[s.len] = 0;
	om_value *v = strlen(name) == (size_t)s.len ? om_graph_find(g, name) : NULL;
	if (name != buf)
		free(name);
	return v;
}

/* a node's outputs reach a graph output (through nodes' inputs and subgraphs' references) */
static bool mark_live(void *arg, om_value *v)
{
	bool *live = arg;
	if (v->producer)
		live[v->producer->id] = true;
	return false;
}

static om_kind live_nodes(om_graph *g, bool *live)
{
	for (int32_t i = 0; i < g->noutputs; i++)
		mark_live(live, g->outputs[i]);
	for (int32_t i = g->nnodes - 1; i >= 0; i--) {
		const om_node *n = g->nodes[i];
		if (!live[i])
			continue;
		for (int32_t k = 0; k < n->nin; k++)
			if (n->in[k])
				mark_live(live, n->in[k]);
		om_node_outer_refs(g, n, mark_live, live);
	}
	return OM_OK;
}

/* adds dv to v's gradient */
static om_kind accumulate(lower *l, om_grad_ctx *c, const om_value *v, om_value *dv)
{
	ventry *e = entry(l, v, true);
	if (!e)
		return om_error(l->st, OM_ERR_NOMEM, c->n, "out of memory lowering Gradient");
	e->grad = e->grad ? om_grad_op2(c, "Add", e->grad, dv) : dv;
	return l->st->kind;
}

/* the backward nodes of forward node n (at index i < the count before lowering) */
static om_kind differentiate(lower *l, om_grad_ctx *c, const om_node *n)
{
	om_value *dy[64] = {0};
	bool any = false;
	uint64_t want = 0;
	if (n->nout > 64)
		return om_error(l->st, OM_ERR_UNSUPPORTED, n, "Gradient: %s has more than 64 "
				"outputs", n->op);
	for (int32_t j = 0; j < n->nout; j++) {
		const om_value *o = n->out[j];
		const uint32_t f = flags_of(l, o);
		if (!o || !(f & V_NEEDED) || (f & (V_X | V_Z)))
			continue;
		const ventry *e = entry(l, o, false);
		dy[j] = e ? e->grad : NULL;
		any |= dy[j] != NULL;
	}
	if (!any)
		return OM_OK;
	for (int32_t i = 0; i < n->nin; i++)
		if (n->in[i] && (flags_of(l, n->in[i]) & V_NEEDED)) {
			if (i >= 64)
				return om_error(l->st, OM_ERR_UNSUPPORTED, n,
						"Gradient: %s has more than 64 inputs", n->op);
			want |= UINT64_C(1) << i;
		}
	if (!want)
		return OM_OK;
	const om_grad_fn rule = om_op_grad(om_node_op(l->g->model, n));
	if (!rule)
		return om_error(l->st, OM_ERR_UNSUPPORTED, n,
				"Gradient: no derivative rule for %s%s%s (node '%s') on the path "
				"from xs to y", n->domain[0] ? n->domain : "",
				n->domain[0] ? "." : "", n->op, n->name);
	om_value **dx = calloc((size_t)n->nin, sizeof *dx);
	if (!dx)
		return om_error(l->st, OM_ERR_NOMEM, n, "out of memory lowering Gradient");
	om_grad_ctx rc_ctx = *c;
	rc_ctx.n = n;
	rc_ctx.dy = dy;
	rc_ctx.dx = dx;
	rc_ctx.want = want;
	om_kind rc = rule(&rc_ctx);
	for (int32_t i = 0; !rc && i < n->nin; i++) {
		if (!(want >> i & 1))
			continue;
		if (!dx[i])
			rc = om_error(l->st, OM_ERR_UNSUPPORTED, n, "Gradient: the rule of %s gave "
				      "no gradient for input %d", n->op, (int)i);
		else
			rc = accumulate(l, c, n->in[i], dx[i]);
	}
	free(dx);
	return rc;
}

static om_kind lower_one(lower *l, om_node *gn, int32_t n0)
{
	om_graph *g = l->g;
	om_status *st = l->st;
	const om_attr *axs = om_node_attr(gn, "xs"), *azs = om_node_attr(gn, "zs"),
		      *ay = om_node_attr(gn, "y");
	if (!axs || axs->type != OM_ATTR_STRINGS || !ay || ay->type != OM_ATTR_STRING ||
	    (azs && azs->type != OM_ATTR_STRINGS))
		return om_error(st, OM_ERR_INVALID_MODEL, gn, "Gradient needs xs (strings), y "
				"(a string) and zs (strings, optional)");
	const int64_t nx = axs->n, nz = azs ? azs->n : 0;
	if (gn->nout != nx || gn->nin != nx + nz)
		return om_error(st, OM_ERR_INVALID_MODEL, gn, "Gradient has %d inputs and %d "
				"outputs for %lld xs and %lld zs", (int)gn->nin, (int)gn->nout,
				(long long)nx, (long long)nz);
	om_value *y = named(g, ay->s);
	if (!y)
		return om_error(st, OM_ERR_INVALID_MODEL, gn, "Gradient's y names no value of "
				"graph '%s'", g->name);
	for (int64_t k = 0; k < nx + nz; k++) {
		om_value *v = named(g, k < nx ? axs->strings[k] : azs->strings[k - nx]);
		if (!v)
			return om_error(st, OM_ERR_INVALID_MODEL, gn, "Gradient's %s names no "
					"value of graph '%s'", k < nx ? "xs" : "zs", g->name);
		if (gn->in[k] != v)
			return om_error(st, OM_ERR_UNSUPPORTED, gn, "Gradient input %d is not the "
					"value its %s names: the forward graph at other values "
					"is not lowered", (int)k, k < nx ? "xs" : "zs");
		ventry *e = entry(l, v, true);
		if (!e)
			return om_error(st, OM_ERR_NOMEM, gn, "out of memory lowering Gradient");
		e->flags |= k < nx ? V_X : V_Z;
	}
	/* active: depends on an x without passing a cut (an x or a z); forward order */
	bool *active = calloc((size_t)(n0 ? n0 : 1), sizeof *active);
	if (!active)
		return om_error(st, OM_ERR_NOMEM, gn, "out of memory lowering Gradient");
#define ACTIVE(v) ((v) && ((flags_of(l, v) & V_X) || (!(flags_of(l, v) & V_Z) && \
			(v)->producer && (v)->producer->id >= 0 && (v)->producer->id < n0 && \
			g->nodes[(v)->producer->id] == (v)->producer && active[(v)->producer->id])))
	for (int32_t i = 0; i < n0; i++) {
		const om_node *n = g->nodes[i];
		if (n == gn)
			continue;
		for (int32_t k = 0; k < n->nin && !active[i]; k++)
			active[i] = ACTIVE(n->in[k]);
	}
	/* needed: on a path from an x to y; backward order */
	om_kind rc = OM_OK;
	if (ACTIVE(y)) {
		ventry *e = entry(l, y, true);
		if (e)
			e->flags |= V_NEEDED;
	}
	for (int32_t i = n0 - 1; i >= 0 && !l->nomem; i--) {
		const om_node *n = g->nodes[i];
		bool on = false;
		for (int32_t j = 0; active[i] && j < n->nout; j++) {
			const uint32_t f = flags_of(l, n->out[j]);
			on |= (f & V_NEEDED) && !(f & (V_X | V_Z));
		}
		for (int32_t k = 0; on && k < n->nin; k++)
			if (ACTIVE(n->in[k])) {
				ventry *e = entry(l, n->in[k], true);
				if (e)
					e->flags |= V_NEEDED;
			}
	}
#undef ACTIVE
	free(active);
	if (l->nomem)
		return om_error(st, OM_ERR_NOMEM, gn, "out of memory lowering Gradient");
	om_grad_ctx c = {g, gn, om_model_opset(g->model, ""), NULL, NULL, 0, type_of, ints_of, l,
			 st};
	if (flags_of(l, y) & V_NEEDED) { /* the seed: dY/dY = ones of y's shape */
		const int32_t ty = om_grad_elem(&c, y);
		om_value *seed = om_grad_fill_like(&c, y, ty, 1.0);
		if (!seed)
			return st->kind;
		rc = accumulate(l, &c, y, seed);
	}
	for (int32_t i = n0 - 1; i >= 0 && !rc; i--)
		if (g->nodes[i] != gn)
			rc = differentiate(l, &c, g->nodes[i]);
	/* the outputs: each x's gradient (zeros when y does not depend on it) */
	for (int64_t k = 0; k < nx && !rc; k++) {
		om_value *o = gn->out[k];
		if (!o)
			continue;
		om_value *x = gn->in[k];
		const ventry *e = entry(l, x, false);
		om_value *dx = e && e->grad ? e->grad
					    : om_grad_fill_like(&c, x, om_grad_elem(&c, x), 0.0);
		om_node *id = om_grad_node(&c, "Identity", 1, &dx);
		if (!id)
			return st->kind;
		om_node_set_output(id, 0, o);
	}
	if (!rc)
		gn->flags |= OM_NODE_DEAD;
	return rc;
}

bool om_model_has_gradient(const om_model *m)
{
	const om_graph *g = m->graph;
	for (int32_t i = 0; g && i < g->nnodes; i++)
		if (om_node_code(m, g->nodes[i]) == OM_OPC_GRADIENT)
			return true;
	return false;
}

om_kind om_lower_gradients(om_model *m, om_status *st)
{
	om_graph *g = m->graph;
	if (!g || !om_model_has_gradient(m))
		return OM_OK;
	om_kind rc = om_graph_toposort(g, st);
	if (rc)
		return rc;
	om_pass_ctx pc;
	if ((rc = om_pass_ctx_open(&pc, m, NULL, st)))
		return rc;
	int changes = 0;
	rc = om_pass_infer(&pc, g, &changes);
	const int32_t n0 = g->nnodes;
	bool *live = calloc((size_t)(n0 ? n0 : 1), sizeof *live);
	if (!rc && !live)
		rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory lowering Gradient");
	for (int32_t i = 0; !rc && i < n0; i++)
		g->nodes[i]->id = i;
	if (!rc)
		rc = live_nodes(g, live);
	lower l = {&pc, g, NULL, false, st};
	bool lowered = false;
	/* the last first: a Gradient that reads another's outputs meets that one unlowered (no
	 * rule: higher orders are not lowered) */
	for (int32_t i = n0 - 1; !rc && i >= 0; i--) {
		om_node *n = g->nodes[i];
		if (!live[i] || om_node_code(m, n) != OM_OPC_GRADIENT)
			continue; /* a Gradient nothing reads stays as it is */
		rc = lower_one(&l, n, n0);
		clear(&l);
		lowered = true;
	}
	free(live);
	om_pass_ctx_close(&pc);
	if (!rc && lowered) {
		om_graph_compact(g);
		rc = om_graph_toposort(g, st);
	}
	return rc;
}

/* ---- om_simplify and om_optimize: Gradient passed through ---------------------------------
 * A Gradient reads its forward computation by name (xs, zs, y), which no pass sees as a use:
 * dead-node removal would drop y's producers, a fusion or merge could rename y. While the
 * passes run, those values are held as extra graph outputs (kept by name and value, as every
 * graph output is), released after. */

static bool is_output(const om_graph *g, const om_value *v)
{
	for (int32_t i = 0; i < g->noutputs; i++)
		if (g->outputs[i] == v)
			return true;
	return false;
}

om_kind om_gradient_hold(om_model *m, int32_t *held, om_status *st)
{
	*held = 0;
	om_graph *g = m->graph;
	if (!g || !om_model_has_gradient(m))
		return OM_OK;
	int64_t extra = 0;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		if (om_node_code(m, n) != OM_OPC_GRADIENT)
			continue;
		const om_attr *xs = om_node_attr(n, "xs"), *zs = om_node_attr(n, "zs");
		extra += 1 + (xs && xs->type == OM_ATTR_STRINGS ? xs->n : 0) +
			 (zs && zs->type == OM_ATTR_STRINGS ? zs->n : 0);
	}
	if (extra > INT32_MAX / 2 - g->noutputs)
		return om_error(st, OM_ERR_UNSUPPORTED, NULL, "too many values named by Gradient");
	om_value **outs = om_arena_alloc(m->arena, sizeof *outs * (size_t)(g->noutputs + extra));
	if (!outs)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	if (g->noutputs)
		memcpy(outs, g->outputs, sizeof *outs * (size_t)g->noutputs);
	int32_t n_out = g->noutputs;
	g->outputs = outs;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		if (om_node_code(m, n) != OM_OPC_GRADIENT)
			continue;
		const char *names[] = {"y", "xs", "zs"};
		for (int k = 0; k < 3; k++) {
			const om_attr *a = om_node_attr(n, names[k]);
			const int64_t cnt = !a ? 0 : a->type == OM_ATTR_STRING ? 1
					   : a->type == OM_ATTR_STRINGS ? a->n : 0;
			for (int64_t j = 0; j < cnt; j++) {
				om_value *v = named(g, a->type == OM_ATTR_STRING ? a->s
									       : a->strings[j]);
				g->noutputs = n_out;
				if (!v || is_output(g, v))
					continue;
				v->flags |= OM_VALUE_GRAPH_OUTPUT;
				outs[n_out++] = v;
				(*held)++;
			}
		}
	}
	g->noutputs = n_out;
	return OM_OK;
}

void om_gradient_release(om_model *m, int32_t held)
{
	om_graph *g = m->graph;
	if (!g || held <= 0)
		return;
	const int32_t keep = g->noutputs > held ? g->noutputs - held : 0;
	for (int32_t i = keep; i < g->noutputs; i++) {
		bool again = false; /* the same value listed before too stays an output */
		for (int32_t k = 0; k < keep; k++)
			again |= g->outputs[k] == g->outputs[i];
		if (!again)
			g->outputs[i]->flags &= ~(uint32_t)OM_VALUE_GRAPH_OUTPUT;
	}
	g->noutputs = keep;
}
