/* test_sizes.c — checked size arithmetic (om_shape_numel, om_numel_bytes, om_shape_bytes;
 * sub-byte types included) and the sites that allocate from it: huge shapes give errors, never
 * a short buffer. Values by hand. */
#include <string.h>

#include "eval.h"
#include "testutil.h"

#define P62 (INT64_C(1) << 62)

static void numel_and_bytes(void **state)
{
	(void)state;
	/* the non-zero extents must multiply without overflow even when another one is 0 */
	assert_int_equal(om_shape_numel(3, (int64_t[]){0, P62, 4}), -1);
	assert_int_equal(om_shape_numel(3, (int64_t[]){0, P62, 1}), 0);
	assert_int_equal(om_shape_numel(2, (int64_t[]){P62, 2}), -1);
	assert_int_equal(om_shape_numel(1, (int64_t[]){INT64_MAX}), INT64_MAX);
	/* sub-byte: ceil(n * bits / 8) without forming n * bits */
	assert_int_equal(om_numel_bytes(OM_INT4, P62), P62 / 2);
	assert_int_equal(om_numel_bytes(OM_INT4, P62 + 1), P62 / 2 + 1);
	assert_int_equal(om_numel_bytes(OM_UINT4, INT64_MAX), P62);
	assert_int_equal(om_numel_bytes(OM_FLOAT4E2M1, 3), 2);
	assert_int_equal(om_numel_bytes(OM_UINT2, P62 + 2), P62 / 4 + 1);
	assert_int_equal(om_numel_bytes(OM_INT2, INT64_MAX), P62 / 2);
	assert_int_equal(om_numel_bytes(OM_INT2, 9), 3);
	assert_int_equal(om_numel_bytes(OM_INT2, 0), 0);
	/* whole bytes */
	assert_int_equal(om_numel_bytes(OM_FLOAT, P62 / 2 - 1), INT64_MAX - 3);
	assert_int_equal(om_numel_bytes(OM_FLOAT, P62 / 2), -1);
	assert_int_equal(om_numel_bytes(OM_COMPLEX128, P62 / 16), P62);
	assert_int_equal(om_numel_bytes(OM_COMPLEX128, P62 / 8), -1);
	assert_int_equal(om_numel_bytes(OM_FLOAT, -1), -1);
	assert_int_equal(om_numel_bytes(OM_UNDEFINED, 1), -1);
	assert_int_equal(om_numel_bytes(99, 1), -1);
	assert_int_equal(om_shape_bytes(OM_INT64, 2, (int64_t[]){P62, 2}), -1);
	assert_int_equal(om_shape_bytes(OM_INT64, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}), -1);
	assert_int_equal(om_shape_bytes(OM_UINT4, 2, (int64_t[]){3, 3}), 5);
	/* the size_t form: SIZE_MAX (never allocatable, never below a buffer) on overflow, where
	 * it used to give 0 for 4-bit types with 2^62 elements (a zero-byte buffer) */
	assert_true(om_tensor_bytes_for(OM_INT4, 1, (int64_t[]){INT64_MAX}) == (size_t)P62);
	assert_true(om_tensor_bytes_for(OM_FLOAT, 1, (int64_t[]){P62}) == SIZE_MAX);
	assert_true(om_tensor_bytes_for(OM_FLOAT, 1, (int64_t[]){-1}) == SIZE_MAX);
	assert_true(om_tensor_bytes_for(OM_UNDEFINED, 1, (int64_t[]){4}) == 0);
}

static void alloc_refuses_overflow(void **state)
{
	(void)state;
	om_tensor t;
	om_status st = {0};
	assert_int_equal(om_tensor_alloc(&t, OM_FLOAT, 1, (int64_t[]){P62}, &st),
			 OM_ERR_INVALID_INPUT);
	assert_null(t.data);
	assert_int_equal(om_tensor_alloc(&t, OM_INT64, 2, (int64_t[]){P62, 0}, &st), OM_OK);
	assert_int_equal(t.nbytes, 0);
	om_tensor_free(&t);
	om_model *m = om_model_new();
	assert_null(om_model_tensor(m, OM_DOUBLE, 1, (int64_t[]){P62}));
	om_tensor *u = om_model_tensor(m, OM_UINT2, 1, (int64_t[]){5});
	assert_non_null(u);
	assert_int_equal(u->nbytes, 2);
	om_model_free(m);
}

/* y = ConstantOfShape(s) with a one-element `value` of dtype vt; s an initializer holding
 * `shape` (n entries) or, when shape is NULL, a graph input of n entries */
static om_model *cos_model(int32_t vt, const int64_t *shape, int32_t n)
{
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", 23};
	m->nopsets = 1;
	om_value *s = om_graph_value(g, "s");
	if (shape) {
		s->init = om_model_tensor(m, OM_INT64, 1, (int64_t[]){n});
		memcpy(s->init->data, shape, sizeof(int64_t) * (size_t)n);
		s->flags |= OM_VALUE_INITIALIZER;
		om_type_from_tensor(m, &s->type, s->init);
		tu_push_value(g, &g->inits, &g->ninits, s);
	} else {
		om_tensor like = {.dtype = OM_INT64, .rank = 1, .dims = {n}};
		om_type_from_tensor(m, &s->type, &like);
		s->flags |= OM_VALUE_GRAPH_INPUT;
		tu_push_value(g, &g->inputs, &g->ninputs, s);
	}
	om_node *nd = tu_graph_node(g, "ConstantOfShape", "s", "y");
	om_tensor *v = om_model_tensor(m, vt, 1, (int64_t[]){1});
	memset(v->data, 1, v->nbytes);
	om_node_set_attr(nd, "value", OM_ATTR_TENSOR)->t = v;
	om_value *y = om_graph_value(g, "y");
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	return m;
}

/* simplify's folder sized a 4-bit ConstantOfShape of 2^62 elements as 0 bytes, under its
 * budget, and wrote 2^61 bytes into one (a crash); the node now stays */
static void fold_refuses_huge_subbyte(void **state)
{
	(void)state;
	const int32_t types[] = {OM_INT4, OM_UINT4, OM_FLOAT4E2M1, OM_INT2, OM_UINT2, OM_FLOAT};
	const int64_t counts[] = {P62, P62 + 1, INT64_MAX};
	for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
		for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
			om_model *m = cos_model(types[t], &counts[k], 1);
			om_status st = {0};
			assert_int_equal(om_simplify(m, NULL, &st), OM_OK);
			assert_int_equal(tu_count_op(m->graph, "ConstantOfShape"), 1);
			om_model_free(m);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(numel_and_bytes),
		cmocka_unit_test(alloc_refuses_overflow),
		cmocka_unit_test(fold_refuses_huge_subbyte),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
