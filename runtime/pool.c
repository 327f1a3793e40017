/* pool.c — best-fit reuse of freed blocks for the session's intermediate values, and the
 * arena planned from a traced run (pool.h). */
#include <stdlib.h>
#include <string.h>

#include "bigbuf.h"
#include "pool.h"

enum {
	MAX_PLANS = 8,     /* runs planned at most: shapes that keep changing stay with blocks */
	MAX_TRACED = 16384 /* requests a planned run makes at most (the layout is quadratic) */
};

static size_t round_up(size_t size)
{
	if (size > SIZE_MAX - 63)
		return 0;
	return size ? (size + 63) & ~(size_t)63 : 64;
}

static void mark_busy(om_pool *p, int32_t i)
{
	p->b[i].busy = true;
	p->b[i].refs = 0;
	p->busy_bytes += p->b[i].cap;
	if (p->busy_bytes > p->peak_busy)
		p->peak_busy = p->busy_bytes;
	if (p->b[i].arena) {
		p->b[i].live = p->nlive;
		p->live[p->nlive++] = i;
	}
}

/* request k's place in the arena, when planned, free and large enough; else -1 */
static int32_t from_plan(om_pool *p, int32_t k, size_t size)
{
	if (k >= p->nplan || p->plan[k].blk < 0 || size > p->plan[k].size)
		return -1;
	const int32_t i = p->plan[k].blk;
	const char *lo = p->b[i].ptr, *hi = lo + p->b[i].cap;
	if (p->b[i].busy || (p->limit && p->busy_bytes > p->limit - p->b[i].cap))
		return -1;
	for (int32_t j = 0; j < p->nlive; j++) { /* a run that went otherwise than planned */
		const char *a = p->b[p->live[j]].ptr, *z = a + p->b[p->live[j]].cap;
		if (a < hi && lo < z)
			return -1;
	}
	mark_busy(p, i);
	return i;
}

/* A free block (not the arena's) of at least `size` bytes (om_pool_get) */
static int32_t from_blocks(om_pool *p, size_t size)
{
	int32_t best = -1, largest = -1, empty = -1;
	for (int32_t i = 0; i < p->n; i++) {
		const om_block *b = &p->b[i];
		if (b->busy || b->arena)
			continue;
		if (!b->ptr) { /* its memory taken (om_pool_take) or dropped: a slot to reuse */
			empty = empty < 0 ? i : empty;
			continue;
		}
		if (b->cap >= size && (best < 0 || b->cap < p->b[best].cap))
			best = i;
		if (largest < 0 || b->cap > p->b[largest].cap)
			largest = i;
	}
	/* Nothing fits: a new block while the pool stays within twice the most it has had busy
	 * (run again on the same shapes, the next run then finds every block it needs: growing a
	 * block reallocated and page-faulted the same memory in every run, densenet121 4 of 68 ms,
	 * with 10% less memory); past that, or past the limit, the largest free block grows (shapes
	 * that keep growing from run to run stay within about twice their need). In a traced run
	 * (its requests get their places in an arena after it, and its blocks go) a block more than
	 * twice the size counts as not fitting while a new one may be made: a small value that
	 * lives long (a decoder's present KV, 128 KB) held a dead 1.4 MB block to the run's end, 16
	 * of them, and the pool grew to 2.3 times the bytes alive at once. */
	const size_t need = p->busy_bytes + size;
	const size_t high = need > p->peak_busy ? need : p->peak_busy;
	const bool within = p->bytes <= 2 * high - size; /* a new block keeps the pool in 2 high */
	const bool in_limit = !p->limit || (size <= p->limit && p->bytes <= p->limit - size);
	if (best >= 0 && (!p->traced || p->b[best].cap / 2 <= size || !within || !in_limit)) {
		mark_busy(p, best);
		return best;
	}
	bool grow = largest >= 0 && !within;
	if (p->limit) {
		if (size > p->limit || p->busy_bytes > p->limit - size)
			return OM_POOL_OVER_LIMIT;
		grow |= largest >= 0 && !in_limit;
		size_t kept = grow ? p->b[largest].cap : 0;
		if (p->bytes - kept > p->limit - size) /* drop the free blocks' memory */
			for (int32_t i = 0; i < p->n; i++)
				if (!p->b[i].busy && !p->b[i].arena && p->b[i].ptr) {
					free(p->b[i].ptr);
					p->bytes -= p->b[i].cap;
					p->b[i].ptr = NULL;
					p->b[i].cap = 0;
				}
	}
	if (grow) {
		void *q = realloc(p->b[largest].ptr, size);
		if (!q)
			return -1;
		p->bytes += size - p->b[largest].cap;
		p->b[largest].ptr = q;
		p->b[largest].cap = size;
		mark_busy(p, largest);
		return largest;
	}
	/* a new block, in an empty slot when there is one: a caller that takes its outputs every
	 * run (a decoder's present KV and logits) left one a run, and the searches here grew with
	 * them (5% of a decoding step after 1,000 steps) */
	if (empty < 0 && p->n == p->cap) {
		int32_t cap = p->cap ? 2 * p->cap : 16;
		om_block *nb = realloc(p->b, sizeof *nb * (size_t)cap);
		if (!nb)
			return -1;
		p->b = nb;
		p->cap = cap;
	}
	void *q = om_malloc_touched(size);
	if (!q)
		return -1;
	const int32_t at = empty >= 0 ? empty : p->n++;
	p->b[at] = (om_block){.ptr = q, .cap = size, .req = -1};
	p->bytes += size;
	mark_busy(p, at);
	return at;
}

/* request k of the run, served by block i: traced (a trace that cannot grow is dropped) */
static void trace_get(om_pool *p, int32_t k, int32_t i, size_t size)
{
	p->b[i].req = -1;
	if (k < 0 || k != p->nreq)
		return;
	if (p->nreq == MAX_TRACED) {
		p->traced = false;
		return;
	}
	if (p->nreq == p->capreq) {
		const int32_t cap = p->capreq ? 2 * p->capreq : 64;
		om_pool_req *r = realloc(p->req, sizeof *r * (size_t)cap);
		if (!r) {
			p->traced = false;
			return;
		}
		p->req = r, p->capreq = cap;
	}
	p->req[p->nreq++] = (om_pool_req){.size = size, .t0 = p->clock++, .t1 = -1, .blk = -1};
	p->b[i].req = k;
}

int32_t om_pool_get(om_pool *p, size_t size)
{
	size = round_up(size);
	if (!size)
		return -1;
	const int32_t k = p->running ? p->seq++ : -1;
	int32_t i = k >= 0 ? from_plan(p, k, size) : -1;
	if (i < 0) {
		if ((i = from_blocks(p, size)) < 0)
			return i;
		/* a request the plan has no place for: trace the run, to plan it */
		if (k >= 0 && (k >= p->nplan || p->plan[k].blk >= 0) && p->plans < MAX_PLANS)
			p->traced = true;
	}
	trace_get(p, k, i, size);
	return i;
}

void om_pool_release(om_pool *p, int32_t i)
{
	if (i < 0 || i >= p->n || !p->b[i].busy)
		return;
	om_block *b = &p->b[i];
	if (b->req >= 0 && b->req < p->nreq)
		p->req[b->req].t1 = p->clock++;
	b->req = -1;
	if (b->arena) { /* out of the live list */
		const int32_t last = p->live[--p->nlive];
		p->live[b->live] = last;
		p->b[last].live = b->live;
	}
	b->busy = false;
	b->refs = 0;
	p->busy_bytes -= b->cap;
}

void *om_pool_take(om_pool *p, int32_t i)
{
	if (i < 0 || i >= p->n)
		return NULL;
	if (p->b[i].req >= 0 && p->b[i].req < p->nreq)
		p->req[p->b[i].req].taken = true;
	void *q = p->b[i].ptr;
	if (p->b[i].arena) { /* the arena keeps its bytes: a copy */
		if ((q = malloc(p->b[i].cap)))
			memcpy(q, p->b[i].ptr, p->b[i].cap);
		om_pool_release(p, i);
		return q;
	}
	om_pool_release(p, i);
	p->bytes -= p->b[i].cap;
	p->b[i].ptr = NULL;
	p->b[i].cap = 0;
	return q;
}

void om_pool_run_begin(om_pool *p)
{
	p->running = true;
	p->traced = p->nplan == 0 && p->plans < MAX_PLANS;
	p->seq = p->nreq = 0;
	p->clock = 0;
}

/* The arena laid out for the traced requests: the old arena's blocks and the free blocks go
 * (the planned requests no longer need them), a block for each request placed. No block may
 * be busy: block numbers change. Each attempt counts towards MAX_PLANS, so that a layout the
 * memory limit refuses is not tried again in every run. */
static void plan_run(om_pool *p)
{
	for (int32_t i = 0; i < p->n; i++)
		if (p->b[i].busy)
			return;
	p->plans++;
	/* as many requests as the plan's: the same values, of other shapes (a decoder's prompt
	 * and its steps take turns), each placed at the larger of its two sizes, so that both
	 * runs find their places in the one layout. Planned for one run's sizes, each turn missed
	 * the other's, was traced and planned again, and its blocks and arena were new memory
	 * (an fp16 decoder's prompt after a step: 62 ms against 39, 8 plans in) */
	for (int32_t k = 0; p->nreq == p->nplan && k < p->nreq; k++)
		if (p->plan[k].size > p->req[k].size)
			p->req[k].size = p->plan[k].size;
	const size_t total = om_pool_place(p->req, p->nreq);
	if (total == SIZE_MAX || (p->limit && total > p->limit))
		return;
	int32_t placed = 0;
	for (int32_t k = 0; k < p->nreq; k++)
		placed += om_pool_req_placed(&p->req[k]);
	om_block *nb = realloc(p->b, sizeof *nb * (size_t)(p->n + placed + 1));
	int32_t *live = realloc(p->live, sizeof *live * (size_t)(placed + 1));
	if (nb)
		p->b = nb, p->cap = p->n + placed + 1;
	if (live)
		p->live = live;
	if (!nb || !live)
		return;
	if (total > p->arena_cap) { /* in huge pages where Linux allows (bigbuf.h) */
		char *a = om_bigbuf_alloc(total);
		if (!a)
			return;
		om_bigbuf_free(p->arena, p->arena_cap);
		p->bytes += total - p->arena_cap;
		p->arena = a, p->arena_cap = total;
	}
	int32_t n = 0;
	for (int32_t i = 0; i < p->n; i++) {
		if (p->b[i].arena)
			continue;
		free(p->b[i].ptr);
		p->bytes -= p->b[i].cap;
	}
	for (int32_t k = 0; k < p->nreq; k++) {
		om_pool_req *q = &p->req[k];
		q->blk = -1;
		if (!om_pool_req_placed(q))
			continue;
		p->b[n] = (om_block){.ptr = p->arena + q->off, .cap = q->size, .arena = true,
				     .req = -1};
		q->blk = n++;
	}
	p->n = n;
	p->nlive = 0;
	om_pool_req *old = p->plan;
	const int32_t cap = p->capplan;
	p->plan = p->req, p->nplan = p->nreq, p->capplan = p->capreq;
	p->req = old, p->capreq = cap, p->nreq = 0;
	p->peak_busy = total; /* from now on: the layout's, or more when runs differ from it */
}

void om_pool_run_end(om_pool *p, bool ok)
{
	if (p->running && p->traced && ok)
		plan_run(p);
	p->running = p->traced = false;
	p->nreq = 0;
}

void om_pool_free(om_pool *p)
{
	for (int32_t i = 0; i < p->n; i++)
		if (!p->b[i].arena)
			free(p->b[i].ptr);
	free(p->b);
	om_bigbuf_free(p->arena, p->arena_cap);
	free(p->req);
	free(p->plan);
	free(p->live);
	memset(p, 0, sizeof *p);
}
