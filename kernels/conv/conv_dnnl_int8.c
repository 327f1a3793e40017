/* conv_dnnl_int8.c — fast-mode QLinearConv through oneDNN's int8 convolution (conv_dnnl_int8.h):
 * s8/u8 source with its zero point, s8 weights reordered once into the primitive's layout
 * (with oneDNN's s8 compensation), s32 bias, output scales per channel, the destination's zero
 * point; X and Y in NHWC where the planner keeps them so (read and written in place), else
 * reordered between NCHW and the layout oneDNN picks (NHWC or blocked). The
 * primitive and its buffers live in the step's kernel state; it runs on one thread, or as
 * single-threaded slices over omopt's pool at two threads or more, as in conv_dnnl.c. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "conv_dnnl_int8.h"
#include "conv_int.h"
#include "gemm_int.h"
#include "igemm_quads.h"

/* Fast mode, 2-D, W (slot 3), w_scale (4) and w_zp (5) constants of int8 with zero points 0 */
static bool qconv_shape_takes(const om_ctx *c, const om_spatial *sp)
{
	const uint64_t need = 1u << 3 | 1u << 4 | 1u << 5;
	if (c->exact || (c->const_in & need) != need || c->nin < 8 || sp->n != 2 ||
	    c->in[3]->dtype != OM_INT8 || c->in[5]->dtype != OM_INT8)
		return false;
	const int8_t *wz = c->in[5]->data;
	for (int64_t i = 0, n = om_tensor_numel(c->in[5]); i < n; i++)
		if (wz[i])
			return false;
	return sp->in[0] <= INT32_MAX && sp->in[1] <= INT32_MAX;
}

/* Whether oneDNN's sums are exact: with VNNI always; without it (om_dnnl_int8_exact) for a
 * uint8 X only (its int8 kernels there halve the weights: om_qconv_dnnl gives them an int8 X
 * as uint8, x ^ 0x80 with its zero point + 128), depthwise (one input and one output a group:
 * products not paired) or with weights of magnitude 64 at most, whose pairs of products
 * (255 x 128 at most) fit the 16 bits vpmaddubsw saturates to */
static bool qconv_sums_exact(const om_ctx *c)
{
	if (om_dnnl_int8_exact())
		return true;
	const om_tensor *W = c->in[3];
	if (W->dims[1] == 1 && om_attr_int(c->node, "group", 1) == W->dims[0])
		return true;
	const int8_t *w = W->data;
	for (int64_t i = 0, n = om_tensor_numel(W); i < n; i++)
		if (w[i] < -64 || w[i] > 64)
			return false;
	return true;
}

/* Whether the integer convs' quads (conv_int.c, igemm_quads.h: exact on AVX2 without VNNI,
 * W packed once) take a conv that is not depthwise in place of oneDNN's, whose kernels there
 * would be exact for weights of magnitude 64 at most alone: decided before the step's state
 * slot is touched, which the quads' packed W then keeps */
static bool quads_instead(const om_ctx *c)
{
	const om_tensor *W = c->in[3];
	int64_t Kg = 1;
	for (int32_t i = 1; i < W->rank; i++)
		Kg *= W->dims[i];
	return !om_dnnl_int8_exact() && om_iquads_ok() && om_conv_igemm_takes(c, Kg) &&
	       !(W->dims[1] == 1 && om_attr_int(c->node, "group", 1) == W->dims[0]);
}

bool om_qconv_dnnl_takes(const om_ctx *c, const om_spatial *sp)
{
	return qconv_shape_takes(c, sp) && !quads_instead(c) && qconv_sums_exact(c);
}

#ifndef OM_HAVE_DNNL

bool om_qconv_dnnl_nhwc(const om_ctx *c, const om_spatial *sp)
{
	(void)c, (void)sp;
	return false;
}

bool om_qconv_dnnl(om_ctx *c, const om_qconv *q, om_kind *rc)
{
	(void)c, (void)q, (void)rc;
	return false;
}

#else

#include <dnnl.h>
#include <omp.h>

#include "conv_dnnl_common.h"
#include "conv_dnnl_split.h"
#include "parallel.h"

bool om_qconv_dnnl_nhwc(const om_ctx *c, const om_spatial *sp)
{
	return om_qconv_dnnl_takes(c, sp);
}

enum { QK_KEY = 24 };
/* multiply-adds below which the conv runs on one thread (conv_dnnl.c's reason); a conv of
 * one group with VNNI does a multiply-add in a fraction of the time: mobilenet_v3_small's
 * QDQ 1x1 convs of 2.7e6 took 10 us on one thread of a Zen 5 VM and 25-55 us in two slices
 * (the model at 2 threads: 1.45 -> 1.40 ms a run at 4e6, within the machine's noise; 16e6
 * took mobilenet_v2's 3.1 -> 4.3 ms) */
#define QK_SMALL_MACS 1e6
#define QK_SMALL_DENSE_MACS 4e6

typedef struct qk_state {
	int64_t key[QK_KEY]; /* geometry, types, zero points, scales, threads: others remake it */
	bool declined;       /* oneDNN refused the case (or has only its reference kernel) */
	om_dnnl_conv d;      /* X and Y reordered between NCHW and the primitive's layout */
	bool split;          /* at two threads or more: slices on omopt's pool (sp), not d */
	om_dnnl_split sp;
} qk_state;

static void qk_release(void *p)
{
	qk_state *s = p;
	om_dnnl_conv_release(&s->d);
	om_dnnl_split_release(&s->sp);
	memset(s, 0, sizeof *s);
}

/* the attributes of outputs [m0, m1): output scales x_scale w_scale[m] / y_scale, the zero
 * points of X and Y */
static bool qk_attr(const om_qconv *q, dnnl_primitive_attr_t attr, int64_t m0, int64_t m1)
{
	const int64_t n = q->nw_scale > 1 ? m1 - m0 : q->nw_scale;
	const float *ws = q->nw_scale > 1 ? q->w_scale + m0 : q->w_scale;
	float *sc = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
	if (!sc)
		return false;
	for (int64_t m = 0; m < n; m++)
		sc[m] = q->x_scale * ws[m] / q->y_scale;
	const int32_t xz = q->x_zp, yz = q->y_zp;
	const bool ok = !dnnl_primitive_attr_set_output_scales(attr, n, q->nw_scale > 1 ? 2 : 0,
							       sc) &&
			(!xz || !dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0,
								     &xz)) &&
			(!yz || !dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_DST, 1, 0,
								     &yz));
	free(sc);
	return ok;
}

static dnnl_data_type_t qk_type(int32_t t)
{
	return t == OM_INT8 ? dnnl_s8 : dnnl_u8;
}

/* the primitive, its memories and the reordered weights; false when oneDNN refuses the case
 * or offers only its reference kernel (slower than ours) */
static bool qk_make(qk_state *s, const om_qconv *q)
{
	om_dnnl_conv *d = &s->d;
	const om_spatial *sp = q->sp;
	const int64_t G = q->group, M = q->M, C = q->C;
	if (!om_dnnl_conv_open(d))
		return false;
	const dnnl_dims_t sd = {q->N, C, sp->in[0], sp->in[1]};
	const dnnl_dims_t dd = {q->N, M, sp->out[0], sp->out[1]}, bd = {M};
	dnnl_memory_desc_t src, dst, bmd, wuser, wany, xs, ys;
	if (dnnl_memory_desc_init_by_tag(&src, 4, sd, qk_type(q->xtype), dnnl_format_tag_any) ||
	    dnnl_memory_desc_init_by_tag(&dst, 4, dd, qk_type(q->ytype), dnnl_format_tag_any) ||
	    dnnl_memory_desc_init_by_tag(&xs, 4, sd, qk_type(q->xtype),
					 q->x_nhwc ? dnnl_nhwc : dnnl_nchw) ||
	    dnnl_memory_desc_init_by_tag(&ys, 4, dd, qk_type(q->ytype),
					 q->y_nhwc ? dnnl_nhwc : dnnl_nchw) ||
	    dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_s32, dnnl_x) ||
	    !om_dnnl_conv_weights_md(&wuser, &wany, G, M, C, sp->k[0], sp->k[1], dnnl_s8))
		return false;
	dnnl_convolution_desc_t cd;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_primitive_desc_t pd = NULL;
	bool ok = om_dnnl_conv_desc(&cd, &src, &wany, q->bias ? &bmd : NULL, &dst, sp->stride,
				    sp->pb, sp->pe, sp->dil) &&
		  !dnnl_primitive_attr_create(&attr) && qk_attr(q, attr, 0, M) &&
		  !dnnl_primitive_desc_create(&pd, &cd, attr, d->eng, NULL);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	if (!ok || !om_dnnl_conv_jit(pd)) {
		if (pd)
			dnnl_primitive_desc_destroy(pd);
		return false;
	}
	const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
	const dnnl_memory_desc_t *dmd = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
	ok = om_dnnl_conv_prim(d, pd, &bmd) &&
	     om_dnnl_conv_side(d, smd, &xs, false, &d->x, &d->xn, &d->rin, false) &&
	     om_dnnl_conv_side(d, dmd, &ys, false, &d->y, &d->yn, &d->rout, true);
	/* the weights, reordered once (the s8 source's compensation computed there) */
	dnnl_memory_t wu = NULL;
	dnnl_primitive_t wr = NULL;
	ok = ok && om_dnnl_conv_weights(d, &wuser, q->w, &wu, &wr);
	om_dnnl_conv_weights_free(wu, wr);
	dnnl_primitive_desc_destroy(pd);
	return ok;
}

/* a slice's primitive descriptor (conv_dnnl_split.h): its outputs' scales */
static bool qk_split_pd(void *ctx, const dnnl_convolution_desc_t *cd,
			const_dnnl_primitive_attr_t base, int64_t m0, int64_t m1,
			dnnl_primitive_desc_t *pd)
{
	const om_qconv *q = ((void **)ctx)[0];
	const dnnl_engine_t eng = *(const dnnl_engine_t *)((void **)ctx)[1];
	dnnl_primitive_attr_t attr = NULL;
	const bool ok = !dnnl_primitive_attr_clone(&attr, base) && qk_attr(q, attr, m0, m1) &&
			!dnnl_primitive_desc_create(pd, cd, attr, eng, NULL);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	return ok;
}

/* s->sp for q at `threads` threads; false when oneDNN refuses a slice */
static bool qk_split_make(qk_state *s, const om_qconv *q, int threads)
{
	const om_spatial *sp = q->sp;
	const om_dnnl_split_geo g = {
		.N = q->N, .C = q->C, .H = sp->in[0], .W = sp->in[1], .M = q->M,
		.OH = sp->out[0], .OW = sp->out[1], .G = q->group, .kh = sp->k[0],
		.kw = sp->k[1], .stride = {sp->stride[0], sp->stride[1]},
		.pb = {sp->pb[0], sp->pb[1]}, .pe = {sp->pe[0], sp->pe[1]},
		.dil = {sp->dil[0], sp->dil[1]}, .xt = qk_type(q->xtype), .yt = qk_type(q->ytype),
		.wt = dnnl_s8, .bt = dnnl_s32, .bias = q->bias != NULL,
		.xtag = q->x_nhwc ? dnnl_nhwc : dnnl_nchw, .ytag = q->y_nhwc ? dnnl_nhwc : dnnl_nchw,
		.src = q->x_nhwc ? dnnl_nhwc : dnnl_format_tag_any,
		.dst = q->y_nhwc ? dnnl_nhwc : dnnl_format_tag_any};
	void *ctx[2] = {(void *)q, &s->sp.eng};
	const int saved = om_par_threads_set(1); /* oneDNN sizes its split at creation */
	const bool ok = om_dnnl_split_make(&s->sp, &g, threads, q->w, false, qk_split_pd, ctx);
	om_par_threads_restore(saved);
	return ok;
}

static dnnl_status_t qk_run(qk_state *s, const om_qconv *q)
{
	omp_set_num_threads(1); /* the primitive was made for one thread (om_conv_dnnl_int8) */
	const dnnl_status_t r = om_dnnl_conv_bind(&s->d, q->x, q->bias, q->y);
	return r ? r : om_dnnl_conv_exec(&s->d, q->bias != NULL);
}

static int64_t float_bits(float f)
{
	uint32_t b;
	memcpy(&b, &f, sizeof b);
	return b;
}

/* X's n bytes ^ 0x80 into *u (om_ctx_scratch's): an int8 X as uint8 */
static om_kind flip_x(om_ctx *c, const void *x, uint8_t **u)
{
	const size_t n = (size_t)om_tensor_numel(c->in[0]);
	om_kind rc = om_ctx_scratch(c, n, "X as uint8", (void **)u);
	if (rc)
		return rc;
	const uint8_t *restrict s = x;
	uint8_t *restrict d = *u; /* (u's address escaped: a copy the loop can vectorize) */
	for (size_t i = 0; i < n; i++)
		d[i] = s[i] ^ 0x80;
	return OM_OK;
}

static bool qconv_dnnl_run(om_ctx *c, const om_qconv *q, bool flip, om_kind *rc);

bool om_qconv_dnnl(om_ctx *c, const om_qconv *q, om_kind *rc)
{
	if (!c->state || !c->state_release || !qconv_shape_takes(c, q->sp) || quads_instead(c))
		return false;
	/* an int8 X as uint8 where oneDNN's int8 kernels would halve the weights (no VNNI): its
	 * zero point + 128 and x ^ 0x80, the bytes made only when the primitive runs */
	om_qconv u = *q;
	const bool flip = q->xtype == OM_INT8 && !om_dnnl_int8_exact();
	if (flip)
		u.xtype = OM_UINT8, u.x_zp += 128;
	return qconv_dnnl_run(c, &u, flip, rc);
}

/* q's conv through the step's primitive (flip: q->x is int8 still, to give as uint8) */
static bool qconv_dnnl_run(om_ctx *c, const om_qconv *q, bool flip, om_kind *rc)
{
	const om_spatial *sp = q->sp;
	if (q->N == 0 || q->M == 0 || sp->out[0] * sp->out[1] == 0 || q->C == 0)
		return false;
	const double macs = (double)q->N * (double)q->M * (double)(sp->out[0] * sp->out[1]) *
			    (double)(q->C / q->group) * (double)(sp->k[0] * sp->k[1]);
	const double small = q->group == 1 && om_dnnl_int8_exact() ? QK_SMALL_DENSE_MACS
								    : QK_SMALL_MACS;
	const int threads = macs < small ? 1 : c->threads;
	/* W and w_scale are constants (om_qconv_dnnl_takes): the shapes, types, zero points and
	 * the other scales are all there is to check */
	const int64_t key[QK_KEY] = {q->N, q->C, sp->in[0], sp->in[1], q->M, sp->k[0], sp->k[1],
				     sp->stride[0], sp->stride[1], sp->pb[0], sp->pb[1], sp->pe[0],
				     sp->pe[1], q->group, sp->out[0], sp->out[1], sp->dil[0],
				     sp->dil[1], (int64_t)q->xtype << 16 | q->ytype << 8 |
					     q->x_nhwc << 2 | q->y_nhwc << 1 | (q->bias != NULL),
				     q->x_zp, q->y_zp, threads,
				     float_bits(q->x_scale) << 32 | float_bits(q->y_scale),
				     q->nw_scale};
	_Static_assert(offsetof(qk_state, key) == 0, "om_ctx_state_keyed: the key first");
	bool made;
	qk_state *s = om_ctx_state_keyed(c, qk_release, key, QK_KEY, sizeof *s, &made);
	if (!s)
		return false;
	if (made && !qconv_sums_exact(c)) { /* read once per geometry: W is a constant */
		qk_release(s);
		memcpy(s->key, key, sizeof key);
		s->declined = true;
	}
	if (made && !s->declined) /* at two threads or more, single-threaded slices */
		s->split = threads > 1 && qk_split_make(s, q, threads);
	if (made && !s->declined && !s->split) {
		/* one primitive on the calling thread alone: an OpenMP team's workers would spin
		 * after every region; oneDNN sizes its split at creation */
		omp_set_num_threads(1);
		if (!qk_make(s, q)) {
			qk_release(s);
			memcpy(s->key, key, sizeof key);
			s->declined = true;
		}
	}
	if (s->declined)
		return false;
	om_qconv f = *q;
	uint8_t *flipped = NULL;
	if (flip && (*rc = flip_x(c, q->x, &flipped)))
		return true;
	if (flipped)
		f.x = flipped, q = &f;
	const size_t scratch = s->split ? s->sp.scratch : s->d.scratch;
	if (scratch && (*rc = om_ctx_reserve(c, scratch, "oneDNN's copies of X and Y"))) {
		om_ctx_scratch_done(c, flipped);
		return true;
	}
	om_ctx_chose(c, OM_QCONV_ONEDNN);
	const dnnl_status_t r =
		s->split ? om_dnnl_split_run(&s->sp, q->x, q->bias, NULL, NULL, q->y, threads)
			 : qk_run(s, q);
	*rc = om_dnnl_conv_status(c, r, "int8 convolution");
	om_ctx_scratch_done(c, flipped);
	return true;
}

#endif
