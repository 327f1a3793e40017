/* tu_node.h — building one-node graphs and checking float results in kernel tests. */
#ifndef OM_TU_NODE_H
#define OM_TU_NODE_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eval.h"
#include "testutil.h"

/* A value in the arena only (not in the graph's hash: eval needs no names). */
static inline om_value *tu_value(om_model *m, const char *prefix, int32_t i)
{
	char name[32];
	snprintf(name, sizeof name, "%s%d", prefix, i);
	om_value *v = om_arena_alloc(m->arena, sizeof *v);
	v->name = om_arena_strdup(m->arena, name);
	v->type.rank = -1;
	v->producer_slot = -1;
	return v;
}

/** A node `op` with nin inputs and nout outputs named i0.. and o0.. (model's arena). */
static inline om_node *tu_node(om_model *m, const char *op, int32_t nin, int32_t nout)
{
	if (!m->graph)
		m->graph = om_graph_new(m, NULL);
	om_node *n = om_graph_add_node(m->graph, op, "", op, nin, nout);
	for (int32_t i = 0; i < nin; i++)
		n->in[i] = tu_value(m, "i", i);
	for (int32_t i = 0; i < nout; i++)
		om_node_set_output(n, i, tu_value(m, "o", i));
	return n;
}

static inline void tu_ints(om_node *n, const char *name, int64_t count, const int64_t *v)
{
	om_attr *a = om_node_set_attr(n, name, OM_ATTR_INTS);
	a->ints = om_arena_alloc(n->graph->model->arena, sizeof(int64_t) * (size_t)(count + 1));
	memcpy(a->ints, v, sizeof(int64_t) * (size_t)count);
	a->n = count;
}

static inline void tu_floats(om_node *n, const char *name, int64_t count, const float *v)
{
	om_attr *a = om_node_set_attr(n, name, OM_ATTR_FLOATS);
	a->floats = om_arena_alloc(n->graph->model->arena, sizeof(float) * (size_t)(count + 1));
	memcpy(a->floats, v, sizeof(float) * (size_t)count);
	a->n = count;
}

static inline void tu_int(om_node *n, const char *name, int64_t v)
{
	om_node_set_attr(n, name, OM_ATTR_INT)->i = v;
}

static inline void tu_float(om_node *n, const char *name, float v)
{
	om_node_set_attr(n, name, OM_ATTR_FLOAT)->f = v;
}

static inline void tu_str(om_node *n, const char *name, const char *v)
{
	om_attr *a = om_node_set_attr(n, name, OM_ATTR_STRING);
	a->s.ptr = om_arena_strdup(n->graph->model->arena, v);
	a->s.len = (int64_t)strlen(v);
}

/** A borrowed tensor over `data`. */
static inline om_tensor tu_tensor(int32_t dtype, int32_t rank, const int64_t *dims,
				  const void *data)
{
	om_tensor t = {.dtype = dtype, .rank = rank, .data = (void *)data};
	for (int32_t i = 0; i < rank; i++)
		t.dims[i] = dims[i];
	t.nbytes = om_tensor_bytes_for(dtype, rank, dims);
	return t;
}

static inline void tu_assert_shape(const om_tensor *t, int32_t rank, const int64_t *dims)
{
	assert_int_equal(t->rank, rank);
	for (int32_t i = 0; i < rank; i++)
		assert_int_equal(t->dims[i], dims[i]);
}

/** Every element within tol (relative to max(1, |expect|)) of expect. */
static inline void tu_assert_floats(const om_tensor *t, const float *expect, int64_t n, float tol)
{
	assert_int_equal(t->dtype, OM_FLOAT);
	assert_int_equal(om_tensor_numel(t), n);
	const float *v = t->data;
	for (int64_t i = 0; i < n; i++) {
		float e = expect[i], scale = fabsf(e) > 1 ? fabsf(e) : 1;
		if (!(fabsf(v[i] - e) <= tol * scale))
			fail_msg("element %lld: got %.9g, expected %.9g", (long long)i, v[i], e);
	}
}

/** Like om_eval_node, with the exact flag chosen (fast mode when exact == 0). */
static inline om_kind tu_run(const om_node *n, int64_t opset, const om_tensor *const *in,
			     om_tensor *out, int exact, om_status *st)
{
	if (exact)
		return om_eval_node(n, opset, in, out, st);
	om_kind rc = om_infer_node(n, opset, in, out, st);
	if (rc)
		return rc;
	om_tensor *outp[8] = {0};
	for (int32_t i = 0; i < n->nout && i < 8; i++) {
		if (!n->out[i])
			continue;
		om_tensor shape = out[i];
		if ((rc = om_tensor_alloc(&out[i], shape.dtype, shape.rank, shape.dims, st))) {
			for (int32_t j = 0; j < i; j++)
				om_tensor_free(&out[j]);
			return rc;
		}
		outp[i] = &out[i];
	}
	om_ctx c = {.node = n, .opset = opset, .nin = n->nin, .nout = n->nout, .in = in,
		    .out = outp, .st = st, .exact = 0, .threads = 1};
	rc = om_op_find(n->domain, n->op, opset)->kernel(&c);
	for (int32_t i = 0; rc && i < n->nout && i < 8; i++)
		om_tensor_free(&out[i]);
	return rc;
}

#endif
