/* nodetest.h — build one node and run it through om_eval_node (the kernel tests of the reduce,
 * norm and linalg groups). Everything lives in the model's arena; results are malloc'd. */
#ifndef OM_NODETEST_H
#define OM_NODETEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eval.h"
#include "testutil.h"

/** A node `op` with nin inputs and nout outputs (all present) in a fresh model. */
static inline om_node *nt_node(om_model **m, const char *op, int32_t nin, int32_t nout)
{
	*m = om_model_new();
	om_graph *g = (*m)->graph = om_graph_new(*m, NULL);
	om_node *n = om_graph_add_node(g, op, "", "n0", nin, nout);
	char name[16];
	for (int32_t i = 0; i < nin; i++) {
		snprintf(name, sizeof name, "x%d", i);
		n->in[i] = om_graph_value(g, name);
	}
	for (int32_t i = 0; i < nout; i++) {
		snprintf(name, sizeof name, "y%d", i);
		om_node_set_output(n, i, om_graph_value(g, name));
	}
	return n;
}

static inline void nt_int(om_node *n, const char *name, int64_t v)
{
	om_node_set_attr(n, name, OM_ATTR_INT)->i = v;
}

static inline void nt_float(om_node *n, const char *name, float v)
{
	om_node_set_attr(n, name, OM_ATTR_FLOAT)->f = v;
}

static inline void nt_ints(om_node *n, const char *name, const int64_t *v, int64_t count)
{
	om_attr *a = om_node_set_attr(n, name, OM_ATTR_INTS);
	a->ints = om_arena_memdup(n->graph->model->arena, v, sizeof(int64_t) * (size_t)count);
	a->n = count;
}

/** A borrowed tensor over `data`. */
static inline om_tensor nt_tensor(int32_t dtype, int32_t rank, const int64_t *dims,
				  const void *data)
{
	om_tensor t = {.dtype = dtype, .rank = rank, .data = (void *)data};
	for (int32_t i = 0; i < rank; i++)
		t.dims[i] = dims[i];
	t.nbytes = om_tensor_bytes_for(dtype, rank, dims);
	return t;
}

/** Runs n at `opset` with inputs in[] (NULL entries omitted); returns the status kind. */
static inline om_kind nt_run(const om_node *n, int64_t opset, const om_tensor *const *in,
			     om_tensor *out)
{
	om_status st = {0};
	return om_eval_node(n, opset, in, out, &st);
}

/** out is float32 of the given shape and within tol of want (relative to max(1, |want|)). */
static inline void nt_check_f32(const om_tensor *out, int32_t rank, const int64_t *dims,
				const float *want, double tol)
{
	assert_int_equal(out->dtype, OM_FLOAT);
	assert_int_equal(out->rank, rank);
	for (int32_t i = 0; i < rank; i++)
		assert_int_equal(out->dims[i], dims[i]);
	const int64_t n = om_tensor_numel(out);
	const float *y = out->data;
	for (int64_t i = 0; i < n; i++) {
		if (isnan(want[i])) {
			assert_true(isnan(y[i]));
			continue;
		}
		const double w = want[i], err = fabs((double)y[i] - w);
		if (!(err <= tol * (fabs(w) > 1 ? fabs(w) : 1) || y[i] == want[i]))
			fail_msg("element %lld: got %.9g, want %.9g", (long long)i, y[i], want[i]);
	}
}

#endif
