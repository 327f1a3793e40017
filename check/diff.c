/* diff.c — the difference of two tensors (definitions in omopt.h): elements converted to
 * double with the Cast kernel's conversion, so every numeric type takes the same path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cast.h"
#include "check.h"

void om_diff_name(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

static bool is_float(int32_t dtype)
{
	return dtype == OM_FLOAT || dtype == OM_DOUBLE || dtype == OM_FLOAT16 ||
	       dtype == OM_BFLOAT16;
}

static bool comparable(int32_t dtype)
{
	return dtype != OM_STRING && dtype != OM_COMPLEX64 && dtype != OM_COMPLEX128 &&
	       dtype > OM_UNDEFINED && dtype < OM_DTYPE_COUNT && om_cast_supported(dtype, OM_DOUBLE);
}

static om_kind as_doubles(const om_tensor *t, double **out, om_status *st)
{
	int64_t n = om_tensor_numel(t);
	*out = malloc(sizeof **out * (size_t)(n > 0 ? n : 1));
	if (!*out)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory comparing tensors");
	static const om_node cast = {.name = "", .op = "Cast", .domain = ""};
	om_ctx c = {.node = &cast, .st = st};
	return om_cast_elems(&c, *out, OM_DOUBLE, t->data, t->dtype, n, 0);
}

om_kind om_diff_values(const om_tensor *a, const om_tensor *b, double rtol, double atol,
		       om_diff *d, om_status *st)
{
	d->dtype = a->dtype;
	d->rank = -1;
	d->max_abs = d->max_rel = d->ref_max = 0;
	if (a->dtype == OM_SEQUENCE || a->dtype == OM_OPTIONAL || !comparable(a->dtype)) {
		d->state = OM_DIFF_SKIPPED;
		return OM_OK;
	}
	d->rank = a->rank;
	memcpy(d->dims, a->dims, sizeof d->dims);
	memcpy(d->dims_max, a->dims, sizeof d->dims_max);
	if (b->dtype != a->dtype || b->rank != a->rank ||
	    memcmp(a->dims, b->dims, sizeof *a->dims * (size_t)a->rank)) {
		d->state = OM_DIFF_SHAPE;
		d->max_abs = d->max_rel = INFINITY;
		return OM_OK;
	}
	double *x = NULL, *y = NULL;
	om_kind rc = as_doubles(a, &x, st);
	if (!rc)
		rc = as_doubles(b, &y, st);
	int64_t n = om_tensor_numel(a);
	for (int64_t i = 0; i < n && !rc; i++) {
		double e;
		if (isnan(x[i]) || isnan(y[i]))
			e = isnan(x[i]) && isnan(y[i]) ? 0 : INFINITY;
		else if (isinf(x[i]) || isinf(y[i]))
			e = x[i] == y[i] ? 0 : INFINITY;
		else
			e = fabs(x[i] - y[i]);
		if (e > d->max_abs)
			d->max_abs = e;
		if (isfinite(x[i]) && fabs(x[i]) > d->ref_max)
			d->ref_max = fabs(x[i]);
	}
	free(x);
	free(y);
	if (rc)
		return rc;
	d->max_rel = d->max_abs == 0 ? 0 : d->ref_max > 0 ? d->max_abs / d->ref_max : INFINITY;
	bool ok = is_float(a->dtype) ? d->max_abs <= atol + rtol * d->ref_max
				     : d->max_abs == 0 &&
					       !memcmp(a->data, b->data,
						       om_tensor_bytes_for(a->dtype, a->rank, a->dims));
	d->state = ok ? OM_DIFF_OK : OM_DIFF_OVER;
	return OM_OK;
}

/* states from best to worst */
static int rank_of(int32_t state)
{
	static const int order[] = {[OM_DIFF_OK] = 1, [OM_DIFF_SKIPPED] = 0, [OM_DIFF_OVER] = 2,
				    [OM_DIFF_SHAPE] = 3, [OM_DIFF_MISSING] = 4};
	return state >= 0 && state <= OM_DIFF_SKIPPED ? order[state] : 5;
}

void om_diff_merge(om_diff *worst, const om_diff *d)
{
	if (rank_of(d->state) > rank_of(worst->state)) {
		worst->state = d->state;
		worst->rank = d->rank;
		memcpy(worst->dims, d->dims, sizeof worst->dims);
		memcpy(worst->dims_max, d->dims_max, sizeof worst->dims_max);
		worst->dtype = d->dtype;
	} else if (d->state == worst->state && d->rank == worst->rank) {
		for (int32_t k = 0; k < d->rank; k++) {
			if (d->dims[k] < worst->dims[k])
				worst->dims[k] = d->dims[k];
			if (d->dims_max[k] > worst->dims_max[k])
				worst->dims_max[k] = d->dims_max[k];
		}
	}
	if (d->max_abs > worst->max_abs || isnan(worst->max_abs))
		worst->max_abs = d->max_abs;
	if (d->max_rel > worst->max_rel)
		worst->max_rel = d->max_rel;
	if (d->ref_max > worst->ref_max)
		worst->ref_max = d->ref_max;
}

static void producer_of(const om_model *m, const char *name, char *node, size_t nnode, char *op,
			size_t nop)
{
	const om_value *v = m && m->graph ? om_graph_find(m->graph, name) : NULL;
	const om_node *p = v ? v->producer : NULL;
	om_diff_name(node, nnode, p ? p->name : "");
	om_diff_name(op, nop, p ? p->op : "");
}

void om_diff_producers(om_diff *d, const om_model *a, const om_model *b)
{
	producer_of(a, d->name, d->ref_node, sizeof d->ref_node, d->ref_op, sizeof d->ref_op);
	producer_of(b, d->name, d->node, sizeof d->node, d->op, sizeof d->op);
}
