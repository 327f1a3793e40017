/* move.h — element moves dispatched by element size, shared by every kernel that moves data
 * (seed §1: operators that only move elements treat all types of one size alike). */
#ifndef OM_MOVE_H
#define OM_MOVE_H

#include <stdint.h>
#include <string.h>

/** Copies one element of `size` bytes; fixed sizes compile to single loads and stores. */
static inline void om_move1(void *dst, const void *src, size_t size)
{
	switch (size) {
	case 1: memcpy(dst, src, 1); break;
	case 2: memcpy(dst, src, 2); break;
	case 4: memcpy(dst, src, 4); break;
	case 8: memcpy(dst, src, 8); break;
	case 16: memcpy(dst, src, 16); break;
	default: memcpy(dst, src, size); break;
	}
}

/** Copies n contiguous elements of `size` bytes (non-overlapping). */
static inline void om_move_n(void *dst, const void *src, size_t size, int64_t n)
{
	if (n > 0)
		memcpy(dst, src, size * (size_t)n);
}

/** dst[i] = src[i * stride] for i < n (strides in elements). */
static inline void om_move_strided(void *dst, const void *src, size_t size, int64_t n,
				   int64_t stride)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	for (int64_t i = 0; i < n; i++)
		om_move1(d + (size_t)i * size, s + (size_t)(i * stride) * size, size);
}

#endif
