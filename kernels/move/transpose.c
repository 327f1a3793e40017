/* transpose.c — the Transpose move: merge axes that stay adjacent, then copy runs or 32x32
 * tiles (seed §2). */
#include <string.h>

#include "move.h"
#include "shape_util.h"
#include "transpose.h"

enum { TILE = 32 };

int32_t om_transpose_merge(int32_t rank, int64_t *dims, int32_t *perm)
{
	int32_t map[OM_MAX_RANK], r = 0;
	int64_t d[OM_MAX_RANK];
	for (int32_t i = 0; i < rank; i++) {
		map[i] = dims[i] == 1 ? -1 : r;
		if (dims[i] != 1)
			d[r++] = dims[i];
	}
	int32_t p[OM_MAX_RANK], np = 0;
	for (int32_t i = 0; i < rank; i++)
		if (map[perm[i]] >= 0)
			p[np++] = map[perm[i]];
	/* group output axes: a run p[j], p[j]+1, ... is one axis */
	int32_t head[OM_MAX_RANK], ng = 0; /* first input axis of each group, in output order */
	int64_t gd[OM_MAX_RANK];
	for (int32_t j = 0; j < np; j++) {
		if (j > 0 && p[j] == p[j - 1] + 1) {
			gd[ng - 1] *= d[p[j]];
			continue;
		}
		head[ng] = p[j];
		gd[ng++] = d[p[j]];
	}
	/* renumber groups by their position in the input */
	for (int32_t g = 0; g < ng; g++) {
		int32_t rankpos = 0;
		for (int32_t h = 0; h < ng; h++)
			rankpos += head[h] < head[g];
		perm[g] = rankpos;
		dims[rankpos] = gd[g];
	}
	return ng;
}

const char *const om_transpose_move_names[4] = {"empty", "copy", "runs", "tiles-32x32"};

enum om_transpose_move om_transpose_plan(int32_t *rank, int64_t *dims, int32_t *perm)
{
	int64_t numel = 1;
	for (int32_t i = 0; i < *rank; i++)
		numel *= dims[i];
	if (numel <= 0)
		return OM_TRANSPOSE_EMPTY;
	const int32_t r = *rank = om_transpose_merge(*rank, dims, perm);
	if (r <= 1)
		return OM_TRANSPOSE_COPY;
	return perm[r - 1] == r - 1 ? OM_TRANSPOSE_RUNS : OM_TRANSPOSE_TILES;
}

/* one tile: its source rows are read whole into buf, then written out transposed, so both
 * the reads and the writes of the large arrays are contiguous runs */
#define TILE_LOOP(SZ)                                                                           \
	for (int64_t i0 = 0; i0 < rows; i0 += TILE)                                             \
		for (int64_t j0 = 0; j0 < cols; j0 += TILE) {                                   \
			const int64_t ti = i0 + TILE < rows ? TILE : rows - i0;                 \
			const int64_t tj = j0 + TILE < cols ? TILE : cols - j0;                 \
			for (int64_t j = 0; j < tj; j++)                                        \
				memcpy(buf + j * TILE * (SZ), s + (i0 + (j0 + j) * sstride) * (SZ), \
				       (size_t)(ti * (SZ)));                                    \
			for (int64_t i = 0; i < ti; i++) {                                      \
				unsigned char *o = d + ((i0 + i) * dstride + j0) * (SZ);        \
				for (int64_t j = 0; j < tj; j++)                                \
					memcpy(o + j * (SZ), buf + (j * TILE + i) * (SZ), (SZ)); \
			}                                                                       \
		}

/* d[i * dstride + j] = s[i + j * sstride] for i < rows, j < cols, in tiles */
static void tiles(unsigned char *d, const unsigned char *s, size_t size, int64_t rows,
		  int64_t cols, int64_t dstride, int64_t sstride)
{
	unsigned char buf[TILE * TILE * 16];
	switch (size) {
	case 1: TILE_LOOP(1); break;
	case 2: TILE_LOOP(2); break;
	case 4: TILE_LOOP(4); break;
	case 8: TILE_LOOP(8); break;
	case 16: TILE_LOOP(16); break;
	default: /* larger elements: no buffer */
		for (int64_t i = 0; i < rows; i++)
			for (int64_t j = 0; j < cols; j++)
				memcpy(d + (i * dstride + j) * (int64_t)size,
				       s + (i + j * sstride) * (int64_t)size, size);
		break;
	}
}

#undef TILE_LOOP

void om_transpose(void *dst, const void *src, size_t size, int32_t rank, const int64_t *dims,
		  const int32_t *perm)
{
	int64_t d[OM_MAX_RANK];
	int32_t p[OM_MAX_RANK];
	int64_t numel = 1;
	for (int32_t i = 0; i < rank; i++) {
		d[i] = dims[i];
		p[i] = perm[i];
		numel *= dims[i];
	}
	int32_t r = rank;
	const enum om_transpose_move how = om_transpose_plan(&r, d, p);
	if (how == OM_TRANSPOSE_EMPTY)
		return;
	if (how == OM_TRANSPOSE_COPY) {
		om_move_n(dst, src, size, numel);
		return;
	}
	int64_t istr[OM_MAX_RANK], odims[OM_MAX_RANK], sstr[OM_MAX_RANK], ostr[OM_MAX_RANK];
	om_dense_strides(r, d, istr);
	for (int32_t i = 0; i < r; i++) {
		odims[i] = d[p[i]];
		sstr[i] = istr[p[i]];
	}
	if (how == OM_TRANSPOSE_RUNS) { /* innermost axis stays: contiguous runs */
		om_strided_copy(dst, src, size, r, odims, sstr);
		return;
	}
	om_dense_strides(r, odims, ostr);
	int32_t a = 0; /* the output axis that is innermost in the input */
	while (p[a] != r - 1)
		a++;
	/* odometer over the other axes, one tiled 2-D transpose each */
	int32_t other[OM_MAX_RANK], no = 0;
	for (int32_t i = 0; i < r - 1; i++)
		if (i != a)
			other[no++] = i;
	int64_t idx[OM_MAX_RANK] = {0}, soff = 0, doff = 0;
	unsigned char *dd = dst;
	const unsigned char *ss = src;
	const int64_t sz = (int64_t)size;
	for (;;) {
		tiles(dd + doff * sz, ss + soff * sz, size, odims[a], odims[r - 1], ostr[a],
		      sstr[r - 1]);
		int32_t k = no - 1;
		for (; k >= 0; k--) {
			const int32_t ax = other[k];
			soff += sstr[ax];
			doff += ostr[ax];
			if (++idx[k] < odims[ax])
				break;
			soff -= sstr[ax] * odims[ax];
			doff -= ostr[ax] * odims[ax];
			idx[k] = 0;
		}
		if (k < 0)
			break;
	}
}
