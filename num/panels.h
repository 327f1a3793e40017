/* panels.h — fast-mode one-row products y = B x with a constant B (N x K, row-major) that a
 * recurrence repeats every step (RNN, GRU and LSTM's H(t-1) R^T at batch 1). B is packed once
 * in groups of 64 rows stored k by k (a group's 64 floats of column k together), so that a
 * product streams the packed B once, front to back, with one fused multiply-add per 16
 * multiply-adds. Each output is the sum over k in order: the same bits whichever groups a
 * caller computes, on whichever thread. */
#ifndef OM_PANELS_H
#define OM_PANELS_H

#include <stdbool.h>
#include <stdint.h>

/** Rows of B a group holds. */
enum { OM_PANEL_ROWS = 64 };

typedef struct om_panels {
	int64_t N, K;
	float *p; /* ceil(N / 64) groups of K x 64 floats (rows past N: 0) */
} om_panels;

/** Packs B (N x K, row stride ldb) into *pk; false when out of memory (*pk empty). */
bool om_panels_pack(om_panels *pk, const float *B, int64_t N, int64_t K, int64_t ldb);

/** Frees what om_panels_pack made (an empty *pk: nothing). */
void om_panels_free(om_panels *pk);

/** Groups in pk: ceil(N / OM_PANEL_ROWS). */
int64_t om_panels_groups(const om_panels *pk);

/** y[i] = sum over k of B[i][k] x[k] for the rows i < N of groups [g0, g1) (y: the whole
 *  N-float output; rows of other groups untouched). */
void om_panels_mul(const om_panels *pk, int64_t g0, int64_t g1, const float *x, float *y);

#endif
