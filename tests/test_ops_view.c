/* test_ops_view.c — Shape Size Squeeze Unsqueeze Flatten Reshape Identity Dropout (seed §2). */
#include <stdlib.h>

#include "nodetest.h"

/* runs n on in[] at opset; returns the kind, out[] must be freed by the caller on OM_OK */
static om_kind run(om_node *n, int64_t opset, const om_tensor *const *in, om_tensor *out,
		   om_status *st)
{
	memset(st, 0, sizeof *st);
	return om_eval_node(n, opset, in, out, st);
}

static void shape_and_size(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Shape", 1, 1);
	const int64_t d[] = {2, 3, 5};
	float x[30] = {0};
	om_tensor t = nt_tensor(OM_FLOAT, 3, d, x), out;
	const om_tensor *in[] = {&t};
	om_status st;
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){3});
	assert_int_equal(out.dtype, OM_INT64);
	assert_memory_equal(out.data, d, sizeof d);
	om_tensor_free(&out);
	/* opset 15: start/end count from the end and clamp to [0, rank] */
	nt_int(n, "start", -2);
	assert_int_equal(run(n, 15, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){2});
	assert_int_equal(((int64_t *)out.data)[0], 3);
	assert_int_equal(((int64_t *)out.data)[1], 5);
	om_tensor_free(&out);
	nt_int(n, "start", -100);
	nt_int(n, "end", 100);
	assert_int_equal(run(n, 15, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){3});
	om_tensor_free(&out);
	nt_int(n, "start", 2);
	nt_int(n, "end", 1); /* start past end: empty */
	assert_int_equal(run(n, 15, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){0});
	om_tensor_free(&out);
	nt_free(m);

	/* rank 0: Shape is [], Size is 1; a 0-sized tensor has Size 0 */
	n = nt_node(&m, "Shape", 1, 1);
	t = nt_tensor(OM_FLOAT, 0, NULL, x);
	assert_int_equal(run(n, 1, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){0});
	om_tensor_free(&out);
	nt_free(m);
	n = nt_node(&m, "Size", 1, 1);
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	assert_int_equal(out.rank, 0);
	assert_int_equal(*(int64_t *)out.data, 1);
	om_tensor_free(&out);
	t = nt_tensor(OM_FLOAT, 3, (int64_t[]){4, 0, 3}, x);
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	assert_int_equal(*(int64_t *)out.data, 0);
	om_tensor_free(&out);
	/* no data needed: Shape and Size are plan constants */
	t.data = NULL;
	assert_int_equal(om_infer_node(n, 13, in, &out, &st), OM_OK);
	nt_free(m);
}

static void squeeze(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Squeeze", 1, 1);
	const int32_t x[3] = {7, 8, 9};
	om_tensor t = nt_tensor(OM_INT32, 3, (int64_t[]){1, 3, 1}, x), out;
	const om_tensor *in[] = {&t, NULL};
	om_status st;
	/* no axes: every extent-1 axis */
	assert_int_equal(run(n, 11, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){3});
	assert_memory_equal(out.data, x, sizeof x);
	om_tensor_free(&out);
	nt_ints(n, "axes", (int64_t[]){-1}, 1);
	assert_int_equal(run(n, 11, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){1, 3});
	om_tensor_free(&out);
	/* an axis whose extent is not 1, or listed twice: InvalidModel naming the node */
	nt_ints(n, "axes", (int64_t[]){1}, 1);
	assert_int_equal(run(n, 11, in, &out, &st), OM_ERR_INVALID_MODEL);
	assert_string_equal(st.node, "n0");
	assert_string_equal(st.op, "Squeeze");
	nt_ints(n, "axes", (int64_t[]){0, -3}, 2);
	assert_int_equal(run(n, 11, in, &out, &st), OM_ERR_INVALID_MODEL);
	nt_ints(n, "axes", (int64_t[]){3}, 1);
	assert_int_equal(run(n, 11, in, &out, &st), OM_ERR_INVALID_MODEL);
	nt_free(m);

	/* opset 13: axes is an input; a missing value asks for one */
	n = nt_node(&m, "Squeeze", 2, 1);
	om_tensor axes = NT_I64(2, 0);
	const om_tensor *in2[] = {&t, &axes};
	assert_int_equal(run(n, 13, in2, &out, &st), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){3});
	om_tensor_free(&out);
	axes = nt_tensor(OM_INT64, 1, (int64_t[]){0}, x); /* empty: as if omitted */
	assert_int_equal(run(n, 13, in2, &out, &st), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){3});
	om_tensor_free(&out);
	axes.data = NULL;
	assert_int_equal(om_infer_node(n, 13, in2, &out, &st), OM_NEED_VALUE);
	/* rank 0 stays rank 0 */
	t = nt_tensor(OM_INT32, 0, NULL, x);
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	assert_int_equal(out.rank, 0);
	assert_int_equal(*(int32_t *)out.data, 7);
	om_tensor_free(&out);
	nt_free(m);
}

static void unsqueeze(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Unsqueeze", 1, 1);
	const double x[6] = {1, 2, 3, 4, 5, 6};
	om_tensor t = nt_tensor(OM_DOUBLE, 2, (int64_t[]){3, 2}, x), out;
	const om_tensor *in[] = {&t};
	om_status st;
	nt_ints(n, "axes", (int64_t[]){-1, 0}, 2); /* axes index the output */
	assert_int_equal(run(n, 11, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 4, (int64_t[]){1, 3, 2, 1});
	assert_memory_equal(out.data, x, sizeof x);
	om_tensor_free(&out);
	nt_ints(n, "axes", (int64_t[]){1, -3}, 2);
	assert_int_equal(run(n, 11, in, &out, &st), OM_ERR_INVALID_MODEL);
	nt_ints(n, "axes", (int64_t[]){3}, 1);
	assert_int_equal(run(n, 11, in, &out, &st), OM_ERR_INVALID_MODEL);
	nt_ints(n, "axes", (int64_t[]){0, 1, 2, 3, 4, 5, 6}, 7); /* rank 9 > 8 */
	assert_int_equal(run(n, 11, in, &out, &st), OM_ERR_UNSUPPORTED);
	nt_free(m);

	n = nt_node(&m, "Unsqueeze", 2, 1);
	om_tensor axes = NT_I64(1);
	const om_tensor *in2[] = {&t, &axes};
	assert_int_equal(run(n, 13, in2, &out, &st), OM_OK);
	nt_assert_shape(&out, 3, (int64_t[]){3, 1, 2});
	om_tensor_free(&out);
	t = nt_tensor(OM_DOUBLE, 0, NULL, x); /* scalar to [1] */
	axes = NT_I64(0);
	assert_int_equal(run(n, 13, in2, &out, &st), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){1});
	om_tensor_free(&out);
	nt_free(m);
}

static void flatten(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Flatten", 1, 1);
	const uint8_t x[24] = {1, 2, 3};
	om_tensor t = nt_tensor(OM_UINT8, 3, (int64_t[]){2, 3, 4}, x), out;
	const om_tensor *in[] = {&t};
	om_status st;
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK); /* default axis 1 */
	nt_assert_shape(&out, 2, (int64_t[]){2, 12});
	assert_memory_equal(out.data, x, sizeof x);
	om_tensor_free(&out);
	const struct {
		int64_t axis, d0, d1;
	} cases[] = {{0, 1, 24}, {-1, 6, 4}, {3, 24, 1}, {-3, 1, 24}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		nt_int(n, "axis", cases[i].axis);
		assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
		nt_assert_shape(&out, 2, (int64_t[]){cases[i].d0, cases[i].d1});
		om_tensor_free(&out);
	}
	nt_int(n, "axis", 4);
	assert_int_equal(run(n, 13, in, &out, &st), OM_ERR_INVALID_MODEL);
	nt_int(n, "axis", -4);
	assert_int_equal(run(n, 13, in, &out, &st), OM_ERR_INVALID_MODEL);
	t = nt_tensor(OM_UINT8, 0, NULL, x);
	nt_int(n, "axis", 0);
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){1, 1});
	om_tensor_free(&out);
	nt_free(m);
}

static void reshape(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Reshape", 2, 1);
	float x[24];
	for (int i = 0; i < 24; i++)
		x[i] = (float)i;
	om_tensor t = nt_tensor(OM_FLOAT, 3, (int64_t[]){2, 3, 4}, x), out, shape = NT_I64(0, -1);
	const om_tensor *in[] = {&t, &shape};
	om_status st;
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK); /* 0 copies, -1 takes the rest */
	nt_assert_shape(&out, 2, (int64_t[]){2, 12});
	assert_memory_equal(out.data, x, sizeof x);
	om_tensor_free(&out);
	shape = NT_I64(-1, 0, 2, 2);
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 4, (int64_t[]){2, 3, 2, 2});
	om_tensor_free(&out);
	const om_tensor bad[] = {NT_I64(-1, -1), NT_I64(5, -1), NT_I64(0, 0, 0, 0), NT_I64(-2, -12),
				 NT_I64(7, 4)};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		shape = bad[i];
		assert_int_equal(run(n, 13, in, &out, &st), OM_ERR_INVALID_MODEL);
		assert_string_equal(st.node, "n0");
	}
	shape = NT_I64(1, 1, 1, 1, 1, 1, 1, 1, 24); /* rank 9 */
	assert_int_equal(run(n, 13, in, &out, &st), OM_ERR_UNSUPPORTED);
	shape.data = NULL;
	assert_int_equal(om_infer_node(n, 13, in, &out, &st), OM_NEED_VALUE);

	/* 0-sized: without allowzero a 0 copies; with it a 0 is literal; -1 beside a 0 extent */
	t = nt_tensor(OM_FLOAT, 2, (int64_t[]){0, 3}, x);
	shape = NT_I64(3, 0);
	assert_int_equal(run(n, 14, in, &out, &st), OM_ERR_INVALID_MODEL);
	nt_int(n, "allowzero", 1);
	assert_int_equal(run(n, 14, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){3, 0});
	om_tensor_free(&out);
	shape = NT_I64(-1, 0);
	assert_int_equal(run(n, 14, in, &out, &st), OM_ERR_INVALID_MODEL);
	nt_int(n, "allowzero", 0);
	shape = NT_I64(-1, 0); /* 0 copies 3: the -1 is 0 / 3 */
	assert_int_equal(run(n, 14, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){0, 3});
	om_tensor_free(&out);
	shape = NT_I64(0, -1); /* -1 over parts of 0 elements is ambiguous */
	assert_int_equal(run(n, 14, in, &out, &st), OM_ERR_INVALID_MODEL);
	shape = NT_I64(0, 3, 7);
	assert_int_equal(run(n, 14, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 3, (int64_t[]){0, 3, 7});
	om_tensor_free(&out);
	/* to rank 0 */
	t = nt_tensor(OM_FLOAT, 2, (int64_t[]){1, 1}, x + 5);
	shape = nt_tensor(OM_INT64, 1, (int64_t[]){0}, x);
	assert_int_equal(run(n, 14, in, &out, &st), OM_OK);
	assert_int_equal(out.rank, 0);
	assert_true(*(float *)out.data == 5.0f);
	om_tensor_free(&out);
	nt_free(m);

	/* opset 1: the shape is an attribute */
	n = nt_node(&m, "Reshape", 1, 1);
	nt_ints(n, "shape", (int64_t[]){4, -1}, 2);
	t = nt_tensor(OM_FLOAT, 3, (int64_t[]){2, 3, 4}, x);
	assert_int_equal(run(n, 1, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){4, 6});
	assert_memory_equal(out.data, x, sizeof x);
	om_tensor_free(&out);
	nt_free(m);
}

static void identity_strings(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Identity", 1, 1);
	const om_str s[2] = {{"ab", 2}, {"", 0}};
	om_tensor t = nt_tensor(OM_STRING, 1, (int64_t[]){2}, s), out;
	const om_tensor *in[] = {&t};
	om_status st;
	assert_int_equal(run(n, 16, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){2});
	const om_str *o = out.data;
	assert_int_equal(o[0].len, 2);
	assert_memory_equal(o[0].ptr, "ab", 2);
	assert_ptr_not_equal(o[0].ptr, s[0].ptr);
	assert_int_equal(o[1].len, 0);
	om_tensor_free(&out);
	nt_free(m);
}

static void dropout(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Dropout", 3, 2);
	const float x[4] = {1.5f, -0.0f, 3, 4};
	const float ratio = 0.9f;
	uint8_t train = 0;
	om_tensor t = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 2}, x), out[2];
	om_tensor r = nt_tensor(OM_FLOAT, 0, NULL, &ratio), tm = nt_tensor(OM_BOOL, 0, NULL, &train);
	const om_tensor *in[] = {&t, &r, &tm};
	om_status st;
	assert_int_equal(run(n, 13, in, out, &st), OM_OK);
	assert_memory_equal(out[0].data, x, sizeof x); /* ratio is ignored, -0.0 kept */
	assert_int_equal(out[1].dtype, OM_BOOL);
	nt_assert_shape(&out[1], 2, (int64_t[]){2, 2});
	for (int i = 0; i < 4; i++)
		assert_int_equal(((uint8_t *)out[1].data)[i], 1);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	train = 1; /* training: each element 0 (mask false) or x / (1 - 0.9) (mask true) */
	assert_int_equal(run(n, 13, in, out, &st), OM_OK);
	for (int i = 0; i < 4; i++) {
		const float y = ((float *)out[0].data)[i];
		assert_true(((uint8_t *)out[1].data)[i]
				    ? fabs(y - x[i] / (1 - (double)0.9f)) <= 1e-6 * fabs(y)
				    : y == 0.0f);
	}
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	/* training with ratio 0 (or -0, in float16 too) drops nothing: the data, a mask all true
	 * (torchvision's swin_t in eval mode) */
	const float zeros[2] = {0.0f, -0.0f};
	const uint16_t hzero = 0x8000, hsmall = 0x0001; /* -0 and the least subnormal */
	const om_tensor ratios[] = {nt_tensor(OM_FLOAT, 0, NULL, &zeros[0]),
				    nt_tensor(OM_FLOAT, 0, NULL, &zeros[1]),
				    nt_tensor(OM_FLOAT16, 1, (int64_t[]){1}, &hzero)};
	for (int k = 0; k < 3; k++) {
		in[1] = &ratios[k];
		assert_int_equal(run(n, 13, in, out, &st), OM_OK);
		assert_memory_equal(out[0].data, x, sizeof x);
		for (int i = 0; i < 4; i++)
			assert_int_equal(((uint8_t *)out[1].data)[i], 1);
		om_tensor_free(&out[0]);
		om_tensor_free(&out[1]);
	}
	const om_tensor tiny = nt_tensor(OM_FLOAT16, 0, NULL, &hsmall);
	in[1] = &tiny; /* drops with probability 6e-8: the 4 elements kept, times 1 / (1 - p) */
	assert_int_equal(run(n, 13, in, out, &st), OM_OK);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(((uint8_t *)out[1].data)[i], 1);
		assert_true(fabs(((float *)out[0].data)[i] - x[i]) <= 1e-6 * fabs(x[i]));
	}
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	in[1] = NULL; /* the default ratio, 0.5 */
	assert_int_equal(run(n, 13, in, out, &st), OM_OK);
	for (int i = 0; i < 4; i++) {
		const float y = ((float *)out[0].data)[i];
		assert_true(((uint8_t *)out[1].data)[i] ? y == 2 * x[i] : y == 0.0f);
	}
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	in[1] = &r;
	/* a training_mode fed at run time: the shape needs no value, the kernel reads it */
	tm.data = NULL;
	assert_int_equal(om_infer_node(n, 13, in, out, &st), OM_OK);
	/* ... but one that is not a single value is refused at plan time as at run time
	 * (test_diff_nodes found infer accepting it) */
	const uint8_t two[2] = {0, 0};
	tm = nt_tensor(OM_BOOL, 1, (int64_t[]){2}, NULL);
	assert_int_equal(om_infer_node(n, 13, in, out, &st), OM_ERR_INVALID_MODEL);
	tm.data = (void *)two;
	assert_int_equal(run(n, 13, in, out, &st), OM_ERR_INVALID_MODEL);
	nt_free(m);

	/* opsets 7 to 9: the mask has the data type, all ones (bool from 10) */
	n = nt_node(&m, "Dropout", 1, 2);
	assert_int_equal(run(n, 10, in, out, &st), OM_OK);
	assert_int_equal(out[1].dtype, OM_BOOL);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	assert_int_equal(run(n, 9, in, out, &st), OM_OK);
	assert_int_equal(out[1].dtype, OM_FLOAT);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	assert_int_equal(run(n, 7, in, out, &st), OM_OK);
	assert_int_equal(out[1].dtype, OM_FLOAT);
	for (int i = 0; i < 4; i++)
		assert_true(((float *)out[1].data)[i] == 1.0f);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	nt_free(m);
}

/* random nodes: any result is a value, never an out-of-bounds access (ASan) */
static void random_nodes(void **state)
{
	(void)state;
	static const char *const ops[] = {"Shape",   "Size",     "Squeeze",  "Unsqueeze",
					  "Flatten", "Reshape",  "Identity", "Dropout"};
	static unsigned char buf[256 * 16];
	int64_t ints[12], a[6];
	nt_rng r = {0x2545f4914f6cdd1du};
	for (int it = 0; it < 2000; it++) {
		const int o = (int)nt_rand(&r, 0, 7);
		om_tensor x = nt_rand_tensor(&r, buf), t1, out[2];
		const uint8_t train = (uint8_t)nt_rand(&r, 0, 1);
		om_tensor tm = nt_tensor(OM_BOOL, 0, NULL, &train);
		const om_tensor *in[3] = {&x, NULL, NULL};
		const int64_t opset = nt_rand(&r, 0, 1) ? 13 : nt_rand(&r, 0, 1) ? 15 : 11;
		int32_t nin = 1, nout = 1;
		if (o >= 2 && o <= 5 && opset >= 13 && nt_rand(&r, 0, 3)) {
			nin = 2;
			t1 = nt_rand_ints(&r, ints, nt_rand(&r, 0, 6), o == 5 ? -2 : -5, 5, o != 5);
			in[1] = &t1;
		}
		if (o == 7) {
			nin = 3, nout = 2;
			in[2] = nt_rand(&r, 0, 1) ? &tm : NULL;
		}
		om_model *m;
		om_node *n = nt_node(&m, ops[o], nin, nout);
		for (int32_t i = 0; i < nin; i++)
			if (!in[i])
				n->in[i] = NULL;
		const int64_t k = nt_rand(&r, 0, 5);
		for (int64_t i = 0; i < k; i++)
			a[i] = nt_rand(&r, -5, 5);
		if (nt_rand(&r, 0, 1)) {
			nt_int(n, "start", a[0] * (k > 0));
			nt_int(n, "end", nt_rand(&r, -6, 6));
			nt_int(n, "axis", nt_rand(&r, -5, 5));
			nt_int(n, "allowzero", nt_rand(&r, 0, 1));
		}
		if (nt_rand(&r, 0, 1))
			nt_ints(n, o == 5 ? "shape" : "axes", a, k);
		om_status st = {0};
		const om_kind rc = om_eval_node(n, opset, in, out, &st);
		nt_check_run(rc, &st, out, nout);
		nt_free(m);
	}
}

static void flags(void **state)
{
	(void)state;
	const char *views[] = {"Squeeze", "Unsqueeze", "Flatten", "Reshape", "Identity"};
	for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
		const om_op *op = om_op_find("", views[i], 21);
		assert_non_null(op);
		assert_true(op->flags & OM_OP_VIEW);
		assert_true(op->flags & OM_OP_EXACT);
	}
	/* Dropout is a view up to opset 11; from 12 (training_mode) it draws and writes */
	assert_true(om_op_find("", "Dropout", 11)->flags & OM_OP_VIEW);
	const om_op *d = om_op_find("", "Dropout", 21);
	assert_true((d->flags & (OM_OP_RANDOM | OM_OP_EXACT)) == (OM_OP_RANDOM | OM_OP_EXACT));
	assert_false(d->flags & OM_OP_VIEW);
	assert_int_equal(om_op_find("", "Squeeze", 12)->since, 1);
	assert_int_equal(om_op_find("", "Squeeze", 13)->since, 13);
	assert_int_equal(om_op_find("", "Reshape", 4)->since, 1);
	assert_int_equal(om_op_find("", "Reshape", 5)->since, 5);
	assert_true(om_op_find("", "Shape", 21)->flags & OM_OP_EXACT);
	assert_false(om_op_find("", "Shape", 21)->flags & OM_OP_VIEW);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shape_and_size), cmocka_unit_test(squeeze),
		cmocka_unit_test(unsqueeze),      cmocka_unit_test(flatten),
		cmocka_unit_test(reshape),        cmocka_unit_test(identity_strings),
		cmocka_unit_test(dropout),        cmocka_unit_test(random_nodes),
		cmocka_unit_test(flags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
