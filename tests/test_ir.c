/* test_ir.c — arena, element types, tensors, graph construction, toposort, attributes. */
#include <string.h>

#include "testutil.h"

static void dtype_sizes(void **state)
{
	(void)state;
	assert_int_equal(om_dtype_size(OM_FLOAT), 4);
	assert_int_equal(om_dtype_size(OM_INT64), 8);
	assert_int_equal(om_dtype_size(OM_BFLOAT16), 2);
	assert_int_equal(om_dtype_size(OM_FLOAT8E5M2), 1);
	assert_int_equal(om_dtype_size(OM_INT4), 0);
	assert_int_equal(om_dtype_bits(OM_INT4), 4);
	assert_int_equal(om_dtype_size(OM_STRING), sizeof(om_str));
	assert_string_equal(om_dtype_name(OM_FLOAT16), "float16");
	assert_string_equal(om_dtype_name(999), "undefined");
}

static void tensor_sizes(void **state)
{
	(void)state;
	const int64_t d[] = {2, 3, 5};
	assert_int_equal(om_shape_numel(3, d), 30);
	assert_int_equal(om_shape_numel(0, d), 1);
	const int64_t z[] = {4, 0, -1};
	assert_int_equal(om_shape_numel(2, z), 0);
	assert_int_equal(om_shape_numel(3, z), -1);
	const int64_t big[] = {INT64_MAX / 2, 3};
	assert_int_equal(om_shape_numel(2, big), -1);
	assert_int_equal(om_tensor_bytes_for(OM_INT4, 1, (int64_t[]){5}), 3);
	om_tensor t;
	om_status st = {0};
	assert_int_equal(om_tensor_alloc(&t, OM_FLOAT, 3, d, &st), OM_OK);
	assert_int_equal(t.nbytes, 120);
	om_tensor_free(&t);
	assert_null(t.data);
	assert_int_equal(om_tensor_alloc(&t, OM_FLOAT, 9, d, &st), OM_ERR_UNSUPPORTED);
}

static void arena_alignment(void **state)
{
	(void)state;
	om_arena *a = om_arena_new();
	for (int i = 1; i < 2000; i += 37) {
		void *p = om_arena_alloc(a, (size_t)i * 13);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 16, 0);
	}
	void *big = om_arena_alloc(a, 1 << 20);
	assert_non_null(big);
	memset(big, 1, 1 << 20);
	assert_string_equal(om_arena_strndup(a, "abcdef", 3), "abc");
	om_arena_free(a);
}

static void status_format(void **state)
{
	(void)state;
	om_model *m = om_model_new();
	om_node *n = om_graph_add_node(om_graph_new(m, NULL), "Reshape", "", "r1", 2, 1);
	om_status st = {0};
	assert_int_equal(om_error(&st, OM_ERR_INVALID_MODEL, n, "bad %d", 7), OM_ERR_INVALID_MODEL);
	char buf[256];
	om_status_format(&st, buf, sizeof buf);
	assert_string_equal(buf, "InvalidModel: node 'r1' (Reshape): bad 7");
	om_model_free(m);
}

/* b = Relu(a); c = Add(a, b) built out of order must sort to [Relu, Add]. */
static void toposort_and_uses(void **state)
{
	(void)state;
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	om_value *a = om_graph_value(g, "a"), *b = om_graph_value(g, "b"), *c = om_graph_value(g, "c");
	om_node *add = om_graph_add_node(g, "Add", "", "add", 2, 1);
	add->in[0] = a, add->in[1] = b;
	om_node_set_output(add, 0, c);
	om_node *relu = om_graph_add_node(g, "Relu", "", "relu", 1, 1);
	relu->in[0] = a;
	om_node_set_output(relu, 0, b);
	g->outputs = om_arena_alloc(m->arena, sizeof(om_value *));
	g->outputs[0] = c, g->noutputs = 1;
	om_status st = {0};
	assert_int_equal(om_graph_toposort(g, &st), OM_OK);
	assert_string_equal(g->nodes[0]->op, "Relu");
	assert_string_equal(g->nodes[1]->op, "Add");
	om_graph_count_uses(g);
	assert_int_equal(a->nuses, 2);
	assert_int_equal(c->nuses, 1);
	assert_ptr_equal(om_graph_find(g, "b"), b);
	om_value *f = om_graph_fresh_value(g, "b");
	assert_string_equal(f->name, "b__1");
	/* a cycle is an error, not a hang */
	relu->in[0] = c;
	assert_int_equal(om_graph_toposort(g, &st), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* y = If(cond) whose then branch's branch reads b = Relu(a) from the main graph (an outer
 * reference two levels down), listed before the Relu: the sort puts the Relu first. */
static void toposort_outer_references(void **state)
{
	(void)state;
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	om_value *a = om_graph_value(g, "a"), *cond = om_graph_value(g, "cond");
	om_node *iff = om_graph_add_node(g, "If", "", "if", 1, 1);
	iff->in[0] = cond;
	om_node_set_output(iff, 0, om_graph_value(g, "y"));
	om_graph *then = om_graph_new(m, g), *inner = om_graph_new(m, then);
	om_value *bo = om_graph_value(inner, "b");
	bo->flags |= OM_VALUE_OUTER;
	om_node *neg = om_graph_add_node(inner, "Neg", "", "neg", 1, 1);
	neg->in[0] = bo;
	om_node_set_output(neg, 0, om_graph_value(inner, "t"));
	om_node *iff2 = om_graph_add_node(then, "If", "", "if2", 1, 1);
	om_value *co = om_graph_value(then, "cond");
	co->flags |= OM_VALUE_OUTER;
	iff2->in[0] = co;
	om_node_set_output(iff2, 0, om_graph_value(then, "u"));
	om_node_set_attr(iff2, "then_branch", OM_ATTR_GRAPH)->g = inner;
	om_node_set_attr(iff, "then_branch", OM_ATTR_GRAPH)->g = then;
	om_node *relu = om_graph_add_node(g, "Relu", "", "relu", 1, 1);
	relu->in[0] = a;
	om_node_set_output(relu, 0, om_graph_value(g, "b"));
	om_status st = {0};
	assert_string_equal(g->nodes[0]->op, "If");
	assert_int_equal(om_graph_toposort(g, &st), OM_OK);
	assert_string_equal(g->nodes[0]->op, "Relu");
	assert_string_equal(g->nodes[1]->op, "If");
	om_model_free(m);
}

static void attributes(void **state)
{
	(void)state;
	om_model *m = om_model_new();
	om_graph *g = om_graph_new(m, NULL);
	om_node *n = om_graph_add_node(g, "Transpose", "", "t", 1, 1);
	om_attr *p = om_node_set_attr(n, "perm", OM_ATTR_INTS);
	static int64_t perm[] = {0, 2, 1};
	p->ints = perm, p->n = 3;
	om_node_set_attr(n, "axis", OM_ATTR_INT)->i = -1;
	int64_t cnt;
	assert_ptr_equal(om_attr_ints(n, "perm", &cnt), perm);
	assert_int_equal(cnt, 3);
	assert_int_equal(om_attr_int(n, "axis", 5), -1);
	assert_int_equal(om_attr_int(n, "missing", 5), 5);
	assert_null(om_attr_ints(n, "axis", &cnt));
	assert_int_equal(cnt, 0);
	assert_int_equal(om_model_opset(m, ""), 0);
	/* string-enum attributes: the listed value's index, dflt when absent, -1 when unlisted */
	static const char *const pads[] = {"NOTSET", "SAME_UPPER", "VALID", "", NULL};
	assert_int_equal(om_attr_choice(n, "auto_pad", pads, 7), 7);
	assert_int_equal(om_attr_choice(n, "axis", pads, 7), 7); /* not a string: as absent */
	const char *const vals[] = {"VALID", "", "SAME_LOWER", "valid"};
	const int want[] = {2, 3, -1, -1};
	for (int i = 0; i < 4; i++) {
		om_attr *a = om_node_set_attr(n, "auto_pad", OM_ATTR_STRING);
		a->s.ptr = om_arena_strndup(m->arena, vals[i], strlen(vals[i]));
		a->s.len = (int64_t)strlen(vals[i]);
		assert_int_equal(om_attr_choice(n, "auto_pad", pads, 7), want[i]);
	}
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dtype_sizes),     cmocka_unit_test(tensor_sizes),
		cmocka_unit_test(arena_alignment), cmocka_unit_test(status_format),
		cmocka_unit_test(toposort_and_uses),
		cmocka_unit_test(toposort_outer_references), cmocka_unit_test(attributes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
