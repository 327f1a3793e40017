/* sgemm_avx512.c — C = A B with an 8 x 48 AVX-512 micro-kernel. B is read in place: a K block
 * of 48 columns (48 KiB) stays near L1 while every 8-row block of A passes over it. A is packed
 * per K block only when many column blocks reuse it (else Conv's weights would be copied once
 * more than they are read). Compiled for AVX-512F by function attribute, chosen at run time. */
#include <stdlib.h>
#include <string.h>

#include "sgemm_avx512.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

enum { MR = 8, NR = 48, KC = 256 };

bool om_sgemm_avx512_ok(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f");
}

/* Ap[k][r] = A[r][k] for mr rows and kc columns of A (lda apart), 0 past mr. */
static void pack_a(const float *A, int64_t lda, int64_t mr, int64_t kc, float *Ap)
{
	for (int64_t r = 0; r < MR; r++)
		for (int64_t k = 0; k < kc; k++)
			Ap[k * MR + r] = r < mr ? A[r * lda + k] : 0.0f;
}

/* acc = (first ? 0 : C) + A B over kc. A element (r, k) is at A[r * ars + k * aks]; rows past
 * mr are not stored (the caller points them at readable memory). B: kc rows ldb apart, nc
 * columns, masked past them. Stores mr x nc of acc. */
__attribute__((target("avx512f"), always_inline)) static inline void
tile(const float *A, int64_t ars, int64_t aks, const float *B, int64_t ldb, int64_t kc, float *C,
     int64_t ldc, int64_t mr, int64_t nc, int first)
{
	__m512 acc[MR][3];
	__mmask16 m[3];
	for (int v = 0; v < 3; v++) {
		int64_t left = nc - 16 * v;
		m[v] = left >= 16 ? 0xffff : left <= 0 ? 0 : (__mmask16)((1u << left) - 1);
	}
#pragma GCC unroll 8
	for (int r = 0; r < MR; r++)
#pragma GCC unroll 3
		for (int v = 0; v < 3; v++)
			acc[r][v] = first || r >= mr
					    ? _mm512_setzero_ps()
					    : _mm512_maskz_loadu_ps(m[v], C + r * ldc + 16 * v);
	for (int64_t k = 0; k < kc; k++, B += ldb, A += aks) {
		const __m512 b0 = _mm512_maskz_loadu_ps(m[0], B);
		const __m512 b1 = _mm512_maskz_loadu_ps(m[1], B + 16);
		const __m512 b2 = _mm512_maskz_loadu_ps(m[2], B + 32);
#pragma GCC unroll 8
		for (int r = 0; r < MR; r++) {
			const __m512 av = _mm512_set1_ps(A[r * ars]);
			acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
			acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
			acc[r][2] = _mm512_fmadd_ps(av, b2, acc[r][2]);
		}
	}
#pragma GCC unroll 8
	for (int r = 0; r < mr; r++)
#pragma GCC unroll 3
		for (int v = 0; v < 3; v++)
			_mm512_mask_storeu_ps(C + r * ldc + 16 * v, m[v], acc[r][v]);
}

/* A packed by pack_a: rows 1 apart, columns MR apart. */
__attribute__((target("avx512f"))) static void
tile_packed(const float *Ap, const float *B, int64_t ldb, int64_t kc, float *C, int64_t ldc,
	    int64_t mr, int64_t nc, int first)
{
	tile(Ap, 1, MR, B, ldb, kc, C, ldc, mr, nc, first);
}

/* A in place (a full block of MR rows, lda apart). */
__attribute__((target("avx512f"))) static void
tile_direct(const float *A, int64_t lda, const float *B, int64_t ldb, int64_t kc, float *C,
	    int64_t ldc, int64_t nc, int first)
{
	tile(A, lda, 1, B, ldb, kc, C, ldc, MR, nc, first);
}

enum { PACK_MIN_N = 256 }; /* pack A when enough column panels reuse it */

bool om_sgemm_avx512(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
		     const float *B, int64_t ldb, float *C, int64_t ldc)
{
	const bool pack = N >= PACK_MIN_N;
	const int64_t mp = (M + MR - 1) / MR * MR, kmax = K < KC ? K : KC;
	float *Ap = pack ? malloc(sizeof(float) * (size_t)(mp * kmax + 1)) : NULL;
	float edge[MR * KC];
	if (pack && !Ap)
		return false;
	if (K == 0)
		for (int64_t i = 0; i < M; i++)
			memset(C + i * ldc, 0, sizeof(float) * (size_t)N);
	for (int64_t k0 = 0; k0 < K; k0 += KC) {
		const int64_t kc = K - k0 < KC ? K - k0 : KC;
		for (int64_t i0 = 0; pack && i0 < M; i0 += MR)
			pack_a(A + i0 * lda + k0, lda, M - i0 < MR ? M - i0 : MR, kc, Ap + i0 * kc);
		for (int64_t j0 = 0; j0 < N; j0 += NR) {
			const int64_t nc = N - j0 < NR ? N - j0 : NR;
			for (int64_t i0 = 0; i0 < M; i0 += MR) {
				const int64_t mr = M - i0 < MR ? M - i0 : MR;
				float *c = C + i0 * ldc + j0;
				const float *b = B + k0 * ldb + j0;
				if (pack) {
					tile_packed(Ap + i0 * kc, b, ldb, kc, c, ldc, mr, nc,
						    k0 == 0);
				} else if (mr == MR) {
					tile_direct(A + i0 * lda + k0, lda, b, ldb, kc, c, ldc, nc,
						    k0 == 0);
				} else { /* the last rows: packed, zeros past M */
					pack_a(A + i0 * lda + k0, lda, mr, kc, edge);
					tile_packed(edge, b, ldb, kc, c, ldc, mr, nc, k0 == 0);
				}
			}
		}
	}
	free(Ap);
	return true;
}

#else

bool om_sgemm_avx512_ok(void)
{
	return false;
}

bool om_sgemm_avx512(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
		     const float *B, int64_t ldb, float *C, int64_t ldc)
{
	(void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb, (void)C, (void)ldc;
	return false;
}

#endif
