#include <string.h>

#include "ir.h"

const om_attr *om_node_attr(const om_node *n, const char *name)
{
	for (int32_t i = 0; i < n->nattr; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

bool om_node_has_subgraph(const om_node *n)
{
	for (int32_t i = 0; i < n->nattr; i++)
		if (n->attrs[i].type == OM_ATTR_GRAPH || n->attrs[i].type == OM_ATTR_GRAPHS)
			return true;
	return false;
}

bool om_graph_has_subgraph(const om_graph *g)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		if (om_node_has_subgraph(g->nodes[i]))
			return true;
	return false;
}

int64_t om_attr_int(const om_node *n, const char *name, int64_t dflt)
{
	const om_attr *a = om_node_attr(n, name);
	return a && a->type == OM_ATTR_INT ? a->i : dflt;
}

float om_attr_float(const om_node *n, const char *name, float dflt)
{
	const om_attr *a = om_node_attr(n, name);
	if (!a)
		return dflt;
	if (a->type == OM_ATTR_FLOAT)
		return a->f;
	if (a->type == OM_ATTR_INT)
		return (float)a->i;
	return dflt;
}

const char *om_attr_string(const om_node *n, const char *name, const char *dflt)
{
	const om_attr *a = om_node_attr(n, name);
	return a && a->type == OM_ATTR_STRING && a->s.ptr ? a->s.ptr : dflt;
}

int om_attr_choice(const om_node *n, const char *name, const char *const *choices, int dflt)
{
	const char *s = om_attr_string(n, name, NULL);
	if (!s)
		return dflt;
	for (int i = 0; choices[i]; i++)
		if (!strcmp(s, choices[i]))
			return i;
	return -1;
}

const int64_t *om_attr_ints(const om_node *n, const char *name, int64_t *count)
{
	const om_attr *a = om_node_attr(n, name);
	if (!a || a->type != OM_ATTR_INTS) {
		*count = 0;
		return NULL;
	}
	*count = a->n;
	return a->ints;
}

const float *om_attr_floats(const om_node *n, const char *name, int64_t *count)
{
	const om_attr *a = om_node_attr(n, name);
	if (!a || a->type != OM_ATTR_FLOATS) {
		*count = 0;
		return NULL;
	}
	*count = a->n;
	return a->floats;
}

const om_tensor *om_attr_tensor(const om_node *n, const char *name)
{
	const om_attr *a = om_node_attr(n, name);
	return a && a->type == OM_ATTR_TENSOR ? a->t : NULL;
}

om_attr *om_node_set_attr(om_node *n, const char *name, int32_t type)
{
	om_arena *ar = n->graph->model->arena;
	for (int32_t i = 0; i < n->nattr; i++)
		if (!strcmp(n->attrs[i].name, name)) {
			om_attr *a = &n->attrs[i];
			memset(a, 0, sizeof *a);
			a->name = om_arena_strdup(ar, name);
			a->type = type;
			return a->name ? a : NULL;
		}
	om_attr *na = om_arena_alloc(ar, sizeof *na * (size_t)(n->nattr + 1));
	if (!na)
		return NULL;
	if (n->nattr)
		memcpy(na, n->attrs, sizeof *na * (size_t)n->nattr);
	n->attrs = na;
	om_attr *a = &na[n->nattr++];
	a->name = om_arena_strdup(ar, name);
	a->type = type;
	return a->name ? a : NULL;
}
