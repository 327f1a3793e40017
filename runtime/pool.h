/* pool.h — the session's buffer pool: whole blocks reused by liveness, best fit first
 * (in the spirit of ggml's graph allocator). Shapes may change from run to run, so blocks are
 * picked when a node runs, not fixed at plan time.
 *
 * Whole blocks waste memory where small values live long: a block that once held a big
 * value stays busy with a small one (densenet121's dense blocks keep each layer's 32 channels
 * to the block's end: 37 MB of blocks for 8.4 MB alive at most). So each run's requests are
 * traced (size, when got, when released) and after a run the pool lays them out in one arena
 * (pool_plan.c: offsets by decreasing size, each at the lowest gap that no request alive at
 * the same time covers, as TFLite's greedy-by-size planner). The next runs serve request k
 * from its place in the arena when it is no larger than planned and its bytes are free;
 * anything else gets a block as before, and the run is traced again to plan anew. */
#ifndef OM_POOL_H
#define OM_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct om_block {
	void *ptr;
	size_t cap;
	int32_t refs; /* consumers still to run, over every value aliasing the block */
	bool busy;
	bool arena;   /* ptr lies in the pool's arena: the place of a planned request */
	int32_t req;  /* the run's request it serves (the trace), or -1 */
	int32_t live; /* an arena block's position in om_pool.live while busy */
} om_block;

/* One request of a run: its size and its lifetime on the pool's clock (t1 -1: never
 * released), whether its block was handed over (om_pool_take); planned, its place. */
typedef struct om_pool_req {
	size_t size, off;
	int64_t t0, t1;
	bool taken;
	int32_t blk; /* the arena block planned for it, or -1 */
} om_pool_req;

typedef struct om_pool {
	om_block *b;
	int32_t n, cap;
	size_t bytes;      /* sum of block capacities and the arena's */
	size_t busy_bytes; /* capacity of busy blocks */
	size_t peak_busy;  /* high-water mark of busy_bytes */
	size_t limit;      /* most bytes the pool may hold (bytes); 0: no limit */
	/* the current run's requests (om_pool_run_begin .. om_pool_run_end), in order */
	om_pool_req *req;
	int32_t nreq, capreq, seq; /* seq: the next request's number */
	int64_t clock;
	bool running, traced; /* traced: this run's requests are worth planning */
	/* the plan: the last traced run's requests, their places in the arena */
	om_pool_req *plan;
	int32_t nplan, capplan, plans; /* plans: layouts tried (MAX_PLANS at most) */
	char *arena;
	size_t arena_cap;
	int32_t *live, nlive; /* the busy arena blocks */
} om_pool;

/** om_pool_get's answer when the block would take the pool over its limit (nothing allocated). */
#define OM_POOL_OVER_LIMIT (-2)

/** A free block of at least `size` bytes, marked busy with refs 0; -1 when out of memory,
 *  OM_POOL_OVER_LIMIT when the busy blocks and this one would hold more than `limit` bytes.
 *  The smallest free block that fits wins; else a new one while the pool then holds at most
 *  twice the most bytes it has had busy at once (this request's included) and stays within its
 *  limit; else the largest free block grows. When growing would take the pool over its limit,
 *  the free blocks' memory is released first (their slots stay, empty). */
int32_t om_pool_get(om_pool *p, size_t size);
/** Marks block i free (its memory stays in the pool for later runs). */
void om_pool_release(om_pool *p, int32_t i);
/** Hands block i's memory (malloc'd) over to the caller, who frees it; the block stays in the
 *  pool, empty and free (the next om_pool_get that picks it reallocates). */
void *om_pool_take(om_pool *p, int32_t i);
/** A run starts: requests are numbered from 0 again and served from the plan. */
void om_pool_run_begin(om_pool *p);
/** The run ended, every block released or taken: when it was traced (its requests did not
 *  all find their place; at most 16384 of them) and `ok` (it did not fail), the arena is
 *  planned anew from its requests. Best effort: without memory, or past the limit, the pool
 *  keeps serving blocks. */
void om_pool_run_end(om_pool *p, bool ok);
/** Frees every block and the arena. */
void om_pool_free(om_pool *p);

/** Whether a traced request gets a place in the arena: released, not handed over. */
static inline bool om_pool_req_placed(const om_pool_req *r)
{
	return !r->taken && r->t1 >= 0;
}

/** pool_plan.c: places (off) for reqs[0..n) whose lifetimes overlap only where their bytes do
 *  not; requests taken or never released get no place (blk stays -1, off 0). Returns the
 *  arena's size in bytes, or 0 when nothing is placed; SIZE_MAX when out of memory. */
size_t om_pool_place(om_pool_req *reqs, int32_t n);

#endif
