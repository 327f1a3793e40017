/* ops_signal.c — DFT (opset 17 with an axis attribute, 20 with an axis input), STFT (17) and
 * the HannWindow, HammingWindow and BlackmanWindow generators (17). Direct DFT sums in double
 * (O(n^2) per signal), complex values as a trailing [re, im] axis. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numrun.h"
#include "op.h"
#include "shape_util.h"

static const double om_two_pi = 6.283185307179586476925;

/* ---- window functions -------------------------------------------------------------------- */

enum win_kind { WIN_HANN, WIN_HAMMING, WIN_BLACKMAN }; /* the row's param */

static om_kind win_size(om_ctx *c, int64_t *n)
{
	if (c->nin < 1 || !c->in[0])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "needs a size");
	if (!om_has_value(c->in[0]))
		return OM_NEED_VALUE;
	om_kind rc = om_read_scalar_int(c, c->in[0], n);
	if (!rc && (*n < 0 || *n > ((int64_t)1 << 40)))
		rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "window size %lld",
			      (long long)*n);
	return rc;
}

static om_kind win_infer(om_ctx *c)
{
	int64_t n;
	om_kind rc = win_size(c, &n);
	if (rc)
		return rc;
	const int32_t dt = (int32_t)om_attr_int(c->node, "output_datatype", OM_FLOAT);
	if (!om_is_float_type(dt) && !om_is_int_type(dt))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "output_datatype %d", dt);
	om_set_shape(c->out[0], dt, 1, &n);
	return OM_OK;
}

static om_kind win_kernel(om_ctx *c)
{
	int64_t n;
	om_kind rc = win_infer(c);
	if (rc || (rc = win_size(c, &n)))
		return rc;
	const double d = om_attr_int(c->node, "periodic", 1) ? (double)n : (double)n - 1;
	const int32_t kind = c->op->param;
	double *v = malloc(sizeof(double) * (size_t)(n + 1));
	if (!v)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	for (int64_t i = 0; i < n; i++) {
		const double t = d == 0 ? 0 : (double)i / d, s = sin(t * om_two_pi / 2);
		if (kind == WIN_HANN)
			v[i] = s * s;
		else if (kind == WIN_HAMMING)
			v[i] = 25.0 / 46 - (1 - 25.0 / 46) * cos(t * om_two_pi);
		else
			v[i] = 0.42 - 0.5 * cos(t * om_two_pi) + 0.08 * cos(2 * t * om_two_pi);
	}
	om_store_f64(c->out[0]->dtype, c->out[0]->data, 1, v, n);
	free(v);
	return OM_OK;
}

/* ---- DFT ----------------------------------------------------------------------------------- */

/* one transform of n complex inputs (stride in complex elements) into m outputs */
static void dft_1d(const double *x, int64_t n, int64_t stride, double *y, int64_t m, int64_t len,
		   bool inverse)
{
	const double sign = inverse ? 1 : -1;
	for (int64_t k = 0; k < m; k++) {
		double re = 0, im = 0;
		for (int64_t t = 0; t < n; t++) {
			const double a = sign * om_two_pi * (double)((k * t) % len) / (double)len;
			const double xr = x[t * stride * 2], xi = x[t * stride * 2 + 1];
			const double cr = cos(a), ci = sin(a);
			re += xr * cr - xi * ci;
			im += xr * ci + xi * cr;
		}
		y[k * 2] = inverse ? re / (double)len : re;
		y[k * 2 + 1] = inverse ? im / (double)len : im;
	}
}

enum dft_form { DFT_AXIS_ATTR, DFT_AXIS_INPUT /* DFT-20: input 2, default -2 */ }; /* param */

typedef struct dft_plan {
	int32_t axis;
	int64_t len, outer, inner, n_in, n_out; /* n_in: input extent along axis */
	bool inverse, onesided, irfft; /* irfft: a onesided spectrum back to a real signal */
} dft_plan;

static om_kind dft_plan_make(om_ctx *c, dft_plan *p, int64_t *ydims)
{
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL;
	if (!x || !om_is_float_type(x->dtype) || x->rank < 2 ||
	    (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"input must be float [..., 1 or 2]");
	const bool axis_input = c->op->param == DFT_AXIS_INPUT;
	int64_t axis = axis_input ? -2 : om_attr_int(c->node, "axis", 1);
	om_kind rc;
	const bool axis_in = axis_input && c->nin > 2 && c->in[2];
	if (axis_in && (rc = om_read_scalar_int(c, c->in[2], &axis)))
		return rc;
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis > x->rank - 2)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "axis %lld", (long long)axis);
	p->axis = (int32_t)axis;
	p->n_in = x->dims[axis];
	p->inverse = om_attr_int(c->node, "inverse", 0) != 0;
	p->onesided = om_attr_int(c->node, "onesided", 0) != 0;
	p->irfft = p->inverse && p->onesided;
	p->len = p->irfft ? 2 * (p->n_in - 1) : p->n_in;
	if (c->nin > 1 && c->in[1] && (rc = om_read_scalar_int(c, c->in[1], &p->len)))
		return rc;
	if (p->len <= 0)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "dft_length %lld",
				(long long)p->len);
	p->n_out = p->onesided && !p->irfft ? p->len / 2 + 1 : p->len;
	p->outer = p->inner = 1;
	for (int32_t d = 0; d < x->rank - 1; d++) {
		ydims[d] = d == axis ? p->n_out : x->dims[d];
		if (d < axis)
			p->outer *= x->dims[d];
		else if (d > axis)
			p->inner *= x->dims[d];
	}
	ydims[x->rank - 1] = p->irfft ? 1 : 2;
	return OM_OK;
}

static om_kind dft_infer(om_ctx *c)
{
	dft_plan p;
	int64_t y[OM_MAX_RANK];
	om_kind rc = dft_plan_make(c, &p, y);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, y);
	return rc;
}

/* the input as complex doubles [outer, n_in, inner, 2] */
static double *dft_load(om_ctx *c, const om_tensor *x, int64_t ncplx)
{
	const int64_t parts = x->dims[x->rank - 1];
	double *v = malloc(sizeof(double) * (size_t)(ncplx * 3 + 1));
	if (!v) {
		om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		return NULL;
	}
	double *raw = v + ncplx * 2;
	om_load_f64(x->dtype, x->data, 1, ncplx * parts, parts == 2 ? v : raw);
	if (parts == 1)
		for (int64_t i = 0; i < ncplx; i++)
			v[2 * i] = raw[i], v[2 * i + 1] = 0;
	return v;
}

/* a full spectrum of len from the first n entries of a onesided one (stride in complex) */
static void dft_hermitian(const double *x, int64_t n, int64_t stride, double *full, int64_t len)
{
	for (int64_t k = 0; k < len; k++) {
		const int64_t j = k < n ? k : len - k;
		const bool mirror = k >= n;
		const bool have = j >= 0 && j < n;
		full[2 * k] = have ? x[j * stride * 2] : 0;
		full[2 * k + 1] = have ? (mirror ? -1 : 1) * x[j * stride * 2 + 1] : 0;
	}
}

static om_kind dft_kernel(om_ctx *c)
{
	dft_plan p;
	int64_t ydims[OM_MAX_RANK];
	om_kind rc = dft_plan_make(c, &p, ydims);
	if (rc)
		return rc;
	const int64_t nin = p.outer * p.n_in * p.inner, ny = p.outer * p.n_out * p.inner;
	double *x = dft_load(c, c->in[0], nin);
	double *y = malloc(sizeof(double) * (size_t)(2 * ny + 4 * p.n_out + 1));
	if (!x || !y) {
		free(x), free(y);
		return c->st->kind ? c->st->kind : om_error(c->st, OM_ERR_NOMEM, c->node, "memory");
	}
	double *row = y + 2 * ny, *full = p.irfft ? row + 2 * p.n_out : NULL;
	const int64_t n = p.n_in < p.len ? p.n_in : p.len; /* zero padding or truncation */
	for (int64_t o = 0; o < p.outer; o++)
		for (int64_t i = 0; i < p.inner; i++) {
			const double *src = x + (o * p.n_in * p.inner + i) * 2;
			if (full) /* the spectrum's other half: X[len - k] = conj(X[k]) */
				dft_hermitian(src, p.n_in, p.inner, full, p.len);
			if (full)
				dft_1d(full, p.len, 1, row, p.n_out, p.len, true);
			else
				dft_1d(src, n, p.inner, row, p.n_out, p.len, p.inverse);
			for (int64_t k = 0; k < p.n_out; k++) {
				if (full) {
					y[(o * p.n_out + k) * p.inner + i] = row[2 * k];
					continue;
				}
				double *d = y + ((o * p.n_out + k) * p.inner + i) * 2;
				d[0] = row[2 * k], d[1] = row[2 * k + 1];
			}
		}
	om_store_f64(c->out[0]->dtype, c->out[0]->data, 1, y, full ? ny : 2 * ny);
	free(x), free(y);
	return OM_OK;
}

/* ---- STFT ---------------------------------------------------------------------------------- */

typedef struct stft_plan {
	int64_t B, L, step, flen, frames, bins;
	bool onesided;
} stft_plan;

static om_kind stft_plan_make(om_ctx *c, stft_plan *p)
{
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL, *w = c->nin > 2 ? c->in[2] : NULL;
	if (!x || !om_is_float_type(x->dtype) || x->rank != 3 ||
	    (x->dims[2] != 1 && x->dims[2] != 2) || c->nin < 2 || !c->in[1])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"signal must be float [batch, length, 1 or 2], with a frame_step");
	p->B = x->dims[0], p->L = x->dims[1];
	om_kind rc = om_read_scalar_int(c, c->in[1], &p->step);
	p->flen = w ? (w->rank == 1 ? w->dims[0] : -1) : 0;
	if (!rc && c->nin > 3 && c->in[3])
		rc = om_read_scalar_int(c, c->in[3], &p->flen);
	if (rc)
		return rc;
	if (w && (w->rank != 1 || w->dims[0] != p->flen || !om_is_float_type(w->dtype)))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"window must be float [frame_length]");
	if (p->step <= 0 || p->flen <= 0 || p->flen > p->L)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"frame_step %lld, frame_length %lld, signal %lld",
				(long long)p->step, (long long)p->flen, (long long)p->L);
	p->frames = (p->L - p->flen) / p->step + 1;
	p->onesided = om_attr_int(c->node, "onesided", 1) != 0;
	p->bins = p->onesided ? p->flen / 2 + 1 : p->flen;
	return OM_OK;
}

static om_kind stft_infer(om_ctx *c)
{
	stft_plan p;
	om_kind rc = stft_plan_make(c, &p);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, 4,
			     (int64_t[]){p.B, p.frames, p.bins, 2});
	return rc;
}

static om_kind stft_kernel(om_ctx *c)
{
	stft_plan p;
	om_kind rc = stft_plan_make(c, &p);
	if (rc)
		return rc;
	const om_tensor *w = c->nin > 2 ? c->in[2] : NULL;
	const int64_t ny = p.B * p.frames * p.bins * 2;
	double *x = dft_load(c, c->in[0], p.B * p.L);
	double *y = malloc(sizeof(double) * (size_t)(ny + 3 * p.flen + 1));
	if (!x || !y) {
		free(x), free(y);
		return c->st->kind ? c->st->kind : om_error(c->st, OM_ERR_NOMEM, c->node, "memory");
	}
	double *win = y + ny, *frame = win + p.flen;
	for (int64_t k = 0; k < p.flen; k++)
		win[k] = 1;
	if (w)
		om_load_f64(w->dtype, w->data, 1, p.flen, win);
	for (int64_t b = 0; b < p.B; b++)
		for (int64_t f = 0; f < p.frames; f++) {
			const double *s = x + (b * p.L + f * p.step) * 2;
			for (int64_t k = 0; k < p.flen; k++)
				for (int j = 0; j < 2; j++)
					frame[2 * k + j] = s[2 * k + j] * win[k];
			double *dst = y + (b * p.frames + f) * p.bins * 2;
			dft_1d(frame, p.flen, 1, dst, p.bins, p.flen, false);
		}
	om_store_f64(c->out[0]->dtype, c->out[0]->data, 1, y, ny);
	free(x), free(y);
	return OM_OK;
}

/* ---- MelWeightMatrix (17): triangular filters over [dft_length / 2 + 1] bins --------------- */

static om_kind mel_args(om_ctx *c, int64_t *nmel, int64_t *dft, int64_t *rate, double *lo,
			double *hi)
{
	for (int i = 0; i < 5; i++)
		if (c->nin <= i || !c->in[i])
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "needs 5 inputs");
	om_kind rc = om_read_scalar_int(c, c->in[0], nmel);
	if (!rc)
		rc = om_read_scalar_int(c, c->in[1], dft);
	if (!rc)
		rc = om_read_scalar_int(c, c->in[2], rate);
	if (rc)
		return rc;
	if (!om_has_value(c->in[3]) || !om_has_value(c->in[4]))
		return OM_NEED_VALUE;
	if (!om_load_f64(c->in[3]->dtype, c->in[3]->data, 1, 1, lo) ||
	    !om_load_f64(c->in[4]->dtype, c->in[4]->data, 1, 1, hi))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "edges must be numbers");
	if (*nmel < 1 || *dft < 1 || *rate < 1 || *nmel > 1 << 20 || *dft > 1 << 24)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "bins, length or rate");
	return OM_OK;
}

static om_kind mel_infer(om_ctx *c)
{
	int64_t nmel, dft, rate;
	double lo, hi;
	om_kind rc = mel_args(c, &nmel, &dft, &rate, &lo, &hi);
	if (rc)
		return rc;
	const int32_t dt = (int32_t)om_attr_int(c->node, "output_datatype", OM_FLOAT);
	if (!om_is_float_type(dt) && !om_is_int_type(dt))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "output_datatype %d", dt);
	om_set_shape(c->out[0], dt, 2, (int64_t[]){dft / 2 + 1, nmel});
	return OM_OK;
}

static om_kind mel_kernel(om_ctx *c)
{
	int64_t nmel, dft, rate;
	double lo = 0, hi = 0;
	om_kind rc = mel_infer(c);
	if (rc || (rc = mel_args(c, &nmel, &dft, &rate, &lo, &hi)))
		return rc;
	const int64_t nb = dft / 2 + 1;
	double *w = calloc((size_t)(nb * nmel + nmel + 2), sizeof(double));
	int64_t *fb = malloc(sizeof(int64_t) * (size_t)(nmel + 2));
	if (!w || !fb) {
		free(w), free(fb);
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	}
	const double lm = 2595 * log10(1 + lo / 700), hm = 2595 * log10(1 + hi / 700);
	const double step = (hm - lm) / (double)(nmel + 2);
	for (int64_t i = 0; i < nmel + 2; i++) {
		const double hz = 700 * (pow(10, ((double)i * step + lm) / 2595) - 1);
		fb[i] = (int64_t)om_clamp_f64(floor((double)(dft + 1) * hz / (double)rate), -1, nb);
	}
	for (int64_t i = 0; i < nmel; i++) {
		const int64_t l = fb[i], m = fb[i + 1], h = fb[i + 2];
		if (m == l && m >= 0 && m < nb)
			w[m * nmel + i] = 1;
		for (int64_t j = l; m != l && j <= m; j++)
			if (j >= 0 && j < nb)
				w[j * nmel + i] = (double)(j - l) / (double)(m - l);
		for (int64_t j = m; h > m && j < h; j++)
			if (j >= 0 && j < nb)
				w[j * nmel + i] = (double)(h - j) / (double)(h - m);
	}
	om_store_f64(c->out[0]->dtype, c->out[0]->data, 1, w, nb * nmel);
	free(w), free(fb);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_HannWindow_17[] = {{"output_datatype", OM_ATTR_INT, 0},
	{"periodic", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* HannWindow-17: size -> output */
static const om_sig sig_HannWindow_17 = {17, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x1,
	attrs_HannWindow_17, NULL};
static const om_sig_attr attrs_HammingWindow_17[] = {{"output_datatype", OM_ATTR_INT, 0},
	{"periodic", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* HammingWindow-17: size -> output */
static const om_sig sig_HammingWindow_17 = {17, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x1,
	attrs_HammingWindow_17, NULL};
static const om_sig_attr attrs_BlackmanWindow_17[] = {{"output_datatype", OM_ATTR_INT, 0},
	{"periodic", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* BlackmanWindow-17: size -> output */
static const om_sig sig_BlackmanWindow_17 = {17, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x1,
	attrs_BlackmanWindow_17, NULL};
static const om_sig_attr attrs_DFT_17[] = {{"axis", OM_ATTR_INT, 0}, {"inverse", OM_ATTR_INT, 0},
	{"onesided", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* DFT-17: input [dft_length] -> output */
static const om_sig sig_DFT_17 = {17, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x1, 0x1, 0x1, attrs_DFT_17, NULL};
static const om_sig_attr attrs_DFT_20[] = {{"inverse", OM_ATTR_INT, 0},
	{"onesided", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* DFT-20: input [dft_length] [axis] -> output */
static const om_sig sig_DFT_20 = {20, 1, 3, 1, 1, 0x6, 0x0, 0x1, 0x1, 0x1, 0x1, attrs_DFT_20, NULL};
static const om_sig_attr attrs_STFT_17[] = {{"onesided", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* STFT-17: signal frame_step [window] [frame_length] -> output */
static const om_sig sig_STFT_17 = {17, 2, 4, 1, 1, 0xc, 0x0, 0x5, 0x1, 0x5, 0x1, attrs_STFT_17,
	NULL};
static const om_sig_attr attrs_MelWeightMatrix_17[] = {{"output_datatype", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* MelWeightMatrix-17: num_mel_bins dft_length sample_rate lower_edge_hertz upper_edge_hertz
 * -> output */
static const om_sig sig_MelWeightMatrix_17 = {17, 5, 5, 1, 1, 0x0, 0x0, 0x18, 0x1, 0x18, 0x1,
	attrs_MelWeightMatrix_17, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"HannWindow", "", 17, win_infer, win_kernel, 0, &sig_HannWindow_17, OM_OPC_NONE, NULL,
	 WIN_HANN, NULL},
	{"HammingWindow", "", 17, win_infer, win_kernel, 0, &sig_HammingWindow_17, OM_OPC_NONE,
	 NULL, WIN_HAMMING, NULL},
	{"BlackmanWindow", "", 17, win_infer, win_kernel, 0, &sig_BlackmanWindow_17, OM_OPC_NONE,
	 NULL, WIN_BLACKMAN, NULL},
	{"DFT", "", 17, dft_infer, dft_kernel, 0, &sig_DFT_17, OM_OPC_NONE, NULL, DFT_AXIS_ATTR,
	 NULL},
	{"DFT", "", 20, dft_infer, dft_kernel, 0, &sig_DFT_20, OM_OPC_NONE, NULL, DFT_AXIS_INPUT,
	 NULL},
	{"STFT", "", 17, stft_infer, stft_kernel, 0, &sig_STFT_17, OM_OPC_NONE, NULL, 0, NULL},
	{"MelWeightMatrix", "", 17, mel_infer, mel_kernel, 0, &sig_MelWeightMatrix_17, OM_OPC_NONE,
	 NULL, 0, NULL},
};

const om_op_table om_ops_signal = OM_TABLE(rows);
