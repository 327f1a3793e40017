/* test_registry.c — the op rows as the passes see them: every opcode names exactly one op of
 * one domain and some row carries it, and a node gets its row's code only at an opset and in a
 * domain where that row applies (ops/op.h, runtime/registry.c). */
#include <string.h>

#include "registry.h"
#include "testutil.h"

typedef struct codes_seen {
	const om_op *first[OM_OPC_COUNT]; /* the first row seen with each code */
	int mismatches, flagged;
} codes_seen;

static void visit(const om_op *op, void *arg)
{
	codes_seen *cs = arg;
	if (op->code < 0 || op->code >= OM_OPC_COUNT) {
		cs->mismatches++;
		return;
	}
	if (op->flags & OM_OP_PASSTHROUGH)
		cs->flagged++;
	if (op->code == OM_OPC_NONE)
		return;
	const om_op *f = cs->first[op->code];
	if (!f)
		cs->first[op->code] = op;
	else if (strcmp(f->name, op->name) || strcmp(f->domain, op->domain))
		cs->mismatches++;
}

static void test_codes_name_one_op(void **state)
{
	(void)state;
	codes_seen cs = {0};
	om_op_each(visit, &cs);
	assert_int_equal(cs.mismatches, 0);
	for (int k = OM_OPC_NONE + 1; k < OM_OPC_COUNT; k++)
		assert_non_null(cs.first[k]); /* every code is some row's */
	assert_string_equal(cs.first[OM_OPC_CONV]->name, "Conv");
	assert_string_equal(cs.first[OM_OPC_MS_GELU]->domain, "com.microsoft");
	assert_string_equal(cs.first[OM_OPC_GELU]->domain, "");
	assert_int_equal(cs.flagged, 1); /* Identity */
}

/* A model with the given default and com.microsoft opsets (0: not imported). */
static om_model *model_at(int64_t onnx, int64_t ms)
{
	om_model *m = om_model_new();
	assert_non_null(m);
	m->opsets = om_arena_alloc(m->arena, 2 * sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", onnx};
	m->opsets[1] = (om_opset){"com.microsoft", ms};
	m->nopsets = ms ? 2 : 1;
	m->graph = om_graph_new(m, NULL);
	return m;
}

static enum om_opcode code_of(om_model *m, const char *op, const char *domain)
{
	om_node *n = om_graph_add_node(m->graph, op, domain, "n", 1, 1);
	assert_non_null(n);
	return om_node_code(m, n);
}

static void test_node_code_follows_opset_and_domain(void **state)
{
	(void)state;
	om_model *m = model_at(17, 0);
	assert_int_equal(code_of(m, "Conv", ""), OM_OPC_CONV);
	assert_int_equal(code_of(m, "Conv", "ai.onnx"), OM_OPC_CONV);
	assert_int_equal(code_of(m, "Gelu", ""), OM_OPC_NONE);      /* Gelu is opset 20 */
	assert_int_equal(code_of(m, "Add", "com.acme"), OM_OPC_NONE); /* another domain's Add */
	assert_int_equal(code_of(m, "FusedMatMul", "com.microsoft"), OM_OPC_NONE); /* no import */
	assert_int_equal(code_of(m, "Softmax", ""), OM_OPC_NONE);   /* no pass names it */
	om_model_free(m);
	m = model_at(20, 1);
	assert_int_equal(code_of(m, "Gelu", ""), OM_OPC_GELU);
	assert_int_equal(code_of(m, "Gelu", "com.microsoft"), OM_OPC_MS_GELU);
	assert_int_equal(code_of(m, "FusedMatMul", "com.microsoft"), OM_OPC_MS_FUSED_MATMUL);
	assert_int_equal(code_of(m, "Identity", ""), OM_OPC_NONE);
	om_node *id = om_graph_add_node(m->graph, "Identity", "", "id", 1, 1);
	assert_true(om_node_has(m, id, OM_OP_PASSTHROUGH));
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codes_name_one_op),
		cmocka_unit_test(test_node_code_follows_opset_and_domain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
