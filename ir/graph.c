#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* The first suffix om_graph_fresh_value has not tried yet for a base name: names are never
 * removed from a graph, so every "base__i" below it is taken and need not be tried again
 * (without it, k values made from one hint cost k^2 lookups). */
struct om_fresh {
	const char *base;
	unsigned next;
	UT_hash_handle hh;
};

om_model *om_model_new(void)
{
	om_arena *a = om_arena_new();
	if (!a)
		return NULL;
	om_model *m = om_arena_alloc(a, sizeof *m);
	if (!m) {
		om_arena_free(a);
		return NULL;
	}
	m->arena = a;
	atomic_init(&m->refs, 1);
	m->ir_version = 10;
	m->producer_name = m->producer_version = m->domain = m->doc = "";
	return m;
}

void om_model_retain(const om_model *m)
{
	/* the count is the one field a holder of a const model may change */
	atomic_fetch_add(&((om_model *)m)->refs, 1);
}

void om_model_drop_payload(om_model *m, om_value *v)
{
	if (m->drop_payload && !m->base && atomic_load(&m->refs) == 1 && v && v->init)
		m->drop_payload(m, v);
}

bool om_model_file_pages(const om_model *m, const void *p, size_t n, bool give_back)
{
	for (; m; m = m->base)
		if (m->file_pages && m->file_pages(m, p, n, give_back))
			return true;
	return false;
}

bool om_model_file_read(const om_model *m, const void *p, size_t n, void *dst)
{
	for (; m; m = m->base)
		if (m->file_read && m->file_read(m, p, n, dst))
			return true;
	return false;
}

void om_model_free(om_model *m)
{
	if (!m || atomic_fetch_sub(&m->refs, 1) > 1)
		return;
	if (m->release)
		m->release(m);
	for (om_graph *g = m->all_graphs; g; g = g->next_in_model) {
		HASH_CLEAR(hh, g->values); /* uthash buckets are malloc'd, not arena memory */
		HASH_CLEAR(hh, g->fresh);
	}
	om_model *base = (om_model *)m->base; /* m lives in its arena */
	om_arena_free(m->arena);
	om_model_free(base);
}

om_graph *om_graph_new(om_model *m, om_graph *parent)
{
	om_graph *g = om_arena_alloc(m->arena, sizeof *g);
	if (!g)
		return NULL;
	g->model = m;
	g->parent = parent;
	g->name = g->doc = "";
	g->next_in_model = m->all_graphs;
	m->all_graphs = g;
	return g;
}

om_value *om_graph_find(const om_graph *g, const char *name)
{
	om_value *v = NULL;
	HASH_FIND_STR(g->values, name, v);
	return v;
}

om_value *om_graph_value(om_graph *g, const char *name)
{
	om_value *v = om_graph_find(g, name);
	if (v)
		return v;
	v = om_arena_alloc(g->model->arena, sizeof *v);
	if (!v)
		return NULL;
	v->name = om_arena_strdup(g->model->arena, name);
	if (!v->name)
		return NULL;
	v->type.rank = -1;
	v->producer_slot = -1;
	HASH_ADD_KEYPTR(hh, g->values, v->name, strlen(v->name), v);
	return om_graph_find(g, v->name) == v ? v : NULL; /* NULL: the table could not grow */
}

om_value *om_graph_fresh_value(om_graph *g, const char *hint)
{
	char buf[256];
	const char *base = hint && *hint ? hint : "v";
	snprintf(buf, sizeof buf, "%s", base);
	if (!om_graph_find(g, buf))
		return om_graph_value(g, buf);
	char key[201];
	snprintf(key, sizeof key, "%.200s", base);
	struct om_fresh *f = NULL;
	HASH_FIND_STR(g->fresh, key, f);
	if (!f) {
		f = om_arena_alloc(g->model->arena, sizeof *f);
		const char *k = f ? om_arena_strdup(g->model->arena, key) : NULL;
		if (!k)
			return NULL;
		f->base = k;
		f->next = 1;
		HASH_ADD_KEYPTR(hh, g->fresh, f->base, strlen(f->base), f);
		/* a table that could not grow leaves f out: it is only a shortcut */
	}
	unsigned i = f->next;
	for (;; i++) {
		snprintf(buf, sizeof buf, "%s__%u", key, i);
		if (!om_graph_find(g, buf))
			break;
	}
	f->next = i + 1;
	return om_graph_value(g, buf);
}

om_value *om_graph_resolve(const om_graph *g, om_value *v)
{
	while (v && (v->flags & OM_VALUE_OUTER) && g->parent) {
		g = g->parent;
		om_value *up = om_graph_find(g, v->name);
		if (!up)
			break;
		v = up;
	}
	return v;
}

om_node *om_graph_add_node(om_graph *g, const char *op, const char *domain, const char *name,
			   int32_t nin, int32_t nout)
{
	om_arena *a = g->model->arena;
	if (g->nnodes == g->cap_nodes) {
		int32_t cap = g->cap_nodes ? 2 * g->cap_nodes : 16;
		om_node **nn = om_arena_alloc(a, sizeof *nn * (size_t)cap);
		if (!nn)
			return NULL;
		if (g->nnodes)
			memcpy(nn, g->nodes, sizeof *nn * (size_t)g->nnodes);
		g->nodes = nn;
		g->cap_nodes = cap;
	}
	om_node *n = om_arena_alloc(a, sizeof *n);
	if (!n)
		return NULL;
	n->op = om_arena_strdup(a, op);
	n->domain = om_arena_strdup(a, domain ? domain : "");
	n->name = om_arena_strdup(a, name ? name : "");
	n->overload = n->doc = "";
	n->nin = nin;
	n->nout = nout;
	n->in = om_arena_alloc(a, sizeof *n->in * (size_t)(nin ? nin : 1));
	n->out = om_arena_alloc(a, sizeof *n->out * (size_t)(nout ? nout : 1));
	n->graph = g;
	if (!n->op || !n->domain || !n->name || !n->in || !n->out)
		return NULL;
	g->nodes[g->nnodes++] = n;
	return n;
}

om_node *om_graph_add_node_like(om_graph *g, const om_node *like, int32_t nin, int32_t nout)
{
	om_node *n = om_graph_add_node(g, like->op, like->domain, like->name, nin, nout);
	if (n) {
		n->overload = like->overload;
		n->doc = like->doc;
		n->attrs = like->attrs;
		n->nattr = like->nattr;
		n->meta = like->meta;
		n->nmeta = like->nmeta;
		n->proto = like->proto;
	}
	return n;
}

void om_node_set_output(om_node *n, int32_t slot, om_value *v)
{
	n->out[slot] = v;
	if (v) {
		v->producer = n;
		v->producer_slot = slot;
	}
}

void om_graph_compact(om_graph *g)
{
	int32_t k = 0;
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!(g->nodes[i]->flags & OM_NODE_DEAD))
			g->nodes[k++] = g->nodes[i];
	g->nnodes = k;
}

/* fn over the values of g that graph sub (at any depth) refers to; true when fn stopped it */
static bool sub_outer_refs(const om_graph *g, const om_graph *sub,
			   bool (*fn)(void *arg, om_value *v), void *arg);

/* ... that the subgraphs of node n refer to */
static bool attr_outer_refs(const om_graph *g, const om_node *n,
			    bool (*fn)(void *arg, om_value *v), void *arg)
{
	for (int32_t a = 0; a < n->nattr; a++) {
		const om_attr *at = &n->attrs[a];
		if (at->g && sub_outer_refs(g, at->g, fn, arg))
			return true;
		for (int64_t k = 0; k < at->n && at->graphs; k++)
			if (sub_outer_refs(g, at->graphs[k], fn, arg))
				return true;
	}
	return false;
}

static bool sub_outer_refs(const om_graph *g, const om_graph *sub,
			   bool (*fn)(void *arg, om_value *v), void *arg)
{
	const om_value *v, *tmp;
	HASH_ITER(hh, sub->values, v, tmp) {
		if (!(v->flags & OM_VALUE_OUTER))
			continue;
		om_value *ov = om_graph_find(g, v->name);
		if (ov && fn(arg, ov))
			return true;
	}
	/* references that pass through sub to its own subgraphs are outer values of sub too */
	for (int32_t i = 0; i < sub->nnodes; i++)
		if (attr_outer_refs(g, sub->nodes[i], fn, arg))
			return true;
	return false;
}

bool om_node_outer_refs(const om_graph *g, const om_node *n, bool (*fn)(void *arg, om_value *v),
			void *arg)
{
	return attr_outer_refs(g, n, fn, arg);
}

static bool add_use(void *arg, om_value *v)
{
	v->nuses += *(const int32_t *)arg;
	return false;
}

/* A subgraph's outer references count as uses of the enclosing graph's values. */
static void count_node_uses(om_graph *g, const om_node *n, int32_t delta)
{
	for (int32_t i = 0; i < n->nin; i++)
		if (n->in[i])
			n->in[i]->nuses += delta;
	(void)om_node_outer_refs(g, n, add_use, &delta);
}

void om_graph_count_uses(om_graph *g)
{
	om_value *v, *tmp;
	HASH_ITER(hh, g->values, v, tmp) v->nuses = 0;
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!(g->nodes[i]->flags & OM_NODE_DEAD))
			count_node_uses(g, g->nodes[i], 1);
	for (int32_t i = 0; i < g->noutputs; i++)
		g->outputs[i]->nuses++;
}

void om_node_add_uses(om_graph *g, const om_node *n, int32_t delta)
{
	count_node_uses(g, n, delta);
}

/* Kahn's algorithm with a min-heap on file position, so that a sorted graph keeps its order.
 * A value counts as available when no node of this graph produces it. */
static void heap_push(int32_t *h, int32_t *n, int32_t x)
{
	int32_t i = (*n)++;
	while (i > 0 && h[(i - 1) / 2] > x) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

static int32_t heap_pop(int32_t *h, int32_t *n)
{
	int32_t top = h[0], x = h[--(*n)], i = 0;
	for (;;) {
		int32_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= x)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
	return top;
}

/* The edges into node i of g: its inputs, and the values of g its subgraphs read (outer
 * references, through nested subgraphs too: a branch that reads a value must run after the
 * value's producer), each as the producer's index; with edge NULL, counted only. */
typedef struct topo_edges {
	const om_graph *g;
	int32_t *pending, *start, *fill, *edge;
	int32_t i;
} topo_edges;

static bool topo_edge(void *arg, om_value *v)
{
	topo_edges *t = arg;
	if (!v || !v->producer || v->producer->graph != t->g)
		return false;
	const int32_t p = v->producer->id;
	if (!t->edge) {
		t->start[p + 1]++;
		t->pending[t->i]++;
	} else {
		t->edge[t->fill[p]++] = t->i;
	}
	return false;
}

static void topo_node_edges(topo_edges *t, int32_t i)
{
	const om_node *n = t->g->nodes[i];
	t->i = i;
	for (int32_t k = 0; k < n->nin; k++)
		topo_edge(t, n->in[k]);
	(void)om_node_outer_refs(t->g, n, topo_edge, t);
}

om_kind om_graph_toposort(om_graph *g, om_status *st)
{
	int32_t n = g->nnodes, nedges = 0;
	if (n == 0)
		return OM_OK;
	for (int32_t i = 0; i < n; i++)
		g->nodes[i]->id = i;
	int32_t *pending = calloc((size_t)n, sizeof(int32_t));
	int32_t *start = calloc((size_t)n + 1, sizeof(int32_t));
	int32_t *edge = NULL;
	int32_t *heap = calloc((size_t)n, sizeof(int32_t));
	om_node **order = calloc((size_t)n, sizeof(om_node *));
	om_kind rc = OM_OK;
	if (!pending || !start || !heap || !order) {
		rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory sorting nodes");
		goto out;
	}
	/* consumer lists in CSR form: producer index -> consumer indices (one per edge) */
	topo_edges t = {.g = g, .pending = pending, .start = start};
	for (int32_t i = 0; i < n; i++)
		topo_node_edges(&t, i);
	for (int32_t i = 0; i < n; i++)
		start[i + 1] += start[i];
	nedges = start[n];
	if (!(edge = calloc((size_t)nedges + 1, sizeof(int32_t)))) {
		rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory sorting nodes");
		goto out;
	}
	int32_t *fill = heap; /* reuse as a cursor array before the heap is needed */
	memcpy(fill, start, sizeof(int32_t) * (size_t)n);
	t.fill = fill, t.edge = edge;
	for (int32_t i = 0; i < n; i++)
		topo_node_edges(&t, i);
	int32_t nheap = 0, done = 0;
	for (int32_t i = 0; i < n; i++)
		if (!pending[i])
			heap_push(heap, &nheap, i);
	while (nheap) {
		int32_t i = heap_pop(heap, &nheap);
		order[done++] = g->nodes[i];
		for (int32_t e = start[i]; e < start[i + 1]; e++)
			if (--pending[edge[e]] == 0)
				heap_push(heap, &nheap, edge[e]);
	}
	if (done != n)
		rc = om_error(st, OM_ERR_INVALID_MODEL, NULL, "graph '%s' has a cycle", g->name);
	else
		memcpy(g->nodes, order, sizeof *order * (size_t)n);
	for (int32_t i = 0; i < g->nnodes; i++)
		g->nodes[i]->id = i;
out:
	free(pending), free(start), free(edge), free(heap), free(order);
	return rc;
}

int64_t om_model_opset(const om_model *m, const char *domain)
{
	if (!domain || !strcmp(domain, "ai.onnx"))
		domain = "";
	for (int32_t i = 0; i < m->nopsets; i++) {
		const char *d = m->opsets[i].domain ? m->opsets[i].domain : "";
		if (!strcmp(d, "ai.onnx"))
			d = "";
		if (!strcmp(d, domain))
			return m->opsets[i].version;
	}
	return 0;
}

bool om_dims_equal(om_dim a, om_dim b)
{
	if (a.value >= 0 || b.value >= 0)
		return a.value == b.value;
	return a.param && b.param && !strcmp(a.param, b.param);
}

void om_type_from_tensor(om_model *m, om_type *ty, const om_tensor *t)
{
	ty->kind = OM_TYPE_TENSOR;
	ty->elem = t->dtype;
	ty->rank = t->rank;
	ty->dims = om_arena_alloc(m->arena, sizeof(om_dim) * (size_t)(t->rank ? t->rank : 1));
	if (!ty->dims) {
		ty->rank = -1;
		return;
	}
	for (int32_t i = 0; i < t->rank; i++)
		ty->dims[i] = (om_dim){t->dims[i], NULL};
}

om_tensor *om_model_tensor(om_model *m, int32_t dtype, int32_t rank, const int64_t *dims)
{
	const int64_t bytes = om_shape_bytes(dtype, rank, dims);
	if (bytes < 0 || (uint64_t)bytes >= SIZE_MAX)
		return NULL;
	om_tensor *t = om_arena_alloc(m->arena, sizeof *t);
	if (!t)
		return NULL;
	t->dtype = dtype;
	t->rank = rank;
	for (int32_t i = 0; i < rank; i++)
		t->dims[i] = dims[i];
	t->nbytes = (size_t)bytes;
	t->data = om_arena_alloc(m->arena, t->nbytes);
	return t->data ? t : NULL;
}

om_tensor *om_model_tensor_copy(om_model *m, const om_tensor *src)
{
	om_tensor *t = om_model_tensor(m, src->dtype, src->rank, src->dims);
	if (!t)
		return NULL;
	if (src->dtype != OM_STRING) {
		if (src->nbytes)
			memcpy(t->data, src->data, src->nbytes);
		return t;
	}
	const om_str *s = src->data;
	om_str *d = t->data;
	for (int64_t i = 0, n = om_tensor_numel(src); i < n; i++) {
		d[i].ptr = om_arena_strndup(m->arena, s[i].ptr ? s[i].ptr : "", (size_t)s[i].len);
		d[i].len = s[i].len;
		if (!d[i].ptr)
			return NULL;
	}
	return t;
}
