/* pool_common.c — what the pool kernels share (pool_common.h): the input check, a windowed
 * pool's geometry and its tables of taps. */
/* -O2 vectorizes only loops of known trip count; the row loops here vary. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <stdlib.h>

#include "f32_bridge.h"
#include "pool_common.h"

static bool pool_type_ok(int32_t t, enum pool_kind kind)
{
	return t == OM_FLOAT || om_f32_bridged(t, kind == POOL_MAX);
}

om_kind om_pool_check_input(om_ctx *c, enum pool_kind kind, int32_t min_rank)
{
	const om_tensor *X = c->in[0];
	if (!X)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "needs input X");
	if (X->rank < min_rank)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"X has rank %d, needs at least %d", X->rank, min_rank);
	if (!pool_type_ok(X->dtype, kind))
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "X of type %s",
				om_dtype_name(X->dtype));
	return OM_OK;
}

om_kind om_pool_geometry(om_ctx *c, om_spatial *sp)
{
	enum pool_kind kind = om_pool_kind(c);
	om_kind rc = om_pool_check_input(c, kind, 3);
	if (rc)
		return rc;
	const om_tensor *X = c->in[0];
	int32_t n = X->rank - 2;
	if (n > 3)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "%d spatial axes", n);
	const int64_t *kernel;
	if ((rc = om_spatial_kernel_attr(c, n, &kernel)))
		return rc;
	if (!kernel)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "kernel_shape is required");
	int64_t ceil_mode = om_attr_int(c->node, "ceil_mode", 0);
	if ((rc = om_spatial_forward(c, n, X->dims + 2, kernel, ceil_mode != 0, sp)))
		return rc;
	int64_t so = om_attr_int(c->node, "storage_order", 0);
	if (so != 0 && so != 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "storage_order %lld",
				(long long)so);
	if (kind == POOL_LP && om_attr_int(c->node, "p", 2) < 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "p must be >= 1");
	return OM_OK;
}

om_kind om_pool3_init(om_ctx *c, const om_spatial *sp, pool3 *g)
{
	int32_t sh = 3 - sp->n;
	int64_t total = 0;
	for (int32_t a = 0; a < 3; a++) {
		g->in[a] = a < sh ? 1 : sp->in[a - sh];
		g->out[a] = a < sh ? 1 : sp->out[a - sh];
		g->dil[a] = a < sh ? 1 : sp->dil[a - sh];
		g->k[a] = a < sh ? 1 : sp->k[a - sh];
		total += g->out[a];
	}
	g->buf = malloc(sizeof(int64_t) * (size_t)(4 * total + 1));
	if (!g->buf)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "pool tables");
	int64_t *p = g->buf;
	for (int32_t a = 0; a < 3; a++) {
		axis_taps *t = &g->t[a];
		t->lo = p, t->hi = p + g->out[a], t->padded = p + 2 * g->out[a];
		t->start = p + 3 * g->out[a];
		p += 4 * g->out[a];
		int64_t k = a < sh ? 1 : sp->k[a - sh], s = a < sh ? 1 : sp->stride[a - sh];
		int64_t pb = a < sh ? 0 : sp->pb[a - sh], pe = a < sh ? 0 : sp->pe[a - sh];
		int64_t d = g->dil[a], in = g->in[a];
		for (int64_t o = 0; o < g->out[a]; o++) {
			int64_t st = o * s - pb;
			int64_t lo = st >= 0 ? 0 : (-st + d - 1) / d;
			int64_t hi = in - 1 - st < 0 ? 0 : (in - 1 - st) / d + 1;
			int64_t hp = in + pe - 1 - st < 0 ? 0 : (in + pe - 1 - st) / d + 1;
			t->hi[o] = hi > k ? k : hi;
			t->lo[o] = lo > t->hi[o] ? t->hi[o] : lo;
			t->padded[o] = hp > k ? k : hp;
			t->start[o] = st;
		}
	}
	return OM_OK;
}
