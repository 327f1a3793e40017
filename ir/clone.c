/*
 * clone.c — om_model_clone: a model's IR copied, its weights shared.
 *
 * Graphs, nodes, values, attributes, types and tensor headers are copied into the clone's
 * arena; what is never changed once made is shared: tensor payloads (a pass that changes a
 * weight makes a new tensor, docs/ir.md), strings, and the original protobuf messages the
 * writer reuses (`proto`, `init_proto`, functions). The clone holds a reference to the model
 * it was made from (om_model.base), so that these, and the file mappings the payloads may
 * live in, stay valid for as long as the clone does.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* Old pointer -> new pointer for one graph's values and nodes: open addressing, sized once. */
typedef struct ptr_map {
	const void **from;
	void **to;
	size_t cap;
} ptr_map;

static size_t slot_of(const ptr_map *p, const void *k)
{
	uint64_t h = (uint64_t)(uintptr_t)k * 0x9E3779B97F4A7C15ull;
	size_t i = (size_t)(h >> 17) & (p->cap - 1);
	while (p->from[i] && p->from[i] != k)
		i = (i + 1) & (p->cap - 1);
	return i;
}

static bool map_open(ptr_map *p, size_t n)
{
	p->cap = 16;
	while (p->cap < 2 * n + 16)
		p->cap *= 2;
	p->from = calloc(p->cap, sizeof *p->from);
	p->to = calloc(p->cap, sizeof *p->to);
	return p->from && p->to;
}

static void map_put(ptr_map *p, const void *k, void *v)
{
	const size_t i = slot_of(p, k);
	p->from[i] = k;
	p->to[i] = v;
}

static void *map_get(const ptr_map *p, const void *k)
{
	return k ? p->to[slot_of(p, k)] : NULL;
}

static void map_close(ptr_map *p)
{
	free(p->from);
	free(p->to);
}

typedef struct clone_ctx {
	om_model *m;  /* the clone */
	bool foreign; /* a node or list names a value its graph does not hold */
	om_status *st;
} clone_ctx;

/* The copy of v, a value of the graph being copied (NULL stays NULL). */
static om_value *mapped(clone_ctx *c, const ptr_map *map, const om_value *v)
{
	om_value *nv = map_get(map, v);
	c->foreign |= v && !nv;
	return nv;
}

/* n elements of size bytes at p, copied into the clone's arena (NULL stays NULL) */
static bool dup(clone_ctx *c, void *dst, const void *p, size_t n, size_t size)
{
	void *q = p && n ? om_arena_memdup(c->m->arena, p, n * size) : NULL;
	memcpy(dst, &q, sizeof q);
	return q || !p || !n;
}

/* A tensor header copied; its payload shared. */
static om_tensor *tensor(clone_ctx *c, const om_tensor *t)
{
	return t ? om_arena_memdup(c->m->arena, t, sizeof *t) : NULL;
}

static om_graph *graph(clone_ctx *c, const om_graph *g, om_graph *parent);

static bool attr(clone_ctx *c, om_attr *a, om_graph *owner)
{
	if (!dup(c, &a->floats, a->floats, (size_t)a->n, sizeof *a->floats) ||
	    !dup(c, &a->ints, a->ints, (size_t)a->n, sizeof *a->ints) ||
	    !dup(c, &a->strings, a->strings, (size_t)a->n, sizeof *a->strings) ||
	    !dup(c, &a->tensors, a->tensors, (size_t)a->n, sizeof *a->tensors) ||
	    !dup(c, &a->graphs, a->graphs, (size_t)a->n, sizeof *a->graphs))
		return false;
	if (a->t && !(a->t = tensor(c, a->t)))
		return false;
	if (a->g && !(a->g = graph(c, a->g, owner)))
		return false;
	for (int64_t k = 0; a->tensors && k < a->n; k++)
		if (a->tensors[k] && !(a->tensors[k] = tensor(c, a->tensors[k])))
			return false;
	for (int64_t k = 0; a->graphs && k < a->n; k++)
		if (a->graphs[k] && !(a->graphs[k] = graph(c, a->graphs[k], owner)))
			return false;
	return true;
}

static bool node(clone_ctx *c, const ptr_map *map, om_node *n, om_graph *ng)
{
	n->graph = ng;
	if (!dup(c, &n->in, n->in, (size_t)n->nin, sizeof *n->in) ||
	    !dup(c, &n->out, n->out, (size_t)n->nout, sizeof *n->out) ||
	    !dup(c, &n->attrs, n->attrs, (size_t)n->nattr, sizeof *n->attrs) ||
	    !dup(c, &n->meta, n->meta, (size_t)n->nmeta, sizeof *n->meta))
		return false;
	for (int32_t i = 0; i < n->nin; i++)
		n->in[i] = mapped(c, map, n->in[i]);
	for (int32_t i = 0; i < n->nout; i++)
		n->out[i] = mapped(c, map, n->out[i]);
	for (int32_t i = 0; i < n->nattr; i++)
		if (!attr(c, &n->attrs[i], ng))
			return false;
	return true;
}

static bool value_list(clone_ctx *c, const ptr_map *map, om_value ***list, int32_t n)
{
	if (!dup(c, list, *list, (size_t)n, sizeof **list))
		return false;
	for (int32_t i = 0; i < n; i++)
		(*list)[i] = mapped(c, map, (*list)[i]);
	return !c->foreign;
}

/* g's values, then its nodes (subgraphs within), then the producers and the lists. */
static bool graph_body(clone_ctx *c, ptr_map *map, const om_graph *g, om_graph *ng)
{
	ng->name = g->name;
	ng->doc = g->doc;
	ng->proto = g->proto;
	ng->nmeta = g->nmeta;
	if (!dup(c, &ng->meta, g->meta, (size_t)g->nmeta, sizeof *g->meta))
		return false;
	for (const om_value *v = g->values; v; v = v->hh.next) {
		om_value *nv = om_arena_alloc(c->m->arena, sizeof *nv);
		if (!nv)
			return false;
		*nv = *v;
		memset(&nv->hh, 0, sizeof nv->hh);
		if (!dup(c, &nv->type.dims, v->type.dims, (size_t)(v->type.rank > 0 ? v->type.rank : 0),
			 sizeof *v->type.dims) ||
		    (v->init && !(nv->init = tensor(c, v->init))))
			return false;
		HASH_ADD_KEYPTR(hh, ng->values, nv->name, strlen(nv->name), nv);
		if (om_graph_find(ng, nv->name) != nv)
			return false; /* the table could not grow */
		map_put(map, v, nv);
	}
	ng->nodes = om_arena_alloc(c->m->arena, sizeof *ng->nodes * (size_t)(g->nnodes + 1));
	if (!ng->nodes)
		return false;
	ng->nnodes = ng->cap_nodes = g->nnodes;
	for (int32_t i = 0; i < g->nnodes; i++) {
		om_node *nn = om_arena_memdup(c->m->arena, g->nodes[i], sizeof *nn);
		if (!nn || !node(c, map, nn, ng) || c->foreign)
			return false;
		ng->nodes[i] = nn;
		map_put(map, g->nodes[i], nn);
	}
	for (om_value *v = ng->values; v; v = v->hh.next)
		v->producer = map_get(map, v->producer);
	ng->ninputs = g->ninputs, ng->noutputs = g->noutputs;
	ng->ninits = g->ninits, ng->ninfos = g->ninfos;
	ng->inputs = g->inputs, ng->outputs = g->outputs;
	ng->inits = g->inits, ng->infos = g->infos;
	return value_list(c, map, &ng->inputs, g->ninputs) &&
	       value_list(c, map, &ng->outputs, g->noutputs) &&
	       value_list(c, map, &ng->inits, g->ninits) && value_list(c, map, &ng->infos, g->ninfos);
}

static om_graph *graph(clone_ctx *c, const om_graph *g, om_graph *parent)
{
	om_graph *ng = om_graph_new(c->m, parent);
	ptr_map map = {0};
	bool ok = ng && map_open(&map, HASH_COUNT(g->values) + (size_t)g->nnodes) &&
		  graph_body(c, &map, g, ng);
	map_close(&map);
	return ok ? ng : NULL;
}

om_kind om_model_clone(const om_model *m, om_model **out, om_status *st)
{
	*out = NULL;
	om_model *n = om_model_new();
	if (!n)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory copying the model");
	clone_ctx c = {.m = n, .st = st};
	n->ir_version = m->ir_version;
	n->nopsets = m->nopsets, n->nmeta = m->nmeta;
	n->producer_name = m->producer_name, n->producer_version = m->producer_version;
	n->domain = m->domain, n->doc = m->doc;
	n->model_version = m->model_version;
	n->dir = m->dir;
	n->proto = m->proto;
	n->nfunctions = m->nfunctions;
	om_model_retain(m);
	n->base = m;
	if (!dup(&c, &n->opsets, m->opsets, (size_t)m->nopsets, sizeof *m->opsets) ||
	    !dup(&c, &n->meta, m->meta, (size_t)m->nmeta, sizeof *m->meta) ||
	    !dup(&c, &n->functions, m->functions, (size_t)m->nfunctions, sizeof *m->functions) ||
	    (m->graph && !(n->graph = graph(&c, m->graph, NULL)))) {
		om_model_free(n);
		return c.foreign ? om_error(st, OM_ERR_INTERNAL, NULL, "a node or a graph list "
					    "names a value its graph does not hold")
				 : om_error(st, OM_ERR_NOMEM, NULL, "out of memory copying the model");
	}
	*out = n;
	return OM_OK;
}
