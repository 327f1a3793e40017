/* ml_common.c — the ai.onnx.ml rows' shared readers, post transforms and class labels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "index_util.h"
#include "ml_common.h"

om_kind ml_post_transform(om_ctx *c, int *post)
{
	static const char *const names[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO",
					    "PROBIT", NULL};
	*post = om_attr_choice(c->node, "post_transform", names, ML_POST_NONE);
	if (*post < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"post_transform is not NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT");
	return OM_OK;
}

om_kind ml_tensor_reals(om_ctx *c, const om_tensor *t, const char *name, double **v,
			int64_t *n)
{
	*v = NULL;
	*n = 0;
	if (!t)
		return OM_OK;
	int64_t k = om_tensor_numel(t);
	if (k < 0 || (t->dtype != OM_FLOAT && t->dtype != OM_DOUBLE && t->dtype != OM_FLOAT16) ||
	    !t->data || t->nbytes < (size_t)k * om_dtype_size(t->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%s is not a float, double or float16 tensor", name);
	if (!k)
		return OM_OK;
	*v = malloc(sizeof **v * (size_t)k);
	if (!*v)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (%s)", name);
	for (int64_t i = 0; i < k; i++)
		(*v)[i] = om_ix_float_at(t, i);
	*n = k;
	return OM_OK;
}

om_kind ml_reals(om_ctx *c, const char *name, double **v, int64_t *n)
{
	char tname[64];
	snprintf(tname, sizeof tname, "%s_as_tensor", name);
	const om_attr *a = om_node_attr(c->node, name), *t = om_node_attr(c->node, tname);
	*v = NULL;
	*n = 0;
	if (a && t)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "both %s and %s are set",
				name, tname);
	if (t) {
		if (t->type != OM_ATTR_TENSOR || !t->t)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s is not a tensor",
					tname);
		return ml_tensor_reals(c, t->t, tname, v, n);
	}
	if (!a || !a->n)
		return OM_OK;
	if (a->type != OM_ATTR_FLOATS)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s is not a list of floats",
				name);
	*v = malloc(sizeof **v * (size_t)a->n);
	if (!*v)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (%s)", name);
	for (int64_t i = 0; i < a->n; i++)
		(*v)[i] = a->floats[i];
	*n = a->n;
	return OM_OK;
}

double ml_logistic(double v)
{
	const double e = 1 / (1 + exp(-fabs(v)));
	return v < 0 ? 1 - e : e;
}

/* ONNX Runtime's (and ONNX's reference) erf inverse: Winitzki's approximation, a = 0.147 */
static double erf_inv(double x)
{
	const double sgn = x < 0 ? -1.0 : 1.0;
	x = (1 - x) * (1 + x);
	if (x == 0)
		return 0;
	const double lg = log(x);
	const double v = 2 / (3.14159265358979323846 * 0.147) + 0.5 * lg;
	const double v2 = 1 / 0.147 * lg;
	return sgn * sqrt(-v + sqrt(v * v - v2));
}

double ml_probit(double v)
{
	return 1.41421356237309504880 * erf_inv(2 * v - 1);
}

void ml_post_apply(int post, double *s, int64_t n)
{
	if (n <= 0)
		return;
	switch (post) {
	case ML_POST_LOGISTIC:
		for (int64_t i = 0; i < n; i++)
			s[i] = ml_logistic(s[i]);
		break;
	case ML_POST_PROBIT:
		for (int64_t i = 0; i < n; i++)
			s[i] = ml_probit(s[i]);
		break;
	case ML_POST_SOFTMAX:
	case ML_POST_SOFTMAX_ZERO: {
		double mx = -INFINITY, sum = 0;
		for (int64_t i = 0; i < n; i++)
			mx = s[i] > mx ? s[i] : mx;
		for (int64_t i = 0; i < n; i++) {
			/* SOFTMAX_ZERO leaves zeros out: exp(0 - max) would count them */
			if (post == ML_POST_SOFTMAX_ZERO && fabs(s[i]) <= 1e-7)
				s[i] = 0;
			else
				s[i] = exp(s[i] - mx);
			sum += s[i];
		}
		for (int64_t i = 0; i < n; i++)
			s[i] = sum == 0 ? 0.5 : s[i] / sum;
		break;
	}
	default:
		break;
	}
}

om_kind ml_rows(om_ctx *c, const om_tensor *x, int64_t *n, int64_t *f)
{
	switch (x->dtype) {
	case OM_FLOAT: case OM_DOUBLE: case OM_FLOAT16: case OM_INT64: case OM_INT32:
		break;
	default:
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "X has type %s",
				om_dtype_name(x->dtype));
	}
	if (x->rank == 1) {
		*n = 1;
		*f = x->dims[0];
	} else if (x->rank == 2) {
		*n = x->dims[0];
		*f = x->dims[1];
	} else {
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "X has rank %d, not 1 or 2",
				(int)x->rank);
	}
	return OM_OK;
}

double ml_at(const om_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case OM_FLOAT: case OM_DOUBLE: case OM_FLOAT16: case OM_BFLOAT16:
		return om_ix_float_at(t, i);
	default:
		return (double)om_ix_int_at(t, i);
	}
}

void ml_store(om_tensor *t, int64_t i, double v)
{
	switch (t->dtype) {
	case OM_DOUBLE: ((double *)t->data)[i] = v; break;
	case OM_FLOAT16: ((uint16_t *)t->data)[i] = om_float_to_half((float)v); break;
	default: ((float *)t->data)[i] = (float)v; break;
	}
}

om_kind ml_labels_get(om_ctx *c, const char *ints, const char *strs, ml_labels *l)
{
	const om_attr *a = om_node_attr(c->node, ints), *b = om_node_attr(c->node, strs);
	memset(l, 0, sizeof *l);
	if (a && a->n && b && b->n)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "both %s and %s are set",
				ints, strs);
	if (a && a->n) {
		if (a->type != OM_ATTR_INTS)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s is not ints", ints);
		l->n = a->n;
		l->ints = a->ints;
		return OM_OK;
	}
	if (b && b->n) {
		if (b->type != OM_ATTR_STRINGS)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s is not strings",
					strs);
		l->strings = 1;
		l->n = b->n;
		l->strs = b->strings;
		return OM_OK;
	}
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "neither %s nor %s is set", ints,
			strs);
}

om_kind ml_label_put(om_ctx *c, const ml_labels *l, om_tensor *y, int64_t i, int64_t k)
{
	if (!l->strings) {
		((int64_t *)y->data)[i] = l->ints[k];
		return OM_OK;
	}
	const om_str s = l->strs[k];
	const int64_t len = s.len > 0 ? s.len : 0;
	char *p = malloc((size_t)len + 1);
	if (!p) {
		ml_labels_clear_from(y, i);
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (labels)");
	}
	if (len)
		memcpy(p, s.ptr, (size_t)len);
	p[len] = 0;
	((om_str *)y->data)[i] = (om_str){p, len};
	return OM_OK;
}

void ml_labels_clear_from(om_tensor *y, int64_t i)
{
	if (y->dtype != OM_STRING)
		return;
	for (int64_t n = om_tensor_numel(y); i < n; i++)
		((om_str *)y->data)[i] = (om_str){NULL, 0};
}
