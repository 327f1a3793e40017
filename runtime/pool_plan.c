/* pool_plan.c — places in one arena for a run's requests (pool.h): by decreasing size, each at
 * the smallest gap left by the requests already placed that are alive at the same time, or
 * after the last of them (TFLite's greedy-by-size memory planner). */
#include <stdint.h>
#include <stdlib.h>

#include "pool.h"

typedef struct order {
	size_t size;
	int64_t t0;
	int32_t i;
} order;

typedef struct span {
	size_t lo, hi;
} span;

/* larger first; of equal sizes, the earlier request first */
static int larger_first(const void *a, const void *b)
{
	const order *x = a, *y = b;
	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return (x->t0 > y->t0) - (x->t0 < y->t0);
}

static int lower_first(const void *a, const void *b)
{
	const span *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* the smallest gap of at least `size` bytes between spans sp[0..n) (sorted by lo), or the
 * end of the highest */
static size_t best_gap(const span *sp, int32_t n, size_t size)
{
	size_t at = 0, best = SIZE_MAX, gap = SIZE_MAX;
	for (int32_t j = 0; j < n; j++) {
		if (sp[j].lo > at && sp[j].lo - at >= size && sp[j].lo - at < gap)
			best = at, gap = sp[j].lo - at;
		if (sp[j].hi > at)
			at = sp[j].hi;
	}
	return best != SIZE_MAX ? best : at;
}

size_t om_pool_place(om_pool_req *r, int32_t n)
{
	order *o = malloc(sizeof *o * (size_t)(n + 1));
	int32_t *placed = malloc(sizeof *placed * (size_t)(n + 1));
	span *sp = malloc(sizeof *sp * (size_t)(n + 1));
	if (!o || !placed || !sp) {
		free(o), free(placed), free(sp);
		return SIZE_MAX;
	}
	int32_t m = 0;
	for (int32_t i = 0; i < n; i++) {
		r[i].off = 0;
		if (om_pool_req_placed(&r[i]))
			o[m++] = (order){r[i].size, r[i].t0, i};
	}
	qsort(o, (size_t)m, sizeof *o, larger_first);
	size_t total = 0;
	for (int32_t k = 0; k < m; k++) {
		om_pool_req *q = &r[o[k].i];
		int32_t ns = 0;
		for (int32_t j = 0; j < k; j++) {
			const om_pool_req *e = &r[placed[j]];
			if (e->t0 < q->t1 && q->t0 < e->t1)
				sp[ns++] = (span){e->off, e->off + e->size};
		}
		qsort(sp, (size_t)ns, sizeof *sp, lower_first);
		q->off = best_gap(sp, ns, q->size);
		if (q->off + q->size > total)
			total = q->off + q->size;
		placed[k] = o[k].i;
	}
	free(o), free(placed), free(sp);
	return total;
}
