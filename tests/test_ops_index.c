/* test_ops_index.c — Gather, GatherElements, GatherND, ScatterND, OneHot, NonZero, TopK
 * through om_eval_node, asserting the seed's rules (seed §1, §2, §5 and the ScatterND spec). */
#include <math.h>
#include <string.h>

#include "eval.h"
#include "half.h"
#include "testutil.h"

static om_tensor ten(int32_t dtype, int32_t rank, const int64_t *dims, const void *data)
{
	om_tensor t = {.dtype = dtype, .rank = rank, .data = (void *)data};
	for (int32_t i = 0; i < rank; i++)
		t.dims[i] = dims[i];
	t.nbytes = om_tensor_bytes_for(dtype, rank, dims);
	return t;
}

#define D(...) ((const int64_t[]){__VA_ARGS__})

static om_node *mk(om_model **m, const char *op, int32_t nin, int32_t nout)
{
	*m = om_model_new();
	om_graph *g = (*m)->graph = om_graph_new(*m, NULL);
	om_node *n = om_graph_add_node(g, op, "", "n1", nin, nout);
	for (int32_t i = 0; i < nout; i++)
		om_node_set_output(n, i, om_arena_alloc((*m)->arena, sizeof(om_value)));
	return n;
}

static om_kind run(om_node *n, int64_t opset, const om_tensor *const *in, om_tensor *out)
{
	om_status st = {0};
	om_kind rc = om_eval_node(n, opset, in, out, &st);
	if (rc && strcmp(st.node, "n1"))
		fail_msg("error does not name the node: %s", st.msg);
	return rc;
}

static void assert_shape(const om_tensor *t, int32_t rank, const int64_t *dims)
{
	assert_int_equal(t->rank, rank);
	for (int32_t i = 0; i < rank; i++)
		assert_int_equal(t->dims[i], dims[i]);
}

/* ---- Gather ---------------------------------------------------------------------------------- */

static void gather_axes_and_negative_indices(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "Gather", 2, 1);
	static const float x[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; /* [3, 4] */
	static const int64_t ix[] = {-1, 0, 2, -3};                     /* [2, 2] */
	om_tensor tx = ten(OM_FLOAT, 2, D(3, 4), x), ti = ten(OM_INT64, 2, D(2, 2), ix), y;
	const om_tensor *in[] = {&tx, &ti};
	assert_int_equal(run(n, 13, in, &y), OM_OK);
	assert_shape(&y, 3, D(2, 2, 4));
	static const float e0[] = {8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11, 0, 1, 2, 3};
	assert_memory_equal(y.data, e0, sizeof e0);
	om_tensor_free(&y);
	om_node_set_attr(n, "axis", OM_ATTR_INT)->i = -1;
	static const int32_t i32[] = {3, -4};
	ti = ten(OM_INT32, 1, D(2), i32);
	assert_int_equal(run(n, 13, in, &y), OM_OK);
	assert_shape(&y, 2, D(3, 2));
	static const float e1[] = {3, 0, 7, 4, 11, 8};
	assert_memory_equal(y.data, e1, sizeof e1);
	om_tensor_free(&y);
	/* rank-0 index removes the axis */
	static const int64_t one = 1;
	ti = ten(OM_INT64, 0, NULL, &one);
	assert_int_equal(run(n, 13, in, &y), OM_OK);
	assert_shape(&y, 1, D(3));
	static const float e2[] = {1, 5, 9};
	assert_memory_equal(y.data, e2, sizeof e2);
	om_tensor_free(&y);
	om_model_free(m);
}

static void gather_strings_empty_and_errors(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "Gather", 2, 1);
	static const om_str xs[] = {{"ab", 2}, {"c", 1}, {"", 0}};
	static const int64_t ix[] = {2, 0, 0};
	om_tensor tx = ten(OM_STRING, 1, D(3), xs), ti = ten(OM_INT64, 1, D(3), ix), y;
	const om_tensor *in[] = {&tx, &ti};
	assert_int_equal(run(n, 13, in, &y), OM_OK);
	const om_str *s = y.data;
	assert_int_equal(s[0].len, 0);
	assert_int_equal(s[1].len, 2);
	assert_memory_equal(s[2].ptr, "ab", 2);
	assert_ptr_not_equal(s[1].ptr, xs[0].ptr);
	om_tensor_free(&y);
	/* empty indices on an empty axis */
	ti = ten(OM_INT64, 1, D(0), ix);
	tx = ten(OM_STRING, 2, D(2, 0), xs);
	om_node_set_attr(n, "axis", OM_ATTR_INT)->i = 1;
	assert_int_equal(run(n, 13, in, &y), OM_OK);
	assert_shape(&y, 2, D(2, 0));
	om_tensor_free(&y);
	/* any index into an empty axis is out of range */
	ti = ten(OM_INT64, 1, D(1), ix);
	assert_int_equal(run(n, 13, in, &y), OM_ERR_INVALID_INPUT);
	/* out of range, both signs */
	static const int64_t bad[] = {3}, bad2[] = {-4};
	tx = ten(OM_STRING, 1, D(3), xs);
	om_node_set_attr(n, "axis", OM_ATTR_INT)->i = 0;
	ti = ten(OM_INT64, 1, D(1), bad);
	assert_int_equal(run(n, 13, in, &y), OM_ERR_INVALID_INPUT);
	ti = ten(OM_INT64, 1, D(1), bad2);
	assert_int_equal(run(n, 13, in, &y), OM_ERR_INVALID_INPUT);
	/* axis out of range, float indices, rank-0 data: model errors */
	om_node_set_attr(n, "axis", OM_ATTR_INT)->i = 1;
	assert_int_equal(run(n, 13, in, &y), OM_ERR_INVALID_MODEL);
	om_node_set_attr(n, "axis", OM_ATTR_INT)->i = 0;
	static const float fi[] = {0};
	ti = ten(OM_FLOAT, 1, D(1), fi);
	assert_int_equal(run(n, 13, in, &y), OM_ERR_INVALID_MODEL);
	ti = ten(OM_INT64, 1, D(1), ix + 1);
	tx = ten(OM_STRING, 0, NULL, xs);
	assert_int_equal(run(n, 13, in, &y), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* ---- GatherElements --------------------------------------------------------------------------- */

static void gather_elements_basic(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "GatherElements", 2, 1);
	static const int16_t x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9}; /* [3, 3] */
	static const int32_t ix[] = {-1, 0, 1, 2};             /* [2, 2]: smaller off the axis */
	om_tensor tx = ten(OM_INT16, 2, D(3, 3), x), ti = ten(OM_INT32, 2, D(2, 2), ix), y;
	const om_tensor *in[] = {&tx, &ti};
	assert_int_equal(run(n, 13, in, &y), OM_OK);
	assert_shape(&y, 2, D(2, 2));
	static const int16_t e0[] = {7, 2, 4, 8}; /* out[i][j] = x[ix[i][j]][j] */
	assert_memory_equal(y.data, e0, sizeof e0);
	om_tensor_free(&y);
	om_node_set_attr(n, "axis", OM_ATTR_INT)->i = 1;
	assert_int_equal(run(n, 13, in, &y), OM_OK);
	static const int16_t e1[] = {3, 1, 5, 6}; /* out[i][j] = x[i][ix[i][j]] */
	assert_memory_equal(y.data, e1, sizeof e1);
	om_tensor_free(&y);
	static const int32_t bad[] = {3, 0, 0, 0};
	ti = ten(OM_INT32, 2, D(2, 2), bad);
	assert_int_equal(run(n, 13, in, &y), OM_ERR_INVALID_INPUT);
	ti = ten(OM_INT32, 2, D(4, 1), bad);
	assert_int_equal(run(n, 13, in, &y), OM_ERR_INVALID_MODEL); /* 4 > 3 off the axis */
	ti = ten(OM_INT32, 1, D(2), bad);
	assert_int_equal(run(n, 13, in, &y), OM_ERR_INVALID_MODEL); /* rank differs */
	om_model_free(m);
}

/* ---- GatherND ----------------------------------------------------------------------------------- */

static void gather_nd_batch_dims(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "GatherND", 2, 1);
	static const int32_t x[] = {0, 1, 2, 3, 4, 5, 6, 7}; /* [2, 2, 2] */
	static const int64_t ix[] = {1, -1, 0, 0};          /* [2, 2] */
	om_tensor tx = ten(OM_INT32, 3, D(2, 2, 2), x), ti = ten(OM_INT64, 2, D(2, 2), ix), y;
	const om_tensor *in[] = {&tx, &ti};
	assert_int_equal(run(n, 13, in, &y), OM_OK);
	assert_shape(&y, 2, D(2, 2));
	static const int32_t e0[] = {6, 7, 0, 1};
	assert_memory_equal(y.data, e0, sizeof e0);
	om_tensor_free(&y);
	/* batch_dims 1: indices [2, 1] pick a row of each batch */
	om_node_set_attr(n, "batch_dims", OM_ATTR_INT)->i = 1;
	static const int64_t ib[] = {1, 0};
	ti = ten(OM_INT64, 2, D(2, 1), ib);
	assert_int_equal(run(n, 13, in, &y), OM_OK);
	assert_shape(&y, 2, D(2, 2));
	static const int32_t e1[] = {2, 3, 4, 5};
	assert_memory_equal(y.data, e1, sizeof e1);
	om_tensor_free(&y);
	/* k = rank - batch_dims: scalars per batch */
	static const int64_t ik[] = {1, 0, 0, 1};
	ti = ten(OM_INT64, 2, D(2, 2), ik);
	assert_int_equal(run(n, 13, in, &y), OM_OK);
	assert_shape(&y, 1, D(2));
	static const int32_t e2[] = {2, 5};
	assert_memory_equal(y.data, e2, sizeof e2);
	om_tensor_free(&y);
	static const int64_t bad[] = {2, 0};
	ti = ten(OM_INT64, 2, D(2, 1), bad);
	assert_int_equal(run(n, 13, in, &y), OM_ERR_INVALID_INPUT);
	ti = ten(OM_INT64, 2, D(2, 3), ik);
	assert_int_equal(run(n, 13, in, &y), OM_ERR_INVALID_MODEL); /* k too long */
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gather_axes_and_negative_indices),
		cmocka_unit_test(gather_strings_empty_and_errors),
		cmocka_unit_test(gather_elements_basic),
		cmocka_unit_test(gather_nd_batch_dims),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
