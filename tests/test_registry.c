/* test_registry.c — the op rows as the passes see them: every opcode names exactly one op of
 * one domain and some row carries it, a node gets its row's code only at an opset and in a
 * domain where that row applies, and no row repeats its op's previous one (ops/op.h,
 * runtime/registry.c). */
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

/* om_op_find (a binary search of the index sorted at build time) against a scan of every
 * row: the highest since <= opset, the first listed of equal ones, "ai.onnx" and NULL as "". */
typedef struct rows_list {
	const om_op *r[4096];
	int n;
} rows_list;

static void collect(const om_op *op, void *arg)
{
	rows_list *l = arg;
	if (l->n < 4096)
		l->r[l->n++] = op;
}

static bool dom_eq(const char *a, const char *b)
{
	a = !a || !strcmp(a, "ai.onnx") ? "" : a;
	b = !b || !strcmp(b, "ai.onnx") ? "" : b;
	return !strcmp(a, b);
}

static const om_op *scan_find(const rows_list *l, const char *domain, const char *name,
			      int64_t opset)
{
	const om_op *best = NULL;
	for (int i = 0; i < l->n; i++)
		if (l->r[i]->since <= opset && !strcmp(l->r[i]->name, name) &&
		    dom_eq(l->r[i]->domain, domain) && (!best || l->r[i]->since > best->since))
			best = l->r[i];
	return best;
}

static void test_op_find_matches_a_scan(void **state)
{
	(void)state;
	static rows_list l;
	l.n = 0;
	om_op_each(collect, &l);
	assert_true(l.n > 100 && l.n < 4096);
	int checked = 0;
	for (int i = 0; i < l.n; i++) {
		const om_op *r = l.r[i];
		const char *doms[] = {r->domain, r->domain[0] ? "" : "ai.onnx",
				      r->domain[0] ? "ai.onnx" : NULL, "x.unknown"};
		for (int d = 0; d < 4; d++)
			for (int64_t v = 0; v <= 26; v++) {
				assert_ptr_equal(om_op_find(doms[d], r->name, v),
						 scan_find(&l, doms[d], r->name, v));
				checked++;
			}
		assert_int_equal(om_op_find(r->domain, r->name, r->since)->since, r->since);
	}
	assert_null(om_op_find("", "NoSuchOp", 21));
	assert_null(om_op_find("", "", 21));
	assert_null(om_op_find("", "Abs", 0));
	assert_non_null(om_op_find("ai.onnx", "Abs", 6));
	assert_true(checked > 1000);
}

/* a later row of an op that has the earlier row's functions and param cannot mean anything
 * else: what it adds is a signature, which the earlier row's chain (om_sig.newer) carries */
static void test_rows_do_not_repeat(void **state)
{
	(void)state;
	static rows_list l;
	l.n = 0;
	om_op_each(collect, &l);
	int repeats = 0, pairs = 0;
	for (int i = 0; i < l.n; i++) {
		const om_op *r = l.r[i], *p = om_op_find(r->domain, r->name, r->since - 1);
		if (!p)
			continue;
		pairs++;
		if (p->infer == r->infer && p->kernel == r->kernel && p->param == r->param) {
			print_message("%s %s %d repeats row %d\n", r->domain, r->name,
				      (int)r->since, (int)p->since);
			repeats++;
		}
	}
	assert_int_equal(repeats, 0);
	assert_true(pairs > 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codes_name_one_op),
		cmocka_unit_test(test_node_code_follows_opset_and_domain),
		cmocka_unit_test(test_op_find_matches_a_scan),
		cmocka_unit_test(test_rows_do_not_repeat),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
