/* bigbuf.h — memory for a large buffer a kernel keeps across runs (a packed B of the weights):
 * an anonymous mapping of its own, which Linux backs with transparent huge pages where its
 * policy allows (asked for with madvise: the "madvise" mode included). A product that streams
 * a packed B of several MB through 4 KB pages ran 1.1-1.3x its time in some processes and not
 * others (vit_b_16 at one thread: 186-250 ms a run, 191-200 in huge pages). */
#ifndef OM_BIGBUF_H
#define OM_BIGBUF_H

#include <stddef.h>

/** `bytes` (> 0) of zeroed memory aligned to at least 4096 bytes, its pages already faulted in
 *  where Linux can (MADV_POPULATE_WRITE): the caller writes all of it soon. NULL when out of
 *  memory. */
void *om_bigbuf_alloc(size_t bytes);
/** Frees what om_bigbuf_alloc(bytes) returned (NULL: nothing). */
void om_bigbuf_free(void *p, size_t bytes);

/** malloc(bytes), freed with free(), whose whole pages are faulted in at once where Linux can
 *  (MADV_POPULATE_WRITE) when it is large (from 32 KB): for a buffer the caller writes all of
 *  soon. glibc serves a large malloc from a fresh mapping (above its mmap threshold) or from
 *  heap pages it may have given back, so such a buffer made in every call page-faults again. */
void *om_malloc_touched(size_t bytes);
/** The same, aligned to `align` (a power of two, a multiple of sizeof(void *)). */
void *om_aligned_touched(size_t align, size_t bytes);

#endif
