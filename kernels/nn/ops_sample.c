/* ops_sample.c — AffineGrid (opset 20) and GridSample (opset 16/20/22: nearest, (bi)linear,
 * (bi)cubic over N-D images; zeros, border or reflection padding; align_corners). In double,
 * each output point a separable sum over 2^r (linear) or 4^r (cubic) neighbours. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numrun.h"
#include "op.h"

enum { GS_NEAREST, GS_LINEAR, GS_CUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };
#define GS_MAX_DIMS (OM_MAX_RANK - 2)

typedef struct gs_plan {
	int mode, pad;
	bool align;
	int32_t r;                          /* spatial rank */
	int64_t N, C, in[GS_MAX_DIMS], npix, nout; /* input extents; pixels per plane; outputs */
	double lo[GS_MAX_DIMS], hi[GS_MAX_DIMS];   /* the borders of each axis */
} gs_plan;

static om_kind gs_plan_make(om_ctx *c, gs_plan *p, int64_t *ydims)
{
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL, *g = c->nin > 1 ? c->in[1] : NULL;
	if (!x || !g || !om_is_float_type(x->dtype) || !om_is_float_type(g->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "needs float X and grid");
	p->r = x->rank - 2;
	if (p->r < 1 || p->r > GS_MAX_DIMS || g->rank != x->rank || g->dims[0] != x->dims[0] ||
	    g->dims[g->rank - 1] != p->r)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"grid must be [N, out dims..., %d]", (int)p->r);
	/* opset 20 renamed the default "bilinear" to "linear": both name one mode here */
	const char *m = om_attr_string(c->node, "mode", "linear");
	p->mode = !strcmp(m, "nearest")				       ? GS_NEAREST
		  : !strcmp(m, "linear") || !strcmp(m, "bilinear") ? GS_LINEAR
		  : !strcmp(m, "cubic") || !strcmp(m, "bicubic")   ? GS_CUBIC
								     : -1;
	const char *pm = om_attr_string(c->node, "padding_mode", "zeros");
	p->pad = !strcmp(pm, "zeros")	     ? GS_ZEROS
		 : !strcmp(pm, "border")     ? GS_BORDER
		 : !strcmp(pm, "reflection") ? GS_REFLECTION
					     : -1;
	if (p->mode < 0 || p->pad < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "mode '%s', padding '%s'",
				m, pm);
	p->align = om_attr_int(c->node, "align_corners", 0) != 0;
	p->N = x->dims[0], p->C = x->dims[1], p->npix = 1, p->nout = 1;
	ydims[0] = p->N, ydims[1] = p->C;
	for (int32_t i = 0; i < p->r; i++) {
		p->in[i] = x->dims[2 + i];
		p->npix *= p->in[i];
		p->nout *= ydims[2 + i] = g->dims[1 + i];
		p->lo[i] = p->align ? 0 : -0.5;
		p->hi[i] = p->align ? (double)p->in[i] - 1 : (double)p->in[i] - 0.5;
	}
	return OM_OK;
}

static om_kind gs_infer(om_ctx *c)
{
	gs_plan p = {0};
	int64_t y[OM_MAX_RANK];
	om_kind rc = gs_plan_make(c, &p, y);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, y);
	return rc;
}

static double gs_reflect(double x, double lo, double hi)
{
	const double rng = hi - lo;
	if (rng <= 0)
		return lo;
	if (x < lo) {
		const double dx = lo - x, n = floor(dx / rng), r = dx - n * rng;
		return fmod(n, 2) == 0 ? lo + r : hi - r;
	}
	if (x > hi) {
		const double dx = x - hi, n = floor(dx / rng), r = dx - n * rng;
		return fmod(n, 2) == 0 ? hi - r : lo + r;
	}
	return x;
}

/* the index a neighbour i of axis k reads, or -1 for a zero (zeros padding, and an axis of
 * no pixels, whatever the padding: border and reflection have no pixel to clamp to) */
static int64_t gs_index(const gs_plan *p, int32_t k, double i)
{
	const int64_t d = p->in[k];
	if (d <= 0)
		return -1;
	if (p->pad == GS_ZEROS)
		return i >= 0 && i < (double)d ? (int64_t)i : -1;
	if (p->pad == GS_REFLECTION)
		i = trunc(gs_reflect(i, p->lo[k], p->hi[k]));
	return i < 0 ? 0 : i > (double)(d - 1) ? d - 1 : (int64_t)i;
}

static void gs_cubic_coeffs(double x, double *w)
{
	const double a = -0.75;
	x = fabs(x);
	w[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
	w[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
	w[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
	w[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

/* the per-axis taps (indices, -1 = zero) and weights of one sampling point */
typedef struct gs_taps {
	int n; /* taps per axis: 1, 2 or 4 */
	int64_t ix[GS_MAX_DIMS][4];
	double w[GS_MAX_DIMS][4];
} gs_taps;

static void gs_point_taps(const gs_plan *p, const double *gxyz, gs_taps *t)
{
	t->n = p->mode == GS_NEAREST ? 1 : p->mode == GS_LINEAR ? 2 : 4;
	for (int32_t k = 0; k < p->r; k++) {
		/* the grid holds (x, y, z...): the last axis first */
		const double gn = gxyz[p->r - 1 - k], len = (double)p->in[k];
		double x = p->align ? (gn + 1) / 2 * (len - 1) : ((gn + 1) * len - 1) / 2;
		if (p->mode == GS_NEAREST)
			x = nearbyint(x);
		if (x < p->lo[k] || x > p->hi[k]) {
			if (p->pad == GS_BORDER)
				x = x < 0 ? 0 : x > len - 1 ? len - 1 : x;
			else if (p->pad == GS_REFLECTION)
				x = gs_reflect(x, p->lo[k], p->hi[k]);
		}
		if (x != x) { /* a NaN coordinate reads zeros */
			for (int j = 0; j < t->n; j++)
				t->ix[k][j] = -1, t->w[k][j] = 0;
			continue;
		}
		if (p->mode == GS_NEAREST) {
			t->ix[k][0] = gs_index(p, k, trunc(x)), t->w[k][0] = 1;
			continue;
		}
		const double f = floor(x), d = x - f;
		if (p->mode == GS_LINEAR) {
			t->ix[k][0] = gs_index(p, k, f), t->w[k][0] = 1 - d;
			t->ix[k][1] = gs_index(p, k, f + 1), t->w[k][1] = d;
			continue;
		}
		gs_cubic_coeffs(d, t->w[k]);
		for (int j = 0; j < 4; j++)
			t->ix[k][j] = gs_index(p, k, f - 1 + j);
	}
}

/* sum over every combination of taps of one plane */
static double gs_sum(const gs_plan *p, const gs_taps *t, const double *plane)
{
	int sel[GS_MAX_DIMS] = {0};
	double acc = 0;
	for (;;) {
		double w = 1;
		int64_t off = 0;
		bool zero = false;
		for (int32_t k = 0; k < p->r; k++) {
			const int64_t i = t->ix[k][sel[k]];
			w *= t->w[k][sel[k]];
			zero |= i < 0;
			off = off * p->in[k] + (i < 0 ? 0 : i);
		}
		if (!zero)
			acc += w * plane[off];
		int32_t k = p->r - 1;
		while (k >= 0 && ++sel[k] == t->n)
			sel[k--] = 0;
		if (k < 0)
			return acc;
	}
}

static om_kind gs_kernel(om_ctx *c)
{
	gs_plan p = {0};
	int64_t y[OM_MAX_RANK];
	om_kind rc = gs_plan_make(c, &p, y);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0], *g = c->in[1];
	om_tensor *out = c->out[0];
	const int64_t nx = p.N * p.C * p.npix, ng = p.N * p.nout * p.r;
	double *xv = malloc(sizeof(double) * (size_t)(nx + ng + p.nout + 1));
	gs_taps *taps = malloc(sizeof(gs_taps) * (size_t)(p.nout + 1));
	if (!xv || !taps) {
		free(xv), free(taps);
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	}
	double *gv = xv + nx, *row = gv + ng;
	om_load_f64(x->dtype, x->data, 1, nx, xv);
	om_load_f64(g->dtype, g->data, 1, ng, gv);
	const size_t es = om_dtype_size(out->dtype);
	for (int64_t n = 0; n < p.N; n++) {
		for (int64_t o = 0; o < p.nout; o++)
			gs_point_taps(&p, gv + (n * p.nout + o) * p.r, &taps[o]);
		for (int64_t ch = 0; ch < p.C; ch++) {
			const double *plane = xv + (n * p.C + ch) * p.npix;
			for (int64_t o = 0; o < p.nout; o++)
				row[o] = gs_sum(&p, &taps[o], plane);
			char *dst = (char *)out->data + (size_t)((n * p.C + ch) * p.nout) * es;
			om_store_f64(out->dtype, dst, 1, row, p.nout);
		}
	}
	free(xv), free(taps);
	return OM_OK;
}

/* ---- AffineGrid (opset 20): theta [N, 2, 3] or [N, 3, 4] over base coordinates ------------ */

static om_kind ag_plan(om_ctx *c, int64_t *sz, int32_t *r)
{
	const om_tensor *th = c->nin > 0 ? c->in[0] : NULL, *s = c->nin > 1 ? c->in[1] : NULL;
	if (!th || !s || !om_is_float_type(th->dtype) || th->rank != 3)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"needs float theta [N, *, *]");
	int64_t k = 0;
	om_kind rc = om_read_ints(c, s, sz, 5, &k);
	if (rc)
		return rc;
	*r = (int32_t)k - 2;
	if ((k != 4 && k != 5) || th->dims[0] != sz[0] || th->dims[1] != *r ||
	    th->dims[2] != *r + 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"theta [N, r, r + 1] with size [N, C, r extents], r 2 or 3");
	for (int64_t i = 0; i < k; i++)
		if (sz[i] < 0)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "size %lld",
					(long long)sz[i]);
	return OM_OK;
}

static om_kind ag_infer(om_ctx *c)
{
	int64_t sz[5], y[5];
	int32_t r = 0;
	om_kind rc = ag_plan(c, sz, &r);
	if (rc)
		return rc;
	y[0] = sz[0];
	for (int32_t i = 0; i < r; i++)
		y[1 + i] = sz[2 + i];
	y[1 + r] = r;
	if (om_shape_numel(r + 2, y) < 0)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "size overflows");
	om_set_shape(c->out[0], c->in[0]->dtype, r + 2, y);
	return OM_OK;
}

/* base coordinate i of an extent n in [-1, 1] */
static double ag_base(int64_t i, int64_t n, bool align)
{
	if (align)
		return n > 1 ? -1 + 2.0 * (double)i / (double)(n - 1) : -1;
	return (2.0 * (double)i + 1) / (double)n - 1;
}

static om_kind ag_kernel(om_ctx *c)
{
	om_kind rc = ag_infer(c);
	int64_t sz[5];
	int32_t r = 0;
	if (rc || (rc = ag_plan(c, sz, &r)))
		return rc;
	const bool align = om_attr_int(c->node, "align_corners", 0) != 0;
	const om_tensor *th = c->in[0];
	const int64_t N = sz[0], D = r == 3 ? sz[2] : 1, H = sz[r == 3 ? 3 : 2];
	const int64_t W = sz[r == 3 ? 4 : 3], nt = N * r * (r + 1);
	double *t = malloc(sizeof(double) * (size_t)(nt + N * D * H * W * r + 1));
	if (!t)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	double *g = t + nt, *o = g;
	om_load_f64(th->dtype, th->data, 1, nt, t);
	for (int64_t n = 0; n < N; n++)
		for (int64_t d = 0; d < D; d++)
			for (int64_t h = 0; h < H; h++)
				for (int64_t w = 0; w < W; w++) {
					const double z = r == 3 ? ag_base(d, D, align) : 1;
					const double b[4] = {ag_base(w, W, align),
							     ag_base(h, H, align), z, 1};
					const double *m = t + n * r * (r + 1);
					for (int32_t i = 0; i < r; i++, o++) {
						*o = 0;
						for (int32_t j = 0; j <= r; j++)
							*o += m[i * (r + 1) + j] * b[j];
					}
				}
	om_store_f64(c->out[0]->dtype, c->out[0]->data, 1, g, N * D * H * W * r);
	free(t);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_GridSample_16_v22[] = {{"align_corners", OM_ATTR_INT, 0},
	{"mode", OM_ATTR_STRING, 0}, {"padding_mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* GridSample-22: X grid -> Y */
static const om_sig sig_GridSample_16_v22 = {22, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1,
	attrs_GridSample_16_v22, NULL};
static const om_sig_attr attrs_GridSample_16[] = {{"align_corners", OM_ATTR_INT, 0},
	{"mode", OM_ATTR_STRING, 0}, {"padding_mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* GridSample-16: X grid -> Y */
static const om_sig sig_GridSample_16 = {16, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0,
	attrs_GridSample_16, &sig_GridSample_16_v22};
static const om_sig_attr attrs_AffineGrid_20[] = {{"align_corners", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* AffineGrid-20: theta size -> grid */
static const om_sig sig_AffineGrid_20 = {20, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_AffineGrid_20, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"GridSample", "", 16, gs_infer, gs_kernel, OM_OP_EXACT | OM_OP_LAYOUT, &sig_GridSample_16,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"AffineGrid", "", 20, ag_infer, ag_kernel, OM_OP_EXACT, &sig_AffineGrid_20, OM_OPC_NONE,
	 NULL, 0, NULL},
};

const om_op_table om_ops_sample = OM_TABLE(rows);
