/* ops_unique.c — Unique (opset 11): the distinct elements (or slices along `axis`), sorted
 * ascending (lexicographically for slices) or in order of first occurrence; outputs Y, the
 * first index of each, the inverse indices and the counts. Data dependent. */
#include <stdlib.h>
#include <string.h>

#include "index_util.h"
#include "move.h"
#include "numrun.h"
#include "shape_util.h"

typedef struct uq_state {
	int64_t S, L, outer, inner; /* slices, their length; the layout around the axis */
	int32_t axis;               /* -1: flattened */
	double *fk;                 /* keys [S, L] (floats) or NULL */
	int64_t *ik;                /* keys [S, L] (integers) or NULL */
	int64_t *order, *tmp, *group, *first, *count, *rank;
	int64_t U;
} uq_state;

static int uq_cmp(const uq_state *u, int64_t a, int64_t b)
{
	for (int64_t j = 0; j < u->L; j++) {
		if (u->fk) {
			const double x = u->fk[a * u->L + j], y = u->fk[b * u->L + j];
			if (x != y)
				return x < y ? -1 : 1;
		} else {
			const int64_t x = u->ik[a * u->L + j], y = u->ik[b * u->L + j];
			if (x != y)
				return x < y ? -1 : 1;
		}
	}
	return 0;
}

/* stable merge sort of order[lo, hi) */
static void uq_sort(uq_state *u, int64_t lo, int64_t hi)
{
	if (hi - lo < 2)
		return;
	const int64_t mid = lo + (hi - lo) / 2;
	uq_sort(u, lo, mid);
	uq_sort(u, mid, hi);
	int64_t i = lo, j = mid, k = lo;
	while (i < mid || j < hi)
		u->tmp[k++] = j >= hi || (i < mid && uq_cmp(u, u->order[i], u->order[j]) <= 0)
				      ? u->order[i++] : u->order[j++];
	memcpy(u->order + lo, u->tmp + lo, sizeof(int64_t) * (size_t)(hi - lo));
}

static void uq_free(uq_state *u)
{
	free(u->fk), free(u->ik), free(u->order);
}

static om_kind uq_run(om_ctx *c, uq_state *u)
{
	memset(u, 0, sizeof *u);
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL;
	if (!x || (!om_is_float_type(x->dtype) && !om_is_int_type(x->dtype)))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "needs a numeric input");
	u->axis = -1;
	u->outer = 1, u->inner = 1;
	const int64_t n = om_tensor_numel(x);
	u->S = n, u->L = 1;
	if (om_node_attr(c->node, "axis")) {
		om_kind rc = om_norm_axis(c, om_attr_int(c->node, "axis", 0), x->rank, &u->axis);
		if (rc)
			return rc;
		u->S = x->dims[u->axis];
		for (int32_t d = 0; d < x->rank; d++)
			if (d < u->axis)
				u->outer *= x->dims[d];
			else if (d > u->axis)
				u->inner *= x->dims[d];
		u->L = u->outer * u->inner;
	}
	if (!om_has_value(x))
		return OM_NEED_VALUE;
	const bool fl = om_is_float_type(x->dtype);
	void *keys = malloc(8 * (size_t)(n + 1));
	u->order = malloc(sizeof(int64_t) * (size_t)(6 * u->S + 1));
	if (!keys || !u->order) {
		free(keys), free(u->order), u->order = NULL;
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	}
	u->tmp = u->order + u->S, u->group = u->tmp + u->S, u->first = u->group + u->S;
	u->count = u->first + u->S, u->rank = u->count + u->S;
	if (fl)
		u->fk = keys;
	else
		u->ik = keys;
	const size_t es = om_dtype_size(x->dtype);
	/* slice s = the elements with axis coordinate s, in (outer, inner) order */
	for (int64_t s = 0; s < u->S; s++)
		for (int64_t o = 0; o < u->outer; o++) {
			const int64_t at = (o * u->S + s) * u->inner, k = s * u->L + o * u->inner;
			const char *src = (const char *)x->data + (size_t)at * es;
			if (fl)
				om_load_f64(x->dtype, src, 1, u->inner, u->fk + k);
			else
				om_load_i64(x->dtype, src, 1, u->inner, u->ik + k);
		}
	for (int64_t s = 0; s < u->S; s++)
		u->order[s] = s;
	uq_sort(u, 0, u->S);
	/* groups in sorted order; the first of each group is its smallest index (stable) */
	for (int64_t i = 0; i < u->S; i++) {
		const int64_t s = u->order[i];
		if (i == 0 || uq_cmp(u, u->order[i - 1], s)) {
			u->first[u->U] = s, u->count[u->U] = 0;
			u->U++;
		}
		u->group[s] = u->U - 1, u->count[u->U - 1]++;
	}
	/* rank[g]: the output position of group g */
	const bool sorted = om_attr_int(c->node, "sorted", 1) != 0;
	for (int64_t g = 0; g < u->U; g++)
		u->rank[g] = g;
	if (!sorted) { /* order groups by first occurrence: walk the input */
		int64_t next = 0;
		for (int64_t g = 0; g < u->U; g++)
			u->rank[g] = -1;
		for (int64_t s = 0; s < u->S; s++)
			if (u->rank[u->group[s]] < 0)
				u->rank[u->group[s]] = next++;
	}
	return OM_OK;
}

static void uq_shapes(om_ctx *c, const uq_state *u)
{
	const om_tensor *x = c->in[0];
	if (u->axis < 0) {
		om_set_shape(c->out[0], x->dtype, 1, &u->U);
	} else {
		int64_t y[OM_MAX_RANK];
		memcpy(y, x->dims, sizeof(int64_t) * (size_t)x->rank);
		y[u->axis] = u->U;
		om_set_shape(c->out[0], x->dtype, x->rank, y);
	}
	for (int i = 1; i < 4 && i < c->nout; i++)
		if (c->out[i])
			om_set_shape(c->out[i], OM_INT64, 1, i == 2 ? &u->S : &u->U);
}

static om_kind uq_infer(om_ctx *c)
{
	uq_state u;
	om_kind rc = uq_run(c, &u);
	if (!rc)
		uq_shapes(c, &u);
	uq_free(&u);
	return rc;
}

static om_kind uq_kernel(om_ctx *c)
{
	uq_state u;
	om_kind rc = uq_run(c, &u);
	if (!rc && (c->out[0]->rank < 1 ||
		    c->out[0]->dims[u.axis < 0 ? 0 : u.axis] != u.U))
		rc = om_error(c->st, OM_ERR_INTERNAL, c->node, "count changed");
	if (rc) {
		uq_free(&u);
		return rc;
	}
	const om_tensor *x = c->in[0];
	const size_t es = om_dtype_size(x->dtype), row = (size_t)u.inner * es;
	for (int64_t g = 0; g < u.U; g++)
		for (int64_t o = 0; o < u.outer; o++)
		{
			const int64_t to = (o * u.U + u.rank[g]) * u.inner;
			const int64_t from = (o * u.S + u.first[g]) * u.inner;
			memcpy((char *)c->out[0]->data + (size_t)to * es,
			       (const char *)x->data + (size_t)from * es, row);
		}
	int64_t *ix = c->nout > 1 && c->out[1] ? c->out[1]->data : NULL;
	int64_t *inv = c->nout > 2 && c->out[2] ? c->out[2]->data : NULL;
	int64_t *cnt = c->nout > 3 && c->out[3] ? c->out[3]->data : NULL;
	for (int64_t g = 0; g < u.U; g++) {
		if (ix)
			ix[u.rank[g]] = u.first[g];
		if (cnt)
			cnt[u.rank[g]] = u.count[g];
	}
	for (int64_t s = 0; inv && s < u.S; s++)
		inv[s] = u.rank[u.group[s]];
	uq_free(&u);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_Unique_11[] = {{"axis", OM_ATTR_INT, 0}, {"sorted", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* Unique-11: X -> Y [indices] [inverse_indices] [counts] */
static const om_sig sig_Unique_11 = {11, 1, 1, 1, 4, 0x0, 0xe, 0x1, 0x1, 0x0, 0x0, attrs_Unique_11,
	NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"Unique", "", 11, uq_infer, uq_kernel, OM_OP_EXACT | OM_OP_DATA_DEPENDENT, &sig_Unique_11,
	 OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_unique = OM_TABLE(rows);
