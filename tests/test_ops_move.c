/* test_ops_move.c — Transpose Concat Split Slice Expand Tile Pad Trilu (seed §2, §3, §4). */
#include <stdlib.h>

#include "nodetest.h"
#include "shape_util.h"
#include "transpose.h"

static om_kind run(om_node *n, int64_t opset, const om_tensor *const *in, om_tensor *out,
		   om_status *st)
{
	memset(st, 0, sizeof *st);
	return om_eval_node(n, opset, in, out, st);
}

/* a float32 output equal to a literal list */
static void assert_f32(const om_tensor *t, int64_t n, const float *want)
{
	assert_int_equal(om_tensor_numel(t), n);
	for (int64_t i = 0; i < n; i++)
		if (((const float *)t->data)[i] != want[i])
			fail_msg("element %lld is %g, expected %g", (long long)i,
				 (double)((const float *)t->data)[i], (double)want[i]);
}

static void assert_i64(const om_tensor *t, int64_t n, const int64_t *want)
{
	assert_int_equal(om_tensor_numel(t), n);
	for (int64_t i = 0; i < n; i++)
		if (((const int64_t *)t->data)[i] != want[i])
			fail_msg("element %lld is %lld, expected %lld", (long long)i,
				 (long long)((const int64_t *)t->data)[i], (long long)want[i]);
}

#define F32(...) sizeof((float[]){__VA_ARGS__}) / 4, (const float[]){__VA_ARGS__}
#define I64(...) sizeof((int64_t[]){__VA_ARGS__}) / 8, (const int64_t[]){__VA_ARGS__}

static void iota_f(float *x, int n)
{
	for (int i = 0; i < n; i++)
		x[i] = (float)i;
}

/* ---- Transpose --------------------------------------------------------------------------- */

/* out[o] = in[sum o_i * instride[perm[i]]] over every perm of (2,3,1,5), every element size */
static void transpose_all_perms(void **state)
{
	(void)state;
	const int32_t dtypes[] = {OM_UINT8, OM_FLOAT16, OM_FLOAT, OM_INT64, OM_COMPLEX128};
	const int64_t dims[4] = {2, 3, 1, 5}, xs[4] = {15, 5, 5, 1};
	unsigned char x[30 * 16], want[30 * 16];
	for (size_t i = 0; i < sizeof x; i++)
		x[i] = (unsigned char)(i * 7 + 3);
	om_model *m;
	om_node *n = nt_node(&m, "Transpose", 1, 1);
	om_status st;
	for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++) {
		const size_t size = om_dtype_size(dtypes[t]);
		om_tensor in = nt_tensor(dtypes[t], 4, dims, x), out;
		const om_tensor *ins[] = {&in};
		for (int p = 0; p < 256; p++) {
			const int64_t perm[4] = {p & 3, (p >> 2) & 3, (p >> 4) & 3, (p >> 6) & 3};
			if ((1 << perm[0] | 1 << perm[1] | 1 << perm[2] | 1 << perm[3]) != 15)
				continue;
			nt_ints(n, "perm", perm, 4);
			assert_int_equal(run(n, 13, ins, &out, &st), OM_OK);
			int64_t od[4], k = 0;
			for (int i = 0; i < 4; i++)
				od[i] = dims[perm[i]];
			nt_assert_shape(&out, 4, od);
			for (int64_t a = 0; a < od[0]; a++)
				for (int64_t b = 0; b < od[1]; b++)
					for (int64_t c = 0; c < od[2]; c++)
						for (int64_t d = 0; d < od[3]; d++, k++) {
							const int64_t s =
								a * xs[perm[0]] + b * xs[perm[1]] +
								c * xs[perm[2]] + d * xs[perm[3]];
							memcpy(want + k * (int64_t)size,
							       x + s * (int64_t)size, size);
						}
			assert_memory_equal(out.data, want, 30 * size);
			om_tensor_free(&out);
		}
	}
	nt_free(m);
}

/* the tiled path across tile edges: (70, 3, 45) with perm (2, 1, 0), and the default perm */
static void transpose_tiles(void **state)
{
	(void)state;
	enum { A = 70, B = 3, C = 45 };
	static float x[A * B * C];
	iota_f(x, A * B * C);
	om_model *m;
	om_node *n = nt_node(&m, "Transpose", 1, 1);
	om_tensor in = nt_tensor(OM_FLOAT, 3, (int64_t[]){A, B, C}, x), out;
	const om_tensor *ins[] = {&in};
	om_status st;
	assert_int_equal(run(n, 21, ins, &out, &st), OM_OK); /* default: reversed */
	nt_assert_shape(&out, 3, (int64_t[]){C, B, A});
	const float *y = out.data;
	for (int c = 0; c < C; c++)
		for (int b = 0; b < B; b++)
			for (int a = 0; a < A; a++)
				assert_true(y[(c * B + b) * A + a] == x[(a * B + b) * C + c]);
	om_tensor_free(&out);
	/* 0-sized and rank 0 */
	in = nt_tensor(OM_FLOAT, 2, (int64_t[]){0, 3}, x);
	assert_int_equal(run(n, 13, ins, &out, &st), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){3, 0});
	om_tensor_free(&out);
	in = nt_tensor(OM_FLOAT, 0, NULL, x + 9);
	assert_int_equal(run(n, 13, ins, &out, &st), OM_OK);
	assert_true(*(float *)out.data == 9.0f);
	om_tensor_free(&out);
	/* a perm that is not a permutation */
	in = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 3}, x);
	nt_ints(n, "perm", (int64_t[]){1, 1}, 2);
	assert_int_equal(run(n, 13, ins, &out, &st), OM_ERR_INVALID_MODEL);
	assert_string_equal(st.node, "n0");
	nt_ints(n, "perm", (int64_t[]){0, 1, 2}, 3);
	assert_int_equal(run(n, 13, ins, &out, &st), OM_ERR_INVALID_MODEL);
	nt_free(m);
}

/* 4-bit elements are moved one nibble at a time; strings are owned by the result */
static void transpose_int4_and_strings(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Transpose", 1, 1);
	const uint8_t x4[3] = {0x21, 0x43, 0x65}; /* [[1,2,3],[4,5,6]] */
	om_tensor in = nt_tensor(OM_INT4, 2, (int64_t[]){2, 3}, x4), out;
	const om_tensor *ins[] = {&in};
	om_status st;
	assert_int_equal(run(n, 21, ins, &out, &st), OM_OK); /* [[1,4],[2,5],[3,6]] */
	assert_int_equal(out.nbytes, 3);
	assert_memory_equal(out.data, ((uint8_t[]){0x41, 0x52, 0x63}), 3);
	om_tensor_free(&out);
	const om_str s[4] = {{"a", 1}, {"bb", 2}, {"ccc", 3}, {"", 0}};
	in = nt_tensor(OM_STRING, 2, (int64_t[]){2, 2}, s);
	assert_int_equal(run(n, 13, ins, &out, &st), OM_OK);
	const om_str *o = out.data;
	assert_int_equal(o[1].len, 3);
	assert_memory_equal(o[1].ptr, "ccc", 3);
	assert_ptr_not_equal(o[1].ptr, s[2].ptr);
	assert_int_equal(o[2].len, 2);
	om_tensor_free(&out);
	nt_free(m);
}

/* axes that stay adjacent in both layouts are merged, extent-1 axes dropped */
static void transpose_merge(void **state)
{
	(void)state;
	int64_t d[5] = {2, 3, 4, 5, 1};
	int32_t p[5] = {0, 2, 3, 4, 1}; /* (0)(2 3)(4: extent 1)(1) */
	assert_int_equal(om_transpose_merge(5, d, p), 3);
	assert_memory_equal(d, ((int64_t[]){2, 3, 20}), 3 * sizeof(int64_t));
	assert_memory_equal(p, ((int32_t[]){0, 2, 1}), 3 * sizeof(int32_t));
	int64_t e[4] = {64, 64, 64, 64};
	int32_t q[4] = {1, 2, 3, 0}; /* (1 2 3)(0): a 2-D transpose */
	assert_int_equal(om_transpose_merge(4, e, q), 2);
	assert_memory_equal(e, ((int64_t[]){64, 262144}), 2 * sizeof(int64_t));
	assert_memory_equal(q, ((int32_t[]){1, 0}), 2 * sizeof(int32_t));
	int64_t f[3] = {2, 3, 4};
	int32_t u[3] = {0, 1, 2}; /* identity: one axis */
	assert_int_equal(om_transpose_merge(3, f, u), 1);
	assert_int_equal(f[0], 24);
}

/* plan time: the data's values are not needed, the index inputs are (seed §1) */
static void infer_without_data(void **state)
{
	(void)state;
	const struct {
		const char *op;
		int32_t nin;
		int64_t opset;
		int64_t dims[3];
	} cases[] = {
		{"Slice", 4, 13, {2, 2, 3}},     {"Pad", 2, 13, {4, 5, 6}},
		{"Expand", 2, 13, {2, 3, 4}},    {"Tile", 2, 13, {4, 6, 8}},
		{"Transpose", 1, 13, {4, 3, 2}}, {"Trilu", 1, 14, {2, 3, 4}},
	};
	const int64_t s[3] = {0, 1, 0}, e[3] = {2, 3, -1}, ax[3] = {0, 1, 2};
	const int64_t pads[6] = {1, 1, 1, 1, 1, 1};
	const int64_t ones[3] = {1, 1, 1}, rep[3] = {2, 2, 2};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		om_model *m;
		om_node *n = nt_node(&m, cases[i].op, cases[i].nin, 1);
		om_tensor x = nt_tensor(OM_FLOAT, 3, (int64_t[]){2, 3, 4}, NULL), out;
		om_tensor t1 = nt_tensor(OM_INT64, 1, (int64_t[]){3}, s);
		om_tensor t2 = nt_tensor(OM_INT64, 1, (int64_t[]){3}, e);
		om_tensor t3 = nt_tensor(OM_INT64, 1, (int64_t[]){3}, ax);
		if (!strcmp(cases[i].op, "Pad"))
			t1 = nt_tensor(OM_INT64, 1, (int64_t[]){6}, pads);
		if (!strcmp(cases[i].op, "Expand"))
			t1 = nt_tensor(OM_INT64, 1, (int64_t[]){3}, ones);
		if (!strcmp(cases[i].op, "Tile"))
			t1 = nt_tensor(OM_INT64, 1, (int64_t[]){3}, rep);
		const om_tensor *in[4] = {&x, &t1, &t2, &t3};
		om_status st = {0};
		assert_int_equal(om_infer_node(n, cases[i].opset, in, &out, &st), OM_OK);
		nt_assert_shape(&out, 3, cases[i].dims);
		if (cases[i].nin > 1) { /* the index input unknown: ask for its value */
			t1.data = NULL;
			assert_int_equal(om_infer_node(n, cases[i].opset, in, &out, &st),
					 OM_NEED_VALUE);
		}
		nt_free(m);
	}
}

/* ---- Concat, Split ----------------------------------------------------------------------- */

static void concat(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Concat", 3, 1);
	const float a[2] = {1, 2}, b[4] = {3, 4, 5, 6};
	om_tensor ta = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 1}, a);
	om_tensor tb = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 2}, b);
	om_tensor te = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 0}, b), out;
	const om_tensor *in[] = {&ta, &te, &tb};
	om_status st;
	nt_int(n, "axis", -1);
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){2, 3});
	assert_f32(&out, F32(1, 3, 4, 2, 5, 6));
	om_tensor_free(&out);
	nt_int(n, "axis", 0); /* extents differ off the axis */
	assert_int_equal(run(n, 13, in, &out, &st), OM_ERR_INVALID_MODEL);
	nt_free(m);
	/* opset 1: axis defaults to 1; from 4 it is required */
	n = nt_node(&m, "Concat", 2, 1);
	const om_tensor *in2[] = {&tb, &ta};
	assert_int_equal(run(n, 1, in2, &out, &st), OM_OK);
	assert_f32(&out, F32(3, 4, 1, 5, 6, 2));
	om_tensor_free(&out);
	assert_int_equal(run(n, 4, in2, &out, &st), OM_ERR_INVALID_MODEL);
	/* rank 0 cannot be concatenated; types must agree */
	om_tensor s0 = nt_tensor(OM_FLOAT, 0, NULL, a);
	const om_tensor *in3[] = {&s0, &s0};
	nt_int(n, "axis", 0);
	assert_int_equal(run(n, 13, in3, &out, &st), OM_ERR_INVALID_MODEL);
	om_tensor ti = nt_tensor(OM_INT32, 2, (int64_t[]){2, 1}, a);
	const om_tensor *in4[] = {&ta, &ti};
	assert_int_equal(run(n, 13, in4, &out, &st), OM_ERR_INVALID_MODEL);
	nt_free(m);
}

static void split(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Split", 2, 3);
	float x[14];
	iota_f(x, 14);
	om_tensor t = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 7}, x), out[3];
	om_tensor sizes = NT_I64(2, 0, 5);
	const om_tensor *in[] = {&t, &sizes};
	om_status st;
	nt_int(n, "axis", -1);
	assert_int_equal(run(n, 13, in, out, &st), OM_OK);
	nt_assert_shape(&out[1], 2, (int64_t[]){2, 0});
	assert_f32(&out[0], F32(0, 1, 7, 8));
	assert_f32(&out[2], F32(2, 3, 4, 5, 6, 9, 10, 11, 12, 13));
	for (int i = 0; i < 3; i++)
		om_tensor_free(&out[i]);
	sizes = NT_I64(2, 2, 2); /* sums to 6, not 7 */
	assert_int_equal(run(n, 13, in, out, &st), OM_ERR_INVALID_MODEL);
	sizes = NT_I64(3, 4);
	assert_int_equal(run(n, 13, in, out, &st), OM_ERR_INVALID_MODEL);
	sizes = nt_tensor(OM_INT64, 1, (int64_t[]){0}, x); /* empty: as if omitted */
	assert_int_equal(run(n, 13, in, out, &st), OM_ERR_INVALID_MODEL); /* 7 / 3 */
	assert_int_equal(run(n, 18, in, out, &st), OM_OK);
	assert_f32(&out[2], F32(6, 13));
	for (int i = 0; i < 3; i++)
		om_tensor_free(&out[i]);
	/* no sizes: equal parts must divide before 18; ceil parts from 18 */
	const om_tensor *in1[] = {&t, NULL};
	assert_int_equal(run(n, 13, in1, out, &st), OM_ERR_INVALID_MODEL);
	assert_int_equal(run(n, 18, in1, out, &st), OM_OK);
	assert_f32(&out[0], F32(0, 1, 2, 7, 8, 9));
	assert_f32(&out[1], F32(3, 4, 5, 10, 11, 12));
	assert_f32(&out[2], F32(6, 13));
	for (int i = 0; i < 3; i++)
		om_tensor_free(&out[i]);
	nt_int(n, "num_outputs", 2);
	assert_int_equal(run(n, 18, in1, out, &st), OM_ERR_INVALID_MODEL);
	nt_free(m);
	/* opset 2: split attribute; equal parts on axis 0 by default */
	n = nt_node(&m, "Split", 1, 2);
	t = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 7}, x);
	assert_int_equal(run(n, 11, in, out, &st), OM_OK);
	assert_f32(&out[1], F32(7, 8, 9, 10, 11, 12, 13));
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	nt_ints(n, "split", (int64_t[]){1, 6}, 2);
	nt_int(n, "axis", 1);
	assert_int_equal(run(n, 2, in, out, &st), OM_OK);
	assert_f32(&out[0], F32(0, 7));
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	nt_free(m);
}

/* ---- Slice (seed §3) --------------------------------------------------------------------- */

static void slice_sentinels(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Slice", 5, 1);
	float x[5];
	iota_f(x, 5);
	om_tensor t = nt_tensor(OM_FLOAT, 1, (int64_t[]){5}, x), out;
	om_tensor s = NT_I64(INT64_MAX), e = NT_I64(INT32_MAX), a = NT_I64(0), p = NT_I64(-1);
	const om_tensor *in[] = {&t, &s, &e, &a, &p};
	om_status st;
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK); /* the seed's example: all, reversed */
	assert_f32(&out, F32(4, 3, 2, 1, 0));
	om_tensor_free(&out);
	e = NT_I64(INT64_MAX);
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	assert_f32(&out, F32(4, 3, 2, 1, 0));
	om_tensor_free(&out);
	e = NT_I64(100); /* clamps to n-1: nothing */
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){0});
	om_tensor_free(&out);
	e = NT_I64(INT64_MIN);
	s = NT_I64(-2);
	p = NT_I64(-2);
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK); /* 3, 1 */
	assert_f32(&out, F32(3, 1));
	om_tensor_free(&out);
	/* INT64_MAX steps: one element */
	s = NT_I64(1), e = NT_I64(INT64_MAX), p = NT_I64(INT64_MAX);
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	assert_f32(&out, F32(1));
	om_tensor_free(&out);
	s = NT_I64(-1), e = NT_I64(INT64_MIN), p = NT_I64(INT64_MIN);
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	assert_f32(&out, F32(4));
	om_tensor_free(&out);
	/* clamping for a positive step */
	s = NT_I64(-100), e = NT_I64(-2), p = NT_I64(2);
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	assert_f32(&out, F32(0, 2));
	om_tensor_free(&out);
	p = NT_I64(0);
	assert_int_equal(run(n, 13, in, &out, &st), OM_ERR_INVALID_MODEL);
	/* extent 0 */
	t = nt_tensor(OM_FLOAT, 1, (int64_t[]){0}, x);
	p = NT_I64(-1);
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 1, (int64_t[]){0});
	om_tensor_free(&out);
	nt_free(m);
}

static void slice_axes(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Slice", 4, 1);
	float x[24];
	iota_f(x, 24);
	om_tensor t = nt_tensor(OM_FLOAT, 3, (int64_t[]){2, 3, 4}, x), out;
	om_tensor s = NT_I64(1, -1), e = NT_I64(3, 0), a = NT_I64(-2, 2);
	const om_tensor *in[] = {&t, &s, &e, &a};
	om_status st;
	/* axis 1 from 1 to 3, axis 2 from 3 to 0 with step 1: empty */
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 3, (int64_t[]){2, 2, 0});
	om_tensor_free(&out);
	e = NT_I64(3, 4);
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 3, (int64_t[]){2, 2, 1});
	assert_f32(&out, F32(7, 11, 19, 23));
	om_tensor_free(&out);
	a = NT_I64(1, -2); /* repeated */
	assert_int_equal(run(n, 13, in, &out, &st), OM_ERR_INVALID_MODEL);
	a = NT_I64(1, 3);
	assert_int_equal(run(n, 13, in, &out, &st), OM_ERR_INVALID_MODEL);
	a = NT_I64(1);
	assert_int_equal(run(n, 13, in, &out, &st), OM_ERR_INVALID_MODEL);
	s.data = NULL; /* starts known only at run time */
	assert_int_equal(om_infer_node(n, 13, in, &out, &st), OM_NEED_VALUE);
	nt_free(m);
	/* opset 1: attributes, axes optional */
	n = nt_node(&m, "Slice", 1, 1);
	nt_ints(n, "starts", (int64_t[]){1, 1}, 2);
	nt_ints(n, "ends", (int64_t[]){INT64_MAX, -1}, 2);
	assert_int_equal(run(n, 9, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 3, (int64_t[]){1, 1, 4});
	assert_f32(&out, F32(16, 17, 18, 19));
	om_tensor_free(&out);
	nt_ints(n, "axes", (int64_t[]){2, 0}, 2);
	nt_ints(n, "ends", (int64_t[]){3, INT64_MAX}, 2);
	assert_int_equal(run(n, 9, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 3, (int64_t[]){1, 3, 2});
	assert_f32(&out, F32(13, 14, 17, 18, 21, 22));
	om_tensor_free(&out);
	nt_free(m);
}

/* ---- Expand, Tile ------------------------------------------------------------------------ */

static void expand_tile(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Expand", 2, 1);
	const int64_t x[3] = {1, 2, 3};
	om_tensor t = nt_tensor(OM_INT64, 2, (int64_t[]){3, 1}, x), shape = NT_I64(2, 1, 2), out;
	const om_tensor *in[] = {&t, &shape};
	om_status st;
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 3, (int64_t[]){2, 3, 2});
	assert_i64(&out, I64(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));
	om_tensor_free(&out);
	shape = NT_I64(1); /* the input extent wins over a shape entry of 1 */
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){3, 1});
	om_tensor_free(&out);
	shape = NT_I64(2, 0);
	assert_int_equal(run(n, 13, in, &out, &st), OM_ERR_INVALID_MODEL);
	shape = NT_I64(3, 0);
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){3, 0});
	om_tensor_free(&out);
	shape.data = NULL;
	assert_int_equal(om_infer_node(n, 13, in, &out, &st), OM_NEED_VALUE);
	nt_free(m);

	n = nt_node(&m, "Tile", 2, 1);
	t = nt_tensor(OM_INT64, 2, (int64_t[]){1, 3}, x);
	om_tensor rep = NT_I64(2, 2);
	const om_tensor *in2[] = {&t, &rep};
	assert_int_equal(run(n, 13, in2, &out, &st), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){2, 6});
	assert_i64(&out, I64(1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3));
	om_tensor_free(&out);
	rep = NT_I64(3, 0); /* a repeat of 0 gives an empty axis */
	assert_int_equal(run(n, 13, in2, &out, &st), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){3, 0});
	om_tensor_free(&out);
	rep = NT_I64(2);
	assert_int_equal(run(n, 13, in2, &out, &st), OM_ERR_INVALID_MODEL);
	rep = NT_I64(1, -1);
	assert_int_equal(run(n, 13, in2, &out, &st), OM_ERR_INVALID_MODEL);
	t = nt_tensor(OM_INT64, 0, NULL, x + 2);
	rep = nt_tensor(OM_INT64, 1, (int64_t[]){0}, x);
	assert_int_equal(run(n, 13, in2, &out, &st), OM_OK);
	assert_int_equal(out.rank, 0);
	assert_int_equal(*(int64_t *)out.data, 3);
	om_tensor_free(&out);
	nt_free(m);
}

/* ---- Pad (seed §4) ----------------------------------------------------------------------- */

static om_kind pad1(om_node *n, const char *mode, const float *x, int64_t len, int64_t b,
		    int64_t e, om_tensor *out)
{
	nt_str(n, "mode", mode);
	om_tensor t = nt_tensor(OM_FLOAT, 1, &len, x), pads = NT_I64(b, e);
	const om_tensor *in[] = {&t, &pads, NULL};
	om_status st;
	return run(n, 13, in, out, &st);
}

static void pad_modes(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Pad", 3, 1);
	const float x[5] = {1, 2, 3, 4, 5};
	om_tensor out;
	/* reflect beyond one reflection continues periodically (period 2(n-1)) */
	assert_int_equal(pad1(n, "reflect", x, 3, 5, 5, &out), OM_OK);
	assert_f32(&out, F32(2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2));
	om_tensor_free(&out);
	assert_int_equal(pad1(n, "reflect", x, 1, 2, 1, &out), OM_OK); /* extent 1 repeats */
	assert_f32(&out, F32(1, 1, 1, 1));
	om_tensor_free(&out);
	assert_int_equal(pad1(n, "reflect", x, 5, 2, 2, &out), OM_OK); /* within one: as ONNX */
	assert_f32(&out, F32(3, 2, 1, 2, 3, 4, 5, 4, 3));
	om_tensor_free(&out);
	assert_int_equal(pad1(n, "edge", x, 3, 2, 1, &out), OM_OK);
	assert_f32(&out, F32(1, 1, 1, 2, 3, 3));
	om_tensor_free(&out);
	assert_int_equal(pad1(n, "wrap", x, 3, 4, 2, &out), OM_OK);
	assert_f32(&out, F32(3, 1, 2, 3, 1, 2, 3, 1, 2));
	om_tensor_free(&out);
	assert_int_equal(pad1(n, "constant", x, 5, -1, -2, &out), OM_OK); /* negative pads crop */
	assert_f32(&out, F32(2, 3));
	om_tensor_free(&out);
	/* non-constant modes pad what the crops keep (ONNX Runtime's reading) */
	assert_int_equal(pad1(n, "reflect", x, 5, -3, 2, &out), OM_OK); /* [4 5], then reflect */
	assert_f32(&out, F32(4, 5, 4, 5));
	om_tensor_free(&out);
	assert_int_equal(pad1(n, "wrap", x, 5, 2, -1, &out), OM_OK); /* [1 2 3 4], then wrap */
	assert_f32(&out, F32(3, 4, 1, 2, 3, 4));
	om_tensor_free(&out);
	assert_int_equal(pad1(n, "edge", x, 5, -4, 2, &out), OM_OK);
	assert_f32(&out, F32(5, 5, 5));
	om_tensor_free(&out);
	/* everything cropped */
	assert_int_equal(pad1(n, "edge", x, 2, -2, 1, &out), OM_ERR_INVALID_MODEL);
	assert_int_equal(pad1(n, "constant", x, 2, -2, 1, &out), OM_OK);
	assert_f32(&out, F32(0));
	om_tensor_free(&out);
	assert_int_equal(pad1(n, "constant", x, 2, -3, 0, &out), OM_ERR_INVALID_MODEL);
	assert_int_equal(pad1(n, "edge", x, 0, 1, 1, &out), OM_ERR_INVALID_MODEL); /* empty axis */
	assert_int_equal(pad1(n, "constant", x, 0, 1, 1, &out), OM_OK);
	assert_f32(&out, F32(0, 0));
	om_tensor_free(&out);
	assert_int_equal(pad1(n, "mirror", x, 3, 1, 1, &out), OM_ERR_INVALID_MODEL);
	nt_free(m);
}

static void pad_forms(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Pad", 4, 1);
	const int32_t x[4] = {1, 2, 3, 4}, v = 9;
	om_tensor t = nt_tensor(OM_INT32, 2, (int64_t[]){2, 2}, x), out;
	om_tensor pads = NT_I64(1, 0, 0, 1), cv = nt_tensor(OM_INT32, 0, NULL, &v), axes = NT_I64(-1);
	const om_tensor *in[] = {&t, &pads, &cv, NULL};
	om_status st;
	n->nin = 3; /* Pad-13 has no axes input */
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){3, 3});
	const int32_t w1[9] = {9, 9, 9, 1, 2, 9, 3, 4, 9};
	assert_memory_equal(out.data, w1, sizeof w1);
	om_tensor_free(&out);
	/* opset 18: pads for the listed axes only */
	const om_tensor *in2[] = {&t, &pads, &cv, &axes};
	pads = NT_I64(2, 1);
	n->nin = 4;
	assert_int_equal(run(n, 18, in2, &out, &st), OM_OK);
	nt_assert_shape(&out, 2, (int64_t[]){2, 5});
	const int32_t w2[10] = {9, 9, 1, 2, 9, 9, 9, 3, 4, 9};
	assert_memory_equal(out.data, w2, sizeof w2);
	om_tensor_free(&out);
	axes = NT_I64(1, -1);
	pads = NT_I64(0, 0, 0, 0);
	assert_int_equal(run(n, 18, in2, &out, &st), OM_ERR_INVALID_MODEL);
	/* constant_value of another type */
	const float fv = 1;
	cv = nt_tensor(OM_FLOAT, 0, NULL, &fv);
	n->nin = 3;
	assert_int_equal(run(n, 13, in, &out, &st), OM_ERR_INVALID_MODEL);
	assert_non_null(strstr(st.msg, "constant"));
	pads.data = NULL;
	assert_int_equal(om_infer_node(n, 13, in, &out, &st), OM_NEED_VALUE);
	nt_free(m);
	/* opset 2: pads and a float value attribute; opset 1: paddings */
	n = nt_node(&m, "Pad", 1, 1);
	const float xf[2] = {1, 2};
	t = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, xf);
	nt_ints(n, "pads", (int64_t[]){1, 2}, 2);
	om_node_set_attr(n, "value", OM_ATTR_FLOAT)->f = 1.5f;
	assert_int_equal(run(n, 2, in, &out, &st), OM_OK);
	assert_f32(&out, F32(1.5f, 1, 2, 1.5f, 1.5f));
	om_tensor_free(&out);
	nt_ints(n, "paddings", (int64_t[]){0, 1}, 2);
	assert_int_equal(run(n, 1, in, &out, &st), OM_OK);
	assert_f32(&out, F32(1, 2, 1.5f));
	om_tensor_free(&out);
	/* float16 data with the float attribute: 1.5 is 0x3E00 */
	const uint16_t xh[1] = {0x3C00};
	t = nt_tensor(OM_FLOAT16, 1, (int64_t[]){1}, xh);
	assert_int_equal(run(n, 2, in, &out, &st), OM_OK);
	assert_memory_equal(out.data, ((uint16_t[]){0x3E00, 0x3C00, 0x3E00, 0x3E00}), 8);
	om_tensor_free(&out);
	nt_free(m);
}

/* ---- Trilu ------------------------------------------------------------------------------- */

static void trilu(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Trilu", 2, 1);
	float x[24];
	for (int i = 0; i < 24; i++)
		x[i] = (float)(i + 1);
	om_tensor t = nt_tensor(OM_FLOAT, 3, (int64_t[]){2, 3, 4}, x), out, k = NT_I64(1);
	const om_tensor *in[] = {&t, &k};
	om_status st;
	assert_int_equal(run(n, 14, in, &out, &st), OM_OK); /* upper, k = 1, batched */
	assert_f32(&out, F32(0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12, 0, 14, 15, 16, 0, 0, 19, 20, 0,
			     0, 0, 24));
	om_tensor_free(&out);
	nt_int(n, "upper", 0);
	k = NT_I64(-1);
	assert_int_equal(run(n, 14, in, &out, &st), OM_OK);
	assert_f32(&out, F32(0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0, 0, 0, 0, 0, 17, 0, 0, 0, 21, 22,
			     0, 0));
	om_tensor_free(&out);
	k = NT_I64(INT64_MIN); /* lower with a huge negative k: all zero */
	assert_int_equal(run(n, 14, in, &out, &st), OM_OK);
	for (int i = 0; i < 24; i++)
		assert_true(((float *)out.data)[i] == 0.0f);
	om_tensor_free(&out);
	k = NT_I64(INT64_MAX);
	assert_int_equal(run(n, 14, in, &out, &st), OM_OK);
	assert_memory_equal(out.data, x, sizeof x);
	om_tensor_free(&out);
	const om_tensor *in1[] = {&t, NULL}; /* k omitted: 0, main diagonal kept */
	assert_int_equal(run(n, 14, in1, &out, &st), OM_OK);
	assert_true(((float *)out.data)[5] == 6.0f && ((float *)out.data)[6] == 0.0f);
	om_tensor_free(&out);
	t = nt_tensor(OM_FLOAT, 1, (int64_t[]){3}, x);
	assert_int_equal(run(n, 14, in1, &out, &st), OM_ERR_INVALID_MODEL);
	nt_free(m);
}

/* 4-bit elements through Slice, Pad and Concat; string elements through Pad and Concat */
static void subbyte_and_strings(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Slice", 5, 1);
	const uint8_t x4[3] = {0x21, 0x43, 0x05}; /* uint4 [1, 2, 3, 4, 5] */
	om_tensor t = nt_tensor(OM_UINT4, 1, (int64_t[]){5}, x4), out;
	om_tensor s = NT_I64(-1), e = NT_I64(INT64_MIN), a = NT_I64(0), p = NT_I64(-2);
	const om_tensor *in[] = {&t, &s, &e, &a, &p};
	om_status st;
	assert_int_equal(run(n, 13, in, &out, &st), OM_OK); /* [5, 3, 1] */
	assert_int_equal(out.nbytes, 2);
	assert_memory_equal(out.data, ((uint8_t[]){0x35, 0x01}), 2);
	om_tensor_free(&out);
	nt_free(m);

	n = nt_node(&m, "Pad", 3, 1);
	const uint8_t v4 = 0x0f;
	om_tensor pads = NT_I64(1, 2), cv = nt_tensor(OM_UINT4, 0, NULL, &v4);
	const om_tensor *in2[] = {&t, &pads, &cv};
	assert_int_equal(run(n, 13, in2, &out, &st), OM_OK); /* [15, 1, 2, 3, 4, 5, 15, 15] */
	assert_memory_equal(out.data, ((uint8_t[]){0x1f, 0x32, 0x54, 0xff}), 4);
	om_tensor_free(&out);
	const om_str xs[2] = {{"ab", 2}, {"c", 1}}, vs = {"pad", 3};
	t = nt_tensor(OM_STRING, 1, (int64_t[]){2}, xs);
	cv = nt_tensor(OM_STRING, 0, NULL, &vs);
	pads = NT_I64(0, 1);
	assert_int_equal(run(n, 13, in2, &out, &st), OM_OK);
	const om_str *o = out.data;
	assert_int_equal(o[2].len, 3);
	assert_memory_equal(o[2].ptr, "pad", 3);
	assert_memory_equal(o[1].ptr, "c", 1);
	om_tensor_free(&out);
	nt_free(m);

	n = nt_node(&m, "Concat", 2, 1);
	nt_int(n, "axis", 0);
	const om_tensor *in3[] = {&t, &t};
	assert_int_equal(run(n, 13, in3, &out, &st), OM_OK);
	o = out.data;
	assert_int_equal(om_tensor_numel(&out), 4);
	assert_memory_equal(o[3].ptr, "c", 1);
	assert_ptr_not_equal(o[3].ptr, xs[1].ptr);
	om_tensor_free(&out);
	const uint8_t y4[1] = {0x76}; /* int4 [6, 7] */
	om_tensor ta = nt_tensor(OM_INT4, 1, (int64_t[]){3}, x4);
	om_tensor tb = nt_tensor(OM_INT4, 1, (int64_t[]){2}, y4);
	const om_tensor *in4[] = {&ta, &tb};
	assert_int_equal(run(n, 13, in4, &out, &st), OM_OK); /* [1, 2, 3, 6, 7] */
	assert_int_equal(out.nbytes, 3);
	assert_memory_equal(out.data, ((uint8_t[]){0x21, 0x63, 0x07}), 3);
	om_tensor_free(&out);
	nt_free(m);
}

/* ---- random nodes: any result is a value, never an out-of-bounds access (ASan) ----------- */

static void random_nodes(void **state)
{
	(void)state;
	static const char *const ops[] = {"Transpose", "Concat", "Split", "Slice", "Expand",
					  "Tile",      "Pad",    "Trilu"};
	static const char *const modes[] = {"constant", "edge", "reflect", "wrap", "other"};
	static unsigned char buf[3][256 * 16];
	int64_t ints[5][12];
	nt_rng r = {0x9e3779b97f4a7c15u};
	for (int it = 0; it < 3000; it++) {
		const int o = (int)nt_rand(&r, 0, 7);
		om_tensor x = nt_rand_tensor(&r, buf[0]), t[5], out[3];
		const om_tensor *in[5] = {&x, NULL, NULL, NULL, NULL};
		int32_t nin = 1, nout = 1;
		int64_t opset = 13;
		om_model *m;
		om_node *n;
		switch (o) {
		case 1: /* Concat: inputs like x with another extent on one axis, or anything */
			nin = (int32_t)nt_rand(&r, 1, 3);
			for (int32_t i = 1; i < nin; i++) {
				t[i] = nt_rand(&r, 0, 2) ? x : nt_rand_tensor(&r, buf[i]);
				const int32_t rk = t[i].rank;
				const int32_t ax = rk ? (int32_t)nt_rand(&r, 0, rk - 1) : 0;
				if (rk)
					t[i].dims[ax] = nt_rand(&r, 0, 3);
				t[i].nbytes = om_tensor_bytes_for(t[i].dtype, t[i].rank, t[i].dims);
				in[i] = &t[i];
			}
			break;
		case 2:
			nout = (int32_t)nt_rand(&r, 1, 3);
			opset = nt_rand(&r, 0, 1) ? 18 : nt_rand(&r, 0, 1) ? 13 : 11;
			if (opset >= 13 && nt_rand(&r, 0, 1)) {
				nin = 2;
				const int64_t len = nout + nt_rand(&r, -1, 1);
				t[1] = nt_rand_ints(&r, ints[1], len, -1, 4, 1);
				in[1] = &t[1];
			}
			break;
		case 3:
			opset = nt_rand(&r, 0, 3) ? 13 : 9;
			nin = opset >= 10 ? 5 : 1;
			const int64_t k = nt_rand(&r, 0, x.rank + 1);
			for (int32_t i = 1; i < nin; i++) {
				const int64_t len = nt_rand(&r, 0, 9) ? k : nt_rand(&r, 0, 5);
				t[i] = nt_rand_ints(&r, ints[i], len, -6, 6, 1);
				in[i] = nt_rand(&r, 0, 4) || i < 3 ? &t[i] : NULL;
			}
			/* mostly distinct axes */
			for (int64_t i = 0; i < k && nt_rand(&r, 0, 4); i++)
				ints[3][i] = (i + nt_rand(&r, 0, 1) * 2) % (x.rank ? x.rank : 1) -
					     (nt_rand(&r, 0, 1) ? x.rank : 0);
			for (int64_t i = 0; i < k; i++) /* small steps, now and then 0 */
				ints[4][i] = nt_rand(&r, 0, 9) ? nt_rand(&r, -3, 3) : ints[4][i];
			break;
		case 4:
			nin = 2;
			t[1] = nt_rand_ints(&r, ints[1], nt_rand(&r, 0, 5), -1, 4, 0);
			in[1] = &t[1];
			break;
		case 5:
			nin = 2;
			t[1] = nt_rand_ints(&r, ints[1], x.rank + nt_rand(&r, -1, 1), -1, 3, 0);
			in[1] = &t[1];
			break;
		case 6:
			opset = (int64_t[]){2, 11, 13, 18, 19}[nt_rand(&r, 0, 4)];
			nin = opset >= 11 ? 4 : 1;
			if (opset >= 11) {
				const int64_t len = 2 * x.rank + nt_rand(&r, -1, 0);
				t[1] = nt_rand_ints(&r, ints[1], len, -3, 3, 0);
				t[2] = nt_tensor(x.dtype, 0, NULL, x.data);
				t[3] = nt_rand_ints(&r, ints[3], nt_rand(&r, 0, 4), -5, 4, 1);
				in[1] = &t[1];
				in[2] = nt_rand(&r, 0, 1) ? &t[2] : NULL;
				in[3] = nt_rand(&r, 0, 1) ? &t[3] : NULL;
			}
			break;
		case 7:
			opset = 14;
			nin = 2;
			t[1] = nt_rand_ints(&r, ints[1], 1, -5, 5, 1);
			in[1] = nt_rand(&r, 0, 3) ? &t[1] : NULL;
			break;
		default:
			break;
		}
		n = nt_node(&m, ops[o], nin, nout);
		for (int32_t i = 0; i < nin; i++)
			if (!in[i])
				n->in[i] = NULL;
		int64_t a[6];
		const int64_t k = nt_rand(&r, 0, 5);
		for (int64_t i = 0; i < k; i++)
			a[i] = nt_rand(&r, -5, 5);
		if (o == 0 && nt_rand(&r, 0, 3))
			nt_ints(n, "perm", a, k);
		if ((o == 1 || o == 2) && nt_rand(&r, 0, 3))
			nt_int(n, "axis", a[0] * (k > 0));
		if (o == 2 && nt_rand(&r, 0, 1))
			nt_int(n, "num_outputs", nt_rand(&r, 0, 3));
		if (o == 2 && opset < 13 && nt_rand(&r, 0, 1))
			nt_ints(n, "split", a, k);
		if (o == 3 && opset < 10) {
			nt_ints(n, "starts", a, k);
			nt_ints(n, "ends", a, nt_rand(&r, 0, 1) ? k : 0);
			if (nt_rand(&r, 0, 1))
				nt_ints(n, "axes", a, k);
		}
		if (o == 6) {
			nt_str(n, "mode", modes[nt_rand(&r, 0, 4)]);
			if (opset < 11)
				nt_ints(n, "pads", a, k);
		}
		if (o == 7)
			nt_int(n, "upper", nt_rand(&r, 0, 1));
		om_status st = {0};
		const om_kind rc = om_eval_node(n, opset, in, out, &st);
		nt_check_run(rc, &st, out, nout);
		nt_free(m);
	}
}

/* om_strided_copy against the per-element definition, over shapes whose axes it merges (runs
 * contiguous across axes, extent-1 axes) and ones it must not (broadcast 0, negative and
 * gapped strides, a permutation): int32 elements of a source of 16384 */
static void strided_copy_merges(void **state)
{
	(void)state;
	int32_t src[16384];
	int32_t got[4096], want[4096];
	for (int i = 0; i < 16384; i++)
		src[i] = i;
	srand(7);
	for (int iter = 0; iter < 3000; iter++) {
		const int32_t rank = 1 + rand() % 5;
		int64_t dims[5], st[5], numel = 1;
		for (int32_t a = 0; a < rank; a++) {
			dims[a] = rand() % 4 == 0 ? 1 : 1 + rand() % 5;
			numel *= dims[a];
		}
		/* dense strides, then some axes broadcast, reversed, gapped or swapped */
		int64_t s = 1;
		for (int32_t a = rank - 1; a >= 0; a--)
			st[a] = s, s *= dims[a];
		const int kind = rand() % 4;
		for (int32_t a = 0; a < rank && kind; a++) {
			const int r = rand() % 4;
			st[a] = kind == 1 && r == 0   ? 0
				: kind == 2 && r == 0 ? -st[a]
				: kind == 3 && r == 0 ? st[a] * 2
						      : st[a];
		}
		if (rank > 1 && rand() % 4 == 0) {
			const int64_t t = st[0];
			st[0] = st[rank - 1], st[rank - 1] = t;
		}
		/* the lowest and highest offsets reached: the base sits so that both are in src */
		int64_t lo = 0, hi = 0;
		for (int32_t a = 0; a < rank; a++)
			if (st[a] < 0)
				lo += st[a] * (dims[a] - 1);
			else
				hi += st[a] * (dims[a] - 1);
		assert_true(hi - lo < 16384);
		const int32_t *base = src - lo;
		int64_t idx[5] = {0};
		for (int64_t o = 0; o < numel; o++) {
			int64_t off = 0;
			for (int32_t a = 0; a < rank; a++)
				off += idx[a] * st[a];
			want[o] = base[off];
			for (int32_t a = rank - 1; a >= 0; a--) {
				if (++idx[a] < dims[a])
					break;
				idx[a] = 0;
			}
		}
		memset(got, 0xff, sizeof got);
		om_strided_copy(got, base, sizeof(int32_t), rank, dims, st);
		assert_memory_equal(got, want, (size_t)numel * sizeof(int32_t));
		assert_int_equal(got[numel], -1); /* nothing written past the end */
	}
}

static void flags(void **state)
{
	(void)state;
	const char *ops[] = {"Transpose", "Concat", "Split", "Slice", "Expand",
			     "Tile",      "Pad",    "Trilu"};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		const om_op *op = om_op_find("", ops[i], 23);
		assert_non_null(op);
		assert_true(op->flags & OM_OP_EXACT);
		assert_false(op->flags & OM_OP_VIEW);
	}
	assert_int_equal(om_op_find("", "Slice", 9)->since, 1);
	assert_int_equal(om_op_find("", "Pad", 17)->since, 11);
	assert_int_equal(om_op_find("", "Split", 17)->since, 13);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(transpose_all_perms), cmocka_unit_test(transpose_tiles),
		cmocka_unit_test(transpose_int4_and_strings), cmocka_unit_test(transpose_merge),
		cmocka_unit_test(infer_without_data),  cmocka_unit_test(concat),
		cmocka_unit_test(split),               cmocka_unit_test(slice_sentinels),
		cmocka_unit_test(slice_axes),          cmocka_unit_test(expand_tile),
		cmocka_unit_test(pad_modes),           cmocka_unit_test(pad_forms),
		cmocka_unit_test(trilu),               cmocka_unit_test(subbyte_and_strings),
		cmocka_unit_test(random_nodes),        cmocka_unit_test(strided_copy_merges),
		cmocka_unit_test(flags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
