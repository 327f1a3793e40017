/* test_clone.c — om_model_clone (ir/clone.c): the clone dumps as its original does, shares
 * its weights' bytes but not their headers, outlives the original, and rewriting it leaves
 * the original as it was. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "ir.h"

static char *dump(const om_model *m)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	assert_non_null(f);
	om_model_dump(m, f);
	fclose(f);
	return text;
}

static om_model *load(const char *rel)
{
	om_model *m = NULL;
	om_status st = {0};
	if (om_model_load(tu_source_path(rel), &m, &st))
		fail_msg("%s: %s", rel, st.msg);
	return m;
}

/* The models: initializers, and an If with two subgraphs that read outer values. */
static const char *const models[] = {"examples/tiny_shuffle.onnx",
				     "tests/session/if_untaken.onnx"};

static void same_dump_after_the_original_is_freed(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
		om_model *m = load(models[i]);
		om_model *c = NULL, *cc = NULL;
		om_status st = {0};
		assert_int_equal(om_model_clone(m, &c, &st), OM_OK);
		char *want = dump(m), *got = dump(c);
		assert_string_equal(got, want);
		free(got);
		om_model *saved = tu_reload(m);
		char *want_saved = dump(saved);
		om_model_free(saved);
		/* the clone holds its original: freed first, it still reads the weights */
		om_model_free(m);
		assert_int_equal(om_model_clone(c, &cc, &st), OM_OK);
		om_model_free(c);
		got = dump(cc);
		assert_string_equal(got, want);
		free(got);
		/* and is saved as the original would be */
		saved = tu_reload(cc);
		got = dump(saved);
		assert_string_equal(got, want_saved);
		om_model_free(saved);
		om_model_free(cc);
		free(got);
		free(want);
		free(want_saved);
	}
}

static void weights_shared_headers_not(void **state)
{
	(void)state;
	om_model *m = load(models[0]);
	om_model *c = NULL;
	om_status st = {0};
	assert_int_equal(om_model_clone(m, &c, &st), OM_OK);
	int shared = 0;
	for (int32_t i = 0; i < m->graph->ninits; i++) {
		const om_value *v = m->graph->inits[i];
		const om_value *w = om_graph_find(c->graph, v->name);
		assert_non_null(w);
		assert_ptr_equal(c->graph->inits[i], w);
		assert_ptr_not_equal(w, v);
		assert_non_null(w->init);
		assert_ptr_not_equal(w->init, v->init);
		assert_ptr_equal(w->init->data, v->init->data);
		shared++;
	}
	assert_true(shared > 0);
	/* nodes and values point into the clone's own graph */
	for (int32_t i = 0; i < c->graph->nnodes; i++) {
		const om_node *n = c->graph->nodes[i];
		assert_ptr_equal(n->graph, c->graph);
		for (int32_t k = 0; k < n->nout; k++)
			if (n->out[k])
				assert_ptr_equal(n->out[k]->producer, n);
		for (int32_t k = 0; k < n->nin; k++)
			if (n->in[k])
				assert_ptr_equal(om_graph_find(c->graph, n->in[k]->name), n->in[k]);
	}
	om_model_free(c);
	om_model_free(m);
}

static void rewriting_the_clone_leaves_the_original(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
		om_model *m = load(models[i]);
		char *before = dump(m);
		const int32_t n0 = m->graph->nnodes;
		om_model *c = NULL;
		om_status st = {0};
		assert_int_equal(om_model_clone(m, &c, &st), OM_OK);
		assert_int_equal(om_simplify(c, NULL, &st), OM_OK);
		if (i == 0) /* tiny_shuffle: 48 nodes before, 12 after (README) */
			assert_int_equal(c->graph->nnodes, 12);
		char *after = dump(m);
		assert_string_equal(after, before);
		assert_int_equal(m->graph->nnodes, n0);
		om_model_free(c);
		free(before);
		free(after);
		om_model_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_dump_after_the_original_is_freed),
		cmocka_unit_test(weights_shared_headers_not),
		cmocka_unit_test(rewriting_the_clone_leaves_the_original),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
