/* nodetest.h — one-node models for the kernel tests: build a node, set attributes, feed
 * borrowed tensors, run it through om_eval_node (or the fast-mode kernel), check results.
 * Everything lives in the model's arena; results are malloc'd (om_tensor_free). */
#ifndef OM_NODETEST_H
#define OM_NODETEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eval.h"
#include "testutil.h"

/* ---- nodes -------------------------------------------------------------------------------- */

/** A node `op` with nin inputs x0.. and nout outputs y0.. (all present) in a fresh model. */
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

/** A value in m's arena only (not in the graph's hash: om_eval_node needs no names). */
static inline om_value *nt_value(om_model *m, const char *prefix, int32_t i)
{
	char name[32];
	snprintf(name, sizeof name, "%s%d", prefix, i);
	om_value *v = om_arena_alloc(m->arena, sizeof *v);
	v->name = om_arena_strdup(m->arena, name);
	v->type.rank = -1;
	v->producer_slot = -1;
	return v;
}

/** Another node `op` (named op) in m's graph, created when missing; inputs i0.., outputs
 *  o0.. are arena values outside the graph's hash, so many nodes may share one model. */
static inline om_node *nt_add_node(om_model *m, const char *op, int32_t nin, int32_t nout)
{
	if (!m->graph)
		m->graph = om_graph_new(m, NULL);
	om_node *n = om_graph_add_node(m->graph, op, "", op, nin, nout);
	for (int32_t i = 0; i < nin; i++)
		n->in[i] = nt_value(m, "i", i);
	for (int32_t i = 0; i < nout; i++)
		om_node_set_output(n, i, nt_value(m, "o", i));
	return n;
}

/** Frees a model of nt_node (clears the value hash first: om_model_free leaves uthash's). */
static inline void nt_free(om_model *m)
{
	if (m->graph)
		HASH_CLEAR(hh, m->graph->values);
	om_model_free(m);
}

/* ---- attributes --------------------------------------------------------------------------- */

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
	a->ints = om_arena_alloc(n->graph->model->arena, sizeof(int64_t) * (size_t)(count + 1));
	if (count)
		memcpy(a->ints, v, sizeof(int64_t) * (size_t)count);
	a->n = count;
}

static inline void nt_floats(om_node *n, const char *name, const float *v, int64_t count)
{
	om_attr *a = om_node_set_attr(n, name, OM_ATTR_FLOATS);
	a->floats = om_arena_alloc(n->graph->model->arena, sizeof(float) * (size_t)(count + 1));
	if (count)
		memcpy(a->floats, v, sizeof(float) * (size_t)count);
	a->n = count;
}

static inline void nt_str(om_node *n, const char *name, const char *v)
{
	om_attr *a = om_node_set_attr(n, name, OM_ATTR_STRING);
	a->s.ptr = om_arena_strndup(n->graph->model->arena, v, strlen(v));
	a->s.len = (int64_t)strlen(v);
}

/* ---- tensors and runs --------------------------------------------------------------------- */

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

/** A 1-D int64 tensor of the listed values (a compound literal: lives in the enclosing block). */
#define NT_I64(...) nt_tensor(OM_INT64, 1, (int64_t[]){sizeof((int64_t[]){__VA_ARGS__}) / 8}, \
			      (int64_t[]){__VA_ARGS__})

/** Runs n at `opset` with inputs in[] (NULL entries omitted); returns the status kind. */
static inline om_kind nt_run(const om_node *n, int64_t opset, const om_tensor *const *in,
			     om_tensor *out)
{
	om_status st = {0};
	return om_eval_node(n, opset, in, out, &st);
}

/** The row's kernel on c's settings (node, inputs, outputs, status: filled in here; exact,
 *  threads, state slot, const_in: the caller's), outputs shaped by infer and allocated. */
static inline om_kind nt_run_ctx(const om_node *n, int64_t opset, const om_tensor *const *in,
				 om_tensor *out, om_ctx c, om_status *st)
{
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
	c.node = n, c.opset = opset, c.nin = n->nin, c.nout = n->nout, c.in = in, c.out = outp;
	c.st = st;
	c.op = om_op_find(n->domain, n->op, opset);
	rc = c.op->kernel(&c);
	for (int32_t i = 0; rc && i < n->nout && i < 8; i++)
		om_tensor_free(&out[i]);
	return rc;
}

/** The row's kernel in exact or fast mode on `threads` threads (outputs allocated). */
static inline om_kind nt_run_threads(const om_node *n, int64_t opset, const om_tensor *const *in,
				     om_tensor *out, int exact, int threads, om_status *st)
{
	return nt_run_ctx(n, opset, in, out, (om_ctx){.exact = exact, .threads = threads}, st);
}

/** Like om_eval_node (exact mode), or the row's kernel in fast mode when exact == 0. */
static inline om_kind nt_run_mode(const om_node *n, int64_t opset, const om_tensor *const *in,
				  om_tensor *out, int exact, om_status *st)
{
	return exact ? om_eval_node(n, opset, in, out, st)
		     : nt_run_threads(n, opset, in, out, 0, 1, st);
}

/* ---- checks ------------------------------------------------------------------------------- */

static inline void nt_assert_shape(const om_tensor *t, int32_t rank, const int64_t *dims)
{
	assert_int_equal(t->rank, rank);
	for (int32_t i = 0; i < rank; i++)
		assert_int_equal(t->dims[i], dims[i]);
}

/** Every one of the n float32 elements within tol (relative to max(1, |expect|)); NaN only
 *  where expect is NaN. */
static inline void nt_assert_floats(const om_tensor *t, const float *expect, int64_t n,
				    double tol)
{
	assert_int_equal(t->dtype, OM_FLOAT);
	assert_int_equal(om_tensor_numel(t), n);
	const float *y = t->data;
	for (int64_t i = 0; i < n; i++) {
		if (isnan(expect[i])) {
			if (!isnan(y[i]))
				fail_msg("element %lld: got %.9g, want NaN", (long long)i, y[i]);
			continue;
		}
		const double w = expect[i], err = fabs((double)y[i] - w);
		if (!(err <= tol * (fabs(w) > 1 ? fabs(w) : 1) || y[i] == expect[i]))
			fail_msg("element %lld: got %.9g, want %.9g", (long long)i, y[i], expect[i]);
	}
}

/** out is float32 of the given shape and within tol of want (nt_assert_floats). */
static inline void nt_check_f32(const om_tensor *out, int32_t rank, const int64_t *dims,
				const float *want, double tol)
{
	nt_assert_shape(out, rank, dims);
	nt_assert_floats(out, want, om_tensor_numel(out), tol);
}

/* ---- random nodes (bounds tests under ASan) ----------------------------------------------- */

typedef struct nt_rng {
	uint64_t s;
} nt_rng;

/** Uniform in [lo, hi] (xorshift). */
static inline int64_t nt_rand(nt_rng *r, int64_t lo, int64_t hi)
{
	r->s ^= r->s << 13, r->s ^= r->s >> 7, r->s ^= r->s << 17;
	return lo + (int64_t)(r->s % (uint64_t)(hi - lo + 1));
}

/** A random int64 vector of n entries in [lo, hi], with `extreme` now and then INT64_MAX,
 *  INT64_MIN or INT32_MAX. */
static inline om_tensor nt_rand_ints(nt_rng *r, int64_t *buf, int64_t n, int64_t lo, int64_t hi,
				     bool extreme)
{
	for (int64_t i = 0; i < n; i++) {
		const int64_t u = extreme ? nt_rand(r, 0, 19) : 19;
		buf[i] = u == 0   ? INT64_MAX
			 : u == 1 ? INT64_MIN
			 : u == 2 ? INT32_MAX
				  : nt_rand(r, lo, hi);
	}
	return nt_tensor(OM_INT64, 1, &n, buf);
}

/** A random tensor of rank <= 4, extents <= 4, over `data` (>= 256 * 16 bytes, filled). */
static inline om_tensor nt_rand_tensor(nt_rng *r, void *data)
{
	static const int32_t types[] = {OM_UINT8, OM_FLOAT16, OM_FLOAT, OM_INT64, OM_COMPLEX128,
					OM_INT4, OM_STRING, OM_BOOL};
	const int32_t dtype = types[nt_rand(r, 0, 7)];
	int64_t dims[4];
	const int32_t rank = (int32_t)nt_rand(r, 0, 4);
	for (int32_t i = 0; i < rank; i++)
		dims[i] = nt_rand(r, 0, 9) == 0 ? 0 : nt_rand(r, 1, 4);
	if (dtype == OM_STRING) {
		om_str *s = data;
		for (int i = 0; i < 256; i++)
			s[i] = (om_str){"str", 3};
	} else {
		unsigned char *b = data;
		for (int i = 0; i < 256 * 16; i++)
			b[i] = (unsigned char)(i * 37 + 1);
	}
	return nt_tensor(dtype, rank, dims, data);
}

/** Checks one random run: a value-kind result, and outputs consistent with their shapes. */
static inline void nt_check_run(om_kind rc, const om_status *st, om_tensor *out, int32_t nout)
{
	if (rc != OM_OK && rc != OM_ERR_INVALID_MODEL && rc != OM_ERR_INVALID_INPUT &&
	    rc != OM_ERR_UNSUPPORTED)
		fail_msg("unexpected %s: %s", om_kind_name(rc), st->msg);
	if (rc == OM_ERR_INVALID_MODEL || rc == OM_ERR_INVALID_INPUT)
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
