/* conv_dnnl_common.c — one oneDNN convolution's engine, memories, reorders and run, shared by
 * the float and int8 paths (conv_dnnl_common.h). */
#include <stdlib.h>
#include <string.h>

#include "conv_dnnl_common.h"

#ifdef OM_HAVE_DNNL

bool om_dnnl_conv_open(om_dnnl_conv *d)
{
	return !dnnl_engine_create(&d->eng, dnnl_cpu, 0) &&
	       !dnnl_stream_create(&d->st, d->eng, dnnl_stream_default_flags);
}

void om_dnnl_conv_release(om_dnnl_conv *d)
{
	dnnl_primitive_t prims[] = {d->conv, d->rin, d->rout};
	dnnl_memory_t mems[] = {d->x, d->y, d->w, d->b, d->xn, d->yn};
	for (size_t i = 0; i < sizeof prims / sizeof *prims; i++)
		if (prims[i])
			dnnl_primitive_destroy(prims[i]);
	for (size_t i = 0; i < sizeof mems / sizeof *mems; i++)
		if (mems[i])
			dnnl_memory_destroy(mems[i]);
	if (d->st)
		dnnl_stream_destroy(d->st);
	if (d->eng)
		dnnl_engine_destroy(d->eng);
	memset(d, 0, sizeof *d);
}

bool om_dnnl_conv_reorder(om_dnnl_conv *d, const dnnl_memory_desc_t *from,
			  const dnnl_memory_desc_t *to, dnnl_primitive_t *keep)
{
	dnnl_primitive_desc_t pd;
	if (dnnl_reorder_primitive_desc_create(&pd, from, d->eng, to, d->eng, NULL))
		return false;
	const bool ok = dnnl_primitive_create(keep, pd) == dnnl_success;
	dnnl_primitive_desc_destroy(pd);
	return ok;
}

bool om_dnnl_conv_side(om_dnnl_conv *d, const dnnl_memory_desc_t *md,
		       const dnnl_memory_desc_t *plain, bool blocked, dnnl_memory_t *mem,
		       dnnl_memory_t *user, dnnl_primitive_t *r, bool out)
{
	if (blocked || dnnl_memory_desc_equal(md, plain))
		return !dnnl_memory_create(mem, md, d->eng, DNNL_MEMORY_NONE);
	d->scratch += dnnl_memory_desc_get_size(md);
	return !dnnl_memory_create(mem, md, d->eng, DNNL_MEMORY_ALLOCATE) &&
	       !dnnl_memory_create(user, plain, d->eng, DNNL_MEMORY_NONE) &&
	       (out ? om_dnnl_conv_reorder(d, md, plain, r) : om_dnnl_conv_reorder(d, plain, md, r));
}

bool om_dnnl_conv_weights_md(dnnl_memory_desc_t *user, dnnl_memory_desc_t *any, int64_t G,
			     int64_t M, int64_t C, int64_t kh, int64_t kw, dnnl_data_type_t t)
{
	const dnnl_dims_t wd5 = {G, M / G, C / G, kh, kw}, wd4 = {M, C, kh, kw};
	return !dnnl_memory_desc_init_by_tag(user, G > 1 ? 5 : 4, G > 1 ? wd5 : wd4, t,
					     G > 1 ? dnnl_goihw : dnnl_oihw) &&
	       !dnnl_memory_desc_init_by_tag(any, G > 1 ? 5 : 4, G > 1 ? wd5 : wd4, t,
					     dnnl_format_tag_any);
}

bool om_dnnl_conv_desc(dnnl_convolution_desc_t *cd, const dnnl_memory_desc_t *src,
		       const dnnl_memory_desc_t *w, const dnnl_memory_desc_t *bias,
		       const dnnl_memory_desc_t *dst, const int64_t *stride, const int64_t *pb,
		       const int64_t *pe, const int64_t *dil)
{
	const dnnl_dims_t strides = {stride[0], stride[1]}, pl = {pb[0], pb[1]};
	const dnnl_dims_t pr = {pe[0], pe[1]};
	const dnnl_dims_t skip = {dil[0] - 1, dil[1] - 1}; /* oneDNN counts the taps skipped */
	return !dnnl_dilated_convolution_forward_desc_init(cd, dnnl_forward_inference,
							   dnnl_convolution_direct, src, w, bias,
							   dst, strides, skip, pl, pr);
}

bool om_dnnl_conv_jit(const_dnnl_primitive_desc_t pd)
{
	const char *impl = NULL;
	return !dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) && impl &&
	       strncmp(impl, "ref", 3);
}

bool om_dnnl_conv_prim(om_dnnl_conv *d, const_dnnl_primitive_desc_t pd,
		       const dnnl_memory_desc_t *bmd)
{
	const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	return dnnl_primitive_create(&d->conv, pd) == dnnl_success &&
	       !dnnl_memory_create(&d->w, wmd, d->eng, DNNL_MEMORY_ALLOCATE) &&
	       !dnnl_memory_create(&d->b, bmd, d->eng, DNNL_MEMORY_NONE);
}

bool om_dnnl_conv_weights(om_dnnl_conv *d, const dnnl_memory_desc_t *user, const void *w,
			  dnnl_memory_t *wu, dnnl_primitive_t *wr)
{
	const dnnl_memory_desc_t *wmd;
	if (dnnl_memory_get_memory_desc(d->w, &wmd) ||
	    dnnl_memory_create(wu, user, d->eng, (void *)w) ||
	    !om_dnnl_conv_reorder(d, user, wmd, wr))
		return false;
	dnnl_exec_arg_t a[] = {{DNNL_ARG_FROM, *wu}, {DNNL_ARG_TO, d->w}};
	return !dnnl_primitive_execute(*wr, d->st, 2, a) && !dnnl_stream_wait(d->st);
}

void om_dnnl_conv_weights_free(dnnl_memory_t wu, dnnl_primitive_t wr)
{
	if (wr)
		dnnl_primitive_destroy(wr);
	if (wu)
		dnnl_memory_destroy(wu);
}

dnnl_status_t om_dnnl_conv_bind(om_dnnl_conv *d, const void *x, const void *bias, void *y)
{
	dnnl_status_t r;
	if ((r = dnnl_memory_set_data_handle(d->rin ? d->xn : d->x, (void *)x)) ||
	    (bias && (r = dnnl_memory_set_data_handle(d->b, (void *)bias))))
		return r;
	return dnnl_memory_set_data_handle(d->rout ? d->yn : d->y, y);
}

dnnl_status_t om_dnnl_conv_exec(om_dnnl_conv *d, bool bias)
{
	dnnl_status_t r;
	if (d->rin) {
		dnnl_exec_arg_t a[] = {{DNNL_ARG_FROM, d->xn}, {DNNL_ARG_TO, d->x}};
		if ((r = dnnl_primitive_execute(d->rin, d->st, 2, a)))
			return r;
	}
	dnnl_exec_arg_t a[] = {{DNNL_ARG_SRC, d->x}, {DNNL_ARG_WEIGHTS, d->w},
			       {DNNL_ARG_DST, d->y}, {DNNL_ARG_BIAS, d->b}};
	if ((r = dnnl_primitive_execute(d->conv, d->st, bias ? 4 : 3, a)))
		return r;
	if (d->rout) {
		dnnl_exec_arg_t b[] = {{DNNL_ARG_FROM, d->y}, {DNNL_ARG_TO, d->yn}};
		if ((r = dnnl_primitive_execute(d->rout, d->st, 2, b)))
			return r;
	}
	return dnnl_stream_wait(d->st);
}

bool om_dnnl_conv_channels(dnnl_engine_t eng, dnnl_stream_t st, dnnl_memory_t packed,
			   dnnl_primitive_t wr, dnnl_memory_t wu, const dnnl_memory_desc_t *wmd,
			   const int64_t *mcgk, int64_t c0, float **w0, int32_t **chan,
			   size_t *nw)
{
	const int64_t M = mcgk[0], Cg = mcgk[1], G = mcgk[2], K = mcgk[3];
	void *p = NULL;
	*nw = dnnl_memory_desc_get_size(wmd) / sizeof(float);
	const size_t n = (size_t)(M * Cg * K);
	float *idx = malloc(sizeof(float) * (n ? n : 1)), *ch = NULL;
	*w0 = malloc(sizeof(float) * (*nw ? *nw : 1));
	*chan = malloc(sizeof(int32_t) * (*nw ? *nw : 1));
	dnnl_memory_t t = NULL;
	bool ok = idx && *w0 && *chan && c0 + Cg * G < (1 << 24) && /* exact as floats */
		  !dnnl_memory_get_data_handle(packed, &p) &&
		  !dnnl_memory_create(&t, wmd, eng, DNNL_MEMORY_ALLOCATE) &&
		  !dnnl_memory_get_data_handle(t, (void **)&ch) &&
		  !dnnl_memory_set_data_handle(wu, idx);
	if (ok) {
		memcpy(*w0, p, sizeof(float) * *nw);
		for (int64_t m = 0; m < M; m++)
			for (int64_t j = 0; j < Cg; j++) {
				const float channel = (float)(m / (M / G) * Cg + j + 1);
				for (int64_t q = 0; q < K; q++)
					idx[(m * Cg + j) * K + q] = channel;
			}
		dnnl_exec_arg_t a[] = {{DNNL_ARG_FROM, wu}, {DNNL_ARG_TO, t}};
		ok = !dnnl_primitive_execute(wr, st, 2, a) && !dnnl_stream_wait(st);
	}
	for (size_t i = 0; ok && i < *nw; i++) {
		const int32_t v = (int32_t)ch[i] - 1;
		(*chan)[i] = v < 0 ? -1 : v + (int32_t)c0;
	}
	if (t)
		dnnl_memory_destroy(t);
	free(idx);
	return ok;
}

void om_dnnl_conv_scale(float *w, const float *w0, const int32_t *chan, size_t nw,
			const float *factor)
{
	for (size_t i = 0; i < nw; i++)
		w[i] = chan[i] >= 0 ? w0[i] * factor[chan[i]] : 0.0f;
}

om_kind om_dnnl_conv_status(om_ctx *c, dnnl_status_t r, const char *what)
{
	if (r == dnnl_success)
		return OM_OK;
	if (r == dnnl_out_of_memory)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory in oneDNN");
	return om_error(c->st, OM_ERR_INTERNAL, c->node, "oneDNN %s failed (status %d)", what,
			(int)r);
}

#endif
