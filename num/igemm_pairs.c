/* igemm_pairs.c — the 8-bit integer product as int16 pairs on AVX2 (igemm_pairs.h). A task
 * widens a block of IP_RB rows of A (less their zero points) into int16 pairs, then runs a
 * micro-kernel of IP_MR rows x OM_IPAIRS_NR columns over each panel of its group: one
 * vpmaddwd of a broadcast pair of A by 8 pairs of B gives 8 int32 lanes of two products. */
#include <stdlib.h>
#include <string.h>

#include "igemm_pairs.h"
#include "parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define IP_HAVE_KERNEL 1
#define IP_AVX2 __attribute__((target("avx2")))
#endif

enum {
	IP_MR = 6,  /* rows of the micro-kernel: 12 accumulators, 2 of B, 1 broadcast */
	IP_RB = 48, /* rows a task widens at once */
};

/* Below this many multiply-adds a product runs on one thread */
#define IP_1T_MNK 1e6

bool om_ipairs_ok(void)
{
#ifdef IP_HAVE_KERNEL
	return __builtin_cpu_supports("avx2");
#else
	return false;
#endif
}

void om_ipairs_free(om_ipairs_b *pb)
{
	free(pb->data);
	memset(pb, 0, sizeof *pb);
}

/* om_ipairs_pack of a B stored K x N with one zero point or none (the quantizers' weights,
 * a conv's columns): pairs of rows at a time, each panel's columns a contiguous run
 * (vectorizable) */
#ifdef IP_HAVE_KERNEL
/* pack_rows' whole panels [0, full) of the pair of rows r0, r1 (r1 == NULL: zeros) on AVX2:
 * 16 bytes of each widened to int16 less z and interleaved */
IP_AVX2 static void pack_pair_avx2(const uint8_t *r0, const uint8_t *r1, bool sgn, int32_t z,
				   int64_t full, int64_t K2, int16_t *d)
{
	const __m256i zv = _mm256_set1_epi16((int16_t)z);
	for (int64_t p = 0; p < full; p++, d += K2 * OM_IPAIRS_NR * 2) {
		const __m128i a = _mm_loadu_si128((const __m128i *)(r0 + p * OM_IPAIRS_NR));
		__m256i a16 = sgn ? _mm256_cvtepi8_epi16(a) : _mm256_cvtepu8_epi16(a);
		__m256i b16 = _mm256_setzero_si256();
		a16 = _mm256_sub_epi16(a16, zv);
		if (r1) {
			const __m128i b = _mm_loadu_si128((const __m128i *)(r1 + p * OM_IPAIRS_NR));
			b16 = _mm256_sub_epi16(sgn ? _mm256_cvtepi8_epi16(b) : _mm256_cvtepu8_epi16(b),
					       zv);
		}
		const __m256i lo = _mm256_unpacklo_epi16(a16, b16), hi = _mm256_unpackhi_epi16(a16, b16);
		_mm256_store_si256((__m256i *)d, _mm256_permute2x128_si256(lo, hi, 0x20));
		_mm256_store_si256((__m256i *)(d + 16), _mm256_permute2x128_si256(lo, hi, 0x31));
	}
}
#endif

typedef struct ip_pack {
	const om_igemm *g;
	const om_ipairs_b *pb;
} ip_pack;

/* the pairs of rows [q0, q1) of B */
static void pack_rows(void *arg, int64_t q0, int64_t q1)
{
	const om_igemm *g = ((const ip_pack *)arg)->g;
	const om_ipairs_b *pb = ((const ip_pack *)arg)->pb;
	const int64_t K = g->K, N = g->N, K2 = pb->K2, full = N / OM_IPAIRS_NR;
	const int32_t z = g->zb ? g->zb[0] : 0;
	for (int64_t q = q0; q < q1; q++) {
		const bool two = 2 * q + 1 < K;
		const uint8_t *r0 = (const uint8_t *)g->B + 2 * q * g->ldb;
		const uint8_t *r1 = two ? r0 + g->ldb : r0;
		int64_t p = 0;
#ifdef IP_HAVE_KERNEL
		if (om_ipairs_ok()) { /* om_ipairs_run's callers: always */
			pack_pair_avx2(r0, two ? r1 : NULL, g->b_signed, z, full, K2,
				       pb->data + (size_t)q * OM_IPAIRS_NR * 2);
			p = full;
		}
#endif
		for (; p < pb->panels; p++) {
			int16_t *d = pb->data + ((size_t)(p * K2) + (size_t)q) * OM_IPAIRS_NR * 2;
			const int64_t j0 = p * OM_IPAIRS_NR;
			const int64_t nc = p < full ? OM_IPAIRS_NR : N - j0;
			for (int64_t j = 0; j < nc; j++) {
				const int32_t b0 = g->b_signed ? (int8_t)r0[j0 + j] : r0[j0 + j];
				const int32_t b1 = g->b_signed ? (int8_t)r1[j0 + j] : r1[j0 + j];
				d[2 * j] = (int16_t)(b0 - z);
				d[2 * j + 1] = (int16_t)(two ? b1 - z : 0);
			}
			for (int64_t j = nc; j < OM_IPAIRS_NR; j++)
				d[2 * j] = d[2 * j + 1] = 0;
		}
	}
}

/* the panels [p0, p1) of any B (transposed, zero points a column) */
static void pack_panels(void *arg, int64_t p0, int64_t p1)
{
	const om_igemm *g = ((const ip_pack *)arg)->g;
	const om_ipairs_b *pb = ((const ip_pack *)arg)->pb;
	const int64_t K = g->K, N = g->N, K2 = pb->K2;
	for (int64_t p = p0; p < p1; p++) {
		int16_t *d = pb->data + (size_t)(p * K2) * OM_IPAIRS_NR * 2;
		const int64_t j0 = p * OM_IPAIRS_NR;
		for (int64_t q = 0; q < K2; q++, d += OM_IPAIRS_NR * 2)
			for (int64_t j = 0; j < OM_IPAIRS_NR; j++) {
				const int64_t c = j0 + j;
				const int32_t z = c < N ? om_izp_at(g->zb, g->nzb, c) : 0;
				d[2 * j] = (int16_t)(c < N ? om_i8_at(g->B, g->b_signed, g->tb,
								      g->ldb, 2 * q, c) - z
							   : 0);
				d[2 * j + 1] =
					(int16_t)(c < N && 2 * q + 1 < K
							  ? om_i8_at(g->B, g->b_signed, g->tb, g->ldb,
								     2 * q + 1, c) - z
							  : 0);
			}
	}
}

/* elements of B worth a thread of packing */
enum { IP_PACK_GRAIN = 1 << 15 };

bool om_ipairs_pack(const om_igemm *g, om_ipairs_b *pb, int threads)
{
	const int64_t K = g->K, N = g->N, K2 = (K + 1) / 2, P = (N + OM_IPAIRS_NR - 1) / OM_IPAIRS_NR;
	*pb = (om_ipairs_b){K, N, K2, P, NULL};
	const size_t n = (size_t)(P * K2) * OM_IPAIRS_NR * 2;
	if (!(pb->data = aligned_alloc(64, (n * sizeof(int16_t) + 63) / 64 * 64)))
		return false;
	ip_pack a = {g, pb};
	if (!g->tb && (!g->zb || g->nzb == 1))
		om_par_for(threads, K2, 1 + IP_PACK_GRAIN / (2 * N), pack_rows, &a);
	else
		om_par_for(threads, P, 1 + IP_PACK_GRAIN / (OM_IPAIRS_NR * K), pack_panels, &a);
	return true;
}

/* rows [r0, r0 + n) of op(A) less their zero points into a16 (row i at i * 2 * K2 int16, a
 * zero after an odd K) */
static void widen_rows(const om_igemm *g, int64_t r0, int64_t n, int64_t K2, int16_t *a16)
{
	const int64_t K = g->K;
	for (int64_t i = 0; i < n; i++) {
		int16_t *d = a16 + i * 2 * K2;
		const int32_t z = om_izp_at(g->za, g->nza, r0 + i);
		if (!g->ta && g->a_signed) {
			const int8_t *s = (const int8_t *)g->A + (r0 + i) * g->lda;
			for (int64_t k = 0; k < K; k++)
				d[k] = (int16_t)(s[k] - z);
		} else if (!g->ta) {
			const uint8_t *s = (const uint8_t *)g->A + (r0 + i) * g->lda;
			for (int64_t k = 0; k < K; k++)
				d[k] = (int16_t)(s[k] - z);
		} else {
			for (int64_t k = 0; k < K; k++)
				d[k] = (int16_t)(om_i8_at(g->A, g->a_signed, true, g->lda, r0 + i,
							  k) - z);
		}
		if (K % 2)
			d[K] = 0;
	}
}

#ifdef IP_HAVE_KERNEL
/* stores the two accumulators of a row: nc columns of c */
static inline __attribute__((always_inline)) IP_AVX2 void ip_store(int32_t *c, __m256i x0,
								   __m256i x1, int64_t nc)
{
	if (nc == OM_IPAIRS_NR) {
		_mm256_storeu_si256((__m256i *)c, x0);
		_mm256_storeu_si256((__m256i *)(c + 8), x1);
		return;
	}
	int32_t t[OM_IPAIRS_NR];
	_mm256_storeu_si256((__m256i *)t, x0);
	_mm256_storeu_si256((__m256i *)(t + 8), x1);
	memcpy(c, t, sizeof(int32_t) * (size_t)nc);
}

/* C rows [0, mr) x columns [0, nc) = a (mr rows of K2 pairs, row stride K2) times the panel
 * b, mr <= IP_MR: the accumulators named one by one so that they stay in registers (12, with
 * 2 of B, the broadcast and a product: 16) */
IP_AVX2 static void ip_block(int mr, int64_t K2, const int32_t *a, const int16_t *b, int32_t *c,
			     int64_t ldc, int64_t nc)
{
	__m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00,
		c21 = c00, c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
	const int32_t *a0 = a, *a1 = a + (mr > 1) * K2, *a2 = a + (mr > 2) * 2 * K2,
		      *a3 = a + (mr > 3) * 3 * K2, *a4 = a + (mr > 4) * 4 * K2,
		      *a5 = a + (mr > 5) * 5 * K2;
#define IP_ROW(r)                                                                  \
	do {                                                                       \
		const __m256i av = _mm256_set1_epi32(a##r[q]);                     \
		c##r##0 = _mm256_add_epi32(c##r##0, _mm256_madd_epi16(av, b0));    \
		c##r##1 = _mm256_add_epi32(c##r##1, _mm256_madd_epi16(av, b1));    \
	} while (0)
	/* rows past mr read row 0 again (their sums are not stored) */
	for (int64_t q = 0; q < K2; q++, b += OM_IPAIRS_NR * 2) {
		const __m256i b0 = _mm256_load_si256((const __m256i *)b);
		const __m256i b1 = _mm256_load_si256((const __m256i *)(b + 16));
		IP_ROW(0);
		IP_ROW(1);
		IP_ROW(2);
		IP_ROW(3);
		IP_ROW(4);
		IP_ROW(5);
	}
#undef IP_ROW
	ip_store(c, c00, c01, nc);
	if (mr > 1)
		ip_store(c + ldc, c10, c11, nc);
	if (mr > 2)
		ip_store(c + 2 * ldc, c20, c21, nc);
	if (mr > 3)
		ip_store(c + 3 * ldc, c30, c31, nc);
	if (mr > 4)
		ip_store(c + 4 * ldc, c40, c41, nc);
	if (mr > 5)
		ip_store(c + 5 * ldc, c50, c51, nc);
}
#endif

/* tasks (row block, group of panels), the groups inner: a slot widens each row block once */
typedef struct ipjob {
	const om_igemm *g;
	const om_ipairs_b *pb;
	int64_t groups, per; /* groups of `per` panels */
	int16_t *abuf;       /* IP_RB x 2 K2 int16 a slot */
	int64_t *widened;    /* the row block each slot's buffer holds (-1: none) */
	int32_t *tiles;      /* with g->epi: an IP_RB x OM_IPAIRS_NR piece of C a slot */
} ipjob;

static void ip_tasks(void *arg, int64_t lo, int64_t hi, int slot)
{
#ifdef IP_HAVE_KERNEL
	const ipjob *j = arg;
	const om_igemm *g = j->g;
	const int64_t K2 = j->pb->K2, P = j->pb->panels;
	int16_t *a16 = j->abuf + (size_t)slot * IP_RB * 2 * (size_t)K2;
	for (int64_t t = lo; t < hi; t++) {
		const int64_t rb = t / j->groups, grp = t % j->groups;
		const int64_t r0 = rb * IP_RB, nr = g->M - r0 < IP_RB ? g->M - r0 : IP_RB;
		if (j->widened[slot] != rb) {
			widen_rows(g, r0, nr, K2, a16);
			j->widened[slot] = rb;
		}
		const int64_t p1 = (grp + 1) * j->per < P ? (grp + 1) * j->per : P;
		int32_t *tile = j->tiles ? j->tiles + (size_t)slot * IP_RB * OM_IPAIRS_NR : NULL;
		for (int64_t p = grp * j->per; p < p1; p++) {
			const int16_t *b = j->pb->data + (size_t)(p * K2) * OM_IPAIRS_NR * 2;
			const int64_t c0 = p * OM_IPAIRS_NR;
			const int64_t nc = g->N - c0 < OM_IPAIRS_NR ? g->N - c0 : OM_IPAIRS_NR;
			int32_t *c = tile ? tile : g->C + r0 * g->ldc + c0;
			const int64_t ldc = tile ? OM_IPAIRS_NR : g->ldc;
			for (int64_t i = 0; i < nr; i += IP_MR)
				ip_block(nr - i < IP_MR ? (int)(nr - i) : IP_MR, K2,
					 (const int32_t *)(a16 + i * 2 * K2), b, c + i * ldc, ldc, nc);
			if (tile) /* the piece while it is in cache */
				g->epi->fn(g->epi->arg, tile, OM_IPAIRS_NR, r0, nr, c0, nc);
		}
	}
#else
	(void)arg, (void)lo, (void)hi, (void)slot;
#endif
}

bool om_ipairs_run(const om_igemm *g, const om_ipairs_b *pb, int threads)
{
	const int64_t rbs = (g->M + IP_RB - 1) / IP_RB, P = pb->panels;
	const double mnk = (double)g->M * (double)g->N * (double)g->K;
	if (mnk < IP_1T_MNK)
		threads = 1;
	/* row blocks alone when they are enough for the threads, else panels split too */
	const int64_t groups = rbs >= 2 * threads || P < 2 ? 1 : (2 * threads < P ? 2 * threads : P);
	ipjob j = {g, pb, groups, (P + groups - 1) / groups, NULL, NULL, NULL};
	const int64_t tasks = rbs * groups;
	const int slots = om_par_slots(threads, tasks, 1);
	j.abuf = aligned_alloc(64, ((size_t)slots * IP_RB * 2 * (size_t)pb->K2 * sizeof(int16_t) +
				    63) / 64 * 64);
	j.widened = malloc(sizeof(int64_t) * (size_t)slots);
	if (g->epi)
		j.tiles = malloc(sizeof(int32_t) * IP_RB * OM_IPAIRS_NR * (size_t)slots);
	if (!j.abuf || !j.widened || (g->epi && !j.tiles)) {
		free(j.abuf), free(j.widened), free(j.tiles);
		return false;
	}
	for (int s = 0; s < slots; s++)
		j.widened[s] = -1;
	om_par_for_slots(threads, tasks, 1, ip_tasks, &j);
	free(j.abuf), free(j.widened), free(j.tiles);
	return true;
}
