/* conv_dnnl.c — fast-mode 2-D Conv through oneDNN (conv_dnnl.h). The primitive, its reordered
 * weights and its blocked activation buffers are made on a step's first run and kept in the
 * step's kernel state; every run then only sets the data pointers, reorders X into the blocked
 * layout and Y back when the path is blocked, and executes. Every primitive runs on one
 * thread (Debian's oneDNN is built on OpenMP, whose idle team workers spin after each region):
 * at one thread the whole conv, at two or more single-threaded slices of its outputs over
 * omopt's pool (conv_dnnl_split.h), or the whole conv on the calling thread when oneDNN
 * refuses the slices; the products (num/gemm.c) do the same. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "conv_dnnl.h"

#ifndef OM_HAVE_DNNL

bool om_conv_dnnl_blockable(const om_spatial *sp, int64_t C, int64_t M, int64_t group,
			    int threads, bool nhwc)
{
	(void)sp, (void)C, (void)M, (void)group, (void)threads, (void)nhwc;
	return false;
}

bool om_conv_dnnl_takes(const om_ctx *c, const om_spatial *sp, int64_t N, int64_t C, int64_t M,
			int64_t group, const om_conv_epi *e)
{
	(void)c, (void)sp, (void)N, (void)C, (void)M, (void)group, (void)e;
	return false;
}

bool om_conv_dnnl(om_ctx *c, const om_spatial *sp, int64_t N, int64_t C, int64_t M,
		  int64_t group, const float *x, const float *w, const om_conv_epi *e, float *y,
		  om_kind *rc)
{
	(void)c, (void)sp, (void)N, (void)C, (void)M, (void)group, (void)x, (void)w, (void)e;
	(void)y, (void)rc;
	return false;
}

#else

#include <dnnl.h>
#include <omp.h>

#include "clones.h"
#include "conv_dnnl_common.h"
#include "conv_dnnl_split.h"
#include "conv_impl.h"
#include "conv_winograd.h"
#include "layout.h"
#include "parallel.h"

enum { DN_NONE, DN_NCHW, DN_BLOCKED };

/* The path for a conv, from bench/conv_layers.py (one thread, resnet50 / mobilenet_v3 /
 * efficientnet_b0 layers, ms, omopt's kernel -> oneDNN): 1x1 stride-1 unpadded convs in NCHW
 * (64-256 at 56x56: 1.27 -> 0.65; blocked with reorders loses), 3x3 stride-1 convs that
 * Winograd F(4x4) takes stay omopt's (64 at 56x56: 1.65 against 1.43, 128 at 28x28: 1.09
 * against 1.31), other group-1 convs blocked with reorders (F(2x2)'s 512 at 7x7: 7.8 -> 2.9,
 * the 7x7/2 stem: 11 -> 2.3), stride-1 depthwise convs blocked with reorders (5x5, 672 at 14x14:
 * 1.39 -> 0.17), strided depthwise ones stay omopt's (3x3/2, 96 at 112x112: 0.41 against 1.5).
 * Dilated convs (Winograd never takes them) as their undilated kind. At one thread a 1x1 conv
 * with Z or an activation stays omopt's too: its pointwise path applies them to each column
 * block while it is in cache (its products are oneDNN's sgemm), where oneDNN's NCHW
 * convolution would leave a pass over Y (its post-ops there ran 3-40x slower); ms a run:
 * resnet50 49.2-50.3 against 61-65, efficientnet_b0 14.9-15.4 against 15.5-15.7, mobilenet_v3
 * 8.0-8.2 against 8.6-8.8. At two threads oneDNN's convolution splits the product better (a
 * 7x7 image is one column block): resnet50 32-35 against 36-41. */
static int dn_layout(const om_spatial *sp, int64_t C, int64_t M, int64_t group,
		     const om_conv_epi *e, int threads, bool blocked)
{
	if (sp->n != 2)
		return DN_NONE;
	const bool dw = group > 1 && group == C && group == M;
	const bool s1 = sp->stride[0] == 1 && sp->stride[1] == 1;
	if (blocked) /* X or Y blocked already (the planner's choice: om_conv_dnnl_blockable) */
		return DN_BLOCKED;
	if (dw)
		return s1 ? DN_BLOCKED : DN_NONE;
	if (group != 1) /* grouped: regnet_y_400mf's 3x3 of 8 channels a group, 48 at 56x56:
			   1.0 ms in omopt's kernel against 0.29 blocked with reorders */
		return DN_BLOCKED;
	if (sp->k[0] == 1 && sp->k[1] == 1 && s1 && !sp->pb[0] && !sp->pb[1] && !sp->pe[0] &&
	    !sp->pe[1])
		return threads == 1 && (e->z || e->act != OM_ACT_NONE) ? DN_NONE : DN_NCHW;
	if (om_winograd_tile(sp, C, M) == 4) /* dilation 1 only */
		return DN_NONE;
	return DN_BLOCKED;
}

/* Winograd F(4x4) beats oneDNN's blocked 3x3 conv at one thread even without reorders
 * (resnet50 44.7 ms a run against 46.6 with its stages 1-2 blocked too), not at two (29.6
 * against 27.1: oneDNN splits its conv better) on AVX-512; on AVX2 without it, at two threads
 * too (Zen 3, resnet18's 64- and 128-channel 3x3 convs: about 1.0 ms against oneDNN's 1.6-1.7;
 * the run 28.4 -> 22.5 ms), nor for under 64 outputs or inputs, where
 * blocking lets the values around the conv stay blocked (densenet121's 128 -> 32 convs in its
 * blocked dense blocks: 42 -> 40 ms a run; squeezenet1_1's 16 -> 64 and 32 -> 128 expand
 * convs between blocked Concats: 4.4 -> 3.95 ms) */
bool om_conv_dnnl_blockable(const om_spatial *sp, int64_t C, int64_t M, int64_t group,
			    int threads, bool nhwc)
{
	if (sp->n != 2 || sp->dil[0] != 1 || sp->dil[1] != 1)
		return false;
	if (group > 1 && group == C && group == M) /* depthwise: its NHWC kernel loses */
		return !nhwc;
	/* grouped: whole blocks a group (oneDNN declines 8 a group in nChw16c: regnet's first
	 * stages, which then run blocked with reorders into the layout oneDNN picks); any in
	 * NHWC, where oneDNN has a JIT kernel for them (one thread, 440 channels in groups of 8
	 * at 7x7: 0.036 ms, 0.13 on NCHW; 16 a group at 28x28 0.36 against nChw16c's 0.30) */
	const int32_t b = om_layout_block();
	if (group > 1)
		return b > 0 && (nhwc || ((C / group) % b == 0 && (M / group) % b == 0));
	return (threads > 1 && !om_cpu_avx2_only()) || M < 64 || C < 64 ||
	       om_winograd_tile(sp, C, M) != 4;
}

enum { DN_KEY = 22 };
/* multiply-adds below which a conv runs on one thread whatever the run's count: at two
 * threads, shufflenet 1.79 -> 1.26 ms a run (its convs are small), mobilenet_v3 3.45 -> 3.10;
 * with 1e6 or more, mobilenet_v3's depthwise convs lost their split (3.5-3.9 ms). A conv of
 * one group does less a multiply-add to split: below 3e6, one thread (shufflenet_v2_x1_0's
 * 1x1 convs of 2.6e6: 2.85-2.94 -> 2.55-2.57 ms a run, googlenet 10.8 -> 10.3, regnet_y_400mf
 * 10.0 -> 9.7, squeezenet1_1 2.74 -> 2.81; mnasnet1_0 and mobilenet_v3 unchanged) */
#define DN_SMALL_MACS 5e5
#define DN_SMALL_DENSE_MACS 3e6
/* The same on AVX2 without AVX-512, where a conv takes about twice as long: a third of them
 * (Zen 3 at two threads: mobilenet_v3_small 1.74 -> 1.32 ms a run, its 1x1 convs of 2.7e6
 * 0.069 -> 0.036 ms; shufflenet_v2 6.27 -> 6.14; efficientnet_b0 unchanged) */
#define DN_SMALL_MACS_AVX2 2e5
#define DN_SMALL_DENSE_MACS_AVX2 1e6

typedef struct dn_state {
	int64_t key[DN_KEY]; /* geometry, bias, layout, threads, epilogue, blocked sides: others
				remake it */
	bool declined;       /* oneDNN refused the case: own kernels from now on */
	bool post;           /* Z and the activation are the primitive's post-ops */
	om_dnnl_conv d;      /* its scratch: bytes of the blocked X and Y; its x, y: the
				caller's when blocked already */
	dnnl_primitive_t rz; /* Z's reorder into Y's layout: NULL on the NCHW path */
	dnnl_memory_t zn;    /* the caller's NCHW Z */
	/* X scaled per channel (om_ctx.in_scale, one image): d.w is w0 (W in the primitive's
	 * layout) times the factor of each float's input channel, chan (-1: padding) */
	float *w0;
	int32_t *chan;
	size_t nw; /* floats of d.w */
	bool split;          /* at two threads or more: slices on omopt's pool (sp), not d */
	om_dnnl_split sp;
	/* with split: d made too, the first time a held pool ran the conv on this thread
	 * (dn_whole); whole: d is usable */
	bool whole_tried, whole;
} dn_state;

static void dn_release(void *p)
{
	dn_state *s = p;
	if (s->rz)
		dnnl_primitive_destroy(s->rz);
	if (s->zn)
		dnnl_memory_destroy(s->zn);
	om_dnnl_conv_release(&s->d);
	om_dnnl_split_release(&s->sp);
	free(s->w0);
	free(s->chan);
	memset(s, 0, sizeof *s);
}

/* Z (a sum: Y holds Z when the primitive runs) then the activation as oneDNN post-ops; false
 * when oneDNN has no form of the activation, or ours is faster: Swish (SiLU) runs
 * om_fast_swish_f32 over Y's planes after the primitive (oneDNN 2.6's swish post-op costs
 * 0.27 ns an element at one thread and did not speed up at two: efficientnet_b0 (2 images)
 * 16.1 -> 14.8 ms a run at one thread, 10.4 -> 10.0 at two) */
static bool dn_post_ops(dnnl_post_ops_t po, bool z, int act, float al, float be)
{
	static const dnnl_alg_kind_t alg[OM_ACT_KINDS] = {
		[OM_ACT_RELU] = dnnl_eltwise_relu,       [OM_ACT_LEAKY_RELU] = dnnl_eltwise_relu,
		[OM_ACT_TANH] = dnnl_eltwise_tanh,       [OM_ACT_SIGMOID] = dnnl_eltwise_logistic,
		[OM_ACT_CLIP] = dnnl_eltwise_clip_v2,    [OM_ACT_HARD_SWISH] = dnnl_eltwise_hardswish,
	};
	if (z && dnnl_post_ops_append_sum(po, 1.0f))
		return false;
	switch (act) {
	case OM_ACT_NONE:
		return true;
	case OM_ACT_RELU:
		al = 0;
		break;
	case OM_ACT_HARD_SIGMOID: /* clamp(al x + be, 0, 1) */
		return !dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, al, be) &&
		       !dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip_v2, 0.0f, 1.0f);
	case OM_ACT_HARD_SWISH: /* oneDNN's is x clamp(x / 6 + 1/2, 0, 1) */
		if (al != 1.0f / 6 || be != 0.5f)
			return false;
		break;
	default:
		break;
	}
	return act > OM_ACT_NONE && act < OM_ACT_KINDS && alg[act] &&
	       !dnnl_post_ops_append_eltwise(po, 1.0f, alg[act], al, be);
}

/* the convolution's primitive descriptor, with the epilogue e (its Z and activation) as
 * post-ops when oneDNN takes them (s->post set), else without. Blocked path only: oneDNN's
 * NCHW (gemm) convolution ran its post-ops far slower than a pass of our own (resnet50's 1x1
 * convs with a Relu and a sum: 0.6-1.3 ms -> 3-46 ms) */
static bool dn_desc(dn_state *s, const dnnl_convolution_desc_t *cd, int layout,
		    const om_conv_epi *e, dnnl_primitive_desc_t *pd)
{
	dnnl_primitive_attr_t attr = NULL;
	dnnl_post_ops_t po = NULL;
	s->post = layout == DN_BLOCKED && !dnnl_primitive_attr_create(&attr) &&
		  !dnnl_post_ops_create(&po) &&
		  dn_post_ops(po, e->z != NULL, e->act, e->alpha, e->beta) &&
		  !dnnl_primitive_attr_set_post_ops(attr, po) &&
		  !dnnl_primitive_desc_create(pd, cd, attr, s->d.eng, NULL);
	if (po)
		dnnl_post_ops_destroy(po);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	return s->post || !dnnl_primitive_desc_create(pd, cd, NULL, s->d.eng, NULL);
}

/* the primitive and its memories for key (see dn_key) and epilogue e; false when oneDNN
 * refuses the case */
static bool dn_make(dn_state *s, const int64_t *k, const om_conv_epi *e, const float *w)
{
	const int64_t N = k[0], C = k[1], H = k[2], W = k[3], M = k[4], KH = k[5], KW = k[6];
	const int64_t G = k[13], OH = k[14] >> 32, OW = k[14] & 0xffffffff;
	const bool bias = k[15] & 1;
	const int layout = (int)((k[15] >> 1) & 0x7f);
	const bool bin = k[21] & 1, bout = k[21] & 2; /* X, Y blocked already (om_ctx.blocked) */
	const int64_t block = (k[21] >> 2 & 0x3f) - 1; /* om_ctx.block, OM_BLOCK_NHWC: -1 */
	const dnnl_format_tag_t blk = block == 16  ? dnnl_nChw16c
				      : block == 8 ? dnnl_nChw8c
						   : dnnl_nhwc;
	om_dnnl_conv *d = &s->d;
	if (!om_dnnl_conv_open(d))
		return false;
	const dnnl_dims_t sd = {N, C, H, W}, dd = {N, M, OH, OW}, bd = {M};
	const dnnl_format_tag_t act = layout == DN_NCHW ? dnnl_nchw : dnnl_format_tag_any;
	dnnl_memory_desc_t src, dst, bmd, wuser, wany, xs, ys;
	if (dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32, bin ? blk : act) ||
	    dnnl_memory_desc_init_by_tag(&dst, 4, dd, dnnl_f32, bout ? blk : act) ||
	    dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_x) ||
	    dnnl_memory_desc_init_by_tag(&xs, 4, sd, dnnl_f32, dnnl_nchw) ||
	    dnnl_memory_desc_init_by_tag(&ys, 4, dd, dnnl_f32, dnnl_nchw) ||
	    !om_dnnl_conv_weights_md(&wuser, &wany, G, M, C, KH, KW, dnnl_f32))
		return false;
	dnnl_convolution_desc_t cd;
	dnnl_primitive_desc_t pd;
	if (!om_dnnl_conv_desc(&cd, &src, &wany, bias ? &bmd : NULL, &dst, k + 7, k + 9, k + 11,
			       k + 16) ||
	    !dn_desc(s, &cd, layout, e, &pd))
		return false;
	if (!om_dnnl_conv_jit(pd)) {
		dnnl_primitive_desc_destroy(pd);
		return false;
	}
	const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
	const dnnl_memory_desc_t *dmd = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
	bool ok = om_dnnl_conv_prim(d, pd, &bmd);
	if (ok && layout == DN_NCHW)
		ok = !dnnl_memory_create(&d->x, smd, d->eng, DNNL_MEMORY_NONE) &&
		     !dnnl_memory_create(&d->y, dmd, d->eng, DNNL_MEMORY_NONE);
	else if (ok)
		/* a side blocked already is the caller's memory; the other is reordered (a
		 * 3-channel stem's X stays NCHW when the primitive takes it: its copy cost
		 * 0.03-0.04 ms) */
		ok = om_dnnl_conv_side(d, smd, &xs, bin, &d->x, &d->xn, &d->rin, false) &&
		     om_dnnl_conv_side(d, dmd, &ys, bout, &d->y, &d->yn, &d->rout, true) &&
		     (!(s->post && e->z) || bout ||
		      (!dnnl_memory_create(&s->zn, &ys, d->eng, DNNL_MEMORY_NONE) &&
		       om_dnnl_conv_reorder(d, &ys, dmd, &s->rz)));
	/* the weights, reordered once into the primitive's layout; with a factor per input
	 * channel (k[21] bit 8) also kept unscaled, with each float's channel found by reordering
	 * a W whose values are their channels (+ 1: the layout's padding holds 0) */
	dnnl_memory_t wu = NULL;
	dnnl_primitive_t wr = NULL;
	ok = ok && om_dnnl_conv_weights(d, &wuser, w, &wu, &wr);
	if (ok && (k[21] >> 8 & 1))
		ok = om_dnnl_conv_channels(d->eng, d->st, d->w, wr, wu, wmd,
					   (const int64_t[]){M, C / G, G, KH * KW}, 0, &s->w0,
					   &s->chan, &s->nw);
	om_dnnl_conv_weights_free(wu, wr);
	dnnl_primitive_desc_destroy(pd);
	return ok;
}

/* the slices' primitive descriptors (conv_dnnl_split.h): with the epilogue as post-ops on
 * the blocked path when the first slice's took them (s->post), then every slice alike */
typedef struct dn_split_ctx {
	dn_state *s;
	const om_conv_epi *e;
	int layout;
	bool first;
} dn_split_ctx;

static bool dn_split_pd(void *ctx, const dnnl_convolution_desc_t *cd,
			const_dnnl_primitive_attr_t base, int64_t m0, int64_t m1,
			dnnl_primitive_desc_t *pd)
{
	dn_split_ctx *x = ctx;
	(void)m0, (void)m1;
	const bool want = x->first ? x->layout == DN_BLOCKED : x->s->post;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_post_ops_t po = NULL;
	const bool post = want && !dnnl_primitive_attr_clone(&attr, base) &&
			  !dnnl_post_ops_create(&po) &&
			  dn_post_ops(po, x->e->z != NULL, x->e->act, x->e->alpha, x->e->beta) &&
			  !dnnl_primitive_attr_set_post_ops(attr, po) &&
			  !dnnl_primitive_desc_create(pd, cd, attr, x->s->sp.eng, NULL);
	if (po)
		dnnl_post_ops_destroy(po);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	if (x->first)
		x->s->post = post, x->first = false;
	if (post || x->s->post) /* a later slice without the first's post-ops: none */
		return post;
	return !dnnl_primitive_desc_create(pd, cd, base, x->s->sp.eng, NULL);
}

/* s->sp for key (see dn_key) at `threads` threads: false when oneDNN refuses a slice */
static bool dn_split_make(dn_state *s, const int64_t *k, const om_conv_epi *e, const float *w,
			  int threads)
{
	const int layout = (int)((k[15] >> 1) & 0x7f);
	const bool bin = k[21] & 1, bout = k[21] & 2;
	const int64_t block = (k[21] >> 2 & 0x3f) - 1;
	const dnnl_format_tag_t blk = block == 16 ? dnnl_nChw16c
				      : block == 8 ? dnnl_nChw8c
						   : dnnl_nhwc;
	const dnnl_format_tag_t act = layout == DN_NCHW ? dnnl_nchw : dnnl_format_tag_any;
	om_dnnl_split_geo g = {
		.N = k[0], .C = k[1], .H = k[2], .W = k[3], .M = k[4], .kh = k[5], .kw = k[6],
		.stride = {k[7], k[8]}, .pb = {k[9], k[10]}, .pe = {k[11], k[12]}, .G = k[13],
		.OH = k[14] >> 32, .OW = k[14] & 0xffffffff, .bias = k[15] & 1,
		.dil = {k[16], k[17]}, .xt = dnnl_f32, .yt = dnnl_f32, .wt = dnnl_f32,
		.bt = dnnl_f32, .z = e->z != NULL, .xtag = bin ? blk : dnnl_nchw,
		.ytag = bout ? blk : dnnl_nchw, .src = bin ? blk : act, .dst = bout ? blk : act};
	if (!om_dnnl_split_tag(g.xtag) || !om_dnnl_split_tag(g.ytag))
		return false;
	dn_split_ctx x = {s, e, layout, true};
	const int saved = om_par_threads_set(1); /* oneDNN sizes its split at creation */
	const bool ok = om_dnnl_split_make(&s->sp, &g, threads, w, k[21] >> 8 & 1, dn_split_pd,
					   &x);
	om_par_threads_restore(saved);
	return ok;
}

/* Whether a split conv runs whole on the calling thread this time (not in a deterministic
 * session: om_ctx.deterministic): when the pool is held (a split lost lately to another
 * process's work, num/parallel.c), the slices would run one after another on this thread,
 * 5-10% slower than the one primitive for all of it (resnet18 with every job held: 20.3 ms a
 * run against 19.4 at one thread; whole: 18.4-18.8 against 18.5-19.0). That primitive (d, made as
 * at one thread for this step's layout) is made the first time, beside the slices, with their
 * post-ops or not at all. */
static bool dn_whole(dn_state *s, const int64_t *k, const om_conv_epi *e, const float *w,
		     int threads)
{
	if (!om_par_held(threads))
		return false;
	if (!s->whole_tried) {
		s->whole_tried = true;
		const bool post = s->post;
		const int saved = om_par_threads_set(1); /* oneDNN sizes its kernels by it */
		s->whole = dn_make(s, k, e, w) && s->post == post;
		om_par_threads_restore(saved);
		s->post = post;
		if (!s->whole) {
			om_dnnl_conv_release(&s->d);
			if (s->rz)
				dnnl_primitive_destroy(s->rz);
			if (s->zn)
				dnnl_memory_destroy(s->zn);
			free(s->w0), free(s->chan);
			s->rz = NULL, s->zn = NULL, s->w0 = NULL, s->chan = NULL, s->nw = 0;
		}
	}
	return s->whole;
}

/* the epilogue of Y's planes [lo, hi) (image n, channel m: plane n M + m) */
typedef struct epi_planes {
	om_conv_epi e;
	int64_t M, P;
	float *y;
} epi_planes;

enum { EPI_GRAIN = 32768 }; /* elements: the least a thread's share of an epilogue is worth */

static void epi_rows(void *arg, int64_t lo, int64_t hi)
{
	const epi_planes *p = arg;
	for (int64_t i = lo; i < hi; i++)
		om_conv_epi_row(&p->e, i % p->M, i * p->P, p->y + i * p->P, p->P);
}

/* one execution on the calling thread (the primitive was made for one); oneDNN's status
 * (dnnl_success: done). z: Y's bytes before the sum post-op (NULL when Z is not one; y itself
 * when Y was placed over Z). */
static dnnl_status_t dn_run(dn_state *s, const float *x, const float *bias, const float *z,
			    const float *factor, float *y, size_t ybytes)
{
	omp_set_num_threads(1);
	dnnl_status_t r;
	if (factor) { /* this run's weights: W times X's factors (dn_state) */
		float *w;
		if ((r = dnnl_memory_get_data_handle(s->d.w, (void **)&w)))
			return r;
		om_dnnl_conv_scale(w, s->w0, s->chan, s->nw, factor);
	}
	if ((r = om_dnnl_conv_bind(&s->d, x, bias, y)))
		return r;
	if (z && s->rz) {
		dnnl_exec_arg_t a[] = {{DNNL_ARG_FROM, s->zn}, {DNNL_ARG_TO, s->d.y}};
		if ((r = dnnl_memory_set_data_handle(s->zn, (void *)z)) ||
		    (r = dnnl_primitive_execute(s->rz, s->d.st, 2, a)))
			return r;
	} else if (z && z != y) {
		memcpy(y, z, ybytes);
	}
	return om_dnnl_conv_exec(&s->d, bias != NULL);
}

/* The layout oneDNN runs the conv in (DN_NONE: not oneDNN's) and its threads */
static int dn_pick(const om_ctx *c, const om_spatial *sp, int64_t N, int64_t C, int64_t M,
		   int64_t group, const om_conv_epi *e, int *threads)
{
	if (c->exact || !(c->const_in & 2))
		return DN_NONE;
	const bool bin = c->blocked & OM_LAYOUT_IN(0), bout = c->blocked & OM_LAYOUT_OUT(0);
	/* X times a factor per channel (om_ctx.in_scale): one image only */
	if (c->in_scale && N != 1)
		return DN_NONE;
	/* a conv too small to split: one thread (the pool's wake-up and barrier cost more) */
	const double macs = (double)N * (double)M * (double)(sp->out[0] * sp->out[1]) *
			    (double)(C / group) * (double)(sp->k[0] * sp->k[1]);
#ifdef OM_HAVE_AVX2_BUILDS
	const bool avx2 = om_cpu_avx2_only();
#else
	const bool avx2 = false;
#endif
	const double small = group == 1 ? (avx2 ? DN_SMALL_DENSE_MACS_AVX2 : DN_SMALL_DENSE_MACS)
					: (avx2 ? DN_SMALL_MACS_AVX2 : DN_SMALL_MACS);
	*threads = macs < small ? 1 : c->threads;
	const int layout = dn_layout(sp, C, M, group, e, *threads, bin || bout);
	if (layout == DN_NONE || sp->in[0] > INT32_MAX || sp->in[1] > INT32_MAX ||
	    sp->out[0] > INT32_MAX || sp->out[1] > INT32_MAX)
		return DN_NONE;
	return layout;
}

bool om_conv_dnnl_takes(const om_ctx *c, const om_spatial *sp, int64_t N, int64_t C, int64_t M,
			int64_t group, const om_conv_epi *e)
{
	int threads;
	return dn_pick(c, sp, N, C, M, group, e, &threads) != DN_NONE;
}

bool om_conv_dnnl(om_ctx *c, const om_spatial *sp, int64_t N, int64_t C, int64_t M,
		  int64_t group, const float *x, const float *w, const om_conv_epi *e, float *y,
		  om_kind *rc)
{
	int threads;
	if (!c->state || !c->state_release)
		return false;
	const int layout = dn_pick(c, sp, N, C, M, group, e, &threads);
	if (layout == DN_NONE)
		return false;
	const bool bin = c->blocked & OM_LAYOUT_IN(0), bout = c->blocked & OM_LAYOUT_OUT(0);
	/* X times a factor per channel (om_ctx.in_scale): one image only, the first C floats */
	const float *factor = c->in_scale ? c->in_scale->data : NULL;
	int32_t ab[2];
	memcpy(&ab[0], &e->alpha, sizeof ab[0]);
	memcpy(&ab[1], &e->beta, sizeof ab[1]);
	const int64_t key[DN_KEY] = {N, C, sp->in[0], sp->in[1], M, sp->k[0], sp->k[1],
				     sp->stride[0], sp->stride[1], sp->pb[0], sp->pb[1], sp->pe[0],
				     sp->pe[1], group, sp->out[0] << 32 | sp->out[1],
				     (int64_t)threads << 8 | (int64_t)layout << 1 |
					     (e->bias != NULL),
				     sp->dil[0], sp->dil[1], (int64_t)e->act << 1 | (e->z != NULL),
				     ab[0], ab[1],
				     bin | bout << 1 | (int64_t)(c->block + 1) << 2 |
					     (int64_t)(factor != NULL) << 8};
	/* W is a constant (const_in): the same bytes in every run, even where a bridged float16
	 * kernel sees a fresh float copy, so the shapes are all there is to check */
	_Static_assert(offsetof(dn_state, key) == 0, "om_ctx_state_keyed: the key first");
	bool made;
	dn_state *s = om_ctx_state_keyed(c, dn_release, key, DN_KEY, sizeof *s, &made);
	if (!s)
		return false;
	if (made)
		/* at two threads or more, single-threaded slices on omopt's pool: an OpenMP team's
		 * workers spin after every region (a busy core's lost time) */
		s->split = threads > 1 && dn_split_make(s, key, e, w, threads);
	if (made && !s->split) {
		/* one primitive on the calling thread alone (at two threads or more, when oneDNN
		 * refused the slices): an OpenMP team's workers would spin after every region.
		 * oneDNN sizes its kernels' work split by the OpenMP threads at creation: the runs'
		 * count (made for 2 threads and run on 1, a primitive was 10-50x slower) */
		omp_set_num_threads(1);
		if (!dn_make(s, key, e, w)) {
			dn_release(s);
			memcpy(s->key, key, sizeof key);
			s->declined = true;
		}
	}
	if (s->declined)
		return false;
	const bool held = s->split && !c->deterministic && dn_whole(s, key, e, w, threads);
	const bool split = s->split && !held;
	om_ctx_chose(c, held ? OM_CONV_ONEDNN_HELD : OM_CONV_ONEDNN);
	const size_t scratch = split ? s->sp.scratch : s->d.scratch;
	if (scratch && (*rc = om_ctx_reserve(c, scratch, "a blocked copy for oneDNN")))
		return true;
	/* Z and the activation, when they are not the primitive's (the bias is): planes of Y
	 * over the run's threads after it (a blocked Y: planes of `block` channels, Z blocked
	 * alike), from a copy of Z when Y is placed over it */
	const int64_t P = sp->out[0] * sp->out[1];
	const int64_t lanes = bout ? c->out[0]->dims[4] : 1;
	const int64_t planes = N * ((M + lanes - 1) / lanes);
	epi_planes ep = {*e, planes / N, P * lanes, y};
	ep.e.bias = NULL;
	float *z = NULL;
	if (!s->post && (*rc = om_conv_epi_keep_z(c, &ep.e, y, c->out[0]->nbytes, &z)))
		return true;
	const dnnl_status_t r =
		split ? om_dnnl_split_run(&s->sp, x, e->bias, s->post ? e->z : NULL, factor, y,
					  threads)
		      : dn_run(s, x, e->bias, s->post ? e->z : NULL, factor, y,
			       c->out[0]->nbytes);
	*rc = om_dnnl_conv_status(c, r, "convolution");
	/* over the threads only after a split conv: after a whole one, Y is in this core's cache,
	 * and a worker's half of the pass moved it to the other core for the next op (often run
	 * whole too) to read back (2 threads on a Xeon VM, alternating builds: mnasnet1_0 3.77-4.14
	 * -> 3.65-3.96 ms a run, efficientnet_b0 7.26-7.90 -> 7.10-7.69) */
	if (r == dnnl_success && !s->post && om_conv_epi_any(&ep.e))
		om_par_for(split ? threads : 1, planes, (EPI_GRAIN + ep.P - 1) / ep.P, epi_rows,
			   &ep);
	om_ctx_scratch_done(c, z);
	return true;
}

#endif
