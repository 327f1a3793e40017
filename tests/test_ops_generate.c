/* test_ops_generate.c — Constant, ConstantOfShape, Range through om_eval_node (seed §2). */
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

static om_node *mk(om_model **m, const char *op, int32_t nin)
{
	*m = om_model_new();
	om_graph *g = (*m)->graph = om_graph_new(*m, NULL);
	om_node *n = om_graph_add_node(g, op, "", "n1", nin, 1);
	/* a value outside the graph's hash table: the node only needs an output slot */
	om_node_set_output(n, 0, om_arena_alloc((*m)->arena, sizeof(om_value)));
	return n;
}

static om_kind run(om_node *n, int64_t opset, const om_tensor *const *in, om_tensor *out)
{
	om_status st = {0};
	return om_eval_node(n, opset, in, out, &st);
}

/* ---- Constant -------------------------------------------------------------------------------- */

static void constant_value_tensor(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "Constant", 0);
	static const int32_t v[] = {1, -2, 3, -4, 5, -6};
	om_tensor t = ten(OM_INT32, 2, (int64_t[]){2, 3}, v);
	om_node_set_attr(n, "value", OM_ATTR_TENSOR)->t = &t;
	om_tensor y;
	assert_int_equal(run(n, 13, NULL, &y), OM_OK);
	assert_int_equal(y.dtype, OM_INT32);
	assert_int_equal(y.rank, 2);
	assert_int_equal(y.dims[1], 3);
	assert_memory_equal(y.data, v, sizeof v);
	om_tensor_free(&y);
	om_model_free(m);
}

static void constant_scalar_forms(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "Constant", 0);
	om_tensor y;
	om_node_set_attr(n, "value_float", OM_ATTR_FLOAT)->f = -2.5f;
	assert_int_equal(run(n, 13, NULL, &y), OM_OK);
	assert_int_equal(y.dtype, OM_FLOAT);
	assert_int_equal(y.rank, 0);
	assert_true(*(float *)y.data == -2.5f);
	om_tensor_free(&y);
	n->nattr = 0;
	om_node_set_attr(n, "value_int", OM_ATTR_INT)->i = -7;
	assert_int_equal(run(n, 13, NULL, &y), OM_OK);
	assert_int_equal(y.dtype, OM_INT64);
	assert_int_equal(y.rank, 0);
	assert_int_equal(*(int64_t *)y.data, -7);
	om_tensor_free(&y);
	n->nattr = 0;
	om_node_set_attr(n, "value_string", OM_ATTR_STRING)->s = (om_str){"hey", 3};
	assert_int_equal(run(n, 13, NULL, &y), OM_OK);
	assert_int_equal(y.dtype, OM_STRING);
	assert_int_equal(y.rank, 0);
	const om_str *s = y.data;
	assert_int_equal(s[0].len, 3);
	assert_memory_equal(s[0].ptr, "hey", 3);
	om_tensor_free(&y);
	om_model_free(m);
}

static void constant_list_forms(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "Constant", 0);
	om_tensor y;
	static float fl[] = {1.5f, NAN, -0.0f};
	om_attr *a = om_node_set_attr(n, "value_floats", OM_ATTR_FLOATS);
	a->floats = fl, a->n = 3;
	assert_int_equal(run(n, 13, NULL, &y), OM_OK);
	assert_int_equal(y.dtype, OM_FLOAT);
	assert_int_equal(y.dims[0], 3);
	assert_memory_equal(y.data, fl, sizeof fl); /* NaN and -0.0 bits pass through */
	om_tensor_free(&y);
	n->nattr = 0;
	static int64_t in[] = {INT64_MIN, 0};
	a = om_node_set_attr(n, "value_ints", OM_ATTR_INTS);
	a->ints = in, a->n = 2;
	assert_int_equal(run(n, 13, NULL, &y), OM_OK);
	assert_int_equal(y.dtype, OM_INT64);
	assert_memory_equal(y.data, in, sizeof in);
	om_tensor_free(&y);
	n->nattr = 0;
	static om_str ss[] = {{"a", 1}, {"", 0}};
	a = om_node_set_attr(n, "value_strings", OM_ATTR_STRINGS);
	a->strings = ss, a->n = 2;
	assert_int_equal(run(n, 13, NULL, &y), OM_OK);
	assert_int_equal(y.dtype, OM_STRING);
	assert_int_equal(y.dims[0], 2);
	const om_str *s = y.data;
	assert_int_equal(s[0].len, 1);
	assert_int_equal(s[0].ptr[0], 'a');
	assert_ptr_not_equal(s[0].ptr, ss[0].ptr); /* owned copy */
	assert_int_equal(s[1].len, 0);
	om_tensor_free(&y);
	/* empty list: shape [0] */
	a = om_node_set_attr(n, "value_strings", OM_ATTR_STRINGS);
	a->n = 0;
	assert_int_equal(run(n, 13, NULL, &y), OM_OK);
	assert_int_equal(y.rank, 1);
	assert_int_equal(y.dims[0], 0);
	om_tensor_free(&y);
	om_model_free(m);
}

static void constant_errors(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "Constant", 0);
	om_tensor y;
	om_status st = {0};
	assert_int_equal(om_eval_node(n, 13, NULL, &y, &st), OM_ERR_INVALID_MODEL);
	assert_string_equal(st.node, "n1");
	om_node_set_attr(n, "sparse_value", OM_ATTR_SPARSE_TENSOR);
	assert_int_equal(run(n, 13, NULL, &y), OM_ERR_UNSUPPORTED);
	n->nattr = 0;
	om_node_set_attr(n, "value_int", OM_ATTR_INT)->i = 1;
	om_node_set_attr(n, "value_float", OM_ATTR_FLOAT)->f = 1;
	assert_int_equal(run(n, 13, NULL, &y), OM_ERR_INVALID_MODEL);
	n->nattr = 0;
	om_node_set_attr(n, "value_int", OM_ATTR_FLOAT)->f = 1; /* wrong attribute type */
	assert_int_equal(run(n, 13, NULL, &y), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* ---- ConstantOfShape ------------------------------------------------------------------------- */

static void cos_default_and_typed(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "ConstantOfShape", 1);
	static const int64_t shp[] = {2, 3};
	om_tensor s = ten(OM_INT64, 1, (int64_t[]){2}, shp), y;
	const om_tensor *in[] = {&s};
	assert_int_equal(run(n, 9, in, &y), OM_OK);
	assert_int_equal(y.dtype, OM_FLOAT);
	assert_int_equal(y.rank, 2);
	for (int i = 0; i < 6; i++)
		assert_true(((float *)y.data)[i] == 0.0f && !signbit(((float *)y.data)[i]));
	om_tensor_free(&y);
	static const uint16_t h = 0xbc00; /* float16 -1 */
	om_tensor v = ten(OM_FLOAT16, 1, (int64_t[]){1}, &h);
	om_node_set_attr(n, "value", OM_ATTR_TENSOR)->t = &v;
	assert_int_equal(run(n, 9, in, &y), OM_OK);
	assert_int_equal(y.dtype, OM_FLOAT16);
	for (int i = 0; i < 6; i++)
		assert_int_equal(((uint16_t *)y.data)[i], 0xbc00);
	om_tensor_free(&y);
	static const om_str sv = {"xy", 2};
	v = ten(OM_STRING, 1, (int64_t[]){1}, &sv);
	assert_int_equal(run(n, 20, in, &y), OM_OK);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(((om_str *)y.data)[i].len, 2);
		assert_memory_equal(((om_str *)y.data)[i].ptr, "xy", 2);
	}
	om_tensor_free(&y);
	om_model_free(m);
}

static void cos_shapes_and_errors(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "ConstantOfShape", 1);
	static const int64_t v7 = 7;
	om_tensor v = ten(OM_INT64, 1, (int64_t[]){1}, &v7);
	om_node_set_attr(n, "value", OM_ATTR_TENSOR)->t = &v;
	om_tensor s = ten(OM_INT64, 1, (int64_t[]){0}, NULL), y;
	static const int64_t dummy = 0;
	s.data = (void *)&dummy;
	const om_tensor *in[] = {&s};
	assert_int_equal(run(n, 9, in, &y), OM_OK); /* empty shape: a scalar */
	assert_int_equal(y.rank, 0);
	assert_int_equal(*(int64_t *)y.data, 7);
	om_tensor_free(&y);
	static const int64_t z[] = {3, 0};
	s = ten(OM_INT64, 1, (int64_t[]){2}, z);
	assert_int_equal(run(n, 9, in, &y), OM_OK);
	assert_int_equal(y.rank, 2);
	assert_int_equal(y.dims[1], 0);
	om_tensor_free(&y);
	static const uint8_t u4 = 0x0b; /* uint4 11: three elements pack as 0xbb 0x0b */
	v = ten(OM_UINT4, 1, (int64_t[]){1}, &u4);
	static const int64_t three[] = {3};
	s = ten(OM_INT64, 1, (int64_t[]){1}, three);
	assert_int_equal(run(n, 21, in, &y), OM_OK);
	assert_int_equal(y.dtype, OM_UINT4);
	assert_int_equal(y.nbytes, 2);
	assert_int_equal(((uint8_t *)y.data)[0], 0xbb);
	assert_int_equal(((uint8_t *)y.data)[1], 0x0b);
	om_tensor_free(&y);
	v = ten(OM_INT64, 1, (int64_t[]){1}, &v7);
	static const int64_t neg[] = {2, -1};
	s = ten(OM_INT64, 1, (int64_t[]){2}, neg);
	assert_int_equal(run(n, 9, in, &y), OM_ERR_INVALID_MODEL);
	s.data = NULL; /* plan time, shape not known */
	om_status st = {0};
	assert_int_equal(om_infer_node(n, 9, in, &y, &st), OM_NEED_VALUE);
	static const int64_t two[] = {1, 2};
	v = ten(OM_INT64, 1, (int64_t[]){2}, two); /* value with two elements */
	s = ten(OM_INT64, 1, (int64_t[]){2}, z);
	assert_int_equal(run(n, 9, in, &y), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* ---- Range ----------------------------------------------------------------------------------- */

static om_kind range(om_node *n, int32_t dtype, const void *a, const void *b, const void *d,
		     om_tensor *y)
{
	om_tensor s = ten(dtype, 0, NULL, a), l = ten(dtype, 0, NULL, b);
	om_tensor e = ten(dtype, 0, NULL, d);
	const om_tensor *in[] = {&s, &l, &e};
	return run(n, 11, in, y);
}

static void range_float_count_in_double(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "Range", 3);
	const float a = 0.0f, b = 0.3f, d = 0.1f;
	om_tensor y;
	assert_int_equal(range(n, OM_FLOAT, &a, &b, &d, &y), OM_OK);
	assert_int_equal(y.rank, 1);
	assert_int_equal(y.dims[0], 4); /* seed: 0.3f / 0.1f in double is just above 3 */
	for (int i = 0; i < 4; i++) /* element i = start + i*delta, not an accumulated sum */
		assert_true(((float *)y.data)[i] == a + (float)i * d);
	assert_true(((float *)y.data)[3] == 0.3f);
	om_tensor_free(&y);
	/* Range(0, 1, 0.1): 10 elements; element 7 is 7*0.1f = 0.7f (bits 1060320051), where an
	 * accumulated sum would give 0.70000005 */
	const float one = 1.0f;
	assert_int_equal(range(n, OM_FLOAT, &a, &one, &d, &y), OM_OK);
	assert_int_equal(y.dims[0], 10);
	uint32_t bits;
	memcpy(&bits, &((float *)y.data)[7], 4);
	assert_int_equal(bits, 1060320051u);
	memcpy(&bits, &((float *)y.data)[9], 4);
	assert_int_equal(bits, 1063675495u);
	om_tensor_free(&y);
	const float a2 = 5, b2 = 1, d2 = -1.5f;
	assert_int_equal(range(n, OM_FLOAT, &a2, &b2, &d2, &y), OM_OK);
	assert_int_equal(y.dims[0], 3);
	assert_true(((float *)y.data)[2] == 2.0f);
	om_tensor_free(&y);
	/* the difference is taken in double too: 10 elements, where a float32 difference (33.0f)
	 * would give 11 */
	const float a3 = 8.733858f, b3 = 41.733856f, d3 = 3.3f;
	assert_int_equal(range(n, OM_FLOAT, &a3, &b3, &d3, &y), OM_OK);
	assert_int_equal(y.dims[0], 10);
	om_tensor_free(&y);
	const float up = 1; /* wrong direction: empty */
	assert_int_equal(range(n, OM_FLOAT, &a2, &b2, &up, &y), OM_OK);
	assert_int_equal(y.dims[0], 0);
	om_tensor_free(&y);
	om_model_free(m);
}

static void range_ints_and_halves(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "Range", 3);
	om_tensor y;
	const int32_t a = 10, b = 4, d = -3;
	assert_int_equal(range(n, OM_INT32, &a, &b, &d, &y), OM_OK);
	assert_int_equal(y.dims[0], 2);
	assert_int_equal(((int32_t *)y.data)[0], 10);
	assert_int_equal(((int32_t *)y.data)[1], 7);
	om_tensor_free(&y);
	const int64_t a64 = INT64_MIN, b64 = INT64_C(1) << 62, d64 = INT64_C(1) << 62;
	assert_int_equal(range(n, OM_INT64, &a64, &b64, &d64, &y), OM_OK);
	assert_int_equal(y.dims[0], 3);
	assert_int_equal(((int64_t *)y.data)[2], 0);
	om_tensor_free(&y);
	const int16_t a16 = -3, b16 = 3, d16 = 2;
	assert_int_equal(range(n, OM_INT16, &a16, &b16, &d16, &y), OM_OK);
	assert_int_equal(y.dims[0], 3);
	assert_int_equal(((int16_t *)y.data)[2], 1);
	om_tensor_free(&y);
	/* float16: computed in float32, rounded to nearest even: 0.1 + 2*0.1 */
	const uint16_t ha = om_float_to_half(0.1f), hb = om_float_to_half(1.0f),
		       hd = om_float_to_half(0.3f);
	assert_int_equal(range(n, OM_FLOAT16, &ha, &hb, &hd, &y), OM_OK);
	float fa = om_half_to_float(ha), fb = om_half_to_float(hb), fd = om_half_to_float(hd);
	int64_t cnt = (int64_t)ceil(((double)fb - (double)fa) / (double)fd);
	assert_int_equal(y.dims[0], cnt);
	for (int64_t i = 0; i < cnt; i++)
		assert_int_equal(((uint16_t *)y.data)[i], om_float_to_half(fa + (float)i * fd));
	om_tensor_free(&y);
	const uint16_t ba = om_float_to_bf16(1.0f), bb = om_float_to_bf16(2.0f),
		       bd = om_float_to_bf16(0.25f);
	assert_int_equal(range(n, OM_BFLOAT16, &ba, &bb, &bd, &y), OM_OK);
	assert_int_equal(y.dims[0], 4);
	assert_int_equal(((uint16_t *)y.data)[3], om_float_to_bf16(1.75f));
	om_tensor_free(&y);
	om_model_free(m);
}

static void range_errors(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = mk(&m, "Range", 3);
	om_tensor y;
	const int64_t a = 0, b = 5, z = 0;
	assert_int_equal(range(n, OM_INT64, &a, &b, &z, &y), OM_ERR_INVALID_MODEL);
	const float fa = 0, fnan = NAN, fd = 1, finf = INFINITY;
	assert_int_equal(range(n, OM_FLOAT, &fa, &fnan, &fd, &y), OM_ERR_INVALID_MODEL);
	assert_int_equal(range(n, OM_FLOAT, &fa, &finf, &fd, &y), OM_ERR_INVALID_MODEL);
	const float fz = 0;
	assert_int_equal(range(n, OM_FLOAT, &fa, &fd, &fz, &y), OM_ERR_INVALID_MODEL);
	const uint8_t u = 1;
	assert_int_equal(range(n, OM_UINT8, &u, &u, &u, &y), OM_ERR_INVALID_MODEL);
	const double da = 0, db = 1e300, dd = 1e-300; /* count too large */
	assert_int_equal(range(n, OM_DOUBLE, &da, &db, &dd, &y), OM_ERR_INVALID_MODEL);
	/* plan time without values */
	om_tensor s = ten(OM_INT64, 0, NULL, NULL);
	const om_tensor *in[] = {&s, &s, &s};
	om_status st = {0};
	assert_int_equal(om_infer_node(n, 11, in, &y, &st), OM_NEED_VALUE);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(constant_value_tensor),
		cmocka_unit_test(constant_scalar_forms),
		cmocka_unit_test(constant_list_forms),
		cmocka_unit_test(constant_errors),
		cmocka_unit_test(cos_default_and_typed),
		cmocka_unit_test(cos_shapes_and_errors),
		cmocka_unit_test(range_float_count_in_double),
		cmocka_unit_test(range_ints_and_halves),
		cmocka_unit_test(range_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
