/* spatial.c — window geometry (kernel, strides, dilations, pads, auto_pad) of Conv and pools. */
#include <string.h>

#include "spatial.h"

om_kind om_spatial_kernel_attr(om_ctx *c, int32_t n, const int64_t **kernel)
{
	int64_t cnt;
	*kernel = om_attr_ints(c->node, "kernel_shape", &cnt);
	if (*kernel && cnt != n)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"kernel_shape has %lld entries for %d spatial axes", (long long)cnt,
				n);
	for (int32_t i = 0; *kernel && i < n; i++)
		if ((*kernel)[i] < 1 || (*kernel)[i] > OM_SP_LIMIT)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"kernel_shape[%d] = %lld is out of range", i,
					(long long)(*kernel)[i]);
	return OM_OK;
}

static om_kind read_list(om_ctx *c, const char *name, int64_t lo, int32_t n, int64_t *dst)
{
	int64_t cnt;
	const int64_t *v = om_attr_ints(c->node, name, &cnt);
	if (!v)
		return OM_OK;
	if (cnt != n)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%s has %lld entries, expected %d", name, (long long)cnt, n);
	for (int32_t i = 0; i < n; i++) {
		if (v[i] < lo || v[i] > OM_SP_LIMIT)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"%s[%d] = %lld is out of range", name, i, (long long)v[i]);
		dst[i] = v[i];
	}
	return OM_OK;
}

om_kind om_spatial_auto_pad(om_ctx *c, enum om_auto_pad *mode)
{
	/* in enum om_auto_pad's order; "" last, read as NOTSET */
	static const char *const names[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "", NULL};
	const int i = om_attr_choice(c->node, "auto_pad", names, OM_PAD_NOTSET);
	if (i < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "unknown auto_pad '%s'",
				om_attr_string(c->node, "auto_pad", ""));
	*mode = i == OM_PAD_VALID + 1 ? OM_PAD_NOTSET : (enum om_auto_pad)i;
	return OM_OK;
}

om_kind om_spatial_strides(om_ctx *c, om_spatial *sp)
{
	for (int32_t i = 0; i < sp->n; i++)
		sp->stride[i] = sp->dil[i] = 1;
	om_kind rc = read_list(c, "strides", 1, sp->n, sp->stride);
	return rc ? rc : read_list(c, "dilations", 1, sp->n, sp->dil);
}

om_kind om_spatial_forward(om_ctx *c, int32_t n, const int64_t *in, const int64_t *kernel,
			   int ceil_mode, om_spatial *sp)
{
	memset(sp, 0, sizeof *sp);
	if (n < 1 || n > OM_SP_MAX)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"input needs at least one spatial axis");
	sp->n = n;
	for (int32_t i = 0; i < n; i++) {
		if (kernel[i] < 1 || kernel[i] > OM_SP_LIMIT)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"kernel extent %lld is out of range", (long long)kernel[i]);
		sp->in[i] = in[i];
		sp->k[i] = kernel[i];
	}
	om_kind rc = om_spatial_strides(c, sp);
	if (rc)
		return rc;
	int64_t pads[2 * OM_SP_MAX] = {0};
	rc = read_list(c, "pads", 0, 2 * n, pads);
	if (rc)
		return rc;
	enum om_auto_pad ap = OM_PAD_NOTSET;
	if ((rc = om_spatial_auto_pad(c, &ap)))
		return rc;
	const int same_upper = ap == OM_PAD_SAME_UPPER, same_lower = ap == OM_PAD_SAME_LOWER;
	const int valid = ap == OM_PAD_VALID;
	for (int32_t i = 0; i < n; i++) {
		int64_t ek = (sp->k[i] - 1) * sp->dil[i] + 1, s = sp->stride[i];
		if (in[i] < 0 || in[i] > ((int64_t)1 << 62))
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"extent %lld is out of range", (long long)in[i]);
		if (same_upper || same_lower) {
			int64_t o = (in[i] + s - 1) / s;
			int64_t total = (o - 1) * s + ek - in[i];
			if (total < 0)
				total = 0;
			sp->pb[i] = same_upper ? total / 2 : total - total / 2;
			sp->pe[i] = total - sp->pb[i];
			sp->out[i] = o;
			continue;
		}
		if (!valid) {
			sp->pb[i] = pads[i];
			sp->pe[i] = pads[i + n];
		}
		int64_t span = in[i] + sp->pb[i] + sp->pe[i] - ek;
		if (span < 0)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"window %lld is larger than the padded input on axis %d",
					(long long)ek, i);
		int64_t o = (ceil_mode ? span + s - 1 : span) / s + 1;
		/* the last window must start inside the input or its begin pad */
		if (ceil_mode && (o - 1) * s >= in[i] + sp->pb[i])
			o--;
		sp->out[i] = o;
	}
	return OM_OK;
}
