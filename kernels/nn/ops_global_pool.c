/* ops_global_pool.c — GlobalMaxPool, GlobalAveragePool and GlobalLpPool on float32
 * (float16/bfloat16, and int8/uint8 for GlobalMaxPool, through conversion): each channel's
 * values pooled in order (exact; fast mode's GlobalAveragePool sums in partial sums), and
 * channel-blocked X and Y in fast mode (pool_common.h). */
/* -O2 vectorizes only loops of known trip count; the row loops here vary. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <math.h>
#include <stdlib.h>

#include "clones.h"
#include "f32_bridge.h"
#include "fastmath.h"
#include "layout.h"
#include "parallel.h"
#include "pool_common.h"

static om_kind global_infer(om_ctx *c)
{
	om_kind rc = om_pool_check_input(c, om_pool_kind(c), 2);
	if (rc)
		return rc;
	const om_tensor *X = c->in[0];
	int64_t d[OM_MAX_RANK];
	for (int32_t i = 0; i < X->rank; i++)
		d[i] = i < 2 ? X->dims[i] : 1;
	om_set_shape(c->out[0], X->dtype, X->rank, d);
	if (om_pool_kind(c) == POOL_LP && om_attr_int(c->node, "p", 2) < 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "p must be >= 1");
	return OM_OK;
}

/* Channels [lo, hi) of a global pool (each a sum or maximum of its own, in order) */
typedef struct global_job {
	enum pool_kind kind;
	bool exact;
	int64_t p, S;
	const float *x;
	float *y;
} global_job;

static void global_piece(void *arg, int64_t lo, int64_t hi)
{
	const global_job *g = arg;
	const int64_t S = g->S;
	for (int64_t i = lo; i < hi; i++) {
		const float *x = g->x + i * S;
		if (g->kind == POOL_AVG && !g->exact) { /* partial sums: a running sum waits on
							   each addition (efficientnet_b0's 17
							   pools took 2.7 ms of a 16 ms run) */
			g->y[i] = om_fast_sum_f32(S, x) / (float)S;
			continue;
		}
		float acc = g->kind == POOL_MAX ? -INFINITY : 0;
		for (int64_t j = 0; j < S; j++) {
			float v = x[j];
			if (g->kind == POOL_MAX)
				acc = v > acc || (isnan(v) && !isnan(acc)) ? v : acc;
			else if (g->kind == POOL_AVG)
				acc += v;
			else
				acc += om_pool_lp_term(v, g->p);
		}
		if (g->kind == POOL_AVG)
			acc /= (float)S;
		else if (g->kind == POOL_LP)
			acc = om_pool_lp_root(acc, g->p);
		g->y[i] = acc;
	}
}

static om_kind global_f32(om_ctx *c)
{
	om_kind rc = global_infer(c);
	if (rc)
		return rc;
	const om_tensor *X = c->in[0];
	global_job g = {om_pool_kind(c), c->exact, om_attr_int(c->node, "p", 2),
			om_shape_numel(X->rank - 2, X->dims + 2), X->data, c->out[0]->data};
	om_par_for(c->threads, X->dims[0] * X->dims[1], GLOBAL_GRAIN / (g.S + 1) + 1, global_piece,
		   &g);
	return OM_OK;
}

/* GlobalAveragePool and GlobalMaxPool on float32 take X and Y channel-blocked (op.h), each on
 * its own: the pool of each block of channels is a vector of `block` lanes */
static void global_layout(const om_ctx *c, om_layout_req *r)
{
	*r = (om_layout_req){0};
	const om_tensor *X = c->in[0];
	if (c->exact || om_pool_kind(c) == POOL_LP || X->dtype != OM_FLOAT || X->rank != 4)
		return;
	r->may = OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0);
}

/* channel blocks [lo, hi) of a blocked X: the lanes of each block pooled together */
typedef struct global_blk_job {
	enum pool_kind kind;
	int64_t S, C, Cb, b;
	bool bout;
	const float *x;
	float *y;
} global_blk_job;

/* the lanes' sums or maxima over S positions of b <= 16 lanes, ps lanes apart (b and max
 * constants where inlined; four partial results a lane, so that the additions do not wait on
 * each other) */
static inline __attribute__((always_inline)) void blk_pool(bool max, const float *x, int64_t S,
							    int64_t ps, int64_t b, float *acc)
{
	enum { U = 4, L = 16 };
	float part[U][L];
	for (int64_t u = 0; u < U; u++)
		for (int64_t l = 0; l < b; l++)
			part[u][l] = max ? -INFINITY : 0.0f;
	int64_t j = 0;
	for (; j + U <= S; j += U)
		for (int64_t u = 0; u < U; u++)
			for (int64_t l = 0; l < b; l++) {
				const float v = x[(j + u) * ps + l];
				float *a = &part[u][l];
				*a = !max ? *a + v : v > *a || v != v ? v : *a;
			}
	for (; j < S; j++)
		for (int64_t l = 0; l < b; l++) {
			const float v = x[j * ps + l];
			float *a = &part[0][l];
			*a = !max ? *a + v : v > *a || v != v ? v : *a;
		}
	for (int64_t l = 0; l < b; l++) {
		float a = part[0][l];
		for (int64_t u = 1; u < U; u++) {
			const float v = part[u][l];
			a = !max ? a + v : v > a || v != v ? v : a;
		}
		acc[l] = a;
	}
}

/* units [lo, hi): lanes [16 k, 16 k + 16) of block u, k = unit % pieces, u = unit / pieces
 * (cloned: a lane's sum is in the same order in every clone; the baseline's SSE2 kept
 * efficientnet_v2_s's pools of 960 channels at 18x18 at 25 us against ONNX Runtime's 15) */
OM_CLONES static void global_blk_piece(void *arg, int64_t lo, int64_t hi)
{
	enum { L = 16 };
	const global_blk_job *g = arg;
	const int64_t b = g->b, pieces = (b + L - 1) / L;
	const bool max = g->kind == POOL_MAX;
	for (int64_t unit = lo; unit < hi; unit++) {
		const int64_t u = unit / pieces, l0 = unit % pieces * L;
		const int64_t w = b - l0 < L ? b - l0 : L;
		const float *x = g->x + u * g->S * b + l0;
		float acc[L];
		if (w == 16 && !max)
			blk_pool(false, x, g->S, b, 16, acc);
		else if (w == 8 && !max)
			blk_pool(false, x, g->S, b, 8, acc);
		else
			blk_pool(max, x, g->S, b, w, acc);
		const int64_t n = u / g->Cb, ch = u % g->Cb * b + l0;
		for (int64_t l = 0; l < w; l++) {
			const float v = g->kind == POOL_AVG ? acc[l] / (float)g->S : acc[l];
			if (g->bout)
				g->y[u * b + l0 + l] = v;
			else if (ch + l < g->C)
				g->y[n * g->C + ch + l] = v;
		}
	}
}

static om_kind global_blocked(om_ctx *c)
{
	const om_tensor *X = c->in[0], *Y = c->out[0];
	const int64_t C = c->blocked & OM_LAYOUT_OUT(0) ? Y->dims[1] * Y->dims[4] : Y->dims[1];
	if (!(c->blocked & OM_LAYOUT_IN(0))) { /* plain X: pooled plain, then blocked */
		const int64_t N = X->dims[0], Cx = X->dims[1];
		const size_t bytes = sizeof(float) * (size_t)(N * Cx);
		om_kind rc = om_ctx_reserve(c, bytes, "a buffer of pooled values");
		float *t = rc ? NULL : malloc(bytes + 1);
		if (rc || !t)
			return rc ? rc : om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		om_tensor y = *Y;
		om_tensor *out[1] = {&y};
		om_ctx lc = *c;
		lc.out = out, lc.blocked = 0;
		y.data = t, y.nbytes = bytes;
		if (!(rc = global_f32(&lc)))
			om_layout_block_f32(t, N, Cx, 1, Y->dims[4], Y->data);
		free(t);
		return rc;
	}
	global_blk_job g = {om_pool_kind(c), X->dims[2] * X->dims[3], C, X->dims[1], X->dims[4],
			    c->blocked & OM_LAYOUT_OUT(0), X->data, Y->data};
	const int64_t pieces = (g.b + 15) / 16;
	om_par_for(c->threads, X->dims[0] * X->dims[1] * pieces,
		   GLOBAL_GRAIN / (g.S * (g.b < 16 ? g.b : 16) + 1) + 1, global_blk_piece, &g);
	return OM_OK;
}

/* global_kernel's path (om_op.choose): the planner's layout decides */
static void global_choose(const om_ctx *c, om_choice *ch)
{
	ch->name = c->blocked ? OM_POOL_BLOCKED : "plain";
}

static om_kind global_kernel(om_ctx *c)
{
	om_choice ch = {0};
	global_choose(c, &ch);
	om_ctx_chose(c, ch.name);
	if (c->blocked)
		return global_blocked(c);
	if (c->in[0]->dtype != OM_FLOAT)
		return om_run_as_f32(c, global_f32, true);
	return global_f32(c);
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

/* GlobalMaxPool-22: X -> Y */
static const om_sig sig_GlobalMaxPool_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL,
	NULL};
/* GlobalMaxPool-1: X -> Y */
static const om_sig sig_GlobalMaxPool_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_GlobalMaxPool_1_v22};
/* GlobalAveragePool-22: X -> Y */
static const om_sig sig_GlobalAveragePool_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	NULL, NULL};
/* GlobalAveragePool-1: X -> Y */
static const om_sig sig_GlobalAveragePool_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_GlobalAveragePool_1_v22};
static const om_sig_attr attrs_GlobalLpPool_1_v22[] = {{"p", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GlobalLpPool-22: X -> Y */
static const om_sig sig_GlobalLpPool_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_GlobalLpPool_1_v22, NULL};
static const om_sig_attr attrs_GlobalLpPool_1_v2[] = {{"p", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GlobalLpPool-2: X -> Y */
static const om_sig sig_GlobalLpPool_1_v2 = {2, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_GlobalLpPool_1_v2, &sig_GlobalLpPool_1_v22};
static const om_sig_attr attrs_GlobalLpPool_1[] = {{"p", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* GlobalLpPool-1: X -> Y */
static const om_sig sig_GlobalLpPool_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_GlobalLpPool_1, &sig_GlobalLpPool_1_v2};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"GlobalMaxPool", "", 1, global_infer, global_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_GlobalMaxPool_1, OM_OPC_NONE, global_layout, POOL_MAX, global_choose},
	{"GlobalAveragePool", "", 1, global_infer, global_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_GlobalAveragePool_1, OM_OPC_NONE, global_layout, POOL_AVG, global_choose},
	{"GlobalLpPool", "", 1, global_infer, global_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_GlobalLpPool_1, OM_OPC_NONE, NULL, POOL_LP, global_choose},
};

const om_op_table om_ops_global_pool = OM_TABLE(rows);
