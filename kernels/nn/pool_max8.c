/* pool_max8.c — MaxPool of int8/uint8 planes (N, C, spatial...) in their own type: for each
 * output row, the largest of the window's input rows lane by lane (vectorized: the bytes of an
 * int8 X with their sign bit flipped, an order-preserving map to uint8), then of each window's
 * taps along the row. Exact, as the maximum is: the float path through conversions
 * (om_run_as_f32) gives the same values (shufflenet_v2_qdq's stem MaxPool of 24 int8 planes of
 * 112 x 112, 3x3/2, one thread on a Zen 3: 1.6 -> 0.23 ms). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize")
#endif
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "parallel.h"
#include "pool_common.h"

typedef struct max8_job {
	const pool3 *g;
	const uint8_t *x;
	uint8_t *y;
	uint8_t flip; /* 0x80 for int8 */
	uint8_t *rows; /* in[2] bytes a slot: the rows' maximum */
} max8_job;

/* y[i] = the largest of m[i s + t] over t < k, i < n, flipped back (s a constant where
 * inlined: strided loads the compiler vectorizes) */
static inline __attribute__((always_inline)) void taps_row(uint8_t *y, const uint8_t *m,
							   int64_t n, int64_t k, const int64_t s,
							   uint8_t flip)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = m[i * s];
	for (int64_t t = 1; t < k; t++)
		for (int64_t i = 0; i < n; i++)
			y[i] = m[i * s + t] > y[i] ? m[i * s + t] : y[i];
	for (int64_t i = 0; i < n; i++)
		y[i] ^= flip;
}

/* planes [lo, hi) */
OM_CLONES static void max8_planes(void *arg, int64_t lo, int64_t hi, int slot)
{
	const max8_job *j = arg;
	const pool3 *g = j->g;
	const axis_taps *T = g->t;
	const int64_t W = g->in[2], plane = g->in[0] * g->in[1] * W;
	const int64_t oplane = g->out[0] * g->out[1] * g->out[2];
	const uint8_t flip = j->flip;
	uint8_t *m = j->rows + (size_t)slot * (size_t)W;
	for (int64_t p = lo; p < hi; p++) {
		const uint8_t *x = j->x + p * plane;
		uint8_t *y = j->y + p * oplane;
		for (int64_t o0 = 0; o0 < g->out[0]; o0++)
			for (int64_t o1 = 0; o1 < g->out[1]; o1++, y += g->out[2]) {
				memset(m, 0, (size_t)W);
				for (int64_t t0 = T[0].lo[o0]; t0 < T[0].hi[o0]; t0++)
					for (int64_t t1 = T[1].lo[o1]; t1 < T[1].hi[o1]; t1++) {
						const int64_t i0 = T[0].start[o0] + t0 * g->dil[0];
						const int64_t i1 = T[1].start[o1] + t1 * g->dil[1];
						const uint8_t *r = x + (i0 * g->in[1] + i1) * W;
						for (int64_t w = 0; w < W; w++) {
							const uint8_t v = r[w] ^ flip;
							m[w] = v > m[w] ? v : m[w];
						}
					}
				/* the windows inside the row, then the rest one by one */
				int64_t a = 0, b = g->out[2];
				while (a < b && (T[2].lo[a] || T[2].hi[a] != g->k[2]))
					a++;
				while (b > a && (T[2].lo[b - 1] || T[2].hi[b - 1] != g->k[2]))
					b--;
				const int64_t s2 = b - a > 1 ? T[2].start[a + 1] - T[2].start[a] : 1;
				const uint8_t *ma = m + (b > a ? T[2].start[a] : 0);
				if (b > a && g->dil[2] == 1 && s2 == 1)
					taps_row(y + a, ma, b - a, g->k[2], 1, flip);
				else if (b > a && g->dil[2] == 1 && s2 == 2)
					taps_row(y + a, ma, b - a, g->k[2], 2, flip);
				else
					a = b = 0;
				for (int64_t o2 = 0; o2 < g->out[2]; o2++) {
					if (o2 >= a && o2 < b)
						continue;
					uint8_t v = 0;
					for (int64_t t2 = T[2].lo[o2]; t2 < T[2].hi[o2]; t2++) {
						const uint8_t u = m[T[2].start[o2] + t2 * g->dil[2]];
						v = u > v ? u : v;
					}
					y[o2] = v ^ flip;
				}
			}
	}
}

bool om_pool_max8_takes(const om_ctx *c)
{
	const int32_t t = c->in[0]->dtype;
	return (t == OM_INT8 || t == OM_UINT8) && om_pool_kind(c) == POOL_MAX &&
	       !(c->nout > 1 && c->out[1]) && !c->blocked;
}

bool om_pool_max8(om_ctx *c, om_kind *rc)
{
	const om_tensor *X = c->in[0];
	*rc = OM_OK;
	if (!om_pool_max8_takes(c))
		return false;
	om_spatial sp;
	pool3 g;
	if ((*rc = om_pool_geometry(c, &sp)))
		return true;
	if ((*rc = om_pool3_init(c, &sp, &g)))
		return true;
	/* a window of padding alone has no maximum of X's type (the float path's -inf) */
	bool empty = false;
	for (int32_t a = 0; a < 3; a++)
		for (int64_t o = 0; o < g.out[a]; o++)
			empty |= g.t[a].lo[o] >= g.t[a].hi[o];
	const int64_t planes = X->dims[0] * X->dims[1];
	if (empty || !planes || !om_tensor_numel(c->out[0])) {
		free(g.buf);
		return false;
	}
	const int64_t plane = g.in[0] * g.in[1] * g.in[2];
	const int slots = om_par_slots(c->threads, planes, 1 + POOL_GRAIN / (plane + 1));
	max8_job j = {&g, X->data, c->out[0]->data, X->dtype == OM_INT8 ? 0x80 : 0, NULL};
	if (!(*rc = om_ctx_scratch(c, (size_t)(g.in[2] * slots), "a row of maxima",
				   (void **)&j.rows))) {
		om_ctx_chose(c, OM_POOL_MAX8);
		om_par_for_slots(c->threads, planes, 1 + POOL_GRAIN / (plane + 1), max8_planes, &j);
		om_ctx_scratch_done(c, j.rows);
	}
	free(g.buf);
	return true;
}
