/* ops_conv.c — the rows Conv, com.microsoft FusedConv (Conv + Z + activation) and ConvTranspose
 * on float32 (float16/bfloat16 through conversion), and ConvInteger and QLinearConv (8-bit,
 * summed exactly in double): their geometry, the input adaptations of a float conv (blocked
 * sides, a scaled input) before the table of implementations (conv_impl.c), ConvTranspose's
 * paths and the integer convs' im2col + GEMM. Each row's variant is its param (conv_variant). */
/* -O2 vectorizes only loops of known trip count; the row loops here vary. Vectorizing across
 * outputs keeps every output's operation order, so exact stays exact. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "f32_bridge.h"
#include "gemm.h"
#include "conv_dnnl.h"
#include "conv_dnnl_int8.h"
#include "conv_dw_int.h"
#include "conv_int.h"
#include "conv_impl.h"
#include "conv_winograd.h"
#include "convt_nhwc.h"
#include "im2col.h"
#include "layout.h"
#include "op.h"
#include "parallel.h"

/* ---- geometry ----------------------------------------------------------------------------- */

typedef struct conv_geo {
	int64_t N, C, M, group;
	om_spatial sp;
} conv_geo;

static bool float_like(int32_t t)
{
	return t == OM_FLOAT || om_f32_bridged(t, false);
}

static bool int8_like(int32_t t)
{
	return t == OM_INT8 || t == OM_UINT8;
}

/* What each row of this family is (om_op.param): the kernels and inferences the rows share
 * branch on it, never on the op's name. 0 is no variant (a row must say). */
enum conv_variant {
	CONV_FLOAT = 1, /* Conv: float X, W, B */
	CONV_FUSED,     /* com.microsoft FusedConv: Conv + Z + its own activation */
	CONV_TRANSPOSE, /* ConvTranspose */
	CONV_INTEGER,   /* ConvInteger: 8-bit x, w and zero points, int32 y */
	CONV_QLINEAR,   /* QLinearConv: 8-bit, scales and zero points, 8-bit y */
};

static enum conv_variant variant(const om_ctx *c)
{
	return (enum conv_variant)c->op->param;
}

/* W's input slot: QLinearConv has the scale and zero point of x before it. */
static int32_t w_slot(const om_ctx *c)
{
	return variant(c) == CONV_QLINEAR ? 3 : 1;
}

/* Checks of X and W shared by all the ops here; *kernel gets W's extents. */
static om_kind conv_common(om_ctx *c, conv_geo *g, const int64_t **kernel)
{
	const om_tensor *X = c->in[0], *W = c->nin > w_slot(c) ? c->in[w_slot(c)] : NULL;
	if (!X || !W)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "needs inputs X and W");
	if (X->rank < 3 || X->rank > OM_MAX_RANK || W->rank != X->rank)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"X (rank %d) and W (rank %d) must have the same rank >= 3", X->rank,
				W->rank);
	const bool integer = variant(c) == CONV_INTEGER || variant(c) == CONV_QLINEAR;
	if (integer ? !int8_like(X->dtype) || !int8_like(W->dtype)
		    : !float_like(X->dtype) || W->dtype != X->dtype)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"X and W must be the same float type, or 8-bit integers (%s, %s)",
				om_dtype_name(X->dtype), om_dtype_name(W->dtype));
	g->group = om_attr_int(c->node, "group", 1);
	if (g->group < 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "group %lld < 1",
				(long long)g->group);
	g->N = X->dims[0];
	g->C = X->dims[1];
	int32_t n = X->rank - 2;
	om_kind rc = om_spatial_kernel_attr(c, n, kernel);
	if (rc)
		return rc;
	for (int32_t i = 0; i < n; i++)
		if (*kernel && (*kernel)[i] != W->dims[i + 2])
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"kernel_shape[%d] = %lld but W has %lld", i,
					(long long)(*kernel)[i], (long long)W->dims[i + 2]);
	*kernel = W->dims + 2;
	if (g->C % g->group)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%lld channels do not split into %lld groups", (long long)g->C,
				(long long)g->group);
	return OM_OK;
}

static om_kind check_bias(om_ctx *c, const conv_geo *g)
{
	const om_tensor *B = c->nin > 2 ? c->in[2] : NULL;
	if (B && (B->rank != 1 || B->dims[0] != g->M || B->dtype != c->in[0]->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"B must be a vector of %lld %s", (long long)g->M,
				om_dtype_name(c->in[0]->dtype));
	return OM_OK;
}

static bool numel_in(const om_tensor *t, int64_t a, int64_t b)
{
	int64_t n = t ? om_tensor_numel(t) : -1;
	return t && t->rank <= 1 && (n == a || n == b);
}

/* QLinearConv: x_scale, x_zp, w_scale, w_zp (one or per output channel), y_scale, y_zp, B. */
static om_kind check_qlinear(om_ctx *c, const conv_geo *g)
{
	const om_tensor *const *in = c->in;
	const om_tensor *B = c->nin > 8 ? in[8] : NULL;
	if (c->nin < 8 || !numel_in(in[1], 1, 1) || in[1]->dtype != OM_FLOAT ||
	    !numel_in(in[2], 1, 1) || in[2]->dtype != in[0]->dtype ||
	    !numel_in(in[4], 1, g->M) || in[4]->dtype != OM_FLOAT || !numel_in(in[5], 1, g->M) ||
	    in[5]->dtype != in[3]->dtype || !numel_in(in[6], 1, 1) || in[6]->dtype != OM_FLOAT ||
	    !numel_in(in[7], 1, 1) || !int8_like(in[7]->dtype) ||
	    (B && (!numel_in(B, g->M, g->M) || B->dtype != OM_INT32)))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"scales: float; zero points: 8-bit, their tensor's type; w's "
				"scale and zero point: one or %lld; B: %lld int32",
				(long long)g->M, (long long)g->M);
	return OM_OK;
}

static om_kind conv_geometry(om_ctx *c, conv_geo *g)
{
	const int64_t *kernel;
	om_kind rc = conv_common(c, g, &kernel);
	if (rc)
		return rc;
	const om_tensor *X = c->in[0], *W = c->in[w_slot(c)];
	g->M = W->dims[0];
	if (W->dims[1] * g->group != g->C || g->M % g->group)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"W %lld x %lld does not fit %lld channels in %lld groups",
				(long long)W->dims[0], (long long)W->dims[1], (long long)g->C,
				(long long)g->group);
	rc = om_spatial_forward(c, X->rank - 2, X->dims + 2, kernel, 0, &g->sp);
	if (rc)
		return rc;
	if (variant(c) == CONV_QLINEAR)
		return check_qlinear(c, g);
	if (variant(c) != CONV_INTEGER)
		return check_bias(c, g);
	/* ConvInteger: zero points, one for X, one or one per output channel for W */
	const om_tensor *xz = c->nin > 2 ? c->in[2] : NULL, *wz = c->nin > 3 ? c->in[3] : NULL;
	int64_t nwz = wz ? om_tensor_numel(wz) : 1;
	if ((xz && (om_tensor_numel(xz) != 1 || xz->dtype != X->dtype)) ||
	    (wz && ((nwz != 1 && nwz != g->M) || wz->rank > 1 || wz->dtype != W->dtype)))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"zero points: one for x, one or %lld for w, of their types",
				(long long)g->M);
	return OM_OK;
}

static void set_output(om_ctx *c, const conv_geo *g)
{
	int64_t d[OM_MAX_RANK] = {g->N, g->M};
	for (int32_t i = 0; i < g->sp.n; i++)
		d[i + 2] = g->sp.out[i];
	const int32_t dt = variant(c) == CONV_INTEGER ? OM_INT32
			   : variant(c) == CONV_QLINEAR ? c->in[7]->dtype
							: c->in[0]->dtype;
	om_set_shape(c->out[0], dt, g->sp.n + 2, d);
}

/* ---- Conv --------------------------------------------------------------------------------- */

static om_kind conv_infer(om_ctx *c)
{
	conv_geo g;
	om_kind rc = conv_geometry(c, &g);
	if (rc)
		return rc;
	set_output(c, &g);
	return OM_OK;
}

/* FusedConv: Conv's inputs and attributes, Z (input 3, optional) of Y's shape and type, and
 * the activation attributes. */
static om_kind fused_epilogue(om_ctx *c, om_conv_epi *e)
{
	const om_tensor *Z = c->nin > 3 ? c->in[3] : NULL;
	const om_tensor *Y = c->out[0];
	if (Z && (Z->dtype != c->in[0]->dtype || Z->rank != Y->rank ||
		  memcmp(Z->dims, Y->dims, sizeof(int64_t) * (size_t)Y->rank)))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"Z must have the output's type and shape");
	e->z = Z ? Z->data : NULL;
	return om_conv_epi_activation(c, e);
}

/* the epilogue of a conv: FusedConv's, or a Conv's with the Z of an absorbed Add (input 3:
 * OM_OP_SUM) and the activation absorbed after it, or without */
static om_kind conv_epilogue(om_ctx *c, om_conv_epi *e)
{
	return variant(c) == CONV_FUSED || c->nin > 3 ? fused_epilogue(c, e)
						     : om_conv_epi_activation(c, e);
}

static om_kind fused_infer(om_ctx *c)
{
	om_conv_epi e = {0};
	om_kind rc = conv_infer(c);
	return rc ? rc : fused_epilogue(c, &e);
}

/* A float conv through the table of implementations (conv_impl.c) */
static om_kind conv_f32(om_ctx *c)
{
	conv_geo g;
	om_conv_epi e = {0};
	om_kind rc = conv_geometry(c, &g);
	if (rc || (rc = conv_epilogue(c, &e)))
		return rc;
	e.bias = c->nin > 2 && c->in[2] ? c->in[2]->data : NULL;
	const om_conv_case k = {c, &g.sp, g.N, g.C, g.M, g.group, c->in[0]->data, c->in[1]->data,
				e, c->out[0]->data};
	return om_conv_f32_run(&k);
}

/* ---- the channel-blocked layout (op.h) ----------------------------------------------------- */

/* In NHWC plans (convs of one group only, no depthwise one) the 3x3 convs Winograd F(4x4)
 * would run at one thread are blocked too, run by oneDNN's NHWC brgemm conv (conv_dnnl.c
 * keeps them plain from nChw16c measurements): no reorders around them, and no plain value
 * spreading to their neighbours (squeezenet1_0's 64 -> 256 expand at 27x27 left its Concat,
 * MaxPool and 1x1 conv plain). CPU ms a run, one thread, medians of 5-9 interleaved processes
 * of 10 runs under load 10-12, before -> after, in separate sessions: squeezenet1_0 13.3 ->
 * 12.0, 11.3 -> 9.9; googlenet 19.2 -> 18.6, 21.0 -> 19.0; resnet50 56.0 -> 56.9, 51.5 ->
 * 52.4, 54.7 -> 52.7; resnet18 21.6 -> 20.9, 24.8 -> 25.4, 24.1 -> 22.9 (these two within
 * the noise). Only with AVX-512 (the CPU's block 16): oneDNN 2.6 has no brgemm conv on AVX2,
 * whose NHWC conv loses to Winograd F(4x4) there (resnet18 on a Zen 3, one thread: 50 ms a
 * run against 39 with every conv plain) */
static bool nhwc_winograd(const om_ctx *c, const conv_geo *g)
{
	return c->block == OM_BLOCK_NHWC && g->group == 1 && om_layout_block() == 16 &&
	       om_winograd_tile(&g->sp, g->C, g->M) == 4;
}

/* Conv and FusedConv on float32 take X and Y (with Z, tied to Y) blocked where oneDNN runs
 * the conv faster than omopt's kernels (om_conv_dnnl_blockable, nhwc_winograd): by the CPU's
 * block, or NHWC when the planner asks for it */
static void conv_layout(const om_ctx *c, om_layout_req *r)
{
	*r = (om_layout_req){0};
	om_status st = {0};
	om_ctx lc = *c;
	lc.st = &st;
	conv_geo g;
	const om_tensor *Z = c->nin > 3 ? c->in[3] : NULL;
	const int32_t block = om_layout_block();
	if (!block || c->exact || c->in[0]->dtype != OM_FLOAT || c->in[0]->rank != 4 ||
	    !(c->const_in & 2) || conv_geometry(&lc, &g) ||
	    !(om_conv_dnnl_blockable(&g.sp, g.C, g.M, g.group, c->threads,
				     c->block == OM_BLOCK_NHWC) ||
	      nhwc_winograd(c, &g)))
		return;
	r->block = c->block == OM_BLOCK_NHWC ? OM_BLOCK_NHWC : block;
	r->may = OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0);
	if (Z)
		r->may |= r->tied = OM_LAYOUT_IN(3) | OM_LAYOUT_OUT(0);
}

/* oneDNN's path for a float conv, its X, Y and Z blocked or not (om_conv_dnnl sees their
 * logical shapes and c->blocked); false when oneDNN declines it (*g: the geometry) */
/* c as oneDNN's path and the plan-time choice see it: X, Y and Z at their logical shapes
 * where the planner keeps them blocked (om_conv_dnnl reads c.blocked), W and B as given. It
 * points into itself: made in place, never copied. */
typedef struct logical_conv {
	om_tensor x, y, z;
	const om_tensor *in[4];
	om_tensor *out[1];
	om_ctx c;
} logical_conv;

static void logical_conv_of(const om_ctx *c, logical_conv *v)
{
	const om_tensor *W = c->in[1], *Z = c->nin > 3 ? c->in[3] : NULL;
	const int64_t C = W->dims[1] * om_attr_int(c->node, "group", 1), M = W->dims[0];
	v->x = c->blocked & OM_LAYOUT_IN(0) ? om_layout_logical(c->in[0], C) : *c->in[0];
	v->y = c->blocked & OM_LAYOUT_OUT(0) ? om_layout_logical(c->out[0], M) : *c->out[0];
	v->z = !Z ? (om_tensor){0} : c->blocked & OM_LAYOUT_OUT(0) ? om_layout_logical(Z, M) : *Z;
	v->in[0] = &v->x;
	v->in[1] = W;
	v->in[2] = c->nin > 2 ? c->in[2] : NULL;
	v->in[3] = Z ? &v->z : NULL;
	v->out[0] = &v->y;
	v->c = *c;
	v->c.in = v->in, v->c.out = v->out, v->c.nin = c->nin < 4 ? c->nin : 4;
}

static bool conv_dnnl_step(om_ctx *c, conv_geo *g, om_kind *rc)
{
	logical_conv v;
	logical_conv_of(c, &v);
	om_ctx *const lc = &v.c;
	om_conv_epi e = {0};
	if ((*rc = conv_geometry(lc, g)) || (*rc = conv_epilogue(lc, &e)))
		return true;
	e.bias = v.in[2] ? v.in[2]->data : NULL;
	return om_conv_dnnl(lc, &g->sp, g->N, g->C, g->M, g->group, v.x.data, v.in[1]->data, &e,
			    v.y.data, rc); /* it names what ran (om_ctx_chose) */
}

/* A conv whose X or Y (and Z) the planner keeps blocked: oneDNN's blocked path, or (when
 * oneDNN declines the case) omopt's kernels on plain copies */
static om_kind conv_blocked(om_ctx *c)
{
	const om_tensor *W = c->in[1], *Z = c->nin > 3 ? c->in[3] : NULL;
	const int64_t C = W->dims[1] * om_attr_int(c->node, "group", 1), M = W->dims[0];
	const om_tensor *in[4] = {NULL, W, c->nin > 2 ? c->in[2] : NULL, NULL};
	om_tensor *out[1] = {NULL};
	om_ctx lc = *c;
	lc.in = in, lc.out = out;
	conv_geo g;
	om_kind rc;
	if (conv_dnnl_step(c, &g, &rc))
		return rc;
	float *bx = NULL, *by = NULL, *bz = NULL;
	om_tensor px, py, pz;
	rc = om_layout_plain_side(c, OM_LAYOUT_IN(0), c->in[0], C, true, &px, &bx);
	if (!rc)
		rc = om_layout_plain_side(c, OM_LAYOUT_OUT(0), c->out[0], M, false, &py, &by);
	if (!rc && Z)
		rc = om_layout_plain_side(c, OM_LAYOUT_IN(3), Z, M, true, &pz, &bz);
	if (!rc) {
		in[0] = &px, in[3] = Z ? &pz : NULL, out[0] = &py;
		lc.blocked = 0;
		rc = conv_f32(&lc);
	}
	if (!rc && by)
		om_layout_block_f32(by, g.N, M, g.sp.out[0] * g.sp.out[1], c->out[0]->dims[4],
				    c->out[0]->data);
	om_ctx_scratch_done(c, bx);
	om_ctx_scratch_done(c, by);
	om_ctx_scratch_done(c, bz);
	return rc;
}

/* ---- input 0 scaled per image and channel (om_ctx.in_scale: a Mul the planner absorbed) -- */

typedef struct in_factor {
	const float *s;
	int64_t image; /* floats from one image's factors to the next's, 0: one set for all */
	int64_t C;     /* channels: a blocked X's padding channels get 0 */
} in_factor;

static inline float factor_of(const in_factor *f, int64_t n, int64_t q)
{
	return q < f->C ? f->s[n * f->image + q] : 0.0f;
}

/* in_scale's factors for N images of C channels: (N or 1, C, 1, 1) or (C, 1, 1), or blocked
 * as X is, (N or 1, ceil(C / b), 1, 1, b) */
static om_kind in_factors(const om_ctx *c, int64_t N, int64_t C, in_factor *f)
{
	const om_tensor *S = c->in_scale;
	const int64_t *d = S->dims;
	int64_t n = 1, per = C;
	bool ok = S->dtype == OM_FLOAT;
	if (c->blocked & OM_LAYOUT_IN(0)) {
		const int64_t b = c->in[0]->dims[4];
		per = (C + b - 1) / b * b;
		ok = ok && S->rank == 5 && d[1] * b == per && d[2] == 1 && d[3] == 1 && d[4] == b;
		n = d[0];
	} else if (S->rank == 4) {
		ok = ok && d[1] == C && d[2] == 1 && d[3] == 1;
		n = d[0];
	} else {
		ok = ok && S->rank == 3 && d[0] == C && d[1] == 1 && d[2] == 1;
	}
	if (!ok || (n != 1 && n != N))
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"the factor of input 0 (a Mul folded in by the planner) is not one "
				"float per channel and image");
	*f = (in_factor){S->data, n == 1 ? 0 : per, C};
	return OM_OK;
}

typedef struct scale_job {
	const in_factor *f;
	const float *x;
	float *y;
	int64_t planes, P, lanes; /* planes an image (channels, or blocks of `lanes`), P floats
				     each */
} scale_job;

static void scale_planes(void *arg, int64_t lo, int64_t hi)
{
	const scale_job *j = arg;
	for (int64_t i = lo; i < hi; i++) {
		const int64_t n = i / j->planes, q0 = i % j->planes * j->lanes;
		const float *x = j->x + i * j->P;
		float *y = j->y + i * j->P;
		for (int64_t p = 0; p < j->P; p += j->lanes)
			for (int64_t l = 0; l < j->lanes; l++)
				y[p + l] = x[p + l] * factor_of(j->f, n, q0 + l);
	}
}

static om_kind conv_kernel(om_ctx *c);

/* image n of t, N images along axis 0 (t itself when it has one for all: a (1, C, 1, 1) or
 * (C, 1, 1) factor) */
static om_tensor image_of(const om_tensor *t, int64_t n, int64_t N)
{
	om_tensor v = *t;
	if (t->rank < 4 || t->dims[0] != N || N <= 1)
		return v;
	v.dims[0] = 1;
	v.nbytes = t->nbytes / (size_t)N;
	v.data = (unsigned char *)t->data + (size_t)n * v.nbytes;
	return v;
}

/* oneDNN's path one image at a time (the primitive of one image, its weights scaled by that
 * image's factors): false when oneDNN declines the conv */
static bool dnnl_by_image(om_ctx *c, int64_t N, om_kind *rc)
{
	const om_tensor *Z = c->nin > 3 ? c->in[3] : NULL;
	for (int64_t n = 0; n < N; n++) {
		om_tensor x = image_of(c->in[0], n, N), y = image_of(c->out[0], n, N);
		om_tensor z = Z ? image_of(Z, n, N) : (om_tensor){0};
		const om_tensor s = image_of(c->in_scale, n, N);
		const om_tensor *in[4] = {&x, c->in[1], c->nin > 2 ? c->in[2] : NULL,
					  Z ? &z : NULL};
		om_tensor *out[1] = {&y};
		om_ctx lc = *c;
		lc.in = in, lc.out = out, lc.in_scale = &s;
		conv_geo g;
		if (!conv_dnnl_step(&lc, &g, rc)) {
			if (n == 0)
				return false;
			*rc = om_error(c->st, OM_ERR_INTERNAL, c->node,
				       "oneDNN took image 0 and not image %lld", (long long)n);
			return true;
		}
		if (*rc)
			return true;
	}
	return N > 0;
}

/* On oneDNN's path, image by image, the weights are scaled instead: W'[m, j] = W[m, j] s[c(m,
 * j)] (the planner absorbs only convs of fewer weights than X's C H W: conv_dnnl.c). Where
 * oneDNN declines the conv, X s is formed in a buffer, as the Mul did. */
static om_kind conv_scaled(om_ctx *c)
{
	const om_tensor *X = c->in[0], *W = c->nin > 1 ? c->in[1] : NULL;
	if (!X || !W || X->dtype != OM_FLOAT || W->dtype != OM_FLOAT || X->rank < 3 ||
	    W->rank < 3)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"a per-channel factor needs float X and W of rank 3 or more");
	const int64_t group = om_attr_int(c->node, "group", 1), M = W->dims[0], Cg = W->dims[1];
	const int64_t C = Cg * group, N = X->dims[0];
	in_factor f;
	om_kind rc = group < 1 || M % group ? om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
						      "%lld outputs in %lld groups", (long long)M,
						      (long long)group)
					    : in_factors(c, N, C, &f);
	if (rc)
		return rc;
	if (dnnl_by_image(c, N, &rc))
		return rc;
	float *buf;
	if ((rc = om_ctx_scratch(c, X->nbytes, "a copy of X times its factors", (void **)&buf)))
		return rc;
	const bool blocked = c->blocked & OM_LAYOUT_IN(0);
	const int64_t lanes = blocked ? X->dims[4] : 1, planes = blocked ? X->dims[1] : C;
	scale_job j = {&f, X->data, buf, planes, om_tensor_numel(X) / (N * planes), lanes};
	if (N * planes > 0)
		om_par_for(c->threads, N * planes, 1, scale_planes, &j);
	const om_tensor *in[4];
	for (int32_t i = 0; i < c->nin && i < 4; i++)
		in[i] = c->in[i];
	om_tensor t = *X;
	t.data = buf;
	in[0] = &t;
	om_ctx lc = *c;
	lc.in = in, lc.in_scale = NULL, lc.const_in &= ~(uint64_t)1;
	rc = conv_kernel(&lc);
	om_ctx_scratch_done(c, buf);
	return rc;
}

static om_kind conv_kernel(om_ctx *c)
{
	if (c->in_scale)
		return conv_scaled(c);
	if (c->blocked)
		return conv_blocked(c);
	if (c->in[0]->dtype != OM_FLOAT)
		return om_run_as_f32(c, conv_f32, false);
	return conv_f32(c);
}

/* ---- the implementation a float conv will run (om_op.choose) ------------------------------ */

static const float no_z; /* the implementations' predicates ask only whether Z is given */

/* conv_kernel's path for the shapes in c: oneDNN's image by image on a scaled input
 * (dnnl_by_image), oneDNN's on the blocked sides (conv_blocked), else the table's first
 * implementation that applies (conv_f32 on plain, unscaled values: conv_impl.c) */
static void conv_choose(const om_ctx *c, om_choice *ch)
{
	const om_tensor *W = c->nin > 1 ? c->in[1] : NULL, *Z = c->nin > 3 ? c->in[3] : NULL;
	if (!c->in[0] || !W || W->rank < 3 || c->nout < 1 || !c->out[0])
		return;
	logical_conv v;
	logical_conv_of(c, &v);
	om_ctx *const lc = &v.c;
	conv_geo g;
	om_conv_epi e = {0};
	if (conv_geometry(lc, &g) || conv_epilogue(lc, &e))
		return;
	e.z = Z ? &no_z : NULL;
	if (c->in_scale && om_conv_dnnl_takes(lc, &g.sp, 1, g.C, g.M, g.group, &e)) {
		ch->name = OM_CONV_ONEDNN;
		return;
	}
	lc->in_scale = NULL;
	if (c->blocked && om_conv_dnnl_takes(lc, &g.sp, g.N, g.C, g.M, g.group, &e)) {
		ch->name = OM_CONV_ONEDNN;
		return;
	}
	lc->blocked = 0;
	const om_conv_case k = {lc, &g.sp, g.N, g.C, g.M, g.group, NULL, NULL, e, NULL};
	ch->name = om_conv_f32_choose(&k);
}

/* ---- ConvTranspose ------------------------------------------------------------------------ */

static om_kind convt_geometry(om_ctx *c, conv_geo *g)
{
	const int64_t *kernel;
	om_kind rc = conv_common(c, g, &kernel);
	if (rc)
		return rc;
	const om_tensor *X = c->in[0], *W = c->in[1];
	if (W->dims[0] != g->C)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"W has %lld input channels, X %lld", (long long)W->dims[0],
				(long long)g->C);
	g->M = W->dims[1] * g->group;
	om_spatial *sp = &g->sp;
	memset(sp, 0, sizeof *sp);
	int32_t n = sp->n = X->rank - 2;
	for (int32_t i = 0; i < n; i++) {
		if (kernel[i] < 1 || kernel[i] > OM_SP_LIMIT)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"kernel extent %lld is out of range", (long long)kernel[i]);
		sp->in[i] = X->dims[i + 2];
		sp->k[i] = kernel[i];
	}
	if ((rc = om_spatial_strides(c, sp)))
		return rc;
	int64_t cnt_op, cnt_os, cnt_p;
	const int64_t *opad = om_attr_ints(c->node, "output_padding", &cnt_op);
	const int64_t *oshape = om_attr_ints(c->node, "output_shape", &cnt_os);
	const int64_t *pads = om_attr_ints(c->node, "pads", &cnt_p);
	if ((opad && cnt_op != n) || (oshape && cnt_os != n && cnt_os != n + 2) ||
	    (pads && cnt_p != 2 * n))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"output_padding, output_shape or pads has the wrong length");
	if (oshape)
		oshape += cnt_os - n;
	enum om_auto_pad ap = OM_PAD_NOTSET;
	if ((rc = om_spatial_auto_pad(c, &ap)))
		return rc;
	const int upper = ap == OM_PAD_SAME_UPPER, lower = ap == OM_PAD_SAME_LOWER;
	const int valid = ap == OM_PAD_VALID;
	for (int32_t i = 0; i < n; i++) {
		int64_t op = opad ? opad[i] : 0;
		int64_t pb = pads && !valid && !upper && !lower ? pads[i] : 0;
		int64_t pe = pads && !valid && !upper && !lower ? pads[i + n] : 0;
		if (op < 0 || op > OM_SP_LIMIT || pb < 0 || pb > OM_SP_LIMIT || pe < 0 ||
		    pe > OM_SP_LIMIT || sp->in[i] > OM_SP_LIMIT * 4)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"output_padding or pads out of range on axis %d", i);
		int64_t ek = (sp->k[i] - 1) * sp->dil[i] + 1;
		int64_t full = sp->stride[i] * (sp->in[i] - 1) + op + ek;
		if (sp->in[i] == 0)
			full = 0;
		int64_t out;
		if (oshape || upper || lower) {
			out = oshape ? oshape[i] : sp->in[i] * sp->stride[i];
			if (out < 0 || out > OM_SP_LIMIT * 4)
				return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
						"output_shape[%d] = %lld is out of range", i,
						(long long)out);
			int64_t total = full - out > 0 ? full - out : 0;
			pb = upper ? total / 2 : total - total / 2;
			pe = total - pb;
		} else {
			out = full - pb - pe;
			if (out < 0)
				return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
						"pads exceed the output on axis %d", i);
		}
		sp->pb[i] = pb, sp->pe[i] = pe, sp->out[i] = out;
	}
	return check_bias(c, g);
}

static om_kind convt_infer(om_ctx *c)
{
	conv_geo g;
	om_kind rc = convt_geometry(c, &g);
	if (rc)
		return rc;
	set_output(c, &g);
	return OM_OK;
}

/* Per group: columns (Mg * K) x Pin = W_g^T x X_g, then folded into the image; the bias and
 * the absorbed activation last. */
static om_kind convt_f32(om_ctx *c)
{
	conv_geo g;
	om_kind rc = convt_geometry(c, &g);
	if (rc)
		return rc;
	const float *x = c->in[0]->data, *w = c->in[1]->data;
	const float *b = c->nin > 2 && c->in[2] ? c->in[2]->data : NULL;
	float *y = c->out[0]->data;
	const om_spatial *sp = &g.sp;
	const int64_t P = om_conv_prod(sp->out, sp->n), Pin = om_conv_prod(sp->in, sp->n);
	const int64_t K = om_conv_prod(sp->k, sp->n);
	int64_t Cg = g.C / g.group, Mg = g.M / g.group;
	if (g.N == 0 || g.M == 0 || P == 0)
		return OM_OK;
	om_ctx_chose(c, "gemm-col2im");
	memset(y, 0, sizeof(float) * (size_t)(g.N * g.M * P));
	if (Cg > 0 && Pin > 0) {
		int64_t ncol;
		float *col = NULL;
		if (__builtin_mul_overflow(Mg * K, Pin, &ncol) || ncol >= INT64_MAX / 8)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "column buffer too large");
		om_kind rc = om_ctx_scratch(c, sizeof(float) * (size_t)ncol, "the column buffer",
					    (void **)&col);
		if (rc)
			return rc;
		for (int64_t n = 0; n < g.N; n++)
			for (int64_t gi = 0; gi < g.group; gi++) {
				om_sgemm(c->exact, true, false, Mg * K, Pin, Cg, 1,
				         w + gi * Cg * Mg * K, Mg * K,
				         x + (n * g.C + gi * Cg) * Pin, Pin, 0, col, Pin);
				om_col2im_add(col, Mg, sp, y + (n * g.M + gi * Mg) * P);
			}
		om_ctx_scratch_done(c, col);
	}
	/* the bias and the activation the planner folded in (OM_OP_EPILOGUE), a pass a row */
	om_conv_epi e = {.bias = b};
	if ((rc = om_conv_epi_activation(c, &e)))
		return rc;
	for (int64_t n = 0; n < g.N; n++)
		om_conv_epi_rows(&e, g.M, P, n, 0, g.M, 0, P, y);
	return OM_OK;
}

/* 2-D float ConvTranspose of one group with a constant W takes X and Y in NHWC, each on its
 * own (om_convt_nhwc writes NHWC from either X; a plain Y is written from a plain copy of X):
 * a UNet's up-convolutions between NHWC convs */
static void convt_layout(const om_ctx *c, om_layout_req *r)
{
	*r = (om_layout_req){0};
	om_status st = {0};
	om_ctx lc = *c;
	lc.st = &st;
	conv_geo g;
	if (c->block != OM_BLOCK_NHWC || c->exact || c->in[0]->dtype != OM_FLOAT ||
	    c->in[0]->rank != 4 || !(c->const_in & 2) || convt_geometry(&lc, &g) || g.group != 1)
		return;
	r->block = OM_BLOCK_NHWC;
	r->may = OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0);
}

/* X or Y in NHWC (convt_layout) */
static om_kind convt_blocked(om_ctx *c)
{
	const om_tensor *W = c->in[1];
	const bool bin = c->blocked & OM_LAYOUT_IN(0), bout = c->blocked & OM_LAYOUT_OUT(0);
	const int64_t C = W->dims[0], M = W->dims[1] * om_attr_int(c->node, "group", 1);
	om_tensor x = bin ? om_layout_logical(c->in[0], C) : *c->in[0];
	om_tensor y = bout ? om_layout_logical(c->out[0], M) : *c->out[0];
	const om_tensor *in[3] = {&x, W, c->nin > 2 ? c->in[2] : NULL};
	om_tensor *out[1] = {&y};
	om_ctx lc = *c;
	lc.in = in, lc.out = out, lc.nin = c->nin < 3 ? c->nin : 3;
	conv_geo g;
	om_kind rc = convt_geometry(&lc, &g);
	if (rc)
		return rc;
	if (bout) {
		om_conv_epi post = {0};
		if ((rc = om_conv_epi_activation(c, &post)))
			return rc;
		om_ctx_chose(c, "convt-nhwc");
		return om_convt_nhwc(c, &g.sp, g.N, g.C, g.M, x.data, bin, W->data,
				     in[2] ? in[2]->data : NULL,
				     post.act != OM_ACT_NONE ? &post : NULL, y.data);
	}
	float *bx;
	if ((rc = om_layout_plain_side(c, OM_LAYOUT_IN(0), c->in[0], C, true, &x, &bx)))
		return rc;
	lc.blocked = 0;
	rc = convt_f32(&lc);
	om_ctx_scratch_done(c, bx);
	return rc;
}

static om_kind convt_kernel(om_ctx *c)
{
	if (c->blocked)
		return convt_blocked(c);
	if (c->in[0]->dtype != OM_FLOAT)
		return om_run_as_f32(c, convt_f32, false);
	return convt_f32(c);
}

/* convt_kernel's path: convt-nhwc when Y is in NHWC, else gemm-col2im (on a plain copy of an
 * NHWC X) unless Y is empty */
static void convt_choose(const om_ctx *c, om_choice *ch)
{
	const om_tensor *Y = c->nout > 0 ? c->out[0] : NULL;
	if (c->blocked & OM_LAYOUT_OUT(0))
		ch->name = "convt-nhwc";
	else if (Y && Y->rank >= 3 && om_tensor_numel(Y) > 0)
		ch->name = "gemm-col2im";
}

/* ---- ConvInteger --------------------------------------------------------------------------- */

#define IM2COL_DGEMM "im2col-dgemm" /* the integer convs' one implementation */

static double load8(const om_tensor *t, int64_t i)
{
	return t->dtype == OM_INT8 ? ((const int8_t *)t->data)[i] : ((const uint8_t *)t->data)[i];
}

/* Zero-point-shifted copy of an 8-bit tensor as double into d (its numel values); zp (may be
 * NULL) has 1 or `groups` values, value i using zp[i / per]. */
static void shifted(const om_tensor *t, const om_tensor *zp, int64_t per, double *d)
{
	int64_t n = om_tensor_numel(t), nz = zp ? om_tensor_numel(zp) : 0;
	for (int64_t i = 0; i < n; i++)
		d[i] = load8(t, i) - (nz == 0 ? 0 : load8(zp, nz == 1 ? 0 : i / per));
}

/* sum (x - xz)(w - wz) per output as double (N x M x P into *out, om_ctx_scratch's: the caller
 * gives it back with om_ctx_scratch_done). The products of
 * 8-bit values summed in double are integers below 2^53: exact in any order, so BLAS may
 * serve the fast mode too. */
static om_kind int_conv_sums(om_ctx *c, const conv_geo *g, const om_tensor *X,
			     const om_tensor *xz, const om_tensor *W, const om_tensor *wz,
			     double **out)
{
	const om_spatial *sp = &g->sp;
	int32_t last = sp->n - 1;
	const int64_t P = om_conv_prod(sp->out, sp->n), Pin = om_conv_prod(sp->in, sp->n);
	const int64_t K = om_conv_prod(sp->k, sp->n);
	int64_t Cg = g->C / g->group, Mg = g->M / g->group, Kg = Cg * K, OL = sp->out[last];
	int64_t ncol;
	if (__builtin_mul_overflow(Kg, P, &ncol) || ncol >= INT64_MAX / 16)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "column buffer too large");
	/* X and W shifted, then the columns: one buffer; the sums another */
	const size_t nx = (size_t)om_tensor_numel(X), nw = (size_t)om_tensor_numel(W);
	double *x, *y;
	om_kind rc = om_ctx_scratch(c, sizeof(double) * (nx + nw + (size_t)ncol),
				    "the shifted values and the column buffer", (void **)&x);
	if (rc)
		return rc;
	if ((rc = om_ctx_scratch(c, sizeof(double) * (size_t)(g->N * g->M * P), "the integer sums",
				 (void **)&y))) {
		om_ctx_scratch_done(c, x);
		return rc;
	}
	om_ctx_chose(c, IM2COL_DGEMM);
	double *w = x + nx, *col = w + nw;
	shifted(X, xz, 1, x);
	shifted(W, wz, Kg > 0 ? Kg : 1, w);
	for (int64_t n = 0; n < g->N && P > 0; n++)
		for (int64_t gi = 0; gi < g->group; gi++) {
			om_im2col(x + (n * g->C + gi * Cg) * Pin, sizeof(double), Cg, sp, 0, P / OL,
				  col);
			om_dgemm(c->exact, false, false, Mg, P, Kg, 1, w + gi * Mg * Kg, Kg, col, P,
				 0, y + (n * g->M + gi * Mg) * P, P);
		}
	om_ctx_scratch_done(c, x);
	*out = y;
	return OM_OK;
}

/* the integer convs' sums: om_conv_igemm in fast mode where it takes W's Kg (C / group x
 * prod(kernel)), else the double columns; named at plan time as at run time */
static bool int_sums_igemm(const om_ctx *c, const om_tensor *W)
{
	int64_t Kg = 1;
	for (int32_t i = 1; i < W->rank; i++)
		Kg *= W->dims[i];
	return W->rank >= 3 && om_conv_igemm_takes(c, Kg);
}

static const char *int_sums_name(const om_ctx *c, const om_tensor *W)
{
	return int_sums_igemm(c, W) ? OM_CONV_IGEMM : IM2COL_DGEMM;
}

static void int_choose(const om_ctx *c, om_choice *ch)
{
	ch->name = c->nin > 1 && c->in[1] ? int_sums_name(c, c->in[1]) : IM2COL_DGEMM;
}

/* QLinearConv c's integer conv on geometry g (X and W, their zero points) */
static om_conv_int qconv_int(const om_ctx *c, const conv_geo *g)
{
	return (om_conv_int){&g->sp, g->N, g->C, g->M, g->group, c->in[0], c->in[2], c->in[3],
			     c->in[5]};
}

/* QLinearConv c's requantization */
static om_qconv_out qconv_out(const om_ctx *c)
{
	const om_tensor *B = c->nin > 8 ? c->in[8] : NULL, *ws = c->in[4], *yz = c->in[7];
	return (om_qconv_out){B ? B->data : NULL, *(const float *)c->in[1]->data,
			      *(const float *)c->in[6]->data, ws->data, om_tensor_numel(ws),
			      (float)load8(yz, 0), yz->dtype == OM_INT8};
}

/* c with X and Y at their logical shapes where the planner keeps them NHWC (as
 * logical_conv for float convs): it points into itself, made in place, never copied */
typedef struct logical_qconv {
	om_tensor x, y;
	const om_tensor *in[9];
	om_tensor *out[1];
	om_ctx c;
} logical_qconv;

static void logical_qconv_of(const om_ctx *c, logical_qconv *v)
{
	const om_tensor *W = c->in[3];
	const int64_t C = W->dims[1] * om_attr_int(c->node, "group", 1), M = W->dims[0];
	v->x = c->blocked & OM_LAYOUT_IN(0) ? om_layout_logical(c->in[0], C) : *c->in[0];
	v->y = c->blocked & OM_LAYOUT_OUT(0) ? om_layout_logical(c->out[0], M) : *c->out[0];
	for (int32_t i = 0; i < 9; i++)
		v->in[i] = i < c->nin ? c->in[i] : NULL;
	v->in[0] = &v->x;
	v->out[0] = &v->y;
	v->c = *c;
	v->c.in = v->in, v->c.out = v->out, v->c.nin = c->nin < 9 ? c->nin : 9;
}

/* QLinearConv: the depthwise phase loop on NCHW values where it takes the conv (no VNNI),
 * else oneDNN's int8 convolution where it takes it, else the integer sums (X and Y at their
 * logical shapes where the planner keeps them NHWC) */
static void qlinear_choose(const om_ctx *c, om_choice *ch)
{
	logical_qconv v;
	logical_qconv_of(c, &v);
	om_status st = {0};
	v.c.st = &st;
	conv_geo g;
	ch->name = int_sums_name(c, c->in[3]);
	if (conv_geometry(&v.c, &g))
		return;
	const om_conv_int q = qconv_int(&v.c, &g);
	if (!c->blocked && om_qconv_dw_takes(c, &q))
		ch->name = OM_CONV_DW_INT;
	else if (om_qconv_dnnl_takes(&v.c, &g.sp))
		ch->name = OM_QCONV_ONEDNN;
}

/* int32 results wrap as the spec allows (never, on om_conv_igemm's: it takes no K where
 * they could). */
static om_kind convint_kernel(om_ctx *c)
{
	conv_geo g;
	double *y;
	om_kind rc = conv_geometry(c, &g);
	if (!rc && int_sums_igemm(c, c->in[1])) {
		const om_conv_int q = {&g.sp, g.N, g.C, g.M, g.group, c->in[0],
				       c->nin > 2 ? c->in[2] : NULL, c->in[1],
				       c->nin > 3 ? c->in[3] : NULL};
		return om_conv_igemm(c, &q, c->out[0]->data);
	}
	if (rc || (rc = int_conv_sums(c, &g, c->in[0], c->nin > 2 ? c->in[2] : NULL, c->in[1],
				      c->nin > 3 ? c->in[3] : NULL, &y)))
		return rc;
	int32_t *out = c->out[0]->data;
	for (int64_t i = 0, n = om_tensor_numel(c->out[0]); i < n; i++)
		out[i] = (int32_t)(uint32_t)(int64_t)y[i];
	om_ctx_scratch_done(c, y);
	return OM_OK;
}

/* QLinearConv in fast mode through oneDNN's int8 convolution (conv_dnnl_int8.c), X and Y
 * in NHWC where c->blocked says so (c: their logical shapes); false when not taken, or when
 * the depthwise phase loop takes the conv (qlinear_sums) */
static bool qlinear_dnnl(om_ctx *c, const conv_geo *g, om_kind *rc)
{
	const om_conv_int qi = qconv_int(c, g);
	if (om_qconv_dw_takes(c, &qi))
		return false;
	const om_tensor *const *in = c->in, *B = c->nin > 8 ? c->in[8] : NULL;
	const om_qconv q = {&g->sp, g->N, g->C, g->M, g->group, in[0]->dtype, in[7]->dtype,
			    in[0]->data, in[3]->data, B ? B->data : NULL, c->out[0]->data,
			    *(const float *)in[1]->data, *(const float *)in[6]->data,
			    in[4]->data, om_tensor_numel(in[4]), (int32_t)load8(in[2], 0),
			    (int32_t)load8(in[7], 0), (c->blocked & OM_LAYOUT_IN(0)) != 0,
			    (c->blocked & OM_LAYOUT_OUT(0)) != 0};
	return om_qconv_dnnl(c, &q, rc);
}

/* QLinearConv takes X and Y in NHWC (8-bit values blocked by the planner in NHWC plans only)
 * where oneDNN's int8 convolution takes the conv: its kernels' own layout, so a run of int8
 * convs passes its values on with no reorder between them, as ONNX Runtime's NHWC transformer
 * does for QLinearConv */
static void qlinear_layout(const om_ctx *c, om_layout_req *r)
{
	*r = (om_layout_req){0};
	om_status st = {0};
	om_ctx lc = *c;
	lc.st = &st;
	conv_geo g;
	if (c->block != OM_BLOCK_NHWC || c->exact || c->nin < 8 || c->in[0]->rank != 4 ||
	    conv_geometry(&lc, &g) || !om_qconv_dnnl_nhwc(c, &g.sp))
		return;
	const om_conv_int q = qconv_int(c, &g);
	if (om_qconv_dw_takes(c, &q))
		return; /* NCHW: the convs beside it run there too (no VNNI) */
	r->block = OM_BLOCK_NHWC;
	r->may = OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0);
}

static om_kind qlinear_sums(om_ctx *c, const conv_geo *g);

/* A QLinearConv whose X or Y the planner keeps in NHWC: oneDNN's int8 conv on them in place,
 * or (when oneDNN declines the case) the integer sums on NCHW copies */
static om_kind qlinear_blocked(om_ctx *c)
{
	const bool bin = c->blocked & OM_LAYOUT_IN(0), bout = c->blocked & OM_LAYOUT_OUT(0);
	logical_qconv v;
	logical_qconv_of(c, &v);
	om_tensor *const x = &v.x, *const y = &v.y;
	om_ctx *const lc = &v.c;
	const int64_t C = x->dims[1], M = y->dims[1];
	conv_geo g;
	om_kind rc = conv_geometry(lc, &g);
	if (rc || qlinear_dnnl(lc, &g, &rc))
		return rc;
	const int64_t Pin = g.sp.in[0] * g.sp.in[1], Pout = g.sp.out[0] * g.sp.out[1];
	uint8_t *px = NULL, *py = NULL;
	/* one buffer: X's NCHW copy, then Y's */
	const size_t bx = bin ? x->nbytes : 0, by = bout ? y->nbytes : 0;
	rc = om_ctx_scratch(c, bx + by, "NCHW copies of NHWC values", (void **)&px);
	if (!rc && bout)
		py = px + bx;
	if (!rc && bin) {
		om_layout_nhwc_u8(c->in[0]->data, g.N, C, Pin, false, px);
		x->data = px;
	}
	if (!rc && bout)
		y->data = py;
	lc->blocked = 0;
	if (!rc)
		rc = qlinear_sums(lc, &g);
	if (!rc && bout)
		om_layout_nhwc_u8(py, g.N, M, Pout, true, c->out[0]->data);
	om_ctx_scratch_done(c, px);
	return rc;
}

/* QLinearConv: oneDNN's int8 convolution, else the integer sums (qlinear_sums) */
static om_kind qlinearconv_kernel(om_ctx *c)
{
	if (c->blocked)
		return qlinear_blocked(c);
	conv_geo g;
	om_kind rc = conv_geometry(c, &g);
	if (rc || qlinear_dnnl(c, &g, &rc))
		return rc;
	return qlinear_sums(c, &g);
}

/* qlinear_sums in fast mode: om_conv_igemm's int32 sums requantized as exact mode's, piece by
 * piece as the product finishes them */
static om_kind qlinear_igemm(om_ctx *c, const conv_geo *g)
{
	const om_conv_int q = qconv_int(c, g);
	const om_qconv_out r = qconv_out(c);
	return om_conv_igemm_q(c, &q, &r, c->out[0]->data);
}

/* QLinearConv: (sum + B) * (x_scale * w_scale / y_scale), rounded half to even, plus y's
 * zero point, saturated (as ONNX Runtime). */
static om_kind qlinear_sums(om_ctx *c, const conv_geo *gp)
{
	const conv_geo g = *gp;
	double *y;
	om_kind rc;
	const om_conv_int q = qconv_int(c, &g);
	if (om_qconv_dw_takes(c, &q)) {
		const om_qconv_out r = qconv_out(c);
		return om_qconv_dw(c, &q, &r, c->out[0]->data);
	}
	if (int_sums_igemm(c, c->in[3]))
		return qlinear_igemm(c, &g);
	if ((rc = int_conv_sums(c, &g, c->in[0], c->in[2], c->in[3], c->in[5], &y)))
		return rc;
	const om_tensor *B = c->nin > 8 ? c->in[8] : NULL, *ws = c->in[4], *yz = c->in[7];
	const float xs = *(const float *)c->in[1]->data, ys = *(const float *)c->in[6]->data;
	const float zp = (float)load8(yz, 0);
	const float lo = yz->dtype == OM_INT8 ? -128 : 0, hi = yz->dtype == OM_INT8 ? 127 : 255;
	int64_t P = om_tensor_numel(c->out[0]) / (g.N * g.M > 0 ? g.N * g.M : 1);
	for (int64_t n = 0; n < g.N; n++)
		for (int64_t m = 0; m < g.M; m++) {
			float wsm = ((const float *)ws->data)[om_tensor_numel(ws) == 1 ? 0 : m];
			float scale = xs * wsm / ys;
			int64_t bias = B ? ((const int32_t *)B->data)[m] : 0;
			for (int64_t p = 0; p < P; p++) {
				int64_t i = (n * g.M + m) * P + p;
				float v = nearbyintf((float)((int64_t)y[i] + bias) * scale) + zp;
				v = v < lo ? lo : v > hi ? hi : v;
				if (yz->dtype == OM_INT8)
					((int8_t *)c->out[0]->data)[i] = (int8_t)v;
				else
					((uint8_t *)c->out[0]->data)[i] = (uint8_t)v;
			}
		}
	om_ctx_scratch_done(c, y);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_Conv_1_v22[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"dilations", OM_ATTR_INTS, 0}, {"group", OM_ATTR_INT, 0},
	{"kernel_shape", OM_ATTR_INTS, 0}, {"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* Conv-22: X W [B] -> Y */
static const om_sig sig_Conv_1_v22 = {22, 2, 3, 1, 1, 0x4, 0x0, 0x7, 0x1, 0x7, 0x1,
	attrs_Conv_1_v22, NULL};
static const om_sig_attr attrs_Conv_1[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"dilations", OM_ATTR_INTS, 0}, {"group", OM_ATTR_INT, 0},
	{"kernel_shape", OM_ATTR_INTS, 0}, {"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* Conv-1: X W [B] -> Y */
static const om_sig sig_Conv_1 = {1, 2, 3, 1, 1, 0x4, 0x0, 0x7, 0x1, 0x0, 0x0, attrs_Conv_1,
	&sig_Conv_1_v22};
static const om_sig_attr attrs_ms_FusedConv_1[] = {{"activation", OM_ATTR_STRING, 0},
	{"activation_params", OM_ATTR_FLOATS, 0}, {"auto_pad", OM_ATTR_STRING, 0},
	{"dilations", OM_ATTR_INTS, 0}, {"group", OM_ATTR_INT, 0},
	{"kernel_shape", OM_ATTR_INTS, 0}, {"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* FusedConv-1: X W [B] [Z] -> Y */
static const om_sig sig_ms_FusedConv_1 = {1, 2, 4, 1, 1, 0xc, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_ms_FusedConv_1, NULL};
static const om_sig_attr attrs_ConvTranspose_1_v22[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"dilations", OM_ATTR_INTS, 0}, {"group", OM_ATTR_INT, 0},
	{"kernel_shape", OM_ATTR_INTS, 0}, {"output_padding", OM_ATTR_INTS, 0},
	{"output_shape", OM_ATTR_INTS, 0}, {"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* ConvTranspose-22: X W [B] -> Y */
static const om_sig sig_ConvTranspose_1_v22 = {22, 2, 3, 1, 1, 0x4, 0x0, 0x7, 0x1, 0x7, 0x1,
	attrs_ConvTranspose_1_v22, NULL};
static const om_sig_attr attrs_ConvTranspose_1[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"dilations", OM_ATTR_INTS, 0}, {"group", OM_ATTR_INT, 0},
	{"kernel_shape", OM_ATTR_INTS, 0}, {"output_padding", OM_ATTR_INTS, 0},
	{"output_shape", OM_ATTR_INTS, 0}, {"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* ConvTranspose-1: X W [B] -> Y */
static const om_sig sig_ConvTranspose_1 = {1, 2, 3, 1, 1, 0x4, 0x0, 0x7, 0x1, 0x0, 0x0,
	attrs_ConvTranspose_1, &sig_ConvTranspose_1_v22};
static const om_sig_attr attrs_ConvInteger_10[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"dilations", OM_ATTR_INTS, 0}, {"group", OM_ATTR_INT, 0},
	{"kernel_shape", OM_ATTR_INTS, 0}, {"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* ConvInteger-10: x w [x_zero_point] [w_zero_point] -> y */
static const om_sig sig_ConvInteger_10 = {10, 2, 4, 1, 1, 0xc, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_ConvInteger_10, NULL};
static const om_sig_attr attrs_QLinearConv_10[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"dilations", OM_ATTR_INTS, 0}, {"group", OM_ATTR_INT, 0},
	{"kernel_shape", OM_ATTR_INTS, 0}, {"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* QLinearConv-10: x x_scale x_zero_point w w_scale w_zero_point y_scale y_zero_point [B] -> y */
static const om_sig sig_QLinearConv_10 = {10, 8, 9, 1, 1, 0x100, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_QLinearConv_10, NULL};

/* ---- end of signatures ---- */

/* Conv and FusedConv apply a following activation (OM_OP_EPILOGUE) and a preceding Mul by a
 * factor per channel (OM_OP_IN_SCALE: conv_scaled) themselves; ConvTranspose the activation */
#define CONV_FLAGS (OM_OP_EXACT | OM_OP_LAYOUT | OM_OP_EPILOGUE | OM_OP_IN_SCALE)
/* Conv also adds the addend of an Add the planner absorbed (OM_OP_SUM: FusedConv's Z) */

static const om_op rows[] = {
	{"Conv", "", 1, conv_infer, conv_kernel, CONV_FLAGS | OM_OP_SUM, &sig_Conv_1, OM_OPC_CONV,
	 conv_layout, CONV_FLOAT, conv_choose},
	{"FusedConv", "com.microsoft", 1, fused_infer, conv_kernel,
	 CONV_FLAGS | OM_OP_INPLACE_LAST, &sig_ms_FusedConv_1, OM_OPC_MS_FUSED_CONV, conv_layout,
	 CONV_FUSED, conv_choose},
	{"ConvTranspose", "", 1, convt_infer, convt_kernel,
	 OM_OP_EXACT | OM_OP_LAYOUT | OM_OP_EPILOGUE, &sig_ConvTranspose_1,
	 OM_OPC_CONV_TRANSPOSE, convt_layout, CONV_TRANSPOSE, convt_choose},
	{"ConvInteger", "", 10, conv_infer, convint_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_ConvInteger_10, OM_OPC_NONE, NULL, CONV_INTEGER, int_choose},
	{"QLinearConv", "", 10, conv_infer, qlinearconv_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_QLinearConv_10, OM_OPC_NONE, qlinear_layout, CONV_QLINEAR, qlinear_choose},
};

const om_op_table om_ops_conv = OM_TABLE(rows);
