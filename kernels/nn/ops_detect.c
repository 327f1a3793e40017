/* ops_detect.c — NonMaxSuppression (opset 10/11): per batch and class, boxes above the score
 * threshold in descending score order (lower index first on ties), each kept unless its IoU
 * with a kept box exceeds the threshold; output int64 [selected, 3] (data dependent).
 * RoiAlign (opset 10/16): bilinear samples per output bin, averaged or maxed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nms.h"
#include "numrun.h"
#include "op.h"
#include "shape_util.h"

typedef struct nms_plan {
	int64_t B, C, S, max_out;
	float iou, score; /* compared in float, as ONNX Runtime */
	bool has_score, center;
} nms_plan;

static om_kind nms_scalar_f(om_ctx *c, const om_tensor *t, float *v)
{
	double d;
	if (!om_has_value(t))
		return OM_NEED_VALUE;
	if (om_tensor_numel(t) != 1 || !om_load_f64(t->dtype, t->data, 1, 1, &d))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "thresholds are scalars");
	*v = (float)d;
	return OM_OK;
}

static om_kind nms_plan_make(om_ctx *c, nms_plan *p)
{
	memset(p, 0, sizeof *p);
	const om_tensor *b = c->nin > 0 ? c->in[0] : NULL, *s = c->nin > 1 ? c->in[1] : NULL;
	if (!b || !s || !om_is_float_type(b->dtype) || !om_is_float_type(s->dtype) ||
	    b->rank != 3 || s->rank != 3 || b->dims[2] != 4 || s->dims[0] != b->dims[0] ||
	    s->dims[2] != b->dims[1])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"boxes [B, S, 4] and scores [B, C, S] of a float type");
	p->B = b->dims[0], p->C = s->dims[1], p->S = b->dims[1];
	p->center = om_attr_int(c->node, "center_point_box", 0) != 0;
	om_kind rc = OM_OK;
	if (c->nin > 2 && c->in[2])
		rc = om_read_scalar_int(c, c->in[2], &p->max_out);
	if (!rc && c->nin > 3 && c->in[3])
		rc = nms_scalar_f(c, c->in[3], &p->iou);
	if (!rc && c->nin > 4 && c->in[4]) {
		p->has_score = true;
		rc = nms_scalar_f(c, c->in[4], &p->score);
	}
	if (!rc && (!om_has_value(b) || !om_has_value(s)))
		rc = OM_NEED_VALUE;
	if (p->max_out < 0)
		p->max_out = 0;
	return rc;
}

/* runs the selection: *out gets the malloc'd triples (NULL when none), *count their number */
static om_kind nms_run(om_ctx *c, const nms_plan *p, int64_t **out, int64_t *count)
{
	const om_tensor *tb = c->in[0], *ts = c->in[1];
	const int64_t S = p->S, nb = p->B * S * 4, ns = p->B * p->C * S;
	/* ONNX's NonMaxSuppression takes float; other float types are converted */
	const bool conv = tb->dtype != OM_FLOAT || ts->dtype != OM_FLOAT;
	float *fl = conv ? malloc(sizeof(float) * (size_t)(nb + ns + 1)) : NULL;
	double *tmp = conv ? malloc(sizeof(double) * (size_t)(nb + ns + 1)) : NULL;
	int64_t *keep = malloc(sizeof(int64_t) * (size_t)(S + 1)), *res = NULL, cap = 0;
	om_nms_work *w = om_nms_work_new(S);
	om_kind rc = OM_OK;
	int64_t total = 0;
	if (!w || !keep || (conv && (!fl || !tmp))) {
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory for %lld boxes",
			      (long long)S);
		goto done;
	}
	const float *box = tb->data, *sc = ts->data;
	if (conv) {
		om_load_f64(tb->dtype, tb->data, 1, nb, tmp);
		om_load_f64(ts->dtype, ts->data, 1, ns, tmp + nb);
		for (int64_t i = 0; i < nb + ns; i++)
			fl[i] = (float)tmp[i];
		box = fl, sc = fl + nb;
	}
	for (int64_t b = 0; b < p->B && !rc; b++) {
		om_nms_boxes(w, box + b * S * 4, p->center);
		for (int64_t k = 0; k < p->C; k++) {
			int64_t nk = 0;
			om_nms_class(w, sc + (b * p->C + k) * S, p->has_score, p->score, p->max_out,
				     p->iou, keep, &nk);
			if (total + nk > cap) {
				const int64_t want = 2 * cap > total + nk ? 2 * cap : total + nk;
				int64_t *q = realloc(res, sizeof(int64_t) * 3 * (size_t)want);
				if (!q) {
					rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
					break;
				}
				res = q, cap = want;
			}
			for (int64_t i = 0; i < nk; i++) {
				int64_t *o = res + (total + i) * 3;
				o[0] = b, o[1] = k, o[2] = keep[i];
			}
			total += nk;
		}
	}
done:
	free(fl), free(tmp), free(keep);
	om_nms_work_free(w);
	if (rc)
		free(res), res = NULL, total = 0;
	*out = res;
	*count = total;
	return rc;
}

/* The session infers a data-dependent step, then runs its kernel, on the same inputs: the
 * inference keeps its selection in the step's state with a copy of what it was made from, and
 * the kernel takes it when everything matches (else it selects again). Inputs above
 * NMS_MEMO_MAX bytes are not copied (the selection then runs twice). */
enum { NMS_MEMO_MAX = 16 << 20 };

typedef struct nms_memo {
	nms_plan p;
	int32_t tb, ts;   /* element types of boxes and scores */
	size_t nb, ns;    /* their bytes, after the triples */
	int64_t count;    /* triples (int64 x 3) right after this header */
} nms_memo;

static bool nms_memo_fits(const nms_memo *m, const nms_plan *p, const om_ctx *c)
{
	const om_tensor *tb = c->in[0], *ts = c->in[1];
	const char *bytes = (const char *)(m + 1) + sizeof(int64_t) * 3 * (size_t)m->count;
	return m->p.B == p->B && m->p.C == p->C && m->p.S == p->S && m->p.max_out == p->max_out &&
	       !memcmp(&m->p.iou, &p->iou, sizeof p->iou) && m->p.has_score == p->has_score &&
	       (!p->has_score || !memcmp(&m->p.score, &p->score, sizeof p->score)) &&
	       m->p.center == p->center && m->tb == tb->dtype && m->ts == ts->dtype &&
	       m->nb == tb->nbytes && m->ns == ts->nbytes && !memcmp(bytes, tb->data, m->nb) &&
	       !memcmp(bytes + m->nb, ts->data, m->ns);
}

static void nms_memo_keep(om_ctx *c, const nms_plan *p, const int64_t *res, int64_t n)
{
	const om_tensor *tb = c->in[0], *ts = c->in[1];
	if (!c->state || tb->nbytes + ts->nbytes > NMS_MEMO_MAX)
		return;
	const size_t tri = sizeof(int64_t) * 3 * (size_t)n;
	om_ctx_state_reset(c);
	nms_memo *m = malloc(sizeof *m + tri + tb->nbytes + ts->nbytes);
	if (!m)
		return;
	*m = (nms_memo){.p = *p, .tb = tb->dtype, .ts = ts->dtype, .nb = tb->nbytes,
			.ns = ts->nbytes, .count = n};
	char *q = (char *)(m + 1);
	if (n)
		memcpy(q, res, tri);
	memcpy(q + tri, tb->data, tb->nbytes);
	memcpy(q + tri + tb->nbytes, ts->data, ts->nbytes);
	*c->state = m;
}

static om_kind nms_infer(om_ctx *c)
{
	nms_plan p;
	int64_t n = 0, *res = NULL;
	om_kind rc = nms_plan_make(c, &p);
	if (!rc)
		rc = nms_run(c, &p, &res, &n);
	if (!rc) {
		om_set_shape(c->out[0], OM_INT64, 2, (int64_t[]){n, 3});
		nms_memo_keep(c, &p, res, n);
	}
	free(res);
	return rc;
}

static om_kind nms_kernel(om_ctx *c)
{
	nms_plan p;
	int64_t n = 0, *res = NULL;
	om_kind rc = nms_plan_make(c, &p);
	if (rc)
		return rc;
	const nms_memo *m = c->state && !(c->state_release && *c->state_release) ? *c->state
										  : NULL;
	if (m && m->count == c->out[0]->dims[0] && nms_memo_fits(m, &p, c)) {
		if (m->count)
			memcpy(c->out[0]->data, m + 1, sizeof(int64_t) * 3 * (size_t)m->count);
		om_ctx_state_reset(c); /* one use: the next run infers again */
		return OM_OK;
	}
	rc = nms_run(c, &p, &res, &n);
	if (!rc && n != c->out[0]->dims[0])
		rc = om_error(c->st, OM_ERR_INTERNAL, c->node, "count changed");
	if (!rc && n)
		memcpy(c->out[0]->data, res, sizeof(int64_t) * 3 * (size_t)n);
	free(res);
	return rc;
}

/* ---- RoiAlign (opset 10/16): bilinear samples averaged (or maxed, as ONNX Runtime) per bin -- */

/* The rows' param: ROI_HALF_PIXEL where coordinate_transformation_mode defaults to half_pixel
 * (opset 16; before, output_half_pixel) */
enum { ROI_HALF_PIXEL = 1 };

typedef struct roi_plan {
	int64_t N, C, H, W, R, oh, ow, ratio;
	double scale, offset;
	bool max_mode, half_pixel;
} roi_plan;

static om_kind roi_plan_make(om_ctx *c, roi_plan *p)
{
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL, *r = c->nin > 1 ? c->in[1] : NULL;
	const om_tensor *b = c->nin > 2 ? c->in[2] : NULL;
	if (!x || !r || !b || !om_is_float_type(x->dtype) || x->rank != 4 || r->rank != 2 ||
	    r->dims[1] != 4 || r->dtype != x->dtype || b->rank != 1 || b->dims[0] != r->dims[0] ||
	    (b->dtype != OM_INT64 && b->dtype != OM_INT32))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"X [N, C, H, W], rois [R, 4] and batch_indices [R]");
	p->N = x->dims[0], p->C = x->dims[1], p->H = x->dims[2], p->W = x->dims[3];
	p->R = r->dims[0];
	p->oh = om_attr_int(c->node, "output_height", 1);
	p->ow = om_attr_int(c->node, "output_width", 1);
	p->ratio = om_attr_int(c->node, "sampling_ratio", 0);
	p->scale = om_attr_float(c->node, "spatial_scale", 1);
	const char *ct = om_attr_string(c->node, "coordinate_transformation_mode",
					c->op->param & ROI_HALF_PIXEL ? "half_pixel"
								      : "output_half_pixel");
	p->half_pixel = !strcmp(ct, "half_pixel");
	p->offset = p->half_pixel ? 0.5 : 0;
	const char *m = om_attr_string(c->node, "mode", "avg");
	p->max_mode = !strcmp(m, "max");
	if ((!p->max_mode && strcmp(m, "avg")) || p->oh < 1 || p->ow < 1 || p->ratio < 0 ||
	    p->oh > ((int64_t)1 << 20) || p->ow > ((int64_t)1 << 20) || p->ratio > 1 << 20 ||
	    (!p->half_pixel && strcmp(ct, "output_half_pixel")))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "attributes out of range");
	return OM_OK;
}

static om_kind roi_infer(om_ctx *c)
{
	roi_plan p = {0};
	om_kind rc = roi_plan_make(c, &p);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, 4, (int64_t[]){p.R, p.C, p.oh, p.ow});
	return rc;
}

/* the four taps and weights of a sample at (y, x); false outside the image */
static bool roi_taps(const roi_plan *p, double y, double x, int64_t *o, double *w)
{
	if (y < -1.0 || y > (double)p->H || x < -1.0 || x > (double)p->W || y != y || x != x ||
	    p->H < 1 || p->W < 1) /* an empty image has no taps */
		return false;
	y = y <= 0 ? 0 : y, x = x <= 0 ? 0 : x;
	int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;
	if (yl >= p->H - 1)
		yh = yl = p->H - 1, y = (double)yl;
	else
		yh = yl + 1;
	if (xl >= p->W - 1)
		xh = xl = p->W - 1, x = (double)xl;
	else
		xh = xl + 1;
	const double ly = y - (double)yl, lx = x - (double)xl, hy = 1 - ly, hx = 1 - lx;
	o[0] = yl * p->W + xl, o[1] = yl * p->W + xh, o[2] = yh * p->W + xl, o[3] = yh * p->W + xh;
	w[0] = hy * hx, w[1] = hy * lx, w[2] = ly * hx, w[3] = ly * lx;
	return true;
}

/* The samples [*lo, *hi) of n along an axis, at a + (i + .5) step, that may lie within
 * [-1, extent] (roi_taps reads nothing outside), two more on each side against rounding; the
 * others read nothing. All n where the bounds are not finite numbers. A box of 1e29 pixels took
 * 2^20 samples an axis (fuzz_run: a run of hours), of which a few fall on the image. */
static void roi_inside(double a, double step, int64_t n, int64_t extent, int64_t *lo,
		       int64_t *hi)
{
	*lo = 0, *hi = n;
	if (!(step > 0 || step < 0))
		return;
	double u = (-1.0 - a) / step - .5, v = ((double)extent - a) / step - .5;
	if (step < 0) {
		const double t = u;
		u = v, v = t;
	}
	if (!isfinite(u) || !isfinite(v))
		return;
	u = floor(u) - 2, v = ceil(v) + 3;
	*lo = u <= 0 ? 0 : u >= (double)n ? n : (int64_t)u;
	*hi = v <= (double)*lo ? *lo : v >= (double)n ? n : (int64_t)v;
}

static double roi_bin(const roi_plan *p, const double *img, const double *box, int64_t ph,
		      int64_t pw)
{
	const double sy = box[1] * p->scale - p->offset, sx = box[0] * p->scale - p->offset;
	double rh = box[3] * p->scale - p->offset - sy, rw = box[2] * p->scale - p->offset - sx;
	if (!p->half_pixel)
		rh = rh > 1 ? rh : 1, rw = rw > 1 ? rw : 1;
	const double bh = rh / (double)p->oh, bw = rw / (double)p->ow;
	double gh = p->ratio > 0 ? (double)p->ratio : ceil(rh / (double)p->oh);
	double gw = p->ratio > 0 ? (double)p->ratio : ceil(rw / (double)p->ow);
	gh = gh == gh && gh > 0 ? (gh < 1 << 20 ? gh : 1 << 20) : 0;
	gw = gw == gw && gw > 0 ? (gw < 1 << 20 ? gw : 1 << 20) : 0;
	const double count = gh * gw > 1 ? gh * gw : 1;
	double acc = 0;
	bool first = true;
	int64_t y0, y1, x0, x1;
	roi_inside(sy + (double)ph * bh, bh / gh, (int64_t)gh, p->H, &y0, &y1);
	roi_inside(sx + (double)pw * bw, bw / gw, (int64_t)gw, p->W, &x0, &x1);
	/* a sample skipped reads nothing: 0 to a sum, a 0 among the maximum's candidates, in
	 * the samples' order (the first candidate alone makes a NaN maximum) */
	const bool skipped = (y1 - y0) * (x1 - x0) < (int64_t)gh * (int64_t)gw;
	if (p->max_mode && skipped && !(y0 == 0 && y1 > 0 && x0 == 0 && x1 > 0))
		acc = 0, first = false; /* the first sample was skipped */
	for (int64_t iy = y0; iy < y1; iy++)
		for (int64_t ix = x0; ix < x1; ix++) {
			const double y = sy + (double)ph * bh + ((double)iy + .5) * bh / gh;
			const double x = sx + (double)pw * bw + ((double)ix + .5) * bw / gw;
			int64_t o[4];
			double w[4] = {0, 0, 0, 0}, v = 0;
			const bool in = roi_taps(p, y, x, o, w);
			if (!p->max_mode) {
				for (int k = 0; in && k < 4; k++)
					v += w[k] * img[o[k]];
				acc += v;
				continue;
			}
			for (int k = 0; k < 4; k++) {
				const double t = in ? w[k] * img[o[k]] : 0;
				v = k == 0 || t > v ? t : v;
			}
			acc = first || v > acc ? v : acc;
			first = false;
		}
	if (p->max_mode && skipped)
		acc = 0 > acc ? 0 : acc;
	return p->max_mode ? acc : acc / count;
}

static om_kind roi_kernel(om_ctx *c)
{
	roi_plan p = {0};
	om_kind rc = roi_plan_make(c, &p);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0], *r = c->in[1], *bi = c->in[2];
	const int64_t nx = p.N * p.C * p.H * p.W, ny = p.R * p.C * p.oh * p.ow;
	double *xv = malloc(sizeof(double) * (size_t)(nx + 4 * p.R + ny + 1));
	if (!xv)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	double *rv = xv + nx, *y = rv + 4 * p.R;
	om_load_f64(x->dtype, x->data, 1, nx, xv);
	om_load_f64(r->dtype, r->data, 1, 4 * p.R, rv);
	for (int64_t i = 0; i < p.R && !rc; i++) {
		const int64_t b = bi->dtype == OM_INT64 ? ((const int64_t *)bi->data)[i]
							: ((const int32_t *)bi->data)[i];
		if (b < 0 || b >= p.N) {
			rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				      "batch index %lld outside [0, %lld)", (long long)b,
				      (long long)p.N);
			break;
		}
		for (int64_t ch = 0; ch < p.C; ch++)
			for (int64_t ph = 0; ph < p.oh; ph++)
				for (int64_t pw = 0; pw < p.ow; pw++)
					y[((i * p.C + ch) * p.oh + ph) * p.ow + pw] =
						roi_bin(&p, xv + (b * p.C + ch) * p.H * p.W,
							rv + 4 * i, ph, pw);
	}
	if (!rc)
		om_store_f64(c->out[0]->dtype, c->out[0]->data, 1, y, ny);
	free(xv);
	return rc;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_NonMaxSuppression_10[] = {{"center_point_box", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* NonMaxSuppression-10: boxes scores [max_output_boxes_per_class] [iou_threshold] [score_threshold]
 * -> selected_indices */
static const om_sig sig_NonMaxSuppression_10 = {10, 2, 5, 1, 1, 0x1c, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_NonMaxSuppression_10, NULL};
static const om_sig_attr attrs_RoiAlign_10[] = {{"mode", OM_ATTR_STRING, 0},
	{"output_height", OM_ATTR_INT, 0}, {"output_width", OM_ATTR_INT, 0},
	{"sampling_ratio", OM_ATTR_INT, 0}, {"spatial_scale", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* RoiAlign-10: X rois batch_indices -> Y */
static const om_sig sig_RoiAlign_10 = {10, 3, 3, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0,
	attrs_RoiAlign_10, NULL};
static const om_sig_attr attrs_RoiAlign_16_v22[] = {
	{"coordinate_transformation_mode", OM_ATTR_STRING, 0},
	{"mode", OM_ATTR_STRING, 0}, {"output_height", OM_ATTR_INT, 0},
	{"output_width", OM_ATTR_INT, 0}, {"sampling_ratio", OM_ATTR_INT, 0},
	{"spatial_scale", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* RoiAlign-22: X rois batch_indices -> Y */
static const om_sig sig_RoiAlign_16_v22 = {22, 3, 3, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1,
	attrs_RoiAlign_16_v22, NULL};
static const om_sig_attr attrs_RoiAlign_16[] = {
	{"coordinate_transformation_mode", OM_ATTR_STRING, 0},
	{"mode", OM_ATTR_STRING, 0}, {"output_height", OM_ATTR_INT, 0},
	{"output_width", OM_ATTR_INT, 0}, {"sampling_ratio", OM_ATTR_INT, 0},
	{"spatial_scale", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* RoiAlign-16: X rois batch_indices -> Y */
static const om_sig sig_RoiAlign_16 = {16, 3, 3, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0,
	attrs_RoiAlign_16, &sig_RoiAlign_16_v22};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"NonMaxSuppression", "", 10, nms_infer, nms_kernel, OM_OP_EXACT | OM_OP_DATA_DEPENDENT,
	 &sig_NonMaxSuppression_10, OM_OPC_NONE, NULL, 0, NULL},
	{"RoiAlign", "", 10, roi_infer, roi_kernel, OM_OP_EXACT | OM_OP_LAYOUT, &sig_RoiAlign_10,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"RoiAlign", "", 16, roi_infer, roi_kernel, OM_OP_EXACT | OM_OP_LAYOUT, &sig_RoiAlign_16,
	 OM_OPC_NONE, NULL, ROI_HALF_PIXEL, NULL},
};

const om_op_table om_ops_detect = OM_TABLE(rows);
