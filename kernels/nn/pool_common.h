/* pool_common.h — what the pool kernels share (MaxPool, AveragePool, LpPool and their Global
 * forms): the rows' pool kind, the input check, a windowed pool's geometry (output extents,
 * pads, ceil mode, dilations) as tables of taps per axis, Lp's terms, AveragePool's counts, and
 * the windowed pools' float32 kernels (plain: pool_plain.c; channel-blocked: pool_blocked.c). */
#ifndef OM_POOL_COMMON_H
#define OM_POOL_COMMON_H

#include <math.h>

#include "detmath.h"
#include "op.h"
#include "spatial.h"

/* The rows' param: which pool a row is (its windowed and Global forms alike) */
enum pool_kind { POOL_MAX, POOL_AVG, POOL_LP };

static inline enum pool_kind om_pool_kind(const om_ctx *c)
{
	return (enum pool_kind)c->op->param;
}

/** OK when X (input 0) is given, of rank >= min_rank and of a type the pool takes (float32;
 *  float16 and bfloat16, and int8/uint8 for MaxPool, through conversion) */
om_kind om_pool_check_input(om_ctx *c, enum pool_kind kind, int32_t min_rank);

/* ---- windowed pools ------------------------------------------------------------------------ */

/** The window geometry of a windowed pool (the node's row and attributes, X's shape: up to
 *  three spatial axes, kernel_shape, strides, pads or auto_pad, dilations, ceil_mode), with
 *  storage_order and LpPool's p checked */
om_kind om_pool_geometry(om_ctx *c, om_spatial *sp);

/* Per spatial axis (three, leading ones of extent 1 when fewer) and output index: the taps
 * inside the input [lo, hi) and the taps inside the padded input (count_include_pad). */
typedef struct axis_taps {
	int64_t *lo, *hi, *padded, *start;
} axis_taps;

typedef struct pool3 {
	int64_t in[3], out[3], dil[3], k[3];
	axis_taps t[3];
	int64_t *buf;
} pool3;

/** g's tables of taps for sp (g->buf is malloc'd: the caller frees it) */
om_kind om_pool3_init(om_ctx *c, const om_spatial *sp, pool3 *g);

typedef struct pool_args {
	enum pool_kind kind;
	int include_pad, col_major;
	int64_t p;
} pool_args;

static inline float om_pool_lp_term(float v, int64_t p)
{
	return p == 1 ? fabsf(v) : p == 2 ? v * v : (float)om_det_pow(fabsf(v), (double)p);
}

static inline float om_pool_lp_root(float acc, int64_t p)
{
	return p == 1 ? acc : p == 2 ? sqrtf(acc) : (float)om_det_pow(acc, 1.0 / (double)p);
}

/* Taps of output o counted by AveragePool: inside the input, or inside the padded input. */
static inline int64_t om_pool_window_count(const pool3 *g, const pool_args *pa, const int64_t *o)
{
	int64_t cnt = 1;
	for (int32_t a = 0; a < 3; a++)
		cnt *= pa->include_pad ? g->t[a].padded[o[a]] : g->t[a].hi[o[a]] - g->t[a].lo[o[a]];
	return cnt;
}

/* Input and output elements a piece of images reads and writes, at least; a global pool's
 * sum is cheaper per element (2 threads: efficientnet_b0's 17 GlobalAveragePools, ms a run,
 * 0.16 -> 0.20 split from 32768 elements on) */
enum { POOL_GRAIN = 1 << 15, GLOBAL_GRAIN = 1 << 17 };

/* ---- the windowed pools' float32 kernels ---------------------------------------------------- */

/* The plain kernels' paths (pool_plain.c): the general window walk, MaxPool without Indices
 * and dilations separably by rows (or over whole planes at stride 1 when the rows keep their
 * width), AveragePool without dilations by rows (or, fast mode's 2-D, by separable planes) */
enum pool_path {
	POOL_PATH_GENERAL, POOL_PATH_MAX_ROWS, POOL_PATH_MAX_PLANE, POOL_PATH_AVG_ROWS,
	POOL_PATH_AVG_PLANE, POOL_PATHS
};
/* Their names, as the step records them (om_ctx_chose, om_op.choose) */
extern const char *const om_pool_path_names[POOL_PATHS];
#define OM_POOL_BLOCKED "blocked"     /* om_pool_blocked */
#define OM_POOL_VIA "planes-nchw16c" /* om_pool_via_blocks */
#define OM_POOL_MAX8 "max-8bit"      /* om_pool_max8 */

/** The plain kernels' path for the pool in c of geometry sp */
enum pool_path om_pool_plain_path(const om_ctx *c, const om_spatial *sp);
/** The plain kernels (pool_plain.c): X and Y in N, C, spatial order, float32, by
 *  om_pool_plain_path's path */
om_kind om_pool_plain_f32(om_ctx *c);
/** X and Y channel-blocked (pool_blocked.c): the planner's choice (ops_pool.c's layout) */
om_kind om_pool_blocked(om_ctx *c);
/** Whether fast mode on AVX-512 pools c's plain float planes 16 at a time through nChw16c
 *  (om_pool_via_blocks), for geometry sp (NULL: the checks that need none) */
bool om_pool_via_takes(const om_ctx *c, const om_spatial *sp);
/** That path (pool_blocked.c). False when om_pool_via_takes says no (*rc OK), else true with
 *  *rc the result. */
bool om_pool_via_blocks(om_ctx *c, om_kind *rc);
/** MaxPool of plain int8/uint8 X without Indices in its own type (pool_max8.c). False when
 *  not taken (*rc OK: another type or pool, Indices, a window of padding alone), else true
 *  with *rc the result. */
bool om_pool_max8(om_ctx *c, om_kind *rc);
/** The checks of om_pool_max8 that need no geometry (the plan-time name) */
bool om_pool_max8_takes(const om_ctx *c);

#endif
