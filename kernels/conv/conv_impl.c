/* conv_impl.c — a float Conv's implementations, one table walked in order (conv_impl.h):
 * oneDNN's, the direct depthwise loop, Winograd F(4x4) and F(2x2), GEMM straight on the input
 * (1x1 stride-1 unpadded) and im2col + GEMM. The input adaptations of ops_conv.c (channel-blocked
 * sides, a scaled input, bridged float types) come first and end in this walk. */
/* -O2 vectorizes only loops of known trip count; the row loops here vary. Vectorizing across
 * outputs keeps every output's operation order, so exact stays exact. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <stdlib.h>
#include <string.h>

#include "conv_depthwise.h"
#include "conv_dnnl.h"
#include "conv_impl.h"
#include "conv_winograd.h"
#include "gemm.h"
#include "im2col.h"
#include "parallel.h"

/* Y (M x N, ldc) = W (M x K) X (K x N, ldb) through om_sgemm: OpenBLAS in fast mode, the
 * fixed-order loop in exact mode. */
static void conv_gemm(int exact, int64_t M, int64_t N, int64_t K, const float *W,
		      const float *X, int64_t ldb, float *Y, int64_t ldc)
{
	om_sgemm(exact, false, false, M, N, K, 1, W, K, X, ldb, 0, Y, ldc);
}

enum { COL_BUDGET = 1 << 18 }; /* floats per im2col chunk (1 MiB: in L2 for the GEMM) */

/* ---- the GEMM paths ------------------------------------------------------------------------ */

/* The GEMM paths' blocks, (image, group, block) [lo, hi) of the flat range: each product
 * (columns [p0, p0 + len) of the output, or output rows [q0, q0 + len) through its im2col
 * columns, or one output row's columns [c0, c0 + cl) when a row alone overflows the column
 * budget) and its epilogue, as one thread runs them (a product's shape never depends on the
 * thread count) */
typedef struct conv_job {
	int exact;
	const om_spatial *sp;
	const om_conv_epi *e;
	int64_t C, M, Cg, Mg, Kg, P, Pin, OL, group;
	int64_t len, nb; /* columns or output rows per block, blocks per (image, group) */
	int64_t cl, nc;  /* im2col: columns per chunk of an output row, chunks per block */
	const float *x, *w;
	float *y;
	float *col;   /* ncol floats per worker slot (im2col) */
	int64_t ncol;
} conv_job;

static conv_job job_of(const om_conv_case *k)
{
	const om_spatial *sp = k->sp;
	const int64_t Cg = k->C / k->group, Mg = k->M / k->group;
	return (conv_job){.exact = k->c->exact, .sp = sp, .e = &k->e, .C = k->C, .M = k->M,
			  .Cg = Cg, .Mg = Mg, .Kg = Cg * om_conv_prod(sp->k, sp->n),
			  .P = om_conv_prod(sp->out, sp->n), .Pin = om_conv_prod(sp->in, sp->n),
			  .group = k->group, .x = k->x, .w = k->w, .y = k->y};
}

static void pointwise_piece(void *arg, int64_t lo, int64_t hi)
{
	const conv_job *j = arg;
	for (int64_t u = lo; u < hi; u++) {
		const int64_t n = u / (j->group * j->nb), gi = u / j->nb % j->group;
		const int64_t p0 = u % j->nb * j->len, nc = j->P - p0 < j->len ? j->P - p0 : j->len;
		float *yb = j->y + (n * j->M + gi * j->Mg) * j->P + p0;
		conv_gemm(j->exact, j->Mg, nc, j->Kg, j->w + gi * j->Mg * j->Kg,
			  j->x + (n * j->C + gi * j->Cg) * j->Pin + p0, j->Pin, yb, j->P);
		om_conv_epi_rows(j->e, j->M, j->P, n, gi * j->Mg, j->Mg, p0, nc, j->y);
	}
}

static void im2col_piece(void *arg, int64_t lo, int64_t hi, int slot)
{
	const conv_job *j = arg;
	float *col = j->col + (size_t)slot * (size_t)j->ncol;
	const int64_t lead = j->P / j->OL, last = j->sp->n - 1;
	for (int64_t u = lo; u < hi; u++) {
		const int64_t v = u / j->nc, n = v / (j->group * j->nb), gi = v / j->nb % j->group;
		const int64_t q0 = v % j->nb * j->len, q1 = q0 + j->len > lead ? lead : q0 + j->len;
		/* a chunk of one row is the conv of the output columns [c0, c0 + cols) alone: the
		 * begin pad moves by c0 strides */
		const int64_t c0 = u % j->nc * j->cl;
		const int64_t cols = j->OL - c0 < j->cl ? j->OL - c0 : j->cl;
		om_spatial sp = *j->sp;
		sp.out[last] = cols, sp.pb[last] -= c0 * sp.stride[last];
		const float *xg = j->x + (n * j->C + gi * j->Cg) * j->Pin;
		const float *wg = j->w + gi * j->Mg * j->Kg;
		om_im2col(xg, sizeof(float), j->Cg, &sp, q0, q1, col);
		if (!j->exact && q0 == 0 && c0 == 0 && j->Mg * j->Kg >= OM_WARM_FLOATS)
			om_conv_warm(wg, j->Mg * j->Kg);
		const int64_t p0 = q0 * j->OL + c0, np = (q1 - q0) * cols;
		conv_gemm(j->exact, j->Mg, np, j->Kg, wg, col, np,
			  j->y + (n * j->M + gi * j->Mg) * j->P + p0, j->P);
		om_conv_epi_rows(j->e, j->M, j->P, n, gi * j->Mg, j->Mg, p0, np, j->y);
	}
}

/* ---- the implementations: when each applies, how it runs ----------------------------------- */

static bool empty_applies(const om_conv_case *k)
{
	return k->N == 0 || k->M == 0 || om_conv_prod(k->sp->out, k->sp->n) == 0;
}

static om_kind empty_run(const om_conv_case *k)
{
	(void)k;
	return OM_OK;
}

/* oneDNN's own predicate (conv_dnnl.h); its primitive may still decline when it is made */
static bool dnnl_applies(const om_conv_case *k)
{
	return om_conv_dnnl_takes(k->c, k->sp, k->N, k->C, k->M, k->group, &k->e);
}

static bool depthwise_applies(const om_conv_case *k)
{
	return k->C / k->group == 1 && k->group > 1 && k->sp->n <= 2;
}

/* Plain stride-1 2-D depthwise convs that the phase loop (conv_dw_flat.c) runs faster than
 * oneDNN's blocked primitive with its two reorders (one thread, CPU ms, omopt's -> oneDNN's,
 * bench of one-node models under load): 3x3 from 14x14 outputs (480 at 14x14: 0.059 against
 * 0.081, 144 at 56x56: 0.17 against 0.39; 1152 at 7x7: 0.077 against 0.046), larger kernels
 * from 56x56 (5x5, 240 at 28x28: 0.21 against 0.22, 576 at 7x7: 0.072 against 0.026; 7x7,
 * 96 at 28x28: 0.15 against 0.11). Blocked values never reach the table (ops_conv.c). */
static bool depthwise_first_applies(const om_conv_case *k)
{
	if (!depthwise_applies(k))
		return false;
	const int64_t taps = om_conv_prod(k->sp->k, k->sp->n);
	const int64_t outs = om_conv_prod(k->sp->out, k->sp->n);
	return outs >= (taps <= 9 ? 14 * 14 : 56 * 56);
}

static om_kind depthwise_run(const om_conv_case *k)
{
	return om_conv_depthwise(k->c, k->sp, k->N, k->C, k->M, k->group, k->x, k->w, &k->e,
				 k->y);
}

static int wino_tile(const om_conv_case *k)
{
	return k->c->exact ? 0 : om_winograd_tile(k->sp, k->C / k->group, k->M / k->group);
}

static bool wino4_applies(const om_conv_case *k)
{
	return wino_tile(k) == 4;
}

static bool wino2_applies(const om_conv_case *k)
{
	return wino_tile(k) == 2;
}

static om_kind wino_run(const om_conv_case *k)
{
	return om_conv_winograd(k->c, wino_tile(k), k->sp, k->N, k->C, k->M, k->group, k->x,
				k->w, &k->e, k->y);
}

/* no taps (C / group or a kernel extent 0): Y is the epilogue of zeros */
static bool notaps_applies(const om_conv_case *k)
{
	return k->C / k->group * om_conv_prod(k->sp->k, k->sp->n) == 0;
}

static om_kind notaps_run(const om_conv_case *k)
{
	const int64_t P = om_conv_prod(k->sp->out, k->sp->n);
	memset(k->y, 0, sizeof(float) * (size_t)(k->N * k->M * P));
	for (int64_t n = 0; n < k->N; n++)
		om_conv_epi_rows(&k->e, k->M, P, n, 0, k->M, 0, P, k->y);
	return OM_OK;
}

static bool pointwise_applies(const om_conv_case *k)
{
	const om_spatial *sp = k->sp;
	for (int32_t i = 0; i < sp->n; i++)
		if (sp->k[i] != 1 || sp->stride[i] != 1 || sp->pb[i] || sp->pe[i])
			return false;
	return true;
}

/* column blocks: the epilogue finds each block in cache */
static om_kind pointwise_run(const om_conv_case *k)
{
	conv_job j = job_of(k);
	j.len = COL_BUDGET / (j.Kg + j.Mg) / 64 * 64;
	if (j.len < 64)
		j.len = 64;
	j.nb = (j.P - 1) / j.len + 1;
	om_par_for(k->c->threads, k->N * k->group * j.nb, 1, pointwise_piece, &j);
	return OM_OK;
}

static bool always(const om_conv_case *k)
{
	(void)k;
	return true;
}

static om_kind im2col_run(const om_conv_case *k)
{
	om_ctx *c = k->c;
	conv_job j = job_of(k);
	const int64_t Kg = j.Kg;
	j.OL = k->sp->out[k->sp->n - 1];
	const int64_t lead = j.P / j.OL;
	j.len = COL_BUDGET / (Kg * j.OL);
	if (j.len < 1)
		j.len = 1;
	if (j.len > lead)
		j.len = lead;
	j.nb = (lead - 1) / j.len + 1;
	/* a row over the budget goes in chunks of whole vectors' columns */
	j.nc = (Kg * j.OL - 1) / COL_BUDGET + 1;
	j.cl = ((j.OL - 1) / j.nc + 16) / 16 * 16;
	if (j.cl >= j.OL)
		j.cl = j.OL, j.nc = 1;
	j.nc = (j.OL - 1) / j.cl + 1;
	const int64_t units = k->N * k->group * j.nb * j.nc;
	int64_t ncol;
	if (__builtin_mul_overflow(Kg * j.len, j.cl, &ncol) || ncol >= INT64_MAX / 8)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "im2col buffer too large");
	/* a buffer per worker (om_par_slots: 1 at one thread) */
	const int slots = om_par_slots(c->threads, units, 1);
	const size_t bytes = sizeof(float) * (size_t)ncol;
	float *cols;
	om_kind rc = om_ctx_scratch(c, bytes * (size_t)slots, "the im2col buffer", (void **)&cols);
	if (rc)
		return rc;
	j.col = cols, j.ncol = ncol;
	om_par_for_slots(c->threads, units, 1, im2col_piece, &j);
	om_ctx_scratch_done(c, cols);
	return OM_OK;
}

/* ---- the table ----------------------------------------------------------------------------- */

typedef struct conv_impl {
	const char *name;
	bool (*applies)(const om_conv_case *k); /* to this geometry, mode and layout */
	om_kind (*run)(const om_conv_case *k);  /* NULL: oneDNN's (om_conv_dnnl, may decline) */
	bool own; /* omopt's kernel: writes Y before it reads Z (om_conv_epi_keep_z) */
} conv_impl;

/* In order, the first that applies runs (ops.md "Conv"): the depthwise phase loop where it
 * beats oneDNN's, oneDNN's where it beats omopt's other kernels in fast mode (conv_dnnl.c: 1x1
 * convs in NCHW, others blocked with reorders, never those F(4x4) takes at one thread), then
 * omopt's */
static const conv_impl impls[] = {
	{"empty", empty_applies, empty_run, false},
	{"depthwise", depthwise_first_applies, depthwise_run, true},
	{OM_CONV_ONEDNN, dnnl_applies, NULL, false},
	{"depthwise", depthwise_applies, depthwise_run, true},
	{"winograd-f4", wino4_applies, wino_run, true},
	{"winograd-f2", wino2_applies, wino_run, true},
	{"no-taps", notaps_applies, notaps_run, true},
	{"gemm-1x1", pointwise_applies, pointwise_run, true},
	{"im2col-gemm", always, im2col_run, true},
};

const char *om_conv_f32_choose(const om_conv_case *k)
{
	for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++)
		if (impls[i].applies(k))
			return impls[i].name;
	return NULL;
}

om_kind om_conv_f32_run(const om_conv_case *k)
{
	om_ctx *c = k->c;
	for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++) {
		const conv_impl *im = &impls[i];
		om_kind rc = OM_OK;
		if (!im->applies(k))
			continue;
		if (!im->run) {
			if (!om_conv_dnnl(c, k->sp, k->N, k->C, k->M, k->group, k->x, k->w, &k->e,
					  k->y, &rc))
				continue; /* declined after all */
			return rc; /* om_conv_dnnl names what ran */
		} else {
			om_conv_case r = *k;
			float *z = NULL;
			if (im->own &&
			    (rc = om_conv_epi_keep_z(c, &r.e, k->y, c->out[0]->nbytes, &z)))
				return rc;
			rc = im->run(&r);
			om_ctx_scratch_done(c, z);
		}
		om_ctx_chose(c, im->name);
		return rc;
	}
	return om_error(c->st, OM_ERR_INTERNAL, c->node, "no Conv implementation applies");
}
