/*
 * inline.c — model-local functions (ModelProto.functions) inlined into the graphs that call
 * them, so that their bodies simplify like the rest of the model.
 *
 * A node calls function F when its (domain, op type, overload) are F's. Each call of a
 * function of the model's own domains (every domain but ai.onnx, ai.onnx.* and
 * com.microsoft) is replaced by copies of F's body nodes, made as NodeProtos and lowered as
 * the loader lowers nodes (onnx/lower.c):
 *   - F's formal inputs and outputs become the call's actual names ("" where the call leaves
 *     an optional input out); every other name of the body gets a fresh name in the calling
 *     graph, "<call node name>/<name>" (a suffix __N when taken), so two calls of F and
 *     names of the caller never collide. Body node names are prefixed the same way.
 *   - An attribute that refers to one of F's (ref_attr_name) takes the call's attribute of
 *     that name, else F's default (attribute_proto), else it is left out; so do attributes
 *     of nodes inside the body's subgraphs. Names the subgraphs take from the body are renamed
 *     with it.
 *   - A formal output that is a formal input becomes an Identity.
 *   - Calls inside the body (nested functions) are inlined in turn, as are calls inside
 *     subgraphs. Functions that call themselves (directly or not) are InvalidModel.
 *   - A function that imports another opset version of a domain than the model does is not
 *     inlined (its calls stay); a domain only the function imports is added to the model's.
 * Afterwards the functions no node calls (directly or through a kept function) are dropped
 * from the model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inline.h"
#include "onnx_io.h"

enum { MAX_CALLS = 1 << 20 }; /* calls inlined per model: a bound on work, not a rule */

typedef struct nmap {
	const char *from, *to;
	UT_hash_handle hh;
} nmap;

typedef struct ictx {
	om_model *m;
	Onnx__FunctionProto *const *fns;
	int32_t nfns;
	om_status *st;
	nmap *node_names; /* the node names of the graph being inlined into (ORT wants them
			     unique) */
	int calls;
	bool oom;
} ictx;

static bool own_domain(const char *d)
{
	return d && *d && strcmp(d, "ai.onnx") && strncmp(d, "ai.onnx.", 8) &&
	       strcmp(d, "com.microsoft");
}

static bool same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* The function a node of (domain, op, overload) calls, or -1. */
static int32_t find_fn(const ictx *c, const char *domain, const char *op, const char *overload)
{
	for (int32_t i = 0; i < c->nfns; i++) {
		const Onnx__FunctionProto *f = c->fns[i];
		if (same(f->domain, domain) && same(f->name, op) && same(f->overload, overload))
			return i;
	}
	return -1;
}

static void *alloc(ictx *c, size_t n, size_t size)
{
	void *p = om_arena_alloc(c->m->arena, (n ? n : 1) * size);
	if (!p)
		c->oom = true;
	return p;
}

/* ---- functions that call themselves -------------------------------------------------------- */

static bool calls_back(const ictx *c, const Onnx__NodeProto *const *nodes, size_t n, int8_t *color);

static bool visit(const ictx *c, int32_t f, int8_t *color)
{
	if (color[f] == 2)
		return false;
	if (color[f] == 1)
		return true; /* on the current path: a cycle */
	color[f] = 1;
	const Onnx__FunctionProto *fp = c->fns[f];
	if (calls_back(c, (const Onnx__NodeProto *const *)fp->node, fp->n_node, color))
		return true;
	color[f] = 2;
	return false;
}

static bool calls_back(const ictx *c, const Onnx__NodeProto *const *nodes, size_t n, int8_t *color)
{
	for (size_t i = 0; i < n; i++) {
		const Onnx__NodeProto *np = nodes[i];
		int32_t f = own_domain(np->domain) ? find_fn(c, np->domain, np->op_type, np->overload)
						   : -1;
		if (f >= 0 && visit(c, f, color))
			return true;
		for (size_t a = 0; a < np->n_attribute; a++) {
			const Onnx__AttributeProto *ap = np->attribute[a];
			if (ap->g && calls_back(c, (const Onnx__NodeProto *const *)ap->g->node,
						ap->g->n_node, color))
				return true;
			for (size_t k = 0; k < ap->n_graphs; k++)
				if (calls_back(c, (const Onnx__NodeProto *const *)ap->graphs[k]->node,
					       ap->graphs[k]->n_node, color))
					return true;
		}
	}
	return false;
}

/* ---- names ---------------------------------------------------------------------------------- */

static bool taken(const om_graph *g, const char *name)
{
	for (; g; g = g->parent)
		if (om_graph_find(g, name))
			return true;
	return false;
}

static const char *map_get(nmap *map, const char *from)
{
	nmap *e = NULL;
	HASH_FIND_STR(map, from, e);
	return e ? e->to : NULL;
}

static void map_put(ictx *c, nmap **map, const char *from, const char *to)
{
	nmap *e = alloc(c, 1, sizeof *e);
	if (!e)
		return;
	e->from = from;
	e->to = to;
	HASH_ADD_KEYPTR(hh, *map, e->from, strlen(e->from), e);
	if (map_get(*map, from) != to)
		c->oom = true; /* the table could not grow */
}

/* A fresh name "<prefix>/<name>" in g (reserved by creating its value). */
static const char *fresh(ictx *c, om_graph *g, const char *prefix, const char *name)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%.240s/%.240s", prefix, name);
	const size_t len = strlen(buf);
	for (unsigned k = 1; taken(g, buf); k++)
		snprintf(buf + len, sizeof buf - len, "__%u", k);
	om_value *v = om_graph_value(g, buf);
	if (!v)
		c->oom = true;
	return v ? v->name : "";
}

/* A node name "<prefix>/<name>" that no node of the graph has (a suffix __N when taken). */
static char *node_name(ictx *c, const char *prefix, const char *name)
{
	char buf[600];
	snprintf(buf, sizeof buf, "%.290s/%.290s", prefix, name);
	const size_t len = strlen(buf);
	for (unsigned k = 1; map_get(c->node_names, buf); k++)
		snprintf(buf + len, sizeof buf - len, "__%u", k);
	char *s = om_arena_strdup(c->m->arena, buf);
	if (!s)
		c->oom = true;
	else
		map_put(c, &c->node_names, s, s);
	return s;
}

/* The name body name `s` takes in g (a fresh one the first time it is met). */
static char *rename_top(ictx *c, om_graph *g, nmap **map, const char *prefix, const char *s)
{
	if (!s || !*s)
		return (char *)"";
	const char *to = map_get(*map, s);
	if (!to) {
		to = fresh(c, g, prefix, s);
		map_put(c, map, s, to);
	}
	return (char *)to;
}

/* Inside a subgraph of the body: only names of the body scope change. */
static char *rename_sub(nmap *map, const char *s)
{
	const char *to = s && *s ? map_get(map, s) : NULL;
	return (char *)(to ? to : s);
}

/* ---- copies of the body ---------------------------------------------------------------------- */

typedef struct call {
	const om_node *node;
	const Onnx__FunctionProto *fn;
	const char *prefix;
} call;

/* The attribute a reference names: the call's, else the function's default, else NULL. */
static const Onnx__AttributeProto *ref_value(const call *k, const char *ref)
{
	for (int32_t i = 0; i < k->node->nattr; i++)
		if (!strcmp(k->node->attrs[i].name, ref))
			return k->node->attrs[i].proto;
	for (size_t i = 0; i < k->fn->n_attribute_proto; i++)
		if (same(k->fn->attribute_proto[i]->name, ref))
			return k->fn->attribute_proto[i];
	return NULL;
}

static Onnx__GraphProto *copy_graph(ictx *c, const Onnx__GraphProto *gp, nmap *map,
				    const call *k);

/* A copy of ap for the body copy: references resolved, subgraphs renamed; NULL (and no
 * error) when a reference names no attribute: the attribute is left out. */
static Onnx__AttributeProto *copy_attr(ictx *c, const Onnx__AttributeProto *ap, nmap *map,
				       const call *k)
{
	const Onnx__AttributeProto *src = ap;
	if (ap->ref_attr_name && *ap->ref_attr_name) {
		src = ref_value(k, ap->ref_attr_name);
		if (!src)
			return NULL;
	}
	Onnx__AttributeProto *at = alloc(c, 1, sizeof *at);
	if (!at)
		return NULL;
	*at = *src;
	at->name = ap->name;
	at->ref_attr_name = NULL;
	if (src != ap && ap->has_type && !at->has_type) {
		at->has_type = 1;
		at->type = ap->type;
	}
	if (src->g && !(at->g = copy_graph(c, src->g, map, k)))
		return NULL;
	if (src->n_graphs) {
		at->graphs = alloc(c, src->n_graphs, sizeof *at->graphs);
		for (size_t i = 0; at->graphs && i < src->n_graphs; i++)
			if (!(at->graphs[i] = copy_graph(c, src->graphs[i], map, k)))
				return NULL;
	}
	return c->oom ? NULL : at;
}

static Onnx__AttributeProto **copy_attrs(ictx *c, const Onnx__NodeProto *np, nmap *map,
					 const call *k, size_t *n)
{
	Onnx__AttributeProto **a = alloc(c, np->n_attribute, sizeof *a);
	*n = 0;
	for (size_t i = 0; a && i < np->n_attribute && !c->oom; i++) {
		Onnx__AttributeProto *at = copy_attr(c, np->attribute[i], map, k);
		if (at)
			a[(*n)++] = at;
	}
	return a;
}

/* A node of a body subgraph: names of the body scope renamed, references resolved. */
static Onnx__NodeProto *copy_sub_node(ictx *c, const Onnx__NodeProto *np, nmap *map,
				      const call *k)
{
	Onnx__NodeProto *n = alloc(c, 1, sizeof *n);
	if (!n)
		return NULL;
	*n = *np;
	n->input = alloc(c, np->n_input, sizeof *n->input);
	n->output = alloc(c, np->n_output, sizeof *n->output);
	if (!n->input || !n->output)
		return NULL;
	for (size_t i = 0; i < np->n_input; i++)
		n->input[i] = rename_sub(map, np->input[i]);
	for (size_t i = 0; i < np->n_output; i++)
		n->output[i] = rename_sub(map, np->output[i]);
	n->attribute = copy_attrs(c, np, map, k, &n->n_attribute);
	return c->oom ? NULL : n;
}

static Onnx__GraphProto *copy_graph(ictx *c, const Onnx__GraphProto *gp, nmap *map,
				    const call *k)
{
	Onnx__GraphProto *g = alloc(c, 1, sizeof *g);
	if (!g)
		return NULL;
	*g = *gp;
	g->node = alloc(c, gp->n_node, sizeof *g->node);
	for (size_t i = 0; g->node && i < gp->n_node; i++)
		if (!(g->node[i] = copy_sub_node(c, gp->node[i], map, k)))
			return NULL;
	g->output = alloc(c, gp->n_output, sizeof *g->output);
	for (size_t i = 0; g->output && i < gp->n_output; i++) {
		Onnx__ValueInfoProto *vi = alloc(c, 1, sizeof *vi);
		if (!vi)
			return NULL;
		*vi = *gp->output[i];
		vi->name = rename_sub(map, vi->name);
		g->output[i] = vi;
	}
	return c->oom ? NULL : g;
}

/* ---- one call ------------------------------------------------------------------------------- */

/* Whether F's opset imports agree with the model's; imports only F has are added to it. */
static bool opsets_fit(ictx *c, const Onnx__FunctionProto *f)
{
	for (size_t i = 0; i < f->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = f->opset_import[i];
		const int64_t have = om_model_opset(c->m, o->domain ? o->domain : "");
		if (have && have != o->version)
			return false;
	}
	for (size_t i = 0; i < f->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = f->opset_import[i];
		if (om_model_opset(c->m, o->domain ? o->domain : ""))
			continue;
		om_opset *ops = alloc(c, (size_t)c->m->nopsets + 1, sizeof *ops);
		if (!ops)
			return false;
		if (c->m->nopsets)
			memcpy(ops, c->m->opsets, sizeof *ops * (size_t)c->m->nopsets);
		ops[c->m->nopsets] = (om_opset){om_arena_strdup(c->m->arena, o->domain ? o->domain
										      : ""),
						o->version};
		if (!ops[c->m->nopsets].domain)
			c->oom = true;
		c->m->opsets = ops;
		c->m->nopsets++;
	}
	return !c->oom;
}

static om_kind inline_call(ictx *c, om_graph *g, om_node *n, const Onnx__FunctionProto *f)
{
	char prefix[300];
	snprintf(prefix, sizeof prefix, "%.290s", n->name[0] ? n->name : f->name ? f->name : "f");
	const call k = {n, f, prefix};
	nmap *map = NULL;
	for (size_t i = 0; i < f->n_output; i++)
		if (f->output[i] && *f->output[i])
			map_put(c, &map, f->output[i],
				(int32_t)i < n->nout && n->out[i] ? n->out[i]->name
								 : fresh(c, g, prefix, f->output[i]));
	for (size_t i = 0; i < f->n_input; i++)
		if (f->input[i] && *f->input[i] && !map_get(map, f->input[i]))
			map_put(c, &map, f->input[i],
				(int32_t)i < n->nin && n->in[i] ? n->in[i]->name : "");
	/* the call's outputs are written by the body from now on */
	n->flags |= OM_NODE_DEAD;
	for (int32_t o = 0; o < n->nout; o++)
		if (n->out[o] && n->out[o]->producer == n) {
			n->out[o]->producer = NULL;
			n->out[o]->producer_slot = -1;
		}
	om_kind rc = OM_OK;
	for (size_t i = 0; i < f->n_node && !rc && !c->oom; i++) {
		const Onnx__NodeProto *bp = f->node[i];
		Onnx__NodeProto *np = alloc(c, 1, sizeof *np);
		if (!np)
			break;
		*np = *bp;
		np->input = alloc(c, bp->n_input, sizeof *np->input);
		np->output = alloc(c, bp->n_output, sizeof *np->output);
		for (size_t j = 0; np->input && j < bp->n_input; j++)
			np->input[j] = rename_top(c, g, &map, prefix, bp->input[j]);
		for (size_t j = 0; np->output && j < bp->n_output; j++)
			np->output[j] = rename_top(c, g, &map, prefix, bp->output[j]);
		np->name = node_name(c, prefix, bp->name && *bp->name ? bp->name
							: bp->op_type ? bp->op_type : "");
		np->attribute = copy_attrs(c, bp, map, &k, &np->n_attribute);
		if (c->oom || !np->input || !np->output || !np->name)
			break;
		rc = om_onnx_lower_node(c->m, g, np, c->st);
	}
	/* a formal output that is a formal input: an Identity writes the call's output */
	for (int32_t o = 0; o < n->nout && !rc && !c->oom; o++) {
		om_value *v = n->out[o];
		if (!v || v->producer)
			continue;
		int32_t j = -1;
		for (size_t i = 0; o < (int32_t)f->n_output && i < f->n_input && j < 0; i++)
			if (same(f->input[i], f->output[o]))
				j = (int32_t)i;
		if (j < 0 || j >= n->nin || !n->in[j]) {
			rc = om_error(c->st, OM_ERR_INVALID_MODEL, n,
				      "function '%s' does not compute its output %d", f->name, o);
			break;
		}
		const char *idname = node_name(c, prefix, "Identity");
		om_node *id = idname ? om_graph_add_node(g, "Identity", "", idname, 1, 1) : NULL;
		if (!id) {
			c->oom = true;
			break;
		}
		id->in[0] = n->in[j];
		om_node_set_output(id, 0, v);
	}
	nmap *e, *tmp;
	HASH_ITER(hh, map, e, tmp)
		HASH_DEL(map, e); /* entries are arena memory */
	if (c->oom)
		return om_error(c->st, OM_ERR_NOMEM, n, "out of memory inlining function '%s'",
				f->name);
	return rc;
}

/* Inlines the calls of g's nodes (and those their bodies add), then in subgraphs. */
static void forget_names(ictx *c)
{
	nmap *e, *tmp;
	HASH_ITER(hh, c->node_names, e, tmp)
		HASH_DEL(c->node_names, e); /* entries are arena memory */
}

static om_kind inline_graph(ictx *c, om_graph *g, int *inlined)
{
	bool any = false;
	for (int32_t i = 0; i < g->nnodes && !c->oom; i++)
		if (g->nodes[i]->name[0] && !map_get(c->node_names, g->nodes[i]->name))
			map_put(c, &c->node_names, g->nodes[i]->name, g->nodes[i]->name);
	for (int32_t i = 0; i < g->nnodes; i++) {
		om_node *n = g->nodes[i];
		if ((n->flags & OM_NODE_DEAD) || !own_domain(n->domain))
			continue;
		int32_t f = find_fn(c, n->domain, n->op, n->overload);
		if (f < 0 || !opsets_fit(c, c->fns[f]))
			continue;
		if (++c->calls > MAX_CALLS) {
			forget_names(c);
			return om_error(c->st, OM_ERR_UNSUPPORTED, n,
					"more than %d function calls to inline", MAX_CALLS);
		}
		om_kind rc = inline_call(c, g, n, c->fns[f]);
		if (rc) {
			forget_names(c);
			return rc;
		}
		any = true;
		(*inlined)++;
	}
	forget_names(c);
	if (c->oom)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory inlining functions");
	if (any)
		om_graph_compact(g);
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		for (int32_t a = 0; a < n->nattr; a++) {
			om_kind rc = n->attrs[a].g ? inline_graph(c, n->attrs[a].g, inlined) : OM_OK;
			for (int64_t k = 0; !rc && n->attrs[a].graphs && k < n->attrs[a].n; k++)
				rc = inline_graph(c, n->attrs[a].graphs[k], inlined);
			if (rc)
				return rc;
		}
	}
	return OM_OK;
}

/* ---- functions still called ------------------------------------------------------------------ */

static void use_protos(const ictx *c, const Onnx__NodeProto *const *nodes, size_t n, bool *used);

static void use_fn(const ictx *c, int32_t f, bool *used)
{
	if (f < 0 || used[f])
		return;
	used[f] = true;
	use_protos(c, (const Onnx__NodeProto *const *)c->fns[f]->node, c->fns[f]->n_node, used);
}

static void use_protos(const ictx *c, const Onnx__NodeProto *const *nodes, size_t n, bool *used)
{
	for (size_t i = 0; i < n; i++) {
		const Onnx__NodeProto *np = nodes[i];
		use_fn(c, find_fn(c, np->domain, np->op_type, np->overload), used);
		for (size_t a = 0; a < np->n_attribute; a++) {
			const Onnx__AttributeProto *ap = np->attribute[a];
			if (ap->g)
				use_protos(c, (const Onnx__NodeProto *const *)ap->g->node,
					   ap->g->n_node, used);
			for (size_t k = 0; k < ap->n_graphs; k++)
				use_protos(c, (const Onnx__NodeProto *const *)ap->graphs[k]->node,
					   ap->graphs[k]->n_node, used);
		}
	}
}

static void use_graph(const ictx *c, const om_graph *g, bool *used)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		if (n->flags & OM_NODE_DEAD)
			continue;
		use_fn(c, find_fn(c, n->domain, n->op, n->overload), used);
		for (int32_t a = 0; a < n->nattr; a++) {
			if (n->attrs[a].g)
				use_graph(c, n->attrs[a].g, used);
			for (int64_t k = 0; n->attrs[a].graphs && k < n->attrs[a].n; k++)
				use_graph(c, n->attrs[a].graphs[k], used);
		}
	}
}

om_kind om_onnx_inline_functions(om_model *m, int *inlined, om_status *st)
{
	*inlined = 0;
	if (!m->nfunctions || !m->graph)
		return OM_OK;
	ictx c = {.m = m, .fns = (Onnx__FunctionProto *const *)m->functions,
		  .nfns = m->nfunctions, .st = st};
	int8_t *color = calloc((size_t)m->nfunctions, 1);
	bool *used = calloc((size_t)m->nfunctions, sizeof *used);
	om_kind rc = color && used ? OM_OK : om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	for (int32_t f = 0; f < m->nfunctions && !rc; f++)
		if (own_domain(c.fns[f]->domain) && visit(&c, f, color))
			rc = om_error(st, OM_ERR_INVALID_MODEL, NULL,
				      "function '%s' (domain '%s') calls itself", c.fns[f]->name,
				      c.fns[f]->domain);
	if (!rc)
		rc = inline_graph(&c, m->graph, inlined);
	if (!rc) {
		use_graph(&c, m->graph, used);
		const void **keep = alloc(&c, (size_t)m->nfunctions, sizeof *keep);
		int32_t k = 0;
		for (int32_t f = 0; keep && f < m->nfunctions; f++)
			if (used[f])
				keep[k++] = m->functions[f];
		if (keep) {
			m->functions = keep;
			m->nfunctions = k;
		} else {
			rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
		}
	}
	free(color);
	free(used);
	return rc;
}
