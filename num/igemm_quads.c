/* igemm_quads.c — the 8-bit integer product through vpmaddubsw on AVX2 (igemm_quads.h). B is
 * packed a call into panels of OM_IQUADS_NR columns, each column's four codes of rows 4q to
 * 4q + 3 in one word (as uint8: int8 codes shifted by 128, their zero point with them); a
 * micro-kernel of IQ_MR rows of A by a panel broadcasts a word of A's row and multiplies it
 * with 8 columns' words (vpmaddubsw: pairs of products in int16, exact for the trimmed A),
 * then sums the pairs into int32 lanes (vpmaddwd by ones): 32 products in two multiplies,
 * where the int16 pairs (igemm_pairs.c) take two for 16. A row's corrections follow, each
 * one code of B's row by 8 columns through vpmaddwd. */
#include <stdlib.h>
#include <string.h>

#include "igemm_quads.h"
#include "parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define IQ_HAVE_KERNEL 1
#define IQ_AVX2 __attribute__((target("avx2")))
#endif
#if defined(__GNUC__) && !defined(__clang__)
#define IQ_O2 __attribute__((optimize("O2"))) /* iq_block: see there */
#else
#define IQ_O2
#endif

enum {
	IQ_MR = 4,  /* rows of the micro-kernel: 8 sums, 2 of B, the broadcast, ones, a product */
	IQ_RB = 48, /* rows of A a task (they stay in L2 while the task's panels pass) */
	IQ_PACK_GRAIN = 1 << 15, /* bytes of B worth a thread of packing */
};

/* Below this many multiply-adds a product runs on one thread */
#define IQ_1T_MNK 1e6

bool om_iquads_ok(void)
{
#ifdef IQ_HAVE_KERNEL
	return __builtin_cpu_supports("avx2");
#else
	return false;
#endif
}

void om_iquads_free_a(om_iquads_a *pa)
{
	free(pa->quads), free(pa->rowsum), free(pa->fix_off), free(pa->fix_k), free(pa->fix_v);
	memset(pa, 0, sizeof *pa);
}

bool om_iquads_pays(const om_iquads_a *pa)
{
	return pa->quads && pa->fix_off[pa->M] * 16 <= pa->M * (pa->K / 2);
}

/* whether a1 x u + a2 x v stays in int16 for every u, v in [0, 255]: 255 x 128 = 32640 does,
 * 255 x 129 does not, either sign */
static inline bool pair_safe(int32_t a1, int32_t a2)
{
	const int32_t pos = (a1 > 0 ? a1 : 0) + (a2 > 0 ? a2 : 0);
	const int32_t neg = (a1 < 0 ? -a1 : 0) + (a2 < 0 ? -a2 : 0);
	return (pos <= 128) & (neg <= 128);
}

#ifdef IQ_HAVE_KERNEL
/* unsafe_pairs' 16 pairs at a time: each pair an int16 lane (a1 its low byte) */
IQ_AVX2 static int64_t unsafe_pairs_avx2(const int8_t *a, int64_t K, int64_t *done)
{
	const __m256i zero = _mm256_setzero_si256(), lim = _mm256_set1_epi16(128);
	int64_t n = 0, k = 0;
	for (; k + 32 <= K; k += 32) {
		const __m256i x = _mm256_loadu_si256((const __m256i *)(a + k));
		const __m256i a1 = _mm256_srai_epi16(_mm256_slli_epi16(x, 8), 8);
		const __m256i a2 = _mm256_srai_epi16(x, 8);
		const __m256i pos = _mm256_add_epi16(_mm256_max_epi16(a1, zero),
						     _mm256_max_epi16(a2, zero));
		const __m256i neg = _mm256_add_epi16(_mm256_min_epi16(a1, zero),
						     _mm256_min_epi16(a2, zero)); /* <= 0 */
		const __m256i bad = _mm256_or_si256(_mm256_cmpgt_epi16(pos, lim),
						    _mm256_cmpgt_epi16(_mm256_sub_epi16(zero, lim), neg));
		n += __builtin_popcount((unsigned)_mm256_movemask_epi8(bad)) / 2;
	}
	*done = k;
	return n;
}
#endif

/* the pairs of row a (K codes) that pair_safe refuses */
static int64_t unsafe_pairs(const int8_t *a, int64_t K)
{
	int64_t n = 0, k = 0;
#ifdef IQ_HAVE_KERNEL
	if (om_iquads_ok())
		n = unsafe_pairs_avx2(a, K, &k);
#endif
	for (; k + 1 < K; k += 2)
		n += !pair_safe(a[k], a[k + 1]);
	return n;
}

bool om_iquads_pack_a(const int8_t *A, int64_t M, int64_t K, int64_t lda, om_iquads_a *pa)
{
	const int64_t K4 = (K + 3) / 4;
	*pa = (om_iquads_a){M, K, K4, NULL, NULL, NULL, NULL, NULL};
	int64_t nfix = 0;
	for (int64_t m = 0; m < M; m++)
		nfix += unsafe_pairs(A + m * lda, K);
	pa->quads = aligned_alloc(64, ((size_t)(M * K4) * sizeof(int32_t) + 63) / 64 * 64);
	pa->rowsum = malloc(sizeof(int32_t) * (size_t)M);
	pa->fix_off = malloc(sizeof(int64_t) * (size_t)(M + 1));
	pa->fix_k = malloc(sizeof(int32_t) * (size_t)(nfix + 1));
	pa->fix_v = malloc(sizeof(int32_t) * (size_t)(nfix + 1));
	if (!pa->quads || !pa->rowsum || !pa->fix_off || !pa->fix_k || !pa->fix_v) {
		om_iquads_free_a(pa);
		return false;
	}
	int64_t f = 0;
	for (int64_t m = 0; m < M; m++) {
		const int8_t *a = A + m * lda;
		int8_t *q = (int8_t *)(pa->quads + m * K4);
		int32_t sum = 0;
		for (int64_t k = 0; k < K; k++)
			sum += a[k];
		pa->rowsum[m] = sum;
		memcpy(q, a, (size_t)K);
		memset(q + K, 0, (size_t)(4 * K4 - K));
		pa->fix_off[m] = f;
		for (int64_t k0 = 0; k0 + 1 < K; k0 += 64) {
			const int64_t k1 = K - k0 < 64 ? K : k0 + 64;
			if (!unsafe_pairs(a + k0, k1 - k0)) /* most runs of 32 pairs */
				continue;
			for (int64_t k = k0; k + 1 < k1; k += 2) {
			const int32_t a1 = a[k], a2 = a[k + 1];
			if (pair_safe(a1, a2))
				continue;
			if (f == nfix) { /* never: both counts are pair_safe's */
				om_iquads_free_a(pa);
				return false;
			}
			/* one sign, magnitudes past 128: a2 trimmed to 128 - |a1| (fits int8, a1 != 0) */
			const int32_t t = a2 > 0 ? 128 - a1 : -(128 + a1);
			q[k + 1] = (int8_t)t;
			pa->fix_k[f] = (int32_t)(k + 1);
			pa->fix_v[f++] = (int32_t)(uint16_t)(int16_t)(a2 - t);
			}
		}
	}
	pa->fix_off[M] = f;
	return true;
}

/* B packed: panel p, word q, column j of the panel at data[(p * K4 + q) * 16 + j] (bytes: rows
 * 4q to 4q + 3 as uint8, zero past K and past N) */
typedef struct iq_b {
	int64_t K4, panels;
	uint32_t *data;
} iq_b;

typedef struct iq_pack {
	const om_igemm *g;
	const iq_b *pb;
	uint8_t flip; /* 0x80 for an int8 B: its codes + 128 as uint8 */
} iq_pack;

#ifdef IQ_HAVE_KERNEL
/* the whole panels [0, full) of the words q of rows r[0..3] (NULL: zeros) */
IQ_AVX2 static void pack_quad_avx2(const uint8_t *const r[4], uint8_t flip, int64_t full,
				   int64_t K4, uint32_t *d)
{
	const __m128i fv = _mm_set1_epi8((char)flip);
	for (int64_t p = 0; p < full; p++, d += (size_t)K4 * OM_IQUADS_NR) {
		__m128i x[4];
		for (int i = 0; i < 4; i++)
			x[i] = r[i] ? _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r[i] +
										    p * 16)),
						    fv)
				    : _mm_setzero_si128();
		const __m128i lo01 = _mm_unpacklo_epi8(x[0], x[1]), hi01 = _mm_unpackhi_epi8(x[0], x[1]);
		const __m128i lo23 = _mm_unpacklo_epi8(x[2], x[3]), hi23 = _mm_unpackhi_epi8(x[2], x[3]);
		_mm_store_si128((__m128i *)d, _mm_unpacklo_epi16(lo01, lo23));
		_mm_store_si128((__m128i *)d + 1, _mm_unpackhi_epi16(lo01, lo23));
		_mm_store_si128((__m128i *)d + 2, _mm_unpacklo_epi16(hi01, hi23));
		_mm_store_si128((__m128i *)d + 3, _mm_unpackhi_epi16(hi01, hi23));
	}
}
#endif

/* the words [q0, q1) of every panel */
static void pack_words(void *arg, int64_t q0, int64_t q1)
{
	const iq_pack *a = arg;
	const om_igemm *g = a->g;
	const int64_t K = g->K, N = g->N, K4 = a->pb->K4, full = N / OM_IQUADS_NR;
	for (int64_t q = q0; q < q1; q++) {
		const uint8_t *r[4];
		for (int i = 0; i < 4; i++)
			r[i] = 4 * q + i < K ? (const uint8_t *)g->B + (4 * q + i) * g->ldb : NULL;
		uint32_t *d0 = a->pb->data + (size_t)q * OM_IQUADS_NR;
		int64_t p = 0;
#ifdef IQ_HAVE_KERNEL
		pack_quad_avx2(r, a->flip, full, K4, d0);
		p = full;
#endif
		for (; p < a->pb->panels; p++) {
			uint8_t *d = (uint8_t *)(d0 + (size_t)(p * K4) * OM_IQUADS_NR);
			for (int64_t j = 0; j < OM_IQUADS_NR; j++)
				for (int i = 0; i < 4; i++) {
					const int64_t c = p * OM_IQUADS_NR + j;
					d[4 * j + i] = r[i] && c < N ? r[i][c] ^ a->flip : 0;
				}
		}
	}
}

#ifdef IQ_HAVE_KERNEL
/* stores the two sums of a row: nc columns of c */
static inline __attribute__((always_inline)) IQ_AVX2 void iq_store(int32_t *c, __m256i x0,
								   __m256i x1, int64_t nc)
{
	if (nc == OM_IQUADS_NR) {
		_mm256_storeu_si256((__m256i *)c, x0);
		_mm256_storeu_si256((__m256i *)(c + 8), x1);
		return;
	}
	int32_t t[OM_IQUADS_NR];
	_mm256_storeu_si256((__m256i *)t, x0);
	_mm256_storeu_si256((__m256i *)(t + 8), x1);
	memcpy(c, t, sizeof(int32_t) * (size_t)nc);
}

/* row r's corrections added to its sums: factor v times code k of B's panel b, 8 columns a
 * vpmaddwd (the code in a word's low 16 bits, v in the other's) */
#define IQ_FIX(r)                                                                              \
	for (int64_t i = pa->fix_off[m0 + r]; i < pa->fix_off[m0 + r + 1]; i++) {             \
		const int32_t k = pa->fix_k[i];                                                \
		const __m256i *u = (const __m256i *)(b + (size_t)(k >> 2) * OM_IQUADS_NR);     \
		const __m128i sh = _mm_cvtsi32_si128(8 * (k & 3));                             \
		const __m256i v = _mm256_set1_epi32(pa->fix_v[i]);                             \
		const __m256i u0 = _mm256_and_si256(_mm256_srl_epi32(_mm256_load_si256(u), sh), \
						    low);                                      \
		const __m256i u1 = _mm256_and_si256(                                           \
			_mm256_srl_epi32(_mm256_load_si256(u + 1), sh), low);                  \
		c##r##0 = _mm256_add_epi32(c##r##0, _mm256_madd_epi16(u0, v));                 \
		c##r##1 = _mm256_add_epi32(c##r##1, _mm256_madd_epi16(u1, v));                 \
	}

/* C rows [m0, m0 + mr) x columns [0, nc) = pa's rows m0.. times the panel b, each row plus
 * off[i] (B's zero point's term), mr <= IQ_MR; the sums named one by one (registers). At -O3
 * GCC 12 groups the four rows' broadcasts and products and spills two sums a step; -O2 keeps
 * each row's chain */
IQ_AVX2 IQ_O2 static void iq_block(const om_iquads_a *pa, int64_t m0, int mr, const uint32_t *b,
			     const int32_t *off, int32_t *c, int64_t ldc, int64_t nc)
{
	const int64_t K4 = pa->K4;
	const int32_t *a0 = pa->quads + m0 * K4;
	/* rows past mr read row 0 again (their sums are not stored) */
	const int32_t *a1 = a0 + (mr > 1) * K4, *a2 = a0 + (mr > 2) * 2 * K4,
		      *a3 = a0 + (mr > 3) * 3 * K4;
	__m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00,
		c21 = c00, c30 = c00, c31 = c00;
	const __m256i ones = _mm256_set1_epi16(1), low = _mm256_set1_epi32(255);
	const uint32_t *w = b;
#define IQ_ROW(r)                                                                              \
	do {                                                                                   \
		const __m256i av = _mm256_set1_epi32(a##r[q]);                                 \
		c##r##0 = _mm256_add_epi32(c##r##0,                                            \
					   _mm256_madd_epi16(_mm256_maddubs_epi16(b0, av), ones)); \
		c##r##1 = _mm256_add_epi32(c##r##1,                                            \
					   _mm256_madd_epi16(_mm256_maddubs_epi16(b1, av), ones)); \
	} while (0)
	for (int64_t q = 0; q < K4; q++, w += OM_IQUADS_NR) {
		const __m256i b0 = _mm256_load_si256((const __m256i *)w);
		const __m256i b1 = _mm256_load_si256((const __m256i *)(w + 8));
		IQ_ROW(0);
		IQ_ROW(1);
		IQ_ROW(2);
		IQ_ROW(3);
	}
#undef IQ_ROW
#define IQ_END(r)                                                                      \
	do {                                                                           \
		if (mr > r) {                                                          \
			IQ_FIX(r);                                                     \
			const __m256i o = _mm256_set1_epi32(off[r]);                   \
			iq_store(c + r * ldc, _mm256_add_epi32(c##r##0, o),            \
				 _mm256_add_epi32(c##r##1, o), nc);                    \
		}                                                                      \
	} while (0)
	IQ_END(0);
	IQ_END(1);
	IQ_END(2);
	IQ_END(3);
#undef IQ_END
}
#undef IQ_FIX
#endif

/* tasks (row block, group of panels), the groups inner */
typedef struct iqjob {
	const om_iquads_a *pa;
	int64_t r0;
	const om_igemm *g;
	const iq_b *pb;
	int64_t groups, per; /* groups of `per` panels */
	const int32_t *off;  /* g->M: - zb rowsum, modulo 2^32 */
	int32_t *tiles;      /* with g->epi: an IQ_RB x OM_IQUADS_NR piece of C a slot */
} iqjob;

static void iq_tasks(void *arg, int64_t lo, int64_t hi, int slot)
{
#ifdef IQ_HAVE_KERNEL
	const iqjob *j = arg;
	const om_igemm *g = j->g;
	const int64_t K4 = j->pb->K4, P = j->pb->panels;
	for (int64_t t = lo; t < hi; t++) {
		const int64_t rb = t / j->groups, grp = t % j->groups;
		const int64_t m0 = rb * IQ_RB, nr = g->M - m0 < IQ_RB ? g->M - m0 : IQ_RB;
		const int64_t p1 = (grp + 1) * j->per < P ? (grp + 1) * j->per : P;
		int32_t *tile = j->tiles ? j->tiles + (size_t)slot * IQ_RB * OM_IQUADS_NR : NULL;
		for (int64_t p = grp * j->per; p < p1; p++) {
			const uint32_t *b = j->pb->data + (size_t)(p * K4) * OM_IQUADS_NR;
			const int64_t c0 = p * OM_IQUADS_NR;
			const int64_t nc = g->N - c0 < OM_IQUADS_NR ? g->N - c0 : OM_IQUADS_NR;
			int32_t *c = tile ? tile : g->C + m0 * g->ldc + c0;
			const int64_t ldc = tile ? OM_IQUADS_NR : g->ldc;
			for (int64_t i = 0; i < nr; i += IQ_MR)
				iq_block(j->pa, j->r0 + m0 + i, nr - i < IQ_MR ? (int)(nr - i) : IQ_MR,
					 b, j->off + m0 + i, c + i * ldc, ldc, nc);
			if (tile) /* the piece while it is in cache */
				g->epi->fn(g->epi->arg, tile, OM_IQUADS_NR, m0, nr, c0, nc);
		}
	}
#else
	(void)arg, (void)lo, (void)hi, (void)slot;
#endif
}

bool om_iquads_run(const om_iquads_a *pa, int64_t r0, const om_igemm *g, int threads)
{
	if (g->tb || g->K != pa->K || r0 < 0 || r0 + g->M > pa->M || (g->zb && g->nzb != 1) ||
	    !om_iquads_ok())
		return false;
	if (g->M <= 0 || g->N <= 0)
		return true;
	const int64_t K4 = pa->K4, P = (g->N + OM_IQUADS_NR - 1) / OM_IQUADS_NR;
	iq_b pb = {K4, P, aligned_alloc(64, (size_t)(P * K4) * OM_IQUADS_NR * sizeof(uint32_t))};
	int32_t *off = malloc(sizeof(int32_t) * (size_t)g->M);
	const double mnk = (double)g->M * (double)g->N * (double)g->K;
	if (mnk < IQ_1T_MNK)
		threads = 1;
	const int64_t rbs = (g->M + IQ_RB - 1) / IQ_RB;
	const int64_t groups = rbs >= 2 * threads || P < 2 ? 1 : (2 * threads < P ? 2 * threads : P);
	iqjob j = {pa, r0, g, &pb, groups, (P + groups - 1) / groups, off, NULL};
	const int64_t tasks = rbs * groups;
	const int slots = om_par_slots(threads, tasks, 1);
	if (g->epi)
		j.tiles = malloc(sizeof(int32_t) * IQ_RB * OM_IQUADS_NR * (size_t)slots);
	if (!pb.data || !off || (g->epi && !j.tiles)) {
		free(pb.data), free(off), free(j.tiles);
		return false;
	}
	/* sum over k of a (b - zb) = sum a b' - zb' sum a, b' = b (+ 128 for an int8 B) */
	const uint8_t flip = g->b_signed ? 0x80 : 0;
	const uint32_t zb = (uint32_t)(g->zb ? g->zb[0] : 0) + (g->b_signed ? 128u : 0u);
	for (int64_t m = 0; m < g->M; m++)
		off[m] = (int32_t)(0u - zb * (uint32_t)pa->rowsum[r0 + m]);
	iq_pack a = {g, &pb, flip};
	om_par_for(threads, K4, 1 + IQ_PACK_GRAIN / (4 * g->N), pack_words, &a);
	om_par_for_slots(threads, tasks, 1, iq_tasks, &j);
	free(pb.data), free(off), free(j.tiles);
	return true;
}
