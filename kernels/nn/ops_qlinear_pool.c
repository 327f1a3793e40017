/* ops_qlinear_pool.c — com.microsoft QLinearGlobalAveragePool and QLinearAveragePool: int8 or
 * uint8 X (N, C, spatial...) or, with channels_last, (N, spatial..., C), a one-value scale and
 * zero point for X and for Y (of X's type). As ONNX Runtime 1.30:
 *   global (and an AveragePool whose kernel is the whole image without pads): the integer sum
 *   of a plane less x_zp times its size S, times x_scale / (y_scale * S), rounded half to
 *   even, plus y_zp, saturated (MLAS's requantization);
 *   AveragePool otherwise: each x dequantized (x_scale * (x - x_zp), in float), summed in
 *   float over the window's taps inside the image (row-major), divided by the count (the
 *   kernel's size with count_include_pad, else the taps inside the image), then
 *   rint(avg / y_scale + y_zp) saturated. Window geometry from ops/spatial.h (pads, strides,
 *   auto_pad, ceil_mode; no dilations). One plane (image, channel) a task over the pool. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "parallel.h"
#include "qparam.h"
#include "spatial.h"

/* the two rows (om_op.param) */
enum { QPOOL_GLOBAL = 0, QPOOL_AVERAGE = 1 };

/* the planes of X and Y: plane p = (n, c) starts at n * nstep + c * cstep, its spatial
 * elements sstep apart (channels first: C planes of S; channels last: S pixels of C) */
typedef struct qpool_geom {
	int64_t N, C, S, OS;        /* images, channels, image and output image sizes */
	int64_t in[3], out[3], k[3], stride[3], pb[3]; /* three spatial axes (leading 1s) */
	bool last, include_pad, global;
	bool sgn;
	om_qparam xp, yp;
	const uint8_t *x;
	uint8_t *y;
} qpool_geom;

static om_kind qpool_check(om_ctx *c, om_qparam *xp, om_qparam *yp)
{
	const om_tensor *x = c->in[0];
	if (!x || !om_is_q8(x->dtype) || x->rank < 3)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"X int8 or uint8 of rank >= 3");
	om_kind rc = om_qparam_get(c, 1, 2, x->dtype, xp);
	return rc ? rc : om_qparam_get(c, 3, 4, x->dtype, yp);
}

/* g's shape fields and Y's dims from X, the attributes and the row */
static om_kind qpool_geometry(om_ctx *c, qpool_geom *g, int64_t *ydims)
{
	om_kind rc = qpool_check(c, NULL, NULL);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	const int32_t n = x->rank - 2;
	const int64_t last = om_attr_int(c->node, "channels_last", 0);
	memset(g, 0, sizeof *g);
	g->last = last != 0;
	g->N = x->dims[0];
	g->C = g->last ? x->dims[x->rank - 1] : x->dims[1];
	const int64_t *sp_in = x->dims + (g->last ? 1 : 2);
	if (n > 3)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "%d spatial axes", (int)n);
	int64_t out[OM_SP_MAX];
	if (c->op->param == QPOOL_GLOBAL) {
		for (int32_t i = 0; i < n; i++)
			out[i] = 1;
		g->global = true;
	} else {
		const int64_t *kernel;
		if ((rc = om_spatial_kernel_attr(c, n, &kernel)))
			return rc;
		if (!kernel)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"kernel_shape is required");
		om_spatial sp;
		const int64_t ceil_mode = om_attr_int(c->node, "ceil_mode", 0);
		if ((rc = om_spatial_forward(c, n, sp_in, kernel, ceil_mode != 0, &sp)))
			return rc;
		g->global = true;
		for (int32_t i = 0; i < n; i++) {
			const int32_t a = 3 - n + i;
			out[i] = sp.out[i];
			g->k[a] = sp.k[i], g->stride[a] = sp.stride[i], g->pb[a] = sp.pb[i];
			g->global &= sp.k[i] == sp_in[i] && sp.pb[i] == 0 && sp.pe[i] == 0;
		}
		g->include_pad = om_attr_int(c->node, "count_include_pad", 0) != 0;
	}
	g->S = g->OS = 1;
	for (int32_t a = 0; a < 3; a++) {
		const int32_t i = a - (3 - n);
		g->in[a] = i < 0 ? 1 : sp_in[i];
		g->out[a] = i < 0 ? 1 : out[i];
		if (i < 0)
			g->k[a] = g->stride[a] = 1;
		g->S *= g->in[a], g->OS *= g->out[a];
	}
	ydims[0] = g->N;
	ydims[g->last ? x->rank - 1 : 1] = g->C;
	memcpy(ydims + (g->last ? 1 : 2), out, sizeof *out * (size_t)n);
	return OM_OK;
}

static om_kind qpool_infer(om_ctx *c)
{
	qpool_geom g;
	int64_t ydims[OM_MAX_RANK];
	om_kind rc = qpool_geometry(c, &g, ydims);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, ydims);
	return rc;
}

/* plane p's first element and the step between its spatial elements, in X (or Y: size s) */
static int64_t qpool_base(const qpool_geom *g, int64_t p, int64_t s, int64_t *step)
{
	const int64_t n = p / g->C, ch = p % g->C;
	*step = g->last ? g->C : 1;
	return g->last ? n * s * g->C + ch : p * s;
}

/* the global path: one output of a plane */
static void qpool_global_plane(const qpool_geom *g, int64_t p)
{
	int64_t step, ystep;
	const int64_t xb = qpool_base(g, p, g->S, &step), yb = qpool_base(g, p, 1, &ystep);
	int64_t acc = -(int64_t)g->xp.zp * g->S;
	for (int64_t i = 0; i < g->S; i++)
		acc += om_q8_at(g->x, xb + i * step, g->sgn);
	float lo, hi;
	om_q8_range(g->sgn, &lo, &hi);
	const float scale = g->xp.scale / (g->yp.scale * (float)g->S), z = (float)g->yp.zp;
	float v = (float)acc * scale;
	v = v < lo - z ? lo - z : v > hi - z ? hi - z : v;
	g->y[yb] = om_q8_byte(rintf(v) + z, g->sgn);
}

/* the windowed path: every output of a plane */
static void qpool_average_plane(const qpool_geom *g, int64_t p)
{
	int64_t step, ystep;
	const int64_t xb = qpool_base(g, p, g->S, &step), yb = qpool_base(g, p, g->OS, &ystep);
	const float xs = g->xp.scale, ys = g->yp.scale, yz = (float)g->yp.zp;
	const int64_t ksize = g->k[0] * g->k[1] * g->k[2];
	int64_t o = 0, lo[3], hi[3], at[3];
	for (at[0] = 0; at[0] < g->out[0]; at[0]++)
		for (at[1] = 0; at[1] < g->out[1]; at[1]++)
			for (at[2] = 0; at[2] < g->out[2]; at[2]++, o++) {
				int64_t count = 1;
				for (int a = 0; a < 3; a++) {
					const int64_t s = at[a] * g->stride[a] - g->pb[a];
					hi[a] = s + g->k[a] < g->in[a] ? s + g->k[a] : g->in[a];
					lo[a] = s > 0 ? s : 0;
					count *= hi[a] > lo[a] ? hi[a] - lo[a] : 0;
				}
				float sum = 0;
				for (int64_t i = lo[0]; i < hi[0]; i++)
					for (int64_t j = lo[1]; j < hi[1]; j++)
						for (int64_t k = lo[2]; k < hi[2]; k++) {
							const int64_t e =
								(i * g->in[1] + j) * g->in[2] + k;
							const int32_t q = om_q8_at(g->x, xb + e * step,
										   g->sgn);
							sum += xs * (float)(q - g->xp.zp);
						}
				const float avg = sum / (float)(g->include_pad ? ksize : count);
				g->y[yb + o * ystep] = om_q8_byte(rintf(avg / ys + yz), g->sgn);
			}
}

static void qpool_planes(void *arg, int64_t lo, int64_t hi)
{
	const qpool_geom *g = arg;
	for (int64_t p = lo; p < hi; p++)
		if (g->global)
			qpool_global_plane(g, p);
		else
			qpool_average_plane(g, p);
}

static om_kind qpool_kernel(om_ctx *c)
{
	qpool_geom g;
	int64_t ydims[OM_MAX_RANK];
	om_kind rc = qpool_geometry(c, &g, ydims);
	if (rc)
		return rc;
	qpool_check(c, &g.xp, &g.yp);
	g.sgn = c->in[0]->dtype == OM_INT8;
	g.x = c->in[0]->data, g.y = c->out[0]->data;
	const int64_t planes = g.N * g.C;
	if (planes > 0 && g.OS > 0)
		om_par_for(c->threads, planes, 1 + 65536 / (g.S > 0 ? g.S : 1), qpool_planes, &g);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_ms_QLinearGlobalAveragePool_1[] = {
	{"channels_last", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* QLinearGlobalAveragePool-1: X x_scale x_zero_point y_scale y_zero_point -> Y */
static const om_sig sig_ms_QLinearGlobalAveragePool_1 = {1, 5, 5, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0,
	0x0, attrs_ms_QLinearGlobalAveragePool_1, NULL};
static const om_sig_attr attrs_ms_QLinearAveragePool_1[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"channels_last", OM_ATTR_INT, 0},
	{"count_include_pad", OM_ATTR_INT, 0}, {"kernel_shape", OM_ATTR_INTS, 1},
	{"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* QLinearAveragePool-1: X x_scale [x_zero_point] y_scale [y_zero_point] -> Y */
static const om_sig sig_ms_QLinearAveragePool_1 = {1, 4, 5, 1, 1, 0x14, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_ms_QLinearAveragePool_1, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"QLinearGlobalAveragePool", "com.microsoft", 1, qpool_infer, qpool_kernel, OM_OP_EXACT,
	 &sig_ms_QLinearGlobalAveragePool_1, OM_OPC_NONE, NULL, QPOOL_GLOBAL, NULL},
	{"QLinearAveragePool", "com.microsoft", 1, qpool_infer, qpool_kernel, OM_OP_EXACT,
	 &sig_ms_QLinearAveragePool_1, OM_OPC_NONE, NULL, QPOOL_AVERAGE, NULL},
};

const om_op_table om_ops_qlinear_pool = OM_TABLE(rows);
