/* ops_deform_conv.c — DeformConv (opset 19; 22 adds bfloat16): a grouped N-D convolution whose
 * taps sample the input at their position plus a learned offset (offset groups of channels
 * share one offset field), by multilinear interpolation with zeros outside the input, each
 * tap times an optional mask. Per image and group the sampled taps are a column matrix
 * (C/group * taps) x outputs that one om_dgemm multiplies by the group's weights; computes
 * in double, stores in X's type. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "numrun.h"
#include "op.h"

typedef struct dc_plan {
	int32_t n;                      /* spatial dims */
	int64_t N, C, M, G, OG;         /* images, in/out channels, groups, offset groups */
	int64_t in[OM_MAX_RANK], k[OM_MAX_RANK], out[OM_MAX_RANK];
	int64_t str[OM_MAX_RANK], dil[OM_MAX_RANK], pad[OM_MAX_RANK]; /* pad: the begin pads */
	int64_t K, O, I;                /* taps, output and input positions */
	const om_tensor *x, *w, *off, *bias, *mask;
} dc_plan;

static om_kind dc_bad(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", what);
}

/* kernel_shape, strides, dilations and pads: lists of the right length and range */
static om_kind dc_attrs(om_ctx *c, dc_plan *p)
{
	int64_t nk, ns, nd, np;
	const int64_t *ks = om_attr_ints(c->node, "kernel_shape", &nk);
	const int64_t *st = om_attr_ints(c->node, "strides", &ns);
	const int64_t *dl = om_attr_ints(c->node, "dilations", &nd);
	const int64_t *pd = om_attr_ints(c->node, "pads", &np);
	if ((ks && nk != p->n) || (st && ns != p->n) || (dl && nd != p->n) ||
	    (pd && np != 2 * p->n))
		return dc_bad(c, "kernel_shape, strides, dilations or pads do not fit X's rank");
	for (int32_t i = 0; i < p->n; i++) {
		p->k[i] = p->w->dims[2 + i];
		if (ks && ks[i] != p->k[i])
			return dc_bad(c, "kernel_shape differs from W's shape");
		p->str[i] = st ? st[i] : 1, p->dil[i] = dl ? dl[i] : 1;
		p->pad[i] = pd ? pd[i] : 0;
		const int64_t pe = pd ? pd[p->n + i] : 0;
		if (p->str[i] < 1 || p->dil[i] < 1 || p->pad[i] < 0 || pe < 0 ||
		    p->str[i] > INT32_MAX || p->dil[i] > INT32_MAX || p->pad[i] > INT32_MAX ||
		    pe > INT32_MAX || p->k[i] > INT32_MAX)
			return dc_bad(c, "strides and dilations must be >= 1, pads >= 0");
		const int64_t span = (p->k[i] - 1) * p->dil[i] + 1;
		const int64_t room = p->in[i] + p->pad[i] + pe - span;
		if (p->k[i] < 1 || room < 0)
			return dc_bad(c, "the kernel is larger than the padded input");
		p->out[i] = room / p->str[i] + 1;
	}
	return OM_OK;
}

static om_kind dc_plan_make(om_ctx *c, dc_plan *p)
{
	memset(p, 0, sizeof *p);
	p->x = om_ctx_in(c, 0), p->w = om_ctx_in(c, 1), p->off = om_ctx_in(c, 2);
	p->bias = om_ctx_in(c, 3), p->mask = om_ctx_in(c, 4);
	const om_tensor *x = p->x, *w = p->w, *off = p->off, *m = p->mask;
	if (!x || !w || !off)
		return dc_bad(c, "needs X, W and offset");
	const int32_t dt = x->dtype;
	if (!om_is_float_type(dt) || w->dtype != dt || off->dtype != dt ||
	    (p->bias && p->bias->dtype != dt) || (m && m->dtype != dt))
		return dc_bad(c, "X, W, offset, B and mask must be one float type");
	if (x->rank < 3 || w->rank != x->rank || off->rank != x->rank || (m && m->rank != x->rank))
		return dc_bad(c, "X, W, offset and mask must have one rank, at least 3");
	p->n = x->rank - 2;
	p->N = x->dims[0], p->C = x->dims[1], p->M = w->dims[0];
	p->G = om_attr_int(c->node, "group", 1);
	p->OG = om_attr_int(c->node, "offset_group", 1);
	if (p->G < 1 || p->OG < 1 || p->C % p->G || p->M % p->G || p->C % p->OG ||
	    w->dims[1] * p->G != p->C)
		return dc_bad(c, "group and offset_group must divide the channels; W is "
				 "(oC, C/group, k...)");
	for (int32_t i = 0; i < p->n; i++)
		p->in[i] = x->dims[2 + i];
	om_kind rc = dc_attrs(c, p);
	if (rc)
		return rc;
	p->K = om_shape_numel(p->n, p->k), p->O = om_shape_numel(p->n, p->out);
	p->I = om_shape_numel(p->n, p->in);
	const int64_t od[OM_MAX_RANK] = {p->N, p->M};
	int64_t yd[OM_MAX_RANK];
	memcpy(yd, od, sizeof yd);
	memcpy(yd + 2, p->out, sizeof(int64_t) * (size_t)p->n);
	if (p->K < 0 || p->O < 0 || om_shape_numel(x->rank, yd) < 0 ||
	    p->OG > INT64_MAX / p->K / p->n)
		return dc_bad(c, "the output is too large");
	if (off->dims[0] != p->N || off->dims[1] != p->OG * p->K * p->n ||
	    memcmp(off->dims + 2, p->out, sizeof(int64_t) * (size_t)p->n))
		return dc_bad(c, "offset must be (N, offset_group * taps * dims, output...)");
	if (m && (m->dims[0] != p->N || m->dims[1] != p->OG * p->K ||
		  memcmp(m->dims + 2, p->out, sizeof(int64_t) * (size_t)p->n)))
		return dc_bad(c, "mask must be (N, offset_group * taps, output...)");
	if (p->bias && (p->bias->rank != 1 || p->bias->dims[0] != p->M))
		return dc_bad(c, "B must be (oC)");
	return OM_OK;
}

static om_kind dc_infer(om_ctx *c)
{
	dc_plan p;
	om_kind rc = dc_plan_make(c, &p);
	if (rc)
		return rc;
	int64_t yd[OM_MAX_RANK] = {p.N, p.M};
	memcpy(yd + 2, p.out, sizeof(int64_t) * (size_t)p.n);
	om_set_shape(c->out[0], p.x->dtype, p.x->rank, yd);
	return OM_OK;
}

/* plane (the channel's input, double) at real position pos by multilinear interpolation;
 * corners outside the input count 0 (as GridSample's zeros padding, align_corners 1) */
static double dc_sample(const dc_plan *p, const double *plane, const double *pos)
{
	int64_t f[OM_MAX_RANK];
	double fr[OM_MAX_RANK];
	for (int32_t i = 0; i < p->n; i++) {
		if (!(pos[i] > -1 && pos[i] < (double)p->in[i])) /* NaN too: no corner inside */
			return 0;
		const double fl = floor(pos[i]);
		f[i] = (int64_t)fl, fr[i] = pos[i] - fl;
	}
	double s = 0;
	for (int64_t cb = 0; cb < ((int64_t)1 << p->n); cb++) {
		double wgt = 1;
		int64_t at = 0;
		bool in = true;
		for (int32_t i = 0; i < p->n && in; i++) {
			const int bit = (int)(cb >> i & 1);
			const int64_t j = f[i] + bit;
			in = j >= 0 && j < p->in[i];
			wgt *= bit ? fr[i] : 1 - fr[i];
			at = at * p->in[i] + j;
		}
		if (in && wgt != 0)
			s += wgt * plane[at];
	}
	return s;
}

/* the columns of image b's channels [c0, c0 + nc): row (ci * K + tap), column output pos */
static void dc_columns(const dc_plan *p, int64_t b, int64_t c0, int64_t nc, const double *offs,
		       const double *mask, double *plane, double *col)
{
	const int32_t dt = p->x->dtype;
	const size_t es = om_dtype_size(dt);
	const int64_t cpo = p->C / p->OG;
	for (int64_t ci = 0; ci < nc; ci++) {
		const int64_t ch = c0 + ci, og = ch / cpo;
		om_load_f64(dt, (const char *)p->x->data + (size_t)((b * p->C + ch) * p->I) * es, 1,
			    p->I, plane);
		for (int64_t t = 0; t < p->K; t++) {
			int64_t tk[OM_MAX_RANK];
			int64_t rest = t;
			for (int32_t i = p->n - 1; i >= 0; i--)
				tk[i] = rest % p->k[i], rest /= p->k[i];
			const double *od = offs + (og * p->K + t) * p->n * p->O;
			const double *md = mask ? mask + (og * p->K + t) * p->O : NULL;
			double *row = col + (ci * p->K + t) * p->O;
			for (int64_t o = 0; o < p->O; o++) {
				double pos[OM_MAX_RANK];
				int64_t r = o;
				for (int32_t i = p->n - 1; i >= 0; i--) {
					const int64_t oi = r % p->out[i];
					r /= p->out[i];
					pos[i] = (double)(oi * p->str[i] - p->pad[i] + tk[i] * p->dil[i]) +
						 od[i * p->O + o];
				}
				const double v = dc_sample(p, plane, pos);
				row[o] = md ? v * md[o] : v;
			}
		}
	}
}

static om_kind dc_kernel(om_ctx *c)
{
	dc_plan p;
	om_kind rc = dc_plan_make(c, &p);
	if (rc)
		return rc;
	const int32_t dt = p.x->dtype;
	const size_t es = om_dtype_size(dt);
	const int64_t cg = p.C / p.G, mg = p.M / p.G, rows = cg * p.K;
	const int64_t no = p.OG * p.K * p.n * p.O, nm = p.mask ? p.OG * p.K * p.O : 0;
	const int64_t nw = p.M * rows;
	/* weights, offsets, mask, one input plane, the columns, one group's outputs */
	const double tot = (double)nw + (double)no + (double)nm + (double)p.I +
			   (double)rows * (double)p.O + (double)mg * (double)p.O + 1;
	if (tot * sizeof(double) > (double)SIZE_MAX / 2)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "the columns are too large");
	const size_t bytes = (size_t)tot * sizeof(double);
	double *wd;
	if (om_ctx_scratch(c, bytes, "the sampled columns", (void **)&wd))
		return c->st->kind;
	double *offs = wd + nw, *mask = offs + no, *plane = mask + nm, *col = plane + p.I;
	double *y = col + rows * p.O;
	om_load_f64(dt, p.w->data, 1, nw, wd);
	for (int64_t b = 0; b < p.N; b++) {
		om_load_f64(dt, (const char *)p.off->data + (size_t)(b * no) * es, 1, no, offs);
		if (p.mask)
			om_load_f64(dt, (const char *)p.mask->data + (size_t)(b * nm) * es, 1, nm,
				    mask);
		for (int64_t g = 0; g < p.G; g++) {
			dc_columns(&p, b, g * cg, cg, offs, p.mask ? mask : NULL, plane, col);
			for (int64_t i = 0; i < mg * p.O; i++)
				y[i] = 0;
			if (mg && p.O && rows)
				om_dgemm(c->exact, false, false, mg, p.O, rows, 1.0,
					 wd + g * mg * rows, rows, col, p.O, 0.0, y, p.O);
			for (int64_t m = 0; m < mg; m++) {
				double bias = 0;
				if (p.bias)
					om_load_f64(dt, (const char *)p.bias->data +
							    (size_t)(g * mg + m) * es, 1, 1, &bias);
				for (int64_t o = 0; o < p.O; o++)
					y[m * p.O + o] += bias;
			}
			om_store_f64(dt, (char *)c->out[0]->data +
					     (size_t)((b * p.M + g * mg) * p.O) * es, 1, y, mg * p.O);
		}
	}
	om_ctx_scratch_done(c, wd);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_DeformConv_19[] = {{"dilations", OM_ATTR_INTS, 0},
	{"group", OM_ATTR_INT, 0}, {"kernel_shape", OM_ATTR_INTS, 0},
	{"offset_group", OM_ATTR_INT, 0}, {"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* DeformConv-22: X W offset [B] [mask] -> Y */
static const om_sig sig_DeformConv_22 = {22, 3, 5, 1, 1, 0x18, 0x0, 0x1f, 0x1, 0x1f, 0x1,
	attrs_DeformConv_19, NULL};
/* DeformConv-19: X W offset [B] [mask] -> Y */
static const om_sig sig_DeformConv_19 = {19, 3, 5, 1, 1, 0x18, 0x0, 0x1f, 0x1, 0x0, 0x0,
	attrs_DeformConv_19, &sig_DeformConv_22};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"DeformConv", "", 19, dc_infer, dc_kernel, OM_OP_EXACT, &sig_DeformConv_19, OM_OPC_NONE,
	 NULL, 0, NULL},
};

const om_op_table om_ops_deform_conv = OM_TABLE(rows);
