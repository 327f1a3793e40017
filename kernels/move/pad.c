/* pad.c — Pad (seed §4): constant, edge, reflect (continued periodically), wrap; negative pads
 * crop; attribute forms before opset 11, inputs (pads, constant_value, axes) from 11 (the
 * row's param, enum om_pad_form). */
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "move.h"
#include "ops_move.h"
#include "shape_util.h"

enum { CONSTANT, EDGE, REFLECT, WRAP };

typedef struct pad_plan {
	int mode;
	int64_t begin[OM_MAX_RANK], end[OM_MAX_RANK], dims[OM_MAX_RANK]; /* output dims */
} pad_plan;

/* the part of an axis of extent n that negative pads keep: [lo, lo + count); count may be <= 0
 * when the crops overlap. Edge, reflect and wrap pad this part (as ONNX Runtime does). */
static void kept(int64_t n, int64_t begin, int64_t end, int64_t *lo, int64_t *count)
{
	const int64_t cb = begin < 0 ? (begin < -n ? n : -begin) : 0;
	const int64_t ce = end < 0 ? (end < -n ? n : -end) : 0;
	*lo = cb;
	*count = n - cb - ce;
}

static om_kind pad_mode(om_ctx *c, int *mode)
{
	const char *m = om_attr_string(c->node, "mode", "constant");
	static const char *const names[] = {"constant", "edge", "reflect", "wrap"};
	for (int i = 0; i < 4; i++)
		if (!strcmp(m, names[i])) {
			*mode = i;
			return OM_OK;
		}
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "unknown mode '%s'", m);
}

static om_kind pad_plan_of(om_ctx *c, pad_plan *p)
{
	om_kind rc = om_move_need(c);
	if (rc || (rc = pad_mode(c, &p->mode)))
		return rc;
	const om_tensor *x = c->in[0];
	int64_t pads[4 * OM_MAX_RANK], axes[2 * OM_MAX_RANK], np, na = 0;
	bool given, ga = false;
	const int32_t form = c->op->param;
	if (form == OM_PAD_INPUTS) {
		if (c->nin < 2 || !c->in[1])
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "pads are required");
		rc = om_arg_ints(c, 1, NULL, pads, 4 * OM_MAX_RANK, &np, &given);
		if (!rc)
			rc = om_arg_ints(c, 3, NULL, axes, 2 * OM_MAX_RANK, &na, &ga);
	} else {
		rc = om_arg_ints(c, -1, form == OM_PAD_ATTRS ? "pads" : "paddings", pads,
				 4 * OM_MAX_RANK, &np, &given);
	}
	if (rc)
		return rc;
	if (!ga) {
		na = x->rank;
		for (int32_t i = 0; i < x->rank; i++)
			axes[i] = i;
	}
	if (np != 2 * na)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%lld pads for %lld axes", (long long)np, (long long)na);
	int32_t ax[2 * OM_MAX_RANK];
	if ((rc = om_norm_axes(c, axes, na, x->rank, ax)))
		return rc;
	int64_t *end = p->end;
	for (int32_t i = 0; i < x->rank; i++)
		p->begin[i] = end[i] = 0;
	for (int64_t i = 0; i < na; i++) {
		p->begin[ax[i]] = pads[i];
		end[ax[i]] = pads[na + i];
	}
	for (int32_t i = 0; i < x->rank; i++) {
		int64_t d;
		if (__builtin_add_overflow(x->dims[i], p->begin[i], &d) ||
		    __builtin_add_overflow(d, end[i], &d) || d < 0)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"pads give axis %d a negative or overflowing extent", i);
		p->dims[i] = d;
	}
	const int64_t numel = om_shape_numel(x->rank, p->dims);
	if (numel < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"the output's element count overflows");
	if (p->mode != CONSTANT && numel > 0)
		for (int32_t i = 0; i < x->rank; i++) {
			int64_t lo, n;
			kept(x->dims[i], p->begin[i], end[i], &lo, &n);
			if (n <= 0)
				return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
						"mode '%s' needs elements of axis %d, "
						"which is empty (after cropping)",
						om_attr_string(c->node, "mode", ""), i);
		}
	return OM_OK;
}

om_kind om_pad_infer(om_ctx *c)
{
	pad_plan p;
	om_kind rc = pad_plan_of(c, &p);
	if (rc)
		return rc;
	om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, p.dims);
	return OM_OK;
}

/* the index into an axis of extent n that padded index i reads (-1: the constant) */
static int64_t src_index(int mode, int64_t n, int64_t i)
{
	switch (mode) {
	case CONSTANT:
		return i >= 0 && i < n ? i : -1;
	case EDGE:
		return i < 0 ? 0 : i >= n ? n - 1 : i;
	case REFLECT: {
		if (n == 1)
			return 0;
		const int64_t period = 2 * (n - 1);
		int64_t m = i % period;
		m += m < 0 ? period : 0;
		return m < n ? m : period - m;
	}
	default: {
		int64_t m = i % n;
		return m + (m < 0 ? n : 0);
	}
	}
}

/* the constant's bytes: the constant_value input (11+) or the float `value` attribute */
static om_kind pad_value(om_ctx *c, unsigned char *v)
{
	const om_tensor *x = c->in[0];
	const size_t size = om_move_size(x->dtype);
	memset(v, 0, 16);
	if (c->op->param == OM_PAD_INPUTS) {
		const om_tensor *cv = c->nin > 2 ? c->in[2] : NULL;
		if (!cv || om_tensor_numel(cv) == 0)
			return OM_OK;
		if (cv->dtype != x->dtype)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"constant_value is %s, the data %s",
					om_dtype_name(cv->dtype), om_dtype_name(x->dtype));
		memcpy(v, cv->data, size);
		return OM_OK;
	}
	const float f = om_attr_float(c->node, "value", 0.0f);
	switch (x->dtype) {
	case OM_FLOAT: memcpy(v, &f, 4); break;
	case OM_DOUBLE: { const double d = f; memcpy(v, &d, 8); break; }
	case OM_FLOAT16: { const uint16_t h = om_float_to_half(f); memcpy(v, &h, 2); break; }
	case OM_BFLOAT16: { const uint16_t h = om_float_to_bf16(f); memcpy(v, &h, 2); break; }
	case OM_BOOL: v[0] = f != 0; break;
	case OM_INT8: case OM_INT16: case OM_INT32: case OM_INT64: case OM_UINT8:
	case OM_UINT16: case OM_UINT32: case OM_UINT64: {
		/* integers: the value truncated, stored little-endian in the element's bytes */
		const int64_t i = f > -9.2e18f && f < 9.2e18f ? (int64_t)f : 0;
		memcpy(v, &i, size);
		break;
	}
	default: break;
	}
	return OM_OK;
}

om_kind om_pad_move(om_ctx *c)
{
	pad_plan p;
	unsigned char value[16];
	om_kind rc = pad_plan_of(c, &p);
	if (rc || (rc = pad_value(c, value)))
		return rc;
	const om_tensor *x = c->in[0];
	const int32_t r = x->rank;
	const size_t size = om_move_size(x->dtype);
	unsigned char *d = c->out[0]->data;
	const unsigned char *s = x->data;
	const int64_t numel = om_shape_numel(r, p.dims);
	if (numel == 0)
		return OM_OK;
	if (r == 0) {
		om_move1(d, s, size);
		return OM_OK;
	}
	int64_t total = 0, *map[OM_MAX_RANK], xs[OM_MAX_RANK];
	for (int32_t i = 0; i < r; i++)
		total += p.dims[i];
	/* index maps of every axis, then room for the innermost axis' runs */
	int64_t *maps = malloc(sizeof(int64_t) * (size_t)(total + 3 * p.dims[r - 1]));
	if (!maps)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	int64_t at = 0;
	for (int32_t i = 0; i < r; at += p.dims[i], i++) {
		map[i] = maps + at;
		int64_t lo, n, at_i;
		kept(x->dims[i], p.begin[i], p.end[i], &lo, &n);
		const int64_t b = p.begin[i] > 0 ? p.begin[i] : 0;
		for (int64_t o = 0; o < p.dims[i]; o++) {
			if (p.mode != CONSTANT)
				map[i][o] = lo + src_index(p.mode, n, o - b);
			else if (__builtin_sub_overflow(o, p.begin[i], &at_i))
				map[i][o] = -1;
			else
				map[i][o] = src_index(CONSTANT, x->dims[i], at_i);
		}
	}
	om_dense_strides(r, x->dims, xs);
	/* the innermost axis as runs: consecutive source indices (copied whole) or the constant */
	const int64_t inner = p.dims[r - 1];
	const int64_t *last = map[r - 1];
	int64_t nrun = 0, *run = maps + at; /* (start, length, source or -1) triples */
	for (int64_t j = 0, k; j < inner; j = k, nrun++) {
		k = j + 1;
		while (k < inner && (last[j] < 0 ? last[k] < 0 : last[k] == last[k - 1] + 1))
			k++;
		run[3 * nrun] = j, run[3 * nrun + 1] = k - j, run[3 * nrun + 2] = last[j];
	}
	int64_t idx[OM_MAX_RANK] = {0};
	for (int64_t done = 0; done < numel; done += inner, d += inner * (int64_t)size) {
		int64_t base = 0;
		bool fill = false;
		for (int32_t a = 0; a < r - 1; a++) {
			const int64_t m = map[a][idx[a]];
			fill |= m < 0;
			base += m * xs[a];
		}
		for (int64_t q = 0; q < nrun; q++) {
			const int64_t *u = run + 3 * q;
			unsigned char *o = d + u[0] * (int64_t)size;
			if (fill || u[2] < 0)
				for (int64_t j = 0; j < u[1]; j++)
					om_move1(o + j * (int64_t)size, value, size);
			else
				om_move_n(o, s + (base + u[2]) * (int64_t)size, size, u[1]);
		}
		for (int32_t a = r - 2; a >= 0; a--) {
			if (++idx[a] < p.dims[a])
				break;
			idx[a] = 0;
		}
	}
	free(maps);
	return OM_OK;
}
