/*
 * extract.c — sub-models (om_simplify_options.outputs / .inputs, `--outputs A,B --inputs C,D`):
 * the part of the main graph that computes the named outputs from the named inputs, as
 * onnx.utils.extract_model does.
 *
 *   - outputs (when given) replace the graph outputs, in the order given; inputs (when given)
 *     become graph inputs, in the order given, followed by the original graph inputs the
 *     outputs still need (in their order). Original graph inputs nothing needs are dropped.
 *   - A named input that a node computes is cut from its producer (the node writes a fresh
 *     value instead and dies unless something else reads it).
 *   - Only nodes the outputs need stay, whatever their domain (subgraphs' references to the
 *     main graph count); unused initializers and value_info go.
 *   - New inputs and outputs are typed by shape inference (element type and shape); the
 *     model's own declaration of the value wins when it has one. Inference's internal symbols
 *     become dim_params named after the value ("h_dim_2"), one name per symbol, so two
 *     values with one extent keep one symbol.
 *   - An original graph input the part reads only for its shape (Shape, Size: rows flagged
 *     OM_OP_SHAPE_OF) is not kept as an input when a named input carries those dims: the node
 *     reads the named input instead (the same shape), or a Shape becomes Gather(Shape(named
 *     input), axes) when the dims sit on other axes of it. So the part's inputs are the ones
 *     named whenever those carry the shapes (gpt's causal mask reads Shape(idx): idx [batch,
 *     seq] is then read from a cut tensor [batch, seq, 128]).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pass.h"
#include "registry.h"

typedef struct symname {
	const char *internal, *name;
} symname;

typedef struct xctx {
	om_pass_ctx *c;
	om_graph *g;
	symname *syms;
	int32_t nsyms, capsyms;
} xctx;

static int32_t count_names(const char *const *names)
{
	int32_t n = 0;
	while (names && names[n])
		n++;
	return n;
}

static om_kind find_all(const om_graph *g, const char *const *names, int32_t n, const char *what,
			om_value **out, om_status *st)
{
	for (int32_t i = 0; i < n; i++) {
		om_value *v = om_graph_find(g, names[i]);
		if (!v || !(v->producer || (v->flags & (OM_VALUE_GRAPH_INPUT |
							OM_VALUE_INITIALIZER))))
			return om_error(st, OM_ERR_INVALID_INPUT, NULL,
					"sub-model %s '%s': the main graph has no tensor of that "
					"name", what, names[i]);
		for (int32_t k = 0; k < i; k++)
			if (out[k] == v)
				return om_error(st, OM_ERR_INVALID_INPUT, NULL,
						"sub-model %s '%s' named twice", what, names[i]);
		out[i] = v;
	}
	return OM_OK;
}

/* The dim_param standing for inference's internal symbol `sym` (first met on dim i of v). */
static const char *sym_name(xctx *x, const char *sym, const om_value *v, int32_t i)
{
	for (int32_t k = 0; k < x->nsyms; k++)
		if (!strcmp(x->syms[k].internal, sym))
			return x->syms[k].name;
	if (x->nsyms == x->capsyms) {
		int32_t cap = x->capsyms ? 2 * x->capsyms : 16;
		symname *s = om_arena_alloc(x->c->scratch, sizeof *s * (size_t)cap);
		if (!s)
			return NULL;
		if (x->nsyms)
			memcpy(s, x->syms, sizeof *s * (size_t)x->nsyms);
		x->syms = s;
		x->capsyms = cap;
	}
	char buf[300];
	snprintf(buf, sizeof buf, "%.280s_dim_%d", v->name, i);
	const char *name = om_arena_strdup(x->c->m->arena, buf);
	if (name)
		x->syms[x->nsyms++] = (symname){sym, name};
	return name;
}

/* Types v (a new graph input or output) from inference unless the model declares its type. */
static om_kind type_from_inference(xctx *x, om_value *v)
{
	if (v->type.kind == OM_TYPE_TENSOR && v->type.elem && v->type.rank >= 0)
		return OM_OK;
	const om_vinfo *vi = om_vinfo_get(x->c, x->g, v);
	if (!vi || vi->type.kind != OM_TYPE_TENSOR || vi->type.elem <= OM_UNDEFINED ||
	    vi->type.elem >= OM_DTYPE_COUNT)
		return v->type.kind == OM_TYPE_TENSOR && v->type.elem
			       ? OM_OK
			       : om_error(x->c->st, OM_ERR_UNSUPPORTED, NULL,
					  "sub-model: shape inference does not know the element "
					  "type of '%s' (not a tensor, or an op omopt does not "
					  "know)", v->name);
	const int32_t rank = vi->type.rank;
	om_type t = {.kind = OM_TYPE_TENSOR, .elem = vi->type.elem, .rank = rank};
	if (rank >= 0) {
		t.dims = om_arena_alloc(x->c->m->arena, sizeof(om_dim) * (size_t)(rank + 1));
		if (!t.dims)
			return om_error(x->c->st, OM_ERR_NOMEM, NULL, "out of memory");
		for (int32_t i = 0; i < rank; i++) {
			t.dims[i] = vi->type.dims[i];
			if (om_symbol_internal(t.dims[i].param) &&
			    !(t.dims[i].param = sym_name(x, t.dims[i].param, v, i)))
				return om_error(x->c->st, OM_ERR_NOMEM, NULL, "out of memory");
		}
	}
	v->type = t;
	return OM_OK;
}

/* Marks what computes v live: its producer and, through it, everything it reads. */
static void mark(const om_value *v, bool *live, om_node **stack, int32_t *sp)
{
	if (!v || (v->flags & OM_VALUE_GRAPH_INPUT) || !v->producer || live[v->producer->id])
		return;
	live[v->producer->id] = true;
	stack[(*sp)++] = v->producer;
}

/* Marks the main-graph values a subgraph refers to (through any depth of nesting). */
static void mark_outer(const om_graph *g, const om_graph *sub, bool *live, om_node **stack, int32_t *sp)
{
	const om_value *sv, *tmp;
	HASH_ITER(hh, sub->values, sv, tmp)
		if (sv->flags & OM_VALUE_OUTER)
			mark(om_graph_find(g, sv->name), live, stack, sp);
	for (int32_t i = 0; i < sub->nnodes; i++) {
		const om_node *n = sub->nodes[i];
		for (int32_t a = 0; a < n->nattr; a++) {
			if (n->attrs[a].g)
				mark_outer(g, n->attrs[a].g, live, stack, sp);
			for (int64_t k = 0; n->attrs[a].graphs && k < n->attrs[a].n; k++)
				mark_outer(g, n->attrs[a].graphs[k], live, stack, sp);
		}
	}
}

/* Whether v (a graph input) is read by a live node or a graph output. */
static bool needed(const om_graph *g, const om_value *v, const bool *live)
{
	for (int32_t i = 0; i < g->noutputs; i++)
		if (g->outputs[i] == v)
			return true;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		for (int32_t k = 0; live[i] && k < n->nin; k++)
			if (n->in[k] == v)
				return true;
		for (int32_t a = 0; live[i] && a < n->nattr; a++) {
			const om_graph *sub = n->attrs[a].g;
			const om_value *sv = sub ? om_graph_find(sub, v->name) : NULL;
			if (sv && (sv->flags & OM_VALUE_OUTER))
				return true;
			for (int64_t j = 0; n->attrs[a].graphs && j < n->attrs[a].n; j++) {
				sv = om_graph_find(n->attrs[a].graphs[j], v->name);
				if (sv && (sv->flags & OM_VALUE_OUTER))
					return true;
			}
		}
	}
	return false;
}

static bool ranked(const om_vinfo *vi)
{
	return vi && vi->type.kind == OM_TYPE_TENSOR && vi->type.rank >= 0 &&
	       vi->type.rank <= OM_MAX_RANK;
}

/* Where in named input u's dims v's dims are (axes[d] for v's dim d: the same axis when it
 * has the extent, else the first that has it); false when one is nowhere. */
static bool dims_in(const om_vinfo *vi, const om_vinfo *ui, int64_t *axes, bool *same)
{
	*same = vi->type.rank == ui->type.rank;
	for (int32_t d = 0; d < vi->type.rank; d++) {
		int32_t a = d < ui->type.rank && om_dims_equal(ui->type.dims[d], vi->type.dims[d])
				    ? d
				    : 0;
		while (a < ui->type.rank && !om_dims_equal(ui->type.dims[a], vi->type.dims[d]))
			a++;
		if (a == ui->type.rank)
			return false;
		axes[d] = a;
		*same &= a == d;
	}
	return true;
}

/* Shape(u) -> Gather(·, axes) writing what node n (a Shape of v) wrote. */
static om_kind gather_shape(xctx *x, om_node *n, om_value *u, const int64_t *axes, int32_t r)
{
	om_graph *g = x->g;
	char hint[300];
	snprintf(hint, sizeof hint, "%.280s_shape", u->name);
	om_value *s = om_graph_fresh_value(g, hint);
	om_tensor t = {.dtype = OM_INT64, .rank = 1, .dims = {r}, .data = (void *)axes,
		       .nbytes = sizeof *axes * (size_t)r};
	snprintf(hint, sizeof hint, "%.280s_axes", n->out[0]->name);
	om_value *idx = s ? om_new_constant(x->c, g, hint, &t) : NULL;
	om_value *dead = idx ? om_graph_fresh_value(g, n->out[0]->name) : NULL;
	om_node *sh = dead ? om_graph_add_node(g, "Shape", "", s->name, 1, 1) : NULL;
	om_node *ga = sh ? om_graph_add_node(g, "Gather", "", n->name, 2, 1) : NULL;
	if (!ga)
		return om_error(x->c->st, OM_ERR_NOMEM, NULL, "out of memory");
	sh->in[0] = u;
	om_node_set_output(sh, 0, s);
	ga->in[0] = s;
	ga->in[1] = idx;
	om_value *out = n->out[0];
	om_node_set_output(n, 0, dead); /* n is read by nothing now: the cut drops it */
	om_node_set_output(ga, 0, out);
	return OM_OK;
}

/* Shape-of nodes reading an original graph input read a named input with its dims instead
 * (above); the input is then dropped unless something else reads it. */
static om_kind shapes_from_named(xctx *x, om_value *const *ins, int32_t nin)
{
	om_graph *g = x->g;
	const int32_t n0 = g->nnodes;
	for (int32_t i = 0; i < n0; i++) {
		om_node *n = g->nodes[i];
		om_value *v = n->nin ? n->in[0] : NULL;
		if (!v || !(v->flags & OM_VALUE_GRAPH_INPUT) || n->nout != 1 || !n->out[0] ||
		    !om_node_has(x->c->m, n, OM_OP_SHAPE_OF))
			continue;
		bool is_named = false;
		for (int32_t k = 0; k < nin; k++)
			is_named |= ins[k] == v;
		const om_vinfo *vi = om_vinfo_get(x->c, g, v);
		if (is_named || !ranked(vi))
			continue;
		const om_vinfo *oi = om_vinfo_get(x->c, g, n->out[0]);
		for (int32_t k = 0; k < nin; k++) {
			const om_vinfo *ui = om_vinfo_get(x->c, g, ins[k]);
			int64_t axes[OM_MAX_RANK];
			bool same = false;
			if (!ranked(ui) || !dims_in(vi, ui, axes, &same))
				continue;
			if (same) {
				n->in[0] = ins[k];
				break;
			}
			/* a whole Shape (rank 1, v's rank elements: no start/end cutting it) */
			if (!oi || !ranked(oi) || oi->type.rank != 1 ||
			    !om_dim_known(oi->type.dims[0]) ||
			    oi->type.dims[0].value != vi->type.rank)
				continue;
			om_kind rc = gather_shape(x, n, ins[k], axes, vi->type.rank);
			if (rc)
				return rc;
			break;
		}
	}
	return OM_OK;
}

static om_kind cut(xctx *x, om_value *const *ins, int32_t nin, om_value *const *outs,
		   int32_t nout)
{
	om_graph *g = x->g;
	/* a named input that a node computes: the node writes a fresh value instead */
	for (int32_t i = 0; i < nin; i++) {
		om_value *v = ins[i];
		if (v->flags & OM_VALUE_INITIALIZER)
			return om_error(x->c->st, OM_ERR_INVALID_INPUT, NULL,
					"sub-model input '%s' is an initializer (a constant), "
					"not a value to feed", v->name);
		if (v->producer) {
			om_value *f = om_graph_fresh_value(g, v->name);
			if (!f)
				return om_error(x->c->st, OM_ERR_NOMEM, NULL, "out of memory");
			f->type = v->type;
			om_node_set_output(v->producer, v->producer_slot, f);
			v->producer = NULL;
			v->producer_slot = -1;
			v->flags &= ~(uint32_t)OM_VALUE_INFO;
		}
	}
	/* the graph's inputs: the named ones first, then the original ones still needed */
	om_value **old_in = g->inputs;
	const int32_t old_nin = g->ninputs;
	for (int32_t i = 0; i < nin; i++)
		ins[i]->flags |= OM_VALUE_GRAPH_INPUT;
	if (nout) {
		for (int32_t i = 0; i < g->noutputs; i++)
			g->outputs[i]->flags &= ~(uint32_t)OM_VALUE_GRAPH_OUTPUT;
		om_value **o = om_arena_alloc(x->c->m->arena, sizeof *o * (size_t)nout);
		if (!o)
			return om_error(x->c->st, OM_ERR_NOMEM, NULL, "out of memory");
		for (int32_t i = 0; i < nout; i++) {
			o[i] = outs[i];
			o[i]->flags |= OM_VALUE_GRAPH_OUTPUT;
			o[i]->flags &= ~(uint32_t)OM_VALUE_INFO;
		}
		g->outputs = o;
		g->noutputs = nout;
	}
	om_kind src = shapes_from_named(x, ins, nin);
	if (!src)
		src = om_graph_toposort(g, x->c->st); /* the Gathers were appended */
	if (src)
		return src;
	/* what the outputs need */
	bool *live = calloc((size_t)g->nnodes + 1, sizeof *live);
	om_node **stack = malloc(sizeof *stack * ((size_t)g->nnodes + 1));
	if (!live || !stack) {
		free(live);
		free(stack);
		return om_error(x->c->st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	for (int32_t i = 0; i < g->nnodes; i++)
		g->nodes[i]->id = i;
	int32_t sp = 0;
	for (int32_t i = 0; i < g->noutputs; i++)
		mark(g->outputs[i], live, stack, &sp);
	while (sp > 0) {
		om_node *n = stack[--sp];
		for (int32_t k = 0; k < n->nin; k++)
			mark(n->in[k], live, stack, &sp);
		for (int32_t a = 0; a < n->nattr; a++) {
			if (n->attrs[a].g)
				mark_outer(g, n->attrs[a].g, live, stack, &sp);
			for (int64_t k = 0; n->attrs[a].graphs && k < n->attrs[a].n; k++)
				mark_outer(g, n->attrs[a].graphs[k], live, stack, &sp);
		}
	}
	om_value **in = om_arena_alloc(x->c->m->arena, sizeof *in * (size_t)(old_nin + nin + 1));
	int32_t k = 0;
	for (int32_t i = 0; in && i < nin; i++)
		in[k++] = ins[i];
	for (int32_t i = 0; in && i < old_nin; i++) {
		om_value *v = old_in[i];
		bool listed = false;
		for (int32_t j = 0; j < nin; j++)
			listed |= ins[j] == v;
		if (listed)
			continue;
		if (needed(g, v, live))
			in[k++] = v;
		else
			v->flags &= ~(uint32_t)OM_VALUE_GRAPH_INPUT;
	}
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!live[i])
			g->nodes[i]->flags |= OM_NODE_DEAD;
	free(live);
	free(stack);
	if (!in)
		return om_error(x->c->st, OM_ERR_NOMEM, NULL, "out of memory");
	g->inputs = in;
	g->ninputs = k;
	om_graph_compact(g);
	int changes = 0;
	return om_pass_dead(x->c, g, &changes); /* initializers and value_info left unused */
}

om_kind om_extract_submodel(om_pass_ctx *c, const char *const *inputs,
			    const char *const *outputs)
{
	om_graph *g = c->m->graph;
	const int32_t nin = count_names(inputs), nout = count_names(outputs);
	if (!nin && !nout)
		return OM_OK;
	om_value **ins = calloc((size_t)(nin + nout) + 1, sizeof *ins);
	if (!ins)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory");
	om_value **outs = ins + nin;
	om_kind rc = find_all(g, inputs, nin, "input", ins, c->st);
	if (!rc)
		rc = find_all(g, outputs, nout, "output", outs, c->st);
	int changes = 0;
	if (!rc) /* types of every value of the full graph, for the new inputs and outputs */
		rc = om_pass_infer(c, g, &changes);
	xctx x = {.c = c, .g = g};
	for (int32_t i = 0; i < nin + nout && !rc; i++)
		rc = type_from_inference(&x, ins[i]);
	if (!rc)
		rc = cut(&x, ins, nin, outs, nout);
	free(ins);
	return rc;
}
