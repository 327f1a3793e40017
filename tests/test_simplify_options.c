/* test_simplify_options.c — om_simplify's model-level options (issue 12): input shapes,
 * value_info, sub-models, dropped optional outputs, inlined model-local functions. Each
 * rewrite is checked differentially: the original and the result run by the executor on the
 * same random inputs at several values of each symbol (0 and 1 included), outputs compared
 * (floats within rtol 1e-4 + atol 1e-5, other types bit for bit). */
#include <math.h>

#include "diffutil.h"
#include "nodetest.h"

enum { MAXF = 8 };

/* ---- running models ---------------------------------------------------------------------- */

typedef struct feed {
	const char *name;
	om_tensor t;
} feed;

typedef struct syms {
	const char *name[4];
	int64_t value[4];
	int n;
} syms;

static int64_t sym_value(const syms *s, const char *name)
{
	for (int i = 0; name && i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return s->value[i];
	return 2; /* a dim inference left unnamed */
}

/* Random inputs for every input of m: symbols at their values, floats in [-2, 2], integers
 * in [0, 4), bools at random; the same seed gives the same data. Returns the count. */
static int make_feeds(const om_model *m, const syms *s, uint64_t seed, feed *f)
{
	om_session *sess = tu_session_create(m);
	nt_rng r = {seed};
	int n = om_session_input_count(sess);
	assert_true(n <= MAXF);
	for (int i = 0; i < n; i++) {
		om_io_info info;
		om_status st = {0};
		assert_int_equal(om_session_input_info(sess, i, &info, &st), OM_OK);
		int64_t dims[OM_MAX_RANK];
		for (int32_t d = 0; d < info.rank; d++)
			dims[d] = info.dims[d] >= 0 ? info.dims[d] : sym_value(s, info.dim_params[d]);
		f[i].name = om_session_input_name(sess, i);
		f[i].name = strdup(f[i].name);
		assert_int_equal(om_tensor_alloc(&f[i].t, info.elem, info.rank, dims, &st), OM_OK);
		const int64_t numel = om_tensor_numel(&f[i].t);
		for (int64_t k = 0; k < numel; k++) {
			const int64_t x = nt_rand(&r, -2000, 2000);
			if (info.elem == OM_FLOAT)
				((float *)f[i].t.data)[k] = (float)x / 1000.0f;
			else if (info.elem == OM_INT64)
				((int64_t *)f[i].t.data)[k] = x & 3;
			else if (info.elem == OM_BOOL)
				((uint8_t *)f[i].t.data)[k] = x & 1;
			else
				fail_msg("input '%s': element type %d in a test model", f[i].name,
					 info.elem);
		}
	}
	om_session_free(sess);
	return n;
}

static void free_feeds(feed *f, int n)
{
	for (int i = 0; i < n; i++) {
		om_tensor_free(&f[i].t);
		free((void *)f[i].name);
	}
}

/* Runs m on the feeds its inputs name; out[i] gets output i. OM_OK or the run's error. */
static om_kind run(const om_model *m, const feed *f, int nf, om_tensor *out, int *nout)
{
	om_status st = {0};
	om_session *s = NULL;
	om_kind rc = om_session_create(m, NULL, &s, &st);
	if (rc)
		return rc;
	om_tensor in[MAXF];
	const int nin = om_session_input_count(s);
	assert_true(nin <= MAXF);
	for (int i = 0; i < nin; i++) {
		int k = 0;
		while (k < nf && strcmp(f[k].name, om_session_input_name(s, i)))
			k++;
		if (k == nf)
			fail_msg("no feed for input '%s'", om_session_input_name(s, i));
		in[i] = f[k].t;
	}
	*nout = om_session_output_count(s);
	assert_true(*nout <= MAXF);
	rc = om_session_run(s, in, nin, out, *nout, &st);
	om_session_free(s);
	return rc;
}

static void free_outs(om_tensor *t, int n)
{
	for (int i = 0; i < n; i++)
		om_tensor_free(&t[i]);
}

/* a and b on the same random inputs (made for a) at s: where a runs, b must give the same
 * outputs. Returns 1 when compared, 0 when a fails there. */
static int same_at(const om_model *a, const om_model *b, const syms *s, uint64_t seed)
{
	feed f[MAXF];
	const int nf = make_feeds(a, s, seed, f);
	om_tensor oa[MAXF], ob[MAXF];
	int na = 0, nb = 0, compared = 0;
	if (run(a, f, nf, oa, &na) == OM_OK) {
		om_kind rc = run(b, f, nf, ob, &nb);
		if (rc)
			fail_msg("the original runs, the result does not (%s)", om_kind_name(rc));
		assert_int_equal(na, nb);
		for (int i = 0; i < na; i++) {
			char buf[200];
			const char *d = dt_diff_close(&ob[i], &oa[i], 1e-4, 1e-5, buf, sizeof buf);
			if (d)
				fail_msg("output %d at %s=%lld: %s", i, s->n ? s->name[0] : "-",
					 (long long)(s->n ? s->value[0] : 0), d);
		}
		free_outs(ob, nb);
		free_outs(oa, na);
		compared = 1;
	}
	free_feeds(f, nf);
	return compared;
}

/* same_at with every symbol at 0, 1, 3, and (two symbols) at mixed values. */
static void same_everywhere(const om_model *a, const om_model *b, syms s)
{
	static const int64_t vals[] = {0, 1, 3};
	int compared = 0;
	for (int v = 0; v < 3; v++) {
		for (int k = 0; k < s.n; k++)
			s.value[k] = vals[v];
		compared += same_at(a, b, &s, 0x5eed + (uint64_t)v);
	}
	for (int k = 0; k < s.n; k++)
		s.value[k] = k + 1;
	compared += same_at(a, b, &s, 0xabc);
	assert_true(compared >= 3); /* the original runs at 1 and 3 at least */
}

/* ---- models ------------------------------------------------------------------------------ */

static om_value *input(om_model *m, const char *name, int32_t elem, int32_t rank,
		       const int64_t *dims, const char *const *syms)
{
	return dt_input(m, name, elem, rank, dims, syms);
}

static void output(om_model *m, const char *name, int32_t elem, int32_t rank,
		   const int64_t *dims, const char *const *syms)
{
	om_value *v = om_graph_value(m->graph, name);
	dt_set_type(m, v, elem, rank, dims, syms);
	dt_output(m, v);
}

static om_value *init_i64(om_model *m, const char *name, int64_t n, const int64_t *x)
{
	const om_tensor t = nt_tensor(OM_INT64, 1, &n, x);
	return dt_init(m, name, &t);
}

/* x:[N,3,2], z:[N,6] -> Shape(x)[0] -> Concat(., [-1]) -> Reshape(x) -> Relu -> Add(z) -> y:[N,6] */
static om_model *shape_chain_model(void)
{
	om_model *m = tu_model(13);
	const char *sy[] = {"N", NULL, NULL};
	input(m, "x", OM_FLOAT, 3, (int64_t[]){-1, 3, 2}, sy);
	input(m, "z", OM_FLOAT, 2, (int64_t[]){-1, 6}, sy);
	init_i64(m, "i0", 1, (int64_t[]){0});
	init_i64(m, "m1", 1, (int64_t[]){-1});
	om_graph *g = m->graph;
	tu_graph_node(g, "Shape", "x", "s");
	tu_graph_node(g, "Gather", "s,i0", "n");
	om_node *c = tu_graph_node(g, "Concat", "n,m1", "t");
	om_node_set_attr(c, "axis", OM_ATTR_INT)->i = 0;
	tu_graph_node(g, "Reshape", "x,t", "r");
	tu_graph_node(g, "Relu", "r", "a");
	tu_graph_node(g, "Add", "a,z", "y");
	output(m, "y", OM_FLOAT, 2, (int64_t[]){-1, 6}, sy);
	return m;
}

static om_kind simplify(om_model *m, om_simplify_options o, om_status *st)
{
	o.verify = 1;
	return om_simplify(m, &o, st);
}

static void assert_dims(const om_value *v, int32_t rank, const int64_t *dims,
			const char *const *params)
{
	assert_int_equal(v->type.kind, OM_TYPE_TENSOR);
	assert_int_equal(v->type.rank, rank);
	for (int32_t i = 0; i < rank; i++) {
		assert_int_equal(v->type.dims[i].value, dims[i]);
		if (params && params[i])
			assert_string_equal(v->type.dims[i].param, params[i]);
		else if (dims[i] < 0)
			assert_null(v->type.dims[i].param);
	}
}

/* ---- input shapes ------------------------------------------------------------------------ */

static void input_shape_numbers(void **state)
{
	(void)state;
	om_model *a = shape_chain_model(), *b = shape_chain_model();
	const om_input_shape x = {"x", 3, {1, 3, 2}, {NULL}};
	om_status st = {0};
	assert_int_equal(simplify(b, (om_simplify_options){.input_shapes = &x,
							    .n_input_shapes = 1}, &st), OM_OK);
	const om_graph *g = b->graph;
	assert_dims(g->inputs[0], 3, (int64_t[]){1, 3, 2}, NULL);
	assert_dims(g->inputs[1], 2, (int64_t[]){1, 6}, NULL); /* N is 1 everywhere */
	assert_dims(g->outputs[0], 2, (int64_t[]){1, 6}, NULL);
	assert_int_equal(tu_count_op(g, "Shape"), 0);
	assert_int_equal(tu_count_op(g, "Gather"), 0);
	/* the original at N = 1 (the only shape the result takes) */
	syms s = {{"N"}, {1}, 1};
	assert_int_equal(same_at(a, b, &s, 7), 1);
	om_model_free(a);
	om_model_free(b);
}

static void input_shape_symbols(void **state)
{
	(void)state;
	om_model *a = shape_chain_model(), *b = shape_chain_model();
	const om_input_shape x = {"x", 3, {-1, 3, 2}, {"B"}};
	om_status st = {0};
	assert_int_equal(simplify(b, (om_simplify_options){.input_shapes = &x,
							    .n_input_shapes = 1}, &st), OM_OK);
	const char *const bp[] = {"B", NULL, NULL};
	assert_dims(b->graph->inputs[0], 3, (int64_t[]){-1, 3, 2}, bp);
	assert_dims(b->graph->inputs[1], 2, (int64_t[]){-1, 6}, bp); /* N became B */
	assert_dims(b->graph->outputs[0], 2, (int64_t[]){-1, 6}, bp);
	/* feeds are made for a (symbol N): b's inputs have the same names */
	same_everywhere(a, b, (syms){{"N"}, {0}, 1});
	om_model_free(a);
	om_model_free(b);
}

static void input_shape_errors(void **state)
{
	(void)state;
	static const struct {
		om_input_shape s[2];
		int n;
		const char *says;
	} cases[] = {
		{{{"x", 2, {1, 3}, {NULL}}}, 1, "rank 2 but the model declares rank 3"},
		{{{"x", 3, {1, 4, 2}, {NULL}}}, 1, "dim 1 is declared 3 and cannot become 4"},
		{{{"x", 3, {1, -1, 2}, {NULL, "K"}}}, 1, "declared 3 and cannot become K"},
		{{{"w", 1, {1}, {NULL}}}, 1, "'w': the model has no graph input"},
		{{{"i0", 1, {1}, {NULL}}}, 1, "'i0': the model has no graph input"},
		{{{"x", 3, {1, 3, 2}, {NULL}}, {"z", 2, {2, 6}, {NULL}}}, 2,
		 "symbol 'N' is given 2 here and 1 by another input shape"},
		{{{"x", 3, {1, 3, 2}, {NULL}}, {"x", 3, {1, 3, 2}, {NULL}}}, 2, "given twice"},
		{{{"x", 3, {-2, 3, 2}, {NULL}}}, 1, "neither a number nor a symbol"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		om_model *m = shape_chain_model();
		om_status st = {0};
		om_kind rc = simplify(m, (om_simplify_options){.input_shapes = cases[i].s,
							       .n_input_shapes = cases[i].n},
				      &st);
		if (rc != OM_ERR_INVALID_INPUT || !strstr(st.msg, cases[i].says))
			fail_msg("case %zu: %s: %s (want '%s')", i, om_kind_name(rc), st.msg,
				 cases[i].says);
		/* nothing changed: x keeps its declaration */
		assert_dims(m->graph->inputs[0], 3, (int64_t[]){-1, 3, 2},
			    (const char *const[]){"N", NULL, NULL});
		om_model_free(m);
	}
}

/* ---- value_info -------------------------------------------------------------------------- */

static const om_value *produced_by(const om_graph *g, const char *op)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i]->op, op))
			return g->nodes[i]->out[0];
	return NULL;
}

static void value_info_written(void **state)
{
	(void)state;
	om_model *a = shape_chain_model(), *b = shape_chain_model();
	om_status st = {0};
	assert_int_equal(simplify(b, (om_simplify_options){0}, &st), OM_OK);
	const om_graph *g = b->graph;
	const om_value *r = produced_by(g, "Relu");
	assert_non_null(r);
	assert_true(r->flags & OM_VALUE_INFO);
	assert_int_equal(r->type.elem, OM_FLOAT);
	assert_dims(r, 2, (int64_t[]){-1, 6}, (const char *const[]){"N", NULL});
	/* every value a node writes is listed, but graph outputs and inputs */
	int32_t listed = 0;
	for (int32_t i = 0; i < g->nnodes; i++)
		for (int32_t o = 0; o < g->nodes[i]->nout; o++) {
			const om_value *v = g->nodes[i]->out[o];
			if (v && !(v->flags & OM_VALUE_GRAPH_OUTPUT)) {
				assert_true(v->flags & OM_VALUE_INFO);
				listed++;
			}
		}
	assert_int_equal(g->ninfos, listed);
	assert_true(listed >= 2);
	assert_false(g->outputs[0]->flags & OM_VALUE_INFO);
	assert_dims(g->outputs[0], 2, (int64_t[]){-1, 6}, (const char *const[]){"N", NULL});
	/* written and read back; runs as before */
	char dir[256], path[300];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "test_simplify_options"), 0);
	snprintf(path, sizeof path, "%s/vi.onnx", dir);
	assert_int_equal(om_model_save(b, path, NULL, &st), OM_OK);
	om_model *c = NULL;
	assert_int_equal(om_model_load(path, &c, &st), OM_OK);
	assert_int_equal(c->graph->ninfos, listed);
	same_everywhere(a, c, (syms){{"N"}, {0}, 1});
	/* the two measures differ by it */
	size_t with = 0, without = 0;
	assert_int_equal(om_model_saved_size(c, &with, &st), OM_OK);
	assert_int_equal(om_model_saved_size_without_value_info(c, &without, &st), OM_OK);
	assert_true(without < with);
	om_model_free(c);
	tu_tmpdir_remove(dir);
	/* --no-shapes */
	om_model *d = shape_chain_model();
	assert_int_equal(simplify(d, (om_simplify_options){.no_value_info = 1}, &st), OM_OK);
	assert_int_equal(d->graph->ninfos, 0);
	om_model_free(d);
	om_model_free(a);
	om_model_free(b);
}

/* x:[N,6] -> 2 Identities -> 12 Relus -> y: the passes save only the Identities' bytes, less
 * than the shapes of all the Relus take. */
static om_model *clean_model(void)
{
	om_model *m = tu_model(13);
	const char *sy[] = {"N", NULL};
	input(m, "x", OM_FLOAT, 2, (int64_t[]){-1, 6}, sy);
	om_graph *g = m->graph;
	tu_graph_node(g, "Identity", "x", "i1");
	tu_graph_node(g, "Identity", "i1", "r0");
	char in[16], out[16];
	for (int k = 0; k < 12; k++) {
		snprintf(in, sizeof in, "r%d", k);
		snprintf(out, sizeof out, k == 11 ? "y" : "r%d", k + 1);
		tu_graph_node(g, "Relu", in, out);
	}
	output(m, "y", OM_FLOAT, 2, (int64_t[]){-1, 6}, sy);
	return m;
}

/* The size rule counts tensors and nodes, not the shapes: every shape is written even when
 * the passes saved fewer bytes than they take (issue 37), and the model without its
 * value_info is no larger than the model as given. */
static void value_info_not_capped_by_size(void **state)
{
	(void)state;
	om_model *a = clean_model(), *b = clean_model();
	om_status st = {0};
	size_t given = 0, saved = 0, bare = 0;
	assert_int_equal(om_model_saved_size(a, &given, &st), OM_OK);
	assert_int_equal(simplify(b, (om_simplify_options){0}, &st), OM_OK);
	const om_graph *g = b->graph;
	assert_int_equal(g->nnodes, 12);
	assert_int_equal(g->ninfos, 11);
	for (int32_t i = 0; i < 11; i++) {
		const om_value *v = g->nodes[i]->out[0];
		assert_true(v->flags & OM_VALUE_INFO);
		assert_dims(v, 2, (int64_t[]){-1, 6}, (const char *const[]){"N", NULL});
	}
	assert_int_equal(om_model_saved_size(b, &saved, &st), OM_OK);
	assert_int_equal(om_model_saved_size_without_value_info(b, &bare, &st), OM_OK);
	assert_true(saved > given); /* the shapes take more than the Identities freed */
	assert_true(bare <= given);
	same_everywhere(a, b, (syms){{"N"}, {0}, 1});
	om_model_free(a);
	om_model_free(b);
}

/* ---- dropped outputs --------------------------------------------------------------------- */

/* x:[N,4] -> Dropout -> (d, mask); d -> Split -> (s0, s1); LSTM(x as [N,1,4]) -> (Y, Y_h);
 * read: s0, Y_h. mask and Y are optional and unread; s1 is unread but not optional. */
static om_model *outputs_model(void)
{
	om_model *m = tu_model(14);
	const char *sy[] = {"N", NULL, NULL};
	input(m, "x", OM_FLOAT, 2, (int64_t[]){-1, 4}, sy);
	om_graph *g = m->graph;
	tu_graph_node(g, "Dropout", "x", "d,mask");
	om_node *sp = tu_graph_node(g, "Split", "d", "s0,s1");
	om_node_set_attr(sp, "axis", OM_ATTR_INT)->i = 1;
	init_i64(m, "ax", 1, (int64_t[]){1});
	tu_graph_node(g, "Unsqueeze", "x,ax", "x3");
	float w[4 * 2 * 4], r[4 * 2 * 2];
	for (int i = 0; i < 32; i++)
		w[i] = (float)((i * 7) % 11 - 5) / 8.0f;
	for (int i = 0; i < 16; i++)
		r[i] = (float)((i * 5) % 7 - 3) / 8.0f;
	const om_tensor wt = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 8, 4}, w);
	const om_tensor rt = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 8, 2}, r);
	dt_init(m, "W", &wt);
	dt_init(m, "R", &rt);
	om_node *l = tu_graph_node(g, "LSTM", "x3,W,R", "Y,Y_h");
	om_node_set_attr(l, "hidden_size", OM_ATTR_INT)->i = 2;
	output(m, "s0", OM_FLOAT, 2, (int64_t[]){-1, 2}, sy);
	om_value *yh = om_graph_value(g, "Y_h");
	dt_output(m, yh);
	return m;
}

static const om_node *node_of(const om_graph *g, const char *op)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i]->op, op))
			return g->nodes[i];
	return NULL;
}

static void unused_outputs_dropped(void **state)
{
	(void)state;
	om_model *a = outputs_model(), *b = outputs_model();
	om_status st = {0};
	assert_int_equal(simplify(b, (om_simplify_options){.drop_unused_outputs = 1,
							    .no_passes = 1}, &st), OM_OK);
	const om_node *d = node_of(b->graph, "Dropout"), *s = node_of(b->graph, "Split"),
		      *l = node_of(b->graph, "LSTM");
	assert_int_equal(d->nout, 1); /* mask: "" and trailing, left out */
	assert_int_equal(s->nout, 2); /* Split's outputs are not optional */
	assert_non_null(s->out[1]);
	assert_int_equal(l->nout, 2); /* Y: "", Y_h read */
	assert_null(l->out[0]);
	assert_non_null(l->out[1]);
	same_everywhere(a, b, (syms){{"N"}, {0}, 1});
	/* without the option, nothing is dropped */
	om_model *c = outputs_model();
	assert_int_equal(simplify(c, (om_simplify_options){.no_passes = 1}, &st), OM_OK);
	assert_int_equal(node_of(c->graph, "Dropout")->nout, 2);
	assert_non_null(node_of(c->graph, "LSTM")->out[0]);
	/* and with the passes too */
	om_model *e = outputs_model();
	assert_int_equal(simplify(e, (om_simplify_options){.drop_unused_outputs = 1}, &st), OM_OK);
	assert_null(node_of(e->graph, "LSTM")->out[0]);
	same_everywhere(a, e, (syms){{"N"}, {0}, 1});
	om_model_free(a);
	om_model_free(b);
	om_model_free(c);
	om_model_free(e);
}

/* ---- sub-models -------------------------------------------------------------------------- */

/* x:[N,4] -> Relu a -> Mul(a, w) b -> Add(b, one) c -> Tanh y; x -> Neg e. Outputs y, e, and
 * with `probe` b and c too (the original's intermediate values). */
static om_model *chain_model(bool probe)
{
	om_model *m = tu_model(13);
	const char *sy[] = {"N", NULL};
	input(m, "x", OM_FLOAT, 2, (int64_t[]){-1, 4}, sy);
	const float w[4] = {0.5f, -1.0f, 2.0f, 0.25f}, one = 1.0f;
	const om_tensor wt = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, w);
	const om_tensor ot = nt_tensor(OM_FLOAT, 0, NULL, &one);
	dt_init(m, "w", &wt);
	dt_init(m, "one", &ot);
	om_graph *g = m->graph;
	tu_graph_node(g, "Relu", "x", "a");
	tu_graph_node(g, "Mul", "a,w", "b");
	tu_graph_node(g, "Add", "b,one", "c");
	tu_graph_node(g, "Tanh", "c", "y");
	tu_graph_node(g, "Neg", "x", "e");
	output(m, "y", OM_FLOAT, 2, (int64_t[]){-1, 4}, sy);
	output(m, "e", OM_FLOAT, 2, (int64_t[]){-1, 4}, sy);
	if (probe) {
		dt_output(m, om_graph_value(g, "b"));
		dt_output(m, om_graph_value(g, "c"));
	}
	return m;
}

/* The extracted model gives the original's values: sub's inputs fed from the probe run. */
static void cut_agrees(const om_model *sub, const char *const *ins, int nin,
		       const char *const *outs, int nout)
{
	static const char *const names[] = {"x", "y", "e", "b", "c"}; /* probe model's values */
	om_model *orig = chain_model(true);
	for (int64_t n = 0; n < 4; n++) {
		feed f[MAXF];
		const syms s = {{"N"}, {n}, 1};
		const int nf = make_feeds(orig, &s, 11 + (uint64_t)n, f);
		om_tensor o[MAXF], r[MAXF];
		int no = 0, nr = 0;
		assert_int_equal(run(orig, f, nf, o, &no), OM_OK);
		/* feeds of sub: the probe values (outputs y e b c are o[0..3]) and x */
		feed g[MAXF];
		for (int i = 0; i < nin; i++) {
			int k = 0;
			while (strcmp(names[k], ins[i]))
				k++;
			g[i] = (feed){ins[i], k == 0 ? f[0].t : o[k - 1]};
		}
		assert_int_equal(run(sub, g, nin, r, &nr), OM_OK);
		assert_int_equal(nr, nout);
		for (int i = 0; i < nout; i++) {
			int k = 1;
			while (strcmp(names[k], outs[i]))
				k++;
			char buf[200];
			const char *d = dt_diff_close(&r[i], &o[k - 1], 1e-6, 0, buf, sizeof buf);
			if (d)
				fail_msg("N=%lld, output '%s': %s", (long long)n, outs[i], d);
		}
		free_outs(o, no);
		free_outs(r, nr);
		free_feeds(f, nf);
	}
	om_model_free(orig);
}

static void submodel_between(void **state)
{
	(void)state;
	om_status st = {0};
	const char *ins[] = {"b", NULL}, *outs[] = {"y", NULL};
	om_model *m = chain_model(false);
	assert_int_equal(simplify(m, (om_simplify_options){.inputs = ins, .outputs = outs}, &st),
			 OM_OK);
	const om_graph *g = m->graph;
	assert_int_equal(g->ninputs, 1);
	assert_string_equal(g->inputs[0]->name, "b");
	assert_int_equal(g->inputs[0]->type.elem, OM_FLOAT); /* typed by inference */
	assert_dims(g->inputs[0], 2, (int64_t[]){-1, 4}, (const char *const[]){"N", NULL});
	assert_int_equal(g->noutputs, 1);
	assert_string_equal(g->outputs[0]->name, "y");
	assert_int_equal(g->nnodes, 2); /* Add, Tanh */
	assert_int_equal(tu_count_op(g, "Neg") + tu_count_op(g, "Relu") + tu_count_op(g, "Mul"), 0);
	assert_int_equal(g->ninits, 1); /* one; w went with Mul */
	cut_agrees(m, ins, 1, outs, 1);
	om_model_free(m);

	/* outputs only: x stays the input; inputs only: the outputs that still need x keep it */
	const char *mid[] = {"c", NULL};
	m = chain_model(false);
	assert_int_equal(simplify(m, (om_simplify_options){.outputs = mid}, &st), OM_OK);
	assert_int_equal(m->graph->ninputs, 1);
	assert_string_equal(m->graph->inputs[0]->name, "x");
	assert_int_equal(m->graph->nnodes, 3);
	cut_agrees(m, (const char *const[]){"x"}, 1, mid, 1);
	om_model_free(m);
	m = chain_model(false);
	assert_int_equal(simplify(m, (om_simplify_options){.inputs = mid}, &st), OM_OK);
	assert_int_equal(m->graph->ninputs, 2);
	assert_string_equal(m->graph->inputs[0]->name, "c");
	assert_string_equal(m->graph->inputs[1]->name, "x");
	assert_int_equal(m->graph->nnodes, 2); /* Tanh, Neg */
	cut_agrees(m, (const char *const[]){"c", "x"}, 2, (const char *const[]){"y", "e"}, 2);
	om_model_free(m);

	/* errors name the tensor */
	static const struct {
		const char *in, *out, *says;
	} bad[] = {
		{"nope", NULL, "sub-model input 'nope': the main graph has no tensor"},
		{NULL, "nope", "sub-model output 'nope': the main graph has no tensor"},
		{"w", NULL, "sub-model input 'w' is an initializer"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *bi[] = {bad[i].in, NULL}, *bo[] = {bad[i].out, NULL};
		m = chain_model(false);
		om_kind rc = simplify(m, (om_simplify_options){.inputs = bad[i].in ? bi : NULL,
							       .outputs = bad[i].out ? bo : NULL},
				      &st);
		if (rc != OM_ERR_INVALID_INPUT || !strstr(st.msg, bad[i].says))
			fail_msg("case %zu: %s: %s", i, om_kind_name(rc), st.msg);
		om_model_free(m);
	}
}

/* A real model cut in the middle (../shared/models/gpt_tiny_dyn): the extracted part, fed the
 * original's value of the cut tensor, gives the original's logits. */
static void submodel_of_shared_model(void **state)
{
	(void)state;
	const char *shared = tu_shared_dir();
	if (!shared)
		skip(); /* needs ../shared/models/gpt_tiny_dyn (model.onnx, in/idx.npy) */
	char path[512], in[512];
	snprintf(path, sizeof path, "%s/models/gpt_tiny_dyn/model.onnx", shared);
	snprintf(in, sizeof in, "%s/models/gpt_tiny_dyn/in/idx.npy", shared);
	om_status st = {0};
	om_model *orig = NULL, *sub = NULL;
	if (om_model_load(path, &orig, &st))
		skip(); /* the model is not there */
	assert_int_equal(om_model_load(path, &sub, &st), OM_OK);
	/* the cut: the first Add in the second half of the graph (the residual stream) */
	const om_graph *g = orig->graph;
	const char *cut = NULL;
	for (int32_t i = g->nnodes / 2; i < g->nnodes && !cut; i++)
		if (!strcmp(g->nodes[i]->op, "Add") && g->nodes[i]->out[0])
			cut = g->nodes[i]->out[0]->name;
	assert_non_null(cut);
	const char *ins[] = {cut, NULL};
	assert_int_equal(simplify(sub, (om_simplify_options){.inputs = ins}, &st), OM_OK);
	/* idx stays an input when the part still reads its shape (the causal mask) */
	assert_true(sub->graph->ninputs >= 1 && sub->graph->ninputs <= 2);
	assert_string_equal(sub->graph->inputs[0]->name, cut);
	assert_true(sub->graph->nnodes < g->nnodes / 2);
	dt_output(orig, om_graph_find(orig->graph, cut)); /* the original's value of it */
	feed f = {"idx", {0}};
	assert_int_equal(om_tensor_read_file(in, &f.t, &st), OM_OK);
	om_tensor o[MAXF], r[MAXF];
	int no = 0, nr = 0;
	assert_int_equal(run(orig, &f, 1, o, &no), OM_OK);
	feed h[2] = {{cut, o[no - 1]}, f};
	assert_int_equal(run(sub, h, 2, r, &nr), OM_OK);
	char buf[200];
	const char *d = dt_diff_close(&r[0], &o[0], 1e-4, 1e-5, buf, sizeof buf);
	if (d)
		fail_msg("logits from '%s': %s", cut, d);
	free_outs(o, no);
	free_outs(r, nr);
	om_tensor_free(&f.t);
	om_model_free(orig);
	om_model_free(sub);
}

/* ---- functions --------------------------------------------------------------------------- */

static om_model *load_source(const char *rel)
{
	om_model *m = NULL;
	om_status st = {0};
	if (om_model_load(tu_source_path(rel), &m, &st))
		fail_msg("%s: %s", rel, st.msg);
	return m;
}

static bool calls_custom(const om_graph *g)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i]->domain, "custom"))
			return true;
	return false;
}

/* inlined alone (no passes) and inlined + simplified agree; the inlined model computes f */
static void check_functions(const char *rel, int nfunctions, const syms *s,
			    void (*expect)(const feed *f, const om_tensor *out))
{
	om_model *a = load_source(rel), *b = load_source(rel), *k = load_source(rel);
	assert_int_equal(a->nfunctions, nfunctions);
	om_status st = {0};
	assert_int_equal(simplify(a, (om_simplify_options){.no_passes = 1}, &st), OM_OK);
	assert_int_equal(simplify(b, (om_simplify_options){0}, &st), OM_OK);
	assert_int_equal(simplify(k, (om_simplify_options){.keep_functions = 1}, &st), OM_OK);
	assert_int_equal(a->nfunctions, 0); /* none called any more: dropped */
	assert_int_equal(b->nfunctions, 0);
	assert_int_equal(k->nfunctions, nfunctions);
	assert_false(calls_custom(a->graph));
	assert_true(calls_custom(k->graph));
	same_everywhere(a, b, *s);
	for (int64_t n = 0; n < 4; n++) {
		syms at = *s;
		at.value[0] = n;
		feed f[MAXF];
		const int nf = make_feeds(b, &at, 99 + (uint64_t)n, f);
		om_tensor o[MAXF];
		int no = 0;
		assert_int_equal(run(b, f, nf, o, &no), OM_OK);
		expect(f, o);
		free_outs(o, no);
		free_feeds(f, nf);
	}
	om_model_free(a);
	om_model_free(b);
	om_model_free(k);
}

static const float *fin(const feed *f, const char *name)
{
	for (int i = 0; i < MAXF; i++)
		if (!strcmp(f[i].name, name))
			return f[i].t.data;
	return NULL;
}

static void expect_attrs(const feed *f, const om_tensor *out)
{
	const float *x = fin(f, "x"), *y = fin(f, "y");
	const float *z1 = out[0].data, *z2 = out[1].data;
	for (int64_t i = 0; i < om_tensor_numel(&out[0]); i++) {
		const float want1 = fmaxf(x[i], 0) * 2.0f + y[i] + 0.5f; /* beta's default */
		const float want2 = want1 * -1.0f + x[i] + 3.0f;
		assert_float_equal(z1[i], want1, 1e-6);
		assert_float_equal(z2[i], want2, 1e-6);
	}
}

static void expect_nested(const feed *f, const om_tensor *out)
{
	const float *x = fin(f, "x"), *s = out[0].data, *d = out[1].data;
	for (int64_t i = 0; i < om_tensor_numel(&out[0]); i++) {
		const float o = x[i] * x[i] + x[i];
		assert_float_equal(s[i], 0.0f, 0);
		assert_float_equal(d[i], 2.0f * o, 1e-6);
	}
}

static void expect_branch(const feed *f, const om_tensor *out)
{
	const bool c = *(const uint8_t *)fin(f, "c");
	const float *x = fin(f, "x"), *y = out[0].data;
	for (int64_t i = 0; i < om_tensor_numel(&out[0]); i++)
		assert_float_equal(y[i], c ? x[i] + 10.0f : 0.0f, 1e-6);
}

static void functions_inlined(void **state)
{
	(void)state;
	const syms n = {{"N"}, {0}, 1};
	check_functions("tests/functions/attrs.onnx", 2, &n, expect_attrs);
	check_functions("tests/functions/nested.onnx", 3, &n, expect_nested);
	check_functions("tests/functions/branch.onnx", 1, &n, expect_branch);
	/* names: the caller's 't' and the body's 't' stay apart; body nodes are named after
	 * their call, one name each */
	om_model *m = load_source("tests/functions/attrs.onnx");
	om_status st = {0};
	assert_int_equal(simplify(m, (om_simplify_options){.no_passes = 1}, &st), OM_OK);
	assert_non_null(om_graph_find(m->graph, "call1/t"));
	assert_non_null(om_graph_find(m->graph, "call2/t"));
	for (int32_t i = 0; i < m->graph->nnodes; i++)
		for (int32_t j = 0; j < i; j++)
			assert_string_not_equal(m->graph->nodes[i]->name, m->graph->nodes[j]->name);
	om_model_free(m);
	/* functions that call themselves */
	m = load_source("tests/functions/recursive.onnx");
	assert_int_equal(simplify(m, (om_simplify_options){0}, &st), OM_ERR_INVALID_MODEL);
	assert_non_null(strstr(st.msg, "calls itself"));
	om_model_free(m);
}

/* A PyTorch export with export_modules_as_functions: inlined, simplified, PyTorch's output */
static void torch_functions(void **state)
{
	(void)state;
	om_model *m = load_source("tests/functions/torch_blocks/model.onnx");
	assert_int_equal(m->nfunctions, 2);
	om_status st = {0};
	assert_int_equal(simplify(m, (om_simplify_options){0}, &st), OM_OK);
	assert_int_equal(m->nfunctions, 0);
	feed f = {"x", {0}};
	om_tensor want = {0}, out[MAXF];
	int nout = 0;
	assert_int_equal(om_tensor_read_file(tu_source_path("tests/functions/torch_blocks/x.npy"),
					     &f.t, &st), OM_OK);
	assert_int_equal(om_tensor_read_file(tu_source_path("tests/functions/torch_blocks/y.npy"),
					     &want, &st), OM_OK);
	assert_int_equal(run(m, &f, 1, out, &nout), OM_OK);
	char buf[200];
	const char *d = dt_diff_close(&out[0], &want, 1e-4, 1e-5, buf, sizeof buf);
	if (d)
		fail_msg("y: %s", d);
	free_outs(out, nout);
	om_tensor_free(&want);
	om_tensor_free(&f.t);
	/* and against the inlined model without the passes, at several N and T */
	om_model *a = load_source("tests/functions/torch_blocks/model.onnx");
	assert_int_equal(simplify(a, (om_simplify_options){.no_passes = 1}, &st), OM_OK);
	same_everywhere(a, m, (syms){{"N", "T"}, {0, 0}, 2});
	om_model_free(a);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(input_shape_numbers),
		cmocka_unit_test(input_shape_symbols),
		cmocka_unit_test(input_shape_errors),
		cmocka_unit_test(value_info_written),
		cmocka_unit_test(value_info_not_capped_by_size),
		cmocka_unit_test(unused_outputs_dropped),
		cmocka_unit_test(submodel_between),
		cmocka_unit_test(submodel_of_shared_model),
		cmocka_unit_test(functions_inlined),
		cmocka_unit_test(torch_functions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
