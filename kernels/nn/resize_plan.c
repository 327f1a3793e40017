/* resize_plan.c — Resize/Upsample parameters, output extent and per-axis sampling tables. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numrun.h"
#include "resize_plan.h"

static const char *const coord_names[] = {"half_pixel", "half_pixel_symmetric",
					  "pytorch_half_pixel", "align_corners", "asymmetric",
					  "tf_half_pixel_for_nn", "tf_crop_and_resize"};
static const char *const nearest_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
					    "ceil"};

static int find_name(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static bool present(const om_ctx *c, int32_t i)
{
	return i < c->nin && c->in[i] && om_tensor_numel(c->in[i]) > 0;
}

/* Reads a float tensor (float, double, float16) of exactly n elements into dst. */
static om_kind read_floats(om_ctx *c, const om_tensor *t, int64_t n, float *dst, const char *what)
{
	if (!t->data)
		return OM_NEED_VALUE;
	if (om_tensor_numel(t) != n || !om_is_float_type(t->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%s must hold %lld floats", what, (long long)n);
	double v[OM_MAX_RANK * 2];
	om_load_f64(t->dtype, t->data, 1, n, v);
	for (int64_t i = 0; i < n; i++)
		dst[i] = (float)v[i];
	return OM_OK;
}

static om_kind read_attrs(om_ctx *c, rs_params *p, bool legacy)
{
	const char *mode = om_attr_string(c->node, "mode", "nearest");
	if (!strcmp(mode, "nearest"))
		p->mode = RS_NEAREST;
	else if (!strcmp(mode, "linear") || !strcmp(mode, "bilinear"))
		p->mode = RS_LINEAR;
	else if (!strcmp(mode, "cubic") && !legacy)
		p->mode = RS_CUBIC;
	else
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "unknown mode '%s'", mode);
	p->coord = RS_ASYMMETRIC;
	p->nearest = RS_SIMPLE;
	p->cubic_a = -0.75f;
	if (legacy)
		return OM_OK;
	const char *cm = om_attr_string(c->node, "coordinate_transformation_mode", "half_pixel");
	const char *nm = om_attr_string(c->node, "nearest_mode", "round_prefer_floor");
	int ci = find_name(cm, coord_names, 7), ni = find_name(nm, nearest_names, 4);
	if (ci < 0 || (ci == RS_HALF_PIXEL_SYMMETRIC && !(c->op->param & RS_ROW_SYMMETRIC)))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"unknown coordinate_transformation_mode '%s'", cm);
	if (ni < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "unknown nearest_mode '%s'",
				nm);
	p->coord = (enum rs_coord)ci;
	p->nearest = (enum rs_nearest)ni;
	p->cubic_a = om_attr_float(c->node, "cubic_coeff_a", -0.75f);
	p->extrapolation = om_attr_float(c->node, "extrapolation_value", 0.0f);
	p->exclude_outside = om_attr_int(c->node, "exclude_outside", 0) != 0;
	p->antialias = c->op->param & RS_ROW_18 && om_attr_int(c->node, "antialias", 0) != 0;
	return OM_OK;
}

/* axes (opset 18): which axes scales/sizes/roi name; all when absent. */
static om_kind read_axes(om_ctx *c, const rs_params *p, int32_t *axes, int32_t *naxes)
{
	int64_t cnt = 0;
	const int64_t *v = c->op->param & RS_ROW_18 ? om_attr_ints(c->node, "axes", &cnt) : NULL;
	if (!v) {
		*naxes = p->rank;
		for (int32_t i = 0; i < p->rank; i++)
			axes[i] = i;
		return OM_OK;
	}
	if (cnt > p->rank)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "too many axes");
	bool seen[OM_MAX_RANK] = {false};
	for (int64_t i = 0; i < cnt; i++) {
		om_kind rc = om_norm_axis(c, v[i], p->rank, &axes[i]);
		if (rc)
			return rc;
		if (seen[axes[i]])
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "axis %lld repeated",
					(long long)v[i]);
		seen[axes[i]] = true;
	}
	*naxes = (int32_t)cnt;
	return OM_OK;
}

static om_kind check_extent(om_ctx *c, double v, int64_t *out)
{
	if (!(v >= 0) || v > (double)((int64_t)1 << 40))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"output extent %g is out of range", v);
	*out = (int64_t)v;
	return OM_OK;
}

/* scales given: out = floor(in * scale), computed in float as ONNX Runtime does. align_corners
 * maps with the unfloored in * scale, as the ONNX reference does (ONNX Runtime uses out). */
static om_kind from_scales(om_ctx *c, rs_params *p, const float *s, const int32_t *axes,
			   int32_t naxes)
{
	for (int32_t i = 0; i < naxes; i++) {
		int32_t a = axes[i];
		if (!(s[i] > 0) || isinf(s[i]))
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"scale %g must be positive", (double)s[i]);
		p->scale[a] = s[i];
		p->resized[a] = (float)p->in[a] * s[i];
		om_kind rc = check_extent(c, floor((double)p->resized[a]), &p->out[a]);
		if (rc)
			return rc;
	}
	return OM_OK;
}

static om_kind from_sizes(om_ctx *c, rs_params *p, const om_tensor *t, const int32_t *axes,
			  int32_t naxes)
{
	int64_t sz[OM_MAX_RANK], n;
	if (t->dtype != OM_INT64 && t->dtype != OM_INT32)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "sizes must be int64");
	om_kind rc = om_read_ints(c, t, sz, OM_MAX_RANK, &n);
	if (rc)
		return rc;
	if (n != naxes)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"sizes has %lld entries for %d axes", (long long)n, naxes);
	const char *pol = c->op->param & RS_ROW_18
				  ? om_attr_string(c->node, "keep_aspect_ratio_policy", "stretch")
				  : "stretch";
	int larger = !strcmp(pol, "not_larger"), smaller = !strcmp(pol, "not_smaller");
	if (!larger && !smaller && strcmp(pol, "stretch"))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"unknown keep_aspect_ratio_policy '%s'", pol);
	for (int32_t i = 0; i < naxes; i++)
		if (sz[i] < 0 || sz[i] > ((int64_t)1 << 40))
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"sizes[%d] = %lld is out of range", i, (long long)sz[i]);
	if (larger || smaller) {
		float s = larger ? INFINITY : 0;
		for (int32_t i = 0; i < naxes; i++) {
			float r = (float)sz[i] / (float)p->in[axes[i]];
			s = larger ? (r < s ? r : s) : (r > s ? r : s);
		}
		for (int32_t i = 0; i < naxes; i++) {
			int32_t a = axes[i];
			p->scale[a] = s;
			double v = floor((double)(s * (float)p->in[a]) + 0.5);
			if ((rc = check_extent(c, v, &p->out[a])))
				return rc;
			p->resized[a] = (float)p->out[a];
		}
		return OM_OK;
	}
	for (int32_t i = 0; i < naxes; i++) {
		int32_t a = axes[i];
		p->out[a] = sz[i];
		p->resized[a] = (float)sz[i];
		p->scale[a] = p->in[a] ? (float)sz[i] / (float)p->in[a] : 1.0f;
		p->by_sizes[a] = p->in[a] > 0 && sz[i] > 0;
	}
	return OM_OK;
}

om_kind om_resize_params(om_ctx *c, bool want_roi, rs_params *p)
{
	memset(p, 0, sizeof *p);
	const om_tensor *X = c->in[0];
	if (!X || X->rank < 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "needs an input X of rank >= 1");
	const bool legacy = c->op->param & RS_ROW_LEGACY;
	om_kind rc = read_attrs(c, p, legacy);
	if (rc)
		return rc;
	p->rank = X->rank;
	for (int32_t i = 0; i < X->rank; i++) {
		p->in[i] = p->out[i] = X->dims[i];
		p->resized[i] = (float)X->dims[i];
		p->scale[i] = 1;
		p->roi_start[i] = 0;
		p->roi_end[i] = 1;
	}
	int32_t axes[OM_MAX_RANK], naxes = 0;
	if ((rc = read_axes(c, p, axes, &naxes)))
		return rc;
	float s[OM_MAX_RANK];
	if (c->op->param & RS_ROW_SCALES_ATTR) {
		int64_t cnt;
		const float *v = om_attr_floats(c->node, "scales", &cnt);
		if (!v || cnt != p->rank)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"scales attribute must have %d entries", p->rank);
		return from_scales(c, p, v, axes, naxes);
	}
	int32_t si = legacy ? 1 : 2, zi = 3;
	bool has_scales = present(c, si), has_sizes = !legacy && present(c, zi);
	if (has_scales == has_sizes)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"exactly one of scales and sizes must be given");
	if (want_roi && !legacy && p->coord == RS_TF_CROP_AND_RESIZE && present(c, 1)) {
		float roi[2 * OM_MAX_RANK];
		if ((rc = read_floats(c, c->in[1], 2 * naxes, roi, "roi")))
			return rc;
		for (int32_t i = 0; i < naxes; i++) {
			p->roi_start[axes[i]] = roi[i];
			p->roi_end[axes[i]] = roi[i + naxes];
		}
	}
	if (has_sizes)
		rc = from_sizes(c, p, c->in[zi], axes, naxes);
	else if (!(rc = read_floats(c, c->in[si], naxes, s, "scales")))
		rc = from_scales(c, p, s, axes, naxes);
	/* an empty axis has nothing to sample: sizes cannot make it longer (checked here, so
	 * that infer refuses what the kernel cannot run) */
	for (int32_t a = 0; !rc && a < p->rank; a++)
		if (p->out[a] > 0 && p->in[a] == 0)
			rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				      "cannot resize an empty axis %d to %lld", a,
				      (long long)p->out[a]);
	return rc;
}

/* ---- sampling tables ----------------------------------------------------------------------- */

/* x_original of output index o on axis a (float arithmetic, as ONNX Runtime). */
static float coord(const rs_params *p, int32_t a, int64_t o)
{
	float x = (float)o, s = p->scale[a], lin = (float)p->in[a], lout = (float)p->out[a];
	switch (p->coord) {
	case RS_HALF_PIXEL: return (x + 0.5f) / s - 0.5f;
	case RS_HALF_PIXEL_SYMMETRIC: {
		float adj = lout / (s * lin), center = lin / 2;
		return center * (1 - adj) + (x + 0.5f) / s - 0.5f;
	}
	case RS_PYTORCH_HALF_PIXEL: return p->out[a] > 1 ? (x + 0.5f) / s - 0.5f : 0;
	case RS_ALIGN_CORNERS: {
		/* the ONNX reference's length_resized: in * scale (unfloored) for the scales form */
		float lres = p->resized[a];
		return lres == 1 ? 0 : x * (lin - 1) / (lres - 1);
	}
	case RS_TF_HALF_PIXEL_FOR_NN: return (x + 0.5f) / s;
	case RS_TF_CROP_AND_RESIZE: {
		float st = p->roi_start[a], en = p->roi_end[a];
		if (p->out[a] > 1)
			return st * (lin - 1) + x * (en - st) * (lin - 1) / (lout - 1);
		return 0.5f * (st + en) * (lin - 1);
	}
	default: return x / s;
	}
}

/* x_original of output index o on an axis sized by `sizes` (p->by_sizes), in double from the
 * integers in and out: (o + 0.5) * in / out is one rounding of the exact value, so an exact
 * .5 tie stays a tie (in float, 4.5 / (6 / 20.f) - 0.5 is 14.499999, not 14.5: the nearest
 * mode's rounding then picks the wrong pixel) */
static double coord_sizes(const rs_params *p, int32_t a, int64_t o)
{
	const double x = (double)o, lin = (double)p->in[a], lout = (double)p->out[a];
	switch (p->coord) {
	case RS_HALF_PIXEL:
	case RS_HALF_PIXEL_SYMMETRIC: /* its adjustment is 1 when the scale is out / in */
		return (x + 0.5) * lin / lout - 0.5;
	case RS_PYTORCH_HALF_PIXEL: return p->out[a] > 1 ? (x + 0.5) * lin / lout - 0.5 : 0;
	case RS_ALIGN_CORNERS: return p->out[a] == 1 ? 0 : x * (lin - 1) / (lout - 1);
	case RS_TF_HALF_PIXEL_FOR_NN: return (x + 0.5) * lin / lout;
	case RS_TF_CROP_AND_RESIZE: {
		const double st = p->roi_start[a], en = p->roi_end[a];
		if (p->out[a] > 1)
			return st * (lin - 1) + x * (en - st) * (lin - 1) / (lout - 1);
		return 0.5 * (st + en) * (lin - 1);
	}
	default: return x * lin / lout;
	}
}

static int64_t clamp_index(double x, int64_t n)
{
	if (!(x >= 0))
		return 0;
	if (x >= (double)(n - 1))
		return n - 1;
	return (int64_t)x;
}

static int64_t nearest_index(const rs_params *p, int32_t a, double x)
{
	double r;
	switch (p->nearest) {
	case RS_ROUND_PREFER_FLOOR: r = x == floor(x) + 0.5 ? floor(x) : round(x); break;
	case RS_ROUND_PREFER_CEIL: r = x == floor(x) + 0.5 ? ceil(x) : round(x); break;
	case RS_FLOOR: r = floor(x); break;
	case RS_CEIL: r = ceil(x); break;
	default: r = p->scale[a] < 1 ? ceil(x) : trunc(x); break;
	}
	return clamp_index(r, p->in[a]);
}

static float cubic_coeff(float x, float A)
{
	x = fabsf(x);
	if (x <= 1)
		return ((A + 2) * x - (A + 3)) * x * x + 1;
	if (x < 2)
		return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
	return 0;
}

/* Taps of one output at x_original x: n weights starting at input index first. */
static void taps(const rs_params *p, int32_t a, float x, int64_t n, int64_t start, float s,
		 int64_t *idx, float *w)
{
	/* base so that ratio is in (0, 1] (ONNX reference) or [0, 1) (plain linear/cubic) */
	float base = p->antialias && s < 1 ? ceilf(x) - 1 : floorf(x);
	float ratio = x - base, sum = 0;
	int64_t in = p->in[a];
	for (int64_t j = 0; j < n; j++) {
		float arg = ((float)(start + j) - ratio) * s;
		float v = p->mode == RS_LINEAR ? fmaxf(0, 1 - fabsf(arg))
						: cubic_coeff(arg, p->cubic_a);
		float pos = base + (float)(start + j);
		if (p->exclude_outside && (pos < 0 || pos > (float)(in - 1)))
			v = 0;
		idx[j] = clamp_index(pos, in);
		w[j] = v;
		sum += v;
	}
	if ((p->exclude_outside || (p->antialias && s < 1)) && sum != 0)
		for (int64_t j = 0; j < n; j++)
			w[j] /= sum;
}

void om_resize_axis_free(rs_axis *t)
{
	free(t->idx);
	free(t->w);
	free(t->outside);
	memset(t, 0, sizeof *t);
}

om_kind om_resize_axis(om_ctx *c, const rs_params *p, int32_t a, rs_axis *t)
{
	memset(t, 0, sizeof *t);
	int64_t L = p->out[a], in = p->in[a];
	float s = 1;
	int64_t start = 0;
	t->n = 1;
	if (p->mode != RS_NEAREST) {
		float support = p->mode == RS_LINEAR ? 1 : 2;
		s = p->antialias && p->scale[a] < 1 ? p->scale[a] : 1;
		float f = floorf(-support / s); /* -inf for a zero scale */
		if (!(f > -2048))
			return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
					"antialias filter for scale %g", (double)s);
		start = (int64_t)f + 1;
		t->n = 2 - 2 * start;
	}
	t->idx = malloc(sizeof(int64_t) * (size_t)(L * t->n + 1));
	t->w = malloc(sizeof(float) * (size_t)(L * t->n + 1));
	t->outside = calloc((size_t)L + 1, 1);
	if (!t->idx || !t->w || !t->outside) {
		om_resize_axis_free(t);
		return om_error(c->st, OM_ERR_NOMEM, c->node, "resize tables");
	}
	t->identity = L == in;
	for (int64_t o = 0; o < L; o++) {
		float x = coord(p, a, o);
		int64_t *idx = t->idx + o * t->n;
		float *w = t->w + o * t->n;
		if (p->coord == RS_TF_CROP_AND_RESIZE && (x < 0 || x > (float)(in - 1))) {
			t->outside[o] = 1;
			t->any_outside = true;
			t->identity = false;
		}
		if (p->mode == RS_NEAREST) {
			/* a float coordinate is exact in double: the float path is unchanged */
			idx[0] = nearest_index(p, a, p->by_sizes[a] ? coord_sizes(p, a, o) : x);
			w[0] = 1;
		} else if (p->mode == RS_LINEAR && !(p->antialias && s < 1)) {
			/* ONNX Runtime: clamp into the input, then the two neighbours */
			float xc = x < 0 ? 0 : x > (float)(in - 1) ? (float)(in - 1) : x;
			idx[0] = clamp_index(xc, in);
			idx[1] = idx[0] + 1 < in ? idx[0] + 1 : in - 1;
			w[1] = xc - (float)idx[0];
			w[0] = 1 - w[1];
		} else {
			taps(p, a, x, t->n, start, s, idx, w);
		}
		for (int64_t j = 0; j < t->n; j++)
			if (w[j] != 0 && (idx[j] != o || w[j] != 1))
				t->identity = false;
	}
	return OM_OK;
}
