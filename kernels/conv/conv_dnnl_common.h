/* conv_dnnl_common.h — what oneDNN's float and int8 Conv paths (conv_dnnl.c, conv_dnnl_int8.c)
 * share: one conv's engine, stream, primitive, memories and reorders at the edges. */
#ifndef OM_CONV_DNNL_COMMON_H
#define OM_CONV_DNNL_COMMON_H

#ifdef OM_HAVE_DNNL

#include <dnnl.h>

#include "op.h"

/* One oneDNN convolution as a step's kernel state keeps it (all NULL / 0 when not made) */
typedef struct om_dnnl_conv {
	size_t scratch; /* bytes of X and Y in the primitive's layout (the memory limit counts) */
	dnnl_engine_t eng;
	dnnl_stream_t st;
	dnnl_primitive_t conv, rin, rout; /* rin, rout: NULL when X, Y need no reorder */
	dnnl_memory_t x, y, w, b, xn, yn; /* xn, yn: the caller's X and Y when reordered */
} om_dnnl_conv;

/** The CPU engine and its stream; false when oneDNN refuses. */
bool om_dnnl_conv_open(om_dnnl_conv *d);
/** Destroys what d holds and zeroes it. */
void om_dnnl_conv_release(om_dnnl_conv *d);
/** A reorder from -> to, kept in *keep (to run once, or on every run). */
bool om_dnnl_conv_reorder(om_dnnl_conv *d, const dnnl_memory_desc_t *from,
			  const dnnl_memory_desc_t *to, dnnl_primitive_t *keep);
/** X (out false) or Y (out true): the caller's memory when blocked already or when the
 *  primitive takes the layout `plain` there, else a buffer of md (counted in d->scratch) and
 *  the reorder *r between it and the caller's memory *user of layout plain. */
bool om_dnnl_conv_side(om_dnnl_conv *d, const dnnl_memory_desc_t *md,
		       const dnnl_memory_desc_t *plain, bool blocked, dnnl_memory_t *mem,
		       dnnl_memory_t *user, dnnl_primitive_t *r, bool out);
/** The weights' descriptors of G groups of M outputs, C inputs, kh x kw taps: the caller's
 *  (oihw, goihw when grouped) and the primitive's choice (any), of type t. */
bool om_dnnl_conv_weights_md(dnnl_memory_desc_t *user, dnnl_memory_desc_t *any, int64_t G,
			     int64_t M, int64_t C, int64_t kh, int64_t kw, dnnl_data_type_t t);
/** The 2-D convolution's descriptor (bias: NULL when none) of omopt's strides, pads and
 *  dilations (1: none). */
bool om_dnnl_conv_desc(dnnl_convolution_desc_t *cd, const dnnl_memory_desc_t *src,
		       const dnnl_memory_desc_t *w, const dnnl_memory_desc_t *bias,
		       const dnnl_memory_desc_t *dst, const int64_t *stride, const int64_t *pb,
		       const int64_t *pe, const int64_t *dil);
/** Whether pd is one of oneDNN's JIT kernels: its reference kernels lose to omopt's (what a
 *  forced layout gets for convs no JIT kernel covers: deeplabv3's 3x3 convs of dilation 36 on
 *  14x14 took 1.9 s each). */
bool om_dnnl_conv_jit(const_dnnl_primitive_desc_t pd);
/** d->conv of pd, d->w (weights in pd's layout, allocated) and d->b (of bmd, the caller's). */
bool om_dnnl_conv_prim(om_dnnl_conv *d, const_dnnl_primitive_desc_t pd,
		       const dnnl_memory_desc_t *bmd);
/** Reorders the caller's weights w (layout user) into d->w, through *wu and *wr, which the
 *  caller destroys (om_dnnl_conv_weights_free) when done with them. */
bool om_dnnl_conv_weights(om_dnnl_conv *d, const dnnl_memory_desc_t *user, const void *w,
			  dnnl_memory_t *wu, dnnl_primitive_t *wr);
void om_dnnl_conv_weights_free(dnnl_memory_t wu, dnnl_primitive_t wr);
/** Points the primitive's memories at this run's X, bias (NULL: none) and Y. */
dnnl_status_t om_dnnl_conv_bind(om_dnnl_conv *d, const void *x, const void *bias, void *y);
/** X's reorder, the convolution (with its bias or not), Y's reorder, then waits. */
dnnl_status_t om_dnnl_conv_exec(om_dnnl_conv *d, bool bias);
/** For weights of G groups of M outputs, Cg inputs a group, K taps, reordered by wr from wu
 *  (the caller's layout) into packed (of wmd): *w0, a copy of packed, and *chan, each float's
 *  input channel plus c0 (-1: the layout's padding), *nw floats each (the caller frees them),
 *  found by reordering a W whose values are their channels. */
bool om_dnnl_conv_channels(dnnl_engine_t eng, dnnl_stream_t st, dnnl_memory_t packed,
			   dnnl_primitive_t wr, dnnl_memory_t wu, const dnnl_memory_desc_t *wmd,
			   const int64_t *mcgk, int64_t c0, float **w0, int32_t **chan,
			   size_t *nw);
/** w = w0 times the factor of each float's channel chan (0 where chan is -1), nw floats. */
void om_dnnl_conv_scale(float *w, const float *w0, const int32_t *chan, size_t nw,
			const float *factor);
/** OM_OK for dnnl_success, else the step's error ("oneDNN <what> failed (status r)"). */
om_kind om_dnnl_conv_status(om_ctx *c, dnnl_status_t r, const char *what);

#endif

#endif
