/*
 * infer_rules.c — symbolic inference rules: shapes whose dims may be symbols, and plan-time
 * values (small int tensors whose elements are numbers or dim symbols) through the ops of
 * shape chains. Only what the op rows' infer cannot express lives here: broadcasting with
 * symbols, and Shape, Gather, Slice, Unsqueeze, Squeeze, Concat, Cast, Reshape, Expand,
 * arithmetic, Equal, Where, ConstantOfShape, Range and Size on plan-time values.
 */
#include <math.h>
#include <string.h>

#include "infer.h"

/* ---- helpers --------------------------------------------------------------------------- */

static void set_type(om_ishape *o, int32_t elem, int32_t rank, const om_dim *d)
{
	o->elem = elem;
	o->rank = rank;
	for (int32_t i = 0; i < rank && i < OM_MAX_RANK; i++)
		o->d[i] = d ? d[i] : (om_dim){-1, NULL};
}

static void copy_vi(om_ishape *o, const om_vinfo *vi)
{
	if (!vi || vi->type.kind != OM_TYPE_TENSOR)
		return;
	o->elem = vi->type.elem;
	if (om_vi_ranked(vi))
		set_type(o, vi->type.elem, vi->type.rank, vi->type.dims);
	if (vi->npv >= 0) {
		o->npv = vi->npv;
		o->pvrank = vi->pvrank;
		memcpy(o->pv, vi->pv, sizeof(om_pe) * (size_t)vi->npv);
	}
}

static int64_t opset_of(const om_pass_ctx *c, const om_node *n)
{
	return om_model_opset(c->m, n->domain);
}

static om_pe num(int64_t x)
{
	return (om_pe){OM_PE_NUM, x, NULL};
}

static const om_pe unk = {OM_PE_UNK, 0, NULL};

/* Ints from an attribute (opset < since) or from input slot's plan-time value. */
static bool ints_arg(const om_pass_ctx *c, const om_node *n, om_vinfo *const *in, int64_t since,
		     const char *attr, int32_t slot, int64_t *buf, int32_t cap, int32_t *cnt)
{
	if (opset_of(c, n) < since) {
		int64_t k;
		const int64_t *a = om_attr_ints(n, attr, &k);
		if (!a || k > cap)
			return false;
		memcpy(buf, a, sizeof(int64_t) * (size_t)k);
		*cnt = (int32_t)k;
		return true;
	}
	if (slot >= n->nin || !n->in[slot])
		return false;
	return om_pv_numbers(in[slot], buf, cap, cnt);
}

/* Normalizes axes against rank into sorted unique form; false on an invalid list. */
static bool norm_axes(int64_t *ax, int32_t cnt, int32_t rank)
{
	for (int32_t i = 0; i < cnt; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + rank : ax[i];
		if (a < 0 || a >= rank)
			return false;
		int32_t j = i;
		while (j > 0 && ax[j - 1] > a) {
			ax[j] = ax[j - 1];
			j--;
		}
		if (j > 0 && ax[j - 1] == a)
			return false;
		ax[j] = a;
	}
	return true;
}

static bool has_axis(const int64_t *ax, int32_t cnt, int64_t a)
{
	for (int32_t i = 0; i < cnt; i++)
		if (ax[i] == a)
			return true;
	return false;
}

static bool sym_eq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* ---- Shape, Size, pass-through ops ----------------------------------------------------- */

static bool r_shape(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		    om_ishape *out)
{
	(void)g;
	if (!om_vi_ranked(in[0]))
		return false;
	int64_t r = in[0]->type.rank, s = 0, e = r;
	if (opset_of(c, n) >= 15) {
		s = om_attr_int(n, "start", 0);
		e = om_attr_int(n, "end", r);
	}
	s = s < 0 ? s + r : s;
	e = e < 0 ? e + r : e;
	s = s < 0 ? 0 : s > r ? r : s;
	e = e < 0 ? 0 : e > r ? r : e;
	if (e < s)
		e = s;
	om_dim len = {e - s, NULL};
	set_type(&out[0], OM_INT64, 1, &len);
	out[0].npv = (int32_t)(e - s);
	out[0].pvrank = 1;
	for (int64_t i = s; i < e; i++)
		out[0].pv[i - s] = om_pe_of_dim(in[0]->type.dims[i]);
	return true;
}

static bool r_size(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		   om_ishape *out)
{
	(void)c, (void)g, (void)n;
	set_type(&out[0], OM_INT64, 0, NULL);
	if (!om_vi_ranked(in[0]))
		return true;
	int64_t p = 1;
	bool known = true, zero = false;
	for (int32_t i = 0; i < in[0]->type.rank; i++) {
		om_dim d = in[0]->type.dims[i];
		if (!om_dim_known(d))
			known = false;
		else if (d.value == 0)
			zero = true;
		else if (__builtin_mul_overflow(p, d.value, &p))
			known = false;
	}
	out[0].npv = 1;
	out[0].pvrank = 0;
	out[0].pv[0] = zero ? num(0) : known ? num(p) : unk;
	return true;
}

static bool r_same(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		   om_ishape *out)
{
	(void)c, (void)g;
	copy_vi(&out[0], in[0]);
	if (strcmp(n->op, "Identity"))
		out[0].npv = -1; /* only Identity and Dropout carry the value itself */
	if (!strcmp(n->op, "Dropout") || !strcmp(n->op, "Identity")) {
		out[0].npv = in[0] ? in[0]->npv : -1;
		if (n->nout > 1) {
			copy_vi(&out[1], in[0]);
			out[1].elem = OM_BOOL;
			out[1].npv = -1;
		}
	}
	static const char *const to_bool[] = {"Not", "IsNaN", "IsInf"};
	for (size_t i = 0; i < sizeof to_bool / sizeof to_bool[0]; i++)
		if (!strcmp(n->op, to_bool[i]))
			out[0].elem = OM_BOOL;
	return true;
}

static bool r_cast(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		   om_ishape *out)
{
	(void)c, (void)g;
	copy_vi(&out[0], in[0]);
	int32_t to = (int32_t)om_attr_int(n, "to", 0);
	out[0].elem = to;
	for (int32_t i = 0; i < out[0].npv; i++) {
		om_pe *e = &out[0].pv[i];
		if (to == OM_INT64)
			continue;
		if (to == OM_INT32) {
			if (e->kind == OM_PE_NUM && (e->num < INT32_MIN || e->num > INT32_MAX))
				*e = unk;
		} else if (to == OM_BOOL) {
			*e = e->kind == OM_PE_NUM ? num(e->num != 0) : unk;
		} else {
			out[0].npv = -1;
			break;
		}
	}
	return true;
}

/* ---- Unsqueeze, Squeeze, Transpose ----------------------------------------------------- */

/* The output has the input's elements in the same order (views) */
static void keep_pv(om_ishape *o, const om_vinfo *src)
{
	if (!src || src->npv < 0 || o->rank < 0)
		return;
	int64_t n = 1;
	for (int32_t i = 0; i < o->rank; i++)
		n = om_dim_known(o->d[i]) && n >= 0 ? n * o->d[i].value : -1;
	if (n != src->npv)
		return;
	o->npv = src->npv;
	o->pvrank = o->rank;
	memcpy(o->pv, src->pv, sizeof(om_pe) * (size_t)src->npv);
}

static bool r_unsqueeze(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
			om_ishape *out)
{
	(void)g;
	if (!om_vi_ranked(in[0]))
		return false;
	int64_t ax[2 * OM_MAX_RANK];
	int32_t k;
	if (!ints_arg(c, n, in, 13, "axes", 1, ax, 2 * OM_MAX_RANK, &k))
		return false;
	int32_t r = in[0]->type.rank, orank = r + k;
	if (orank > OM_MAX_RANK || !norm_axes(ax, k, orank))
		return false;
	out[0].elem = in[0]->type.elem;
	out[0].rank = orank;
	for (int32_t i = 0, j = 0; i < orank; i++)
		out[0].d[i] = has_axis(ax, k, i) ? (om_dim){1, NULL} : in[0]->type.dims[j++];
	keep_pv(&out[0], in[0]);
	return true;
}

static bool r_squeeze(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		      om_ishape *out)
{
	(void)g;
	if (!om_vi_ranked(in[0]))
		return false;
	int32_t r = in[0]->type.rank;
	int64_t ax[2 * OM_MAX_RANK];
	int32_t k = 0;
	bool given = opset_of(c, n) < 13 ? om_node_attr(n, "axes") != NULL
					 : (n->nin > 1 && n->in[1] != NULL);
	out[0].elem = in[0]->type.elem;
	if (given) {
		if (!ints_arg(c, n, in, 13, "axes", 1, ax, 2 * OM_MAX_RANK, &k) ||
		    !norm_axes(ax, k, r))
			return true; /* rank unknown */
	} else {
		for (int32_t i = 0; i < r; i++) {
			om_dim d = in[0]->type.dims[i];
			if (!om_dim_known(d))
				return true;
			if (d.value == 1)
				ax[k++] = i;
		}
	}
	out[0].rank = 0;
	for (int32_t i = 0; i < r; i++)
		if (!has_axis(ax, k, i))
			out[0].d[out[0].rank++] = in[0]->type.dims[i];
	keep_pv(&out[0], in[0]);
	return true;
}

static bool r_transpose(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
			om_ishape *out)
{
	(void)c, (void)g;
	if (!om_vi_ranked(in[0]))
		return false;
	int32_t r = in[0]->type.rank;
	int64_t k;
	const int64_t *perm = om_attr_ints(n, "perm", &k);
	if (perm && k != r)
		return false;
	bool seen[OM_MAX_RANK] = {0};
	out[0].elem = in[0]->type.elem;
	out[0].rank = r;
	for (int32_t i = 0; i < r; i++) {
		int64_t p = perm ? perm[i] : r - 1 - i;
		if (p < 0 || p >= r || seen[p])
			return false;
		seen[p] = true;
		out[0].d[i] = in[0]->type.dims[p];
	}
	if (r <= 1)
		keep_pv(&out[0], in[0]);
	return true;
}

/* ---- Concat, Gather, Slice ------------------------------------------------------------- */

static bool r_concat(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		     om_ishape *out)
{
	(void)g;
	if (n->nin < 1 || !om_vi_ranked(in[0]) || in[0]->type.rank < 1)
		return false;
	int32_t r = in[0]->type.rank, axis;
	int64_t a = om_attr_int(n, "axis", opset_of(c, n) < 4 ? 1 : 0);
	a = a < 0 ? a + r : a;
	if (a < 0 || a >= r)
		return false;
	axis = (int32_t)a;
	set_type(&out[0], in[0]->type.elem, r, in[0]->type.dims);
	int64_t sum = 0;
	bool sum_known = true, pv = true;
	int32_t npv = 0;
	for (int32_t i = 0; i < n->nin; i++) {
		const om_vinfo *v = in[i];
		if (!om_vi_ranked(v) || v->type.rank != r)
			return false;
		for (int32_t d = 0; d < r; d++) {
			om_dim x = v->type.dims[d];
			if (d == axis) {
				if (!om_dim_known(x) || __builtin_add_overflow(sum, x.value, &sum))
					sum_known = false;
			} else if (om_dim_known(x) && !om_dim_known(out[0].d[d])) {
				out[0].d[d] = x;
			}
		}
		if (v->npv < 0 || r != 1 || npv + v->npv > OM_PV_MAX) {
			pv = false;
		} else {
			memcpy(out[0].pv + npv, v->pv, sizeof(om_pe) * (size_t)v->npv);
			npv += v->npv;
		}
	}
	out[0].d[axis] = sum_known ? (om_dim){sum, NULL} : (om_dim){-1, NULL};
	if (pv) {
		out[0].npv = npv;
		out[0].pvrank = 1;
	}
	return true;
}

static bool r_gather(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		     om_ishape *out)
{
	(void)c, (void)g;
	if (n->nin < 2 || !om_vi_ranked(in[0]) || !om_vi_ranked(in[1]))
		return false;
	int32_t r = in[0]->type.rank, q = in[1]->type.rank;
	int64_t a = om_attr_int(n, "axis", 0);
	a = a < 0 ? a + r : a;
	if (a < 0 || a >= r || r + q - 1 > OM_MAX_RANK)
		return false;
	out[0].elem = in[0]->type.elem;
	out[0].rank = r + q - 1;
	int32_t k = 0;
	for (int32_t i = 0; i < a; i++)
		out[0].d[k++] = in[0]->type.dims[i];
	for (int32_t i = 0; i < q; i++)
		out[0].d[k++] = in[1]->type.dims[i];
	for (int32_t i = (int32_t)a + 1; i < r; i++)
		out[0].d[k++] = in[0]->type.dims[i];
	int64_t idx[OM_PV_MAX];
	int32_t ni;
	if (r == 1 && q <= 1 && in[0]->npv >= 0 && om_pv_numbers(in[1], idx, OM_PV_MAX, &ni)) {
		for (int32_t i = 0; i < ni; i++) {
			int64_t x = idx[i] < 0 ? idx[i] + in[0]->npv : idx[i];
			if (x < 0 || x >= in[0]->npv)
				return true;
			out[0].pv[i] = in[0]->pv[x];
		}
		out[0].npv = ni;
		out[0].pvrank = q;
	}
	return true;
}

/* Slice of one axis of extent n (../shared seed §3): first index and count. */
static int64_t slice_axis(int64_t n, int64_t start, int64_t end, int64_t step, int64_t *first)
{
	if (step > INT32_MAX)
		step = INT32_MAX;
	if (step < INT32_MIN)
		step = INT32_MIN;
	if (n == 0) {
		*first = 0;
		return 0;
	}
	int64_t cnt;
	if (step > 0) {
		start = start < 0 ? start + n : start;
		end = end < 0 ? end + n : end;
		start = start < 0 ? 0 : start > n ? n : start;
		end = end < 0 ? 0 : end > n ? n : end;
		cnt = end > start ? (end - start + step - 1) / step : 0;
	} else {
		if (end == INT32_MAX || end == INT64_MAX)
			end = -1;
		else if (end < 0)
			end = end + n < -1 ? -1 : end + n;
		start = start < 0 ? start + n : start;
		start = start < 0 ? 0 : start > n - 1 ? n - 1 : start;
		end = end > n - 1 ? n - 1 : end;
		cnt = start > end ? (start - end + (-step) - 1) / (-step) : 0;
	}
	*first = start;
	return cnt;
}

static bool r_slice(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		    om_ishape *out)
{
	(void)g;
	if (!om_vi_ranked(in[0]))
		return false;
	int32_t r = in[0]->type.rank;
	int64_t st[OM_MAX_RANK], en[OM_MAX_RANK], ax[OM_MAX_RANK], sp[OM_MAX_RANK];
	int32_t ns, ne, na, np;
	out[0].elem = in[0]->type.elem;
	bool ok = ints_arg(c, n, in, 10, "starts", 1, st, OM_MAX_RANK, &ns) &&
		  ints_arg(c, n, in, 10, "ends", 2, en, OM_MAX_RANK, &ne) && ns == ne;
	bool have_axes = opset_of(c, n) < 10 ? om_node_attr(n, "axes") != NULL
					     : (n->nin > 3 && n->in[3] != NULL);
	if (ok && have_axes)
		ok = ints_arg(c, n, in, 10, "axes", 3, ax, OM_MAX_RANK, &na) && na == ns;
	else
		for (int32_t i = 0; i < ns && ok; i++)
			ax[i] = i;
	bool have_steps = opset_of(c, n) >= 10 && n->nin > 4 && n->in[4] != NULL;
	if (ok && have_steps)
		ok = ints_arg(c, n, in, 10, "steps", 4, sp, OM_MAX_RANK, &np) && np == ns;
	else
		for (int32_t i = 0; i < ns && ok; i++)
			sp[i] = 1;
	if (!ok) {
		out[0].rank = r; /* extents unknown */
		return true;
	}
	set_type(&out[0], in[0]->type.elem, r, in[0]->type.dims);
	int64_t first = 0, count = -1;
	for (int32_t i = 0; i < ns; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + r : ax[i];
		if (a < 0 || a >= r || sp[i] == 0)
			return false;
		om_dim d = in[0]->type.dims[a];
		if (om_dim_known(d)) {
			count = slice_axis(d.value, st[i], en[i], sp[i], &first);
			out[0].d[a] = (om_dim){count, NULL};
		} else if (!(st[i] == 0 && sp[i] == 1 && en[i] >= INT32_MAX)) {
			out[0].d[a] = (om_dim){-1, NULL};
		}
	}
	if (r == 1 && in[0]->npv >= 0 && ns == 1 && count >= 0) {
		int64_t step = sp[0] > INT32_MAX ? INT32_MAX
			       : sp[0] < INT32_MIN ? INT32_MIN : sp[0];
		for (int64_t i = 0; i < count; i++)
			out[0].pv[i] = in[0]->pv[first + i * step];
		out[0].npv = (int32_t)count;
		out[0].pvrank = 1;
	}
	return true;
}

/* ---- Reshape, Expand, ConstantOfShape, Range ------------------------------------------- */

/* The extent a -1 stands for: input extents over the output's other extents, with equal
 * symbols cancelled. Unknown when symbols remain or the division is not exact. */
static om_dim infer_minus_one(const om_vinfo *x, const om_dim *o, int32_t orank, int32_t skip)
{
	const char *sin[OM_MAX_RANK], *sout[OM_MAX_RANK];
	int32_t ni = 0, no = 0;
	int64_t pin = 1, pout = 1;
	for (int32_t i = 0; i < x->type.rank; i++) {
		om_dim d = x->type.dims[i];
		if (om_dim_known(d)) {
			if (__builtin_mul_overflow(pin, d.value, &pin))
				return (om_dim){-1, NULL};
		} else if (d.param) {
			sin[ni++] = d.param;
		} else {
			return (om_dim){-1, NULL};
		}
	}
	for (int32_t i = 0; i < orank; i++) {
		if (i == skip)
			continue;
		om_dim d = o[i];
		if (om_dim_known(d)) {
			if (__builtin_mul_overflow(pout, d.value, &pout))
				return (om_dim){-1, NULL};
		} else if (d.param) {
			sout[no++] = d.param;
		} else {
			return (om_dim){-1, NULL};
		}
	}
	for (int32_t i = 0; i < no; i++) {
		int32_t j = 0;
		while (j < ni && !sym_eq(sin[j], sout[i]))
			j++;
		if (j == ni)
			return (om_dim){-1, NULL};
		sin[j] = sin[--ni];
	}
	if (ni == 0 && pout > 0 && pin % pout == 0)
		return (om_dim){pin / pout, NULL};
	if (ni == 1 && pin == pout)
		return (om_dim){-1, sin[0]};
	return (om_dim){-1, NULL};
}

static bool r_reshape(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		      om_ishape *out)
{
	(void)g;
	if (opset_of(c, n) < 5 || n->nin < 2 || !in[1] || !in[0])
		return false;
	out[0].elem = in[0]->type.elem;
	if (in[1]->npv < 0 || in[1]->pvrank != 1) {
		if (om_vi_ranked(in[1]) && in[1]->type.rank == 1 &&
		    om_dim_known(in[1]->type.dims[0]) && in[1]->type.dims[0].value <= OM_MAX_RANK)
			out[0].rank = (int32_t)in[1]->type.dims[0].value; /* extents unknown */
		return true;
	}
	int32_t k = in[1]->npv;
	if (k > OM_MAX_RANK)
		return false;
	bool allowzero = opset_of(c, n) >= 14 && om_attr_int(n, "allowzero", 0);
	int32_t minus = -1;
	out[0].rank = k;
	for (int32_t i = 0; i < k; i++) {
		om_pe e = in[1]->pv[i];
		out[0].d[i] = om_dim_of_pe(e);
		if (e.kind == OM_PE_NUM && e.num == 0 && !allowzero)
			out[0].d[i] = om_vi_ranked(in[0]) && i < in[0]->type.rank
					      ? in[0]->type.dims[i]
					      : (om_dim){-1, NULL};
		if (e.kind == OM_PE_NUM && e.num == -1)
			minus = i;
	}
	if (minus >= 0 && om_vi_ranked(in[0]))
		out[0].d[minus] = infer_minus_one(in[0], out[0].d, k, minus);
	keep_pv(&out[0], in[0]);
	return true;
}

/* Broadcast of two extents; unknown when it cannot be told. */
static om_dim bcast(om_dim a, om_dim b)
{
	if (om_dim_known(a) && a.value == 1)
		return b;
	if (om_dim_known(b) && b.value == 1)
		return a;
	if (om_dims_equal(a, b))
		return a;
	if (om_dim_known(a) && !om_dim_known(b))
		return a; /* b must be a or 1 */
	if (om_dim_known(b) && !om_dim_known(a))
		return b;
	return (om_dim){-1, NULL};
}

static bool bcast_into(om_ishape *o, int32_t rank, const om_dim *d)
{
	if (rank > OM_MAX_RANK)
		return false;
	int32_t r = o->rank > rank ? o->rank : rank;
	om_dim res[OM_MAX_RANK];
	for (int32_t i = 0; i < r; i++) {
		om_dim a = i < r - o->rank ? (om_dim){1, NULL} : o->d[i - (r - o->rank)];
		om_dim b = i < r - rank ? (om_dim){1, NULL} : d[i - (r - rank)];
		res[i] = bcast(a, b);
	}
	o->rank = r;
	memcpy(o->d, res, sizeof(om_dim) * (size_t)r);
	return true;
}

static bool r_expand(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		     om_ishape *out)
{
	(void)c, (void)g;
	if (n->nin < 2 || !om_vi_ranked(in[0]) || !in[1] || in[1]->npv < 0 ||
	    in[1]->npv > OM_MAX_RANK)
		return false;
	om_dim shp[OM_MAX_RANK];
	for (int32_t i = 0; i < in[1]->npv; i++)
		shp[i] = om_dim_of_pe(in[1]->pv[i]);
	set_type(&out[0], in[0]->type.elem, in[0]->type.rank, in[0]->type.dims);
	return bcast_into(&out[0], in[1]->npv, shp);
}

static bool r_constant_of_shape(om_pass_ctx *c, const om_graph *g, const om_node *n,
				om_vinfo *const *in, om_ishape *out)
{
	(void)c, (void)g;
	const om_tensor *v = om_attr_tensor(n, "value");
	out[0].elem = v ? v->dtype : OM_FLOAT;
	if (!in[0] || in[0]->npv < 0 || in[0]->npv > OM_MAX_RANK)
		return true;
	out[0].rank = in[0]->npv;
	int64_t numel = 1;
	for (int32_t i = 0; i < in[0]->npv; i++) {
		out[0].d[i] = om_dim_of_pe(in[0]->pv[i]);
		numel = om_dim_known(out[0].d[i]) && numel >= 0 ? numel * out[0].d[i].value : -1;
	}
	if (out[0].rank <= 1 && numel >= 0 && numel <= OM_PV_MAX && v && v->data &&
	    (v->dtype == OM_INT64 || v->dtype == OM_INT32)) {
		int64_t x = v->dtype == OM_INT64 ? *(const int64_t *)v->data
						 : *(const int32_t *)v->data;
		for (int64_t i = 0; i < numel; i++)
			out[0].pv[i] = num(x);
		out[0].npv = (int32_t)numel;
		out[0].pvrank = out[0].rank;
	}
	return true;
}

static bool r_range(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		    om_ishape *out)
{
	(void)c, (void)g;
	if (n->nin < 3 || !in[0] || (in[0]->type.elem != OM_INT64 && in[0]->type.elem != OM_INT32))
		return false;
	out[0].elem = in[0]->type.elem;
	out[0].rank = 1;
	out[0].d[0] = (om_dim){-1, NULL};
	int64_t s, l, d;
	int32_t k;
	if (!om_pv_numbers(in[0], &s, 1, &k) || !om_pv_numbers(in[2], &d, 1, &k) || d == 0)
		return true;
	if (s == 0 && d == 1 && in[1] && in[1]->npv == 1 && in[1]->pv[0].kind == OM_PE_SYM) {
		out[0].d[0] = om_dim_of_pe(in[1]->pv[0]); /* Range(0, n, 1) has n elements */
		return true;
	}
	if (!om_pv_numbers(in[1], &l, 1, &k))
		return true;
	double q = ceil(((double)l - (double)s) / (double)d);
	int64_t cnt = q > 0 ? (int64_t)q : 0;
	if (q > 1e15)
		return true;
	out[0].d[0] = (om_dim){cnt, NULL};
	if (cnt <= OM_PV_MAX) {
		for (int64_t i = 0; i < cnt; i++)
			out[0].pv[i] = num(s + i * d);
		out[0].npv = (int32_t)cnt;
		out[0].pvrank = 1;
	}
	return true;
}

/* ---- broadcasting ops and arithmetic on plan-time values ------------------------------- */

static om_pe pe_binop(const char *op, om_pe a, om_pe b)
{
	bool na = a.kind == OM_PE_NUM, nb = b.kind == OM_PE_NUM;
	int64_t r;
	if (!strcmp(op, "Add")) {
		if (na && nb)
			return __builtin_add_overflow(a.num, b.num, &r) ? unk : num(r);
		if (nb && b.num == 0)
			return a;
		if (na && a.num == 0)
			return b;
	} else if (!strcmp(op, "Sub")) {
		if (na && nb)
			return __builtin_sub_overflow(a.num, b.num, &r) ? unk : num(r);
		if (nb && b.num == 0)
			return a;
		if (a.kind == OM_PE_SYM && b.kind == OM_PE_SYM && sym_eq(a.sym, b.sym))
			return num(0);
	} else if (!strcmp(op, "Mul")) {
		if (na && nb)
			return __builtin_mul_overflow(a.num, b.num, &r) ? unk : num(r);
		if ((nb && b.num == 1) || (na && a.num == 0))
			return a;
		if ((na && a.num == 1) || (nb && b.num == 0))
			return b;
	} else if (!strcmp(op, "Div")) {
		if (na && nb && b.num != 0 && !(a.num == INT64_MIN && b.num == -1))
			return num(a.num / b.num);
		if (nb && b.num == 1)
			return a;
	} else if (!strcmp(op, "Equal")) {
		if (na && nb)
			return num(a.num == b.num);
		/* a symbol is an extent, so it is never negative */
		if ((a.kind == OM_PE_SYM && nb && b.num < 0) ||
		    (b.kind == OM_PE_SYM && na && a.num < 0))
			return num(0);
		if (a.kind == OM_PE_SYM && b.kind == OM_PE_SYM && sym_eq(a.sym, b.sym))
			return num(1);
	} else if (!strcmp(op, "Less")) {
		if (na && nb)
			return num(a.num < b.num);
	} else if (!strcmp(op, "Greater")) {
		if (na && nb)
			return num(a.num > b.num);
	} else if (!strcmp(op, "Max")) {
		if (na && nb)
			return num(a.num > b.num ? a.num : b.num);
	} else if (!strcmp(op, "Min")) {
		if (na && nb)
			return num(a.num < b.num ? a.num : b.num);
	}
	return unk;
}

static bool is_bool_op(const char *op)
{
	static const char *const ops[] = {"Equal", "Less", "Greater", "LessOrEqual",
					  "GreaterOrEqual", "And", "Or", "Xor"};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (!strcmp(op, ops[i]))
			return true;
	return false;
}

/* Element i of a broadcast plan-time value of count n (1 broadcasts). */
static om_pe pv_at(const om_vinfo *v, int32_t i)
{
	return v->npv == 1 ? v->pv[0] : v->pv[i];
}

static bool r_broadcast(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
			om_ishape *out)
{
	(void)c, (void)g;
	bool where = !strcmp(n->op, "Where");
	int32_t first = where ? 1 : 0;
	if (n->nin < 1 || !in[first] || (where && n->nin != 3))
		return false;
	out[0].elem = is_bool_op(n->op) ? OM_BOOL : in[first]->type.elem;
	out[0].rank = 0;
	for (int32_t i = 0; i < n->nin; i++) {
		if (!n->in[i])
			continue;
		if (!om_vi_ranked(in[i])) {
			out[0].rank = -1;
			return true;
		}
		if (!bcast_into(&out[0], in[i]->type.rank, in[i]->type.dims))
			return false;
	}
	/* plan-time values: vectors (or scalars) of equal counts, or count 1 */
	int32_t cnt = 1;
	for (int32_t i = 0; i < n->nin; i++) {
		if (!in[i] || in[i]->npv < 0 || in[i]->pvrank > 1)
			return true;
		if (in[i]->npv != 1) {
			if (cnt != 1 && cnt != in[i]->npv)
				return true;
			cnt = in[i]->npv;
		}
	}
	if (out[0].rank > 1 || (where ? n->nin != 3 : n->nin != 2))
		return true;
	for (int32_t i = 0; i < cnt; i++) {
		if (where) {
			om_pe k = pv_at(in[0], i);
			out[0].pv[i] = k.kind != OM_PE_NUM ? unk
				       : k.num ? pv_at(in[1], i) : pv_at(in[2], i);
		} else {
			out[0].pv[i] = pe_binop(n->op, pv_at(in[0], i), pv_at(in[1], i));
		}
	}
	out[0].npv = cnt;
	out[0].pvrank = out[0].rank;
	return true;
}

static bool r_matmul(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		     om_ishape *out)
{
	(void)c, (void)g;
	if (n->nin < 2 || !om_vi_ranked(in[0]) || !om_vi_ranked(in[1]))
		return false;
	int32_t ra = in[0]->type.rank, rb = in[1]->type.rank;
	if (ra < 1 || rb < 1)
		return false;
	const om_dim *a = in[0]->type.dims, *b = in[1]->type.dims;
	om_ishape batch = {.rank = 0};
	if (ra > 2)
		set_type(&batch, 0, ra - 2, a);
	if (rb > 2 && !bcast_into(&batch, rb - 2, b))
		return false;
	out[0].elem = in[0]->type.elem;
	int32_t r = batch.rank;
	memcpy(out[0].d, batch.d, sizeof(om_dim) * (size_t)r);
	if (ra >= 2)
		out[0].d[r++] = a[ra - 2];
	if (rb >= 2)
		out[0].d[r++] = b[rb - 1];
	if (r > OM_MAX_RANK)
		return false;
	out[0].rank = r;
	return true;
}

static bool r_constant(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		       om_ishape *out)
{
	(void)c, (void)g, (void)in;
	const om_tensor *t = om_attr_tensor(n, "value");
	const om_attr *a = NULL;
	if (t) {
		if (t->rank > OM_MAX_RANK)
			return false;
		out[0].elem = t->dtype;
		out[0].rank = t->rank;
		for (int32_t i = 0; i < t->rank; i++)
			out[0].d[i] = (om_dim){t->dims[i], NULL};
		int64_t k = om_tensor_numel(t);
		if (k >= 0 && k <= OM_PV_MAX && t->data &&
		    (t->dtype == OM_INT64 || t->dtype == OM_INT32)) {
			const int64_t *i64 = t->data;
			const int32_t *i32 = t->data;
			for (int64_t i = 0; i < k; i++)
				out[0].pv[i] = num(t->dtype == OM_INT64 ? i64[i] : i32[i]);
			out[0].npv = (int32_t)k;
			out[0].pvrank = t->rank;
		}
	} else if ((a = om_node_attr(n, "value_int")) && a->type == OM_ATTR_INT) {
		set_type(&out[0], OM_INT64, 0, NULL);
		out[0].pv[0] = num(a->i);
		out[0].npv = 1;
		out[0].pvrank = 0;
	} else if ((a = om_node_attr(n, "value_ints")) && a->type == OM_ATTR_INTS &&
		   a->n <= OM_PV_MAX) {
		om_dim d = {a->n, NULL};
		set_type(&out[0], OM_INT64, 1, &d);
		for (int64_t i = 0; i < a->n; i++)
			out[0].pv[i] = num(a->ints[i]);
		out[0].npv = (int32_t)a->n;
		out[0].pvrank = 1;
	} else {
		return false;
	}
	return true;
}

/* ---- the table ------------------------------------------------------------------------- */

static const struct {
	const char *op;
	om_infer_rule fn;
} rules[] = {
	{"Constant", r_constant}, {"Shape", r_shape}, {"Size", r_size},
	{"Identity", r_same}, {"Dropout", r_same},
	{"Cast", r_cast}, {"Unsqueeze", r_unsqueeze}, {"Squeeze", r_squeeze},
	{"Transpose", r_transpose}, {"Concat", r_concat}, {"Gather", r_gather},
	{"Slice", r_slice}, {"Reshape", r_reshape}, {"Expand", r_expand},
	{"ConstantOfShape", r_constant_of_shape}, {"Range", r_range}, {"MatMul", r_matmul},
	{"Add", r_broadcast}, {"Sub", r_broadcast}, {"Mul", r_broadcast}, {"Div", r_broadcast},
	{"Pow", r_broadcast}, {"Mod", r_broadcast}, {"Equal", r_broadcast},
	{"Less", r_broadcast}, {"Greater", r_broadcast}, {"LessOrEqual", r_broadcast},
	{"GreaterOrEqual", r_broadcast}, {"And", r_broadcast}, {"Or", r_broadcast},
	{"Xor", r_broadcast}, {"Where", r_broadcast}, {"Max", r_broadcast},
	{"Min", r_broadcast}, {"Sum", r_broadcast}, {"Mean", r_broadcast},
	{"PRelu", r_broadcast}, {"BitShift", r_broadcast},
	/* same shape and type as input 0 */
	{"Relu", r_same}, {"Sigmoid", r_same}, {"Tanh", r_same}, {"Exp", r_same},
	{"Log", r_same}, {"Sqrt", r_same}, {"Neg", r_same}, {"Abs", r_same}, {"Erf", r_same},
	{"Softmax", r_same}, {"LogSoftmax", r_same}, {"Clip", r_same}, {"LeakyRelu", r_same},
	{"HardSigmoid", r_same}, {"HardSwish", r_same}, {"Gelu", r_same}, {"Not", r_same},
	{"Reciprocal", r_same}, {"Floor", r_same}, {"Ceil", r_same}, {"Round", r_same},
	{"Sin", r_same}, {"Cos", r_same}, {"Tan", r_same}, {"Elu", r_same}, {"Selu", r_same},
	{"Softplus", r_same}, {"Softsign", r_same}, {"Mish", r_same}, {"Sign", r_same},
	{"IsNaN", r_same}, {"IsInf", r_same}, {"Hardmax", r_same}, {"Celu", r_same},
	{"ThresholdedRelu", r_same}, {"Shrink", r_same}, {"LRN", r_same},
	{"InstanceNormalization", r_same}, {"LayerNormalization", r_same},
	{"BatchNormalization", r_same}, {"Trilu", r_same}, {"CumSum", r_same},
};

om_infer_rule om_infer_rule_for(const om_node *n)
{
	if (n->domain[0] && strcmp(n->domain, "ai.onnx"))
		return NULL;
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
		if (!strcmp(rules[i].op, n->op))
			return rules[i].fn;
	return NULL;
}
