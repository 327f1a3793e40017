/* panels.c — om_panels (panels.h). A group is four vectors of 16 rows, each with its own sum
 * (four chains of fused multiply-adds in flight). Measured on one core, y = B x at 768 x 256
 * (a GRU of 256 units): 4.0 us from L2 against 7.9 us for oneDNN's packed matmul of one row;
 * groups of eight vectors ran slower (7.2 us), and a layout of one panel of 16 rows after
 * another (four streams) 4.9 us. */
#if defined(__GNUC__) && !defined(__clang__)
/* fast mode's: a fused multiply-add where the CPU has one */
#pragma GCC optimize("fp-contract=fast")
#endif
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "panels.h"

#define PANEL_CLONES OM_CLONES_V3

typedef float v16 __attribute__((vector_size(64)));

bool om_panels_pack(om_panels *pk, const float *B, int64_t N, int64_t K, int64_t ldb)
{
	*pk = (om_panels){0};
	const int64_t groups = (N + OM_PANEL_ROWS - 1) / OM_PANEL_ROWS;
	float *p = calloc((size_t)(groups * K * OM_PANEL_ROWS) + 1, sizeof(float));
	if (!p)
		return false;
	for (int64_t i = 0; i < N; i++) {
		float *g = p + i / OM_PANEL_ROWS * K * OM_PANEL_ROWS + i % OM_PANEL_ROWS;
		for (int64_t k = 0; k < K; k++)
			g[k * OM_PANEL_ROWS] = B[i * ldb + k];
	}
	*pk = (om_panels){N, K, p};
	return true;
}

void om_panels_free(om_panels *pk)
{
	free(pk->p);
	*pk = (om_panels){0};
}

int64_t om_panels_groups(const om_panels *pk)
{
	return (pk->N + OM_PANEL_ROWS - 1) / OM_PANEL_ROWS;
}

PANEL_CLONES static void group_mul(const float *g, int64_t K, const float *x, float *out)
{
	v16 a[4] = {0};
	for (int64_t k = 0; k < K; k++) {
		const float xk = x[k];
		for (int i = 0; i < 4; i++) {
			v16 b;
			memcpy(&b, g + (k * 4 + i) * 16, sizeof b);
			a[i] += xk * b;
		}
	}
	memcpy(out, a, sizeof a);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define PANEL_AVX2 1
/* group_mul in 8-lane vectors with AVX2 and FMA: the clones' 16-lane vectors stay on the stack
 * where the CPU has no 16-lane registers. Each row's chain of fused multiply-adds is the
 * x86-64-v3 clone's. */
__attribute__((target("avx2,fma"))) static void group_mul8(const float *g, int64_t K,
							    const float *x, float *out)
{
	__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
	       a7 = a0;
	for (int64_t k = 0; k < K; k++, g += 64) {
		const __m256 xk = _mm256_set1_ps(x[k]);
		a0 = _mm256_fmadd_ps(xk, _mm256_loadu_ps(g), a0);
		a1 = _mm256_fmadd_ps(xk, _mm256_loadu_ps(g + 8), a1);
		a2 = _mm256_fmadd_ps(xk, _mm256_loadu_ps(g + 16), a2);
		a3 = _mm256_fmadd_ps(xk, _mm256_loadu_ps(g + 24), a3);
		a4 = _mm256_fmadd_ps(xk, _mm256_loadu_ps(g + 32), a4);
		a5 = _mm256_fmadd_ps(xk, _mm256_loadu_ps(g + 40), a5);
		a6 = _mm256_fmadd_ps(xk, _mm256_loadu_ps(g + 48), a6);
		a7 = _mm256_fmadd_ps(xk, _mm256_loadu_ps(g + 56), a7);
	}
	_mm256_storeu_ps(out, a0), _mm256_storeu_ps(out + 8, a1);
	_mm256_storeu_ps(out + 16, a2), _mm256_storeu_ps(out + 24, a3);
	_mm256_storeu_ps(out + 32, a4), _mm256_storeu_ps(out + 40, a5);
	_mm256_storeu_ps(out + 48, a6), _mm256_storeu_ps(out + 56, a7);
}
#endif

void om_panels_mul(const om_panels *pk, int64_t g0, int64_t g1, const float *x, float *y)
{
	void (*mul)(const float *, int64_t, const float *, float *) = group_mul;
#ifdef PANEL_AVX2
	if (om_cpu_avx2_only())
		mul = group_mul8;
#endif
	for (int64_t gi = g0; gi < g1; gi++) {
		const int64_t r0 = gi * OM_PANEL_ROWS;
		const int64_t n = pk->N - r0 < OM_PANEL_ROWS ? pk->N - r0 : OM_PANEL_ROWS;
		const float *g = pk->p + gi * pk->K * OM_PANEL_ROWS;
		if (n == OM_PANEL_ROWS) {
			mul(g, pk->K, x, y + r0);
		} else { /* the last group's rows past N stay out of y */
			float part[OM_PANEL_ROWS];
			mul(g, pk->K, x, part);
			memcpy(y + r0, part, sizeof(float) * (size_t)n);
		}
	}
}
