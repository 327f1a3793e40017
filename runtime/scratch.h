/* scratch.h — a run's work buffers for kernels (om_ctx_scratch, ops/op.h): a stack in one
 * buffer that a runner keeps run after run, so that no kernel mallocs and frees a large buffer
 * at every run (glibc then gives the pages back and they fault in again; at two threads the
 * other thread's TLB is flushed each time).
 *
 * Buffers are taken and given back in any order, at most OM_SCRATCH_MOST at once; the stack's
 * top falls back when the topmost is given back. A request that does not fit above the top gets
 * a malloc of its own, and the stack is remade as large as the most bytes taken at once when
 * no buffer is out. Kept apart from the buffer pool (pool.h): a scratch block taken from it
 * took the free block a later output wanted (the pool then made another: a 4-bit decoder's
 * peak RSS +10 MiB). */
#ifndef OM_SCRATCH_H
#define OM_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "op.h"

typedef struct om_scratch_buf {
	char *p;
	size_t off, size; /* its place in the stack, or size of its own malloc (own) */
	bool own;
} om_scratch_buf;

typedef struct om_scratch {
	char *base;
	size_t cap, top; /* the stack's bytes, and those under its topmost buffer's end */
	size_t busy, most; /* bytes out now, and the most out at once */
	om_scratch_buf out[OM_SCRATCH_MOST];
	int n;
} om_scratch;

/** *p: `bytes` bytes (64-byte aligned) of s; false when out of memory or OM_SCRATCH_MOST are out. */
bool om_scratch_take(om_scratch *s, size_t bytes, void **p);
/** Gives p back (a pointer om_scratch_take gave; anything else is ignored). */
void om_scratch_give(om_scratch *s, void *p);
/** Gives back every buffer out after the first `keep` (a kernel's leftovers). */
void om_scratch_give_from(om_scratch *s, int keep);
/** Frees s's memory (no buffer out). */
void om_scratch_free(om_scratch *s);

#endif
