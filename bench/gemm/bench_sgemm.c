/* bench_sgemm.c — CPU time of cblas_sgemm on the small shapes of transformer models (rows
 * M = batch * sequence), called the ways om_sgemm could call it:
 *   nn       row-major A [M, K] x B [K, N]                   (what MatMul does)
 *   nt       row-major A [M, K] x B^T, B stored [N, K]       (weights as the model stores them)
 *   swap     S [N, M] = B^T A^T (BLAS's m side is then M), C = S^T
 *   tn_swap  the same with B stored [N, K]
 * the attention products (batch 2 x 4 heads) as a loop of one call per head (OpenBLAS 0.3.21,
 * Debian 12, has no cblas_sgemm_batch), and products of a few rows through sgemm against one
 * sgemv per row (what om_sgemm does up to 3 rows: sgemm packs all of B in every call).
 *
 *     OPENBLAS_NUM_THREADS=1 build/bench/gemm/bench_sgemm [REPS]
 *
 * Prints the best of 5 trials in microseconds of CPU time per product, and GFLOP/s.
 * Not a test. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static float *randv(size_t n)
{
	float *p = malloc(sizeof(float) * (n ? n : 1));
	for (size_t i = 0; i < n; i++)
		p[i] = (float)(rand() % 1000) / 1000.0f - 0.5f;
	return p;
}

typedef enum { NN, NT, SWAP, TN_SWAP } mode;

static void run(mode md, int M, int N, int K, const float *A, const float *B, const float *Bt,
		float *C, float *S)
{
	switch (md) {
	case NN:
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, K, B, N,
			    0.0f, C, N);
		break;
	case NT:
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, A, K, Bt, K,
			    0.0f, C, N);
		break;
	case SWAP: /* S [N, M] = B^T A^T, then C = S^T */
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasTrans, N, M, K, 1.0f, B, N, A, K, 0.0f,
			    S, M);
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++)
				C[i * N + j] = S[j * M + i];
		break;
	case TN_SWAP: /* S [N, M] = Bt A^T (weights as the model stores them), C = S^T */
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, M, K, 1.0f, Bt, K, A, K,
			    0.0f, S, M);
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++)
				C[i * N + j] = S[j * M + i];
		break;
	}
}

static double time_mode(mode md, int M, int N, int K, int reps)
{
	float *A = randv((size_t)M * K), *B = randv((size_t)K * N), *Bt = randv((size_t)K * N);
	float *C = randv((size_t)M * N), *S = randv((size_t)M * N);
	for (int r = 0; r < 20; r++)
		run(md, M, N, K, A, B, Bt, C, S);
	double best = 1e30;
	for (int trial = 0; trial < 5; trial++) {
		const double t0 = cpu_us();
		for (int r = 0; r < reps; r++)
			run(md, M, N, K, A, B, Bt, C, S);
		const double t = (cpu_us() - t0) / reps;
		if (t < best)
			best = t;
	}
	free(A), free(B), free(Bt), free(C), free(S);
	return best;
}

/* `nb` products [m, k] x [k, n] (tb: B stored [n, k]) from contiguous batches */
static double time_heads(int nb, int m, int n, int k, int tb, int reps)
{
	float *A = randv((size_t)nb * m * k), *B = randv((size_t)nb * k * n);
	float *C = randv((size_t)nb * m * n);
	double best = 1e30;
	for (int trial = 0; trial < 5; trial++) {
		const double t0 = cpu_us();
		for (int r = 0; r < reps; r++)
			for (int b = 0; b < nb; b++)
				cblas_sgemm(CblasRowMajor, CblasNoTrans,
					    tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f,
					    A + (size_t)b * m * k, k,
					    B + (size_t)b * k * n, tb ? k : n, 0.0f,
					    C + (size_t)b * m * n, n);
		const double t = (cpu_us() - t0) / reps;
		if (t < best)
			best = t;
	}
	free(A), free(B), free(C);
	return best;
}

/* [m, k] x [k, n]: sgemm (gemv 0) or one sgemv per row (gemv 1) */
static double time_rows(int m, int n, int k, int gemv, int reps)
{
	float *A = randv((size_t)m * k), *B = randv((size_t)k * n), *C = randv((size_t)m * n);
	double best = 1e30;
	for (int trial = 0; trial < 5; trial++) {
		const double t0 = cpu_us();
		for (int r = 0; r < reps; r++)
			if (gemv)
				for (int i = 0; i < m; i++)
					cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1.0f,
						    B, n, A + (size_t)i * k, 1, 0.0f,
						    C + (size_t)i * n, 1);
			else
				cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n,
					    k, 1.0f, A, k, B, n, 0.0f, C, n);
		const double t = (cpu_us() - t0) / reps;
		if (t < best)
			best = t;
	}
	free(A), free(B), free(C);
	return best;
}

int main(int argc, char **argv)
{
	const int reps = argc > 1 ? atoi(argv[1]) : 2000;
	static const int shapes[][3] = {
		{32, 384, 128}, {32, 128, 128}, {32, 512, 128}, {32, 128, 512}, {64, 64, 64},
		{128, 64, 64}, {128, 256, 64}, {128, 64, 256}, {16, 16, 32}, {16, 32, 16},
		{1, 1, 1},
	};
	static const char *names[] = {"nn", "nt", "swap", "tn_swap"};
	printf("%-16s", "M N K");
	for (int md = 0; md < 4; md++)
		printf(" %9s us %6s", names[md], "GF/s");
	printf("\n");
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		const int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
		char lab[32];
		snprintf(lab, sizeof lab, "%d %d %d", M, N, K);
		printf("%-16s", lab);
		for (int md = 0; md < 4; md++) {
			const double us = time_mode((mode)md, M, N, K, reps);
			printf(" %12.3f %6.1f", us, 2.0 * M * N * K / us / 1e3);
		}
		printf("\n");
	}
	/* attention, batch 2 x 4 heads: QK^T [16,32]x[32,16] (K stored), P V [16,16]x[16,32] */
	printf("heads 8x(16x16x32, B^T): %.3f us per 8;  8x(16x32x16): %.3f us per 8\n",
	       time_heads(8, 16, 16, 32, 1, reps), time_heads(8, 16, 32, 16, 0, reps));
	for (int m = 1; m <= 6; m++) {
		const int r = reps / 10 + 1;
		printf("%d x 512 x 1000: sgemm %.2f us, sgemv per row %.2f us\n", m,
		       time_rows(m, 1000, 512, 0, r), time_rows(m, 1000, 512, 1, r));
	}
	return 0;
}
