/* test_matmul_nbits.c — com.microsoft MatMulNBits (kernels/math/ops_matmul_nbits.c) against a
 * reference computed another way (each weight dequantized alone, the product in double) over
 * bits 2/4/8, block sizes 16-256, K not a multiple of the block, packed, absent and float zero
 * points, bias, batched A, N odd; exact mode on 1 and 3 threads gives the same bits, fast
 * mode (its decoding path for 1-4 rows, every bits and block size, and its prompt panels
 * included) agrees within float rounding (4 sqrt(K) epsilons of sum |a w|); g_idx's blocks per
 * row (random, and each row's own); accuracy_level 4's integer decoding within A's 15-bit
 * rounding (the decoding's rows and the prompt's; 8-bit codes' decoding too), the same bits on 1
 * and 3 threads and as its kernel called alone; bad inputs
 * (g_idx's out of range included) are errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "f32_array.h"
#include "nbits.h"
#include "nodetest.h"

typedef struct nb_case {
	int64_t M, K, N, bits, bs;
	int zp; /* 0 none, 1 packed uint8, 2 float */
	bool bias;
	int gidx; /* g_idx: 0 none, 1 a random block per row, 2 each row's own block (k / bs) */
	int level; /* accuracy_level */
} nb_case;

static uint32_t rng = 12345;
static float frand(void) /* [-1, 1) */
{
	rng = rng * 1664525u + 1013904223u;
	return (float)(rng >> 8) / (float)(1u << 23) - 1.0f;
}

/* y within float rounding of the double product want (+ bias): 4 sqrt(K) float epsilons of
 * sum |a w| (one weight off by a code is about sum |a w| / K), at least 1e-6 */
static void assert_near(const nb_case *t, const om_tensor *y, const double *want,
			const double *mag, const float *bias, const double *extra)
{
	const float *v = y->data;
	for (int64_t i = 0; i < t->M * t->N; i++) {
		const double w = want[i] + (t->bias ? bias[i % t->N] : 0);
		const double tol = 4 * sqrt((double)t->K) * 0x1p-24 * (mag[i] + fabs(w)) + 1e-6 +
				   (extra ? extra[i] : 0);
		if (!(fabs((double)v[i] - w) <= tol))
			fail_msg("M %lld K %lld N %lld bits %lld block %lld: y[%lld] %.9g, "
				 "want %.9g",
				 (long long)t->M, (long long)t->K, (long long)t->N,
				 (long long)t->bits, (long long)t->bs, (long long)i, v[i], w);
	}
}

/* A, the scales, float zero points and bias in float16 (the inputs in[0], 2, 3, 5 that are
 * float): Y is the float16 of the float32 result of the same values, in exact mode on one
 * thread and fast mode on two (the panels convert their sums as they finish them, the other
 * paths after the whole product) */
static void half_matches_float(const om_node *node, const om_tensor *const *in)
{
	om_tensor h[6], r[6];
	const om_tensor *ih[6], *ir[6];
	void *bufs[12] = {0};
	for (int i = 0; i < 6; i++) {
		ih[i] = ir[i] = in[i];
		if (!in[i] || in[i]->dtype != OM_FLOAT || i == 4)
			continue;
		const int64_t n = om_tensor_numel(in[i]);
		h[i] = r[i] = *in[i];
		h[i].dtype = OM_FLOAT16, h[i].nbytes = (size_t)n * 2;
		h[i].data = bufs[2 * i] = malloc((size_t)n * 2 + 1);
		r[i].data = bufs[2 * i + 1] = malloc((size_t)n * 4 + 1);
		om_from_f32(OM_FLOAT16, in[i]->data, n, h[i].data);
		om_to_f32(OM_FLOAT16, h[i].data, n, r[i].data);
		ih[i] = &h[i], ir[i] = &r[i];
	}
	om_status st = {0};
	for (int exact = 0; exact < 2; exact++) {
		om_tensor yh = {0}, yr = {0};
		assert_int_equal(nt_run_threads(node, 1, ih, &yh, exact, 2 - exact, &st), OM_OK);
		assert_int_equal(nt_run_threads(node, 1, ir, &yr, exact, 2 - exact, &st), OM_OK);
		assert_int_equal(yh.dtype, OM_FLOAT16);
		const int64_t n = om_tensor_numel(&yr);
		uint16_t *want = malloc((size_t)n * 2 + 1);
		om_from_f32(OM_FLOAT16, yr.data, n, want);
		assert_memory_equal(yh.data, want, (size_t)n * 2);
		free(want);
		om_tensor_free(&yh), om_tensor_free(&yr);
	}
	for (int i = 0; i < 12; i++)
		free(bufs[i]);
}

static void run_case(const nb_case *t)
{
	const int64_t kb = (t->K + t->bs - 1) / t->bs, blob = t->bs * t->bits / 8;
	const int64_t zrow = (kb * t->bits + 7) / 8, mx = (1 << t->bits) - 1;
	uint8_t *b = calloc((size_t)(t->N * kb * blob), 1), *z8 = calloc((size_t)(t->N * zrow), 1);
	float *s = malloc(sizeof(float) * (size_t)(t->N * kb)), *zf = malloc(sizeof(float) *
									   (size_t)(t->N * kb));
	float *a = malloc(sizeof(float) * (size_t)(t->M * t->K)), *bias = malloc(sizeof(float) *
										(size_t)t->N);
	double *want = calloc((size_t)(t->M * t->N), sizeof(double));
	double *mag = calloc((size_t)(t->M * t->N), sizeof(double)); /* sum |a w| */
	/* level 4's decoding quantizes A to 15 bits a block: sum |w| max|a of the block| / 32766 */
	double *qerr = calloc((size_t)(t->M * t->N), sizeof(double));
	float *amax = calloc((size_t)(t->M * kb + 1), sizeof(float));
	for (int64_t i = 0; i < t->M * t->K; i++) {
		a[i] = frand();
		float *mx_ = &amax[i / t->K * kb + i % t->K / t->bs];
		*mx_ = fabsf(a[i]) > *mx_ ? fabsf(a[i]) : *mx_;
	}
	for (int64_t n = 0; n < t->N; n++)
		bias[n] = frand();
	int32_t *g = malloc(sizeof(int32_t) * (size_t)(t->K ? t->K : 1));
	for (int64_t k = 0; k < t->K; k++) /* g_idx: random blocks, or each row's own */
		g[k] = t->gidx == 1 ? (int32_t)((frand() + 1) * 0.5f * (float)kb) % (int32_t)kb
				    : (int32_t)(k / t->bs);
	uint8_t *codes = malloc((size_t)(t->N * kb * t->bs)), *zq = malloc((size_t)(t->N * kb));
	for (int64_t n = 0; n < t->N; n++)
		for (int64_t k = 0; k < kb; k++) {
			s[n * kb + k] = 0.01f + 0.1f * fabsf(frand());
			zq[n * kb + k] = (uint8_t)((frand() + 1) * 0.5f * (float)mx);
			z8[n * zrow + k * t->bits / 8] |= (uint8_t)(zq[n * kb + k] << (k * t->bits % 8));
			zf[n * kb + k] = (float)zq[n * kb + k] + 0.25f * frand();
			for (int64_t i = 0; i < t->bs; i++) {
				const int64_t q = (int64_t)((frand() + 1) * 0.5f * (float)(mx + 1)) & mx;
				const int64_t bit = i * t->bits;
				b[(n * kb + k) * blob + bit / 8] |= (uint8_t)(q << (bit % 8));
				codes[(n * kb + k) * t->bs + i] = (uint8_t)q;
			}
		}
	for (int64_t n = 0; n < t->N; n++) /* each weight alone: its row's block's scale and zero */
		for (int64_t kk = 0; kk < t->K; kk++) {
			const int64_t blk = t->gidx ? g[kk] : kk / t->bs;
			const float zero = t->zp == 2   ? zf[n * kb + blk]
					   : t->zp == 1 ? (float)zq[n * kb + blk]
							: (float)(1 << (t->bits - 1));
			const float w = ((float)codes[n * kb * t->bs + kk] - zero) * s[n * kb + blk];
			for (int64_t m = 0; m < t->M; m++)
				want[m * t->N + n] += (double)a[m * t->K + kk] * w,
				mag[m * t->N + n] += fabs((double)a[m * t->K + kk] * w),
				qerr[m * t->N + n] += fabs(w) * amax[m * kb + kk / t->bs] / 32766;
		}

	om_model *m = NULL;
	om_node *node = nt_node(&m, "MatMulNBits", 6, 1);
	node->domain = "com.microsoft";
	nt_int(node, "K", t->K), nt_int(node, "N", t->N), nt_int(node, "bits", t->bits);
	nt_int(node, "block_size", t->bs);
	if (t->level)
		nt_int(node, "accuracy_level", t->level);
	om_tensor ta = nt_tensor(OM_FLOAT, 2, (int64_t[]){t->M, t->K}, a);
	om_tensor tb = nt_tensor(OM_UINT8, 3, (int64_t[]){t->N, kb, blob}, b);
	om_tensor ts = nt_tensor(OM_FLOAT, 2, (int64_t[]){t->N, kb}, s);
	om_tensor tz = t->zp == 1 ? nt_tensor(OM_UINT8, 2, (int64_t[]){t->N, zrow}, z8)
				  : nt_tensor(OM_FLOAT, 2, (int64_t[]){t->N, kb}, zf);
	om_tensor tbias = nt_tensor(OM_FLOAT, 1, (int64_t[]){t->N}, bias);
	om_tensor tg = nt_tensor(OM_INT32, 1, (int64_t[]){t->K}, g);
	const om_tensor *in[6] = {&ta, &tb, &ts, t->zp ? &tz : NULL, t->gidx ? &tg : NULL,
				  t->bias ? &tbias : NULL};
	om_tensor y1 = {0}, y3 = {0}, yf = {0};
	om_status st = {0};
	assert_int_equal(nt_run_threads(node, 1, in, &y1, 1, 1, &st), OM_OK);
	assert_int_equal(nt_run_threads(node, 1, in, &y3, 1, 3, &st), OM_OK);
	assert_int_equal(nt_run_threads(node, 1, in, &yf, 0, 2, &st), OM_OK);
	nt_assert_shape(&y1, 2, (int64_t[]){t->M, t->N});
	assert_memory_equal(y1.data, y3.data, y1.nbytes); /* exact: thread count changes no bit */
	assert_near(t, &y1, want, mag, bias, NULL);
	half_matches_float(node, in);
	/* level 4's integer products (decoding where the CPU has AVX512-VNNI or AVX2, prompts
	 * with AVX512-VNNI): within A's rounding, the same bits on 3 threads, and the bits of
	 * the kernel called alone (the node ran it) */
	const bool decode = t->M <= OM_NBITS_DECODE_ROWS;
	const bool vnni = t->level == 4 && !t->gidx;
	assert_near(t, &yf, want, mag, bias, vnni ? qerr : NULL);
	if (vnni) {
		om_tensor yf3 = {0};
		assert_int_equal(nt_run_threads(node, 1, in, &yf3, 0, 3, &st), OM_OK);
		assert_memory_equal(yf.data, yf3.data, yf.nbytes);
		om_tensor_free(&yf3);
		const om_nbits p = {.M = t->M, .N = t->N, .K = t->K, .bits = t->bits, .bs = t->bs,
				    .kb = kb, .blob = blob, .zp_row = zrow, .b = b,
				    .zp8 = t->zp == 1 ? z8 : NULL, .scales = s,
				    .zpf = t->zp == 2 ? zf : NULL, .bias = t->bias ? bias : NULL,
				    .a = a, .y = malloc(yf.nbytes)};
		if (t->bits == 8 && decode && om_nbits_bytes_ok(&p)) {
			void *buf = malloc(om_nbits_bytes_bytes(&p));
			assert_true(om_nbits_bytes(&p, 1, buf));
			assert_memory_equal(p.y, yf.data, yf.nbytes);
			/* AVX2's int16 products and AVX512-VNNI's bytes (the node runs
			 * one), each within A's rounding */
			for (int vnni = 0; vnni < 2; vnni++) {
				if (vnni && !om_nbits_vnni_cpu()) {
					print_message("no AVX512-VNNI here: its 8-bit "
						      "decoding not run\n");
					continue;
				}
				memset(p.y, 0, yf.nbytes);
				assert_true(om_nbits_bytes_on(&p, 2, buf, vnni));
				om_tensor yv = yf;
				yv.data = p.y;
				assert_near(t, &yv, want, mag, bias, qerr);
			}
			free(buf);
		} else if (t->bits == 2 && decode && om_nbits_crumbs_ok(&p)) {
			void *buf = malloc(om_nbits_crumbs_bytes(&p));
			assert_true(om_nbits_crumbs(&p, 1, buf));
			assert_memory_equal(p.y, yf.data, yf.nbytes);
			free(buf);
		} else if (decode ? om_nbits_vnni_ok(&p) : om_nbits_vnni_gemm_ok(&p)) {
			void *buf = malloc(decode ? om_nbits_vnni_bytes(&p)
						  : om_nbits_vnni_gemm_bytes(&p, 1));
			assert_true(decode ? om_nbits_vnni(&p, 1, buf)
					   : om_nbits_vnni_gemm(&p, 1, buf));
			assert_memory_equal(p.y, yf.data, yf.nbytes);
			free(buf);
		} else {
			print_message("no AVX512-VNNI or AVX2 here: level 4 "
				      "ran the float path\n");
		}
		free(p.y);
	}
#if OM_NBITS_DECODE8
	/* the decoding loop in 8-lane vectors (AVX2 without AVX-512 runs it through the node;
	 * called here on any CPU with AVX2 and FMA) */
	if (t->M >= 1 && t->M <= OM_NBITS_DECODE_ROWS && !t->gidx &&
	    __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		const om_nbits p = {.M = t->M, .N = t->N, .K = t->K, .bits = t->bits, .bs = t->bs,
				    .kb = kb, .blob = blob, .zp_row = zrow, .b = b,
				    .zp8 = t->zp == 1 ? z8 : NULL, .scales = s,
				    .zpf = t->zp == 2 ? zf : NULL, .bias = t->bias ? bias : NULL,
				    .a = a, .y = malloc(yf.nbytes)};
		assert_true(om_nbits_decode8(&p, 2));
		om_tensor y8 = yf;
		y8.data = p.y;
		assert_near(t, &y8, want, mag, bias, NULL);
		free(p.y);
	}
#endif
	om_tensor_free(&y1), om_tensor_free(&y3), om_tensor_free(&yf);
	nt_free(m);
	free(b), free(z8), free(s), free(zf), free(a), free(bias), free(want), free(mag);
	free(qerr), free(amax);
	free(g), free(codes), free(zq);
}

static void products(void **state)
{
	(void)state;
	static const nb_case cases[] = {
		{1, 64, 17, 4, 32, 1, true, 0, 0},   {5, 40, 33, 4, 16, 0, false, 0, 0},
		{3, 200, 40, 8, 64, 1, false, 0, 0}, {2, 48, 9, 2, 16, 1, true, 0, 0},
		{4, 130, 21, 4, 128, 2, true, 0, 0}, {64, 256, 200, 4, 32, 1, true, 0, 0}, /* tiles split */
		{0, 32, 8, 4, 32, 1, false, 0, 0},   {300, 96, 70, 2, 32, 2, false, 0, 0},
		/* fast mode's 4-bit decoding path (whole blocks of 16 bytes or more) */
		{2, 256, 33, 4, 64, 0, true, 0, 0},  {3, 128, 16, 4, 32, 2, false, 0, 0},
		{4, 512, 7, 4, 128, 1, true, 0, 0},
		/* the decoding path over 1-4 rows: 2, 4 and 8 bits, blocks of 4 to 64 bytes (the
		 * smaller ones scaled per lane), K past the last whole block or chunk, N odd
		 * (groups of 4 or 2 columns and the rest), every kind of zero point, more than
		 * 16 blocks */
		{1, 40, 9, 4, 16, 1, true, 0, 0},    {1, 1000, 13, 4, 32, 1, false, 0, 0},
		{2, 1000, 11, 4, 16, 2, true, 0, 0}, {3, 777, 5, 4, 256, 0, false, 0, 0},
		{4, 520, 10, 4, 32, 1, true, 0, 0},  {1, 600, 7, 8, 16, 1, true, 0, 0},
		{2, 300, 9, 8, 64, 2, false, 0, 0},  {3, 1024, 6, 8, 256, 0, true, 0, 0},
		{4, 96, 5, 8, 32, 1, false, 0, 0},   {1, 300, 9, 2, 16, 1, true, 0, 0},
		{2, 1000, 7, 2, 32, 2, false, 0, 0}, {3, 512, 13, 2, 64, 1, true, 0, 0},
		{4, 70, 3, 2, 256, 0, true, 0, 0},   {1, 16, 1, 2, 16, 1, false, 0, 0},
		/* the prompt path's panels: rows of W past one panel, a last narrow panel; packed
		 * zero points of odd blocks (blocks of 64 bytes), 16 blocks a piece (2 bits), 8
		 * (4 bits: a 4-byte word of zero points) */
		{9, 700, 131, 4, 32, 1, true, 0, 0}, {6, 520, 129, 8, 16, 2, false, 0, 0},
		{7, 600, 37, 4, 128, 1, true, 0, 0}, {7, 300, 21, 2, 16, 1, false, 0, 0},
		{6, 1000, 19, 4, 16, 1, true, 0, 0},
		/* g_idx (GPTQ act-order): random blocks per row on every path's row counts, bits,
		 * kinds of zero point; each row's own block (the fast paths again) */
		{1, 256, 9, 4, 32, 1, true, 1, 0},  {3, 200, 17, 8, 64, 2, false, 1, 0},
		{9, 700, 131, 4, 32, 0, true, 1, 0}, {2, 96, 5, 2, 16, 1, false, 1, 0},
		{2, 1000, 11, 4, 16, 2, true, 2, 0}, {9, 700, 131, 4, 32, 1, true, 2, 0},
		/* accuracy_level 4: the integer decoding over 1-4 rows, blocks of 16 to 256, K
		 * within one piece or past the last, N odd, every kind of zero point; g_idx (the
		 * float paths) */
		{1, 1000, 13, 4, 32, 1, true, 0, 4}, {2, 1000, 11, 4, 16, 2, true, 0, 4},
		{3, 777, 5, 4, 256, 0, false, 0, 4}, {4, 520, 10, 4, 32, 1, true, 0, 4},
		{1, 300, 37, 4, 64, 0, false, 0, 4}, {1, 40, 9, 4, 16, 1, true, 0, 4},
		{4, 130, 21, 4, 128, 2, true, 0, 4}, {2, 2816, 67, 4, 32, 1, false, 0, 4},
		{2, 300, 9, 8, 64, 2, false, 0, 4}, {1, 256, 9, 4, 32, 1, true, 1, 4},
		/* ... 8-bit codes (nbits_bytes.c): blocks of 16 to 512, whole groups of 8 blocks
		 * and a partial one, K past the last block, every kind of zero point */
		{1, 1000, 13, 8, 32, 1, true, 0, 4}, {3, 777, 5, 8, 256, 0, false, 0, 4},
		{4, 520, 10, 8, 16, 1, true, 0, 4},  {1, 2100, 7, 8, 512, 1, true, 0, 4},
		{1, 4100, 3, 8, 16, 2, true, 0, 4},  {2, 2048, 5, 8, 32, 1, false, 0, 4},
		{1, 1100, 9, 8, 64, 0, true, 0, 4},
		/* ... 2-bit codes (nbits_crumbs.c with AVX512-VNNI): blocks of 16 to 512, K
		 * within one piece of 256 codes or past the last, N past groups of 4, every kind
		 * of zero point; a prompt (the float path) */
		{1, 1000, 13, 2, 32, 1, true, 0, 4}, {2, 777, 9, 2, 16, 2, false, 0, 4},
		{3, 300, 5, 2, 64, 0, true, 0, 4},   {4, 2100, 7, 2, 512, 1, false, 0, 4},
		{1, 1300, 11, 2, 128, 1, true, 0, 4}, {1, 200, 4, 2, 256, 2, true, 0, 4},
		{1, 4100, 6, 2, 16, 1, false, 0, 4}, {6, 300, 9, 2, 32, 1, true, 0, 4},
		{1, 272, 5, 2, 16, 1, true, 0, 4},   {2, 96, 5, 2, 32, 2, false, 0, 4}, /* whole
		 * blocks, a partial last piece */
		/* ... 8-bit prompts (nbits_vnni_gemm.c with AVX512-VNNI): rows past passes of
		 * 4, columns past panels of 32, blocks of 16 to 512, K past the last block */
		{9, 300, 9, 8, 64, 1, false, 0, 4}, {5, 1000, 40, 8, 32, 2, true, 0, 4},
		{7, 520, 33, 8, 16, 1, false, 0, 4}, {6, 777, 64, 8, 256, 0, true, 0, 4},
		{10, 2100, 35, 8, 512, 1, true, 0, 4},
		/* ... whole groups of 8 blocks and a last partial one at 64 to 256 codes */
		{1, 1100, 9, 4, 64, 1, true, 0, 4}, {2, 1300, 7, 4, 128, 2, false, 0, 4},
		{1, 2500, 5, 4, 256, 1, true, 0, 4},
		/* accuracy_level 4's prompt product: rows past whole passes of 4 (1 to 3 left),
		 * columns past whole panels of 32 and fewer than one, blocks of 16 to 256, K past
		 * the last block, every kind of zero point, bias */
		{9, 700, 131, 4, 32, 1, true, 0, 4}, {5, 1000, 13, 4, 16, 2, false, 0, 4},
		{6, 777, 64, 4, 256, 0, true, 0, 4}, {7, 520, 33, 4, 64, 1, false, 0, 4},
		{8, 130, 95, 4, 128, 2, true, 0, 4}, {33, 2816, 40, 4, 32, 1, true, 0, 4},
		{7, 1000, 21, 4, 16, 1, true, 0, 4}, /* packed zero points, two blocks in 32 codes */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		run_case(&cases[i]);
}

/* B of the wrong size, bits 3, a block size below 16: errors, not reads out of bounds */
static void bad_inputs(void **state)
{
	(void)state;
	uint8_t b[64] = {0};
	float s[4] = {1, 1, 1, 1}, a[64] = {0};
	const struct {
		int64_t bits, bs, nb;
	} bad[] = {{4, 32, 63}, {3, 32, 64}, {4, 8, 64}};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		om_model *m = NULL;
		om_node *node = nt_node(&m, "MatMulNBits", 3, 1);
		node->domain = "com.microsoft";
		nt_int(node, "K", 64), nt_int(node, "N", 2), nt_int(node, "bits", bad[i].bits);
		nt_int(node, "block_size", bad[i].bs);
		om_tensor ta = nt_tensor(OM_FLOAT, 2, (int64_t[]){1, 64}, a);
		om_tensor tb = nt_tensor(OM_UINT8, 1, (int64_t[]){bad[i].nb}, b);
		om_tensor ts = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 2}, s);
		const om_tensor *in[3] = {&ta, &tb, &ts};
		om_tensor y = {0};
		om_status st = {0};
		assert_int_not_equal(nt_run(node, 1, in, &y), OM_OK);
		(void)st;
		nt_free(m);
	}
	/* g_idx naming a block past the last (InvalidInput, in both modes), or not int32 [K] */
	int32_t g[64] = {0};
	int64_t g64[64] = {0};
	g[40] = 2;
	const struct {
		int32_t dtype, n;
		void *data;
		om_kind want;
	} gbad[] = {{OM_INT32, 64, g, OM_ERR_INVALID_INPUT}, {OM_INT32, 63, g, OM_ERR_INVALID_MODEL},
		    {OM_INT64, 64, g64, OM_ERR_INVALID_MODEL}};
	for (size_t i = 0; i < sizeof gbad / sizeof *gbad; i++)
		for (int exact = 0; exact < 2; exact++) {
			om_model *m = NULL;
			om_node *node = nt_node(&m, "MatMulNBits", 5, 1);
			node->domain = "com.microsoft";
			nt_int(node, "K", 64), nt_int(node, "N", 2), nt_int(node, "bits", 4);
			nt_int(node, "block_size", 32);
			om_tensor ta = nt_tensor(OM_FLOAT, 2, (int64_t[]){1, 64}, a);
			om_tensor tb = nt_tensor(OM_UINT8, 3, (int64_t[]){2, 2, 16}, b);
			om_tensor ts = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 2}, s);
			om_tensor tg = nt_tensor(gbad[i].dtype, 1, (int64_t[]){gbad[i].n}, gbad[i].data);
			const om_tensor *in[5] = {&ta, &tb, &ts, NULL, &tg};
			om_tensor y = {0};
			om_status st = {0};
			assert_int_equal(nt_run_threads(node, 1, in, &y, exact, 1, &st), gbad[i].want);
			nt_free(m);
		}
}

/* accuracy_level 4's integer kernels refuse an A holding a NaN or an infinity (the float paths
 * then run): at a block of 32's 8-value body and its tail, decoding and prompt rows */
static void level4_nonfinite(void **state)
{
	(void)state;
	enum { K = 77, N = 5, BS = 32, KB = 3, M = 9 };
	static uint8_t b[N * KB * BS / 2];
	static float s[N * KB], a[M * K], y[M * N];
	for (int i = 0; i < N * KB * BS / 2; i++)
		b[i] = (uint8_t)(i * 37);
	for (int i = 0; i < N * KB; i++)
		s[i] = 0.01f;
	const float bad[2] = {NAN, INFINITY};
	const int at[2] = {3, K - 2}; /* in a block's 8-value body, in the last block's tail */
	for (int rows = 1; rows <= M; rows += M - 1)
		for (int v = 0; v < 2; v++)
			for (int w = 0; w < 2; w++) {
				for (int i = 0; i < M * K; i++)
					a[i] = frand();
				a[(rows - 1) * K + at[w]] = bad[v];
				const om_nbits p = {.M = rows, .N = N, .K = K, .bits = 4, .bs = BS,
						    .kb = KB, .blob = BS / 2, .b = b, .scales = s,
						    .a = a, .y = y};
				const bool decode = rows <= OM_NBITS_DECODE_ROWS;
				if (!(decode ? om_nbits_vnni_ok(&p) : om_nbits_vnni_gemm_ok(&p)))
					continue;
				void *buf = malloc(decode ? om_nbits_vnni_bytes(&p)
							  : om_nbits_vnni_gemm_bytes(&p, 1));
				assert_false(decode ? om_nbits_vnni(&p, 1, buf)
						    : om_nbits_vnni_gemm(&p, 1, buf));
				free(buf);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(products),
		cmocka_unit_test(bad_inputs),
		cmocka_unit_test(level4_nonfinite),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
