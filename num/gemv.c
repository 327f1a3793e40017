/* gemv.c — om_sgemv_fast (gemm.h): one row times a matrix in fast mode, the output's columns
 * split over the run's threads. A classifier's Gemm of one image (1 x 1280 x 1000: 5 MB of
 * weights) is a pass over B; oneDNN's sgemm and its packed matmul spent 0.16-0.22 ms on it at
 * one thread and did not speed up at two (ONNX Runtime 0.13 and 0.09). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <string.h>

#include "clones.h"
#include "gemm.h"
#include "parallel.h"

enum { LANES = 64, GEMV_GRAIN = 16 }; /* partial sums a dot (4 vectors of 16); rows a piece */

typedef struct gemv_job {
	bool tb;
	int64_t K, N, inca, ldb;
	float alpha, beta;
	const float *a, *B;
	float *y, *ac; /* ac: a gathered contiguous when inca != 1 (NULL: a is) */
} gemv_job;

/* y[j] for j in [lo, hi), B stored N x K: the dots of a with rows j and j + 1 (two streams
 * of B at once) in LANES partial sums each (vectorized), added in order */
static inline __attribute__((always_inline)) void dots(const gemv_job *g, const float *a,
						    int64_t lo, int64_t hi)
{
	const int64_t K = g->K, kl = K - K % LANES;
	for (int64_t j = lo; j < hi; j += 2) {
		const int64_t j1 = j + 1 < hi ? j + 1 : j; /* an odd last row: twice */
		const float *b0 = g->B + j * g->ldb, *b1 = g->B + j1 * g->ldb;
		float acc0[LANES] = {0}, acc1[LANES] = {0};
		for (int64_t k = 0; k < kl; k += LANES)
			for (int l = 0; l < LANES; l++) {
				acc0[l] += a[k + l] * b0[k + l];
				acc1[l] += a[k + l] * b1[k + l];
			}
		float s[2] = {0, 0};
		for (int l = 0; l < LANES; l++)
			s[0] += acc0[l], s[1] += acc1[l];
		for (int64_t k = kl; k < K; k++)
			s[0] += a[k] * b0[k], s[1] += a[k] * b1[k];
		for (int r = 0; r < 2; r++) {
			float *y = g->y + (r ? j1 : j);
			const float v = g->alpha * s[r];
			if (r == 0 || j1 != j)
				*y = g->beta != 0 ? v + g->beta * *y : v;
		}
	}
}

/* y[j] for j in [lo, hi), B stored K x N (beta 0): rows of B scaled by a[k] added into y's
 * columns, then alpha */
static inline __attribute__((always_inline)) void axpys(const gemv_job *g, const float *a,
						     int64_t lo, int64_t hi)
{
	float *y = g->y + lo;
	const int64_t n = hi - lo;
	memset(y, 0, sizeof(float) * (size_t)n);
	for (int64_t k = 0; k < g->K; k++) {
		const float *b = g->B + k * g->ldb + lo, ak = a[k];
		for (int64_t j = 0; j < n; j++)
			y[j] += ak * b[j];
	}
	for (int64_t j = 0; j < n; j++)
		y[j] *= g->alpha;
}

OM_CLONES static void gemv_piece(void *arg, int64_t lo, int64_t hi)
{
	const gemv_job *g = arg;
	const float *a = g->ac ? g->ac : g->a;
	if (g->tb)
		dots(g, a, lo, hi);
	else
		axpys(g, a, lo, hi);
}

bool om_sgemv_fast(int threads, bool tb, int64_t N, int64_t K, float alpha, const float *a,
		   int64_t inca, const float *B, int64_t ldb, float beta, float *y, float *buf)
{
	if (N <= 0 || K <= 0 || (!tb && beta != 0) || (inca != 1 && !buf))
		return false;
	gemv_job g = {tb, K, N, inca, ldb, alpha, beta, a, B, y, NULL};
	if (inca != 1) {
		for (int64_t k = 0; k < K; k++)
			buf[k] = a[k * inca];
		g.ac = buf;
	}
	om_par_for(threads, N, tb ? GEMV_GRAIN : LANES * GEMV_GRAIN, gemv_piece, &g);
	return true;
}
