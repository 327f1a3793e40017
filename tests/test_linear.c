/* test_linear.c — the passes' work grows with the graph, not its square (issue 14): counted,
 * never timed. A replace through the consumer index visits the readers of its value (a scan
 * per bypass would visit every node; the count catches a return to it). Also what the
 * shortcuts must keep: fresh names in the same order as before their suffix memo, and values
 * that subgraphs read by name (the set of referred names) not bypassed. */
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "pass.h"
#include "uses.h"

enum { BLOCKS = 3000 };

static void set_type(om_graph *g, om_value *v, const char *sym)
{
	v->type.kind = OM_TYPE_TENSOR;
	v->type.elem = OM_FLOAT;
	v->type.rank = 2;
	v->type.dims = om_arena_alloc(g->model->arena, 2 * sizeof(om_dim));
	v->type.dims[0] = (om_dim){-1, sym};
	v->type.dims[1] = (om_dim){4, NULL};
}

/* x -> [Identity -> Relu, Relu (the same) -> Add] x BLOCKS -> Identity -> y (graph output) */
static om_model *chain(void)
{
	om_model *m = tu_model(17);
	om_graph *g = m->graph;
	om_value *x = om_graph_value(g, "x");
	set_type(g, x, "N");
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	char prev[32] = "x", buf[128];
	for (int k = 0; k < BLOCKS; k++) {
		char id[32], r[32], d[32], a[32];
		snprintf(id, sizeof id, "i%d", k);
		snprintf(r, sizeof r, "r%d", k);
		snprintf(d, sizeof d, "d%d", k);
		snprintf(a, sizeof a, "a%d", k);
		tu_graph_node(g, "Identity", prev, id);
		tu_graph_node(g, "Relu", id, r);
		tu_graph_node(g, "Relu", id, d);
		snprintf(buf, sizeof buf, "%s,%s", r, d);
		tu_graph_node(g, "Add", buf, a);
		snprintf(prev, sizeof prev, "%s", a);
	}
	tu_graph_node(g, "Identity", prev, "y");
	om_value *y = om_graph_value(g, "y");
	set_type(g, y, "N");
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	return m;
}

static void run_passes(om_pass_ctx *c, om_model *m)
{
	om_status st = {0};
	int changes = 0;
	assert_int_equal(om_pass_ctx_open(c, m, NULL, &st), OM_OK);
	assert_int_equal(om_pass_infer(c, m->graph, &changes), OM_OK);
	assert_int_equal(om_pass_identities(c, m->graph, &changes), OM_OK);
	assert_int_equal(om_pass_common(c, m->graph, &changes), OM_OK);
	assert_int_equal(om_pass_dead(c, m->graph, &changes), OM_OK);
}

static void replaces_visit_readers_only(void **state)
{
	(void)state;
	om_model *m = chain();
	om_pass_ctx c;
	run_passes(&c, m);
	const om_graph *g = m->graph;
	/* the result: Identities gone (y now written by the last Add), twin Relus merged */
	assert_int_equal(tu_count_op(g, "Identity"), 0);
	assert_int_equal(tu_count_op(g, "Relu"), BLOCKS);
	assert_int_equal(tu_count_op(g, "Add"), BLOCKS);
	assert_int_equal(g->nnodes, 2 * BLOCKS);
	const om_node *last = g->outputs[0]->producer;
	assert_non_null(last);
	assert_string_equal(last->op, "Add");
	assert_ptr_equal(last->in[0], last->in[1]);
	assert_string_equal(last->in[0]->producer->in[0]->name, "a2998");
	/* BLOCKS + 1 bypasses and BLOCKS merges, each visiting its value's few readers: a
	 * scan of the graph per replace would be about 4 * BLOCKS visits each */
	const uint64_t visits = om_uses_visits(&c);
	assert_true(visits >= (uint64_t)2 * BLOCKS);
	assert_true(visits <= (uint64_t)8 * BLOCKS);
	/* a fusion with nothing to try in the graph counts no uses, an If-inlining with no If
	 * builds no consumer index */
	const uint64_t recounts = c.recounts, builds = c.uses_builds;
	int changes = 0;
	assert_int_equal(om_pass_fuse_conv_bn(&c, m->graph, &changes), OM_OK);
	assert_int_equal(om_pass_inline_if(&c, m->graph, &changes), OM_OK);
	assert_int_equal(changes, 0);
	assert_int_equal(c.recounts, recounts);
	assert_int_equal(c.uses_builds, builds);
	om_pass_ctx_close(&c);
	om_model_free(m);
}

static void fresh_names_in_order(void **state)
{
	(void)state;
	om_model *m = tu_model(17);
	om_graph *g = m->graph;
	char want[64];
	for (int i = 0; i < BLOCKS; i++) {
		om_value *v = om_graph_fresh_value(g, "t");
		assert_non_null(v);
		if (i)
			snprintf(want, sizeof want, "t__%d", i);
		else
			snprintf(want, sizeof want, "t");
		assert_string_equal(v->name, want);
	}
	/* a suffix taken by another value is skipped, the ones below it are still used */
	assert_non_null(om_graph_value(g, "u__2"));
	assert_string_equal(om_graph_fresh_value(g, "u")->name, "u");
	assert_string_equal(om_graph_fresh_value(g, "u")->name, "u__1");
	assert_string_equal(om_graph_fresh_value(g, "u")->name, "u__3");
	assert_string_equal(om_graph_fresh_value(g, "")->name, "v");
	assert_string_equal(om_graph_fresh_value(g, NULL)->name, "v__1");
	om_model_free(m);
}

/* A branch of an If that reads i5 of the outer graph by name (Neg(i5)). */
static om_graph *branch(om_model *m, const char *out)
{
	om_graph *b = om_graph_new(m, m->graph);
	om_value *ref = om_graph_value(b, "i5");
	ref->flags |= OM_VALUE_OUTER;
	tu_graph_node(b, "Neg", "i5", out);
	om_value *o = om_graph_value(b, out);
	o->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(b, &b->outputs, &b->noutputs, o);
	return b;
}

static void subgraph_reads_keep_their_value(void **state)
{
	(void)state;
	om_model *m = chain();
	om_graph *g = m->graph;
	om_value *cond = om_graph_value(g, "c");
	cond->type = (om_type){OM_TYPE_TENSOR, OM_BOOL, 0, NULL, NULL};
	cond->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, cond);
	om_node *iff = tu_graph_node(g, "If", "c", "z");
	om_node_set_attr(iff, "then_branch", OM_ATTR_GRAPH)->g = branch(m, "t");
	om_node_set_attr(iff, "else_branch", OM_ATTR_GRAPH)->g = branch(m, "e");
	om_value *z = om_graph_value(g, "z");
	z->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, z);
	om_pass_ctx c;
	run_passes(&c, m);
	/* the Identity writing i5 stays (the branches read it by name), every other one goes */
	assert_int_equal(tu_count_op(g, "Identity"), 1);
	const om_value *i5 = om_graph_find(g, "i5");
	assert_non_null(i5->producer);
	assert_string_equal(i5->producer->op, "Identity");
	assert_false(i5->producer->flags & OM_NODE_DEAD);
	assert_true(om_value_used_by_subgraph(&c, g, i5));
	assert_false(om_value_used_by_subgraph(&c, g, om_graph_find(g, "i6")));
	om_pass_ctx_close(&c);
	om_model_free(m);
}

/* x (N, 4) -> [MatMul(W 4x4), Add(b)] x BLOCKS: fuse_matmul_add makes BLOCKS Gemms, with one
 * count of the uses for the pass (not one per rewrite) and the counts it keeps exact. */
static void fusions_keep_counts_without_recounting(void **state)
{
	(void)state;
	om_model *m = tu_model(17);
	om_graph *g = m->graph;
	om_value *x = om_graph_value(g, "x");
	set_type(g, x, NULL);
	x->type.dims[0] = (om_dim){3, NULL};
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	const int64_t wd[2] = {4, 4}, bd[1] = {4};
	om_value *w = om_graph_value(g, "W"), *b = om_graph_value(g, "b");
	w->init = om_model_tensor(m, OM_FLOAT, 2, wd);
	b->init = om_model_tensor(m, OM_FLOAT, 1, bd);
	w->flags |= OM_VALUE_INITIALIZER;
	b->flags |= OM_VALUE_INITIALIZER;
	tu_push_value(g, &g->inits, &g->ninits, w);
	tu_push_value(g, &g->inits, &g->ninits, b);
	char prev[32] = "x", buf[96];
	for (int k = 0; k < BLOCKS; k++) {
		char mm[32];
		snprintf(mm, sizeof mm, "m%d", k);
		snprintf(buf, sizeof buf, "%s,W", prev);
		tu_graph_node(g, "MatMul", buf, mm);
		snprintf(buf, sizeof buf, k % 2 ? "%s,b" : "b,%s", mm); /* both operand orders */
		snprintf(prev, sizeof prev, "a%d", k);
		tu_graph_node(g, "Add", buf, prev);
	}
	om_value *y = om_graph_value(g, prev);
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	om_pass_ctx c;
	om_status st = {0};
	int changes = 0;
	assert_int_equal(om_pass_ctx_open(&c, m, NULL, &st), OM_OK);
	assert_int_equal(om_pass_infer(&c, g, &changes), OM_OK);
	assert_int_equal(om_pass_fuse_matmul_add(&c, g, &changes), OM_OK);
	assert_int_equal(changes, BLOCKS);
	assert_int_equal(tu_count_op(g, "Gemm"), BLOCKS);
	assert_int_equal(tu_count_op(g, "MatMul"), 0);
	assert_int_equal(c.recounts, 1);
	/* the counts kept equal a recount: W and b read by every Gemm, each a%d once */
	assert_int_equal(w->nuses, BLOCKS);
	assert_int_equal(b->nuses, BLOCKS);
	assert_int_equal(om_graph_find(g, "a7")->nuses, 1);
	assert_int_equal(om_graph_find(g, "m7")->nuses, 0);
	assert_int_equal(y->nuses, 1);
	om_pass_ctx_close(&c);
	om_model_free(m);
}

/* A float [4] initializer holding k, k+1, k+2, k+3. */
static om_value *init_seq(om_model *m, const char *name, float k)
{
	om_graph *g = m->graph;
	om_tensor *t = om_model_tensor(m, OM_FLOAT, 1, (int64_t[]){4});
	for (int i = 0; i < 4; i++)
		((float *)t->data)[i] = k + (float)i;
	om_value *v = om_graph_value(g, name);
	v->init = t;
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(m, &v->type, t);
	tu_push_value(g, &g->inits, &g->ninits, v);
	return v;
}

/* merge_initializers hashes a payload once per pipeline: a second round over unchanged
 * initializers hashes none (on a 1 GB model that second round was 0.6 s of 1.1 s), and an
 * initializer made between rounds is hashed and merged. */
static void initializers_hashed_once(void **state)
{
	(void)state;
	om_model *m = tu_model(17);
	om_graph *g = m->graph;
	om_value *x = tu_typed_value(g, "x", OM_FLOAT, 1, (int64_t[]){4});
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	init_seq(m, "a", 1);
	init_seq(m, "b", 1); /* the same bytes as a */
	init_seq(m, "c", 7);
	tu_graph_node(g, "Add", "x,a", "s1");
	tu_graph_node(g, "Add", "s1,b", "s2");
	tu_graph_node(g, "Add", "s2,c", "y");
	om_value *y = om_graph_value(g, "y");
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	om_pass_ctx c;
	om_status st = {0};
	int changes = 0;
	assert_int_equal(om_pass_ctx_open(&c, m, NULL, &st), OM_OK);
	assert_int_equal(om_pass_common(&c, g, &changes), OM_OK);
	assert_int_equal(changes, 1);
	assert_int_equal(c.hashed, 3);
	assert_string_equal(g->nodes[1]->in[1]->name, "a");
	changes = 0;
	assert_int_equal(om_pass_dead(&c, g, &changes), OM_OK);
	assert_int_equal(g->ninits, 2);
	changes = 0;
	assert_int_equal(om_pass_common(&c, g, &changes), OM_OK);
	assert_int_equal(changes, 0);
	assert_int_equal(c.hashed, 3);
	/* a new initializer equal to c, read by a new node: hashed (once) and merged */
	init_seq(m, "d", 7);
	tu_graph_node(g, "Add", "y,d", "z");
	om_value *z = om_graph_value(g, "z");
	z->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, z);
	om_graph_count_uses(g);
	assert_int_equal(om_pass_common(&c, g, &changes), OM_OK);
	assert_int_equal(changes, 1);
	assert_int_equal(c.hashed, 4);
	assert_string_equal(g->nodes[3]->in[1]->name, "c");
	om_pass_ctx_close(&c);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replaces_visit_readers_only),
		cmocka_unit_test(fresh_names_in_order),
		cmocka_unit_test(subgraph_reads_keep_their_value),
		cmocka_unit_test(fusions_keep_counts_without_recounting),
		cmocka_unit_test(initializers_hashed_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
