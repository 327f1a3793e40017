/* conv_dnnl.h — fast-mode 2-D Conv through oneDNN (libdnnl) where it beats omopt's own kernels
 * (conv_dnnl.c; without oneDNN in the build, never taken). */
#ifndef OM_CONV_DNNL_H
#define OM_CONV_DNNL_H

#include "conv_epilogue.h"
#include "spatial.h"

/**
 * Y = epilogue(conv(X, W)) through oneDNN when the build has it, the mode is fast, the conv is
 * one oneDNN wins (bench/conv_layers.py: 1x1 convs with nothing but a bias, in NCHW; other
 * group-1 convs but those Winograd F(4x4) takes, and stride-1 depthwise ones, in oneDNN's
 * blocked layout with reorders from and to NCHW), W (input 1) is a plan-time constant and the
 * step has a state slot: the primitive and the reordered weights are made once and kept in
 * *c->state (with c->state_release). Returns
 * false when not taken (nothing written); true with *rc set when it ran. Bias goes into the
 * primitive; on the blocked path Z (a sum) and the activation too, as post-ops, when oneDNN
 * has the activation; otherwise they run as the epilogue afterwards (conv_epilogue.h).
 * X and Y (with Z) may be channel-blocked already (c->blocked: OM_LAYOUT_IN(0),
 * OM_LAYOUT_OUT(0); op.h): that side then needs no reorder, and the path is the blocked one.
 * When it runs, it names the implementation (om_ctx_chose): OM_CONV_ONEDNN, or
 * OM_CONV_ONEDNN_HELD when a split conv ran its one-thread primitive, its pool being held
 * (om_par_held; not in a deterministic session: om_ctx.deterministic).
 */
/** The convs that run blocked faster than on omopt's kernels when their neighbours are blocked
 *  too (no reorders: bench/conv_layers.py): 2-D undilated depthwise convs, grouped ones whose
 *  groups are whole blocks, and group-1 convs but, at one thread, those Winograd F(4x4) takes
 *  with 64 inputs and outputs or more; in NHWC (nhwc: OM_BLOCK_NHWC) all grouped ones but
 *  not the depthwise ones. Always false without oneDNN. */
bool om_conv_dnnl_blockable(const om_spatial *sp, int64_t C, int64_t M, int64_t group,
			    int threads, bool nhwc);
/** Whether om_conv_dnnl takes the conv in c (its mode, layout, input factor and constant W)
 *  of this geometry and epilogue, before it makes its primitive (which oneDNN may still
 *  decline): what the table of implementations (conv_impl.c) asks, at plan time too. */
bool om_conv_dnnl_takes(const om_ctx *c, const om_spatial *sp, int64_t N, int64_t C, int64_t M,
			int64_t group, const om_conv_epi *e);
bool om_conv_dnnl(om_ctx *c, const om_spatial *sp, int64_t N, int64_t C, int64_t M,
		  int64_t group, const float *x, const float *w, const om_conv_epi *e, float *y,
		  om_kind *rc);

#endif
