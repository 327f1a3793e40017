/* index_topk.c — TopK (seed §5): k an attribute before opset 10 and an input from 10;
 * `largest` (11+, default 1); `sorted` ignored (always sorted). Ties keep input order (lower
 * index first) in both directions; NaN is greater than every number. Per row: insertion into
 * a sorted list for k <= 16; otherwise, for k below a quarter of the row, a quickselect of the
 * first k then their merge sort, else a merge sort of the row's indices. Both order by key
 * and then index, a strict total order: the result is the stable one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index_util.h"
#include "move.h"

static om_kind topk_check(om_ctx *c, int64_t *k, int32_t *axis)
{
	const om_tensor *x = c->in[0];
	if (!om_ix_is_float(x->dtype) && (!om_ix_is_int(x->dtype) || x->dtype == OM_BOOL))
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "TopK on %s",
				om_dtype_name(x->dtype));
	om_kind rc = om_norm_axis(c, om_attr_int(c->node, "axis", -1), x->rank, axis);
	if (rc)
		return rc;
	if (!(c->op->param & OM_TOPK_K_INPUT)) {
		const om_attr *a = om_node_attr(c->node, "k");
		if (!a || a->type != OM_ATTR_INT)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "no attribute k");
		*k = a->i;
	} else {
		const om_tensor *kt = c->nin > 1 ? c->in[1] : NULL;
		if (!kt || (kt->dtype != OM_INT64 && kt->dtype != OM_INT32) || kt->rank > 1)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"K must be a one-element int64 tensor");
		if ((rc = om_ix_scalar_int(c, kt, "K", k)))
			return rc;
	}
	if (*k < 0 || *k > x->dims[*axis])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"k = %lld is outside [0, %lld]", (long long)*k,
				(long long)x->dims[*axis]);
	return OM_OK;
}

om_kind om_topk_infer(om_ctx *c)
{
	int64_t k;
	int32_t axis;
	om_kind rc = topk_check(c, &k, &axis);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	int64_t dims[OM_MAX_RANK];
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	dims[axis] = k;
	if (c->out[0] && (rc = om_ix_set_shape(c, c->out[0], x->dtype, x->rank, dims)))
		return rc;
	if (c->nout > 1 && c->out[1])
		return om_ix_set_shape(c, c->out[1], OM_INT64, x->rank, dims);
	return OM_OK;
}

/* An order-preserving key: a larger key is a larger value, NaN is the largest, -0.0 == 0.0. */
static uint64_t key_at(const om_tensor *t, int64_t i)
{
	const uint64_t top = UINT64_C(1) << 63;
	if (om_ix_is_float(t->dtype)) {
		double v = om_ix_float_at(t, i);
		if (isnan(v))
			return UINT64_MAX;
		if (v == 0)
			v = 0.0;
		uint64_t b;
		memcpy(&b, &v, 8);
		return b & top ? ~b : b | top;
	}
	switch (t->dtype) {
	case OM_UINT64: return ((const uint64_t *)t->data)[i];
	case OM_UINT8: case OM_UINT16: case OM_UINT32: return (uint64_t)om_ix_int_at(t, i);
	default: return (uint64_t)om_ix_int_at(t, i) ^ top;
	}
}

/* a comes before b (strictly) in the output order */
static inline bool before(uint64_t a, uint64_t b, bool largest)
{
	return largest ? a > b : a < b;
}

/* Selects the first k of the row (keys[0..n)) into sel, stable. */
static void select_insertion(const uint64_t *keys, int64_t n, int64_t k, bool largest,
			     int64_t *sel)
{
	int64_t cnt = 0;
	for (int64_t j = 0; j < n; j++) {
		int64_t pos = cnt;
		while (pos > 0 && before(keys[j], keys[sel[pos - 1]], largest))
			pos--;
		if (pos >= k)
			continue;
		int64_t last = cnt < k ? cnt : k - 1;
		memmove(sel + pos + 1, sel + pos, sizeof(int64_t) * (size_t)(last - pos));
		sel[pos] = j;
		if (cnt < k)
			cnt++;
	}
}

/* a comes before b in the output order: by key, then the lower index first (a strict total
 * order, so any selection or sort by it gives the stable result) */
static inline bool ahead(const uint64_t *keys, int64_t a, int64_t b, bool largest)
{
	return keys[a] != keys[b] ? before(keys[a], keys[b], largest) : a < b;
}

/* Bottom-up merge sort of the m indices idx by `ahead`; tmp holds m entries. */
static void sort_idx(const uint64_t *keys, int64_t *idx, int64_t m, bool largest, int64_t *tmp)
{
	int64_t *a = idx, *b = tmp;
	for (int64_t w = 1; w < m; w *= 2) {
		for (int64_t lo = 0; lo < m; lo += 2 * w) {
			int64_t mid = lo + w < m ? lo + w : m, hi = lo + 2 * w < m ? lo + 2 * w : m;
			int64_t i = lo, j = mid, o = lo;
			while (i < mid && j < hi)
				b[o++] = ahead(keys, a[j], a[i], largest) ? a[j++] : a[i++];
			while (i < mid)
				b[o++] = a[i++];
			while (j < hi)
				b[o++] = a[j++];
		}
		int64_t *s = a;
		a = b, b = s;
	}
	if (a != idx)
		memcpy(idx, a, sizeof(int64_t) * (size_t)m);
}

static inline void swap_idx(int64_t *a, int64_t *b)
{
	const int64_t t = *a;
	*a = *b;
	*b = t;
}

/* Moves the first k (in the output order) of idx[0..n) to idx[0..k), in no particular order:
 * quickselect with a median-of-three pivot (every index before lo is ahead of every index
 * from lo on); a range of 32 or less, or one still open after 64 rounds, is merge sorted. */
static void select_first(const uint64_t *keys, int64_t *idx, int64_t n, int64_t k, bool largest,
			 int64_t *tmp)
{
	int64_t lo = 0, hi = n;
	for (int round = 0; hi - lo > 32 && round < 64; round++) {
		int64_t *a = &idx[lo], *m = &idx[lo + (hi - lo) / 2], *z = &idx[hi - 1];
		if (ahead(keys, *m, *a, largest))
			swap_idx(a, m);
		if (ahead(keys, *z, *m, largest)) {
			swap_idx(m, z);
			if (ahead(keys, *m, *a, largest))
				swap_idx(a, m);
		}
		swap_idx(m, z); /* the pivot (the median) waits at hi - 1 */
		const int64_t p = *z;
		int64_t store = lo;
		for (int64_t i = lo; i < hi - 1; i++)
			if (ahead(keys, idx[i], p, largest))
				swap_idx(&idx[i], &idx[store++]);
		swap_idx(&idx[store], z);
		if (k <= store)
			hi = store;
		else if (k == store + 1)
			return;
		else
			lo = store + 1;
	}
	sort_idx(keys, idx + lo, hi - lo, largest, tmp);
}

/* The first k of the row (keys[0..n)) sorted into sel, stable; sel and tmp hold n entries.
 * For k well below n the first k are selected first, then sorted. */
static void select_merge(const uint64_t *keys, int64_t n, int64_t k, bool largest, int64_t *sel,
			 int64_t *tmp)
{
	for (int64_t j = 0; j < n; j++)
		sel[j] = j;
	if (4 * k < n) {
		select_first(keys, sel, n, k, largest, tmp);
		sort_idx(keys, sel, k, largest, tmp);
	} else {
		sort_idx(keys, sel, n, largest, tmp);
	}
}

om_kind om_topk_kernel(om_ctx *c)
{
	int64_t k;
	int32_t axis;
	om_kind rc = topk_check(c, &k, &axis);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	om_tensor *vals = c->out[0], *idxs = c->nout > 1 ? c->out[1] : NULL;
	const int64_t n = x->dims[axis];
	int64_t outer = 1, inner = 1;
	for (int32_t i = 0; i < axis; i++)
		outer *= x->dims[i];
	for (int32_t i = axis + 1; i < x->rank; i++)
		inner *= x->dims[i];
	if (k == 0 || outer == 0 || inner == 0)
		return OM_OK;
	const bool largest = !(c->op->param & OM_TOPK_LARGEST) ||
			     om_attr_int(c->node, "largest", 1) != 0;
	const bool merge = k > 16;
	uint64_t *keys = malloc(sizeof(uint64_t) * (size_t)n);
	int64_t *sel = malloc(sizeof(int64_t) * (size_t)(merge ? 2 * n : k));
	if (!keys || !sel) {
		free(keys);
		free(sel);
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	}
	const size_t size = om_dtype_size(x->dtype);
	const unsigned char *src = x->data;
	unsigned char *dst = vals ? vals->data : NULL;
	int64_t *di = idxs ? idxs->data : NULL;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t in = 0; in < inner; in++) {
			const int64_t base = o * n * inner + in;
			for (int64_t j = 0; j < n; j++)
				keys[j] = key_at(x, base + j * inner);
			if (merge)
				select_merge(keys, n, k, largest, sel, sel + n);
			else
				select_insertion(keys, n, k, largest, sel);
			const int64_t obase = o * k * inner + in;
			for (int64_t r = 0; r < k; r++) {
				const int64_t to = obase + r * inner, from = base + sel[r] * inner;
				if (dst)
					om_move1(dst + (size_t)to * size,
						 src + (size_t)from * size, size);
				if (di)
					di[to] = sel[r];
			}
		}
	free(keys);
	free(sel);
	return OM_OK;
}
