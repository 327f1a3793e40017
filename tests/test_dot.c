/* test_dot.c — dot text from the IR: counts, escaping, clusters, rendering in process; and
 * every model of ../shared/models when present. */
#include <dirent.h>
#include <graphviz/cgraph.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dot.h"
#include "plan_notes.h"
#include "render.h"
#include "testutil.h"

/* one Graphviz context for the whole test process (see om_dot_renderer_new) */
static om_dot_renderer *renderer;

static om_value *tensor_value(om_graph *g, const char *name, int32_t elem, int32_t rank,
			      const om_dim *dims)
{
	om_value *v = om_graph_value(g, name);
	v->type.kind = OM_TYPE_TENSOR;
	v->type.elem = elem;
	v->type.rank = rank;
	v->type.dims = om_arena_memdup(g->model->arena, dims, sizeof *dims * (size_t)rank);
	return v;
}


/* x -> Relu("we\"ird\\{name}") -> If(then: Neg(x outer)) -> y, with an initializer W into Add */
static om_model *sample(void)
{
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	g->name = "sample";
	const om_dim dims[] = {{-1, "batch"}, {3, NULL}};
	om_value *x = tensor_value(g, "x", OM_FLOAT, 2, dims);
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	om_value *w = tensor_value(g, "W", OM_FLOAT, 1, dims + 1);
	w->init = om_model_tensor(m, OM_FLOAT, 1, (int64_t[]){3});
	w->flags |= OM_VALUE_INITIALIZER;
	tu_push_value(g, &g->inits, &g->ninits, w);
	om_node *relu = om_graph_add_node(g, "Relu", "", "we\"ird\\{name} \xc3\xa9t\xc3\xa9", 1, 1);
	relu->in[0] = x;
	om_node_set_output(relu, 0, tensor_value(g, "r", OM_FLOAT, 2, dims));
	om_node *add = om_graph_add_node(g, "Add", "", "add", 2, 1);
	add->in[0] = relu->out[0];
	add->in[1] = w;
	om_node_set_output(add, 0, tensor_value(g, "a", OM_FLOAT, 2, dims));
	om_node *iff = om_graph_add_node(g, "If", "", "branch", 1, 1);
	iff->in[0] = add->out[0];
	om_node_set_output(iff, 0, tensor_value(g, "y", OM_FLOAT, 2, dims));
	om_graph *then = om_graph_new(m, g);
	om_value *xo = om_graph_value(then, "r");
	xo->flags |= OM_VALUE_OUTER;
	om_node *neg = om_graph_add_node(then, "Neg", "", "neg", 1, 1);
	neg->in[0] = xo;
	om_node_set_output(neg, 0, om_graph_value(then, "t"));
	tu_push_value(then, &then->outputs, &then->noutputs, neg->out[0]);
	om_node_set_attr(iff, "then_branch", OM_ATTR_GRAPH)->g = then;
	tu_push_value(g, &g->outputs, &g->noutputs, iff->out[0]);
	return m;
}

static char *write_dot(const om_model *m, const om_dot_config *opt, om_dot_stats *stats)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	om_status st = {0};
	assert_int_equal(om_dot_write(m, opt, f, stats, &st), OM_OK);
	fclose(f);
	return text;
}

/* Parses the text with Graphviz's own parser and counts what it sees. */
static void parse_counts(const char *text, int *nodes, int *edges)
{
	Agraph_t *g = agmemread(text);
	assert_non_null(g);
	*nodes = agnnodes(g);
	*edges = agnedges(g);
	agclose(g);
}

static void counts_and_escaping(void **state)
{
	(void)state;
	om_model *m = sample();
	om_dot_stats s;
	char *text = write_dot(m, NULL, &s);
	/* x, Relu, Add, If, y; in the cluster: Neg and its output t */
	assert_int_equal(s.nodes, 7);
	/* x->Relu, Relu->Add, Add->If, If->y; Relu->Neg (outer, dashed), Neg->t */
	assert_int_equal(s.edges, 6);
	int n, e;
	parse_counts(text, &n, &e);
	assert_int_equal(n, s.nodes);
	assert_int_equal(e, s.edges);
	assert_non_null(strstr(text, "we\\\"ird\\\\{name} \xc3\xa9t\xc3\xa9"));
	assert_non_null(strstr(text, "float[batch,3]"));
	assert_non_null(strstr(text, "W: float[3] 12 B"));
	assert_non_null(strstr(text, "subgraph cluster_"));
	assert_non_null(strstr(text, "style=dashed"));
	free(text);
	om_model_free(m);
}

static void escape_hostile_bytes(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	om_dot_escape(f, "a\"b\\c\nd\x01\xff\xc3(");
	fclose(f);
	assert_string_equal(text, "a\\\"b\\\\c\\nd?\xef\xbf\xbd\xef\xbf\xbd(");
	free(text);
}

static void diff_marks(void **state)
{
	(void)state;
	om_model *m = sample(), *d = sample();
	/* in the simplified copy: Relu removed (its output folded), a new Mul produces "a" */
	om_graph *dg = d->graph;
	om_value *r = om_graph_find(dg, "r");
	r->init = om_model_tensor(d, OM_FLOAT, 1, (int64_t[]){3});
	r->producer = NULL;
	dg->nodes[0]->flags |= OM_NODE_DEAD;
	om_graph_compact(dg);
	dg->nodes[0]->op = "Mul";
	om_dot_config opt = {.diff = d};
	om_dot_stats s;
	char *text = write_dot(m, &opt, &s);
	assert_non_null(strstr(text, "(folded)"));
	assert_non_null(strstr(text, "#ffd8a8")); /* the new Mul */
	assert_non_null(strstr(text, "#eeeeee")); /* the removed Relu and Add */
	int n, e;
	parse_counts(text, &n, &e);
	assert_int_equal(n, s.nodes);
	free(text);
	om_model_free(m);
	om_model_free(d);
}

static void render_svg(void **state)
{
	(void)state;
	om_model *m = sample();
	char *text = write_dot(m, NULL, NULL);
	char path[] = "/tmp/omopt_dot_XXXXXX.svg";
	int fd = mkstemps(path, 4);
	assert_true(fd >= 0);
	close(fd);
	om_status st = {0};
	assert_int_equal(om_dot_render(renderer, text, strlen(text), "svg", path, &st), OM_OK);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char buf[65536];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	unlink(path);
	assert_non_null(strstr(buf, "<svg"));
	assert_non_null(strstr(buf, "we&quot;ird\\{name} \xc3\xa9t\xc3\xa9"));
	free(text);
	om_model_free(m);
}

/* A 3000-node chain whose every 50th node also reads the graph input: in a graph that large,
 * edges longer than 40 positions become reference stubs, so dot's layout stays fast. */
static void large_graph_stubs(void **state)
{
	(void)state;
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	const om_dim dims[] = {{1, NULL}, {8, NULL}};
	om_value *x = tensor_value(g, "x", OM_FLOAT, 2, dims), *prev = x;
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	int far = 0;
	for (int i = 0; i < 3000; i++) {
		char name[32];
		snprintf(name, sizeof name, "v%d", i);
		bool add = i % 50 == 49;
		om_node *n = om_graph_add_node(g, add ? "Add" : "Relu", "", name, add ? 2 : 1, 1);
		n->in[0] = prev;
		if (add) {
			n->in[1] = x;
			far += i > 40; /* i - (-1) > 40 */
		}
		om_node_set_output(n, 0, tensor_value(g, name, OM_FLOAT, 2, dims));
		prev = n->out[0];
	}
	tu_push_value(g, &g->outputs, &g->noutputs, prev);
	om_dot_stats s;
	char *text = write_dot(m, NULL, &s);
	int stubs = 0;
	for (const char *p = text; (p = strstr(p, "style=dotted")); p++)
		stubs++;
	assert_int_equal(stubs, far);
	assert_int_equal(s.nodes, 3000 + 2 + far); /* ops, input, output, stubs */
	assert_int_equal(s.edges, 3000 + 1 + 60);  /* chain, output, 60 reads of x */
	int n, e;
	parse_counts(text, &n, &e);
	assert_int_equal(n, s.nodes);
	assert_int_equal(e, s.edges);
	free(text);
	om_model_free(m);
}

/* DenseNet-like: layer i is Relu(c[i-1]) and c[i] = Concat(x, r[1..i]), so every Relu feeds
 * every later Concat (the O(n^2) long skip edges that kept dot's layout busy for minutes).
 * The longest edges become stubs and the picture renders in seconds. */
static void dense_graph_renders_fast(void **state)
{
	(void)state;
	enum { LAYERS = 48 };
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	g->name = "dense";
	const om_dim dims[] = {{1, NULL}, {8, NULL}};
	om_value *x = tensor_value(g, "x", OM_FLOAT, 2, dims), *cat = x;
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	om_value *relus[LAYERS];
	for (int i = 0; i < LAYERS; i++) {
		char name[32];
		snprintf(name, sizeof name, "r%d", i);
		om_node *r = om_graph_add_node(g, "Relu", "", name, 1, 1);
		r->in[0] = cat;
		om_node_set_output(r, 0, tensor_value(g, name, OM_FLOAT, 2, dims));
		relus[i] = r->out[0];
		snprintf(name, sizeof name, "c%d", i);
		om_node *c = om_graph_add_node(g, "Concat", "", name, i + 2, 1);
		c->in[0] = x;
		for (int k = 0; k <= i; k++)
			c->in[k + 1] = relus[k];
		om_node_set_output(c, 0, tensor_value(g, name, OM_FLOAT, 2, dims));
		cat = c->out[0];
	}
	tu_push_value(g, &g->outputs, &g->noutputs, cat);
	om_dot_stats s;
	char *text = write_dot(m, NULL, &s);
	int stubs = 0;
	for (const char *p = text; (p = strstr(p, "style=dotted")); p++)
		stubs++;
	/* 2 * 48 nodes, input, output, stubs; every edge drawn once (stub or not) */
	int edges = LAYERS + (LAYERS * (LAYERS + 3)) / 2 + 1;
	assert_true(stubs > 0 && stubs <= edges - 2 * LAYERS);
	assert_int_equal(s.nodes, 2 * LAYERS + 2 + stubs);
	assert_int_equal(s.edges, edges);
	/* short edges stay edges: every Relu still reads its Concat directly */
	assert_non_null(strstr(text, "g0_n1 -> g0_n2 [label=\"float[1,8]\"]"));
	int n, e;
	parse_counts(text, &n, &e);
	assert_int_equal(n, s.nodes);
	assert_int_equal(e, s.edges);
	char svg[] = "/tmp/omopt_dense_XXXXXX.svg";
	int fd = mkstemps(svg, 4);
	assert_true(fd >= 0);
	close(fd);
	om_status st = {0};
	/* (minutes before the stubs: the suite's timeout catches a return to that) */
	assert_int_equal(om_dot_render(renderer, text, strlen(text), "svg", svg, &st), OM_OK);
	unlink(svg);
	free(text);
	om_model_free(m);
}

enum { WIDE = 100000 };

/* Renders text to a scratch SVG file in process; the seconds it took. */
static double render_seconds(const char *text)
{
	char svg[] = "/tmp/omopt_wide_XXXXXX.svg";
	int fd = mkstemps(svg, 4);
	assert_true(fd >= 0);
	close(fd);
	om_status st = {0};
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(om_dot_render(renderer, text, strlen(text), "svg", svg, &st), OM_OK);
	clock_gettime(CLOCK_MONOTONIC, &b);
	unlink(svg);
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

/* A graph with input x (float[1]), nothing else yet. */
static om_model *wide_model(om_value **x)
{
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	g->name = "wide";
	*x = tensor_value(g, "x", OM_FLOAT, 1, (const om_dim[]){{1, NULL}});
	(*x)->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, *x);
	return m;
}

/* Room for WIDE graph outputs (tu_push_value copies the list at every push). */
static void wide_outputs_room(om_graph *g)
{
	g->outputs = om_arena_alloc(g->model->arena, sizeof *g->outputs * WIDE);
	assert_non_null(g->outputs);
}

static om_value *wide_value(om_graph *g, const char *prefix, int i)
{
	char name[32];
	snprintf(name, sizeof name, "%s%d", prefix, i);
	return tensor_value(g, name, OM_FLOAT, 1, (const om_dim[]){{1, NULL}});
}

/* Draws m (the dot text of the wide cases stays small: at most `most` edges), checks
 * Graphviz's parser counts what was drawn and renders it in a few seconds. Before the
 * summaries, 100,000 inputs were 100,000 parallel edges (5,000 took dot 50 s). */
static char *draw_wide(const om_model *m, int most)
{
	om_dot_stats s;
	char *text = write_dot(m, NULL, &s);
	int n, e;
	parse_counts(text, &n, &e);
	assert_int_equal(n, s.nodes);
	assert_int_equal(e, s.edges);
	if (s.edges > most)
		fail_msg("%d edges drawn, at most %d wanted", s.edges, most);
	const double secs = render_seconds(text);
	if (secs > 10)
		fail_msg("rendered in %.1f s", secs);
	return text;
}

/* Sum of x 100,000 times: one edge "×100000"; Sum of 100,000 Negs of x: the Negs' rank
 * keeps 16 boxes and one "+99984 more nodes" box; Sum's inputs are drawn from the producers
 * that give the most: that box (×99984) and 15 Negs, the last Neg in a "+1 more" note. */
static void wide_inputs_bundled(void **state)
{
	(void)state;
	om_value *x;
	om_model *m = wide_model(&x);
	om_graph *g = m->graph;
	om_node *sum = om_graph_add_node(g, "Sum", "", "sum", WIDE, 1);
	for (int i = 0; i < WIDE; i++)
		sum->in[i] = x;
	om_node_set_output(sum, 0, wide_value(g, "y", 0));
	tu_push_value(g, &g->outputs, &g->noutputs, sum->out[0]);
	char *text = draw_wide(m, 2);
	assert_non_null(strstr(text, "g0_in0 -> g0_n0 [label=\"float[1] \u00d7100000\"]"));
	free(text);
	om_model_free(m);

	m = wide_model(&x);
	g = m->graph;
	om_value *negs[WIDE];
	for (int i = 0; i < WIDE; i++) {
		om_node *n = om_graph_add_node(g, "Neg", "", "", 1, 1);
		n->in[0] = x;
		om_node_set_output(n, 0, negs[i] = wide_value(g, "n", i));
	}
	sum = om_graph_add_node(g, "Sum", "", "sum", WIDE, 1);
	memcpy(sum->in, negs, sizeof negs);
	om_node_set_output(sum, 0, wide_value(g, "y", 0));
	tu_push_value(g, &g->outputs, &g->noutputs, sum->out[0]);
	text = draw_wide(m, 40);
	assert_non_null(strstr(text, "label=\"+99984 more nodes\""));
	assert_non_null(strstr(text, "g0_more1 -> g0_n100000 [label=\"float[1] \u00d799984\"]"));
	assert_non_null(strstr(text, "g0_n14 -> g0_n100000 [label=\"float[1]\"]"));
	assert_non_null(strstr(text, "label=\"+1 more inputs from 1 producer\""));
	free(text);
	om_model_free(m);
}

/* Split into 100,000 graph outputs: 16 drawn, then one "+99984 more outputs". */
static void wide_outputs_summarized(void **state)
{
	(void)state;
	om_value *x;
	om_model *m = wide_model(&x);
	om_graph *g = m->graph;
	om_node *split = om_graph_add_node(g, "Split", "", "split", 1, WIDE);
	split->in[0] = x;
	wide_outputs_room(g);
	for (int i = 0; i < WIDE; i++) {
		om_node_set_output(split, i, wide_value(g, "s", i));
		g->outputs[g->noutputs++] = split->out[i];
	}
	char *text = draw_wide(m, 20);
	assert_non_null(strstr(text, "label=\"+99984 more outputs\""));
	assert_non_null(strstr(text, "g0_n0 -> g0_outmore [label=\"float[1] \u00d799984\"]"));
	free(text);
	om_model_free(m);
}

/* x read by 100,000 Negs, each a graph output. */
static void wide_readers_summarized(void **state)
{
	(void)state;
	om_value *x;
	om_model *m = wide_model(&x);
	om_graph *g = m->graph;
	wide_outputs_room(g);
	for (int i = 0; i < WIDE; i++) {
		om_node *n = om_graph_add_node(g, "Neg", "", "", 1, 1);
		n->in[0] = x;
		om_node_set_output(n, 0, wide_value(g, "n", i));
		g->outputs[g->noutputs++] = n->out[0];
	}
	char *text = draw_wide(m, 40);
	assert_non_null(strstr(text, "label=\"+99984 more nodes\""));
	assert_non_null(strstr(text, "label=\"+99984 more outputs\""));
	free(text);
	om_model_free(m);
}

/* "digraph { n0 -> n1 -> ... }": a chain of n edges, each labelled when `labels` */
static char *chain_text(int n, bool labels)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fputs("digraph chain {\n  node [shape=box];\n", f);
	for (int i = 0; i < n; i++)
		fprintf(f, "  n%d -> n%d%s;\n", i, i + 1, labels ? " [label=\"float[2]\"]" : "");
	fputs("}\n", f);
	fclose(f);
	return text;
}

/* Graphviz 2.42 keeps a layout's highest rank in a short: a chain of 16,400 labelled edges
 * (labels take ranks of their own: 32,800) crashed dot's layout. A 16,100-edge chain (32,200
 * ranks with its labels) is drawn without them (into /dev/null); a chain deeper than 32,000
 * ranks even without labels is refused before any layout, and nothing is written. */
static void deep_chains(void **state)
{
	(void)state;
	om_status st = {0};
	char *text = chain_text(16100, true);
	assert_int_equal(om_dot_render(renderer, text, strlen(text), "svg", "/dev/null", &st),
			 OM_OK);
	assert_non_null(strstr(om_dot_render_note(renderer), "edge labels left out: with them "
							      "the graph is 32200 ranks deep"));
	free(text);
	char dir[256], svg[300];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "omopt_deep_"), 0);
	snprintf(svg, sizeof svg, "%s/deep.svg", dir);
	text = chain_text(40000, false);
	assert_int_equal(om_dot_render(renderer, text, strlen(text), "svg", svg, &st),
			 OM_ERR_UNSUPPORTED);
	assert_non_null(strstr(st.msg, "40000 ranks deep"));
	assert_int_not_equal(access(svg, F_OK), 0);
	free(text);
	/* a shallow graph keeps its labels, and says nothing */
	text = chain_text(3, true);
	assert_int_equal(om_dot_render(renderer, text, strlen(text), "svg", svg, &st), OM_OK);
	assert_string_equal(om_dot_render_note(renderer), "");
	/* a destination that cannot be written is an error (Graphviz only printed one) */
	snprintf(svg, sizeof svg, "%s/no/such/folder.svg", dir);
	assert_int_equal(om_dot_render(renderer, text, strlen(text), "svg", svg, &st), OM_ERR_IO);
	free(text);
	assert_int_equal(tu_tmpdir_remove(dir), 0);
}

/* omopt dot --plan draws the plan that runs: the example's Conv -> Relu is one FusedConv after
 * om_optimize, as omopt run runs it; --no-optimize draws the model as loaded */
static void plan_cli_optimized(void **state)
{
	(void)state;
	char dir[256], cmd[1024];
	static char out[1 << 20], err[4096];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "omopt_dot_"), 0);
	snprintf(cmd, sizeof cmd, "dot '%s' --plan", tu_source_path("examples/tiny_shuffle.onnx"));
	assert_int_equal(tu_run_omopt(dir, cmd, out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(out, "FusedConv"));
	assert_non_null(strstr(out, "applies Relu")); /* the FusedConv's own activation */
	assert_null(strstr(out, "label=\"Relu"));
	snprintf(cmd, sizeof cmd, "dot '%s' --plan --no-optimize",
		 tu_source_path("examples/tiny_shuffle.onnx"));
	assert_int_equal(tu_run_omopt(dir, cmd, out, sizeof out, err, sizeof err), 0);
	assert_null(strstr(out, "FusedConv"));
	assert_non_null(strstr(out, "label=\"Relu"));
	/* the plan of a session with run's options: exact kernels with --exact */
	snprintf(cmd, sizeof cmd, "dot '%s' --plan --threads 2 --exact",
		 tu_source_path("examples/tiny_shuffle.onnx"));
	assert_int_equal(tu_run_omopt(dir, cmd, out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(out, "exact kernel"));
	assert_null(strstr(out, "fast kernel"));
	snprintf(cmd, sizeof cmd, "dot '%s' --plan --layout NHWC",
		 tu_source_path("examples/tiny_shuffle.onnx"));
	assert_int_equal(tu_run_omopt(dir, cmd, out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(out, "fast kernel"));
	/* a layout means nothing in exact mode: a usage error, not silently ignored */
	snprintf(cmd, sizeof cmd, "dot '%s' --plan --layout nhwc --exact",
		 tu_source_path("examples/tiny_shuffle.onnx"));
	assert_int_equal(tu_run_omopt(dir, cmd, out, sizeof out, err, sizeof err), 2);
	assert_non_null(strstr(err, "--layout is for fast mode"));
	snprintf(cmd, sizeof cmd, "dot '%s' --threads 2",
		 tu_source_path("examples/tiny_shuffle.onnx"));
	assert_int_equal(tu_run_omopt(dir, cmd, out, sizeof out, err, sizeof err), 2);
	assert_non_null(strstr(err, "are for --plan"));
	assert_int_equal(tu_tmpdir_remove(dir), 0);
}

/* m planned in a default session, opt's plan callbacks pointed at the notes (free them) */
static om_plan_notes *notes_of(const om_model *m, om_dot_config *opt)
{
	om_plan_notes *p = NULL;
	om_status st = {0};
	if (om_plan_notes_make(m, NULL, &p, &st))
		fail_msg("%s", st.msg);
	*opt = (om_dot_config){0};
	om_plan_notes_options(p, opt);
	return p;
}

/* --plan on the bundled example: Reshapes are views sharing their source's buffer, the
 * channel-shuffle Transpose (n,2,4,h,w) perm (0,2,1,3,4) ran as runs (the innermost axis
 * stays; its kernel's record: the symbolic batch leaves no plan-time choice), a Conv writes
 * the Relu it absorbed (its own output is never stored). */
static void plan_annotations(void **state)
{
	(void)state;
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(tu_source_path("examples/tiny_shuffle.onnx"), &m, &st), OM_OK);
	assert_int_equal(om_simplify(m, NULL, &st), OM_OK);
	om_dot_config opt;
	om_plan_notes *p = notes_of(m, &opt);
	int views = 0, transposes = 0, absorbing = 0;
	for (int32_t i = 0; i < m->graph->nnodes; i++) {
		const om_node *n = m->graph->nodes[i];
		const char *note = opt.plan_node(opt.plan_arg, n);
		om_dot_plan_value pv, src;
		assert_non_null(note);
		if (strstr(note, ", applies ")) { /* Conv -> Relu: the Conv writes the Relu's */
			assert_int_equal(opt.plan_value(opt.plan_arg, n->out[0], &pv), 1);
			absorbing++;
			continue;
		}
		assert_int_equal(opt.plan_value(opt.plan_arg, n->out[0], &pv), 0);
		assert_true(pv.buffer >= 0);
		if (!strcmp(n->op, "Reshape")) {
			assert_true(pv.is_view);
			assert_int_equal(opt.plan_value(opt.plan_arg, n->in[0], &src), 0);
			assert_int_equal(pv.buffer, src.buffer);
			views++;
		} else if (!strcmp(n->op, "Transpose")) {
			assert_false(pv.is_view);
			/* shaped per run (a symbolic batch): no plan-time choice, the one its
			 * kernel ran (the innermost axis stays) */
			assert_non_null(strstr(note, " kernel (ran runs)"));
			assert_non_null(strstr(note, "shaped per run"));
			transposes++;
		} else if (!strcmp(n->op, "Relu")) {
			assert_false(pv.is_view); /* in place, perhaps, but not a view */
			assert_non_null(strstr(note, "absorbed into its input's producer"));
		}
	}
	assert_int_equal(views, 4);
	assert_int_equal(transposes, 2);
	assert_true(absorbing > 0);
	char *text = write_dot(m, &opt, NULL);
	assert_non_null(strstr(text, "(view)"));
	int n, e;
	parse_counts(text, &n, &e);
	free(text);
	om_plan_notes_free(p);
	om_model_free(m);
}

/* --plan on a squeeze-excitation block (1x1 conv, GAP, 1x1 convs, Sigmoid, channel Mul, 1x1
 * conv): the Mul is noted as absorbed into the conv reading it, with no layout of its own, and
 * that conv as scaling its input per channel */
static void plan_scaled_input(void **state)
{
	(void)state;
	const int64_t C = 8, E = 24, H = 10;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	tu_push_value(g, &g->inputs, &g->ninputs,
		      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){1, C, H, H}));
	tu_float_init(g, "W1", 4, (int64_t[]){E, C, 1, 1}, 1, 0.3f);
	tu_float_init(g, "Wf", 4, (int64_t[]){E, E, 1, 1}, 2, 0.01f);
	tu_float_init(g, "Wy", 4, (int64_t[]){C, E, 1, 1}, 3, 0.2f);
	static const char *const nodes[][3] = {
		{"Conv", "x,W1", "a"}, {"GlobalAveragePool", "a", "p"}, {"Conv", "p,Wf", "s0"},
		{"Sigmoid", "s0", "s"}, {"Mul", "a,s", "e"},             {"Conv", "e,Wy", "y"},
	};
	for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++)
		tu_graph_node(g, nodes[i][0], nodes[i][1], nodes[i][2])->name = nodes[i][2];
	tu_push_value(g, &g->outputs, &g->noutputs, tu_typed_value(g, "y", OM_FLOAT, -1, NULL));
	om_dot_config opt;
	om_plan_notes *p = notes_of(m, &opt);
	int seen = 0;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		const char *note = opt.plan_node(opt.plan_arg, n);
		if (!strcmp(n->name, "e")) {
			assert_string_equal(note, "absorbed into its output's reader");
			seen++;
		} else if (!strcmp(n->name, "y")) {
			assert_non_null(strstr(note, "scales its input per channel"));
			seen++;
		}
	}
	assert_int_equal(seen, 2);
	om_plan_notes_free(p);
	om_model_free(m);
}

/* --plan on a com.microsoft FusedConv with Z (a residual 1x1 conv): noted as adding Z, which
 * its Y may be written over; the plain Conv before it is not */
static void plan_fused_z(void **state)
{
	(void)state;
	om_model *m = tu_model_ms(13);
	om_graph *g = m->graph;
	tu_push_value(g, &g->inputs, &g->ninputs,
		      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){1, 8, 6, 6}));
	tu_float_init(g, "W1", 4, (int64_t[]){8, 8, 1, 1}, 1, 0.3f);
	tu_float_init(g, "W2", 4, (int64_t[]){8, 8, 1, 1}, 2, 0.3f);
	tu_float_init(g, "B", 1, (int64_t[]){8}, 3, 0.1f);
	tu_graph_node(g, "Conv", "x,W1", "a")->name = "a";
	om_node *f = tu_graph_node(g, "Conv", "a,W2,B,x", "y");
	f->name = "y", f->op = "FusedConv", f->domain = "com.microsoft";
	tu_push_value(g, &g->outputs, &g->noutputs, tu_typed_value(g, "y", OM_FLOAT, -1, NULL));
	om_dot_config opt;
	om_plan_notes *p = notes_of(m, &opt);
	assert_non_null(strstr(opt.plan_node(opt.plan_arg, g->nodes[1]),
			       ", adds Z (in its place when Z dies here)"));
	assert_null(strstr(opt.plan_node(opt.plan_arg, g->nodes[0]), "adds Z"));
	om_plan_notes_free(p);
	om_model_free(m);
}

/* Every model of ../shared/models: Graphviz parses the text and sees what we drew. */
static void shared_models(void **state)
{
	(void)state;
	const char *shared = tu_shared_dir();
	if (!shared)
		skip();
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/models", shared);
	DIR *dp = opendir(dir);
	if (!dp)
		skip();
	int seen = 0;
	for (struct dirent *de; (de = readdir(dp));) {
		if (de->d_name[0] == '.')
			continue;
		char path[8192];
		snprintf(path, sizeof path, "%s/%s/model.onnx", dir, de->d_name);
		om_model *m = NULL;
		om_status st = {0};
		if (om_model_load(path, &m, &st) == OM_ERR_UNSUPPORTED)
			skip(); /* the loader has not landed */
		assert_int_equal(st.kind, OM_OK);
		om_dot_stats s;
		char *text = write_dot(m, NULL, &s);
		int n, e;
		parse_counts(text, &n, &e);
		assert_int_equal(n, s.nodes);
		assert_int_equal(e, s.edges);
		assert_true(s.nodes >= 2);
		/* and the project renders it: an SVG with one <g class="node"> per node drawn */
		char svg[] = "/tmp/omopt_model_XXXXXX.svg";
		int fd = mkstemps(svg, 4);
		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(om_dot_render(renderer, text, strlen(text), "svg", svg, &st), OM_OK);
		FILE *f = fopen(svg, "r");
		assert_non_null(f);
		int drawn = 0;
		char line[4096];
		while (fgets(line, sizeof line, f))
			drawn += strstr(line, "class=\"node\"") != NULL;
		fclose(f);
		unlink(svg);
		assert_int_equal(drawn, s.nodes);
		free(text);
		om_model_free(m);
		seen++;
	}
	closedir(dp);
	assert_true(seen > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_and_escaping), cmocka_unit_test(escape_hostile_bytes),
		cmocka_unit_test(diff_marks),          cmocka_unit_test(render_svg),
		cmocka_unit_test(large_graph_stubs), cmocka_unit_test(plan_annotations),
		cmocka_unit_test(plan_cli_optimized),    cmocka_unit_test(shared_models),
		cmocka_unit_test(dense_graph_renders_fast),
		cmocka_unit_test(deep_chains),       cmocka_unit_test(plan_scaled_input),
		cmocka_unit_test(plan_fused_z),
		cmocka_unit_test(wide_inputs_bundled), cmocka_unit_test(wide_outputs_summarized),
		cmocka_unit_test(wide_readers_summarized),
	};
	renderer = om_dot_renderer_new();
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	om_dot_renderer_free(renderer);
	return failed;
}
