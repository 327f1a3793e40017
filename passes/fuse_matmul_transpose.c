/*
 * fuse_matmul_transpose.c — the fuse_matmul_transpose pass: a float32 MatMul (or com.microsoft
 * FusedMatMul) absorbs what only reorders or scales its operands and result, as a
 * com.microsoft FusedMatMul (ONNX Runtime's contrib op; the pass imports its domain):
 *
 *   - a Transpose feeding A or B (not a constant: the folder handles those), when the side has
 *     no transBatch yet and the permutation p is
 *       the swap of the last two axes             -> trans flag toggled, the Transpose bypassed
 *       [1, .., r-2, 0, r-1] (A, B of one rank >= 3) -> transBatch, bypassed
 *       that followed by the swap                 -> transBatch and trans toggled, bypassed
 *       q then the swap, where q keeps the last axis and p does not (attention's K^T,
 *       (0,2,3,1) = (0,2,1,3) then the swap)     -> trans toggled; the Transpose becomes q
 *       (rows move as blocks) when the product is its only reader;
 *   - Mul by a constant float32 scalar (either operand) or Div by a constant power of two, of
 *     the product's output, when the product has no other reader and alpha 1 (or the factor is
 *     a power of two): alpha scaled. alpha * acc is one rounding, as the Mul/Div's was, so
 *     exact mode keeps its bits. The Mul/Div node becomes the product and keeps its name;
 *   - Mul or Div by a constant power of two of an operand that the product alone reads (the
 *     Q / sqrt(d) of attention): alpha scaled; powers of two commute with every rounding.
 *
 * Shapes come from inference (ranks of both operands must be known).
 */
#include <math.h>
#include <string.h>

#include "infer.h"
#include "match.h"

static bool is_product(const om_graph *g, const om_node *n)
{
	if (!n || n->nin != 2 || n->nout != 1 || !n->in[0] || !n->in[1] || !n->out[0])
		return false;
	if (om_node_code(g->model, n) == OM_OPC_MS_FUSED_MATMUL)
		return n->graph == g && !(n->flags & OM_NODE_DEAD);
	return om_match_producer(g, n->out[0], OM_OPC_MATMUL) == n;
}

static int32_t rank_of(om_pass_ctx *c, const om_graph *g, om_value *v, int32_t *elem)
{
	const om_type *t = om_match_type(c, g, v);
	if (t && elem)
		*elem = t->elem;
	return t ? t->rank : -1;
}

/* both operands float32 of known rank */
static bool operands_ok(om_pass_ctx *c, const om_graph *g, const om_node *n, int32_t *ra,
			int32_t *rb)
{
	int32_t ea = 0, eb = 0;
	*ra = rank_of(c, g, n->in[0], &ea);
	*rb = rank_of(c, g, n->in[1], &eb);
	return *ra >= 1 && *rb >= 1 && ea == OM_FLOAT && eb == OM_FLOAT;
}

/* The product's attributes, FusedMatMul's defaults for MatMul. */
typedef struct mm_attrs {
	float alpha;
	int64_t trans[2], tbatch[2];
} mm_attrs;

static mm_attrs attrs_of(const om_model *m, const om_node *n)
{
	mm_attrs a = {1.0f, {0, 0}, {0, 0}};
	if (om_node_code(m, n) != OM_OPC_MS_FUSED_MATMUL)
		return a;
	a.alpha = om_attr_float(n, "alpha", 1.0f);
	a.trans[0] = om_attr_int(n, "transA", 0) != 0;
	a.trans[1] = om_attr_int(n, "transB", 0) != 0;
	a.tbatch[0] = om_attr_int(n, "transBatchA", 0) != 0;
	a.tbatch[1] = om_attr_int(n, "transBatchB", 0) != 0;
	return a;
}

/* n becomes FusedMatMul (when it is not) with attributes a */
static om_kind set_fused(om_pass_ctx *c, om_graph *g, om_node *n, const mm_attrs *a)
{
	static const char *const tn[2] = {"transA", "transB"};
	static const char *const bn[2] = {"transBatchA", "transBatchB"};
	om_kind rc = OM_OK;
	if (om_node_code(g->model, n) != OM_OPC_MS_FUSED_MATMUL &&
	    ((rc = om_import_domain(g->model, OM_MS_DOMAIN, c->st)) ||
	     (rc = om_node_become(c, g, n, OM_MS_DOMAIN, "FusedMatMul", 2, n->in, c->st))))
		return rc;
	/* one at a time: adding an attribute moves the array */
	om_attr *at = om_node_set_attr(n, "alpha", OM_ATTR_FLOAT);
	if (at)
		at->f = a->alpha;
	for (int s = 0; s < 2 && at; s++) {
		if ((at = om_node_set_attr(n, tn[s], OM_ATTR_INT)))
			at->i = a->trans[s];
		if (at && (at = om_node_set_attr(n, bn[s], OM_ATTR_INT)))
			at->i = a->tbatch[s];
	}
	return at ? OM_OK : om_error(c->st, OM_ERR_NOMEM, n, "out of memory");
}

/* The permutation of Transpose t over rank r (default: reversed); false when malformed. */
static bool perm_of(const om_node *t, int32_t r, int64_t *perm)
{
	int64_t k = 0;
	const int64_t *p = om_attr_ints(t, "perm", &k);
	if (p && k != r)
		return false;
	bool seen[OM_MAX_RANK] = {false};
	for (int32_t i = 0; i < r; i++) {
		perm[i] = p ? p[i] : r - 1 - i;
		if (perm[i] < 0 || perm[i] >= r || seen[perm[i]])
			return false;
		seen[perm[i]] = true;
	}
	return true;
}

/* p is the identity (!rot) or FusedMatMul's batch rotation [1, .., r-2, 0, r-1] (rot) */
static bool perm_is(const int64_t *p, int32_t r, bool rot)
{
	for (int32_t i = 0; i < r; i++) {
		const int64_t want = !rot || i == r - 1 ? i : i == r - 2 ? 0 : i + 1;
		if (p[i] != want)
			return false;
	}
	return true;
}

/* v's inferred type: x's with dims permuted by q (rank r); false when out of memory */
static bool type_permuted(om_pass_ctx *c, const om_graph *g, om_value *x, const om_value *v,
			  const int64_t *q, int32_t r)
{
	const om_vinfo *xv = om_vinfo_get(c, g, x);
	if (!om_vi_ranked(xv) || xv->type.rank != r)
		return true; /* left unknown */
	om_vinfo *vi = om_vinfo_make(c, v);
	om_dim *d = vi ? om_arena_alloc(c->scratch, sizeof *d * (size_t)r) : NULL;
	if (!d)
		return false;
	vi->type = xv->type;
	for (int32_t i = 0; i < r; i++)
		d[i] = xv->type.dims[q[i]];
	vi->type.dims = d;
	return true;
}

/* Folds the Transpose feeding side s of product n into its attributes. */
static om_kind fold_transpose(om_pass_ctx *c, om_graph *g, om_node *n, int s, bool *done)
{
	*done = false;
	om_value *y = n->in[s];
	om_node *t = om_match_producer(g, y, OM_OPC_TRANSPOSE);
	int32_t ra, rb;
	if (!t || t->nin < 1 || !t->in[0] || t->nout != 1 || om_value_const(g, t->in[0]) ||
	    !operands_ok(c, g, n, &ra, &rb))
		return OM_OK;
	const int32_t r = s ? rb : ra, ro = s ? ra : rb;
	mm_attrs a = attrs_of(c->m, n);
	int64_t p[OM_MAX_RANK], q[OM_MAX_RANK];
	if (r < 2 || a.tbatch[s] || !perm_of(t, r, p))
		return OM_OK;
	memcpy(q, p, sizeof(int64_t) * (size_t)r);
	q[r - 2] = p[r - 1], q[r - 1] = p[r - 2];
	const bool batch_ok = r >= 3 && r == ro;
	om_value *src = t->in[0];
	if (perm_is(q, r, false)) {
		a.trans[s] ^= 1;
	} else if (batch_ok && perm_is(p, r, true)) {
		a.tbatch[s] = 1;
	} else if (batch_ok && perm_is(q, r, true)) {
		a.tbatch[s] = 1;
		a.trans[s] ^= 1;
	} else if (q[r - 1] == r - 1 && p[r - 1] != r - 1 && om_match_private(c, g, y, 1)) {
		/* the Transpose keeps its node, now q, under a fresh output (y's inferred type
		 * no longer holds): typed here as X's dims by q, for the folds that follow */
		om_value *fresh = om_graph_fresh_value(g, y->name);
		om_attr *pa = fresh && type_permuted(c, g, t->in[0], fresh, q, r)
				      ? om_node_set_attr(t, "perm", OM_ATTR_INTS)
				      : NULL;
		int64_t *qa = pa ? om_arena_memdup(g->model->arena, q, sizeof(int64_t) * (size_t)r)
				 : NULL;
		if (!qa)
			return om_error(c->st, OM_ERR_NOMEM, n, "out of memory");
		pa->ints = qa;
		pa->n = r;
		t->proto = NULL;
		y->producer = NULL;
		y->producer_slot = -1;
		om_node_set_output(t, 0, fresh);
		src = fresh;
		a.trans[s] ^= 1;
	} else {
		return OM_OK;
	}
	om_kind rc = set_fused(c, g, n, &a);
	om_rewrite_touch(c, n);
	n->in[s] = src;
	*done = !rc;
	return rc;
}

static bool power_of_two(double v)
{
	int e = 0;
	return v != 0 && fabs(frexp(v, &e)) == 0.5;
}

/* Mul/Div node d as d->in[k] * f, f from a constant float32 scalar of rank <= rank: Mul by it
 * (either side) or Div by it (k = 0, a power of two only: 1 / v is exact). */
static bool as_scale(const om_graph *g, const om_node *d, int k, int32_t rank, double *f)
{
	const bool div = om_node_code(g->model, d) == OM_OPC_DIV;
	om_value *sv = d->in[1 - k];
	const om_tensor *t = om_value_const(g, sv);
	double v;
	if ((div && k) || !t || t->dtype != OM_FLOAT || !om_match_scalar(g, sv, rank, &v) ||
	    !isfinite(v) || v == 0 || (div && !power_of_two(v)))
		return false;
	*f = div ? 1.0 / v : v;
	return true;
}

/* Mul(product, s), Mul(s, product), Div(product, 2^k): n becomes the product, alpha scaled.
 * One rounding stays one: alpha must be 1, or the factor a power of two. */
static om_kind fold_scale(om_pass_ctx *c, om_graph *g, om_node *n, bool *done)
{
	*done = false;
	const enum om_opcode op = om_node_code(c->m, n);
	if ((op != OM_OPC_DIV && op != OM_OPC_MUL) || !n->out[0] || n->nin != 2 || n->nout != 1 ||
	    om_match_producer(g, n->out[0], op) != n)
		return OM_OK;
	for (int k = 0; k < 2; k++) {
		om_value *y = n->in[k];
		om_node *mm = y ? y->producer : NULL;
		const om_type *ty = om_match_type(c, g, y);
		int32_t ra, rb;
		double f;
		if (!is_product(g, mm) || mm->out[0] != y || !om_match_private(c, g, y, 1) || !ty ||
		    ty->elem != OM_FLOAT || !operands_ok(c, g, mm, &ra, &rb) ||
		    !as_scale(g, n, k, ty->rank, &f))
			continue;
		mm_attrs a = attrs_of(c->m, mm);
		if (a.alpha != 1.0f && !power_of_two(f))
			continue;
		a.alpha = (float)(a.alpha * f);
		om_kind rc = om_node_become(c, g, n, mm->domain, mm->op, 2, mm->in, c->st);
		if (!rc)
			rc = set_fused(c, g, n, &a);
		if (rc)
			return rc;
		om_node_kill(c, mm);
		*done = true;
		return OM_OK;
	}
	return OM_OK;
}

/* Side s of product n is Mul(x, 2^k) or Div(x, 2^k) read by n alone: n reads x, alpha scaled
 * (scaling by a power of two commutes with every rounding of the product). */
static om_kind fold_input_scale(om_pass_ctx *c, om_graph *g, om_node *n, int s, bool *done)
{
	*done = false;
	om_value *y = n->in[s];
	om_node *d = om_match_producer(g, y, OM_OPC_MUL);
	if (!d)
		d = om_match_producer(g, y, OM_OPC_DIV);
	const om_type *ty = om_match_type(c, g, y);
	int32_t ra, rb;
	if (!d || d->nin != 2 || !d->in[0] || !d->in[1] || !ty || !om_match_private(c, g, y, 1) ||
	    !operands_ok(c, g, n, &ra, &rb))
		return OM_OK;
	for (int k = 0; k < 2; k++) {
		const om_type *tx = om_match_type(c, g, d->in[k]);
		double f;
		if (!tx || tx->rank != ty->rank || tx->elem != OM_FLOAT ||
		    !as_scale(g, d, k, ty->rank, &f) || !power_of_two(f))
			continue;
		mm_attrs a = attrs_of(c->m, n);
		a.alpha = (float)(a.alpha * f);
		om_kind rc = set_fused(c, g, n, &a);
		if (rc)
			return rc;
		om_rewrite_touch(c, n);
		n->in[s] = d->in[k];
		*done = true;
		return OM_OK;
	}
	return OM_OK;
}

/* The steps, each a sweep of om_rewrite_each over the nodes it applies to (use counts kept
 * from what each rewrite touched): the output's scale, then each side's scale, then each
 * side's Transpose. */
static om_kind step_scale(om_pass_ctx *c, om_graph *g, om_node *n, bool *done)
{
	return fold_scale(c, g, n, done);
}

static om_kind step_scale_a(om_pass_ctx *c, om_graph *g, om_node *n, bool *done)
{
	return is_product(g, n) ? fold_input_scale(c, g, n, 0, done) : OM_OK;
}

static om_kind step_scale_b(om_pass_ctx *c, om_graph *g, om_node *n, bool *done)
{
	return is_product(g, n) ? fold_input_scale(c, g, n, 1, done) : OM_OK;
}

static om_kind step_transpose_a(om_pass_ctx *c, om_graph *g, om_node *n, bool *done)
{
	return is_product(g, n) ? fold_transpose(c, g, n, 0, done) : OM_OK;
}

static om_kind step_transpose_b(om_pass_ctx *c, om_graph *g, om_node *n, bool *done)
{
	return is_product(g, n) ? fold_transpose(c, g, n, 1, done) : OM_OK;
}

om_kind om_pass_fuse_matmul_transpose(om_pass_ctx *c, om_graph *g, int *changes)
{
	const uint64_t scales = OM_OPC_BIT(OM_OPC_MUL) | OM_OPC_BIT(OM_OPC_DIV);
	const uint64_t products = OM_OPC_BIT(OM_OPC_MATMUL) | OM_OPC_BIT(OM_OPC_MS_FUSED_MATMUL);
	const struct {
		uint64_t codes;
		om_node_rewrite_fn fn;
	} steps[] = {{scales, step_scale},	   {products, step_scale_a},
		     {products, step_scale_b},	   {products, step_transpose_a},
		     {products, step_transpose_b}};
	om_kind rc = OM_OK;
	for (size_t i = 0; i < sizeof steps / sizeof steps[0] && !rc; i++)
		rc = om_rewrite_each(c, g, steps[i].codes, steps[i].fn, changes);
	return rc;
}
