/*
 * infer.c — the infer_shapes pass: types, shapes (numbers and symbols) and plan-time values of
 * every value, in the side table. Best effort: what it cannot infer stays unknown (or takes the
 * model's value_info), never an error.
 *
 * Every node is inferred by its op row alone, evaluated at sample values of its symbols
 * (infer_sample.c); this file seeds the graph's inputs and initializers and stores results.
 * A node's subgraphs are inferred just before the node (their outer references see what this
 * graph inferred so far), and what they infer of their outputs is written into the outputs'
 * declarations (om_declare_outputs), which the node's row reads: If joins its two branches,
 * Loop and Scan read their body. A condition on an If's output type then folds.
 */
#include <stdio.h>
#include <string.h>

#include "eval.h"
#include "infer.h"
#include "match.h"

enum { MAX_IO = 64 };

const char *om_fresh_symbol(om_pass_ctx *c)
{
	char buf[32];
	snprintf(buf, sizeof buf, "?%u", ++c->nsym);
	return om_arena_strdup(c->scratch, buf);
}

const char *om_fresh_value_symbol(om_pass_ctx *c)
{
	char buf[32];
	snprintf(buf, sizeof buf, "?v%u", ++c->nsym);
	return om_arena_strdup(c->scratch, buf);
}

om_vinfo *om_vinfo_make(om_pass_ctx *c, const om_value *v)
{
	om_vinfo *e = NULL;
	HASH_FIND_PTR(c->info, &v, e);
	if (e)
		return e;
	e = om_arena_alloc(c->scratch, sizeof *e);
	if (!e)
		return NULL;
	e->key = v;
	e->type.rank = -1;
	e->npv = -1;
	HASH_ADD_PTR(c->info, key, e);
	return e;
}

om_vinfo *om_vinfo_get(om_pass_ctx *c, const om_graph *g, om_value *v)
{
	if (!v)
		return NULL;
	const om_value *r = om_graph_resolve(g, v);
	om_vinfo *e = NULL;
	HASH_FIND_PTR(c->info, &r, e);
	return e;
}

bool om_pv_dims(const om_vinfo *vi, int64_t *dims)
{
	if (!vi || vi->npv < 0 || vi->pvrank < 0 || vi->pvrank > OM_MAX_RANK)
		return false;
	if (vi->pvrank <= 1) {
		dims[0] = vi->npv;
		return vi->pvrank == 1 || vi->npv == 1;
	}
	if (vi->type.rank != vi->pvrank)
		return false;
	for (int32_t i = 0; i < vi->pvrank; i++) {
		if (!om_dim_known(vi->type.dims[i]))
			return false;
		dims[i] = vi->type.dims[i].value;
	}
	return om_shape_numel(vi->pvrank, dims) == vi->npv;
}

/* ---- storing results ------------------------------------------------------------------- */

/* Stores out into v's entry, filling what it lacks from the model's own type of v and giving
 * every dim still unknown a fresh symbol. */
static om_kind store(om_pass_ctx *c, const om_value *v, const om_ishape *out)
{
	om_vinfo *e = om_vinfo_make(c, v);
	if (!e)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory in shape inference");
	const om_type *decl = v->type.kind == OM_TYPE_TENSOR ? &v->type : NULL;
	int32_t rank = out->rank;
	if (rank < 0 && decl && decl->rank >= 0 && decl->rank <= OM_MAX_RANK)
		rank = decl->rank;
	e->type.kind = OM_TYPE_TENSOR;
	e->type.elem = out->elem ? out->elem : decl ? decl->elem : OM_UNDEFINED;
	e->type.rank = rank;
	e->type.dims = NULL;
	if (rank >= 0) {
		e->type.dims = om_arena_alloc(c->scratch, sizeof(om_dim) * (size_t)(rank + 1));
		if (!e->type.dims)
			return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory in inference");
		bool use_decl = decl && decl->rank == rank;
		for (int32_t i = 0; i < rank; i++) {
			om_dim d = out->rank == rank ? out->d[i] : (om_dim){-1, NULL};
			if (!om_dim_known(d) && use_decl &&
			    (om_dim_known(decl->dims[i]) || (!d.param && decl->dims[i].param)))
				d = decl->dims[i];
			if (!om_dim_known(d) && !d.param)
				d.param = om_fresh_symbol(c);
			e->type.dims[i] = d;
		}
	}
	e->npv = -1;
	e->pv = NULL;
	if (out->npv >= 0 && out->npv <= OM_PV_MAX && om_pv_elem(e->type.elem)) {
		size_t bytes = sizeof(om_pe) * (size_t)(out->npv ? out->npv : 1);
		e->pv = om_arena_memdup(c->scratch, out->pv, bytes);
		if (!e->pv)
			return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory in inference");
		e->npv = out->npv;
		e->pvrank = out->pvrank;
		for (int32_t i = 0; i < e->npv; i++) {
			if (e->pv[i].kind != OM_PE_UNK)
				continue;
			e->pv[i] = (om_pe){OM_PE_SYM, 0, om_fresh_value_symbol(c)};
			if (!e->pv[i].sym)
				return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory in inference");
		}
	}
	return OM_OK;
}

static void unknown(om_ishape *o)
{
	memset(o, 0, sizeof *o);
	o->rank = -1;
	o->npv = -1;
	for (int32_t i = 0; i < OM_MAX_RANK; i++)
		o->d[i] = (om_dim){-1, NULL}; /* unknown, never the number 0 */
}

/* The type of a value declared in the model (graph input, value_info), or of its data. */
static om_kind seed_value(om_pass_ctx *c, const om_graph *g, om_value *v)
{
	om_ishape o;
	unknown(&o);
	const om_tensor *t = om_value_const(g, v);
	if (t && t->rank <= OM_MAX_RANK) {
		o.elem = t->dtype;
		o.rank = t->rank;
		for (int32_t i = 0; i < t->rank; i++)
			o.d[i] = (om_dim){t->dims[i], NULL};
		int64_t numel = om_tensor_numel(t);
		if (numel >= 0 && numel <= OM_PV_MAX && om_pv_elem(t->dtype) && t->data) {
			o.npv = (int32_t)numel;
			o.pvrank = t->rank;
			for (int64_t i = 0; i < numel && o.npv >= 0; i++) {
				int64_t x;
				if (!om_exact_int_at(t, i, &x))
					o.npv = -1; /* a value that is not an integer */
				o.pv[i] = (om_pe){OM_PE_NUM, x, NULL};
			}
		}
	} else if (v->type.kind == OM_TYPE_TENSOR) {
		o.elem = v->type.elem;
		o.rank = v->type.rank <= OM_MAX_RANK ? v->type.rank : -1;
		for (int32_t i = 0; i < o.rank; i++)
			o.d[i] = v->type.dims[i];
	}
	return store(c, v, &o);
}

/* ---- the pass -------------------------------------------------------------------------- */

/* -vv: one line per inferred value: name, type, plan-time value */
static void trace(const om_vinfo *e)
{
	fprintf(stderr, "infer: %s: %s[", e->key->name, om_dtype_name(e->type.elem));
	for (int32_t i = 0; i < e->type.rank; i++) {
		om_dim d = e->type.dims[i];
		if (d.value >= 0)
			fprintf(stderr, "%s%lld", i ? "," : "", (long long)d.value);
		else
			fprintf(stderr, "%s%s", i ? "," : "", d.param ? d.param : "?");
	}
	fprintf(stderr, "%s", e->type.rank < 0 ? "?]" : "]");
	for (int32_t i = 0; i < e->npv; i++) {
		om_pe p = e->pv[i];
		fprintf(stderr, "%s", i ? "," : " = {");
		if (p.kind == OM_PE_NUM)
			fprintf(stderr, "%lld", (long long)p.num);
		else
			fprintf(stderr, "%s", p.kind == OM_PE_SYM ? p.sym : "?");
	}
	fprintf(stderr, "%s\n", e->npv > 0 ? "}" : e->npv == 0 ? " = {}" : "");
}

static om_kind infer_node(om_pass_ctx *c, const om_graph *g, const om_node *n)
{
	om_vinfo *in[MAX_IO];
	om_ishape out[OM_INFER_MAX_OUT];
	if (n->nin > MAX_IO)
		return OM_OK;
	for (int32_t i = 0; i < n->nin; i++)
		in[i] = om_vinfo_get(c, g, n->in[i]);
	int32_t nout = n->nout < OM_INFER_MAX_OUT ? n->nout : OM_INFER_MAX_OUT;
	for (int32_t o = 0; o < nout; o++)
		unknown(&out[o]);
	om_kind rc = n->nout <= OM_INFER_MAX_OUT ? om_infer_sample(c, g, n, in, out) : OM_OK;
	for (int32_t o = 0; o < n->nout && !rc; o++) {
		if (!n->out[o])
			continue;
		om_ishape none;
		unknown(&none);
		rc = store(c, n->out[o], o < OM_INFER_MAX_OUT ? &out[o] : &none);
		if (!rc && c->verbose >= 2)
			trace(om_vinfo_make(c, n->out[o]));
	}
	return rc;
}

static om_kind infer_subgraph(om_pass_ctx *c, om_graph *sub)
{
	int declared = 0;
	om_kind rc = om_pass_infer(c, sub, &declared);
	return rc ? rc : om_declare_outputs(c, sub, &declared);
}

static om_kind infer_subgraphs(om_pass_ctx *c, const om_node *n)
{
	om_kind rc = OM_OK;
	for (int32_t a = 0; a < n->nattr && !rc; a++) {
		const om_attr *at = &n->attrs[a];
		if (at->g)
			rc = infer_subgraph(c, at->g);
		for (int64_t k = 0; at->graphs && k < at->n && !rc; k++)
			rc = infer_subgraph(c, at->graphs[k]);
	}
	return rc;
}

om_kind om_pass_infer(om_pass_ctx *c, om_graph *g, int *changes)
{
	(void)changes; /* inference only fills the side table (and subgraph output types) */
	om_kind rc;
	for (int32_t i = 0; i < g->ninputs; i++)
		if ((rc = seed_value(c, g, g->inputs[i])))
			return rc;
	for (int32_t i = 0; i < g->ninits; i++)
		if ((rc = seed_value(c, g, g->inits[i])))
			return rc;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		if (n->flags & OM_NODE_DEAD)
			continue;
		if ((rc = infer_subgraphs(c, n)) || (rc = infer_node(c, g, n)))
			return rc;
	}
	return OM_OK;
}
