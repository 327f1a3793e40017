/* ops_resize.c — Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9). Nearest moves elements
 * of any type by size (a repeated output row as a copy of the one before); linear and cubic
 * (antialias included) run on float32 (float16/bfloat16 through conversion) as one separable
 * pass per resized axis, each split over the run's threads by output rows. Axis order: first
 * to last (exact), or in fast mode the last axis first, so that its pass (a gather per
 * element, where the others are runs of whole rows) works on the smaller image when upsampling
 * (deeplabv3's 21x28x28 -> 21x224x224 and its other Resize: 2.6 -> 1.0 ms a run at one thread,
 * 3.1 -> 0.8 at two); when only the last two axes resize, fast mode runs both passes band by
 * band (resize_bands). In fast mode a Resize of H and W between convolutions takes
 * channel-blocked or NHWC tensors (resize_layout). */
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "f32_bridge.h"
#include "layout.h"
#include "move.h"
#include "numrun.h"
#include "parallel.h"
#include "resize_plan.h"

static om_kind resize_infer(om_ctx *c)
{
	rs_params p;
	om_kind rc = om_resize_params(c, false, &p);
	if (rc)
		return rc;
	om_set_shape(c->out[0], c->in[0]->dtype, p.rank, p.out);
	return OM_OK;
}

typedef struct tables {
	rs_axis ax[OM_MAX_RANK];
	int32_t rank;
} tables;

static void tables_free(tables *t)
{
	for (int32_t a = 0; a < t->rank; a++)
		om_resize_axis_free(&t->ax[a]);
}

static om_kind tables_build(om_ctx *c, const rs_params *p, tables *t)
{
	memset(t, 0, sizeof *t);
	t->rank = p->rank;
	for (int32_t a = 0; a < p->rank; a++) {
		om_kind rc = om_resize_axis(c, p, a, &t->ax[a]);
		if (rc) {
			tables_free(t);
			return rc;
		}
	}
	return OM_OK;
}

static bool next_index(int64_t *o, const int64_t *dims, int32_t n)
{
	for (int32_t i = n - 1; i >= 0; i--) {
		if (++o[i] < dims[i])
			return true;
		o[i] = 0;
	}
	return false;
}

/* ---- nearest: a gather of whole elements ------------------------------------------------ */

/* Whether the last axis' table doubles its input (idx[j] = j / 2, nothing outside): the 2x
 * upsample of FPN and segmentation heads */
static bool doubles(const rs_axis *ax, int64_t L)
{
	if (ax->any_outside || L % 2)
		return false;
	for (int64_t j = 0; j < L; j++)
		if (ax->idx[j] != j / 2)
			return false;
	return true;
}

/* d[2k] = d[2k + 1] = s[k] for 4-byte elements (k < half) */
OM_CLONES static void double_row4(unsigned char *restrict d, const unsigned char *restrict s,
				  int64_t half)
{
	for (int64_t k = 0; k < half; k++) {
		uint32_t v;
		memcpy(&v, s + 4 * k, 4);
		memcpy(d + 8 * k, &v, 4);
		memcpy(d + 8 * k + 4, &v, 4);
	}
}

/* Each output row of the last axis is gathered from its input row, or copied from the
 * previous output row when both read the same input row (the rows a nearest upsample repeats) */
static void nearest(const rs_params *p, const tables *t, const om_tensor *X, om_tensor *Y,
		    const unsigned char *extra)
{
	size_t es = om_dtype_size(X->dtype);
	int32_t r = p->rank, last = r - 1;
	int64_t istr[OM_MAX_RANK], o[OM_MAX_RANK] = {0};
	istr[last] = 1;
	for (int32_t i = last - 1; i >= 0; i--)
		istr[i] = istr[i + 1] * p->in[i + 1];
	int64_t L = p->out[last];
	const unsigned char *src = X->data;
	unsigned char *dst = Y->data;
	if (om_tensor_numel(Y) == 0)
		return;
	const rs_axis *ax = &t->ax[last];
	const bool twice = es == 4 && doubles(ax, L);
	const unsigned char *prev = NULL; /* the previous output row */
	int64_t prev_base = -1;
	bool prev_out = false;
	do {
		int64_t base = 0;
		bool out = false;
		for (int32_t i = 0; i < last; i++) {
			base += t->ax[i].idx[o[i]] * istr[i];
			out |= t->ax[i].outside[o[i]];
		}
		if (prev && base == prev_base && out == prev_out) {
			om_move_n(dst, prev, es, L);
		} else if (twice && !out) {
			double_row4(dst, src + (size_t)base * es, L / 2);
		} else {
			for (int64_t j = 0; j < L; j++) {
				const unsigned char *s = src + (size_t)(base + ax->idx[j]) * es;
				s = out || ax->outside[j] ? extra : s;
				om_move1(dst + (size_t)j * es, s, es);
			}
		}
		prev = dst, prev_base = base, prev_out = out;
		dst += (size_t)L * es;
	} while (next_index(o, p->out, last));
}

/* ---- linear and cubic: separable passes ------------------------------------------------- */

/* The passes are cloned (clones.h): their vector lanes are distinct outputs, each taking its
 * taps in order, so every clone gives the same bits */

/* d[0, inner) = the taps of output o on axis ax over rows of `inner` floats at base, row i
 * at base + (i - off) * inner: each output from its own taps, in order */
OM_INLINE void blend(const rs_axis *ax, int64_t o, const float *base, int64_t inner, int64_t off,
		     float *restrict d)
{
	const int64_t *idx = ax->idx + o * ax->n;
	const float *w = ax->w + o * ax->n;
	const float *restrict s = base + (idx[0] - off) * inner;
	for (int64_t k = 0; k < inner; k++)
		d[k] = w[0] * s[k];
	for (int64_t t = 1; t < ax->n; t++) {
		s = base + (idx[t] - off) * inner;
		const float wt = w[t];
		for (int64_t k = 0; k < inner; k++)
			d[k] += wt * s[k];
	}
}

/* y[o] for outputs [o0, o1) of a row of the last axis, taps from xs */
OM_INLINE void gather_row(const rs_axis *ax, int64_t o0, int64_t o1, const float *xs, float *y)
{
	const int64_t *idx = ax->idx;
	const float *w = ax->w;
	if (ax->n == 2) {
		for (int64_t o = o0; o < o1; o++)
			y[o] = w[2 * o] * xs[idx[2 * o]] + w[2 * o + 1] * xs[idx[2 * o + 1]];
		return;
	}
	for (int64_t o = o0; o < o1; o++) {
		float v = w[o * ax->n] * xs[idx[o * ax->n]];
		for (int64_t t = 1; t < ax->n; t++)
			v += w[o * ax->n + t] * xs[idx[o * ax->n + t]];
		y[o] = v;
	}
}

/* One pass: axis a of x (outer x in x inner) resampled into y (outer x out x inner) */
typedef struct pass_job {
	const rs_axis *ax;
	int64_t in, out, inner;
	const float *x;
	float *y;
} pass_job;

/* output rows [lo, hi) of the pass, a row being (u, o): each written from its own taps */
OM_CLONES static void pass_rows(void *arg, int64_t lo, int64_t hi)
{
	const pass_job *j = arg;
	const rs_axis *ax = j->ax;
	const int64_t inner = j->inner;
	if (inner == 1) { /* the last axis: one element a row, its taps gathered along the
			     row (that UNet's Resize 1.61 -> 0.95 ms at one thread without a
			     division an element; linear's two taps vectorized by gathers) */
		for (int64_t r = lo; r < hi;) {
			const int64_t u = r / j->out, o = r % j->out;
			const int64_t end = j->out - o < hi - r ? j->out : o + (hi - r);
			gather_row(ax, o, end, j->x + u * j->in, j->y + u * j->out);
			r += end - o;
		}
		return;
	}
	int64_t u = lo / j->out, o = lo % j->out;
	for (int64_t r = lo; r < hi; r++) {
		blend(ax, o, j->x + u * j->in * inner, inner, 0, j->y + r * inner);
		if (++o == j->out)
			o = 0, u++;
	}
}

/* Resamples axis a of x (extent dims) into y (dims with dims[a] = out). */
static void pass(int threads, const rs_axis *ax, int32_t a, const int64_t *dims, int32_t rank,
		 int64_t out, const float *x, float *y)
{
	int64_t outer = 1, inner = 1;
	for (int32_t i = 0; i < a; i++)
		outer *= dims[i];
	for (int32_t i = a + 1; i < rank; i++)
		inner *= dims[i];
	enum { GRAIN = 1 << 14 }; /* multiply-adds worth a thread */
	pass_job j = {ax, dims[a], out, inner, x, y};
	om_par_for(threads, outer * out, GRAIN / (inner * ax->n + 1) + 1, pass_rows, &j);
}

/* Fast mode's two resized axes of images (outer x H x W x L: L lanes a pixel, 1 on plain
 * tensors, the block's on channel-blocked ones) resized band by band: a band of output rows of
 * one image takes the input rows its taps read, resamples them along W into a scratch of the
 * worker's (in cache), then blends those along H into the band's output rows: the same two
 * passes in the same order as over the whole tensor, without the image-sized buffer between
 * them and its trip through memory, and the output rows split over the threads whatever the
 * count of images (a new user's UNet, 64 planes 64x64 -> 128x128 bilinear: 1.29 -> 0.65-0.79
 * ms a run at two threads, 0.95-0.98 at one). */
typedef struct band_job {
	const rs_axis *ah, *aw;
	int64_t IH, IW, OH, OW, L;
	int64_t band, cap; /* output rows a band at most; input rows the scratch holds */
	const float *x;
	float *y, *scratch; /* cap x OW x L floats per worker slot */
} band_job;

/* output rows [lo, hi) of all the images' (image u's row o: u OH + o) */
OM_CLONES static void band_piece(void *arg, int64_t lo, int64_t hi, int slot)
{
	const band_job *j = arg;
	const rs_axis *ah = j->ah;
	const int64_t row = j->OW * j->L;
	float *tmp = j->scratch + (size_t)slot * (size_t)(j->cap * row);
	for (int64_t r = lo; r < hi;) {
		const int64_t u = r / j->OH, a = r % j->OH;
		int64_t b = a, first = INT64_MAX, last = -1; /* input rows [first, last] */
		while (b < j->OH && b - a < j->band && r + (b - a) < hi) {
			int64_t f = first, l = last;
			for (int64_t t = 0; t < ah->n; t++) {
				const int64_t i = ah->idx[b * ah->n + t];
				f = i < f ? i : f;
				l = i > l ? i : l;
			}
			if (b > a && l - f + 1 > j->cap)
				break;
			first = f, last = l, b++;
		}
		const pass_job w = {j->aw, j->IW, j->OW, j->L,
				    j->x + (u * j->IH + first) * j->IW * j->L, tmp};
		pass_rows((void *)&w, 0, (last - first + 1) * j->OW);
		for (int64_t o = a; o < b; o++)
			blend(ah, o, tmp, row, first, j->y + (u * j->OH + o) * row);
		r += b - a;
	}
}

/* whether axes h and h + 1 resize, every other axis is the identity and nothing samples
 * outside the input: band by band */
static bool bands_fit(const rs_params *p, const tables *t, int32_t h)
{
	for (int32_t a = 0; a < p->rank; a++)
		if (t->ax[a].any_outside || t->ax[a].identity != (a != h && a != h + 1))
			return false;
	return h >= 0 && h + 1 < p->rank;
}

/* axes h, h + 1 of p (bands_fit), x and y holding `outer` images of L lanes a pixel, resized
 * band by band */
static om_kind resize_bands(om_ctx *c, const rs_params *p, const tables *t, int32_t h,
			    int64_t outer, int64_t L, const float *x, float *y)
{
	band_job j = {&t->ax[h], &t->ax[h + 1], p->in[h], p->in[h + 1], p->out[h], p->out[h + 1],
		      L, 0, 0, x, y, NULL};
	const int64_t row = j.OW * L;
	if (outer <= 0 || j.OH * row == 0)
		return OM_OK;
	/* bands of about 64K output floats, and the input rows they read (more when their
	 * taps spread: a band then ends early) */
	enum { BAND_FLOATS = 1 << 16, GRAIN = 1 << 14 /* multiply-adds worth a thread */ };
	j.band = BAND_FLOATS / row > 1 ? BAND_FLOATS / row : 1;
	j.cap = (j.band * j.IH + j.OH - 1) / j.OH + j.ah->n + 1;
	j.cap = j.cap < j.IH ? j.cap : j.IH;
	const int64_t work = row * (j.ah->n + j.aw->n * j.IH / j.OH + 1);
	int64_t grain = GRAIN / work + 1;
	if (outer >= 2 * c->threads) /* whole images a piece: no input row resampled twice */
		grain = (grain + j.OH - 1) / j.OH * j.OH;
	const int slots = om_par_slots(c->threads, outer * j.OH, grain);
	const size_t bytes = sizeof(float) * (size_t)slots * (size_t)(j.cap * row);
	om_kind rc = om_ctx_scratch(c, bytes, "the resize scratch", (void **)&j.scratch);
	if (rc)
		return rc;
	om_par_for_slots(c->threads, outer * j.OH, grain, band_piece, &j);
	om_ctx_scratch_done(c, j.scratch);
	return OM_OK;
}

/* tf_crop_and_resize: outputs outside the input on any axis take the extrapolation value. */
static void extrapolate(const rs_params *p, const tables *t, float *y)
{
	int64_t o[OM_MAX_RANK] = {0};
	if (om_shape_numel(p->rank, p->out) == 0)
		return;
	do {
		bool out = false;
		for (int32_t i = 0; i < p->rank; i++)
			out |= t->ax[i].outside[o[i]];
		if (out)
			*y = p->extrapolation;
		y++;
	} while (next_index(o, p->out, p->rank));
}

static om_kind interpolate(om_ctx *c, const rs_params *p, const tables *t)
{
	const om_tensor *X = c->in[0];
	om_tensor *Y = c->out[0];
	int64_t dims[OM_MAX_RANK];
	memcpy(dims, p->in, sizeof dims);
	int32_t npass = 0, done = 0;
	bool any_outside = false;
	for (int32_t a = 0; a < p->rank; a++) {
		npass += !t->ax[a].identity;
		any_outside |= t->ax[a].any_outside;
	}
	if (!c->exact && bands_fit(p, t, p->rank - 2))
		return resize_bands(c, p, t, p->rank - 2, om_shape_numel(p->rank - 2, p->in), 1,
				    X->data, Y->data);
	const float *cur = X->data;
	float *owned = NULL;
	if (npass == 0)
		memcpy(Y->data, X->data, sizeof(float) * (size_t)om_tensor_numel(X));
	/* the axes in pass order: fast mode starts with the last (file comment) */
	int32_t order[OM_MAX_RANK];
	const int32_t last = p->rank - 1, first = c->exact || p->rank < 2 ? -1 : last;
	for (int32_t i = 0, k = 0; i < p->rank; i++)
		if (i != first)
			order[k++] = i;
	if (first >= 0) {
		memmove(order + 1, order, sizeof *order * (size_t)last);
		order[0] = first;
	}
	for (int32_t i = 0; i < p->rank; i++) {
		const int32_t a = order[i];
		if (t->ax[a].identity)
			continue;
		int64_t nd[OM_MAX_RANK];
		memcpy(nd, dims, sizeof nd);
		nd[a] = p->out[a];
		float *next = Y->data;
		if (++done < npass) {
			const int64_t n = om_shape_numel(p->rank, nd);
			om_kind rc = n < 0 ? om_error(c->st, OM_ERR_NOMEM, c->node,
						      "resize buffer of %lld values", (long long)n)
					   : om_ctx_scratch(c, sizeof(float) * (size_t)n,
							    "a resized axis", (void **)&next);
			if (rc) {
				om_ctx_scratch_done(c, owned);
				return rc;
			}
		}
		pass(c->threads, &t->ax[a], a, dims, p->rank, p->out[a], cur, next);
		om_ctx_scratch_done(c, owned);
		owned = next == Y->data ? NULL : next;
		cur = next;
		memcpy(dims, nd, sizeof dims);
	}
	if (any_outside)
		extrapolate(p, t, Y->data);
	return OM_OK;
}

static om_kind interpolate_f32(om_ctx *c)
{
	rs_params p;
	om_kind rc = om_resize_params(c, true, &p);
	if (rc)
		return rc;
	tables t;
	if ((rc = tables_build(c, &p, &t)))
		return rc;
	rc = interpolate(c, &p, &t);
	tables_free(&t);
	return rc;
}

/* ---- on channel-blocked tensors (op.h) ---------------------------------------------------- */

static om_kind resize_kernel(om_ctx *c);

/* c with X replaced by x (in: room for the new inputs, 4) */
static om_ctx with_x(const om_ctx *c, const om_tensor *x, const om_tensor **in)
{
	in[0] = x;
	for (int32_t i = 1; i < 4; i++)
		in[i] = i < c->nin ? c->in[i] : NULL;
	om_ctx lc = *c;
	lc.in = in;
	return lc;
}

/* A float (N, C, H, W) Resize of H and W alone by constants, sampling inside the input (any
 * mode: nearest is a tap of weight 1), takes X and Y blocked, in NHWC or when C is whole
 * blocks: the images' pixels are then runs of lanes that resize as the planes' elements do
 * (ONNX Runtime's NCHWc Upsample is linear or nearest by 2-D scales). Either side may be
 * plain: it is converted on the input's side (the smaller one when upsampling, and a UNet's
 * Resize of a plain conv's output then still feeds NHWC convs). */
static void resize_layout(const om_ctx *c, om_layout_req *r)
{
	*r = (om_layout_req){0};
	const om_tensor *X = c->in[0];
	if (c->exact || !X || X->dtype != OM_FLOAT || X->rank != 4 || c->nout != 1 ||
	    !c->out[0] || c->nin > 4 || (c->block < 1 && c->block != OM_BLOCK_NHWC) ||
	    (c->block > 0 && X->dims[1] % c->block))
		return;
	for (int32_t i = 1; i < c->nin; i++)
		if (c->in[i] && !(c->const_in >> i & 1))
			return; /* roi, scales, sizes: the same in every run */
	om_status st = {0};
	om_ctx lc = *c;
	lc.st = &st;
	rs_params p;
	tables t;
	if (om_resize_params(&lc, true, &p) || tables_build(&lc, &p, &t))
		return;
	if (bands_fit(&p, &t, 2))
		r->may = OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0);
	tables_free(&t);
}

/* The plain kernel between plain copies of the blocked sides (of C channels, L lanes) */
static om_kind resize_via_plain(om_ctx *c, int64_t C, int64_t L)
{
	const om_tensor *in[4];
	om_tensor lx, ly, *out[1] = {&ly};
	float *xb = NULL, *yb = NULL;
	om_kind rc = om_layout_plain_side(c, OM_LAYOUT_IN(0), c->in[0], C, true, &lx, &xb);
	if (!rc)
		rc = om_layout_plain_side(c, OM_LAYOUT_OUT(0), c->out[0], C, false, &ly, &yb);
	if (!rc) {
		om_ctx lc = with_x(c, &lx, in);
		lc.out = out;
		lc.blocked = 0;
		rc = resize_kernel(&lc);
		if (!rc && yb)
			om_layout_block_f32(yb, ly.dims[0], C, ly.dims[2] * ly.dims[3], L,
					    c->out[0]->data);
	}
	om_ctx_scratch_done(c, yb);
	om_ctx_scratch_done(c, xb);
	return rc;
}

/* X (N, Cb, H, W, L) or plain, Y (N, Cb, OH, OW, L) or plain, the planner's choice
 * (resize_layout); C = Cb L (whole blocks). A plain Y comes from a plain copy of X, and so does
 * a run whose shapes the plan did not foresee (a symbolic H that is 1 in this run, an identity
 * axis: resize_layout judged the plan's) */
static om_kind resize_blocked(om_ctx *c)
{
	const bool bin = c->blocked & OM_LAYOUT_IN(0), bout = c->blocked & OM_LAYOUT_OUT(0);
	const om_tensor *X = c->in[0], *Y = c->out[0];
	const om_tensor *B = bin ? X : Y; /* a blocked side: its blocks and lanes */
	const int64_t L = B->dims[4], C = B->dims[1] * L, HW = X->dims[2] * X->dims[3];
	const om_tensor *in[4];
	om_tensor lx;
	float *buf = NULL;
	om_kind rc;
	if (!bout)
		return resize_via_plain(c, C, L);
	const float *x = X->data;
	if (!bin) { /* X blocked like Y */
		const size_t bytes = sizeof(float) * (size_t)(X->dims[0] * B->dims[1] * HW * L);
		if ((rc = om_ctx_scratch(c, bytes, "a blocked copy", (void **)&buf)))
			return rc;
		om_layout_block_f32(X->data, X->dims[0], C, HW, L, buf);
		x = buf;
	}
	lx = bin ? om_layout_logical(X, C) : *X;
	om_ctx lc = with_x(c, &lx, in);
	rs_params p;
	tables t;
	if (!(rc = om_resize_params(&lc, true, &p)) && !(rc = tables_build(&lc, &p, &t))) {
		const bool fit = bands_fit(&p, &t, 2);
		if (fit)
			rc = resize_bands(c, &p, &t, 2, X->dims[0] * B->dims[1], L, x, Y->data);
		tables_free(&t);
		if (!fit) {
			om_ctx_scratch_done(c, buf);
			return resize_via_plain(c, C, L);
		}
	}
	om_ctx_scratch_done(c, buf);
	return rc;
}

static om_kind resize_kernel(om_ctx *c)
{
	if (c->blocked)
		return resize_blocked(c);
	rs_params p;
	om_kind rc = om_resize_params(c, true, &p);
	if (rc)
		return rc;
	const om_tensor *X = c->in[0];
	if (p.mode != RS_NEAREST) {
		if (X->dtype == OM_FLOAT)
			return interpolate_f32(c);
		if (om_f32_bridged(X->dtype, true))
			return om_run_as_f32(c, interpolate_f32, true);
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "%s interpolation of %s",
				p.mode == RS_LINEAR ? "linear" : "cubic", om_dtype_name(X->dtype));
	}
	size_t es = om_dtype_size(X->dtype);
	if (!es)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "Resize of %s",
				om_dtype_name(X->dtype));
	unsigned char extra[16] = {0};
	double e = p.extrapolation;
	if (X->dtype != OM_STRING)
		om_store_f64(X->dtype, extra, 1, &e, 1);
	tables t;
	if ((rc = tables_build(c, &p, &t)))
		return rc;
	nearest(&p, &t, X, c->out[0], extra);
	tables_free(&t);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_Upsample_7[] = {{"mode", OM_ATTR_STRING, 0},
	{"scales", OM_ATTR_FLOATS, 1}, {NULL, 0, 0}};
/* Upsample-7: X -> Y */
static const om_sig sig_Upsample_7 = {7, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Upsample_7,
	NULL};
static const om_sig_attr attrs_Upsample_9_v10[] = {{"mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* Upsample-10: X scales -> Y */
static const om_sig sig_Upsample_9_v10 = {10, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_Upsample_9_v10, NULL};
static const om_sig_attr attrs_Upsample_9[] = {{"mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* Upsample-9: X scales -> Y */
static const om_sig sig_Upsample_9 = {9, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Upsample_9,
	&sig_Upsample_9_v10};
static const om_sig_attr attrs_Resize_10[] = {{"mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* Resize-10: X scales -> Y */
static const om_sig sig_Resize_10 = {10, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Resize_10,
	NULL};
static const om_sig_attr attrs_Resize_11_v13[] = {
	{"coordinate_transformation_mode", OM_ATTR_STRING, 0},
	{"cubic_coeff_a", OM_ATTR_FLOAT, 0}, {"exclude_outside", OM_ATTR_INT, 0},
	{"extrapolation_value", OM_ATTR_FLOAT, 0}, {"mode", OM_ATTR_STRING, 0},
	{"nearest_mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* Resize-13: X [roi] [scales] [sizes] -> Y */
static const om_sig sig_Resize_11_v13 = {13, 1, 4, 1, 1, 0xe, 0x0, 0x3, 0x1, 0x1, 0x1,
	attrs_Resize_11_v13, NULL};
static const om_sig_attr attrs_Resize_11[] = {{"coordinate_transformation_mode", OM_ATTR_STRING, 0},
	{"cubic_coeff_a", OM_ATTR_FLOAT, 0}, {"exclude_outside", OM_ATTR_INT, 0},
	{"extrapolation_value", OM_ATTR_FLOAT, 0}, {"mode", OM_ATTR_STRING, 0},
	{"nearest_mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* Resize-11: X roi scales [sizes] -> Y */
static const om_sig sig_Resize_11 = {11, 3, 4, 1, 1, 0x8, 0x0, 0x3, 0x1, 0x0, 0x0, attrs_Resize_11,
	&sig_Resize_11_v13};
static const om_sig_attr attrs_Resize_18[] = {{"antialias", OM_ATTR_INT, 0},
	{"axes", OM_ATTR_INTS, 0}, {"coordinate_transformation_mode", OM_ATTR_STRING, 0},
	{"cubic_coeff_a", OM_ATTR_FLOAT, 0}, {"exclude_outside", OM_ATTR_INT, 0},
	{"extrapolation_value", OM_ATTR_FLOAT, 0}, {"keep_aspect_ratio_policy", OM_ATTR_STRING, 0},
	{"mode", OM_ATTR_STRING, 0}, {"nearest_mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* Resize-18: X [roi] [scales] [sizes] -> Y */
static const om_sig sig_Resize_18 = {18, 1, 4, 1, 1, 0xe, 0x0, 0x3, 0x1, 0x1, 0x1, attrs_Resize_18,
	NULL};
static const om_sig_attr attrs_Resize_19[] = {{"antialias", OM_ATTR_INT, 0},
	{"axes", OM_ATTR_INTS, 0}, {"coordinate_transformation_mode", OM_ATTR_STRING, 0},
	{"cubic_coeff_a", OM_ATTR_FLOAT, 0}, {"exclude_outside", OM_ATTR_INT, 0},
	{"extrapolation_value", OM_ATTR_FLOAT, 0}, {"keep_aspect_ratio_policy", OM_ATTR_STRING, 0},
	{"mode", OM_ATTR_STRING, 0}, {"nearest_mode", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* Resize-19: X [roi] [scales] [sizes] -> Y */
static const om_sig sig_Resize_19 = {19, 1, 4, 1, 1, 0xe, 0x0, 0x3, 0x1, 0x1, 0x1, attrs_Resize_19,
	NULL};

/* ---- end of signatures ---- */

/* One row per change of meaning (param: resize_plan.h's RS_ROW_* bits) */
static const om_op rows[] = {
	{"Upsample", "", 7, resize_infer, resize_kernel, OM_OP_EXACT, &sig_Upsample_7, OM_OPC_NONE,
	 resize_layout, RS_ROW_LEGACY | RS_ROW_SCALES_ATTR, NULL},
	{"Upsample", "", 9, resize_infer, resize_kernel, OM_OP_EXACT, &sig_Upsample_9, OM_OPC_NONE,
	 resize_layout, RS_ROW_LEGACY, NULL},
	{"Resize", "", 10, resize_infer, resize_kernel, OM_OP_EXACT, &sig_Resize_10, OM_OPC_RESIZE,
	 resize_layout, RS_ROW_LEGACY, NULL},
	{"Resize", "", 11, resize_infer, resize_kernel, OM_OP_EXACT, &sig_Resize_11, OM_OPC_RESIZE,
	 resize_layout, 0, NULL},
	{"Resize", "", 18, resize_infer, resize_kernel, OM_OP_EXACT, &sig_Resize_18, OM_OPC_RESIZE,
	 resize_layout, RS_ROW_18, NULL},
	{"Resize", "", 19, resize_infer, resize_kernel, OM_OP_EXACT, &sig_Resize_19, OM_OPC_RESIZE,
	 resize_layout, RS_ROW_18 | RS_ROW_SYMMETRIC, NULL},
};

const om_op_table om_ops_resize = OM_TABLE(rows);
