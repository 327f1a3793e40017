/* sgemm_panels.c — the float product over B's panels (sgemm_panels.h). A task takes a block of
 * SP_RB rows and a group of panels; the micro-kernel keeps 6 rows x 16 columns of sums in 12
 * registers: per k, two vectors of the panel and a broadcast of each row's A, 12 fused
 * multiply-adds (64 x 1024 x 1024 on a Zen 3: 45.6 GMAC/s, oneDNN 2.6's sgemm 40.3). */
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "sgemm_panels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SP_HAVE_KERNEL 1
#define SP_AVX2 __attribute__((target("avx2,fma")))
#endif

enum {
	SP_MR = 6,  /* rows of the micro-kernel */
	SP_RB = 48, /* rows a task */
};

/* Below this many multiply-adds a product runs on one thread */
#define SP_1T_MNK 1e6

bool om_spanels_ok(void)
{
#ifdef SP_HAVE_KERNEL
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
	return false;
#endif
}

void om_spanels_free(om_spanels *sp)
{
	free(sp->data);
	memset(sp, 0, sizeof *sp);
}

bool om_spanels_pack(const float *B, int64_t K, int64_t N, int64_t ldb, bool tb,
		     om_spanels *sp)
{
	const int64_t P = (N + OM_SPANELS_NR - 1) / OM_SPANELS_NR;
	*sp = (om_spanels){K, N, P, NULL};
	const size_t n = (size_t)(P * K) * OM_SPANELS_NR;
	if (!(sp->data = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64)))
		return false;
	for (int64_t p = 0; p < P; p++) {
		float *d = sp->data + (size_t)(p * K) * OM_SPANELS_NR;
		const int64_t j0 = p * OM_SPANELS_NR;
		const int64_t nc = N - j0 < OM_SPANELS_NR ? N - j0 : OM_SPANELS_NR;
		for (int64_t k = 0; k < K; k++, d += OM_SPANELS_NR) {
			for (int64_t j = 0; j < nc; j++)
				d[j] = tb ? B[(j0 + j) * ldb + k] : B[k * ldb + j0 + j];
			for (int64_t j = nc; j < OM_SPANELS_NR; j++)
				d[j] = 0;
		}
	}
	return true;
}

#ifdef SP_HAVE_KERNEL
/* row r's 16 sums x0, x1 into c (nc columns): alpha x + beta c (c not read when beta is 0) */
static inline __attribute__((always_inline)) SP_AVX2 void sp_store(float *c, __m256 x0,
								   __m256 x1, int64_t nc,
								   float alpha, float beta)
{
	float t[OM_SPANELS_NR];
	float *d = nc == OM_SPANELS_NR ? c : t;
	const __m256 a = _mm256_set1_ps(alpha);
	x0 = _mm256_mul_ps(x0, a), x1 = _mm256_mul_ps(x1, a);
	if (beta != 0) {
		if (nc < OM_SPANELS_NR)
			memcpy(t, c, sizeof(float) * (size_t)nc);
		const __m256 b = _mm256_set1_ps(beta);
		x0 = _mm256_fmadd_ps(b, _mm256_loadu_ps(d), x0);
		x1 = _mm256_fmadd_ps(b, _mm256_loadu_ps(d + 8), x1);
	}
	_mm256_storeu_ps(d, x0);
	_mm256_storeu_ps(d + 8, x1);
	if (d == t)
		memcpy(c, t, sizeof(float) * (size_t)nc);
}

/* C rows [0, mr) x columns [0, nc) from a panel b: row r's A at a + r * ars, its k-th at
 * + k * aks; mr <= SP_MR, the rows past it read row 0 again (not stored) */
SP_AVX2 static void sp_block(int mr, int64_t K, const float *a, int64_t ars, int64_t aks,
			     const float *b, float *c, int64_t ldc, int64_t nc, float alpha,
			     float beta)
{
	__m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
	       c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
	const float *a0 = a, *a1 = a + (mr > 1) * ars, *a2 = a + (mr > 2) * 2 * ars,
		    *a3 = a + (mr > 3) * 3 * ars, *a4 = a + (mr > 4) * 4 * ars,
		    *a5 = a + (mr > 5) * 5 * ars;
#define SP_ROW(r)                                                          \
	do {                                                               \
		const __m256 x = _mm256_broadcast_ss(a##r + k * aks);      \
		c##r##0 = _mm256_fmadd_ps(x, b0, c##r##0);                 \
		c##r##1 = _mm256_fmadd_ps(x, b1, c##r##1);                 \
	} while (0)
	for (int64_t k = 0; k < K; k++, b += OM_SPANELS_NR) {
		const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
		SP_ROW(0);
		SP_ROW(1);
		SP_ROW(2);
		SP_ROW(3);
		SP_ROW(4);
		SP_ROW(5);
	}
#undef SP_ROW
	sp_store(c, c00, c01, nc, alpha, beta);
	if (mr > 1)
		sp_store(c + ldc, c10, c11, nc, alpha, beta);
	if (mr > 2)
		sp_store(c + 2 * ldc, c20, c21, nc, alpha, beta);
	if (mr > 3)
		sp_store(c + 3 * ldc, c30, c31, nc, alpha, beta);
	if (mr > 4)
		sp_store(c + 4 * ldc, c40, c41, nc, alpha, beta);
	if (mr > 5)
		sp_store(c + 5 * ldc, c50, c51, nc, alpha, beta);
}
#endif

/* tasks (row block, group of panels), the groups inner */
typedef struct spjob {
	const om_spanels *sp;
	bool ta;
	int64_t M, lda, ldc, groups, per; /* groups of `per` panels */
	float alpha, beta;
	const float *A;
	float *C;
} spjob;

static void sp_tasks(void *arg, int64_t lo, int64_t hi)
{
#ifdef SP_HAVE_KERNEL
	const spjob *j = arg;
	const int64_t K = j->sp->K, N = j->sp->N, P = j->sp->panels;
	const int64_t ars = j->ta ? 1 : j->lda, aks = j->ta ? j->lda : 1;
	for (int64_t t = lo; t < hi; t++) {
		const int64_t rb = t / j->groups, grp = t % j->groups;
		const int64_t r0 = rb * SP_RB, nr = j->M - r0 < SP_RB ? j->M - r0 : SP_RB;
		const int64_t p1 = (grp + 1) * j->per < P ? (grp + 1) * j->per : P;
		for (int64_t p = grp * j->per; p < p1; p++) {
			const float *b = j->sp->data + (size_t)(p * K) * OM_SPANELS_NR;
			const int64_t c0 = p * OM_SPANELS_NR;
			const int64_t nc = N - c0 < OM_SPANELS_NR ? N - c0 : OM_SPANELS_NR;
			for (int64_t i = r0; i < r0 + nr; i += SP_MR)
				sp_block(r0 + nr - i < SP_MR ? (int)(r0 + nr - i) : SP_MR, K,
					 j->A + i * ars, ars, aks, b, j->C + i * j->ldc + c0, j->ldc,
					 nc, j->alpha, j->beta);
		}
	}
#else
	(void)arg, (void)lo, (void)hi;
#endif
}

void om_spanels_mul(const om_spanels *sp, bool ta, int64_t M, float alpha, const float *A,
		    int64_t lda, float beta, float *C, int64_t ldc, int threads)
{
	const int64_t rbs = (M + SP_RB - 1) / SP_RB, P = sp->panels;
	if (M < 1 || P < 1)
		return;
	if ((double)M * (double)sp->N * (double)sp->K < SP_1T_MNK)
		threads = 1;
	/* row blocks alone when they are enough for the threads, else panels split too */
	const int64_t groups = rbs >= 2 * threads || P < 2 ? 1 : (2 * threads < P ? 2 * threads : P);
	spjob j = {sp, ta, M, lda, ldc, groups, (P + groups - 1) / groups, alpha, beta, A, C};
	om_par_for(threads, rbs * groups, 1, sp_tasks, &j);
}
