/* test_gemm_int.c — om_igemm_run (both paths: oneDNN's u8s8s32 and the int32 loop) against
 * the definition summed in int64 and wrapped; MatMulInteger over it (batches, broadcast, 1-D
 * operands, every signedness, zero points per tensor/row/column, exact = fast, 1 and 2
 * threads); QLinearMatMul against ONNX's reference; DynamicQuantizeLinear's vector loops
 * against the sequential formula. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_int.h"
#include "igemm_quads.h"
#include "nodetest.h"

static int32_t ld8(const void *p, bool sgn, int64_t o)
{
	return sgn ? ((const int8_t *)p)[o] : ((const uint8_t *)p)[o];
}

/* the definition: sum over k of (a - za)(b - zb) in int64, wrapped to 32 bits */
static int32_t ref_at(const om_igemm *g, int64_t i, int64_t j)
{
	int64_t s = 0;
	const int32_t za = g->za ? g->za[g->nza == 1 ? 0 : i] : 0;
	const int32_t zb = g->zb ? g->zb[g->nzb == 1 ? 0 : j] : 0;
	for (int64_t k = 0; k < g->K; k++) {
		const int64_t a = ld8(g->A, g->a_signed, g->ta ? k * g->lda + i : i * g->lda + k);
		const int64_t b = ld8(g->B, g->b_signed, g->tb ? j * g->ldb + k : k * g->ldb + j);
		s += (a - za) * (b - zb);
	}
	return (int32_t)(uint32_t)(uint64_t)s;
}

/* random bytes, with runs of the extremes (0x00, 0x7f, 0x80, 0xff) that reach the sums' bounds */
static void fill(nt_rng *r, uint8_t *p, int64_t n)
{
	const int64_t mode = nt_rand(r, 0, 3);
	for (int64_t i = 0; i < n; i++)
		p[i] = mode == 0 ? (uint8_t)nt_rand(r, 0, 255)
		       : mode == 1 ? (uint8_t)(nt_rand(r, 0, 1) ? 0xff : 0x00)
		       : mode == 2 ? (uint8_t)(nt_rand(r, 0, 1) ? 0x7f : 0x80)
				   : (uint8_t)nt_rand(r, 0, 3) * 0x55;
}

static void zfill(nt_rng *r, int32_t *z, int64_t n, bool sgn)
{
	for (int64_t i = 0; i < n; i++)
		z[i] = (int32_t)(sgn ? nt_rand(r, -128, 127) : nt_rand(r, 0, 255));
}

/* one random geometry of every kind, checked element by element at 1-3 threads (from 3e6
 * multiply-adds at 2 and 3: split into rows or columns over the pool, uneven last pieces) */
/* an epilogue that copies each piece into d (M x N) and counts the times each element came */
typedef struct epi_copy {
	int32_t *d;
	uint8_t *seen;
	int64_t N;
} epi_copy;

static void copy_piece(void *arg, const int32_t *c, int64_t ldc, int64_t r0, int64_t nr,
		       int64_t c0, int64_t nc)
{
	const epi_copy *e = arg;
	for (int64_t i = 0; i < nr; i++)
		for (int64_t j = 0; j < nc; j++) {
			e->d[(r0 + i) * e->N + c0 + j] = c[i * ldc + j];
			e->seen[(r0 + i) * e->N + c0 + j]++;
		}
}

/* g's product through an epilogue: every element given once, with om_igemm_run's value */
static void check_epilogue(const om_igemm *g0, const int32_t *want, int threads)
{
	const int64_t M = g0->M, N = g0->N;
	epi_copy e = {malloc(sizeof(int32_t) * (size_t)(M * N + 1)), calloc((size_t)(M * N + 1), 1),
		      N};
	int32_t *c = malloc(sizeof(int32_t) * (size_t)(M * g0->ldc + 1)); /* whole-C paths' */
	assert_non_null(e.d), assert_non_null(e.seen), assert_non_null(c);
	const om_igemm_epi epi = {copy_piece, &e};
	om_igemm g = *g0;
	g.C = c, g.epi = &epi;
	assert_true(om_igemm_run(&g, threads));
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++)
			if (e.seen[i * N + j] != 1 || e.d[i * N + j] != want[i * g0->ldc + j])
				fail_msg("epilogue (%s) M %lld N %lld K %lld at (%lld, %lld): seen %d, "
					 "%d want %d", om_igemm_path(&g), (long long)M, (long long)N,
					 (long long)g0->K, (long long)i, (long long)j,
					 e.seen[i * N + j], e.d[i * N + j], want[i * g0->ldc + j]);
	free(e.d), free(e.seen), free(c);
}

static void check_one(nt_rng *r, int64_t M, int64_t N, int64_t K)
{
	om_igemm g = {.M = M, .N = N, .K = K, .ta = nt_rand(r, 0, 1), .tb = nt_rand(r, 0, 1),
		      .a_signed = nt_rand(r, 0, 1), .b_signed = nt_rand(r, 0, 1)};
	g.lda = (g.ta ? M : K) + nt_rand(r, 0, 3);
	g.ldb = (g.tb ? K : N) + nt_rand(r, 0, 3);
	g.ldc = N + nt_rand(r, 0, 2);
	const int64_t na = (g.ta ? K : M) * g.lda + 1, nb = (g.tb ? N : K) * g.ldb + 1;
	uint8_t *a = malloc((size_t)na), *b = malloc((size_t)nb);
	int32_t *za = malloc(sizeof(int32_t) * (size_t)(M + 1));
	int32_t *zb = malloc(sizeof(int32_t) * (size_t)(N + 1));
	int32_t *c = malloc(sizeof(int32_t) * (size_t)(M * g.ldc + 1));
	assert_non_null(a), assert_non_null(b), assert_non_null(za), assert_non_null(zb);
	assert_non_null(c);
	fill(r, a, na), fill(r, b, nb);
	const int64_t zak = nt_rand(r, 0, 2), zbk = nt_rand(r, 0, 2); /* none, one, per row/col */
	zfill(r, za, M, g.a_signed), zfill(r, zb, N, g.b_signed);
	g.A = a, g.B = b, g.C = c;
	g.za = zak ? za : NULL, g.nza = zak == 1 ? 1 : M;
	g.zb = zbk ? zb : NULL, g.nzb = zbk == 1 ? 1 : N;
	for (int threads = 1; threads <= 3; threads++) {
		for (int64_t i = 0; i < M * g.ldc; i++)
			c[i] = 0x5a5a5a5a;
		assert_true(om_igemm_run(&g, threads));
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < g.ldc; j++) {
				const int32_t want = j < N ? ref_at(&g, i, j) : 0x5a5a5a5a;
				if (c[i * g.ldc + j] != want)
					fail_msg("%s M %lld N %lld K %lld ta %d tb %d sa %d sb %d "
						 "za %lld zb %lld threads %d at (%lld, %lld): %d "
						 "want %d", om_igemm_path(&g), (long long)M,
						 (long long)N, (long long)K, g.ta, g.tb, g.a_signed,
						 g.b_signed, (long long)zak, (long long)zbk, threads,
						 (long long)i, (long long)j, c[i * g.ldc + j], want);
			}
		if (M > 0 && N > 0)
			check_epilogue(&g, c, threads);
	}
	free(a), free(b), free(za), free(zb), free(c);
}

/* edge extents (1, odd, vector and block edges), both operand signs, all zero point kinds */
static void igemm_matches_definition(void **state)
{
	(void)state;
	static const int64_t ext[][3] = {{1, 1, 1}, {1, 17, 3}, {3, 5, 7},   {4, 64, 64},
					 {7, 33, 65}, {64, 10, 1024}, {128, 256, 256},
					 {65, 129, 31}, {2, 3, 0},  {1, 1000, 784},
					 {301, 41, 523}, {5, 997, 1031}};
	nt_rng r = {0x9e3779b97f4a7c15ull};
	for (size_t e = 0; e < sizeof ext / sizeof ext[0]; e++)
		for (int rep = 0; rep < 6; rep++)
			check_one(&r, ext[e][0], ext[e][1], ext[e][2]);
}

/* K past the bound of the oneDNN path (sums that wrap): the int32 loop, the same definition */
static void igemm_wraps_like_int32(void **state)
{
	(void)state;
	nt_rng r = {12345};
	for (int rep = 0; rep < 4; rep++)
		check_one(&r, 3, 5, 40000);
	/* the largest K oneDNN takes with every term at its extreme: no wrap, exact */
	const int64_t K = 33025;
	uint8_t *a = malloc((size_t)K);
	int8_t *b = malloc((size_t)K);
	assert_non_null(a), assert_non_null(b);
	memset(a, 255, (size_t)K), memset(b, -128, (size_t)K);
	const int32_t za = 0, zb = 127;
	int32_t c = 0;
	om_igemm g = {.M = 1, .N = 1, .K = K, .A = a, .B = b, .lda = K, .ldb = 1, .ldc = 1,
		      .b_signed = true, .za = &za, .zb = &zb, .nza = 1, .nzb = 1, .C = &c};
	assert_true(om_igemm_run(&g, 2));
	assert_int_equal(c, (int32_t)(255 * -255 * K));
	free(a), free(b);
}

/* MatMulInteger: random shapes with batch broadcast and 1-D operands against the definition,
 * exact and fast mode at 1 and 2 threads giving the same bytes */
static void matmul_integer_random(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "MatMulInteger", 4, 1);
	nt_rng r = {777};
	enum { CAP = 1 << 16 };
	static uint8_t a[CAP], b[CAP];
	static int32_t want[CAP];
	for (int rep = 0; rep < 60; rep++) {
		const int64_t M = nt_rand(&r, 1, 40), N = nt_rand(&r, 1, 40), K = nt_rand(&r, 1, 70);
		const int64_t B0 = nt_rand(&r, 1, 3), B1 = nt_rand(&r, 1, 2);
		const int32_t shape = (int32_t)nt_rand(&r, 0, 4); /* the batch layout */
		int64_t ad[4], bd[4];
		int32_t ar = 0, br = 0;
		if (shape == 1) { /* A 1-D */
			ad[ar++] = K;
		} else {
			if (shape >= 2)
				ad[ar++] = B0, ad[ar++] = B1;
			ad[ar++] = M, ad[ar++] = K;
		}
		if (shape == 4) { /* B 1-D */
			bd[br++] = K;
		} else {
			if (shape == 3)
				bd[br++] = B1; /* broadcast over A's first batch dim */
			bd[br++] = K, bd[br++] = N;
		}
		const int32_t adt = nt_rand(&r, 0, 1) ? OM_INT8 : OM_UINT8;
		const int32_t bdt = nt_rand(&r, 0, 1) ? OM_INT8 : OM_UINT8;
		om_tensor ta = nt_tensor(adt, ar, ad, a), tb = nt_tensor(bdt, br, bd, b);
		fill(&r, a, om_tensor_numel(&ta)), fill(&r, b, om_tensor_numel(&tb));
		const int64_t Me = shape == 1 ? 1 : M, Ne = shape == 4 ? 1 : N;
		const bool arow = nt_rand(&r, 0, 1) && shape < 2, bcol = nt_rand(&r, 0, 1);
		uint8_t zab[64], zbb[64];
		fill(&r, zab, 64), fill(&r, zbb, 64);
		om_tensor tza = nt_tensor(adt, arow ? 1 : 0, (int64_t[]){Me}, zab);
		om_tensor tzb = nt_tensor(bdt, bcol ? 1 : 0, (int64_t[]){Ne}, zbb);
		const om_tensor *in[] = {&ta, &tb, nt_rand(&r, 0, 3) ? &tza : NULL, &tzb};
		/* the reference over the broadcast batches */
		const int64_t nbat = shape >= 2 ? B0 * B1 : 1;
		const bool sa = adt == OM_INT8, sb = bdt == OM_INT8;
		for (int64_t t = 0; t < nbat; t++)
			for (int64_t i = 0; i < Me; i++)
				for (int64_t j = 0; j < Ne; j++) {
					const int64_t aoff = (shape >= 2 ? t * M * K : 0) + i * K;
					const int64_t boff = shape == 3 ? (t % B1) * K * N : 0;
					const int32_t za = !in[2] ? 0 : ld8(zab, sa, arow ? i : 0);
					const int32_t zb = ld8(zbb, sb, bcol ? j : 0);
					int64_t s = 0;
					for (int64_t k = 0; k < K; k++)
						s += (int64_t)(ld8(a, sa, aoff + k) - za) *
						     (ld8(b, sb, boff + k * Ne + j) - zb);
					want[(t * Me + i) * Ne + j] = (int32_t)s;
				}
		const int64_t ny = nbat * Me * Ne;
		for (int mode = 0; mode < 3; mode++) {
			om_tensor out[1];
			om_status st = {0};
			const om_kind rc = nt_run_threads(n, 10, in, out, mode == 0, 1 + (mode == 2),
							  &st);
			assert_int_equal(rc, OM_OK);
			assert_int_equal(om_tensor_numel(&out[0]), ny);
			if (memcmp(out[0].data, want, sizeof(int32_t) * (size_t)ny))
				fail_msg("rep %d shape %d M %lld N %lld K %lld mode %d", rep, shape,
					 (long long)M, (long long)N, (long long)K, mode);
			om_tensor_free(&out[0]);
		}
	}
	om_model_free(m);
}

/* QLinearMatMul: ONNX's reference (exact sums in double, the scale in float, half to even)
 * over random shapes, batches broadcast, every signedness, per-row/column scales, and a K
 * past one int32 chunk */
static void qlinear_matmul_random(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "QLinearMatMul", 8, 1);
	nt_rng r = {31337};
	enum { CAP = 1 << 18 }; /* the big case: up to 3 batches of 70000 */
	static uint8_t a[CAP], b[CAP], want[CAP];
	for (int rep = 0; rep < 40; rep++) {
		const bool big = rep == 39;
		const int64_t M = big ? 1 : nt_rand(&r, 1, 20), N = big ? 1 : nt_rand(&r, 1, 30);
		const int64_t K = big ? 70000 : nt_rand(&r, 1, 80);
		const int64_t ba = nt_rand(&r, 1, 3), bb = nt_rand(&r, 0, 1) ? ba : 1;
		const bool a3 = nt_rand(&r, 0, 1), b3 = nt_rand(&r, 0, 1);
		const int64_t nba = a3 ? ba : 1, nbb = b3 ? bb : 1, nbat = nba > nbb ? nba : nbb;
		const int32_t adt = nt_rand(&r, 0, 1) ? OM_INT8 : OM_UINT8;
		const int32_t bdt = nt_rand(&r, 0, 1) ? OM_INT8 : OM_UINT8;
		const int32_t ydt = nt_rand(&r, 0, 1) ? OM_INT8 : OM_UINT8;
		int64_t ad[3] = {nba, M, K}, bd[3] = {nbb, K, N};
		om_tensor ta = nt_tensor(adt, a3 ? 3 : 2, a3 ? ad : ad + 1, a);
		om_tensor tb = nt_tensor(bdt, b3 ? 3 : 2, b3 ? bd : bd + 1, b);
		fill(&r, a, om_tensor_numel(&ta)), fill(&r, b, om_tensor_numel(&tb));
		float as[32], bs[32];
		for (int i = 0; i < 32; i++)
			as[i] = (float)nt_rand(&r, 1, 100) / 997.0f,
			bs[i] = (float)nt_rand(&r, 1, 100) / 991.0f;
		const float ys = big ? 5000.0f : (float)nt_rand(&r, 1, 100) / 7.0f;
		const bool arow = nt_rand(&r, 0, 1), bcol = nt_rand(&r, 0, 1);
		uint8_t zs[3];
		fill(&r, zs, 3);
		if (big) { /* sums past 2^31: 70000 * 255 * 128 */
			memset(a, adt == OM_INT8 ? 0x7f : 0xff, (size_t)K);
			memset(b, 0x80, (size_t)K);
			zs[0] = zs[1] = 0;
		}
		om_tensor tas = nt_tensor(OM_FLOAT, arow, (int64_t[]){M}, as);
		om_tensor tbs = nt_tensor(OM_FLOAT, bcol, (int64_t[]){N}, bs);
		om_tensor tza = nt_tensor(adt, 0, NULL, &zs[0]), tzb = nt_tensor(bdt, 0, NULL, &zs[1]);
		om_tensor tys = nt_tensor(OM_FLOAT, 0, NULL, &ys), tzy = nt_tensor(ydt, 0, NULL, &zs[2]);
		const om_tensor *in[] = {&ta, &tas, &tza, &tb, &tbs, &tzb, &tys, &tzy};
		const bool sa = adt == OM_INT8, sb = bdt == OM_INT8, sy = ydt == OM_INT8;
		const float lo = sy ? -128 : 0, hi = sy ? 127 : 255;
		for (int64_t t = 0; t < nbat; t++)
			for (int64_t i = 0; i < M; i++)
				for (int64_t j = 0; j < N; j++) {
					const int64_t ao = (nba > 1 ? t : 0) * M * K + i * K;
					const int64_t bo = (nbb > 1 ? t : 0) * K * N + j;
					double s = 0;
					for (int64_t k = 0; k < K; k++)
						s += (double)(ld8(a, sa, ao + k) - ld8(zs, sa, 0)) *
						     (double)(ld8(b, sb, bo + k * N) - ld8(zs + 1, sb, 0));
					const float sc = as[arow ? i : 0] * bs[bcol ? j : 0] / ys;
					float q = rintf((float)s * sc) + (float)ld8(zs + 2, sy, 0);
					q = q < lo ? lo : q > hi ? hi : q;
					want[(t * M + i) * N + j] = (uint8_t)(sy ? (int8_t)q : q);
				}
		for (int mode = 0; mode < 3; mode++) {
			om_tensor out[1];
			om_status st = {0};
			assert_int_equal(nt_run_threads(n, 10, in, out, mode == 0, 1 + (mode == 2),
							&st), OM_OK);
			assert_int_equal(om_tensor_numel(&out[0]), nbat * M * N);
			if (memcmp(out[0].data, want, (size_t)(nbat * M * N)))
				fail_msg("rep %d M %lld N %lld K %lld mode %d", rep, (long long)M,
					 (long long)N, (long long)K, mode);
			om_tensor_free(&out[0]);
		}
	}
	om_model_free(m);
}

/* B packed once (om_igemm_pack): against the definition for A of both signs, with and
 * without a zero point, transposed and strided, several row counts on one packing (the
 * primitives it keeps) and 1-3 threads (rows split over the pool, a shorter last piece);
 * declined where it must be */
static void igemm_packed_matches_definition(void **state)
{
	(void)state;
	nt_rng r = {2718};
	/* K, N, and whether B is stored transposed (N x K: QGemm's transB) */
	static const int64_t ext[][3] = {{256, 256, 0}, {784, 1024, 0}, {64, 300, 1},
					 {33, 517, 1}, {1280, 1000, 1}};
	for (size_t e = 0; e < sizeof ext / sizeof ext[0]; e++) {
		const int64_t K = ext[e][0], N = ext[e][1];
		const bool tb = ext[e][2];
		const int64_t ldb = (tb ? K : N) + (e == 3), nb = (tb ? N : K) * ldb;
		uint8_t *b = malloc((size_t)nb);
		assert_non_null(b);
		fill(&r, b, nb);
		om_igemm_pk *pk = om_igemm_pack((const int8_t *)b, K, N, ldb, tb, 2);
		if (!pk) { /* no oneDNN or no VNNI (om_igemm_run does it all), or a padded B */
			assert_true(ldb != (tb ? K : N) ||
				    !strcmp(om_igemm_path(&(om_igemm){.K = K}), "int32-loop"));
			free(b);
			continue;
		}
		/* the int16 pairs (AVX2 without VNNI) take any A; oneDNN's packed B not all */
		const bool pairs = !strcmp(om_igemm_path(&(om_igemm){.K = K}), "int16-pairs");
		for (int rep = 0; rep < 10; rep++) {
			const int64_t M = rep == 0 ? 1 : nt_rand(&r, 1, 130);
			om_igemm g = {.M = M, .N = N, .K = K, .B = b, .ldb = ldb, .tb = tb,
				      .b_signed = true, .ta = nt_rand(&r, 0, 1),
				      .a_signed = nt_rand(&r, 0, 1)};
			g.lda = g.ta ? M + nt_rand(&r, 0, 2) : K;
			g.ldc = N;
			const int64_t na = (g.ta ? K : M) * g.lda;
			uint8_t *a = malloc((size_t)na);
			int32_t *c = malloc(sizeof(int32_t) * (size_t)(M * g.ldc));
			assert_non_null(a), assert_non_null(c);
			fill(&r, a, na);
			int32_t za = (int32_t)(g.a_signed ? nt_rand(&r, -128, 127) : nt_rand(&r, 0, 255));
			const int32_t zb0 = 0;
			g.A = a, g.C = c;
			g.za = nt_rand(&r, 0, 2) ? &za : NULL, g.nza = 1;
			g.zb = nt_rand(&r, 0, 1) ? &zb0 : NULL, g.nzb = 1;
			const int threads = 1 + rep % 3;
			const bool took = om_igemm_pk_run(pk, &g, threads);
			/* uint8 A with contiguous rows (the quantizers' MatMulInteger) is taken */
			assert_true(took || (!pairs && (g.ta || g.a_signed)));
			for (int64_t i = 0; took && i < M; i++)
				for (int64_t j = 0; j < N; j++)
					if (c[i * g.ldc + j] != ref_at(&g, i, j))
						fail_msg("packed K %lld N %lld M %lld ta %d sa %d za %d "
							 "at (%lld, %lld): %d want %d", (long long)K,
							 (long long)N, (long long)M, g.ta, g.a_signed,
							 g.za != NULL, (long long)i, (long long)j,
							 c[i * g.ldc + j], ref_at(&g, i, j));
			/* what it must decline: another K, a nonzero B zero point, per-row za */
			om_igemm h = g;
			h.K = K - 1;
			assert_false(om_igemm_pk_run(pk, &h, 1));
			const int32_t zb1 = 1;
			h = g, h.zb = &zb1;
			assert_false(om_igemm_pk_run(pk, &h, 1));
			int32_t *zr = malloc(sizeof(int32_t) * (size_t)M);
			assert_non_null(zr);
			for (int64_t i = 0; i < M; i++)
				zr[i] = (int32_t)(g.a_signed ? nt_rand(&r, -128, 127)
							     : nt_rand(&r, 0, 255));
			h = g, h.za = zr, h.nza = M;
			if (pairs) { /* per-row zero points */
				assert_true(om_igemm_pk_run(pk, &h, 2));
				for (int64_t i = 0; i < M; i++)
					for (int64_t j = 0; j < N; j++)
						assert_int_equal(c[i * g.ldc + j], ref_at(&h, i, j));
			} else {
				assert_true(M == 1 || !om_igemm_pk_run(pk, &h, 1));
				h = g, h.a_signed = true;
				assert_false(om_igemm_pk_run(pk, &h, 1));
			}
			free(a), free(c), free(zr);
		}
		om_igemm_pk_free(pk);
		free(b);
	}
}

/* MatMulInteger in a session's setting (a state slot, B a plan-time constant): the packed
 * path made on the first run and reused by the next, at other row counts */
static void matmul_integer_packed_state(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "MatMulInteger", 4, 1);
	nt_rng r = {161803};
	enum { K = 200, N = 96 };
	static uint8_t a[64 * K], b[K * N];
	static int32_t want[64 * N];
	fill(&r, b, K * N);
	void *slot = NULL;
	void (*release)(void *) = NULL;
	const uint8_t za = 7;
	const int8_t zb = 0;
	for (int run = 0; run < 4; run++) {
		const int64_t M = run == 3 ? 64 : 1 + 20 * run;
		fill(&r, a, M * K);
		om_tensor ta = nt_tensor(OM_UINT8, 2, (int64_t[]){M, K}, a);
		om_tensor tb = nt_tensor(OM_INT8, 2, (int64_t[]){K, N}, b);
		om_tensor tza = nt_tensor(OM_UINT8, 0, NULL, &za);
		om_tensor tzb = nt_tensor(OM_INT8, 0, NULL, &zb);
		const om_tensor *in[] = {&ta, &tb, &tza, &tzb};
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				int32_t s = 0;
				for (int64_t k = 0; k < K; k++)
					s += (a[i * K + k] - za) * (int8_t)b[k * N + j];
				want[i * N + j] = s;
			}
		om_tensor out[1];
		om_status st = {0};
		const om_ctx c = {.threads = 1 + (run & 1), .state = &slot,
				  .state_release = &release, .const_in = 2};
		assert_int_equal(nt_run_ctx(n, 10, in, out, c, &st), OM_OK);
		assert_memory_equal(out[0].data, want, sizeof(int32_t) * (size_t)(M * N));
		assert_non_null(slot); /* the state was made (and then reused: same block) */
		om_tensor_free(&out[0]);
	}
	release(slot);
	free(slot);
	om_model_free(m);
}

/* ---- DynamicQuantizeLinear ---------------------------------------------------------------- */

/* the sequential formula (ONNX's reference, round half to even) */
static void dynq_ref(const float *v, int64_t n, uint8_t *y, float *scale, uint8_t *zp)
{
	float lo = 0, hi = 0;
	for (int64_t i = 0; i < n; i++)
		if (v[i] == v[i])
			lo = v[i] < lo ? v[i] : lo, hi = v[i] > hi ? v[i] : hi;
	const float s = (hi - lo) / 255.0f;
	float z = 0;
	const bool ok = s > 0 && isfinite(s);
	if (ok)
		z = fminf(fmaxf(nearbyintf(-lo / s), 0), 255);
	for (int64_t i = 0; i < n; i++) {
		const float q = ok ? nearbyintf(v[i] / s) + z : 0;
		y[i] = (uint8_t)(q != q ? 0 : q < 0 ? 0 : q > 255 ? 255 : q);
	}
	*scale = s, *zp = (uint8_t)z;
}

static void dynq_matches_sequential(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "DynamicQuantizeLinear", 1, 3);
	static const int64_t lens[] = {0, 1, 2, 15, 16, 17, 31, 33, 1000, 4099};
	enum { CAP = 4099 };
	static float x[CAP];
	static uint8_t want[CAP];
	nt_rng r = {4242};
	for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
		for (int kind = 0; kind < 6; kind++) {
			const int64_t len = lens[li];
			for (int64_t i = 0; i < len; i++) {
				const float u = (float)nt_rand(&r, -1000, 1000) / 8.0f;
				/* 0 mixed, 1 positive, 2 negative, 3 zeros (-0 too), 4 NaNs and
				 * ties (multiples of a half step), 5 one huge value */
				x[i] = kind == 1   ? fabsf(u) + 1
				       : kind == 2 ? -fabsf(u) - 1
				       : kind == 3 ? (nt_rand(&r, 0, 1) ? -0.0f : 0.0f)
				       : kind == 4 ? (nt_rand(&r, 0, 5) ? (float)nt_rand(&r, -255, 255) *
										0.5f
									: NAN)
						   : u;
			}
			if (kind == 5 && len > 0)
				x[nt_rand(&r, 0, len - 1)] = 3e38f;
			if (kind == 4 && len > 1) /* the range [-127.5, 127.5]: scale 1, ties at .5 */
				x[0] = -127.5f, x[1] = 127.5f;
			float s = 0;
			uint8_t z = 0;
			dynq_ref(x, len, want, &s, &z);
			om_tensor tx = nt_tensor(OM_FLOAT, 1, &len, x);
			const om_tensor *in[] = {&tx};
			for (int exact = 0; exact <= 1; exact++) {
				om_tensor out[3];
				om_status st = {0};
				assert_int_equal(nt_run_mode(n, 11, in, out, exact, &st), OM_OK);
				if (len)
					assert_memory_equal(out[0].data, want, (size_t)len);
				assert_memory_equal(out[1].data, &s, sizeof s);
				assert_int_equal(*(uint8_t *)out[2].data, z);
				for (int o = 0; o < 3; o++)
					om_tensor_free(&out[o]);
			}
		}
	/* a hand case: [-1, 0, 2.5, 1] -> scale 3.5/255, zp round(255/3.5) = 73 */
	const float h[] = {-1, 0, 2.5f, 1};
	om_tensor th = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, h);
	const om_tensor *in[] = {&th};
	om_tensor out[3];
	assert_int_equal(nt_run(n, 11, in, out), OM_OK);
	const uint8_t hw[] = {0, 73, 255, 146};
	assert_memory_equal(out[0].data, hw, 4);
	assert_int_equal(*(uint8_t *)out[2].data, 73);
	for (int o = 0; o < 3; o++)
		om_tensor_free(&out[o]);
	om_model_free(m);
}

/* om_iquads_run against the definition: A of extreme codes (pairs of one sign past 128 in
 * magnitude: trimmed, their corrections counted), B uint8 or int8 with one zero point or none,
 * rows r0.. of a packed A, strides past the extents, K and N off the quads and panels, 1-3
 * threads, into C and through an epilogue */
static void iquads_matches_definition(void **state)
{
	(void)state;
	if (!om_iquads_ok())
		skip(); /* no AVX2: the kernel is never taken */
	nt_rng r = {1111};
	const int64_t shapes[][3] = {{1, 1, 1},   {4, 16, 4},  {5, 17, 3},  {6, 33, 7},
				     {13, 64, 130}, {48, 5, 576}, {50, 100, 9}, {97, 49, 301}};
	int64_t fixes = 0;
	for (size_t t = 0; t < sizeof shapes / sizeof *shapes; t++) {
		const int64_t M = shapes[t][0], N = shapes[t][1], K = shapes[t][2];
		const int64_t r0 = nt_rand(&r, 0, 3), Mall = M + r0 + nt_rand(&r, 0, 2);
		const int64_t lda = K + nt_rand(&r, 0, 3);
		om_igemm g = {.M = M, .N = N, .K = K, .lda = lda, .ldb = N + nt_rand(&r, 0, 5),
			      .ldc = N + nt_rand(&r, 0, 2), .a_signed = true,
			      .b_signed = nt_rand(&r, 0, 1)};
		uint8_t *a = malloc((size_t)(Mall * lda)), *b = malloc((size_t)(K * g.ldb));
		int32_t *c = malloc(sizeof(int32_t) * (size_t)(M * g.ldc));
		assert_true(a && b && c);
		fill(&r, a, Mall * lda), fill(&r, b, K * g.ldb);
		const int32_t zb = (int32_t)(g.b_signed ? nt_rand(&r, -128, 127) : nt_rand(&r, 0, 255));
		g.zb = nt_rand(&r, 0, 1) ? &zb : NULL, g.nzb = 1;
		om_iquads_a pa;
		assert_true(om_iquads_pack_a((const int8_t *)a, Mall, K, lda, &pa));
		fixes += pa.fix_off[Mall];
		g.A = a + r0 * lda, g.B = b; /* the definition's A: rows r0.. */
		for (int threads = 1; threads <= 3; threads++) {
			g.C = c;
			for (int64_t i = 0; i < M * g.ldc; i++)
				c[i] = 0x5a5a5a5a;
			assert_true(om_iquads_run(&pa, r0, &g, threads));
			for (int64_t i = 0; i < M; i++)
				for (int64_t j = 0; j < g.ldc; j++) {
					const int32_t want = j < N ? ref_at(&g, i, j) : 0x5a5a5a5a;
					if (c[i * g.ldc + j] != want)
						fail_msg("quads M %lld N %lld K %lld sb %d threads %d "
							 "at (%lld, %lld): %d want %d", (long long)M,
							 (long long)N, (long long)K, g.b_signed, threads,
							 (long long)i, (long long)j, c[i * g.ldc + j],
							 want);
				}
			epi_copy e = {malloc(sizeof(int32_t) * (size_t)(M * N)),
				      calloc((size_t)(M * N), 1), N};
			assert_true(e.d && e.seen);
			const om_igemm_epi epi = {copy_piece, &e};
			om_igemm ge = g;
			ge.epi = &epi;
			assert_true(om_iquads_run(&pa, r0, &ge, threads));
			for (int64_t i = 0; i < M * N; i++)
				if (e.seen[i] != 1 || e.d[i] != c[i / N * g.ldc + i % N])
					fail_msg("quads' epilogue M %lld N %lld K %lld at %lld: seen %d",
						 (long long)M, (long long)N, (long long)K, (long long)i,
						 e.seen[i]);
			free(e.d), free(e.seen);
		}
		om_iquads_free_a(&pa);
		free(a), free(b), free(c);
	}
	assert_true(fixes > 0); /* the corrections ran */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(igemm_matches_definition),
		cmocka_unit_test(igemm_wraps_like_int32),
		cmocka_unit_test(matmul_integer_random),
		cmocka_unit_test(qlinear_matmul_random),
		cmocka_unit_test(igemm_packed_matches_definition),
		cmocka_unit_test(matmul_integer_packed_state),
		cmocka_unit_test(dynq_matches_sequential),
		cmocka_unit_test(iquads_matches_definition),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
