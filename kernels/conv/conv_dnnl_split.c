/* conv_dnnl_split.c — a oneDNN convolution cut into slices, each a single-threaded primitive,
 * run as pieces on omopt's pool (conv_dnnl_split.h). Two cuts:
 * - bands of output rows, when Y is NHWC on both sides and the weights are smaller than
 *   the activations: for one image a band of rows is contiguous in NHWC, and so are the input
 *   rows it reads (the halo included); each band's primitive has its own padding (the top
 *   band the conv's top padding, the bottom band its bottom padding) and all share one copy
 *   of the weights. Every band computes all output channels, as oneDNN's kernel blocks them.
 *   A float X in NCHW (a graph input before the stem conv: 3 channels) is cut too: each band
 *   reorders its rows of each plane into its thread's buffer first (resnet18's 7x7/2 stem at
 *   two threads: two slices of 32 outputs 1.26 ms, bands 0.88; one thread 1.25).
 * - slices of output channels (whole groups when grouped) otherwise. For one image a slice of
 *   outputs is contiguous in NCHW and in the channel-blocked layouts (whole blocks), and so is
 *   its weights' and its bias's slice; a slice writes Y's slice directly when the primitive's
 *   layout is the caller's, else (NHWC: its channels are a strided view) into a buffer of its
 *   thread's own that it reorders into Y's slice itself. A dense conv's slices all read the
 *   whole X (reordered once an image before them when the primitive wants another layout); a
 *   grouped conv's slices read their own channels of X.
 * N images: N pieces a slice. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "conv_dnnl_split.h"

#ifdef OM_HAVE_DNNL

#include "conv_dnnl_common.h"
#include "parallel.h"

/* Pieces a thread, and the least output channels a slice (oneDNN's kernels block 16 outputs,
 * up to 4 blocks). One piece a thread: a slice's primitive runs at its best on a large share
 * (resnet18's 512-channel 7x7 3x3 conv at two threads: 8 slices of 64 outputs 0.80 ms, 4 of
 * 128 0.62, 2 of 256 0.50, one thread 1.02; 2 threads, whole models: resnet18 10.65 -> 9.83
 * ms, resnet50 27.8 -> 23.5, mobilenet_v2_qdq 4.76 -> 3.69, shufflenet_v2 5.71 -> 4.95).
 * Four a thread evened out a slow thread's share by dynamic claiming; a thread slowed by
 * another process now makes the pool hold (num/parallel.c), and with a core held busy the
 * two split alike (resnet18 at 2 threads 18.9-19.6 ms, one thread 18.8-19.1). */
enum { SPLIT_PIECES = 1, SPLIT_MIN_OUT = 32, SPLIT_ALIGN = 16, SPLIT_BUF_ALIGN = 64 };

/* a slice's memory objects, a set each slot: handles set by the piece that uses them */
enum { SM_X, SM_Y, SM_B, SM_XU, SM_YU, SM_SCR, SM_COUNT };

struct om_dnnl_slice {
	int64_t m0, ms, c0, cs; /* outputs [m0, m0 + ms), inputs [c0, c0 + cs) (dense: all) */
	int64_t r0, rs, i0, is; /* output rows [r0, r0 + rs), input rows [i0, i0 + is) */
	int64_t pt, pb;         /* the rows of padding above and below its input rows */
	dnnl_primitive_t conv;
	dnnl_primitive_t rin, rout, rz; /* X's slice in, Y's out, Z's in; NULL: none needed */
	dnnl_memory_t w;                /* the weights in the primitive's layout */
	bool wshared;                   /* w is the first slice's (bands) */
	dnnl_memory_t *m;               /* SM_COUNT a slot */
	bool scr;                       /* the primitive needs a scratchpad */
	float *w0;                      /* with a factor: the unscaled weights, */
	int32_t *chan;                  /* each float's input channel (-1: padding), */
	size_t nw;                      /* nw floats */
};

bool om_dnnl_split_tag(dnnl_format_tag_t t)
{
	return t == dnnl_nchw || t == dnnl_nChw16c || t == dnnl_nChw8c || t == dnnl_nhwc;
}

/* elements between channels c and c + 1 of the caller's side of tag t (in whole blocks) */
static int64_t chan_stride(dnnl_format_tag_t t, int64_t H, int64_t W)
{
	return t == dnnl_nhwc ? 1 : H * W;
}

static size_t type_size(dnnl_data_type_t t)
{
	return t == dnnl_f32 || t == dnnl_s32 ? 4 : 1;
}

static size_t round_up(size_t n)
{
	return (n + SPLIT_BUF_ALIGN - 1) / SPLIT_BUF_ALIGN * SPLIT_BUF_ALIGN;
}

/* a reorder from -> to; shared (it may run on several threads at once: a scratchpad oneDNN
 * keeps would be shared too), one that needs no scratchpad */
static bool split_reorder_of(const om_dnnl_split *s, const dnnl_memory_desc_t *from,
			     const dnnl_memory_desc_t *to, dnnl_primitive_t *keep, bool shared)
{
	dnnl_primitive_attr_t attr = NULL;
	dnnl_primitive_desc_t pd = NULL;
	bool ok = !dnnl_primitive_attr_create(&attr) &&
		  (!shared ||
		   !dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user)) &&
		  !dnnl_reorder_primitive_desc_create(&pd, from, s->eng, to, s->eng, attr);
	const dnnl_memory_desc_t *smd =
		ok && shared ? dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0)
			     : NULL;
	ok = ok && (!smd || !dnnl_memory_desc_get_size(smd)) &&
	     dnnl_primitive_create(keep, pd) == dnnl_success;
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	return ok;
}

static bool split_reorder(const om_dnnl_split *s, const dnnl_memory_desc_t *from,
			  const dnnl_memory_desc_t *to, dnnl_primitive_t *keep)
{
	return split_reorder_of(s, from, to, keep, true);
}

void om_dnnl_split_release(om_dnnl_split *s)
{
	for (int64_t j = 0; s->sl && j < s->k; j++) {
		om_dnnl_slice *l = &s->sl[j];
		dnnl_primitive_t prims[] = {l->conv, l->rin, l->rout, l->rz};
		for (size_t i = 0; i < sizeof prims / sizeof *prims; i++)
			if (prims[i])
				dnnl_primitive_destroy(prims[i]);
		if (l->w && !l->wshared)
			dnnl_memory_destroy(l->w);
		for (int i = 0; l->m && i < s->slots * SM_COUNT; i++)
			if (l->m[i])
				dnnl_memory_destroy(l->m[i]);
		free(l->m);
		free(l->w0);
		free(l->chan);
	}
	free(s->sl);
	for (int i = 0; s->xm && i < 2 * s->slots; i++)
		if (s->xm[i])
			dnnl_memory_destroy(s->xm[i]);
	free(s->xm);
	if (s->rx)
		dnnl_primitive_destroy(s->rx);
	for (int i = 0; s->st && i < s->slots; i++)
		if (s->st[i])
			dnnl_stream_destroy(s->st[i]);
	free(s->st);
	if (s->eng)
		dnnl_engine_destroy(s->eng);
	free(s->xs);
	free(s->buf);
	memset(s, 0, sizeof *s);
}

/* whether a split of g cuts bands of rows: Y NHWC on both sides of the primitive, X too or a
 * float NCHW X (an int8 one gave other bytes than the whole conv: test_conv_dnnl's
 * qlinearconv_threads; not looked into), no factor (the bands share their weights), at least
 * two output rows, and weights of no more bytes than X and Y together (else each band's
 * reading all the weights costs more than the channel slices' reading X each) */
static bool split_rows(const om_dnnl_split_geo *g, bool factor)
{
	const bool x_rows = g->xtag == dnnl_nhwc ? g->src == dnnl_nhwc
				: g->xtag == dnnl_nchw && g->src != dnnl_nhwc && g->xt == dnnl_f32;
	if (!x_rows || g->ytag != dnnl_nhwc || g->dst != dnnl_nhwc || factor || g->OH < 2)
		return false;
	const int64_t wbytes = g->M * (g->C / g->G) * g->kh * g->kw * (int64_t)type_size(g->wt);
	const int64_t abytes = g->C * g->H * g->W * (int64_t)type_size(g->xt) +
			       g->M * g->OH * g->OW * (int64_t)type_size(g->yt);
	return wbytes <= abytes;
}

/* the bands' bounds: SPLIT_PIECES a thread over all images, each band's input rows (its
 * halo) and padding; false when a band reads no row of X (padding alone) */
static bool split_cut_rows(om_dnnl_split *s, int threads)
{
	const om_dnnl_split_geo *g = &s->g;
	const int64_t want = ((int64_t)threads * SPLIT_PIECES + g->N - 1) / g->N;
	const int64_t size = (g->OH + want - 1) / want;
	s->k = (g->OH + size - 1) / size;
	s->sl = calloc((size_t)s->k, sizeof *s->sl);
	if (!s->sl)
		return false;
	for (int64_t j = 0; j < s->k; j++) {
		om_dnnl_slice *l = &s->sl[j];
		l->m0 = 0, l->ms = g->M, l->c0 = 0, l->cs = g->C;
		l->r0 = j * size, l->rs = l->r0 + size < g->OH ? size : g->OH - l->r0;
		/* the first and last input rows the band's windows cover, padding included */
		const int64_t a = l->r0 * g->stride[0] - g->pb[0];
		const int64_t b = (l->r0 + l->rs - 1) * g->stride[0] - g->pb[0] +
				  (g->kh - 1) * g->dil[0];
		l->i0 = a > 0 ? a : 0;
		const int64_t i1 = b < g->H - 1 ? b + 1 : g->H;
		if (i1 <= l->i0)
			return false;
		l->is = i1 - l->i0, l->pt = l->i0 - a, l->pb = b - (i1 - 1);
	}
	return true;
}

/* the slices' bounds: units (outputs, or groups) in whole steps of SPLIT_ALIGN channels on
 * both sides, SPLIT_PIECES a thread over all images, SPLIT_MIN_OUT outputs at least */
static bool split_cut(om_dnnl_split *s, int threads)
{
	const om_dnnl_split_geo *g = &s->g;
	if (s->rows)
		return split_cut_rows(s, threads);
	const bool grouped = g->G > 1;
	const int64_t units = grouped ? g->G : g->M, Cg = g->C / g->G, Mg = g->M / g->G;
	const int64_t mout = grouped ? Mg : 1;
	int64_t step = 1;
	if (grouped)
		while (step < SPLIT_ALIGN &&
		       ((step * Cg) % SPLIT_ALIGN || (step * Mg) % SPLIT_ALIGN))
			step++;
	else
		step = SPLIT_ALIGN;
	const int64_t want = ((int64_t)threads * SPLIT_PIECES + g->N - 1) / g->N;
	int64_t size = (units + want - 1) / want;
	const int64_t least = (SPLIT_MIN_OUT + mout - 1) / mout;
	if (size < least)
		size = least;
	size = (size + step - 1) / step * step;
	s->k = (units + size - 1) / size;
	s->sl = calloc((size_t)s->k, sizeof *s->sl);
	if (!s->sl)
		return false;
	for (int64_t j = 0; j < s->k; j++) {
		om_dnnl_slice *l = &s->sl[j];
		const int64_t u0 = j * size, u1 = u0 + size < units ? u0 + size : units;
		l->m0 = u0 * mout, l->ms = (u1 - u0) * mout;
		l->c0 = grouped ? u0 * Cg : 0, l->cs = grouped ? (u1 - u0) * Cg : g->C;
		l->r0 = 0, l->rs = g->OH, l->i0 = 0, l->is = g->H;
		l->pt = g->pb[0], l->pb = g->pe[0];
	}
	return true;
}

/* the caller's side of slice l: X's channels (out false) or Y's, one image (in NHWC a view
 * of the image's channels: oneDNN's reorders take it, its convolutions do not) */
static bool split_user_md(const om_dnnl_split_geo *g, const om_dnnl_slice *l, bool out,
			  dnnl_memory_desc_t *md)
{
	const dnnl_dims_t x = {1, l->cs, l->is, g->W}, y = {1, l->ms, l->rs, g->OW};
	const dnnl_format_tag_t tag = out ? g->ytag : g->xtag;
	const int64_t n = out ? g->M : g->C, part = out ? l->ms : l->cs;
	const int64_t h = out ? l->rs : l->is, w = out ? g->OW : g->W;
	if (tag == dnnl_nhwc && part != n) {
		const dnnl_dims_t strides = {n * h * w, 1, w * n, n};
		return !dnnl_memory_desc_init_by_strides(md, 4, out ? y : x, out ? g->yt : g->xt,
							 strides);
	}
	if (tag == dnnl_nchw && !out && h != g->H) { /* a band of X's rows in each plane */
		const dnnl_dims_t strides = {n * g->H * w, g->H * w, w, 1};
		return !dnnl_memory_desc_init_by_strides(md, 4, x, g->xt, strides);
	}
	return !dnnl_memory_desc_init_by_tag(md, 4, out ? y : x, out ? g->yt : g->xt, tag);
}

/* slice j's memory objects of each slot (handles set at each piece; the scratchpad's here) */
static bool split_mems(om_dnnl_split *s, om_dnnl_slice *l, const_dnnl_primitive_desc_t pd,
		       const dnnl_memory_desc_t *xu, const dnnl_memory_desc_t *yu)
{
	const dnnl_memory_desc_t *mds[SM_COUNT] = {
		dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0),
		dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
		dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1),
		xu, yu, dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0)};
	dnnl_memory_desc_t none;
	const dnnl_dims_t one = {1};
	if (dnnl_memory_desc_init_by_tag(&none, 1, one, dnnl_u8, dnnl_x))
		return false;
	l->m = calloc((size_t)(s->slots * SM_COUNT), sizeof *l->m);
	if (!l->m)
		return false;
	for (int t = 0; t < s->slots; t++)
		for (int i = 0; i < SM_COUNT; i++) {
			const dnnl_memory_desc_t *md = mds[i] && mds[i]->ndims ? mds[i] : &none;
			if (dnnl_memory_create(&l->m[t * SM_COUNT + i], md, s->eng,
					       DNNL_MEMORY_NONE))
				return false;
		}
	return true;
}

/* slice l's weights: the caller's slice reordered once into the primitive's layout (with a
 * factor, kept unscaled too) */
static bool split_weights(om_dnnl_split *s, om_dnnl_slice *l, const_dnnl_primitive_desc_t pd,
			  const void *w)
{
	const om_dnnl_split_geo *g = &s->g;
	const int64_t gs = g->G > 1 ? l->ms / (g->M / g->G) : 1, K = g->kh * g->kw;
	const size_t off = (size_t)(l->m0 * (g->C / g->G) * K) * type_size(g->wt);
	const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	dnnl_memory_desc_t user, any;
	dnnl_memory_t wu = NULL;
	dnnl_primitive_t wr = NULL;
	bool ok = om_dnnl_conv_weights_md(&user, &any, gs, l->ms, l->cs, g->kh, g->kw, g->wt) &&
		  !dnnl_memory_create(&l->w, wmd, s->eng, DNNL_MEMORY_ALLOCATE) &&
		  !dnnl_memory_create(&wu, &user, s->eng, (char *)w + off) &&
		  split_reorder_of(s, &user, wmd, &wr, false); /* once, here */
	if (ok) {
		dnnl_exec_arg_t a[] = {{DNNL_ARG_FROM, wu}, {DNNL_ARG_TO, l->w}};
		ok = !dnnl_primitive_execute(wr, s->st[0], 2, a) && !dnnl_stream_wait(s->st[0]);
	}
	if (ok && s->factor)
		ok = om_dnnl_conv_channels(s->eng, s->st[0], l->w, wr, wu, wmd,
					   (const int64_t[]){l->ms, l->cs / gs, gs, K}, l->c0,
					   &l->w0, &l->chan, &l->nw);
	om_dnnl_conv_weights_free(wu, wr);
	return ok;
}

/* slice l's weights: a band's are the first band's when their layouts agree */
static bool split_weights_of(om_dnnl_split *s, om_dnnl_slice *l, const_dnnl_primitive_desc_t pd,
			     const void *w)
{
	const dnnl_memory_desc_t *first = NULL;
	if (s->rows && l != s->sl && dnnl_memory_get_memory_desc(s->sl[0].w, &first))
		return false;
	if (first &&
	    dnnl_memory_desc_equal(first, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md,
								       0))) {
		l->w = s->sl[0].w, l->wshared = true;
		return true;
	}
	return split_weights(s, l, pd, w);
}

/* slice l: its primitive (the src of a dense conv: *src once the first slice chose it), the
 * reorders at its edges, its weights and memories */
static bool split_slice(om_dnnl_split *s, om_dnnl_slice *l, dnnl_memory_desc_t *src,
			const void *w, om_dnnl_split_pd_fn make_pd, void *ctx)
{
	const om_dnnl_split_geo *g = &s->g;
	const bool grouped = g->G > 1;
	const int64_t gs = grouped ? l->ms / (g->M / g->G) : 1;
	const dnnl_dims_t sd = {1, l->cs, l->is, g->W}, dd = {1, l->ms, l->rs, g->OW};
	const int64_t pb[2] = {l->pt, g->pb[1]}, pe[2] = {l->pb, g->pe[1]};
	const dnnl_dims_t bd = {l->ms};
	dnnl_memory_desc_t xu, yu, smd, dmd, bmd, wuser, wany;
	if (!split_user_md(g, l, false, &xu) || !split_user_md(g, l, true, &yu) ||
	    dnnl_memory_desc_init_by_tag(&dmd, 4, dd, g->yt, g->dst) ||
	    dnnl_memory_desc_init_by_tag(&bmd, 1, bd, g->bt, dnnl_x) ||
	    !om_dnnl_conv_weights_md(&wuser, &wany, gs, l->ms, l->cs, g->kh, g->kw, g->wt))
		return false;
	if (!grouped && !s->rows && src->ndims)
		smd = *src;
	else if (dnnl_memory_desc_init_by_tag(&smd, 4, sd, g->xt, g->src))
		return false;
	dnnl_convolution_desc_t cd;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_primitive_desc_t pd = NULL;
	bool ok = om_dnnl_conv_desc(&cd, &smd, &wany, g->bias ? &bmd : NULL, &dmd, g->stride, pb,
				    pe, g->dil) &&
		  !dnnl_primitive_attr_create(&attr) &&
		  !dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) &&
		  make_pd(ctx, &cd, attr, l->m0, l->m0 + l->ms, &pd) && om_dnnl_conv_jit(pd);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	const dnnl_memory_desc_t *qs = ok ? dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0)
					  : NULL;
	const dnnl_memory_desc_t *qd = ok ? dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0)
					  : NULL;
	const dnnl_memory_desc_t *qp =
		ok ? dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0) : NULL;
	ok = ok && dnnl_primitive_create(&l->conv, pd) == dnnl_success;
	if (ok && s->rows) /* a band writes the caller's rows in place, and reads them in NHWC */
		ok = (g->xtag == dnnl_nchw || dnnl_memory_desc_equal(qs, &xu)) &&
		     dnnl_memory_desc_equal(qd, &yu);
	if (ok && !grouped && !s->rows && !src->ndims) { /* the first slice: all read this X */
		*src = *qs;
		s->xsimg = dnnl_memory_desc_get_size(qs);
		if (!dnnl_memory_desc_equal(qs, &xu))
			ok = split_reorder(s, &xu, qs, &s->rx) &&
			     (s->xm = calloc((size_t)(2 * s->slots), sizeof *s->xm)) != NULL;
		for (int t = 0; ok && s->rx && t < s->slots; t++)
			ok = !dnnl_memory_create(&s->xm[2 * t], &xu, s->eng, DNNL_MEMORY_NONE) &&
			     !dnnl_memory_create(&s->xm[2 * t + 1], qs, s->eng, DNNL_MEMORY_NONE);
	}
	if (ok && (grouped ? !s->rows : s->rows && g->xtag == dnnl_nchw) &&
	    !dnnl_memory_desc_equal(qs, &xu)) {
		ok = split_reorder(s, &xu, qs, &l->rin);
		s->bsrc = s->bsrc > dnnl_memory_desc_get_size(qs) ? s->bsrc
								  : dnnl_memory_desc_get_size(qs);
	}
	if (ok && !dnnl_memory_desc_equal(qd, &yu)) {
		ok = split_reorder(s, qd, &yu, &l->rout) &&
		     (!g->z || split_reorder(s, &yu, qd, &l->rz));
		s->bdst = s->bdst > dnnl_memory_desc_get_size(qd) ? s->bdst
								  : dnnl_memory_desc_get_size(qd);
	}
	l->scr = ok && qp && dnnl_memory_desc_get_size(qp);
	if (l->scr && dnnl_memory_desc_get_size(qp) > s->bscr)
		s->bscr = dnnl_memory_desc_get_size(qp);
	ok = ok && split_weights_of(s, l, pd, w) && split_mems(s, l, pd, &xu, &yu);
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	return ok;
}

/* the slots' buffers (src, dst, scratchpad each) and X's in the primitives' layout; the
 * scratchpad memories pointed at theirs */
static bool split_buffers(om_dnnl_split *s)
{
	s->bsrc = round_up(s->bsrc), s->bdst = round_up(s->bdst), s->bscr = round_up(s->bscr);
	s->bslot = s->bsrc + s->bdst + s->bscr;
	const size_t all = s->bslot * (size_t)s->slots, xs = round_up(s->xsimg * (size_t)s->g.N);
	s->buf = all ? aligned_alloc(SPLIT_BUF_ALIGN, all) : NULL;
	s->xs = s->rx ? aligned_alloc(SPLIT_BUF_ALIGN, xs ? xs : SPLIT_BUF_ALIGN) : NULL;
	s->scratch = all + (s->rx ? xs : 0);
	if ((all && !s->buf) || (s->rx && !s->xs))
		return false;
	for (int64_t j = 0; j < s->k; j++)
		for (int t = 0; s->sl[j].scr && t < s->slots; t++)
			if (dnnl_memory_set_data_handle(s->sl[j].m[t * SM_COUNT + SM_SCR],
							s->buf + s->bslot * (size_t)t + s->bsrc +
								s->bdst))
				return false;
	return true;
}

/* om_dnnl_split_make, cutting bands of rows or slices of channels */
static bool split_make(om_dnnl_split *s, const om_dnnl_split_geo *g, int threads, const void *w,
		       bool factor, om_dnnl_split_pd_fn pd, void *ctx, bool rows)
{
	memset(s, 0, sizeof *s);
	s->g = *g;
	s->factor = factor;
	s->rows = rows;
	s->slots = threads < 1 ? 1 : threads;
	s->ximg = (size_t)(g->C * g->H * g->W) * type_size(g->xt);
	s->yimg = (size_t)(g->M * g->OH * g->OW) * type_size(g->yt);
	if (g->xtag != dnnl_nchw || g->ytag != dnnl_nchw) { /* blocked: padded channels */
		dnnl_memory_desc_t md;
		const om_dnnl_slice whole = {.ms = g->M, .cs = g->C, .rs = g->OH, .is = g->H};
		if (!split_user_md(g, &whole, false, &md))
			return false;
		s->ximg = dnnl_memory_desc_get_size(&md);
		if (!split_user_md(g, &whole, true, &md))
			return false;
		s->yimg = dnnl_memory_desc_get_size(&md);
	}
	bool ok = !dnnl_engine_create(&s->eng, dnnl_cpu, 0) &&
		  (s->st = calloc((size_t)s->slots, sizeof *s->st)) != NULL;
	for (int t = 0; ok && t < s->slots; t++)
		ok = !dnnl_stream_create(&s->st[t], s->eng, dnnl_stream_default_flags);
	dnnl_memory_desc_t src;
	memset(&src, 0, sizeof src); /* ndims 0: not chosen yet */
	ok = ok && split_cut(s, threads);
	for (int64_t j = 0; ok && j < s->k; j++)
		ok = split_slice(s, &s->sl[j], &src, w, pd, ctx);
	ok = ok && split_buffers(s);
	if (!ok)
		om_dnnl_split_release(s);
	return ok;
}

bool om_dnnl_split_make(om_dnnl_split *s, const om_dnnl_split_geo *g, int threads,
			const void *w, bool factor, om_dnnl_split_pd_fn pd, void *ctx)
{
	const bool rows = split_rows(g, factor);
	return split_make(s, g, threads, w, factor, pd, ctx, rows) ||
	       (rows && split_make(s, g, threads, w, factor, pd, ctx, false));
}

/* one run's arguments, and its first failing status */
typedef struct split_run {
	om_dnnl_split *s;
	const char *x, *bias, *z;
	const float *factor;
	char *y;
	atomic_int r;
} split_run;

static void split_fail(split_run *a, dnnl_status_t r)
{
	int ok = dnnl_success;
	if (r != dnnl_success)
		atomic_compare_exchange_strong(&a->r, &ok, (int)r);
}

static dnnl_status_t exec2(dnnl_primitive_t p, dnnl_stream_t st, dnnl_memory_t from,
			   dnnl_memory_t to)
{
	dnnl_exec_arg_t a[] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
	return dnnl_primitive_execute(p, st, 2, a);
}

/* images [lo, hi) of X into xs */
static void split_x(void *arg, int64_t lo, int64_t hi, int slot)
{
	split_run *a = arg;
	const om_dnnl_split *s = a->s;
	dnnl_memory_t from = s->xm[2 * slot], to = s->xm[2 * slot + 1];
	dnnl_status_t r = dnnl_success;
	for (int64_t n = lo; n < hi && !r; n++) {
		const char *xn = a->x + s->ximg * (size_t)n;
		if (!(r = dnnl_memory_set_data_handle(from, (void *)xn)) &&
		    !(r = dnnl_memory_set_data_handle(to, s->xs + s->xsimg * (size_t)n)))
			r = exec2(s->rx, s->st[slot], from, to);
	}
	split_fail(a, r ? r : dnnl_stream_wait(s->st[slot]));
}

/* piece p: image p / k, slice p % k */
static dnnl_status_t split_piece(split_run *a, int64_t p, int slot)
{
	om_dnnl_split *s = a->s;
	const om_dnnl_split_geo *g = &s->g;
	const int64_t n = p / s->k;
	om_dnnl_slice *l = &s->sl[p % s->k];
	dnnl_memory_t *m = l->m + slot * SM_COUNT;
	dnnl_stream_t st = s->st[slot];
	char *buf = s->buf + s->bslot * (size_t)slot;
	/* a band's rows start i0 (r0) rows of NHWC in; a slice's channels c0 (m0) channels in */
	const size_t xo = s->ximg * (size_t)n +
			  (size_t)(l->c0 * chan_stride(g->xtag, g->H, g->W) +
				   l->i0 * g->W * (g->xtag == dnnl_nhwc ? g->C : 1)) *
				  type_size(g->xt);
	const size_t yo = s->yimg * (size_t)n +
			  (size_t)(l->m0 * chan_stride(g->ytag, g->OH, g->OW) +
				   l->r0 * g->OW * g->M) * type_size(g->yt);
	dnnl_status_t r;
	if (l->rin) {
		if ((r = dnnl_memory_set_data_handle(m[SM_XU], (void *)(a->x + xo))) ||
		    (r = dnnl_memory_set_data_handle(m[SM_X], buf)) ||
		    (r = exec2(l->rin, st, m[SM_XU], m[SM_X])))
			return r;
	} else if ((r = dnnl_memory_set_data_handle(
			    m[SM_X], s->rx ? s->xs + s->xsimg * (size_t)n : (void *)(a->x + xo)))) {
		return r;
	}
	if ((r = dnnl_memory_set_data_handle(m[SM_Y], l->rout ? buf + s->bsrc : a->y + yo)) ||
	    (l->rout && (r = dnnl_memory_set_data_handle(m[SM_YU], a->y + yo))))
		return r;
	if (a->z && l->rz) {
		if ((r = dnnl_memory_set_data_handle(m[SM_YU], (void *)(a->z + yo))) ||
		    (r = exec2(l->rz, st, m[SM_YU], m[SM_Y])) ||
		    (r = dnnl_memory_set_data_handle(m[SM_YU], a->y + yo)))
			return r;
	} else if (a->z && a->z != a->y) { /* Y's slice is contiguous (no reorder) */
		const dnnl_memory_desc_t *md;
		if ((r = dnnl_memory_get_memory_desc(m[SM_Y], &md)))
			return r;
		memcpy(a->y + yo, a->z + yo, dnnl_memory_desc_get_size(md));
	}
	if (a->factor) {
		float *w;
		if ((r = dnnl_memory_get_data_handle(l->w, (void **)&w)))
			return r;
		om_dnnl_conv_scale(w, l->w0, l->chan, l->nw, a->factor);
	}
	if (a->bias && (r = dnnl_memory_set_data_handle(
				m[SM_B], (void *)(a->bias + (size_t)l->m0 * type_size(g->bt)))))
		return r;
	dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, m[SM_X]},
				   {DNNL_ARG_WEIGHTS, l->w},
				   {DNNL_ARG_DST, m[SM_Y]}};
	int nargs = 3;
	if (a->bias)
		args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, m[SM_B]};
	if (l->scr)
		args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, m[SM_SCR]};
	if ((r = dnnl_primitive_execute(l->conv, st, nargs, args)) ||
	    (l->rout && (r = exec2(l->rout, st, m[SM_Y], m[SM_YU]))))
		return r;
	return dnnl_stream_wait(st);
}

static void split_pieces(void *arg, int64_t lo, int64_t hi, int slot)
{
	split_run *a = arg;
	for (int64_t p = lo; p < hi; p++)
		split_fail(a, split_piece(a, p, slot));
}

dnnl_status_t om_dnnl_split_run(om_dnnl_split *s, const void *x, const void *bias,
				const void *z, const float *factor, void *y, int threads)
{
	if (threads > s->slots)
		threads = s->slots;
	split_run a = {s, x, bias, z, s->factor ? factor : NULL, y, dnnl_success};
	/* reorders and zero padding run at the calling thread's OpenMP count: 1, as the
	 * pieces (om_par_for) */
	const int saved = om_par_threads_set(1);
	if (s->rx)
		om_par_for_slots(threads, s->g.N, 1, split_x, &a);
	if (atomic_load(&a.r) == dnnl_success)
		om_par_for_slots(threads, s->g.N * s->k, 1, split_pieces, &a);
	om_par_threads_restore(saved);
	return (dnnl_status_t)atomic_load(&a.r);
}

#endif
