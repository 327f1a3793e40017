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

/* ---- random nodes (bounds tests under ASan) ---------------------------------------------- */

typedef struct nu_rng {
	uint64_t s;
} nu_rng;

/** Uniform in [lo, hi]. */
static inline int64_t nu_rand(nu_rng *r, int64_t lo, int64_t hi)
{
	r->s ^= r->s << 13, r->s ^= r->s >> 7, r->s ^= r->s << 17;
	return lo + (int64_t)(r->s % (uint64_t)(hi - lo + 1));
}

/** A random int64 vector of n entries in [lo, hi], with `extreme` now and then INT64_MAX,
 *  INT64_MIN or INT32_MAX. */
static inline om_tensor nu_rand_ints(nu_rng *r, int64_t *buf, int64_t n, int64_t lo, int64_t hi,
				     bool extreme)
{
	for (int64_t i = 0; i < n; i++) {
		const int64_t u = extreme ? nu_rand(r, 0, 19) : 19;
		buf[i] = u == 0   ? INT64_MAX
			 : u == 1 ? INT64_MIN
			 : u == 2 ? INT32_MAX
				  : nu_rand(r, lo, hi);
	}
	return nu_t(OM_INT64, 1, &n, buf);
}

/** A random tensor of rank <= 4, extents <= 4, over `data` (>= 256 * 16 bytes, filled). */
static inline om_tensor nu_rand_tensor(nu_rng *r, void *data)
{
	static const int32_t types[] = {OM_UINT8, OM_FLOAT16, OM_FLOAT, OM_INT64, OM_COMPLEX128,
					OM_INT4, OM_STRING, OM_BOOL};
	const int32_t dtype = types[nu_rand(r, 0, 7)];
	int64_t dims[4];
	const int32_t rank = (int32_t)nu_rand(r, 0, 4);
	for (int32_t i = 0; i < rank; i++)
		dims[i] = nu_rand(r, 0, 9) == 0 ? 0 : nu_rand(r, 1, 4);
	if (dtype == OM_STRING) {
		om_str *s = data;
		for (int i = 0; i < 256; i++)
			s[i] = (om_str){"str", 3};
	} else {
		unsigned char *b = data;
		for (int i = 0; i < 256 * 16; i++)
			b[i] = (unsigned char)(i * 37 + 1);
	}
	return nu_t(dtype, rank, dims, data);
}

/** Checks one random run: a value-kind result, and outputs consistent with their shapes. */
static inline void nu_check_run(om_kind rc, const om_status *st, om_tensor *out, int32_t nout)
{
	if (rc != OM_OK && rc != OM_ERR_INVALID_MODEL && rc != OM_ERR_UNSUPPORTED)
		fail_msg("unexpected %s: %s", om_kind_name(rc), st->msg);
	if (rc == OM_ERR_INVALID_MODEL)
		assert_string_equal(st->node, "n0");
	if (rc != OM_OK)
		return;
	for (int32_t i = 0; i < nout; i++) {
		assert_true(om_tensor_numel(&out[i]) >= 0);
		assert_int_equal(out[i].nbytes,
				 om_tensor_bytes_for(out[i].dtype, out[i].rank, out[i].dims));
		om_tensor_free(&out[i]);
	}
}

#endif
