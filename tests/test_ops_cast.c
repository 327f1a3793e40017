/* test_ops_cast.c — Cast and CastLike: float16/bfloat16 rounding (ties to even, NaN,
 * overflow), float8 with and without saturate, float -> integer, bool, strings. */
#include <stdint.h>
#include <stdlib.h>

#include "half.h"
#include "nodetest.h"

/* Casts n elements of src (type sdt) to `to`; returns the status, out holds the result. */
static om_kind cast(int32_t sdt, const void *src, int64_t n, int64_t to, int64_t saturate,
                    om_tensor *out)
{
	om_model *m;
	om_node *nd = nt_node(&m, "Cast", 1, 1);
	nt_int(nd, "to", to);
	if (saturate >= 0)
		nt_int(nd, "saturate", saturate);
	om_tensor x = nt_tensor(sdt, 1, (int64_t[]){n}, src);
	om_kind rc = nt_run(nd, 19, (const om_tensor *[]){&x}, out);
	om_model_free(m);
	return rc;
}

static float f32(uint32_t bits)
{
	return om_bits_f32(bits);
}

static void float_to_half(void **state)
{
	(void)state;
	const float x[] = {
	    1.0f + 0x1p-11f,     /* tie: to even 1.0 */
	    1.0f + 3 * 0x1p-11f, /* tie: to even 1 + 2^-9 */
	    65519.0f,            /* below the halfway point: 65504 */
	    65520.0f,            /* halfway to 65536: overflows to inf */
	    -1e9f,
	    NAN,
	    -0.0f,
	    0x1p-24f,     /* smallest subnormal */
	    0x1p-25f,     /* tie: to even 0 */
	    3 * 0x1p-26f, /* above the tie: smallest subnormal */
	};
	om_tensor out;
	assert_int_equal(cast(OM_FLOAT, x, 10, OM_FLOAT16, -1, &out), OM_OK);
	assert_int_equal(out.dtype, OM_FLOAT16);
	const uint16_t *y = out.data;
	const uint16_t want[] = {0x3c00, 0x3c02, 0x7bff, 0x7c00, 0xfc00, 0, 0x8000, 1, 0, 1};
	for (int i = 0; i < 10; i++)
		if (i == 5)
			assert_true((y[i] & 0x7c00) == 0x7c00 && (y[i] & 0x3ff));
		else
			assert_int_equal(y[i], want[i]);
	om_tensor_free(&out);
	/* and back: exact */
	assert_int_equal(cast(OM_FLOAT16, want, 10, OM_FLOAT, -1, &out), OM_OK);
	const float *z = out.data;
	assert_true(z[1] == 1.0f + 0x1p-9f && z[2] == 65504.0f && isinf(z[3]) && z[7] == 0x1p-24f);
	om_tensor_free(&out);
}

static void float_to_bfloat16(void **state)
{
	(void)state;
	const float x[] = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, f32(0x7f7fffff), NAN, -2.0f};
	om_tensor out;
	assert_int_equal(cast(OM_FLOAT, x, 5, OM_BFLOAT16, -1, &out), OM_OK);
	const uint16_t *y = out.data;
	assert_int_equal(y[0], 0x3f80);
	assert_int_equal(y[1], 0x3f82);
	assert_int_equal(y[2], 0x7f80); /* FLT_MAX rounds up to inf */
	assert_true((y[3] & 0x7f80) == 0x7f80 && (y[3] & 0x7f));
	assert_int_equal(y[4], 0xc000);
	om_tensor_free(&out);
}

/* Cast of n elements at src on `threads` threads (fast mode's kernel: om_cast_half's loops) */
static void cast_threads(int32_t sdt, const void *src, int64_t n, int64_t to, int threads,
			 om_tensor *out)
{
	om_model *m;
	om_node *nd = nt_node(&m, "Cast", 1, 1);
	nt_int(nd, "to", to);
	om_tensor x = nt_tensor(sdt, 1, (int64_t[]){n}, src);
	om_status st = {0};
	if (nt_run_threads(nd, 19, (const om_tensor *[]){&x}, out, 0, threads, &st))
		fail_msg("%s", st.msg);
	om_model_free(m);
}

/* half.h's value of half bits h as float32 bits, a NaN made quiet (the double pivot's) */
static uint32_t ref_half_bits(uint16_t h, int32_t dt)
{
	const float v = dt == OM_FLOAT16 ? om_half_to_float(h) : om_bf16_to_float(h);
	const uint32_t u = om_f32_bits(v);
	return (u & 0x7fffffffu) > 0x7f800000u ? u | 0x400000u : u;
}

/* float16 and bfloat16 <-> float32 in cast_half.c's vector loops, at one and two threads
 * (65536 elements: two pieces), bit for bit against half.h's scalar conversions: every half
 * value (subnormals, infinities, NaNs with payloads: quieted), and floats at every half
 * value, at the ties between neighbours and one ulp either side, and a stride through all
 * float bit patterns; odd lengths at an odd offset (the loops' tails) */
static void half_vector_loops(void **state)
{
	(void)state;
	enum { NH = 1 << 16 };
	uint16_t *h = malloc(sizeof(uint16_t) * NH);
	for (int64_t i = 0; i < NH; i++)
		h[i] = (uint16_t)i;
	for (int t = 0; t < 4; t++) {
		const int32_t dt = t % 2 ? OM_BFLOAT16 : OM_FLOAT16;
		om_tensor out;
		cast_threads(dt, h, NH, OM_FLOAT, 1 + t / 2, &out);
		const uint32_t *y = out.data;
		const char *name = dt == OM_FLOAT16 ? "f16" : "bf16";
		for (int64_t i = 0; i < NH; i++)
			if (y[i] != ref_half_bits(h[i], dt))
				fail_msg("%s 0x%04x: 0x%08x, want 0x%08x", name, (unsigned)h[i],
					 (unsigned)y[i], (unsigned)ref_half_bits(h[i], dt));
		om_tensor_free(&out);
	}
	/* by hand: the smallest subnormal, a signaling NaN quieted, -inf */
	const uint16_t some[] = {0x0001, 0x7c01, 0xfc00};
	om_tensor out;
	cast_threads(OM_FLOAT16, some, 3, OM_FLOAT, 1, &out);
	const uint32_t *sy = out.data;
	assert_true(sy[0] == om_f32_bits(0x1p-24f) && sy[1] == 0x7fc02000u && sy[2] == 0xff800000u);
	om_tensor_free(&out);
	/* floats */
	enum { NS = 1 << 20 };
	const int64_t nf = 4 * NH + NS;
	uint32_t *f = malloc(sizeof(uint32_t) * (size_t)nf);
	int64_t k = 0;
	for (int64_t i = 0; i < NH; i++) {
		const float a = om_half_to_float((uint16_t)i);
		const float b = om_half_to_float((uint16_t)(i + 1));
		const float mid = (float)(((double)a + (double)b) / 2);
		f[k++] = om_f32_bits(a), f[k++] = om_f32_bits(mid);
		f[k++] = om_f32_bits(mid) + 1, f[k++] = om_f32_bits(mid) - 1;
	}
	for (int64_t i = 0; i < NS; i++)
		f[k++] = (uint32_t)(i * 4099 + (i >> 7));
	for (int t = 0; t < 4; t++) {
		const int32_t dt = t % 2 ? OM_BFLOAT16 : OM_FLOAT16;
		cast_threads(OM_FLOAT, f, nf, dt, 1 + t / 2, &out);
		const uint16_t *y = out.data;
		for (int64_t i = 0; i < nf; i++) {
			const float v = om_bits_f32(f[i]);
			const uint16_t want =
				dt == OM_FLOAT16 ? om_float_to_half(v) : om_float_to_bf16(v);
			if (y[i] != want)
				fail_msg("%s of 0x%08x: 0x%04x, want 0x%04x",
					 dt == OM_FLOAT16 ? "f16" : "bf16", (unsigned)f[i],
					 (unsigned)y[i], (unsigned)want);
		}
		om_tensor_free(&out);
	}
	/* tails: odd lengths from an odd offset */
	const int64_t lens[] = {1, 7, 9, 17, 4099};
	for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
		cast_threads(OM_FLOAT, f + 3, lens[i], OM_FLOAT16, 1, &out);
		const uint16_t *y = out.data;
		for (int64_t j = 0; j < lens[i]; j++)
			assert_int_equal(y[j], om_float_to_half(om_bits_f32(f[3 + j])));
		om_tensor_free(&out);
		cast_threads(OM_FLOAT16, h + 3, lens[i], OM_FLOAT, 1, &out);
		const uint32_t *z = out.data;
		for (int64_t j = 0; j < lens[i]; j++)
			assert_int_equal(z[j], ref_half_bits(h[3 + j], OM_FLOAT16));
		om_tensor_free(&out);
	}
	free(f);
	free(h);
}

static void float8(void **state)
{
	(void)state;
	const float x[] = {448, 464,   480,      INFINITY,     -INFINITY,
	                   NAN, -0.0f, 0x1p-10f, 3 * 0x1p-11f, 1e6f};
	static const struct {
		int32_t to;
		int saturate;
		uint8_t want[10];
	} cases[] = {
	    {OM_FLOAT8E4M3FN, 1, {0x7e, 0x7e, 0x7e, 0x7e, 0xfe, 0x7f, 0x80, 0, 1, 0x7e}},
	    /* without saturate 480 still gives 448 (ONNX's reference and ONNX Runtime agree) */
	    {OM_FLOAT8E4M3FN, 0, {0x7e, 0x7e, 0x7e, 0x7f, 0xff, 0x7f, 0x80, 0, 1, 0x7f}},
	    /* FNUZ: max 240, NaN 0x80, no negative zero, smallest subnormal 2^-10 */
	    {OM_FLOAT8E4M3FNUZ, 1, {0x7f, 0x7f, 0x7f, 0x7f, 0xff, 0x80, 0, 1, 2, 0x7f}},
	    {OM_FLOAT8E4M3FNUZ, 0, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 1, 2, 0x80}},
	    /* E5M2: 448 = 1.75 * 2^8 exactly, 464 ties to even 448, 480 = 1.875 * 2^8 -> 512 */
	    {OM_FLOAT8E5M2, 1, {0x5f, 0x5f, 0x60, 0x7b, 0xfb, 0x7e, 0x80, 0x14, 0x16, 0x7b}},
	    {OM_FLOAT8E5M2, 0, {0x5f, 0x5f, 0x60, 0x7c, 0xfc, 0x7e, 0x80, 0x14, 0x16, 0x7c}},
	    {OM_FLOAT8E5M2FNUZ, 1, {0x63, 0x63, 0x64, 0x7f, 0xff, 0x80, 0, 0x18, 0x1a, 0x7f}},
	    {OM_FLOAT8E5M2FNUZ, 0, {0x63, 0x63, 0x64, 0x80, 0x80, 0x80, 0, 0x18, 0x1a, 0x80}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		om_tensor out;
		assert_int_equal(cast(OM_FLOAT, x, 10, cases[i].to, cases[i].saturate, &out),
		                 OM_OK);
		assert_int_equal(out.dtype, cases[i].to);
		for (int k = 0; k < 10; k++)
			if (((uint8_t *)out.data)[k] != cases[i].want[k])
				fail_msg("case %zu element %d: got 0x%02x, want 0x%02x", i, k,
				         ((uint8_t *)out.data)[k], cases[i].want[k]);
		om_tensor_free(&out);
	}
	/* float8 -> float */
	const uint8_t e4[] = {0x7e, 0x01, 0x7f, 0xb8};
	om_tensor out;
	assert_int_equal(cast(OM_FLOAT8E4M3FN, e4, 4, OM_FLOAT, -1, &out), OM_OK);
	const float *y = out.data;
	assert_true(y[0] == 448 && y[1] == 0x1p-9f && isnan(y[2]) && y[3] == -1);
	om_tensor_free(&out);
	const uint8_t e5[] = {0x7c, 0x80, 0x7b};
	assert_int_equal(cast(OM_FLOAT8E5M2FNUZ, e5, 3, OM_FLOAT, -1, &out), OM_OK);
	y = out.data;
	assert_true(y[0] == 32768 && isnan(y[1]) && y[2] == 0x1.cp14f);
	om_tensor_free(&out);
}

static void integers_and_bool(void **state)
{
	(void)state;
	const float x[] = {2.7f, -2.7f, NAN, 300.0f, 0.1f, -1.0f};
	om_tensor out;
	assert_int_equal(cast(OM_FLOAT, x, 6, OM_INT32, -1, &out), OM_OK);
	assert_memory_equal(out.data, ((int32_t[]){2, -2, 0, 300, 0, -1}), 24);
	om_tensor_free(&out);
	assert_int_equal(cast(OM_FLOAT, x, 6, OM_UINT8, -1, &out), OM_OK);
	assert_memory_equal(out.data, ((uint8_t[]){2, 254, 0, 44, 0, 255}), 6);
	om_tensor_free(&out);
	assert_int_equal(cast(OM_FLOAT, x, 6, OM_BOOL, -1, &out), OM_OK);
	assert_memory_equal(out.data, ((uint8_t[]){1, 1, 1, 1, 1, 1}), 6);
	om_tensor_free(&out);
	const float huge[] = {1e30f, -1e30f};
	assert_int_equal(cast(OM_FLOAT, huge, 2, OM_INT64, -1, &out), OM_OK);
	assert_true(((int64_t *)out.data)[0] == INT64_MAX && ((int64_t *)out.data)[1] == INT64_MIN);
	om_tensor_free(&out);
	const int64_t big[] = {(1LL << 53) + 1, -5, 70000};
	assert_int_equal(cast(OM_INT64, big, 3, OM_DOUBLE, -1, &out), OM_OK);
	assert_true(((double *)out.data)[0] == 9007199254740992.0 && ((double *)out.data)[1] == -5);
	om_tensor_free(&out);
	assert_int_equal(cast(OM_INT64, big, 3, OM_INT16, -1, &out), OM_OK);
	assert_memory_equal(out.data, ((int16_t[]){1, -5, 4464}), 6);
	om_tensor_free(&out);
	assert_int_equal(cast(OM_INT64, big, 3, OM_FLOAT16, -1, &out), OM_OK);
	assert_int_equal(((uint16_t *)out.data)[1], 0xc500);
	assert_int_equal(((uint16_t *)out.data)[2], 0x7c00);
	om_tensor_free(&out);
	const uint8_t b[] = {0, 1};
	assert_int_equal(cast(OM_BOOL, b, 2, OM_FLOAT, -1, &out), OM_OK);
	assert_true(((float *)out.data)[0] == 0 && ((float *)out.data)[1] == 1);
	om_tensor_free(&out);
	const uint64_t u[] = {UINT64_MAX};
	assert_int_equal(cast(OM_UINT64, u, 1, OM_FLOAT, -1, &out), OM_OK);
	assert_true(((float *)out.data)[0] == 0x1p64f);
	om_tensor_free(&out);
}

static void strings(void **state)
{
	(void)state;
	const float x[] = {0.1f, 1e-5f, -3, NAN, INFINITY, 0.9767611f};
	om_tensor out;
	assert_int_equal(cast(OM_FLOAT, x, 6, OM_STRING, -1, &out), OM_OK);
	const char *want[] = {"0.1", "1e-05", "-3", "NaN", "INF", "0.9767611"};
	const om_str *s = out.data;
	for (int i = 0; i < 6; i++) {
		assert_int_equal(s[i].len, strlen(want[i]));
		assert_memory_equal(s[i].ptr, want[i], strlen(want[i]));
	}
	om_tensor_free(&out);
	const om_str in[] = {{"0.5", 3}, {"-INF", 4}, {"NaN", 3}, {"+INF", 4}};
	assert_int_equal(cast(OM_STRING, in, 4, OM_FLOAT, -1, &out), OM_OK);
	const float *y = out.data;
	assert_true(y[0] == 0.5f && isinf(y[1]) && y[1] < 0 && isnan(y[2]) && y[3] > 1e38f);
	om_tensor_free(&out);
	const om_str ints[] = {{"-42", 3}, {"7", 1}};
	assert_int_equal(cast(OM_STRING, ints, 2, OM_INT64, -1, &out), OM_OK);
	assert_true(((int64_t *)out.data)[0] == -42 && ((int64_t *)out.data)[1] == 7);
	om_tensor_free(&out);
	const om_str bad[] = {{"12abc", 5}};
	assert_int_equal(cast(OM_STRING, bad, 1, OM_INT32, -1, &out), OM_ERR_INVALID_INPUT);
}

/* 4-bit integers wrap, FLOAT4E2M1 rounds to even and saturates, E8M0 rounds up by default */
static void sub_byte_and_e8m0(void **state)
{
	(void)state;
	const float x[] = {-9, -1, 7, 17, 2.6f};
	om_tensor out;
	assert_int_equal(cast(OM_FLOAT, x, 5, OM_INT4, -1, &out), OM_OK);
	assert_int_equal(out.nbytes, 3);
	assert_memory_equal(out.data, ((uint8_t[]){0xf7, 0x17, 0x02}), 3);
	om_tensor_free(&out);
	const uint8_t packed[] = {0xf7, 0x17, 0x02};
	assert_int_equal(cast(OM_INT4, packed, 5, OM_INT16, -1, &out), OM_OK);
	assert_memory_equal(out.data, ((int16_t[]){7, -1, 7, 1, 2}), 10);
	om_tensor_free(&out);
	assert_int_equal(cast(OM_UINT4, packed, 5, OM_INT16, -1, &out), OM_OK);
	assert_memory_equal(out.data, ((int16_t[]){7, 15, 7, 1, 2}), 10);
	om_tensor_free(&out);
	/* 0.25 ties to 0, 1.25 ties to even 1.0, -3.5 ties to even -4, 1e6 saturates to 6,
	 * NaN becomes -0 (ONNX reference) */
	const float f[] = {0.25f, 1.25f, -3.5f, 1e6f, NAN, 0.5f};
	assert_int_equal(cast(OM_FLOAT, f, 6, OM_FLOAT4E2M1, -1, &out), OM_OK);
	assert_memory_equal(out.data, ((uint8_t[]){0x20, 0x7e, 0x18}), 3);
	om_tensor_free(&out);
	const uint8_t f4[] = {0x7e, 0x18};
	assert_int_equal(cast(OM_FLOAT4E2M1, f4, 4, OM_FLOAT, -1, &out), OM_OK);
	const float *y = out.data;
	assert_true(y[0] == -4 && y[1] == 6 && y[2] == 0 && signbit(y[2]) && y[3] == 0.5f);
	om_tensor_free(&out);
	const float e[] = {0, 0.124f, 0.25f, 1.1f, INFINITY, NAN};
	assert_int_equal(cast(OM_FLOAT, e, 6, OM_FLOAT8E8M0, -1, &out), OM_OK);
	assert_memory_equal(out.data, ((uint8_t[]){0, 124, 125, 128, 0xfe, 0xff}), 6);
	om_tensor_free(&out);
	const uint8_t e8[] = {127, 130, 0xff};
	assert_int_equal(cast(OM_FLOAT8E8M0, e8, 3, OM_FLOAT, -1, &out), OM_OK);
	y = out.data;
	assert_true(y[0] == 1 && y[1] == 8 && isnan(y[2]));
	om_tensor_free(&out);
}

static void castlike_and_errors(void **state)
{
	(void)state;
	om_model *m;
	om_node *nd = nt_node(&m, "CastLike", 2, 1);
	const double x[] = {1.5, -0.25};
	const uint16_t like[] = {0};
	om_tensor tx = nt_tensor(OM_DOUBLE, 2, (int64_t[]){1, 2}, x);
	om_tensor tl = nt_tensor(OM_FLOAT16, 0, NULL, like);
	om_tensor out;
	assert_int_equal(nt_run(nd, 15, (const om_tensor *[]){&tx, &tl}, &out), OM_OK);
	assert_int_equal(out.dtype, OM_FLOAT16);
	assert_int_equal(out.rank, 2);
	assert_int_equal(out.dims[1], 2);
	assert_int_equal(((uint16_t *)out.data)[0], 0x3e00);
	assert_int_equal(((uint16_t *)out.data)[1], 0xb400);
	om_tensor_free(&out);
	om_model_free(m);
	assert_int_equal(cast(OM_FLOAT, x, 1, 999, -1, &out), OM_ERR_INVALID_MODEL);
	assert_int_equal(cast(OM_FLOAT, x, 1, OM_DTYPE_COUNT, -1, &out), OM_ERR_INVALID_MODEL);
	assert_int_equal(cast(OM_FLOAT, x, 1, OM_COMPLEX64, -1, &out), OM_ERR_UNSUPPORTED);
}

/* BitCast keeps the bytes; widths must match */
static void bitcast(void **state)
{
	(void)state;
	om_model *m;
	om_node *nd = nt_node(&m, "BitCast", 1, 1);
	nt_int(nd, "to", OM_INT32);
	const float x[] = {1.0f, -2.0f};
	om_tensor tx = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, x);
	om_tensor out;
	assert_int_equal(nt_run(nd, 26, (const om_tensor *[]){&tx}, &out), OM_OK);
	assert_int_equal(out.dtype, OM_INT32);
	assert_memory_equal(out.data, ((int32_t[]){0x3f800000, (int32_t)0xc0000000u}), 8);
	om_tensor_free(&out);
	nt_int(nd, "to", OM_INT64);
	assert_int_equal(nt_run(nd, 26, (const om_tensor *[]){&tx}, &out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(float_to_half), cmocka_unit_test(float_to_bfloat16),
	    cmocka_unit_test(float8),        cmocka_unit_test(integers_and_bool),
	    cmocka_unit_test(strings),       cmocka_unit_test(castlike_and_errors),
		cmocka_unit_test(sub_byte_and_e8m0),
		cmocka_unit_test(bitcast),
		cmocka_unit_test(half_vector_loops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
