/* conv_dnnl_split.h — one oneDNN convolution as single-threaded primitives over slices of its
 * output rows (NHWC) or output channels (groups for a grouped conv), run as pieces on omopt's
 * pool (om_par_for): no OpenMP team forms, and a descheduled worker holds up its own piece
 * alone. */
#ifndef OM_CONV_DNNL_SPLIT_H
#define OM_CONV_DNNL_SPLIT_H

#ifdef OM_HAVE_DNNL

#include <dnnl.h>

#include "op.h"

/* The conv as the caller sees it: N images, C -> M channels, G groups, X and Y in the
 * caller's layouts (xtag, ytag: nchw, nChw16c or nChw8c), the primitive's (src, dst: the
 * caller's tag or any) */
typedef struct om_dnnl_split_geo {
	int64_t N, C, H, W, M, OH, OW, G, kh, kw;
	int64_t stride[2], pb[2], pe[2], dil[2];
	dnnl_data_type_t xt, yt, wt, bt;
	bool bias, z; /* z: Z is a sum post-op's (Y holds it before the conv) */
	dnnl_format_tag_t xtag, ytag, src, dst;
} om_dnnl_split_geo;

/* The primitive descriptor of the slice of outputs [m0, m1) from its convolution descriptor
 * and attributes attr (a scratchpad of the caller's own set already): the caller adds its
 * own (post-ops, that slice's output scales, zero points). */
typedef bool (*om_dnnl_split_pd_fn)(void *ctx, const dnnl_convolution_desc_t *cd,
				    const_dnnl_primitive_attr_t attr, int64_t m0, int64_t m1,
				    dnnl_primitive_desc_t *pd);

typedef struct om_dnnl_slice om_dnnl_slice;

typedef struct om_dnnl_split {
	om_dnnl_split_geo g;
	dnnl_engine_t eng;
	int slots;              /* threads whose pieces may run at once */
	dnnl_stream_t *st;      /* one a slot */
	bool rows;              /* the slices are bands of output rows (NHWC), not channels */
	int64_t k;              /* slices */
	om_dnnl_slice *sl;
	dnnl_primitive_t rx;    /* a dense conv's X (an image) into xs, or NULL: none */
	dnnl_memory_t *xm;      /* rx's from and to, a slot each */
	size_t ximg, xsimg;     /* bytes of an image of X, of xs */
	size_t yimg;            /* bytes of an image of Y */
	char *xs;               /* X in the primitives' layout (all images) */
	char *buf;              /* a slot's own: its piece's src, dst and scratchpad */
	size_t bsrc, bdst, bscr, bslot;
	size_t scratch;         /* bytes the buffers hold */
	bool factor;            /* weights times a factor per input channel at each run */
} om_dnnl_split;

/**
 * s for g over `threads` threads (s zeroed first): the slices and, for each, the primitive
 * (pd, with factor: also the unscaled weights and their input channels), its weights
 * reordered once from w (the caller's oihw, goihw grouped) and its memories, a slot each.
 * False when a slice's primitive is refused or only oneDNN's reference kernel (s released).
 * Made at an OpenMP count of 1.
 */
bool om_dnnl_split_make(om_dnnl_split *s, const om_dnnl_split_geo *g, int threads,
			const void *w, bool factor, om_dnnl_split_pd_fn pd, void *ctx);
/** Destroys what s holds and zeroes it. */
void om_dnnl_split_release(om_dnnl_split *s);

/** One run: Y (y) of X (x), bias (NULL: none), z (a sum post-op's Z: Y holds it before the
 *  conv; NULL: none; y itself when Y is placed over Z), factor (X's factor per channel, with
 *  s->factor) over `threads` threads; the first failing status, or dnnl_success. */
dnnl_status_t om_dnnl_split_run(om_dnnl_split *s, const void *x, const void *bias,
				const void *z, const float *factor, void *y, int threads);

/** Whether the caller's tag t is one a slice can cut (nchw, nChw16c, nChw8c). */
bool om_dnnl_split_tag(dnnl_format_tag_t t);

#endif

#endif
