/* ops_move.c — Transpose Concat Split Expand Tile Trilu, and the table with Slice and Pad
 * (seed §2; Slice §3 in slice.c, Pad §4 in pad.c). */
#include <stdio.h>
#include <string.h>

#include "move.h"
#include "parallel.h"
#include "ops_move.h"
#include "shape_util.h"
#include "transpose.h"

static om_kind bad(om_ctx *c, const char *msg)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", msg);
}

om_kind om_move_need(om_ctx *c)
{
	if (c->nin < 1 || !c->in[0] || c->nout < 1 || !c->out[0])
		return bad(c, "the data input and the output are required");
	if (om_move_size(c->in[0]->dtype) == 0)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "element type %s",
				om_dtype_name(c->in[0]->dtype));
	return OM_OK;
}

/* ---- Transpose --------------------------------------------------------------------------- */

static om_kind transpose_perm(om_ctx *c, int32_t *perm)
{
	const int32_t r = c->in[0]->rank;
	int64_t p[OM_MAX_RANK + 1], n;
	bool given;
	om_kind rc = om_arg_ints(c, -1, "perm", p, OM_MAX_RANK + 1, &n, &given);
	if (rc)
		return rc;
	if (!given) { /* default: reverse */
		for (int32_t i = 0; i < r; i++)
			perm[i] = r - 1 - i;
		return OM_OK;
	}
	if (n != r)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"perm has %lld entries for rank %d", (long long)n, r);
	bool seen[OM_MAX_RANK] = {0};
	for (int32_t i = 0; i < r; i++) {
		if (p[i] < 0 || p[i] >= r || seen[p[i]])
			return bad(c, "perm is not a permutation of the axes");
		seen[p[i]] = true;
		perm[i] = (int32_t)p[i];
	}
	return OM_OK;
}

static om_kind transpose_infer(om_ctx *c)
{
	om_kind rc = om_move_need(c);
	int32_t perm[OM_MAX_RANK];
	if (rc || (rc = transpose_perm(c, perm)))
		return rc;
	const om_tensor *x = c->in[0];
	int64_t dims[OM_MAX_RANK];
	for (int32_t i = 0; i < x->rank; i++)
		dims[i] = x->dims[perm[i]];
	om_set_shape(c->out[0], x->dtype, x->rank, dims);
	return OM_OK;
}

/* The move om_transpose makes of input 0 (om_op.choose), and in how what it moves after
 * merging: "moves as rank 3 (1,0,2) merged" */
static void transpose_choose(const om_ctx *c, om_choice *ch)
{
	om_ctx lc = *c;
	int32_t perm[OM_MAX_RANK];
	int64_t dims[OM_MAX_RANK];
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL;
	if (!x || x->rank < 0 || x->rank > OM_MAX_RANK || transpose_perm(&lc, perm))
		return;
	int32_t r = x->rank;
	for (int32_t i = 0; i < r; i++)
		dims[i] = x->dims[i];
	const enum om_transpose_move mv = om_transpose_plan(&r, dims, perm);
	ch->name = om_transpose_move_names[mv];
	if (mv == OM_TRANSPOSE_EMPTY)
		return;
	const size_t size = sizeof ch->how;
	int len = snprintf(ch->how, size, "moves as rank %d (", r);
	for (int32_t i = 0; i < r && len > 0 && (size_t)len < size; i++)
		len += snprintf(ch->how + len, size - (size_t)len, i ? ",%d" : "%d", perm[i]);
	if (len > 0 && (size_t)len < size)
		snprintf(ch->how + len, size - (size_t)len, ")%s", r < x->rank ? " merged" : "");
}

static om_kind transpose_move(om_ctx *c)
{
	int32_t perm[OM_MAX_RANK];
	om_kind rc = transpose_perm(c, perm);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	if (c->impl) { /* the step's run-time record: transpose_choose's name */
		om_choice ch = {0};
		transpose_choose(c, &ch);
		om_ctx_chose(c, ch.name);
	}
	om_transpose(c->out[0]->data, x->data, om_move_size(x->dtype), x->rank, x->dims, perm);
	return OM_OK;
}

static om_kind transpose_kernel(om_ctx *c) { return om_move_run(c, transpose_move); }

/* ---- Concat ------------------------------------------------------------------------------ */

static om_kind concat_axis(om_ctx *c, int32_t *axis)
{
	const om_attr *a = om_node_attr(c->node, "axis");
	const int64_t ax = a ? a->i : 1; /* required from Concat-4 (its signature) */
	const om_tensor *x = NULL;
	for (int32_t i = 0; i < c->nin && !x; i++)
		x = c->in[i];
	if (!x || c->nout < 1 || !c->out[0])
		return bad(c, "at least one input and the output are required");
	return om_norm_axis(c, ax, x->rank, axis);
}

static om_kind concat_infer(om_ctx *c)
{
	int32_t axis;
	om_kind rc = concat_axis(c, &axis);
	if (rc)
		return rc;
	const om_tensor *x0 = NULL;
	int64_t dims[OM_MAX_RANK], total = 0;
	for (int32_t i = 0; i < c->nin; i++) {
		const om_tensor *x = c->in[i];
		if (!x)
			continue;
		if (!x0) {
			x0 = x;
			memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
		}
		if (x->dtype != x0->dtype || x->rank != x0->rank)
			return bad(c, "inputs differ in element type or rank");
		for (int32_t a = 0; a < x->rank; a++)
			if (a != axis && x->dims[a] != dims[a])
				return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
						"input %d has extent %lld on axis %d, "
						"expected %lld", i, (long long)x->dims[a], a,
						(long long)dims[a]);
		if (x->dims[axis] > INT64_MAX - total)
			return bad(c, "the concatenated extent overflows");
		total += x->dims[axis];
	}
	if (om_move_size(x0->dtype) == 0)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "element type %s",
				om_dtype_name(x0->dtype));
	dims[axis] = total;
	if (om_shape_numel(x0->rank, dims) < 0)
		return bad(c, "the output's element count overflows");
	om_set_shape(c->out[0], x0->dtype, x0->rank, dims);
	return OM_OK;
}

static om_kind concat_along(om_ctx *c, int32_t axis)
{
	const om_tensor *y = c->out[0];
	const size_t size = om_move_size(y->dtype);
	const int64_t outer = om_shape_numel(axis, y->dims);
	const int64_t inner = om_shape_numel(y->rank - axis - 1, y->dims + axis + 1);
	unsigned char *d = y->data;
	for (int64_t o = 0; o < outer; o++)
		for (int32_t i = 0; i < c->nin; i++) {
			const om_tensor *x = c->in[i];
			if (!x)
				continue;
			const int64_t chunk = x->dims[axis] * inner;
			const unsigned char *s = x->data;
			om_move_n(d, s + o * chunk * (int64_t)size, size, chunk);
			d += chunk * (int64_t)size;
		}
	return OM_OK;
}

static om_kind concat_move(om_ctx *c)
{
	int32_t axis;
	om_kind rc = concat_axis(c, &axis);
	return rc ? rc : concat_along(c, axis);
}

/* Concat of float (N, C, H, W) tensors along C takes them channel-blocked (op.h) when every
 * input's C is a whole number of blocks: the blocked tensors (N, C/b, H, W, b) then
 * concatenate along their axis 1 with no padding lane between them (ONNX Runtime's NCHWc
 * Concat asks the same). In NHWC, any C: (N, 1, H, W, C) along axis 4. Inputs and output
 * tied. */
static void concat_layout(const om_ctx *c, om_layout_req *r)
{
	*r = (om_layout_req){0};
	int32_t axis;
	om_status st = {0};
	om_ctx lc = *c;
	lc.st = &st;
	if ((c->block < 1 && c->block != OM_BLOCK_NHWC) || c->nout != 1 || !c->out[0] ||
	    c->out[0]->rank != 4 ||
	    c->out[0]->dtype != OM_FLOAT || concat_axis(&lc, &axis) || axis != 1 || c->nin > 32)
		return;
	uint64_t may = OM_LAYOUT_OUT(0);
	for (int32_t i = 0; i < c->nin; i++) {
		const om_tensor *x = c->in[i];
		if (!x || x->rank != 4 || x->dtype != OM_FLOAT || x->dims[1] < 1 ||
		    (c->block != OM_BLOCK_NHWC && x->dims[1] % c->block))
			return;
		may |= OM_LAYOUT_IN(i);
	}
	r->may = r->tied = may;
}

enum { CAT_GRAIN = 1 << 14 }; /* floats worth a thread */

/* pixels [lo, hi) of NHWC inputs concatenated along their lanes */
static void concat_pixels(void *arg, int64_t lo, int64_t hi)
{
	const om_ctx *c = arg;
	const int64_t C = c->out[0]->dims[4];
	int64_t at = 0; /* the input's first lane in Y */
	for (int32_t i = 0; i < c->nin; at += c->in[i]->dims[4], i++) {
		const int64_t n = c->in[i]->dims[4];
		const float *x = (const float *)c->in[i]->data + lo * n;
		float *y = (float *)c->out[0]->data + lo * C + at;
		for (int64_t p = lo; p < hi; p++, x += n, y += C)
			memcpy(y, x, sizeof(float) * (size_t)n);
	}
}

static om_kind concat_blocked(om_ctx *c)
{
	const om_tensor *y = c->out[0];
	const int32_t axis = c->block == OM_BLOCK_NHWC ? 4 : 1; /* the blocks', or the lanes' */
	int64_t cb = 0;
	for (int32_t i = 0; i < c->nin; i++) {
		const om_tensor *x = c->in[i];
		bool same = x && x->rank == 5 && y->rank == 5;
		for (int32_t d = 0; same && d < 5; d++)
			same = d == axis || x->dims[d] == y->dims[d];
		if (!same)
			return om_error(c->st, OM_ERR_INTERNAL, c->node, "blocked Concat: input %d",
					i);
		cb += x->dims[axis];
	}
	if (cb != y->dims[axis])
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "blocked Concat: the output");
	if (axis != 4)
		return concat_along(c, axis);
	/* NHWC: each pixel's lanes from every input, the pixels over the run's threads
	 * (densenet121's 58 Concats, two threads, one thread's: 7.4 ms) */
	const int64_t pixels = y->dims[0] * y->dims[2] * y->dims[3];
	om_par_for(c->threads, pixels, CAT_GRAIN / (y->dims[4] + 1) + 1, concat_pixels, c);
	return OM_OK;
}

static om_kind concat_kernel(om_ctx *c)
{
	return c->blocked ? concat_blocked(c) : om_move_run(c, concat_move);
}

/* ---- Split ------------------------------------------------------------------------------- */

enum { SPLIT_MAX = 256 }; /* outputs */

/* the param of a Split row: what its opset changed (seed §2) */
enum {
	SPLIT_INPUT = 1 << 0,  /* 13: the sizes are input 1 (an empty one is no input), never the
				  attribute */
	SPLIT_UNEVEN = 1 << 1  /* 18: without sizes, num_outputs parts of ceil(extent / n), the
				  last one smaller; before, equal parts only */
};

/* the extent of each output along the axis (seed §2: before/after opsets 13 and 18) */
static om_kind split_sizes(om_ctx *c, int32_t *axis, int64_t *sizes)
{
	om_kind rc = om_move_need(c);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	if ((rc = om_norm_axis(c, om_attr_int(c->node, "axis", 0), x->rank, axis)))
		return rc;
	const int64_t extent = x->dims[*axis], n = c->nout;
	int64_t cnt;
	bool given;
	/* sizes: an input from 13 (and in opset 1), else the attribute; room for SPLIT_MAX */
	const int32_t form = c->op->param;
	if ((form & SPLIT_INPUT) || (c->nin > 1 && c->in[1]))
		rc = om_arg_ints(c, 1, NULL, sizes, SPLIT_MAX, &cnt, &given);
	else
		rc = om_arg_ints(c, -1, "split", sizes, SPLIT_MAX, &cnt, &given);
	if (rc)
		return rc;
	if (given && (cnt > 0 || !(form & SPLIT_INPUT))) { /* an empty input is no input (ORT) */
		if (cnt != n)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"split has %lld sizes for %lld outputs", (long long)cnt,
					(long long)n);
		int64_t sum = 0;
		for (int64_t i = 0; i < n; i++) {
			if (sizes[i] < 0 || sizes[i] > extent - sum)
				return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
						"split sizes do not add up to the extent %lld",
						(long long)extent);
			sum += sizes[i];
		}
		if (sum != extent)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"split sizes add up to %lld, the extent is %lld",
					(long long)sum, (long long)extent);
		return OM_OK;
	}
	if (!(form & SPLIT_UNEVEN)) {
		if (extent % n)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"extent %lld does not split into %lld equal parts",
					(long long)extent, (long long)n);
		for (int64_t i = 0; i < n; i++)
			sizes[i] = extent / n;
		return OM_OK;
	}
	const int64_t parts = om_attr_int(c->node, "num_outputs", n);
	if (parts != n)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"num_outputs is %lld but the node has %lld outputs",
				(long long)parts, (long long)n);
	const int64_t part = extent / n + (extent % n != 0);
	for (int64_t i = 0; i < n; i++)
		sizes[i] = part;
	sizes[n - 1] = extent - part * (n - 1);
	if (sizes[n - 1] < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"extent %lld does not split into %lld parts of %lld",
				(long long)extent, (long long)n, (long long)part);
	return OM_OK;
}

static om_kind split_infer(om_ctx *c)
{
	int64_t sizes[SPLIT_MAX];
	int32_t axis;
	if (c->nout > SPLIT_MAX)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "more than %d outputs",
				SPLIT_MAX);
	om_kind rc = split_sizes(c, &axis, sizes);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	int64_t dims[OM_MAX_RANK];
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	for (int32_t i = 0; i < c->nout; i++) {
		dims[axis] = sizes[i];
		if (c->out[i])
			om_set_shape(c->out[i], x->dtype, x->rank, dims);
	}
	return OM_OK;
}

static om_kind split_move(om_ctx *c)
{
	int64_t sizes[SPLIT_MAX];
	int32_t axis;
	om_kind rc = split_sizes(c, &axis, sizes);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	const int64_t size = (int64_t)om_move_size(x->dtype);
	const int64_t outer = om_shape_numel(axis, x->dims);
	const int64_t inner = om_shape_numel(x->rank - axis - 1, x->dims + axis + 1);
	const unsigned char *s = x->data;
	for (int64_t o = 0; o < outer; o++)
		for (int32_t i = 0; i < c->nout; i++) {
			const int64_t chunk = sizes[i] * inner;
			if (c->out[i])
				om_move_n((unsigned char *)c->out[i]->data + o * chunk * size, s,
					  (size_t)size, chunk);
			s += chunk * size;
		}
	return OM_OK;
}

static om_kind split_kernel(om_ctx *c) { return om_move_run(c, split_move); }

/* ---- Expand ------------------------------------------------------------------------------ */

static om_kind expand_infer(om_ctx *c)
{
	om_kind rc = om_move_need(c);
	if (rc)
		return rc;
	if (c->nin < 2 || !c->in[1])
		return bad(c, "the shape input is required");
	int64_t shape[OM_MAX_RANK], n;
	bool given;
	if ((rc = om_arg_ints(c, 1, NULL, shape, OM_MAX_RANK, &n, &given)) == OM_NEED_VALUE) {
		int64_t k = c->in[1]->rank == 1 ? c->in[1]->dims[0] : -1;
		return om_partial(c->out[0], c->in[0]->dtype,
				  k < 0 ? -1 : k > c->in[0]->rank ? k : c->in[0]->rank);
	}
	if (rc)
		return rc;
	for (int64_t i = 0; i < n; i++)
		if (shape[i] < 0)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"shape entry %lld is negative", (long long)shape[i]);
	const om_tensor *x = c->in[0];
	int32_t r;
	int64_t dims[OM_MAX_RANK];
	if ((rc = om_broadcast_shape(c, x->rank, x->dims, (int32_t)n, shape, &r, dims)))
		return rc;
	if (om_shape_numel(r, dims) < 0)
		return bad(c, "the output's element count overflows");
	om_set_shape(c->out[0], x->dtype, r, dims);
	return OM_OK;
}

static om_kind expand_move(om_ctx *c)
{
	const om_tensor *x = c->in[0], *y = c->out[0];
	int64_t xs[OM_MAX_RANK], st[OM_MAX_RANK];
	om_dense_strides(x->rank, x->dims, xs);
	const int32_t lead = y->rank - x->rank;
	for (int32_t i = 0; i < y->rank; i++)
		st[i] = i < lead || x->dims[i - lead] == 1 ? 0 : xs[i - lead];
	om_strided_copy(y->data, x->data, om_move_size(x->dtype), y->rank, y->dims, st);
	return OM_OK;
}

static om_kind expand_kernel(om_ctx *c) { return om_move_run(c, expand_move); }

/* ---- Tile -------------------------------------------------------------------------------- */

static om_kind tile_repeats(om_ctx *c, int64_t *rep)
{
	om_kind rc = om_move_need(c);
	if (rc)
		return rc;
	if (c->nin < 2 || !c->in[1])
		return bad(c, "the repeats input is required");
	const om_tensor *x = c->in[0];
	int64_t n;
	bool given;
	if ((rc = om_arg_ints(c, 1, NULL, rep, OM_MAX_RANK, &n, &given)))
		return rc;
	if (n != x->rank)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%lld repeats for rank %d", (long long)n, x->rank);
	for (int32_t i = 0; i < x->rank; i++)
		if (rep[i] < 0)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"repeat %lld is negative", (long long)rep[i]);
	return OM_OK;
}

static om_kind tile_infer(om_ctx *c)
{
	int64_t rep[OM_MAX_RANK], dims[OM_MAX_RANK];
	om_kind rc = tile_repeats(c, rep);
	if (rc == OM_NEED_VALUE && c->in[0])
		return om_partial(c->out[0], c->in[0]->dtype, c->in[0]->rank);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	for (int32_t i = 0; i < x->rank; i++) {
		if (rep[i] && x->dims[i] > INT64_MAX / rep[i])
			return bad(c, "the tiled extent overflows");
		dims[i] = x->dims[i] * rep[i];
	}
	if (om_shape_numel(x->rank, dims) < 0)
		return bad(c, "the output's element count overflows");
	om_set_shape(c->out[0], x->dtype, x->rank, dims);
	return OM_OK;
}

/* output axis i as (repeat, extent) pairs: strides (0, input stride) */
static om_kind tile_move(om_ctx *c)
{
	int64_t rep[OM_MAX_RANK];
	om_kind rc = tile_repeats(c, rep);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	int64_t xs[OM_MAX_RANK], dims[2 * OM_MAX_RANK], st[2 * OM_MAX_RANK];
	om_dense_strides(x->rank, x->dims, xs);
	for (int32_t i = 0; i < x->rank; i++) {
		dims[2 * i] = rep[i], st[2 * i] = 0;
		dims[2 * i + 1] = x->dims[i], st[2 * i + 1] = xs[i];
	}
	om_strided_copy(c->out[0]->data, x->data, om_move_size(x->dtype), 2 * x->rank, dims, st);
	return OM_OK;
}

static om_kind tile_kernel(om_ctx *c) { return om_move_run(c, tile_move); }

/* ---- Trilu ------------------------------------------------------------------------------- */

static om_kind trilu_infer(om_ctx *c)
{
	om_kind rc = om_move_need(c);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	if (x->rank < 2)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"the input must have rank >= 2, has %d", x->rank);
	om_set_shape(c->out[0], x->dtype, x->rank, x->dims);
	return OM_OK;
}

/* keeps j - i >= k (upper) or j - i <= k (lower); the rest is zero bytes */
static om_kind trilu_move(om_ctx *c)
{
	const om_tensor *x = c->in[0], *y = c->out[0];
	int64_t k = 0;
	if (c->nin > 1 && c->in[1]) {
		om_kind rc = om_read_scalar_int(c, c->in[1], &k);
		if (rc)
			return rc == OM_NEED_VALUE ? bad(c, "k has no value") : rc;
	}
	const bool upper = om_attr_int(c->node, "upper", 1) != 0;
	const int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
	const int64_t batch = om_shape_numel(x->rank - 2, x->dims);
	const int64_t size = (int64_t)om_move_size(x->dtype);
	const int64_t lim = rows + cols + 1;
	k = k < -lim ? -lim : k > lim ? lim : k;
	const unsigned char *s = x->data;
	unsigned char *d = y->data;
	for (int64_t b = 0; b < batch; b++)
		for (int64_t i = 0; i < rows; i++) {
			int64_t lo = upper ? i + k : 0, hi = upper ? cols : i + k + 1;
			lo = lo < 0 ? 0 : lo > cols ? cols : lo;
			hi = hi < lo ? lo : hi > cols ? cols : hi;
			memset(d, 0, (size_t)(cols * size));
			om_move_n(d + lo * size, s + lo * size, (size_t)size, hi - lo);
			s += cols * size;
			d += cols * size;
		}
	return OM_OK;
}

static om_kind trilu_kernel(om_ctx *c) { return om_move_run(c, trilu_move); }

/* ---- the table --------------------------------------------------------------------------- */

static om_kind slice_kernel(om_ctx *c) { return om_move_run(c, om_slice_move); }
static om_kind pad_kernel(om_ctx *c) { return om_move_run(c, om_pad_move); }

#define COPY OM_OP_EXACT

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_Transpose_1_v13[] = {{"perm", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Transpose-13: data -> transposed */
static const om_sig sig_Transpose_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_Transpose_1_v13, NULL};
static const om_sig_attr attrs_Transpose_1[] = {{"perm", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Transpose-1: data -> transposed */
static const om_sig sig_Transpose_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_Transpose_1, &sig_Transpose_1_v13};
static const om_sig_attr attrs_Concat_1_v13[] = {{"axis", OM_ATTR_INT, 1}, {NULL, 0, 0}};
/* Concat-13: inputs... -> concat_result */
static const om_sig sig_Concat_1_v13 = {13, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1,
	0xffffffffffffffff, 0x1, attrs_Concat_1_v13, NULL};
static const om_sig_attr attrs_Concat_1_v4[] = {{"axis", OM_ATTR_INT, 1}, {NULL, 0, 0}};
/* Concat-4: inputs... -> concat_result */
static const om_sig sig_Concat_1_v4 = {4, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1, 0x0,
	0x0, attrs_Concat_1_v4, &sig_Concat_1_v13};
static const om_sig_attr attrs_Concat_1[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Concat-1: inputs... -> concat_result */
static const om_sig sig_Concat_1 = {1, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1, 0x0,
	0x0, attrs_Concat_1, &sig_Concat_1_v4};
static const om_sig_attr attrs_Split_1_v2[] = {{"axis", OM_ATTR_INT, 0}, {"split", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* Split-2: input -> outputs... */
static const om_sig sig_Split_1_v2 = {2, 1, 1, 1, OM_MANY, 0x0, 0xffffffffffffffff, 0x1,
	0xffffffffffffffff, 0x0, 0x0, attrs_Split_1_v2, NULL};
static const om_sig_attr attrs_Split_1[] = {{"axis", OM_ATTR_INT, 0}, {"split", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* Split-1: input [split] -> outputs...... */
static const om_sig sig_Split_1 = {1, 1, 2, 1, OM_MANY, 0x2, 0xffffffffffffffff, 0x3,
	0xffffffffffffffff, 0x0, 0x0, attrs_Split_1, &sig_Split_1_v2};
static const om_sig_attr attrs_Split_13[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Split-13: input [split] -> outputs... */
static const om_sig sig_Split_13 = {13, 1, 2, 1, OM_MANY, 0x2, 0xffffffffffffffff, 0x1,
	0xffffffffffffffff, 0x1, 0xffffffffffffffff, attrs_Split_13, NULL};
static const om_sig_attr attrs_Split_18[] = {{"axis", OM_ATTR_INT, 0},
	{"num_outputs", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Split-18: input [split] -> outputs... */
static const om_sig sig_Split_18 = {18, 1, 2, 1, OM_MANY, 0x2, 0xffffffffffffffff, 0x1,
	0xffffffffffffffff, 0x1, 0xffffffffffffffff, attrs_Split_18, NULL};
static const om_sig_attr attrs_Slice_1[] = {{"axes", OM_ATTR_INTS, 0}, {"ends", OM_ATTR_INTS, 1},
	{"starts", OM_ATTR_INTS, 1}, {NULL, 0, 0}};
/* Slice-1: data -> output */
static const om_sig sig_Slice_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Slice_1,
	NULL};
/* Slice-13: data starts ends [axes] [steps] -> output */
static const om_sig sig_Slice_10_v13 = {13, 3, 5, 1, 1, 0x18, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Slice-10: data starts ends [axes] [steps] -> output */
static const om_sig sig_Slice_10 = {10, 3, 5, 1, 1, 0x18, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Slice_10_v13};
/* Expand-13: input shape -> output */
static const om_sig sig_Expand_8_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Expand-8: input shape -> output */
static const om_sig sig_Expand_8 = {8, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Expand_8_v13};
/* Tile-13: input repeats -> output */
static const om_sig sig_Tile_6_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Tile-6: input repeats -> output */
static const om_sig sig_Tile_6 = {6, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Tile_6_v13};
static const om_sig_attr attrs_Pad_1[] = {{"mode", OM_ATTR_STRING, 0},
	{"paddings", OM_ATTR_INTS, 1}, {"value", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Pad-1: data -> output */
static const om_sig sig_Pad_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Pad_1, NULL};
static const om_sig_attr attrs_Pad_2[] = {{"mode", OM_ATTR_STRING, 0}, {"pads", OM_ATTR_INTS, 1},
	{"value", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Pad-2: data -> output */
static const om_sig sig_Pad_2 = {2, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Pad_2, NULL};
static const om_sig_attr attrs_Pad_11_v18[] = {{"mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* Pad-18: data pads [constant_value] [axes] -> output */
static const om_sig sig_Pad_11_v18 = {18, 2, 4, 1, 1, 0xc, 0x0, 0x5, 0x1, 0x5, 0x1,
	attrs_Pad_11_v18, NULL};
static const om_sig_attr attrs_Pad_11_v13[] = {{"mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* Pad-13: data pads [constant_value] -> output */
static const om_sig sig_Pad_11_v13 = {13, 2, 3, 1, 1, 0x4, 0x0, 0x5, 0x1, 0x5, 0x1,
	attrs_Pad_11_v13, &sig_Pad_11_v18};
static const om_sig_attr attrs_Pad_11[] = {{"mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* Pad-11: data pads [constant_value] -> output */
static const om_sig sig_Pad_11 = {11, 2, 3, 1, 1, 0x4, 0x0, 0x5, 0x1, 0x0, 0x0, attrs_Pad_11,
	&sig_Pad_11_v13};
static const om_sig_attr attrs_Trilu_14[] = {{"upper", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Trilu-14: input [k] -> output */
static const om_sig sig_Trilu_14 = {14, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x1, 0x1, 0x1, attrs_Trilu_14,
	NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"Transpose", "", 1, transpose_infer, transpose_kernel, COPY | OM_OP_SELECT,
	 &sig_Transpose_1, OM_OPC_TRANSPOSE, NULL, 0, transpose_choose},
	{"Concat", "", 1, concat_infer, concat_kernel,
	 COPY | OM_OP_SAME_SHAPE_COPY | OM_OP_PERM_AXIS | OM_OP_SELECT, &sig_Concat_1, OM_OPC_NONE,
	 concat_layout, 0, NULL},
	{"Split", "", 1, split_infer, split_kernel, COPY, &sig_Split_1, OM_OPC_SPLIT, NULL, 0,
	 NULL},
	{"Split", "", 13, split_infer, split_kernel, COPY, &sig_Split_13, OM_OPC_SPLIT, NULL,
	 SPLIT_INPUT, NULL},
	{"Split", "", 18, split_infer, split_kernel, COPY, &sig_Split_18, OM_OPC_SPLIT, NULL,
	 SPLIT_INPUT | SPLIT_UNEVEN, NULL},
	{"Slice", "", 1, om_slice_infer, slice_kernel, COPY | OM_OP_SELECT, &sig_Slice_1,
	 OM_OPC_SLICE, NULL, OM_SLICE_ATTRS, NULL},
	{"Slice", "", 10, om_slice_infer, slice_kernel, COPY | OM_OP_SELECT, &sig_Slice_10,
	 OM_OPC_SLICE, NULL, OM_SLICE_INPUTS, NULL},
	{"Expand", "", 8, expand_infer, expand_kernel, COPY | OM_OP_SAME_SHAPE_COPY | OM_OP_SELECT,
	 &sig_Expand_8, OM_OPC_EXPAND, NULL, 0, NULL},
	{"Tile", "", 6, tile_infer, tile_kernel, COPY | OM_OP_SAME_SHAPE_COPY | OM_OP_SELECT,
	 &sig_Tile_6, OM_OPC_NONE, NULL, 0, NULL},
	{"Pad", "", 1, om_pad_infer, pad_kernel, COPY, &sig_Pad_1, OM_OPC_PAD, NULL,
	 OM_PAD_PADDINGS, NULL},
	{"Pad", "", 2, om_pad_infer, pad_kernel, COPY, &sig_Pad_2, OM_OPC_PAD, NULL, OM_PAD_ATTRS,
	 NULL},
	{"Pad", "", 11, om_pad_infer, pad_kernel, COPY, &sig_Pad_11, OM_OPC_PAD, NULL,
	 OM_PAD_INPUTS, NULL},
	{"Trilu", "", 14, trilu_infer, trilu_kernel, COPY, &sig_Trilu_14, OM_OPC_NONE, NULL, 0,
	 NULL},
};

const om_op_table om_ops_move = OM_TABLE(rows);
