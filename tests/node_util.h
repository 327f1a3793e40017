/* node_util.h — one-node models for the operator tests (build a node, feed tensors, eval). */
#ifndef OM_NODE_UTIL_H
#define OM_NODE_UTIL_H

#include <stdio.h>
#include <string.h>

#include "eval.h"
#include "testutil.h"

/** A node `op` with nin inputs and nout outputs (all present) in a fresh model's graph. */
static inline om_node *nu_node(om_model **m, const char *op, int32_t nin, int32_t nout)
{
	*m = om_model_new();
	om_graph *g = (*m)->graph = om_graph_new(*m, NULL);
	om_node *n = om_graph_add_node(g, op, "", "n0", nin, nout);
	char name[32];
	for (int32_t i = 0; i < nin; i++) {
		snprintf(name, sizeof name, "i%d", i);
		n->in[i] = om_graph_value(g, name);
	}
	for (int32_t i = 0; i < nout; i++) {
		snprintf(name, sizeof name, "o%d", i);
		om_node_set_output(n, i, om_graph_value(g, name));
	}
	return n;
}

/** Frees the model (clears the value hash first: om_model_free leaves uthash's table). */
static inline void nu_free(om_model *m)
{
	if (m->graph)
		HASH_CLEAR(hh, m->graph->values);
	om_model_free(m);
}

static inline void nu_int(om_node *n, const char *name, int64_t v)
{
	om_node_set_attr(n, name, OM_ATTR_INT)->i = v;
}

static inline void nu_ints(om_node *n, const char *name, int64_t count, const int64_t *v)
{
	om_attr *a = om_node_set_attr(n, name, OM_ATTR_INTS);
	a->ints = om_arena_alloc(n->graph->model->arena, sizeof(int64_t) * (size_t)(count + 1));
	if (count)
		memcpy(a->ints, v, sizeof(int64_t) * (size_t)count);
	a->n = count;
}

static inline void nu_str(om_node *n, const char *name, const char *v)
{
	om_attr *a = om_node_set_attr(n, name, OM_ATTR_STRING);
	a->s.ptr = om_arena_strndup(n->graph->model->arena, v, strlen(v));
	a->s.len = (int64_t)strlen(v);
}

/** A borrowed tensor over `data`. */
static inline om_tensor nu_t(int32_t dtype, int32_t rank, const int64_t *dims, const void *data)
{
	om_tensor t = {.dtype = dtype, .rank = rank, .data = (void *)data};
	for (int32_t i = 0; i < rank; i++)
		t.dims[i] = dims[i];
	t.nbytes = om_tensor_bytes_for(dtype, rank, dims);
	return t;
}

#define NU_I64(...) nu_t(OM_INT64, 1, (int64_t[]){sizeof((int64_t[]){__VA_ARGS__}) / 8}, \
			 (int64_t[]){__VA_ARGS__})

/** Shape equality against a literal list. */
static inline void nu_assert_shape(const om_tensor *t, int32_t rank, const int64_t *dims)
{
	assert_int_equal(t->rank, rank);
	for (int32_t i = 0; i < rank; i++)
		assert_int_equal(t->dims[i], dims[i]);
}

#endif
