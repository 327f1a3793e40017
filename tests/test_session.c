/* test_session.c — sessions on hand-built graphs with test-only op rows: plan-time shapes and
 * constants, dynamic steps, views without copies, buffer reuse, errors, subgraph runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "session.h"

/* ---- test-only rows ---------------------------------------------------------------------- */

static om_kind same_infer(om_ctx *c)
{
	const om_tensor *a = c->in[0], *b = c->nin > 1 ? c->in[1] : NULL;
	if (a->dtype != OM_FLOAT ||
	    (b && (b->dtype != OM_FLOAT || b->rank != a->rank ||
		   memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank))))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "shapes differ");
	om_set_shape(c->out[0], OM_FLOAT, a->rank, a->dims);
	return OM_OK;
}

static om_kind add_kernel(om_ctx *c)
{
	const float *a = c->in[0]->data, *b = c->in[1]->data;
	float *y = c->out[0]->data;
	for (int64_t i = 0, n = om_tensor_numel(c->out[0]); i < n; i++)
		y[i] = a[i] + b[i];
	return OM_OK;
}

static om_kind neg_kernel(om_ctx *c)
{
	const float *a = c->in[0]->data;
	float *y = c->out[0]->data;
	for (int64_t i = 0, n = om_tensor_numel(c->out[0]); i < n; i++)
		y[i] = -a[i];
	return OM_OK;
}

/* TNeed: a kernel that returns the internal inference signal, as a bug would */
static om_kind need_kernel(om_ctx *c)
{
	(void)c;
	return OM_NEED_VALUE;
}

static om_kind flat_infer(om_ctx *c)
{
	int64_t n = om_tensor_numel(c->in[0]);
	om_set_shape(c->out[0], c->in[0]->dtype, 1, &n);
	return OM_OK;
}

static om_kind shape_infer(om_ctx *c)
{
	int64_t r = c->in[0]->rank;
	om_set_shape(c->out[0], OM_INT64, 1, &r);
	return OM_OK;
}

static om_kind shape_kernel(om_ctx *c)
{
	memcpy(c->out[0]->data, c->in[0]->dims, sizeof(int64_t) * (size_t)c->in[0]->rank);
	return OM_OK;
}

/* TFill(shape) -> float ones of that shape: needs the shape's value */
static om_kind fill_infer(om_ctx *c)
{
	int64_t dims[OM_MAX_RANK], n;
	om_kind rc = om_read_ints(c, c->in[0], dims, OM_MAX_RANK, &n);
	if (rc)
		return rc;
	for (int64_t i = 0; i < n; i++)
		if (dims[i] < 0)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "negative extent");
	om_set_shape(c->out[0], OM_FLOAT, (int32_t)n, dims);
	return OM_OK;
}

static om_kind fill_kernel(om_ctx *c)
{
	float *y = c->out[0]->data;
	for (int64_t i = 0, n = om_tensor_numel(c->out[0]); i < n; i++)
		y[i] = 1;
	return OM_OK;
}

static om_kind need_infer(om_ctx *c)
{
	(void)c;
	return OM_NEED_VALUE;
}

/* TCall(x) runs its `body` graph on x and returns the body's first output */
static om_kind call_kernel(om_ctx *c)
{
	const om_attr *a = om_node_attr(c->node, "body");
	om_tensor r;
	om_kind rc = om_ctx_run_graph(c, a->g, c->in, 1, &r, 1);
	if (rc)
		return rc;
	rc = om_ctx_output(c, 0, r.dtype, r.rank, r.dims);
	if (!rc)
		memcpy(c->out[0]->data, r.data, r.nbytes);
	om_tensor_free(&r);
	return rc;
}

static double wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* TSpin(x): a copy that takes 20 ms of wall time (busy) */
static om_kind spin_kernel(om_ctx *c)
{
	const double t0 = wall_ms();
	while (wall_ms() - t0 < 20)
		;
	memcpy(c->out[0]->data, c->in[0]->data, c->out[0]->nbytes);
	return OM_OK;
}

/* TToStr(x): float -> decimal strings, malloc'd as Cast does; TCopy: moves elements */
static om_kind tostr_infer(om_ctx *c)
{
	om_set_shape(c->out[0], OM_STRING, c->in[0]->rank, c->in[0]->dims);
	return OM_OK;
}

static om_kind tostr_kernel(om_ctx *c)
{
	const float *x = c->in[0]->data;
	om_str *y = c->out[0]->data;
	for (int64_t i = 0, n = om_tensor_numel(c->out[0]); i < n; i++) {
		char *p = malloc(32);
		if (!p)
			return OM_ERR_NOMEM;
		y[i].len = snprintf(p, 32, "%g", x[i]);
		y[i].ptr = p;
	}
	return OM_OK;
}

static om_kind copy_infer(om_ctx *c)
{
	om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	return OM_OK;
}

static om_kind copy_kernel(om_ctx *c)
{
	memcpy(c->out[0]->data, c->in[0]->data, c->out[0]->nbytes);
	return OM_OK;
}

/* TScratch: y = -x through om_ctx_scratch's buffer of x's bytes (and, when x[0] is 7, a
 * second one it does not give back, for the runner to release); the buffer's address goes
 * into scratch_seen */
static const void *scratch_seen[8];
static int nscratch_seen;

static om_kind scratch_kernel(om_ctx *c)
{
	const float *a = c->in[0]->data;
	const int64_t n = om_tensor_numel(c->out[0]);
	float *t, *kept;
	om_kind rc = om_ctx_scratch(c, c->in[0]->nbytes, "TScratch's buffer", (void **)&t);
	if (rc)
		return rc;
	if (nscratch_seen < 8)
		scratch_seen[nscratch_seen++] = t;
	for (int64_t i = 0; i < n; i++)
		t[i] = -a[i];
	memcpy(c->out[0]->data, t, c->out[0]->nbytes);
	om_ctx_scratch_done(c, t);
	if (n && a[0] == 7)
		return om_ctx_scratch(c, 64, "TScratch's kept buffer", (void **)&kept);
	return OM_OK;
}

/* no signatures (NULL): these rows are not checked */
static const om_op test_rows[] = {
	{"TToStr", "", 1, tostr_infer, tostr_kernel, 0, NULL, OM_OPC_NONE, NULL, 0, NULL},
	{"TCopy", "", 1, copy_infer, copy_kernel, OM_OP_EXACT, NULL, OM_OPC_NONE, NULL, 0, NULL},
	{"TAdd", "", 1, same_infer, add_kernel, OM_OP_EXACT | OM_OP_INPLACE, NULL, OM_OPC_NONE, NULL, 0, NULL},
	{"TNeg", "", 1, same_infer, neg_kernel, 0, NULL, OM_OPC_NONE, NULL, 0, NULL},
	{"TSpin", "", 1, same_infer, spin_kernel, 0, NULL, OM_OPC_NONE, NULL, 0, NULL},
	{"TFlat", "", 1, flat_infer, NULL, OM_OP_VIEW | OM_OP_EXACT, NULL, OM_OPC_NONE, NULL, 0, NULL},
	{"Shape", "", 1, shape_infer, shape_kernel, OM_OP_EXACT | OM_OP_SHAPE_OF, NULL, OM_OPC_NONE, NULL, 0, NULL},
	{"TFill", "", 1, fill_infer, fill_kernel, OM_OP_EXACT, NULL, OM_OPC_NONE, NULL, 0, NULL},
	{"TCall", "", 1, need_infer, call_kernel, OM_OP_CONTROL | OM_OP_EXACT, NULL, OM_OPC_NONE, NULL, 0, NULL},
	{"TNoKernel", "", 1, same_infer, NULL, 0, NULL, OM_OPC_NONE, NULL, 0, NULL},
	{"TNeed", "", 1, same_infer, need_kernel, 0, NULL, OM_OPC_NONE, NULL, 0, NULL},
	{"TScratch", "", 1, same_infer, scratch_kernel, 0, NULL, OM_OPC_NONE, NULL, 0, NULL},
};
static const om_op_table test_table = OM_TABLE(test_rows);

/* ---- graph building ---------------------------------------------------------------------- */

static om_model *new_model(void)
{
	om_model *m = om_model_new();
	m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", 17};
	m->nopsets = 1;
	return m;
}

static void push(om_model *m, om_value ***list, int32_t *n, om_value *v)
{
	om_value **a = om_arena_alloc(m->arena, sizeof *a * (size_t)(*n + 1));
	if (*n)
		memcpy(a, *list, sizeof *a * (size_t)*n);
	a[(*n)++] = v;
	*list = a;
}

/* dims[i] < 0: a symbolic extent "N" */
static om_value *input(om_graph *g, const char *name, int32_t dtype, int32_t rank,
		       const int64_t *dims)
{
	om_value *v = om_graph_value(g, name);
	v->flags |= OM_VALUE_GRAPH_INPUT;
	v->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = dtype, .rank = rank};
	v->type.dims = om_arena_alloc(g->model->arena, sizeof(om_dim) * (size_t)(rank + 1));
	for (int32_t i = 0; i < rank; i++)
		v->type.dims[i] = dims[i] < 0 ? (om_dim){-1, "N"} : (om_dim){dims[i], NULL};
	push(g->model, &g->inputs, &g->ninputs, v);
	return v;
}

static void output(om_graph *g, om_value *v)
{
	v->flags |= OM_VALUE_GRAPH_OUTPUT;
	push(g->model, &g->outputs, &g->noutputs, v);
}

static om_value *init(om_graph *g, const char *name, int32_t dtype, int32_t rank,
		      const int64_t *dims, const void *data)
{
	om_value *v = om_graph_value(g, name);
	v->flags |= OM_VALUE_INITIALIZER;
	v->init = om_model_tensor(g->model, dtype, rank, dims);
	memcpy(v->init->data, data, v->init->nbytes);
	om_type_from_tensor(g->model, &v->type, v->init);
	push(g->model, &g->inits, &g->ninits, v);
	return v;
}

static om_value *op1(om_graph *g, const char *op, const char *name, om_value *a, om_value *b)
{
	om_node *n = om_graph_add_node(g, op, "", name, b ? 2 : 1, 1);
	n->in[0] = a;
	if (b)
		n->in[1] = b;
	om_node_set_output(n, 0, om_graph_value(g, name));
	return n->out[0];
}

static om_tensor ftensor(float *data, int32_t rank, const int64_t *dims)
{
	om_tensor t = {.dtype = OM_FLOAT, .rank = rank, .data = data};
	memcpy(t.dims, dims, sizeof(int64_t) * (size_t)rank);
	t.nbytes = om_tensor_bytes_for(OM_FLOAT, rank, dims);
	return t;
}

static om_session *create(om_model *m, const om_session_options *opt)
{
	om_session *s = NULL;
	om_status st = {0};
	om_kind rc = om_session_create_ex(m, opt, &test_table, &s, &st);
	if (rc) {
		char buf[1024];
		om_status_format(&st, buf, sizeof buf);
		print_error("%s\n", buf);
	}
	assert_int_equal(rc, OM_OK);
	return s;
}

/* ---- tests ------------------------------------------------------------------------------- */

/* y = TNeg(TAdd(x, c)) with c an initializer; names, counts, values. */
static void run_chain(void **state)
{
	(void)state;
	om_model *m = new_model();
	om_graph *g = m->graph;
	const int64_t d[] = {2, 3};
	const float cv[] = {1, 2, 3, 4, 5, 6};
	om_value *x = input(g, "x", OM_FLOAT, 2, d);
	om_value *c = init(g, "c", OM_FLOAT, 2, d, cv);
	output(g, op1(g, "TNeg", "y", op1(g, "TAdd", "s", x, c), NULL));
	op1(g, "TNeg", "unread2", op1(g, "TNeg", "unread1", x, NULL), NULL); /* dead */
	om_session *s = create(m, NULL);
	assert_int_equal(om_session_node_count(s), 4);
	assert_int_equal(om_session_input_count(s), 1);
	assert_string_equal(om_session_input_name(s, 0), "x");
	assert_null(om_session_input_name(s, 1));
	assert_int_equal(om_session_output_count(s), 1);
	assert_string_equal(om_session_output_name(s, 0), "y");
	float xv[] = {10, 20, 30, 40, 50, 60};
	om_tensor in = ftensor(xv, 2, d), out;
	om_status st = {0};
	for (int run = 0; run < 2; run++) {
		assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
		assert_int_equal(out.rank, 2);
		assert_int_equal(out.dims[1], 3);
		const float *y = out.data;
		for (int i = 0; i < 6; i++)
			assert_true(y[i] == -(xv[i] + cv[i]));
		om_tensor_free(&out);
	}
	om_node_info a = om_session_node_info(s, 0), b = om_session_node_info(s, 1);
	assert_false(a.dead);
	assert_int_equal(om_session_node_info(s, 2).mode, OM_MODE_NOT_RUN);
	assert_true(om_session_node_info(s, 2).dead);
	assert_true(om_session_node_info(s, 3).dead);
	assert_string_equal(a.node->op, "TAdd");
	assert_false(a.dynamic);
	/* a fast session lets every kernel take its fast path, exact-flagged rows too */
	assert_int_equal(a.mode, OM_MODE_FAST);
	assert_int_equal(b.mode, OM_MODE_FAST);
	om_session_free(s);
	om_model_free(m);
}

/* An exact session records that its nodes ran in exact mode. */
static void exact_mode_recorded(void **state)
{
	(void)state;
	om_model *m = new_model();
	const int64_t d[] = {2};
	om_value *x = input(m->graph, "x", OM_FLOAT, 1, d);
	output(m->graph, op1(m->graph, "TAdd", "a", x, x));
	om_session_options opt = {.exact = 1};
	om_session *s = NULL;
	om_status st = {0};
	assert_int_equal(om_session_create_ex(m, &opt, &test_table, &s, &st), OM_OK);
	float xv[] = {1.5f, -2};
	om_tensor in = ftensor(xv, 1, d), out;
	assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
	assert_true(((float *)out.data)[1] == -4);
	assert_int_equal(om_session_node_info(s, 0).mode, OM_MODE_EXACT);
	om_tensor_free(&out);
	om_session_free(s);
	om_model_free(m);
}

/* Nodes listed out of order run in topological order; the model's order is left alone. */
static void toposort_copy(void **state)
{
	(void)state;
	om_model *m = new_model();
	om_graph *g = m->graph;
	const int64_t d[] = {1};
	om_value *x = input(g, "x", OM_FLOAT, 1, d);
	om_node *second = om_graph_add_node(g, "TNeg", "", "second", 1, 1);
	om_value *t = op1(g, "TAdd", "first", x, x);
	second->in[0] = t;
	om_node_set_output(second, 0, om_graph_value(g, "y"));
	output(g, second->out[0]);
	om_session *s = create(m, NULL);
	assert_ptr_equal(g->nodes[0], second);
	assert_ptr_equal(om_session_node_info(s, 1).node, second);
	float xv = 2;
	om_tensor in = ftensor(&xv, 1, d), out;
	om_status st = {0};
	assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
	assert_true(*(float *)out.data == -4);
	om_tensor_free(&out);
	om_session_free(s);
	om_model_free(m);
}

struct view_seen {
	int views;
	int aliased;
};

static void view_hook(void *arg, const om_node *n, const om_tensor *const *in, int nin,
		      const om_tensor *const *out, int nout)
{
	struct view_seen *vs = arg;
	(void)nin, (void)nout;
	if (!strcmp(n->op, "TFlat")) {
		vs->views++;
		vs->aliased += in[0]->data == out[0]->data;
	}
}

/* a = TAdd(x, x); f = TFlat(a); y = TNeg(f): the view moves no byte; dynamic batch. */
static void views_alias(void **state)
{
	(void)state;
	om_model *m = new_model();
	om_graph *g = m->graph;
	const int64_t d[] = {-1, 2};
	om_value *x = input(g, "x", OM_FLOAT, 2, d);
	om_value *f = op1(g, "TFlat", "f", op1(g, "TAdd", "a", x, x), NULL);
	output(g, op1(g, "TNeg", "y", f, NULL));
	om_session *s = create(m, NULL);
	assert_true(om_session_node_info(s, 1).view);
	assert_true(om_session_node_info(s, 1).dynamic);
	struct view_seen vs = {0};
	om_session_set_hook(s, view_hook, &vs);
	float xv[] = {1, 2, 3, 4, 5, 6};
	om_status st = {0};
	for (int64_t batch = 1; batch <= 3; batch++) {
		om_tensor in = ftensor(xv, 2, (int64_t[]){batch, 2}), out;
		assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
		assert_int_equal(out.rank, 1);
		assert_int_equal(out.dims[0], 2 * batch);
		for (int64_t i = 0; i < 2 * batch; i++)
			assert_true(((float *)out.data)[i] == -2 * xv[i]);
		om_tensor_free(&out);
	}
	assert_int_equal(vs.views, 3);
	assert_int_equal(vs.aliased, 3);
	om_session_free(s);
	om_model_free(m);
}

/* A chain of 12 TNeg over 1 MiB tensors needs two buffers at a time, run after run. */
static void buffers_reused(void **state)
{
	(void)state;
	om_model *m = new_model();
	om_graph *g = m->graph;
	const int64_t d[] = {256, 1024};
	om_value *v = input(g, "x", OM_FLOAT, 2, d);
	char name[16];
	for (int i = 0; i < 12; i++) {
		snprintf(name, sizeof name, "n%d", i);
		v = op1(g, "TNeg", name, v, NULL);
	}
	output(g, v);
	om_session *s = create(m, NULL);
	static float xv[256 * 1024];
	for (int i = 0; i < 256 * 1024; i++)
		xv[i] = (float)i;
	om_tensor in = ftensor(xv, 2, d), out;
	om_status st = {0};
	assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
	size_t pool = om_session_pool_bytes(s);
	assert_true(((float *)out.data)[77] == 77);
	om_tensor_free(&out);
	assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
	om_tensor_free(&out);
	size_t one = 256 * 1024 * sizeof(float);
	assert_true(om_session_peak_bytes(s) <= 2 * one + 256);
	assert_true(pool <= 2 * one + 256);
	assert_int_equal(om_session_pool_bytes(s), pool);
	om_session_free(s);
	om_model_free(m);
}

/* om_ctx_scratch in a session: the runner's stack, the same place run after run (nothing
 * malloc'd per run), counted in the pool's bytes and against max_memory; what a kernel does
 * not give back the runner takes back. y = TScratch(TScratch(x)) over 1 MiB. */
static void scratch_reused(void **state)
{
	(void)state;
	om_model *m = new_model();
	om_graph *g = m->graph;
	const int64_t d[] = {256, 1024};
	om_value *x = input(g, "x", OM_FLOAT, 2, d);
	output(g, op1(g, "TScratch", "y", op1(g, "TScratch", "a", x, NULL), NULL));
	om_session *s = create(m, NULL);
	static float xv[256 * 1024];
	for (int i = 0; i < 256 * 1024; i++)
		xv[i] = (float)i;
	om_tensor in = ftensor(xv, 2, d), out;
	om_status st = {0};
	const size_t one = sizeof xv;
	nscratch_seen = 0;
	for (int run = 0; run < 3; run++) {
		assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
		assert_true(((float *)out.data)[77] == 77);
		om_tensor_free(&out);
	}
	assert_int_equal(nscratch_seen, 6);
	/* from the second run on, the one stack's place */
	for (int i = 3; i < 6; i++)
		assert_ptr_equal(scratch_seen[i], scratch_seen[2]);
	assert_true(om_session_pool_bytes(s) >= 2 * one); /* a, and the stack */
	/* a kernel that keeps one: released when it returns (the next runs still fit) */
	xv[0] = 7;
	for (int run = 0; run < 2; run++) {
		assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
		assert_true(((float *)out.data)[0] == 7);
		om_tensor_free(&out);
	}
	xv[0] = 0;
	om_session_free(s);
	/* under a limit that holds a and y but not a scratch beside them */
	om_session_options o = {.max_memory = 2 * one + one / 2};
	s = create(m, &o);
	assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_ERR_INVALID_INPUT);
	assert_non_null(strstr(st.msg, "TScratch's buffer"));
	om_session_free(s);
	om_model_free(m);
}

/* The pool lays a run's values out in one arena after the first run and again after a run of
 * other sizes: x (N, 256) -> a = -x, b = a + a, c = -b, d = c + a, y = d + b (= -x), a and b
 * alive across others, run at N 4, 4, 16, 2, 0, 16, 4, 4: every y is -x, and runs of the
 * same sizes keep the pool's bytes */
static void arena_across_shapes(void **state)
{
	(void)state;
	om_model *m = new_model();
	om_graph *g = m->graph;
	om_value *x = input(g, "x", OM_FLOAT, 2, (const int64_t[]){-1, 256});
	om_value *a = op1(g, "TNeg", "a", x, NULL);
	om_value *b = op1(g, "TAdd", "b", a, a);
	om_value *c = op1(g, "TNeg", "c", b, NULL);
	om_value *d = op1(g, "TAdd", "d", c, a);
	output(g, op1(g, "TAdd", "y", d, b));
	om_session *s = create(m, NULL);
	static float xv[16 * 256];
	static const int64_t ns[] = {4, 4, 16, 2, 0, 16, 4, 4};
	size_t pool = 0;
	for (size_t r = 0; r < sizeof ns / sizeof *ns; r++) {
		for (int64_t i = 0; i < ns[r] * 256; i++)
			xv[i] = (float)(i % 97) + (float)r;
		om_tensor in = ftensor(xv, 2, (const int64_t[]){ns[r], 256}), out;
		om_status st = {0};
		assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
		assert_int_equal(out.dims[0], ns[r]);
		for (int64_t i = 0; i < ns[r] * 256; i++)
			if (((float *)out.data)[i] != -xv[i])
				fail_msg("run %d, N %d, y[%d] = %g, not %g", (int)r, (int)ns[r],
					 (int)i, (double)((float *)out.data)[i], -(double)xv[i]);
		om_tensor_free(&out);
		if (r == 1 || r == 7)
			assert_int_equal(om_session_pool_bytes(s), pool);
		pool = om_session_pool_bytes(s);
	}
	om_session_free(s);
	om_model_free(m);
}

/* TAdd may write over its first input when that input dies there. */
static void inplace_reuse(void **state)
{
	(void)state;
	om_model *m = new_model();
	om_graph *g = m->graph;
	const int64_t d[] = {1024};
	const float ones[1024] = {1};
	om_value *x = input(g, "x", OM_FLOAT, 1, d), *c = init(g, "c", OM_FLOAT, 1, d, ones);
	om_value *v = op1(g, "TNeg", "a", x, NULL);
	v = op1(g, "TAdd", "b", v, c);
	v = op1(g, "TAdd", "y", v, c);
	output(g, v);
	om_session *s = create(m, NULL);
	float xv[1024] = {5};
	om_tensor in = ftensor(xv, 1, d), out;
	om_status st = {0};
	assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
	assert_true(((float *)out.data)[0] == -5 + 2);
	assert_true(((float *)out.data)[1] == 0);
	om_tensor_free(&out);
	assert_true(om_session_peak_bytes(s) <= 1024 * sizeof(float) + 64);
	om_session_free(s);
	om_model_free(m);
}

/* TFill(Shape(x)) is shaped at plan time: Shape is a plan constant. TFill(k) with k fed at run
 * time is shaped in every run. */
static void plan_constants_and_values(void **state)
{
	(void)state;
	om_model *m = new_model();
	om_graph *g = m->graph;
	const int64_t d[] = {2, 3}, one = 1;
	om_value *x = input(g, "x", OM_FLOAT, 2, d);
	om_value *k = input(g, "k", OM_INT64, 1, &one);
	output(g, op1(g, "TFill", "y", op1(g, "Shape", "shp", x, NULL), NULL));
	output(g, op1(g, "TFill", "z", k, NULL));
	om_session *s = create(m, NULL);
	int found = 0;
	for (int i = 0; i < om_session_node_count(s); i++) {
		om_node_info ni = om_session_node_info(s, i);
		if (!strcmp(ni.node->name, "shp"))
			found++, assert_true(ni.folded);
		if (!strcmp(ni.node->name, "y"))
			found++, assert_false(ni.dynamic);
		if (!strcmp(ni.node->name, "z"))
			found++, assert_true(ni.dynamic);
	}
	assert_int_equal(found, 3);
	float xv[6] = {0};
	int64_t kv = 4;
	om_tensor in[2] = {ftensor(xv, 2, d), {.dtype = OM_INT64, .rank = 1, .dims = {1},
					       .data = &kv, .nbytes = 8}};
	om_tensor out[2];
	om_status st = {0};
	assert_int_equal(om_session_run(s, in, 2, out, 2, &st), OM_OK);
	assert_int_equal(out[0].rank, 2);
	assert_int_equal(out[0].dims[0], 2);
	assert_int_equal(out[1].rank, 1);
	assert_int_equal(out[1].dims[0], 4);
	assert_true(((float *)out[1].data)[3] == 1);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	om_session_free(s);
	om_model_free(m);
}

static om_kind create_status(om_model *m, const om_session_options *opt, om_status *st)
{
	om_session *s = NULL;
	om_kind rc = om_session_create_ex(m, opt, &test_table, &s, st);
	om_session_free(s);
	return rc;
}

static void create_errors(void **state)
{
	(void)state;
	const int64_t d[] = {2}, e[] = {3};
	om_status st = {0};
	/* an op without a row */
	om_model *m = new_model();
	om_value *x = input(m->graph, "x", OM_FLOAT, 1, d);
	output(m->graph, op1(m->graph, "NoSuchOp", "bad", x, NULL));
	assert_int_equal(create_status(m, NULL, &st), OM_ERR_UNSUPPORTED);
	assert_string_equal(st.node, "bad");
	assert_string_equal(st.op, "NoSuchOp");
	om_model_free(m);
	/* a row without a kernel */
	m = new_model();
	x = input(m->graph, "x", OM_FLOAT, 1, d);
	output(m->graph, op1(m->graph, "TNoKernel", "nk", x, NULL));
	assert_int_equal(create_status(m, NULL, &st), OM_ERR_UNSUPPORTED);
	assert_string_equal(st.node, "nk");
	om_model_free(m);
	/* shapes that inference rejects: InvalidModel naming the node */
	m = new_model();
	x = input(m->graph, "x", OM_FLOAT, 1, d);
	om_value *y = input(m->graph, "y", OM_FLOAT, 1, e);
	output(m->graph, op1(m->graph, "TAdd", "mismatch", x, y));
	assert_int_equal(create_status(m, NULL, &st), OM_ERR_INVALID_MODEL);
	assert_string_equal(st.node, "mismatch");
	/* exact mode: TNeg has no exact kernel */
	om_model_free(m);
	m = new_model();
	x = input(m->graph, "x", OM_FLOAT, 1, d);
	output(m->graph, op1(m->graph, "TNeg", "fast", op1(m->graph, "TAdd", "a", x, x), NULL));
	om_session_options opt = {.exact = 1};
	assert_int_equal(create_status(m, &opt, &st), OM_ERR_UNSUPPORTED);
	assert_string_equal(st.node, "fast");
	assert_int_equal(create_status(m, NULL, &st), OM_OK);
	/* options out of range: InvalidInput (100000 threads crashed in OpenMP's pool) */
	const om_session_options bad[] = {{.threads = OM_MAX_THREADS + 1}, {.threads = -1},
					  {.layout = (om_layout_choice)4},
					  {.layout = (om_layout_choice)-1}};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_int_equal(create_status(m, &bad[i], &st), OM_ERR_INVALID_INPUT);
	opt = (om_session_options){.threads = OM_MAX_THREADS, .layout = OM_LAYOUT_NCHW};
	assert_int_equal(create_status(m, &opt, &st), OM_OK);
	om_model_free(m);
	/* a cycle */
	m = new_model();
	x = input(m->graph, "x", OM_FLOAT, 1, d);
	om_node *c1 = om_graph_add_node(m->graph, "TAdd", "", "c1", 2, 1);
	om_value *c2out = op1(m->graph, "TNeg", "c2", om_graph_value(m->graph, "c1"), NULL);
	c1->in[0] = x, c1->in[1] = c2out;
	om_node_set_output(c1, 0, om_graph_value(m->graph, "c1"));
	output(m->graph, c2out);
	assert_int_equal(create_status(m, NULL, &st), OM_ERR_INVALID_MODEL);
	assert_non_null(strstr(st.msg, "cycle"));
	om_model_free(m);
	/* a value nobody defines */
	m = new_model();
	x = input(m->graph, "x", OM_FLOAT, 1, d);
	output(m->graph, op1(m->graph, "TAdd", "undef", x, om_graph_value(m->graph, "ghost")));
	assert_int_equal(create_status(m, NULL, &st), OM_ERR_INVALID_MODEL);
	assert_string_equal(st.node, "undef");
	assert_non_null(strstr(st.msg, "ghost"));
	om_model_free(m);
}

static void run_errors(void **state)
{
	(void)state;
	om_model *m = new_model();
	om_graph *g = m->graph;
	const int64_t d[] = {-1, 2};
	om_value *x = input(g, "x", OM_FLOAT, 2, d), *y = input(g, "y", OM_FLOAT, 2, d);
	output(g, op1(g, "TAdd", "add", x, y));
	om_session *s = create(m, NULL);
	float v[6] = {0};
	int64_t iv[6] = {0};
	om_status st = {0};
	om_tensor out;
	/* wrong element type */
	om_tensor in[2] = {ftensor(v, 2, (int64_t[]){3, 2}), ftensor(v, 2, (int64_t[]){3, 2})};
	in[1].dtype = OM_INT64;
	in[1].data = iv;
	assert_int_equal(om_session_run(s, in, 2, &out, 1, &st), OM_ERR_INVALID_INPUT);
	assert_non_null(strstr(st.msg, "'y'"));
	/* a fixed extent that differs */
	in[1] = ftensor(v, 2, (int64_t[]){2, 3});
	assert_int_equal(om_session_run(s, in, 2, &out, 1, &st), OM_ERR_INVALID_INPUT);
	/* symbolic extents that disagree: found when the node is shaped */
	in[1] = ftensor(v, 2, (int64_t[]){1, 2});
	assert_int_equal(om_session_run(s, in, 2, &out, 1, &st), OM_ERR_INVALID_INPUT);
	assert_string_equal(st.node, "add");
	/* too few bytes, too few inputs */
	in[1] = ftensor(v, 2, (int64_t[]){3, 2});
	in[1].nbytes = 8;
	assert_int_equal(om_session_run(s, in, 2, &out, 1, &st), OM_ERR_INVALID_INPUT);
	assert_int_equal(om_session_run(s, in, 1, &out, 1, &st), OM_ERR_INVALID_INPUT);
	/* and then a good run */
	in[1] = ftensor(v, 2, (int64_t[]){3, 2});
	assert_int_equal(om_session_run(s, in, 2, &out, 1, &st), OM_OK);
	assert_int_equal(out.dims[0], 3);
	om_tensor_free(&out);
	om_session_free(s);
	om_model_free(m);
}

/* y = TCall[body: b = TAdd(bx, outer w); b2 = TNeg(b)](x): the body reads an outer value. */
static void subgraph_outer(void **state)
{
	(void)state;
	om_model *m = new_model();
	om_graph *g = m->graph;
	const int64_t d[] = {3};
	om_value *x = input(g, "x", OM_FLOAT, 1, d);
	op1(g, "TNeg", "w", x, NULL);
	om_graph *body = om_graph_new(m, g);
	om_value *bx = input(body, "bx", OM_FLOAT, 1, d);
	om_value *wo = om_graph_value(body, "w");
	wo->flags |= OM_VALUE_OUTER;
	output(body, op1(body, "TNeg", "b2", op1(body, "TAdd", "b", bx, wo), NULL));
	om_node *call = om_graph_add_node(g, "TCall", "", "call", 1, 1);
	call->in[0] = x;
	om_node_set_output(call, 0, om_graph_value(g, "y"));
	om_node_set_attr(call, "body", OM_ATTR_GRAPH)->g = body;
	output(g, op1(g, "TAdd", "z", call->out[0], x));
	om_session *s = create(m, NULL);
	float xv[] = {1, 2, 3};
	om_tensor in = ftensor(xv, 1, d), out;
	om_status st = {0};
	assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
	/* body: -(x + -x) = 0, then z = 0 + x */
	for (int i = 0; i < 3; i++)
		assert_true(((float *)out.data)[i] == xv[i]);
	om_tensor_free(&out);
	om_session_free(s);
	om_model_free(m);
}

/* OM_NEED_VALUE is internal (ir/status.h): a kernel that returns it makes om_session_run
 * fail with OM_ERR_INTERNAL, never return it, with or without a status */
static void need_value_never_public(void **state)
{
	(void)state;
	assert_true(OM_NEED_VALUE > OM_ERR_INTERNAL);
	om_status st = {0};
	assert_int_equal(om_public_kind(&st, OM_ERR_IO), OM_ERR_IO);
	assert_int_equal(st.kind, OM_OK);
	assert_int_equal(om_public_kind(&st, OM_NEED_VALUE), OM_ERR_INTERNAL);
	assert_int_equal(st.kind, OM_ERR_INTERNAL);
	assert_int_equal(om_public_kind(NULL, OM_NEED_VALUE), OM_ERR_INTERNAL);
	om_model *m = new_model();
	om_graph *g = m->graph;
	const int64_t d[] = {2};
	output(g, op1(g, "TNeed", "y", input(g, "x", OM_FLOAT, 1, d), NULL));
	om_session *s = create(m, NULL);
	float xv[2] = {1, 2};
	om_tensor in = ftensor(xv, 1, d), out;
	st = (om_status){0};
	assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_ERR_INTERNAL);
	assert_int_equal(st.kind, OM_ERR_INTERNAL);
	assert_null(out.data);
	assert_int_equal(om_session_run(s, &in, 1, &out, 1, NULL), OM_ERR_INTERNAL);
	om_session_free(s);
	om_model_free(m);
}

static void profile_rows(void **state)
{
	(void)state;
	om_model *m = new_model();
	om_graph *g = m->graph;
	const int64_t d[] = {4};
	om_value *x = input(g, "x", OM_FLOAT, 1, d);
	output(g, op1(g, "TNeg", "b", op1(g, "TNeg", "a", op1(g, "TAdd", "s", x, x), NULL), NULL));
	om_session_options opt = {.profile = 1};
	om_session *s = create(m, &opt);
	float xv[4] = {0};
	om_tensor in = ftensor(xv, 1, d), out;
	om_status st = {0};
	assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
	om_tensor_free(&out);
	om_profile_row *rows;
	int n;
	assert_int_equal(om_session_profile(s, &rows, &n, &st), OM_OK);
	assert_int_equal(n, 2);
	int64_t calls = 0;
	for (int i = 0; i < n; i++) {
		calls += rows[i].calls;
		assert_true(rows[i].ms >= 0);
		if (!strcmp(rows[i].op, "TNeg"))
			assert_int_equal(rows[i].calls, 2);
	}
	assert_int_equal(calls, 3);
	om_free(rows);
	om_session_free(s);
	om_model_free(m);
}

/* y = TCall[body: TSpin(bx)](x): the 20 ms of TSpin count under TSpin only, not under TCall
 * too: the rows add up to at most the run's wall time (double counting would make them 40) */
static void profile_control_exclusive(void **state)
{
	(void)state;
	om_model *m = new_model();
	om_graph *g = m->graph;
	const int64_t d[] = {3};
	om_value *x = input(g, "x", OM_FLOAT, 1, d);
	om_graph *body = om_graph_new(m, g);
	output(body, op1(body, "TSpin", "b", input(body, "bx", OM_FLOAT, 1, d), NULL));
	om_node *call = om_graph_add_node(g, "TCall", "", "call", 1, 1);
	call->in[0] = x;
	om_node_set_output(call, 0, om_graph_value(g, "y"));
	om_node_set_attr(call, "body", OM_ATTR_GRAPH)->g = body;
	output(g, call->out[0]);
	om_session_options opt = {.profile = 1};
	om_session *s = create(m, &opt);
	float xv[] = {1, 2, 3};
	om_tensor in = ftensor(xv, 1, d), out;
	om_status st = {0};
	const double t0 = wall_ms();
	assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
	const double wall = wall_ms() - t0;
	om_tensor_free(&out);
	om_profile_row *rows;
	int n;
	assert_int_equal(om_session_profile(s, &rows, &n, &st), OM_OK);
	assert_int_equal(n, 2);
	double sum = 0, spin = 0;
	for (int i = 0; i < n; i++) {
		sum += rows[i].ms;
		assert_true(rows[i].ms >= 0);
		if (!strcmp(rows[i].op, "TSpin"))
			spin = rows[i].ms;
	}
	assert_true(spin >= 20);
	assert_true(sum <= wall + 1e-3);
	om_free(rows);
	om_session_free(s);
	om_model_free(m);
}

/* Strings a kernel makes belong to the run (freed when it ends, ASan checks); moved strings
 * are borrowed; the caller gets copies. */
static void strings_owned_by_run(void **state)
{
	(void)state;
	om_model *m = new_model();
	om_graph *g = m->graph;
	const int64_t d[] = {3};
	om_value *x = input(g, "x", OM_FLOAT, 1, d);
	om_value *t = op1(g, "TToStr", "t", x, NULL);
	output(g, op1(g, "TCopy", "y", op1(g, "TCopy", "u", t, NULL), NULL));
	om_session *s = create(m, NULL);
	float xv[] = {1, 2.5f, -3};
	om_tensor in = ftensor(xv, 1, d), out;
	om_status st = {0};
	for (int run = 0; run < 2; run++) {
		assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
		assert_int_equal(out.dtype, OM_STRING);
		const om_str *y = out.data;
		assert_int_equal(y[1].len, 3);
		assert_memory_equal(y[1].ptr, "2.5", 3);
		assert_memory_equal(y[2].ptr, "-3", 2);
		om_tensor_free(&out);
	}
	om_session_free(s);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(run_chain),
		cmocka_unit_test(toposort_copy), cmocka_unit_test(exact_mode_recorded),
		cmocka_unit_test(views_alias),
		cmocka_unit_test(buffers_reused), cmocka_unit_test(arena_across_shapes),
		cmocka_unit_test(inplace_reuse),
		cmocka_unit_test(plan_constants_and_values),
		cmocka_unit_test(create_errors),
		cmocka_unit_test(run_errors),
		cmocka_unit_test(subgraph_outer),
		cmocka_unit_test(profile_rows),
		cmocka_unit_test(need_value_never_public),
		cmocka_unit_test(profile_control_exclusive),
		cmocka_unit_test(strings_owned_by_run),
		cmocka_unit_test(scratch_reused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
