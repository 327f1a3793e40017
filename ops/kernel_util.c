#include <stdlib.h>
#include <string.h>

#include "op.h"

void om_ctx_state_reset(om_ctx *c)
{
	if (!c->state)
		return;
	if (*c->state && c->state_release && *c->state_release)
		(*c->state_release)(*c->state);
	free(*c->state);
	*c->state = NULL;
	if (c->state_release)
		*c->state_release = NULL;
}

void *om_ctx_state_keyed(om_ctx *c, void (*release)(void *), const int64_t *key, size_t nkey,
			 size_t size, bool *made)
{
	*made = false;
	if (!c->state || !c->state_release)
		return NULL;
	void *s = *c->state;
	if (s && *c->state_release == release && !memcmp(s, key, sizeof *key * nkey))
		return s;
	om_ctx_state_reset(c); /* another key, or another kernel's block */
	if (!(s = calloc(1, size)))
		return NULL;
	memcpy(s, key, sizeof *key * nkey);
	*c->state = s;
	*c->state_release = release;
	*made = true;
	return s;
}

void om_set_shape(om_tensor *out, int32_t dtype, int32_t rank, const int64_t *dims)
{
	out->dtype = dtype;
	out->rank = rank;
	for (int32_t i = 0; i < rank; i++)
		out->dims[i] = dims[i];
	out->nbytes = om_tensor_bytes_for(dtype, rank, dims);
}

om_kind om_partial(om_tensor *out, int32_t dtype, int64_t rank)
{
	if (!out)
		return OM_NEED_VALUE;
	out->dtype = dtype;
	out->rank = rank >= 0 && rank <= OM_MAX_RANK ? (int32_t)rank : -1;
	for (int32_t i = 0; i < out->rank; i++)
		out->dims[i] = -1;
	return OM_NEED_VALUE;
}

om_kind om_norm_axis(om_ctx *c, int64_t axis, int32_t rank, int32_t *out)
{
	int64_t a = axis < 0 ? axis + rank : axis;
	if (a < 0 || a >= rank)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"axis %lld is outside [-%d, %d)", (long long)axis, rank, rank);
	*out = (int32_t)a;
	return OM_OK;
}

om_kind om_read_ints(om_ctx *c, const om_tensor *t, int64_t *buf, int64_t cap, int64_t *count)
{
	if (!t || !t->data)
		return OM_NEED_VALUE;
	int64_t n = om_tensor_numel(t);
	if (n < 0 || n > cap)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"expected at most %lld integers, got %lld", (long long)cap,
				(long long)n);
	if (t->dtype == OM_INT64)
		memcpy(buf, t->data, sizeof(int64_t) * (size_t)n);
	else if (t->dtype == OM_INT32)
		for (int64_t i = 0; i < n; i++)
			buf[i] = ((const int32_t *)t->data)[i];
	else
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"expected an int32 or int64 tensor, got %s", om_dtype_name(t->dtype));
	*count = n;
	return OM_OK;
}

om_kind om_broadcast_shape(om_ctx *c, int32_t ra, const int64_t *da, int32_t rb,
			   const int64_t *db, int32_t *rank, int64_t *dims)
{
	int32_t r = ra > rb ? ra : rb;
	for (int32_t i = 0; i < r; i++) {
		int64_t a = i < r - ra ? 1 : da[i - (r - ra)];
		int64_t b = i < r - rb ? 1 : db[i - (r - rb)];
		if (a != b && a != 1 && b != 1)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"shapes do not broadcast at axis %d (%lld vs %lld)", i,
					(long long)a, (long long)b);
		dims[i] = a == 1 ? b : a;
	}
	*rank = r;
	return OM_OK;
}

/* ---- what a run offers kernels (om_run_services, filled by the runtime) ------------------ */

static om_kind outside_session(const om_ctx *c)
{
	return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
			"runs only in a session (not when folding constants)");
}

om_kind om_ctx_reserve(const om_ctx *c, size_t bytes, const char *what)
{
	return c->run ? c->run->reserve(c, bytes, what) : OM_OK;
}

om_kind om_ctx_scratch(const om_ctx *c, size_t bytes, const char *what, void **p)
{
	*p = NULL;
	if (c->run)
		return c->run->scratch(c, bytes, what, p);
	if (!(*p = malloc(bytes ? bytes : 1)))
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory for %s", what);
	return OM_OK;
}

void om_ctx_scratch_done(const om_ctx *c, void *p)
{
	if (p && c->run)
		c->run->scratch_done(c, p);
	else
		free(p);
}

om_kind om_ctx_check_time(const om_ctx *c)
{
	return c->run ? c->run->check_time(c) : OM_OK;
}

om_kind om_ctx_run_graph(const om_ctx *c, const om_graph *g, const om_tensor *const *in, int nin,
			 om_tensor *out, int nout)
{
	return c->run ? c->run->run_graph(c, g, in, nin, out, nout) : outside_session(c);
}

om_kind om_ctx_output(om_ctx *c, int32_t i, int32_t dtype, int32_t rank, const int64_t *dims)
{
	return c->run ? c->run->output(c, i, dtype, rank, dims) : outside_session(c);
}

om_kind om_ctx_output_value(om_ctx *c, int32_t i, om_tensor *v)
{
	return c->run ? c->run->output_value(c, i, v) : outside_session(c);
}

om_kind om_ctx_output_alias(om_ctx *c, int32_t i, const om_tensor *v, int32_t from)
{
	return c->run ? c->run->output_alias(c, i, v, from) : outside_session(c);
}
