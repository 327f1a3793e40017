/* index_scatter.c — ScatterND (opsets 11, 16, 18; the ScatterND spec seed and seed §2):
 * output = data, then the updates applied in index order, replaced or folded by `reduction`. */
#include <string.h>

#include "index_util.h"
#include "move.h"
#include "shape_util.h"


om_kind om_scatter_reduction(om_ctx *c, int *out)
{
	static const char *const names[] = {"none", "add", "mul", "max", "min"};
	const int32_t last = c->op->param;
	const char *r = last != OM_RED_NONE ? om_attr_string(c->node, "reduction", "none") : "none";
	for (int i = 0; i <= last; i++)
		if (!strcmp(r, names[i])) {
			*out = i;
			return OM_OK;
		}
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
			"reduction '%s' is not allowed at opset %lld", r, (long long)c->opset);
}

static om_kind scatter_check(om_ctx *c, int *red)
{
	const om_tensor *x = c->in[0], *ix = c->in[1], *u = c->in[2];
	om_kind rc;
	if ((rc = om_scatter_reduction(c, red)) || (rc = om_ix_check_index_type(c, ix, "indices")))
		return rc;
	if (x->rank < 1 || ix->rank < 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"data and indices must have rank >= 1");
	if (u->dtype != x->dtype)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"updates are %s, data %s", om_dtype_name(u->dtype),
				om_dtype_name(x->dtype));
	if (*red != OM_RED_NONE && x->dtype != OM_FLOAT && x->dtype != OM_DOUBLE &&
	    x->dtype != OM_INT32 && x->dtype != OM_INT64)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
				"reduction on %s (float, double, int32, int64 only)",
				om_dtype_name(x->dtype));
	int64_t k = ix->dims[ix->rank - 1];
	if (k < 0 || k > x->rank)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"index tuples of length %lld exceed rank(data) %d", (long long)k,
				x->rank);
	/* updates.shape == indices.shape[:-1] ++ data.shape[k:] */
	int32_t want = ix->rank - 1 + x->rank - (int32_t)k;
	bool ok = u->rank == want;
	for (int32_t i = 0; ok && i < ix->rank - 1; i++)
		ok = u->dims[i] == ix->dims[i];
	for (int32_t i = (int32_t)k; ok && i < x->rank; i++)
		ok = u->dims[ix->rank - 1 + i - (int32_t)k] == x->dims[i];
	if (!ok)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"updates shape must be indices.shape[:-1] + data.shape[%lld:]",
				(long long)k);
	return OM_OK;
}

om_kind om_scatternd_infer(om_ctx *c)
{
	int red;
	om_kind rc = scatter_check(c, &red);
	if (rc)
		return rc;
	return om_ix_set_shape(c, c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
}

/* o = f(o, u) over n elements; max/min as `u < o ? o : u` and `o < u ? o : u`, so a NaN in
 * either operand makes the update win (seed §2). Integers wrap (computed unsigned). */
#define REDUCE_FN(NAME, T, UT)                                                                   \
	static void NAME(void *dst, const void *src, int64_t n, int red)                         \
	{                                                                                        \
		T *d = dst;                                                                      \
		const T *s = src;                                                                \
		for (int64_t i = 0; i < n; i++) {                                                \
			T o = d[i], u = s[i];                                                    \
			switch (red) {                                                           \
			case OM_RED_ADD: d[i] = (T)((UT)o + (UT)u); break;                       \
			case OM_RED_MUL: d[i] = (T)((UT)o * (UT)u); break;                       \
			case OM_RED_MAX: d[i] = u < o ? o : u; break;                            \
			default: d[i] = o < u ? o : u; break;                                    \
			}                                                                        \
		}                                                                                \
	}

REDUCE_FN(reduce_f32, float, float)
REDUCE_FN(reduce_f64, double, double)
REDUCE_FN(reduce_i32, int32_t, uint32_t)
REDUCE_FN(reduce_i64, int64_t, uint64_t)

om_scatter_fold_fn om_scatter_fold(int32_t dtype)
{
	return dtype == OM_FLOAT ? reduce_f32 : dtype == OM_DOUBLE ? reduce_f64
	       : dtype == OM_INT32 ? reduce_i32 : reduce_i64;
}

static om_kind scatter_move(om_ctx *c)
{
	int red;
	om_kind rc = scatter_check(c, &red);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0], *ix = c->in[1], *u = c->in[2];
	om_tensor *y = c->out[0];
	const int64_t k = ix->dims[ix->rank - 1];
	const int64_t tuples = om_shape_numel(ix->rank - 1, ix->dims);
	int64_t slice = 1;
	for (int32_t i = (int32_t)k; i < x->rank; i++)
		slice *= x->dims[i];
	if ((rc = om_ix_check_tuples(c, ix, tuples, k, x->dims)))
		return rc;
	const size_t size = om_move_size(x->dtype);
	om_move_n(y->data, x->data, size, om_tensor_numel(x));
	const om_scatter_fold_fn fold = om_scatter_fold(x->dtype);
	unsigned char *dst = y->data;
	const unsigned char *src = u->data;
	for (int64_t t = 0; t < tuples; t++) {
		const int64_t off = om_ix_tuple_offset(ix, t, k, x->dims);
		unsigned char *d = dst + (size_t)(off * slice) * size;
		const unsigned char *s = src + (size_t)(t * slice) * size;
		if (red == OM_RED_NONE)
			memmove(d, s, (size_t)slice * size);
		else
			fold(d, s, slice, red);
	}
	return OM_OK;
}

om_kind om_scatternd_kernel(om_ctx *c)
{
	return om_move_run(c, scatter_move);
}
