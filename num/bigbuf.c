/* bigbuf.c — om_bigbuf_alloc (bigbuf.h): mmap, and madvise(MADV_HUGEPAGE) where the system has
 * it (a refusal leaves 4 KB pages: the memory works either way). Elsewhere, aligned_alloc. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bigbuf.h"

#if defined(__linux__)
#include <sys/mman.h>

enum { PAGE = 4096 };
#define HUGE_PAGE ((size_t)2 << 20) /* x86-64's and arm64's (4 KB granule) PMD size */

/* the mapping's length for `bytes`: whole 4 KB pages, or whole huge pages when that adds at
 * most a quarter (a tail in 4 KB pages cost vit_b_16's products 2-4% of their time at one
 * thread: 199-205 ms a run against 195-197) */
static size_t mapped_bytes(size_t bytes)
{
	const size_t len = (bytes + PAGE - 1) / PAGE * PAGE;
	const size_t huge = (len + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
	return len >= HUGE_PAGE && huge - len <= len / 4 ? huge : len;
}

void *om_bigbuf_alloc(size_t bytes)
{
	if (!bytes || bytes > SIZE_MAX - 2 * HUGE_PAGE)
		return NULL;
	const size_t len = mapped_bytes(bytes);
	/* from HUGE_PAGE on, the start aligned to it (mapped with a huge page's slack, cut off
	 * on both sides), so that every whole huge page of it can be one; a tail past the last
	 * whole one stays in 4 KB pages */
	const size_t slack = len >= HUGE_PAGE ? HUGE_PAGE : 0;
	char *raw = mmap(NULL, len + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	char *p = raw;
	if (slack) {
		p = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
		if (p > raw)
			munmap(raw, (size_t)(p - raw));
		if (raw + len + slack > p + len)
			munmap(p + len, (size_t)(raw + len + slack - (p + len)));
	}
#ifdef MADV_HUGEPAGE
	(void)madvise(p, len, MADV_HUGEPAGE);
#endif
	/* Every byte is written soon (a packed B, the pool's arena), and the first write to a page
	 * costs most where the pages are new: in a Firecracker VM a page faulted on first touch
	 * took 10 us (1.9 MiB: 5 ms), and even populated its first write took 1.4 us more (the
	 * host backs it then). The pool plans its arena after the warm-up run, so that cost
	 * landed in the second run of every session (shufflenet: 7.3 ms against 1.2). Faulted in
	 * one call (Linux >= 5.14; older kernels refuse, and the memset faults them) and written
	 * once here, the pages cost it now. */
#ifdef MADV_POPULATE_WRITE
	(void)madvise(p, len, MADV_POPULATE_WRITE);
#endif
	memset(p, 0, len);
	return p;
}

void om_bigbuf_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, mapped_bytes(bytes));
}

static void *touched(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	/* the whole huge pages inside: memory new to the process cost 12-20 us a 4 KB page
	 * in this VM (a decoder's 4 MB of logits, made in each run, 20 ms), 0.1 ms a huge page */
	if (p && bytes >= 2 * HUGE_PAGE) {
		const uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
		const uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(HUGE_PAGE - 1);
		if (hi > lo)
			(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	}
#endif
#ifdef MADV_POPULATE_WRITE
	/* a page faulted on first touch cost ~10 us in a Firecracker VM, populated ~0.6; from
	 * 32 KB, not 256: a decoder's presents (132 KB each, handed over each run) came back from
	 * heap pages glibc had given back in between (medium_al4's decoding step at 2 threads,
	 * CLI: 550 page faults a run, 40 populated; the least of 6 rounds 5.95 -> 5.79 ms) */
	if (p && bytes >= ((size_t)32 << 10)) {
		const uintptr_t lo = ((uintptr_t)p + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
		const uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(PAGE - 1);
		if (hi > lo)
			(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
	}
#endif
	return p;
}

void *om_malloc_touched(size_t bytes)
{
	return touched(malloc(bytes), bytes);
}

void *om_aligned_touched(size_t align, size_t bytes)
{
	if (!align || bytes > (size_t)-1 - align)
		return NULL;
	const size_t n = (bytes + align - 1) / align * align;
	return touched(aligned_alloc(align, n ? n : align), n);
}

#else

void *om_bigbuf_alloc(size_t bytes)
{
	const size_t page = 4096;
	if (!bytes || bytes > (size_t)-1 - page)
		return NULL;
	void *p = aligned_alloc(page, (bytes + page - 1) / page * page);
	if (p)
		memset(p, 0, bytes);
	return p;
}

void om_bigbuf_free(void *p, size_t bytes)
{
	(void)bytes;
	free(p);
}

void *om_malloc_touched(size_t bytes)
{
	return malloc(bytes);
}

void *om_aligned_touched(size_t align, size_t bytes)
{
	if (!align || bytes > (size_t)-1 - align)
		return NULL;
	const size_t n = (bytes + align - 1) / align * align;
	return aligned_alloc(align, n ? n : align);
}

#endif
