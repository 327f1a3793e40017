/* pool.h — the session's buffer pool: whole blocks reused by liveness, best fit first
 * (in the spirit of ggml's graph allocator). Shapes may change from run to run, so blocks are
 * picked when a node runs, not fixed at plan time. */
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
} om_block;

typedef struct om_pool {
	om_block *b;
	int32_t n, cap;
	size_t bytes;      /* sum of block capacities */
	size_t busy_bytes; /* capacity of busy blocks */
	size_t peak_busy;  /* high-water mark of busy_bytes */
	size_t limit;      /* most bytes the pool may hold (bytes); 0: no limit */
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
/** Frees every block. */
void om_pool_free(om_pool *p);

#endif
