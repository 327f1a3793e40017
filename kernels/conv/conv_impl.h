/* conv_impl.h — a float Conv's implementations as one table (conv_impl.c), walked in order: the
 * first that applies to the conv's geometry, mode and layout runs, and the step records its
 * name (om_ctx_chose). */
#ifndef OM_CONV_IMPL_H
#define OM_CONV_IMPL_H

#include "conv_epilogue.h"
#include "spatial.h"

/* The table's name of oneDNN's implementation (ops_conv.c's blocked and scaled paths try it
 * first too) */
#define OM_CONV_ONEDNN "onednn"
/* ... run on the calling thread by its one-thread primitive, its split being held
 * (conv_dnnl.c: dn_whole) */
#define OM_CONV_ONEDNN_HELD "onednn-held"

/* One float conv as the implementations see it: X (N x C images of extent sp->in), W (M x
 * C/group x sp->k), Y (N x M images of extent sp->out), and Y's epilogue (Z may be Y's
 * memory: an implementation that writes Y before it reads Z keeps a copy). */
typedef struct om_conv_case {
	om_ctx *c;
	const om_spatial *sp;
	int64_t N, C, M, group;
	const float *x, *w;
	om_conv_epi e;
	float *y;
} om_conv_case;

/** Y = epilogue(conv(X, W)) by the table's first implementation that applies (and, for
 *  oneDNN's, does not decline when it makes its primitive), named through om_ctx_chose. */
om_kind om_conv_f32_run(const om_conv_case *k);
/** The name of the table's first implementation that applies to k (its data pointers unread):
 *  the one om_conv_f32_run runs unless oneDNN declines its primitive (the rows' plan-time
 *  choice, om_op.choose). */
const char *om_conv_f32_choose(const om_conv_case *k);

static inline int64_t om_conv_prod(const int64_t *d, int32_t n)
{
	int64_t p = 1;
	for (int32_t i = 0; i < n; i++)
		p *= d[i];
	return p;
}

/* The epilogue of Mg output rows (channels m0 ..) of image n, columns [p0, p0 + cols) of Y's
 * M x P images. */
static inline void om_conv_epi_rows(const om_conv_epi *e, int64_t M, int64_t P, int64_t n,
				    int64_t m0, int64_t Mg, int64_t p0, int64_t cols, float *y)
{
	if (!om_conv_epi_any(e))
		return;
	for (int64_t m = m0; m < m0 + Mg; m++)
		om_conv_epi_row(e, m, (n * M + m) * P + p0, y + (n * M + m) * P + p0, cols);
}

#endif
