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
 *   - Mul by a constant scalar (either operand) or Div by a constant power of two, of the
 *     product's output, when the product has alpha 1 and no other reader: alpha = the scalar
 *     (1 / divisor). Rounding is that of the Mul/Div node (alpha * acc in one rounding), so exact
 *     mode keeps its bits. The Mul/Div node becomes the product and keeps its output name.
 *
 * Shapes come from inference (ranks of both operands must be known).
 */
#include <math.h>
#include <string.h>

#include "infer.h"
#include "pass.h"

static const char ms_domain[] = "com.microsoft";

static bool default_domain(const om_node *n)
{
	return !n->domain[0] || !strcmp(n->domain, "ai.onnx");
}

static bool is_product(const om_graph *g, const om_node *n)
{
	return n && n->graph == g && !(n->flags & OM_NODE_DEAD) && n->nin == 2 && n->nout == 1 &&
	       n->in[0] && n->in[1] && n->out[0] &&
	       ((!strcmp(n->op, "MatMul") && default_domain(n)) ||
		(!strcmp(n->op, "FusedMatMul") && !strcmp(n->domain, ms_domain)));
}

static bool is_graph_output(const om_graph *g, const om_value *v)
{
	for (int32_t i = 0; i < g->noutputs; i++)
		if (g->outputs[i] == v)
			return true;
	return false;
}

/* v is read by exactly one node of g and nothing else (uses must be counted) */
static bool single_use(om_pass_ctx *c, const om_graph *g, const om_value *v)
{
	return v->nuses == 1 && !is_graph_output(g, v) && !om_value_used_by_subgraph(c, g, v);
}

static int32_t rank_of(om_pass_ctx *c, const om_graph *g, om_value *v, int32_t *elem)
{
	const om_vinfo *vi = om_vinfo_get(c, g, v);
	if (!om_vi_ranked(vi))
		return -1;
	if (elem)
		*elem = vi->type.elem;
	return vi->type.rank;
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

static mm_attrs attrs_of(const om_node *n)
{
	mm_attrs a = {1.0f, {0, 0}, {0, 0}};
	if (strcmp(n->op, "FusedMatMul"))
		return a;
	a.alpha = om_attr_float(n, "alpha", 1.0f);
	a.trans[0] = om_attr_int(n, "transA", 0) != 0;
	a.trans[1] = om_attr_int(n, "transB", 0) != 0;
	a.tbatch[0] = om_attr_int(n, "transBatchA", 0) != 0;
	a.tbatch[1] = om_attr_int(n, "transBatchB", 0) != 0;
	return a;
}

/* The model imports com.microsoft (version 1 when it did not). */
static bool import_ms(om_model *m)
{
	if (om_model_opset(m, ms_domain) >= 1)
		return true;
	om_opset *o = om_arena_alloc(m->arena, sizeof *o * (size_t)(m->nopsets + 1));
	const char *d = om_arena_strdup(m->arena, ms_domain);
	if (!o || !d)
		return false;
	if (m->nopsets)
		memcpy(o, m->opsets, sizeof *o * (size_t)m->nopsets);
	o[m->nopsets] = (om_opset){d, 1};
	m->opsets = o;
	m->nopsets++;
	return true;
}

/* n becomes FusedMatMul with attributes a */
static bool set_fused(om_graph *g, om_node *n, const mm_attrs *a)
{
	static const char *const tn[2] = {"transA", "transB"};
	static const char *const bn[2] = {"transBatchA", "transBatchB"};
	om_arena *ar = g->model->arena;
	if (strcmp(n->op, "FusedMatMul")) {
		const char *op = om_arena_strdup(ar, "FusedMatMul");
		const char *dom = om_arena_strdup(ar, ms_domain);
		if (!op || !dom || !import_ms(g->model))
			return false;
		n->op = op;
		n->domain = dom;
		n->proto = NULL;
		n->nattr = 0;
	}
	/* one at a time: adding an attribute moves the array */
	om_attr *at = om_node_set_attr(n, "alpha", OM_ATTR_FLOAT);
	if (!at)
		return false;
	at->f = a->alpha;
	for (int s = 0; s < 2; s++) {
		if (!(at = om_node_set_attr(n, tn[s], OM_ATTR_INT)))
			return false;
		at->i = a->trans[s];
		if (!(at = om_node_set_attr(n, bn[s], OM_ATTR_INT)))
			return false;
		at->i = a->tbatch[s];
	}
	return true;
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
	om_node *t = y->producer;
	int32_t ra, rb;
	if (!t || t->graph != g || (t->flags & OM_NODE_DEAD) || strcmp(t->op, "Transpose") ||
	    !default_domain(t) || t->nin < 1 || !t->in[0] || t->nout != 1 ||
	    om_value_const(g, t->in[0]) || !operands_ok(c, g, n, &ra, &rb))
		return OM_OK;
	const int32_t r = s ? rb : ra, ro = s ? ra : rb;
	mm_attrs a = attrs_of(n);
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
	} else if (q[r - 1] == r - 1 && p[r - 1] != r - 1 && single_use(c, g, y)) {
		/* the Transpose keeps its node, now q, under a fresh output (y's inferred type
		 * no longer holds): typed here as X's dims by q, for the folds that follow */
		om_value *fresh = om_graph_fresh_value(g, y->name);
		if (fresh && !type_permuted(c, g, t->in[0], fresh, q, r))
			fresh = NULL;
		om_attr *pa = fresh ? om_node_set_attr(t, "perm", OM_ATTR_INTS) : NULL;
		int64_t *qa = pa ? om_arena_alloc(g->model->arena, sizeof(int64_t) * (size_t)r)
				 : NULL;
		if (!qa)
			return om_error(c->st, OM_ERR_NOMEM, n, "out of memory");
		memcpy(qa, q, sizeof(int64_t) * (size_t)r);
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
	if (!set_fused(g, n, &a))
		return om_error(c->st, OM_ERR_NOMEM, n, "out of memory");
	n->in[s] = src;
	*done = true;
	return OM_OK;
}

/* The float32 scalar held by constant v, for an output of rank r; false when v is not one. */
static bool scalar_of(const om_graph *g, om_value *v, int32_t r, float *out)
{
	const om_tensor *k = om_value_const(g, v);
	if (!k || k->dtype != OM_FLOAT || k->rank > r || om_tensor_numel(k) != 1 || !k->data)
		return false;
	memcpy(out, k->data, sizeof *out);
	return isfinite(*out);
}

/* Mul(product, s), Mul(s, product), Div(product, 2^k): n becomes the product with alpha. */
static om_kind fold_scale(om_pass_ctx *c, om_graph *g, om_node *n, bool *done)
{
	*done = false;
	const bool div = !strcmp(n->op, "Div");
	if ((!div && strcmp(n->op, "Mul")) || !default_domain(n) || n->nin != 2 || n->nout != 1 ||
	    !n->in[0] || !n->in[1] || !n->out[0])
		return OM_OK;
	for (int k = 0; k < (div ? 1 : 2); k++) {
		om_node *mm = n->in[k]->producer;
		int32_t ra, rb, e = 0;
		const int32_t ry = rank_of(c, g, n->in[k], &e);
		float v;
		if (!is_product(g, mm) || mm->out[0] != n->in[k] || !single_use(c, g, n->in[k]) ||
		    ry < 0 || e != OM_FLOAT || !operands_ok(c, g, mm, &ra, &rb) ||
		    !scalar_of(g, n->in[1 - k], ry, &v))
			continue;
		int ex = 0;
		if (div && (v == 0 || frexpf(v, &ex) != 0.5f))
			continue; /* 1 / v exact only for powers of two */
		mm_attrs a = attrs_of(mm);
		if (a.alpha != 1.0f)
			continue; /* two roundings would become one */
		a.alpha = div ? 1.0f / v : v;
		om_value **in = om_arena_alloc(g->model->arena, sizeof *in * 2);
		if (!in)
			return om_error(c->st, OM_ERR_NOMEM, n, "out of memory");
		in[0] = mm->in[0];
		in[1] = mm->in[1];
		/* n takes mm's attributes (MatMul has none) */
		n->nattr = 0;
		if (!strcmp(mm->op, "FusedMatMul")) {
			n->op = mm->op;
			n->domain = mm->domain;
			n->proto = NULL;
		}
		if (!set_fused(g, n, &a))
			return om_error(c->st, OM_ERR_NOMEM, n, "out of memory");
		n->in = in;
		mm->flags |= OM_NODE_DEAD;
		mm->out[0]->producer = NULL;
		mm->out[0]->producer_slot = -1;
		*done = true;
		return OM_OK;
	}
	return OM_OK;
}

om_kind om_pass_fuse_matmul_transpose(om_pass_ctx *c, om_graph *g, int *changes)
{
	om_graph_count_uses(g);
	for (int32_t i = 0; i < g->nnodes; i++) {
		om_node *n = g->nodes[i];
		if (n->flags & OM_NODE_DEAD)
			continue;
		for (int step = 0; step < 3; step++) {
			bool done = false;
			om_kind rc = step == 0 ? fold_scale(c, g, n, &done)
				     : is_product(g, n) ? fold_transpose(c, g, n, step - 1, &done)
							: OM_OK;
			if (rc)
				return rc;
			if (done) {
				*changes += 1;
				om_graph_count_uses(g);
			}
		}
	}
	om_graph_compact(g);
	return OM_OK;
}
