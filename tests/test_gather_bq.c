/* test_gather_bq.c — com.microsoft GatherBlockQuantized (kernels/index/ops_gather_bq.c) against
 * a reference that walks output coordinates (data's and the scales' multi-indices, not the
 * kernel's flat arithmetic): uint8 data with bits 2/4/8, int4 and uint4 with gather and
 * quantize axes anywhere (equal too), packed, absent and per-block zero points, float, float16
 * and bfloat16 scales, indices of rank 0-2, negative; out-of-range indices and malformed
 * attributes or shapes are errors. */
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "nodetest.h"

typedef struct gbq_case {
	int32_t dtype, rank;
	int64_t dims[4];   /* the codes' shape (uint8: the last axis unpacked) */
	int64_t ga, qa, block, bits;
	bool zp;
	int32_t sdt;       /* scales' and output's type */
	int32_t irank;
	int64_t idims[2];
	int64_t idx[8];
} gbq_case;

static uint32_t rng = 2026;
static uint32_t next(void)
{
	rng = rng * 1664525u + 1013904223u;
	return rng >> 8;
}

static int64_t numel(const int64_t *d, int32_t r)
{
	int64_t n = 1;
	for (int32_t i = 0; i < r; i++)
		n *= d[i];
	return n;
}

/* packs codes[0..n) into dst: flat (4-bit types) or each row of `row` codes on its own bytes */
static void pack(uint8_t *dst, const uint8_t *codes, int64_t n, int64_t row, int bits)
{
	const int64_t per = 8 / bits, bpr = (row + per - 1) / per;
	for (int64_t i = 0; i < n; i++) {
		const int64_t r = i / row, e = i % row;
		dst[r * bpr + e / per] |= (uint8_t)(codes[i] << (e % per * bits));
	}
}

static float value_of(const gbq_case *t, const uint8_t *code, const uint8_t *zc,
		      const float *sc, const int64_t *pos)
{
	const int32_t r = t->rank;
	const bool u8 = t->dtype == OM_UINT8;
	int64_t sd[4], di = 0, si = 0;
	memcpy(sd, t->dims, sizeof sd);
	sd[t->qa] = (t->dims[t->qa] + t->block - 1) / t->block;
	for (int32_t a = 0; a < r; a++) {
		di = di * t->dims[a] + pos[a];
		si = si * sd[a] + (a == t->qa ? pos[a] / t->block : pos[a]);
	}
	int64_t q = code[di], z = t->zp ? zc[si] : u8 ? 1 << (t->bits - 1) : 0;
	if (t->dtype == OM_INT4) {
		q = q >= 8 ? q - 16 : q;
		z = z >= 8 ? z - 16 : z;
	}
	return (float)(q - z) * sc[si];
}

static void run_case(const gbq_case *t)
{
	const bool u8 = t->dtype == OM_UINT8;
	const int bits = (int)t->bits;
	const int64_t n = numel(t->dims, t->rank), comps = u8 ? 8 / t->bits : 1;
	int64_t sd[4], dd[4];
	memcpy(sd, t->dims, sizeof sd), memcpy(dd, t->dims, sizeof dd);
	sd[t->qa] = (t->dims[t->qa] + t->block - 1) / t->block;
	dd[t->rank - 1] /= comps;
	const int64_t ns = numel(sd, t->rank), last = t->dims[t->rank - 1];
	const int64_t zlast = (sd[t->rank - 1] + comps - 1) / comps;
	int64_t zd[4];
	memcpy(zd, sd, sizeof zd);
	if (u8)
		zd[t->rank - 1] = zlast;
	uint8_t *code = malloc((size_t)n), *zc = malloc((size_t)ns);
	uint8_t *data = calloc((size_t)n, 1), *zp = calloc((size_t)ns, 1);
	float *sc = malloc(sizeof(float) * (size_t)ns);
	uint16_t *sh = malloc(sizeof(uint16_t) * (size_t)ns);
	const uint32_t top = u8 ? 1u << t->bits : 16;
	for (int64_t i = 0; i < n; i++)
		code[i] = (uint8_t)(next() % top);
	for (int64_t i = 0; i < ns; i++) {
		zc[i] = (uint8_t)(next() % top);
		const float s = 0.01f + (float)(next() % 1000) / 4096.0f;
		sh[i] = t->sdt == OM_FLOAT16 ? om_float_to_half(s) : om_float_to_bf16(s);
		sc[i] = t->sdt == OM_FLOAT ? s : t->sdt == OM_FLOAT16 ? om_half_to_float(sh[i])
								  : om_bf16_to_float(sh[i]);
	}
	if (u8 && bits == 8)
		memcpy(data, code, (size_t)n), memcpy(zp, zc, (size_t)ns);
	else if (u8)
		pack(data, code, n, last, bits), pack(zp, zc, ns, sd[t->rank - 1], bits);
	else
		pack(data, code, n, n, 4), pack(zp, zc, ns, ns, 4);

	om_model *m = NULL;
	om_node *node = nt_node(&m, "GatherBlockQuantized", t->zp ? 4 : 3, 1);
	node->domain = "com.microsoft";
	nt_int(node, "gather_axis", t->ga - (t->ga % 2 ? t->rank : 0)); /* odd axes negative */
	nt_int(node, "quantize_axis", t->qa), nt_int(node, "block_size", t->block);
	nt_int(node, "bits", t->bits);
	const int64_t ni = numel(t->idims, t->irank);
	int32_t idx32[8];
	for (int64_t i = 0; i < ni; i++)
		idx32[i] = (int32_t)t->idx[i];
	om_tensor td = nt_tensor(t->dtype, t->rank, dd, data);
	om_tensor ti = nt_tensor(t->irank % 2 ? OM_INT32 : OM_INT64, t->irank, t->idims,
				 t->irank % 2 ? (void *)idx32 : (void *)t->idx);
	om_tensor ts = nt_tensor(t->sdt, t->rank, sd, t->sdt == OM_FLOAT ? (void *)sc : sh);
	om_tensor tz = nt_tensor(t->dtype, t->rank, zd, zp);
	const om_tensor *in[4] = {&td, &ti, &ts, &tz};
	om_tensor y = {0};
	om_status st = {0};
	om_kind rc = om_eval_node(node, 1, in, &y, &st);
	if (rc)
		fail_msg("%s", st.msg);
	/* expected: the output's coordinates (pre, j, post) walked one by one */
	int64_t od[6], r = 0;
	for (int64_t a = 0; a < t->ga; a++)
		od[r++] = t->dims[a];
	for (int32_t a = 0; a < t->irank; a++)
		od[r++] = t->idims[a];
	for (int64_t a = t->ga + 1; a < t->rank; a++)
		od[r++] = t->dims[a];
	nt_assert_shape(&y, (int32_t)r, od);
	assert_int_equal(y.dtype, t->sdt);
	const int64_t on = numel(od, (int32_t)r);
	for (int64_t o = 0; o < on; o++) {
		int64_t oc[6], pos[4], rest = o;
		for (int64_t a = r - 1; a >= 0; a--)
			oc[a] = rest % od[a], rest /= od[a];
		int64_t j = 0;
		for (int32_t a = 0; a < t->irank; a++)
			j = j * t->idims[a] + oc[t->ga + a];
		for (int64_t a = 0, b = 0; a < t->rank; a++)
			if (a == t->ga) {
				const int64_t k = t->idx[j];
				pos[a] = k < 0 ? k + t->dims[a] : k;
				b += t->irank;
			} else {
				pos[a] = oc[b++];
			}
		const float want = value_of(t, code, zc, sc, pos);
		const float got = t->sdt == OM_FLOAT ? ((const float *)y.data)[o]
			: t->sdt == OM_FLOAT16 ? om_half_to_float(((const uint16_t *)y.data)[o])
					       : om_bf16_to_float(((const uint16_t *)y.data)[o]);
		const float wr = t->sdt == OM_FLOAT ? want : t->sdt == OM_FLOAT16
			? om_half_to_float(om_float_to_half(want))
			: om_bf16_to_float(om_float_to_bf16(want));
		if (got != wr)
			fail_msg("element %lld: got %.9g, want %.9g", (long long)o, got, wr);
	}
	om_tensor_free(&y);
	nt_free(m);
	free(code), free(zc), free(data), free(zp), free(sc), free(sh);
}

static void values(void **state)
{
	(void)state;
	static const gbq_case cases[] = {
		{OM_UINT8, 2, {10, 32}, 0, 1, 16, 4, true, OM_FLOAT, 2, {2, 3},
		 {0, 9, -1, 3, -10, 3}},
		{OM_UINT8, 2, {7, 80}, 0, 1, 32, 4, false, OM_FLOAT16, 1, {3}, {6, 0, -7}},
		{OM_UINT8, 2, {6, 100}, 0, 1, 16, 4, true, OM_FLOAT, 1, {3}, {5, 1, -2}},
		{OM_UINT8, 2, {6, 48}, 0, 1, 16, 8, true, OM_BFLOAT16, 1, {2}, {2, -1}},
		{OM_UINT8, 2, {4, 40}, 0, 1, 16, 8, false, OM_FLOAT, 0, {0}, {3}},
		{OM_UINT8, 2, {5, 48}, 0, 1, 16, 2, true, OM_FLOAT, 1, {3}, {4, 0, -3}},
		{OM_UINT8, 2, {3, 36}, 0, 1, 32, 2, false, OM_FLOAT, 2, {2, 1}, {2, 0}},
		{OM_UINT8, 3, {4, 3, 36}, 0, 2, 16, 4, true, OM_FLOAT, 1, {2}, {3, 0}},
		{OM_INT4, 2, {9, 33}, 0, 1, 16, 4, true, OM_FLOAT, 1, {3}, {8, -9, 4}},
		{OM_INT4, 2, {6, 40}, 0, 1, 16, 4, false, OM_FLOAT16, 2, {2, 2}, {1, 5, -1, 0}},
		{OM_UINT4, 2, {40, 6}, 1, 0, 16, 4, true, OM_FLOAT, 1, {4}, {5, -1, 2, 0}},
		{OM_INT4, 3, {2, 5, 20}, 1, 2, 16, 4, true, OM_FLOAT, 1, {2}, {4, -5}},
		{OM_INT4, 3, {33, 3, 5}, 2, 0, 32, 4, true, OM_FLOAT, 2, {2, 2}, {4, 0, -1, 2}},
		{OM_UINT4, 2, {32, 3}, 0, 0, 16, 4, true, OM_FLOAT, 1, {4}, {31, 0, 16, -32}},
		{OM_UINT4, 3, {3, 17, 1}, 1, 1, 16, 4, true, OM_BFLOAT16, 1, {1}, {-17}},
		{OM_INT4, 2, {5, 16}, 0, 1, 16, 4, true, OM_FLOAT, 1, {0}, {0}}, /* no index */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		run_case(&cases[i]);
}

/* one node over uint8 data [4, 16] (32 codes, 2 blocks of 16) with the given tweaks */
static om_kind run_bad(int64_t index, int64_t block, int64_t bits, int64_t ga, int64_t sblocks,
		       int32_t zdt)
{
	uint8_t data[64] = {0}, zp[8] = {0};
	float sc[8] = {1, 1, 1, 1, 1, 1, 1, 1};
	om_model *m = NULL;
	om_node *node = nt_node(&m, "GatherBlockQuantized", zdt ? 4 : 3, 1);
	node->domain = "com.microsoft";
	nt_int(node, "block_size", block), nt_int(node, "bits", bits);
	nt_int(node, "gather_axis", ga);
	om_tensor td = nt_tensor(OM_UINT8, 2, (int64_t[]){4, 16}, data);
	om_tensor ti = nt_tensor(OM_INT64, 1, (int64_t[]){1}, &index);
	om_tensor ts = nt_tensor(OM_FLOAT, 2, (int64_t[]){4, sblocks}, sc);
	om_tensor tz = nt_tensor(zdt ? zdt : OM_UINT8, 2, (int64_t[]){4, 1}, zp);
	const om_tensor *in[4] = {&td, &ti, &ts, &tz};
	om_tensor y = {0};
	om_status st = {0};
	om_kind rc = om_eval_node(node, 1, in, &y, &st);
	if (!rc)
		om_tensor_free(&y);
	nt_free(m);
	return rc;
}

static void errors(void **state)
{
	(void)state;
	assert_int_equal(run_bad(3, 16, 4, 0, 2, OM_UINT8), OM_OK); /* the baseline runs */
	assert_int_equal(run_bad(-4, 16, 4, 0, 2, 0), OM_OK);
	assert_int_equal(run_bad(4, 16, 4, 0, 2, 0), OM_ERR_INVALID_INPUT);  /* ONNX Runtime 1.30 */
	assert_int_equal(run_bad(-5, 16, 4, 0, 2, 0), OM_ERR_INVALID_INPUT);
	assert_int_equal(run_bad(0, 24, 4, 0, 2, 0), OM_ERR_INVALID_MODEL); /* not a power of 2 */
	assert_int_equal(run_bad(0, 8, 4, 0, 4, 0), OM_ERR_INVALID_MODEL);
	assert_int_equal(run_bad(0, 16, 3, 0, 2, 0), OM_ERR_INVALID_MODEL);
	assert_int_equal(run_bad(0, 16, 4, 1, 2, 0), OM_ERR_INVALID_MODEL); /* uint8: axis 0 */
	assert_int_equal(run_bad(0, 16, 4, 0, 3, 0), OM_ERR_INVALID_MODEL); /* scales' blocks */
	assert_int_equal(run_bad(0, 16, 4, 0, 2, OM_INT8), OM_ERR_INVALID_MODEL);
	assert_int_equal(run_bad(0, 16, 8, 0, 2, 0), OM_ERR_INVALID_MODEL); /* 16 codes: 1 block */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(values),
		cmocka_unit_test(errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
