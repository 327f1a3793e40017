/*
 * infer.c — the infer_shapes pass: types, shapes (numbers and symbols) and plan-time values of
 * every value, in the side table. Best effort: what it cannot infer stays unknown (or takes the
 * model's value_info), never an error.
 *
 * Per node: a symbolic rule (infer_rules.c) when the op has one; else the op row's own infer
 * (om_infer_node) on known shapes. When some input dims are symbols, the row's infer runs twice
 * with the symbols replaced by two sets of probe numbers: an output dim equal in both runs is a
 * number, one equal to a symbol's probes in both runs is that symbol, anything else is unknown.
 */
#include <stdio.h>
#include <string.h>

#include "eval.h"
#include "infer.h"

enum { MAX_SYMS = 32, MAX_IO = 64 };

const char *om_fresh_symbol(om_pass_ctx *c)
{
	char buf[32];
	snprintf(buf, sizeof buf, "?%u", ++c->nsym);
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

om_pe om_pe_of_dim(om_dim d)
{
	if (d.value >= 0)
		return (om_pe){OM_PE_NUM, d.value, NULL};
	if (d.param)
		return (om_pe){OM_PE_SYM, 0, d.param};
	return (om_pe){OM_PE_UNK, 0, NULL};
}

om_dim om_dim_of_pe(om_pe e)
{
	if (e.kind == OM_PE_NUM && e.num >= 0)
		return (om_dim){e.num, NULL};
	if (e.kind == OM_PE_SYM)
		return (om_dim){-1, e.sym};
	return (om_dim){-1, NULL};
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

bool om_pv_numbers(const om_vinfo *vi, int64_t *buf, int32_t cap, int32_t *count)
{
	if (!vi || vi->npv < 0 || vi->npv > cap)
		return false;
	for (int32_t i = 0; i < vi->npv; i++) {
		if (vi->pv[i].kind != OM_PE_NUM)
			return false;
		buf[i] = vi->pv[i].num;
	}
	*count = vi->npv;
	return true;
}

static bool pv_elem(int32_t elem)
{
	return elem == OM_INT64 || elem == OM_INT32 || elem == OM_BOOL;
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
	if (out->npv >= 0 && out->npv <= OM_PV_MAX && pv_elem(e->type.elem)) {
		size_t bytes = sizeof(om_pe) * (size_t)(out->npv + 1);
		e->pv = om_arena_memdup(c->scratch, out->pv, bytes);
		if (!e->pv)
			return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory in inference");
		e->npv = out->npv;
		e->pvrank = out->pvrank;
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
		if (numel >= 0 && numel <= OM_PV_MAX && pv_elem(t->dtype) && t->data) {
			o.npv = (int32_t)numel;
			o.pvrank = t->rank;
			const int64_t *i64 = t->data;
			const int32_t *i32 = t->data;
			const uint8_t *u8 = t->data;
			for (int64_t i = 0; i < numel; i++) {
				int64_t x = t->dtype == OM_INT64   ? i64[i]
					    : t->dtype == OM_INT32 ? i32[i]
								   : u8[i] != 0;
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

/* ---- the op rows' own inference, with probes for symbols ------------------------------- */

static int64_t probe(int run, int32_t k)
{
	return 5040 * (int64_t)(k + (run ? 41 : 2)); /* 5040 divides by 1..10, 12, 14, 15, 16 */
}

typedef struct syms {
	const char *s[MAX_SYMS];
	int32_t n;
} syms;

static int32_t sym_index(syms *S, const char *s)
{
	for (int32_t i = 0; i < S->n; i++)
		if (!strcmp(S->s[i], s))
			return i;
	if (S->n == MAX_SYMS)
		return -1;
	S->s[S->n] = s;
	return S->n++;
}

/* Materializes a plan-time value whose elements are all numbers (for rows that read data). */
static void *pv_data(om_pass_ctx *c, const om_vinfo *vi)
{
	int64_t nums[OM_PV_MAX];
	int32_t cnt;
	if (!om_pv_numbers(vi, nums, OM_PV_MAX, &cnt))
		return NULL;
	size_t es = om_dtype_size(vi->type.elem);
	unsigned char *p = om_arena_alloc(c->scratch, es * (size_t)(cnt + 1));
	if (!p)
		return NULL;
	for (int32_t i = 0; i < cnt; i++) {
		if (vi->type.elem == OM_INT64)
			memcpy(p + 8 * i, &nums[i], 8);
		else if (vi->type.elem == OM_INT32) {
			int32_t x = (int32_t)nums[i];
			memcpy(p + 4 * i, &x, 4);
		} else
			p[i] = nums[i] != 0;
	}
	return p;
}

static bool generic(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		    om_ishape *out)
{
	int64_t opset = om_model_opset(c->m, n->domain);
	if (n->nin > MAX_IO || n->nout > MAX_IO || !om_op_find(n->domain, n->op, opset))
		return false;
	for (int32_t a = 0; a < n->nattr; a++)
		if (n->attrs[a].type == OM_ATTR_GRAPH || n->attrs[a].type == OM_ATTR_GRAPHS)
			return false;
	om_tensor tin[2][MAX_IO], tout[2][MAX_IO];
	const om_tensor *pin[2][MAX_IO];
	syms S = {.n = 0};
	for (int32_t i = 0; i < n->nin; i++) {
		pin[0][i] = pin[1][i] = NULL;
		if (!n->in[i])
			continue;
		if (!om_vi_ranked(in[i]) || !in[i]->type.elem)
			return false;
		const om_tensor *k = om_value_const(g, n->in[i]);
		for (int run = 0; run < 2; run++) {
			om_tensor *t = &tin[run][i];
			memset(t, 0, sizeof *t);
			if (k) {
				*t = *k;
			} else {
				t->dtype = in[i]->type.elem;
				t->rank = in[i]->type.rank;
				for (int32_t d = 0; d < t->rank; d++) {
					om_dim dim = in[i]->type.dims[d];
					if (om_dim_known(dim)) {
						t->dims[d] = dim.value;
						continue;
					}
					int32_t s = dim.param ? sym_index(&S, dim.param) : -1;
					if (s < 0)
						return false;
					t->dims[d] = probe(run, s);
				}
				t->nbytes = om_tensor_bytes_for(t->dtype, t->rank, t->dims);
				t->data = pv_data(c, in[i]);
			}
			pin[run][i] = t;
		}
	}
	int runs = S.n ? 2 : 1;
	for (int run = 0; run < runs; run++)
		if (om_infer_node(n, opset, pin[run], tout[run], NULL) != OM_OK)
			return false;
	for (int32_t o = 0; o < n->nout; o++) {
		unknown(&out[o]);
		if (!n->out[o])
			continue;
		const om_tensor *a = &tout[0][o], *b = &tout[runs - 1][o];
		if (a->rank != b->rank || a->rank < 0 || a->rank > OM_MAX_RANK)
			continue;
		out[o].elem = a->dtype;
		out[o].rank = a->rank;
		for (int32_t d = 0; d < a->rank; d++) {
			out[o].d[d] = (om_dim){-1, NULL};
			bool probe_like = false;
			for (int32_t s = 0; s < S.n; s++) {
				if (a->dims[d] == probe(0, s) && b->dims[d] == probe(1, s))
					out[o].d[d].param = S.s[s];
				if (a->dims[d] == probe(0, s) || b->dims[d] == probe(1, s))
					probe_like = true;
			}
			if (!out[o].d[d].param && !probe_like && a->dims[d] == b->dims[d] &&
			    a->dims[d] >= 0)
				out[o].d[d].value = a->dims[d];
		}
	}
	return true;
}

/* ---- small int values computed by the op's kernel ------------------------------------- */

static bool no_eval(const om_node *n)
{
	static const char *const ops[] = {"RandomNormal", "RandomUniform", "RandomNormalLike",
					  "RandomUniformLike", "Multinomial", "Bernoulli"};
	if (n->domain[0] && strcmp(n->domain, "ai.onnx"))
		return true;
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (!strcmp(n->op, ops[i]))
			return true;
	for (int32_t a = 0; a < n->nattr; a++)
		if (n->attrs[a].type == OM_ATTR_GRAPH || n->attrs[a].type == OM_ATTR_GRAPHS)
			return true;
	return false;
}

/* When every input is a constant or a plan-time value of numbers and every output is a small
 * int tensor, the kernel computes the outputs' plan-time values (one semantics with folding,
 * and shape chains settle in one round). */
static bool eval_small(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
		       om_ishape *out)
{
	if (n->nin > MAX_IO || n->nout > 16 || n->nout < 1 || no_eval(n))
		return false;
	om_tensor tin[MAX_IO], tout[16];
	const om_tensor *pin[MAX_IO];
	size_t bytes = 0;
	for (int32_t i = 0; i < n->nin; i++) {
		pin[i] = NULL;
		if (!n->in[i])
			continue;
		const om_tensor *k = om_value_const(g, n->in[i]);
		if (k) {
			pin[i] = k;
			bytes += k->nbytes;
			continue;
		}
		const om_vinfo *vi = in[i];
		memset(&tin[i], 0, sizeof tin[i]);
		if (!om_pv_dims(vi, tin[i].dims))
			return false;
		tin[i].dtype = vi->type.elem;
		tin[i].rank = vi->pvrank;
		tin[i].nbytes = om_tensor_bytes_for(tin[i].dtype, tin[i].rank, tin[i].dims);
		if (!(tin[i].data = pv_data(c, vi)) && vi->npv > 0)
			return false;
		if (!tin[i].data)
			tin[i].data = &tin[i].dims; /* zero elements: any non-NULL pointer */
		pin[i] = &tin[i];
	}
	if (bytes > c->fold_max)
		return false;
	int64_t opset = om_model_opset(c->m, n->domain);
	if (om_infer_node(n, opset, pin, tout, NULL) != OM_OK)
		return false;
	for (int32_t o = 0; o < n->nout; o++) {
		const om_tensor *t = &tout[o];
		if (n->out[o] && (!pv_elem(t->dtype) || t->rank > OM_MAX_RANK ||
				  om_tensor_numel(t) > OM_PV_MAX || om_tensor_numel(t) < 0))
			return false;
	}
	if (om_eval_node(n, opset, pin, tout, NULL) != OM_OK)
		return false;
	for (int32_t o = 0; o < n->nout; o++) {
		const om_tensor *t = &tout[o];
		unknown(&out[o]);
		if (!n->out[o])
			continue;
		out[o].elem = t->dtype;
		out[o].rank = t->rank;
		for (int32_t d = 0; d < t->rank; d++)
			out[o].d[d] = (om_dim){t->dims[d], NULL};
		out[o].npv = (int32_t)om_tensor_numel(t);
		out[o].pvrank = t->rank;
		for (int32_t k = 0; k < out[o].npv; k++) {
			int64_t x = t->dtype == OM_INT64 ? ((const int64_t *)t->data)[k]
				    : t->dtype == OM_INT32 ? ((const int32_t *)t->data)[k]
							   : ((const uint8_t *)t->data)[k] != 0;
			out[o].pv[k] = (om_pe){OM_PE_NUM, x, NULL};
		}
	}
	for (int32_t o = 0; o < n->nout; o++)
		om_tensor_free(&tout[o]);
	return true;
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
	om_ishape out[16];
	if (n->nin > MAX_IO)
		return OM_OK;
	for (int32_t i = 0; i < n->nin; i++)
		in[i] = om_vinfo_get(c, g, n->in[i]);
	int32_t nout = n->nout < 16 ? n->nout : 16;
	for (int32_t o = 0; o < nout; o++)
		unknown(&out[o]);
	bool done = eval_small(c, g, n, in, out);
	om_infer_rule rule = n->nout <= 16 ? om_infer_rule_for(n) : NULL;
	if (!done && rule) {
		for (int32_t o = 0; o < nout; o++)
			unknown(&out[o]);
		done = rule(c, g, n, in, out);
	}
	if (!done && n->nout <= 16) {
		for (int32_t o = 0; o < nout; o++)
			unknown(&out[o]);
		generic(c, g, n, in, out);
	}
	for (int32_t o = 0; o < n->nout; o++) {
		if (!n->out[o])
			continue;
		om_ishape none;
		unknown(&none);
		om_kind rc = store(c, n->out[o], o < 16 ? &out[o] : &none);
		if (rc)
			return rc;
		if (c->verbose >= 2)
			trace(om_vinfo_make(c, n->out[o]));
	}
	return OM_OK;
}

om_kind om_pass_infer(om_pass_ctx *c, om_graph *g, int *changes)
{
	(void)changes; /* inference only fills the side table */
	om_kind rc;
	for (int32_t i = 0; i < g->ninputs; i++)
		if ((rc = seed_value(c, g, g->inputs[i])))
			return rc;
	for (int32_t i = 0; i < g->ninits; i++)
		if ((rc = seed_value(c, g, g->inits[i])))
			return rc;
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!(g->nodes[i]->flags & OM_NODE_DEAD) && (rc = infer_node(c, g, g->nodes[i])))
			return rc;
	return OM_OK;
}
