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

/* 4-bit elements move like the others (two per byte, low nibble first) */
static void gather_int4(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "Gather", 2, 1);
	static const uint8_t x[] = {0xe1, 0xc3, 0x05}; /* int4 {1, -2, 3, -4, 5} */
	static const int64_t ix[] = {4, 0, -1, 1};
	om_tensor tx = ten(OM_INT4, 1, D(5), x), ti = ten(OM_INT64, 1, D(4), ix), y;
	const om_tensor *in[] = {&tx, &ti};
	assert_int_equal(run(n, 21, in, &y), OM_OK);
	assert_shape(&y, 1, D(4));
	assert_int_equal(y.nbytes, 2);
	static const uint8_t e[] = {0x15, 0xe5}; /* {5, 1, 5, -2} */
	assert_memory_equal(y.data, e, sizeof e);
	om_tensor_free(&y);
	om_model_free(m);
}

/* ---- GatherElements -------------------------------------------------------------------------- */

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

/* ---- GatherND -------------------------------------------------------------------------------- */

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
	/* GatherND-11 has no batch_dims (the attribute is not read): the tuples (1) and (0) */
	assert_int_equal(run(n, 11, in, &y), OM_OK);
	assert_shape(&y, 3, D(2, 2, 2));
	static const int32_t e11[] = {4, 5, 6, 7, 0, 1, 2, 3};
	assert_memory_equal(y.data, e11, sizeof e11);
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

/* ---- ScatterND ------------------------------------------------------------------------------- */

static void scatternd_spec_example_and_duplicates(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "ScatterND", 3, 1);
	static const float x[] = {1, 2, 3, 4, 5, 6, 7, 8};
	static const int64_t ix[] = {4, 3, -7, 7}; /* -7 is 1 */
	static const float u[] = {9, 10, 11, 12};
	om_tensor tx = ten(OM_FLOAT, 1, D(8), x), ti = ten(OM_INT64, 2, D(4, 1), ix),
		  tu = ten(OM_FLOAT, 1, D(4), u), y;
	const om_tensor *in[] = {&tx, &ti, &tu};
	assert_int_equal(run(n, 11, in, &y), OM_OK);
	static const float e0[] = {1, 11, 3, 10, 9, 6, 7, 12};
	assert_memory_equal(y.data, e0, sizeof e0);
	om_tensor_free(&y);
	/* duplicates fold in index order: add and mul */
	static const int64_t dup[] = {0, 0, 2, 0};
	ti = ten(OM_INT64, 2, D(4, 1), dup);
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"add", 3};
	assert_int_equal(run(n, 16, in, &y), OM_OK);
	static const float e1[] = {1 + 9 + 10 + 12, 2, 3 + 11, 4, 5, 6, 7, 8};
	assert_memory_equal(y.data, e1, sizeof e1);
	om_tensor_free(&y);
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"mul", 3};
	assert_int_equal(run(n, 16, in, &y), OM_OK);
	static const float e2[] = {1 * 9 * 10 * 12, 2, 3 * 11, 4, 5, 6, 7, 8};
	assert_memory_equal(y.data, e2, sizeof e2);
	om_tensor_free(&y);
	/* max is opset 18 */
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"max", 3};
	assert_int_equal(run(n, 16, in, &y), OM_ERR_INVALID_MODEL);
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"avg", 3};
	assert_int_equal(run(n, 18, in, &y), OM_ERR_INVALID_MODEL);
	/* out of range at run time, wrong updates shape at plan time */
	static const int64_t bad[] = {8, 0, 0, 0};
	ti = ten(OM_INT64, 2, D(4, 1), bad);
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"none", 4};
	assert_int_equal(run(n, 18, in, &y), OM_ERR_INVALID_INPUT);
	ti = ten(OM_INT64, 2, D(2, 1), bad);
	assert_int_equal(run(n, 18, in, &y), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* seed §2: max is `u < o ? o : u`, min `o < u ? o : u`: a NaN in either operand lets the
 * update win */
static void scatternd_nan_max_min(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "ScatterND", 3, 1);
	const float x[] = {1, NAN, 3, 4}, u[] = {-NAN, 5, 2, 7};
	static const int64_t ix[] = {0, 1, 2, 3};
	om_tensor tx = ten(OM_FLOAT, 1, D(4), x), ti = ten(OM_INT64, 2, D(4, 1), ix),
		  tu = ten(OM_FLOAT, 1, D(4), u), y;
	const om_tensor *in[] = {&tx, &ti, &tu};
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"max", 3};
	assert_int_equal(run(n, 18, in, &y), OM_OK);
	const float *f = y.data;
	assert_true(isnan(f[0]) && signbit(f[0])); /* the update's NaN, sign and all */
	assert_true(f[1] == 5 && f[2] == 3 && f[3] == 7);
	om_tensor_free(&y);
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"min", 3};
	assert_int_equal(run(n, 18, in, &y), OM_OK);
	f = y.data;
	assert_true(isnan(f[0]) && signbit(f[0]));
	assert_true(f[1] == 5 && f[2] == 2 && f[3] == 4);
	om_tensor_free(&y);
	om_model_free(m);
}

static void scatternd_slices_ints_strings(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "ScatterND", 3, 1);
	static const int32_t x[] = {INT32_MAX, 1, 2, 3}; /* [2, 2] */
	static const int64_t ix[] = {0};                 /* [1, 1]: row 0 */
	static const int32_t u[] = {1, 10};              /* [1, 2] */
	om_tensor tx = ten(OM_INT32, 2, D(2, 2), x), ti = ten(OM_INT64, 2, D(1, 1), ix),
		  tu = ten(OM_INT32, 2, D(1, 2), u), y;
	const om_tensor *in[] = {&tx, &ti, &tu};
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"add", 3};
	assert_int_equal(run(n, 18, in, &y), OM_OK);
	static const int32_t e0[] = {INT32_MIN, 11, 2, 3}; /* wraps */
	assert_memory_equal(y.data, e0, sizeof e0);
	om_tensor_free(&y);
	static const om_str xs[] = {{"a", 1}, {"b", 1}, {"c", 1}}, us[] = {{"zz", 2}};
	static const int64_t i2[] = {-2};
	tx = ten(OM_STRING, 1, D(3), xs), ti = ten(OM_INT64, 2, D(1, 1), i2);
	tu = ten(OM_STRING, 1, D(1), us);
	assert_int_equal(run(n, 18, in, &y), OM_ERR_UNSUPPORTED); /* add on strings */
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"none", 4};
	assert_int_equal(run(n, 18, in, &y), OM_OK);
	const om_str *s = y.data;
	assert_int_equal(s[1].len, 2);
	assert_memory_equal(s[1].ptr, "zz", 2);
	assert_memory_equal(s[2].ptr, "c", 1);
	om_tensor_free(&y);
	om_model_free(m);
}

/* ---- OneHot ---------------------------------------------------------------------------------- */

static void onehot_rank0_and_types(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "OneHot", 3, 1);
	static const int64_t i0 = -1, depth = 4;
	static const int32_t vals[] = {-5, 9};
	om_tensor ti = ten(OM_INT64, 0, NULL, &i0), td = ten(OM_INT64, 0, NULL, &depth),
		  tv = ten(OM_INT32, 1, D(2), vals), y;
	const om_tensor *in[] = {&ti, &td, &tv};
	assert_int_equal(run(n, 11, in, &y), OM_OK); /* rank-0 indices (ORT refuses them) */
	assert_shape(&y, 1, D(4));
	static const int32_t e0[] = {-5, -5, -5, 9};
	assert_memory_equal(y.data, e0, sizeof e0);
	om_tensor_free(&y);
	/* float indices select the position they equal: fractions, NaN and out of range select
	 * nothing; float depth 3.9 -> 3 */
	const float fi[] = {1.0f, NAN, -3.0f, 3.0f, -0.0f, INFINITY, 1.5f, -0.5f};
	const double dd = 3.9;
	ti = ten(OM_FLOAT, 2, D(4, 2), fi), td = ten(OM_DOUBLE, 1, D(1), &dd);
	om_node_set_attr(n, "axis", OM_ATTR_INT)->i = 1;
	assert_int_equal(run(n, 11, in, &y), OM_OK);
	assert_shape(&y, 3, D(4, 3, 2));
	/* y[i][d][j]: 1 -> 1, NaN none; -3 -> 0, 3 none; -0 -> 0, inf none; 1.5, -0.5 none */
	static const int32_t e1[] = {-5, -5, 9, -5, -5, -5, 9, -5, -5, -5, -5, -5,
				     9, -5, -5, -5, -5, -5, -5, -5, -5, -5, -5, -5};
	assert_memory_equal(y.data, e1, sizeof e1);
	om_tensor_free(&y);
	static const int64_t zero = 0;
	td = ten(OM_INT64, 0, NULL, &zero);
	assert_int_equal(run(n, 11, in, &y), OM_ERR_INVALID_MODEL);
	td.data = NULL;
	om_status st = {0};
	assert_int_equal(om_infer_node(n, 11, in, &y, &st), OM_NEED_VALUE);
	om_node_set_attr(n, "axis", OM_ATTR_INT)->i = 3;
	td.data = (void *)&depth;
	assert_int_equal(run(n, 11, in, &y), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

static void onehot_axis0_uint8_strings(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "OneHot", 3, 1);
	static const uint8_t ix[] = {2, 0, 200};
	static const float depth = 3;
	static const om_str vals[] = {{"off", 3}, {"on", 2}};
	om_tensor ti = ten(OM_UINT8, 1, D(3), ix), td = ten(OM_FLOAT, 0, NULL, &depth),
		  tv = ten(OM_STRING, 1, D(2), vals), y;
	const om_tensor *in[] = {&ti, &td, &tv};
	om_node_set_attr(n, "axis", OM_ATTR_INT)->i = -2;
	assert_int_equal(run(n, 11, in, &y), OM_OK);
	assert_shape(&y, 2, D(3, 3));
	const om_str *s = y.data; /* y[d][i] */
	static const int on[] = {0, 1, 0, 0, 0, 0, 1, 0, 0};
	for (int i = 0; i < 9; i++)
		assert_int_equal(s[i].len, on[i] ? 2 : 3);
	om_tensor_free(&y);
	om_model_free(m);
}

/* ---- NonZero --------------------------------------------------------------------------------- */

static void nonzero_scalar_and_floats(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "NonZero", 1, 1);
	static const int8_t five = 5, nil = 0;
	om_tensor tx = ten(OM_INT8, 0, NULL, &five), y;
	const om_tensor *in[] = {&tx};
	assert_int_equal(run(n, 13, in, &y), OM_OK);
	assert_int_equal(y.dtype, OM_INT64);
	assert_shape(&y, 2, D(1, 1));
	assert_int_equal(((int64_t *)y.data)[0], 0);
	om_tensor_free(&y);
	tx.data = (void *)&nil;
	assert_int_equal(run(n, 13, in, &y), OM_OK);
	assert_shape(&y, 2, D(1, 0));
	om_tensor_free(&y);
	/* -0.0 is zero, NaN is not; coordinates row-major */
	const float f[] = {-0.0f, NAN, 0.0f, 2.0f, 0.0f, -1e-40f}; /* [2, 3] */
	tx = ten(OM_FLOAT, 2, D(2, 3), f);
	assert_int_equal(run(n, 13, in, &y), OM_OK);
	assert_shape(&y, 2, D(2, 3));
	static const int64_t e[] = {0, 1, 1, 1, 0, 2};
	assert_memory_equal(y.data, e, sizeof e);
	om_tensor_free(&y);
	const uint16_t h[] = {0x8000, 0x7e00, 0x0001, 0x0000}; /* float16 -0, NaN, tiny, 0 */
	tx = ten(OM_FLOAT16, 1, D(4), h);
	assert_int_equal(run(n, 13, in, &y), OM_OK);
	assert_shape(&y, 2, D(1, 2));
	assert_int_equal(((int64_t *)y.data)[0], 1);
	assert_int_equal(((int64_t *)y.data)[1], 2);
	om_tensor_free(&y);
	tx.data = NULL; /* plan time: data dependent */
	om_status st = {0};
	assert_int_equal(om_infer_node(n, 13, in, &y, &st), OM_NEED_VALUE);
	static const om_str str = {"", 0};
	tx = ten(OM_STRING, 0, NULL, &str);
	assert_int_equal(run(n, 13, in, &y), OM_ERR_UNSUPPORTED);
	const om_op *op = om_op_find("", "NonZero", 13);
	assert_non_null(op);
	assert_true(op->flags & OM_OP_DATA_DEPENDENT);
	assert_true(op->flags & OM_OP_EXACT);
	om_model_free(m);
}

/* ---- TopK ------------------------------------------------------------------------------------ */

static om_kind topk(om_node *n, int64_t opset, const om_tensor *x, int64_t k, om_tensor *y)
{
	om_tensor tk = ten(OM_INT64, 1, D(1), &k);
	const om_tensor *in[] = {x, &tk};
	return run(n, opset, in, y);
}

static void topk_ties_and_nan(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "TopK", 2, 2);
	const float x[] = {1, NAN, 3, 1, -0.0f, 3, 0.0f, NAN};
	om_tensor tx = ten(OM_FLOAT, 1, D(8), x), y[2];
	assert_int_equal(topk(n, 11, &tx, 5, y), OM_OK);
	static const int64_t e0[] = {1, 7, 2, 5, 0}; /* NaN first, ties lower index first */
	assert_memory_equal(y[1].data, e0, sizeof e0);
	assert_true(isnan(((float *)y[0].data)[0]) && ((float *)y[0].data)[2] == 3);
	om_tensor_free(&y[0]);
	om_tensor_free(&y[1]);
	om_node_set_attr(n, "largest", OM_ATTR_INT)->i = 0;
	assert_int_equal(topk(n, 11, &tx, 8, y), OM_OK);
	static const int64_t e1[] = {4, 6, 0, 3, 2, 5, 1, 7}; /* -0.0 == 0.0, NaN last */
	assert_memory_equal(y[1].data, e1, sizeof e1);
	assert_true(signbit(((float *)y[0].data)[0]) && !signbit(((float *)y[0].data)[1]));
	om_tensor_free(&y[0]);
	om_tensor_free(&y[1]);
	/* before opset 11 largest is ignored (always largest); before 10 k is an attribute */
	om_node_set_attr(n, "k", OM_ATTR_INT)->i = 2;
	const om_tensor *in1[] = {&tx};
	n->nin = 1;
	assert_int_equal(run(n, 1, in1, y), OM_OK);
	assert_shape(&y[1], 1, D(2));
	assert_memory_equal(y[1].data, e0, 2 * sizeof(int64_t));
	om_tensor_free(&y[0]);
	om_tensor_free(&y[1]);
	n->nin = 2;
	assert_int_equal(topk(n, 11, &tx, 9, y), OM_ERR_INVALID_MODEL);
	assert_int_equal(topk(n, 11, &tx, -1, y), OM_ERR_INVALID_MODEL);
	om_tensor tk = ten(OM_INT64, 1, D(1), NULL);
	const om_tensor *in[] = {&tx, &tk};
	om_status st = {0};
	assert_int_equal(om_infer_node(n, 11, in, y, &st), OM_NEED_VALUE);
	om_model_free(m);
}

static int best_unused(const int32_t *x, int stride, int n, const int *used, int largest)
{
	int best = -1;
	for (int j = 0; j < n; j++) {
		if (used[j])
			continue;
		const int32_t v = x[j * stride], b = best < 0 ? 0 : x[best * stride];
		if (best < 0 || (largest ? v > b : v < b))
			best = j;
	}
	return best;
}

/* every selection path (insertion k <= 16, quickselect then merge sort 16 < k < N / 4, merge
 * sort of the row) gives the stable order */
static void topk_paths_agree(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "TopK", 2, 2);
	enum { R = 3, N = 300 };
	int32_t x[R * N];
	for (int i = 0; i < R * N; i++)
		x[i] = (i * 7919) % 11 - 5; /* many ties */
	om_tensor tx = ten(OM_INT32, 2, D(N, R), x), y[2];
	om_node_set_attr(n, "axis", OM_ATTR_INT)->i = 0;
	for (int largest = 0; largest < 2; largest++) {
		om_node_set_attr(n, "largest", OM_ATTR_INT)->i = largest;
		for (int64_t k = 0; k <= N; k += (k < 20 ? 1 : k < 80 ? 3 : 29)) {
			assert_int_equal(topk(n, 11, &tx, k, y), OM_OK);
			assert_shape(&y[0], 2, (int64_t[]){k, R});
			for (int col = 0; col < R; col++) {
				/* reference: repeated choice of the best unused (lowest index) */
				int used[N] = {0};
				for (int64_t r = 0; r < k; r++) {
					const int best = best_unused(x + col, R, N, used, largest);
					used[best] = 1;
					assert_int_equal(((int64_t *)y[1].data)[r * R + col], best);
					assert_int_equal(((int32_t *)y[0].data)[r * R + col],
							 x[best * R + col]);
				}
			}
			om_tensor_free(&y[0]);
			om_tensor_free(&y[1]);
		}
	}
	om_model_free(m);
}

/* ---- robustness: random shapes, indices and attributes, valid or not ------------------------- */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

static om_tensor rand_tensor(uint64_t *s, int32_t dtype, int32_t rank, int64_t lo, int64_t hi,
			     int64_t *buf)
{
	int64_t dims[4];
	for (int32_t i = 0; i < rank; i++)
		dims[i] = (int64_t)(rnd(s) % 4);
	om_tensor t = ten(dtype, rank, dims, buf);
	int64_t n = om_tensor_numel(&t);
	for (int64_t i = 0; i < n; i++) {
		int64_t v = lo + (int64_t)(rnd(s) % (uint64_t)(hi - lo + 1));
		if (dtype == OM_INT32)
			((int32_t *)buf)[i] = (int32_t)v;
		else if (dtype == OM_FLOAT)
			((float *)buf)[i] = (float)v;
		else
			buf[i] = v;
	}
	return t;
}

/* Every outcome is a result of the inferred size or an error of an expected kind; under ASan
 * no access leaves a buffer. */
static void random_inputs_stay_in_bounds(void **state)
{
	(void)state;
	static const char *const ops[] = {"Gather", "GatherElements", "GatherND", "ScatterND",
					  "OneHot", "NonZero", "TopK"};
	static const char *const reds[] = {"none", "add", "mul", "max", "min"};
	uint64_t seed = 0x9e3779b97f4a7c15u;
	int ok = 0;
	for (int it = 0; it < 6000; it++) {
		static const int32_t nins[] = {2, 2, 2, 3, 3, 1, 2}; /* as ONNX's schemas say */
		const int k = (int)(rnd(&seed) % 7);
		const char *op = ops[k];
		om_model *m;
		om_node *n = mk(&m, op, nins[k], strcmp(op, "TopK") ? 1 : 2);
		om_node_set_attr(n, "axis", OM_ATTR_INT)->i = (int64_t)(rnd(&seed) % 7) - 3;
		om_node_set_attr(n, "batch_dims", OM_ATTR_INT)->i = (int64_t)(rnd(&seed) % 3);
		const char *red = reds[rnd(&seed) % 5];
		om_attr *ra = om_node_set_attr(n, "reduction", OM_ATTR_STRING);
		ra->s = (om_str){red, (int64_t)strlen(red)};
		int64_t b0[64], b1[64], b2[64];
		int32_t dt = rnd(&seed) % 2 ? OM_FLOAT : OM_INT64;
		om_tensor x = rand_tensor(&seed, dt, (int32_t)(rnd(&seed) % 4), -2, 2, b0);
		om_tensor i = rand_tensor(&seed, rnd(&seed) % 2 ? OM_INT32 : OM_INT64,
					  (int32_t)(rnd(&seed) % 4), -4, 4, b1);
		om_tensor u = rand_tensor(&seed, dt, (int32_t)(rnd(&seed) % 4), -2, 2, b2);
		if (!strcmp(op, "TopK") || !strcmp(op, "OneHot"))
			u = rand_tensor(&seed, OM_INT64, (int32_t)(rnd(&seed) % 2), -1, 4, b2);
		const om_tensor *in[] = {&x, &i, &u};
		if (!strcmp(op, "OneHot"))
			in[0] = &i, in[1] = &u, in[2] = &x;
		om_tensor y[2] = {{0}};
		om_status st = {0};
		om_kind rc = om_eval_node(n, 18, in, y, &st);
		assert_true(rc == OM_OK || rc == OM_ERR_INVALID_MODEL ||
			    rc == OM_ERR_INVALID_INPUT || rc == OM_ERR_UNSUPPORTED);
		if (rc == OM_OK) {
			ok++;
			assert_int_equal(y[0].nbytes,
					 om_tensor_bytes_for(y[0].dtype, y[0].rank, y[0].dims));
			om_tensor_free(&y[0]);
			om_tensor_free(&y[1]);
		} else {
			if (strcmp(st.node, "n1"))
				fail_msg("%s: error without the node: %s", op, st.msg);
		}
		om_model_free(m);
	}
	assert_true(ok > 600); /* the generator reaches the kernels, not only the checks */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gather_axes_and_negative_indices),
		cmocka_unit_test(gather_strings_empty_and_errors),
		cmocka_unit_test(gather_int4),
		cmocka_unit_test(gather_elements_basic),
		cmocka_unit_test(gather_nd_batch_dims),
		cmocka_unit_test(scatternd_spec_example_and_duplicates),
		cmocka_unit_test(scatternd_nan_max_min),
		cmocka_unit_test(scatternd_slices_ints_strings),
		cmocka_unit_test(onehot_rank0_and_types),
		cmocka_unit_test(onehot_axis0_uint8_strings),
		cmocka_unit_test(nonzero_scalar_and_floats),
		cmocka_unit_test(topk_ties_and_nan),
		cmocka_unit_test(topk_paths_agree),
		cmocka_unit_test(random_inputs_stay_in_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
