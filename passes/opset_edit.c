/* opset_edit.c — the graph edits opset conversion's adapters make: attributes, inputs,
 * small initializers, added nodes (opset_convert.h). */
#include <stdio.h>
#include <string.h>

#include "half.h"
#include "opset_convert.h"

bool om_sig_knows(const om_sig *s, const char *name)
{
	for (const om_sig_attr *at = s ? s->attrs : NULL; at && at->name; at++)
		if (!strcmp(at->name, name))
			return true;
	return false;
}

const om_tensor *om_adapt_const(const om_graph *g, const om_value *v)
{
	if (!v)
		return NULL;
	v = om_graph_resolve(g, (om_value *)v);
	if (!v)
		return NULL;
	if (v->init)
		return v->init;
	const om_node *p = v->producer;
	if (p && om_node_code(g->model, p) == OM_OPC_CONSTANT && p->nout == 1)
		return om_attr_tensor(p, "value");
	return NULL;
}

om_kind om_adapt_set_input(om_adapt *a, int32_t slot, om_value *v)
{
	om_node *n = a->n;
	if (slot < 0)
		return om_error(a->c->st, OM_ERR_INTERNAL, n, "input slot %d", (int)slot);
	if (slot >= n->nin) {
		om_value **in = om_arena_alloc(a->g->model->arena, sizeof *in * (size_t)(slot + 1));
		if (!in)
			return om_error(a->c->st, OM_ERR_NOMEM, n, "out of memory for inputs");
		memset(in, 0, sizeof *in * (size_t)(slot + 1));
		if (n->nin)
			memcpy(in, n->in, sizeof *in * (size_t)n->nin);
		n->in = in;
		n->nin = slot + 1;
	}
	n->in[slot] = v;
	return OM_OK;
}

void om_adapt_trim_inputs(om_node *n)
{
	while (n->nin > 0 && !n->in[n->nin - 1])
		n->nin--;
}

void om_adapt_drop_attr(om_node *n, const char *name)
{
	for (int32_t i = 0; i < n->nattr; i++)
		if (!strcmp(n->attrs[i].name, name)) {
			memmove(&n->attrs[i], &n->attrs[i + 1],
				sizeof *n->attrs * (size_t)(n->nattr - i - 1));
			n->nattr--;
			return;
		}
}

om_kind om_adapt_set_ints(om_adapt *a, om_node *n, const char *name, const int64_t *v,
			  int64_t count)
{
	om_attr *at = om_node_set_attr(n, name, OM_ATTR_INTS);
	int64_t *d = at ? om_arena_alloc(a->g->model->arena,
					 sizeof *d * (size_t)(count > 0 ? count : 1)) : NULL;
	if (!d)
		return om_error(a->c->st, OM_ERR_NOMEM, n, "out of memory for attribute %s",
				name);
	if (count > 0)
		memcpy(d, v, sizeof *d * (size_t)count);
	at->ints = d;
	at->n = count;
	return OM_OK;
}

om_kind om_adapt_set_int(om_adapt *a, om_node *n, const char *name, int64_t v)
{
	om_attr *at = om_node_set_attr(n, name, OM_ATTR_INT);
	if (!at)
		return om_error(a->c->st, OM_ERR_NOMEM, n, "out of memory for attribute %s",
				name);
	at->i = v;
	return OM_OK;
}

om_kind om_adapt_set_string(om_adapt *a, om_node *n, const char *name,
			    const char *s)
{
	om_attr *at = om_node_set_attr(n, name, OM_ATTR_STRING);
	const char *d = at ? om_arena_strdup(a->g->model->arena, s) : NULL;
	if (!d)
		return om_error(a->c->st, OM_ERR_NOMEM, n, "out of memory for attribute %s",
				name);
	at->s.ptr = d;
	at->s.len = (int64_t)strlen(d);
	return OM_OK;
}

om_value *om_adapt_int64s(om_adapt *a, const char *hint, const int64_t *v, int64_t count,
			  int32_t rank)
{
	const int64_t dims[1] = {count};
	om_tensor *t = om_model_tensor(a->g->model, OM_INT64, rank ? 1 : 0, dims);
	if (!t)
		return NULL;
	if (count > 0)
		memcpy(t->data, v, sizeof *v * (size_t)count);
	return om_new_constant(a->c, a->g, hint, t);
}

om_value *om_adapt_float(om_adapt *a, const char *hint, int32_t dtype, double x, int64_t count)
{
	const int64_t dims[1] = {0};
	om_tensor *t = om_model_tensor(a->g->model, dtype, count ? 0 : 1, dims);
	if (!t)
		return NULL;
	if (count) {
		if (dtype == OM_FLOAT)
			*(float *)t->data = (float)x;
		else if (dtype == OM_DOUBLE)
			*(double *)t->data = x;
		else if (dtype == OM_FLOAT16)
			*(uint16_t *)t->data = om_float_to_half((float)x);
		else
			return NULL;
	}
	return om_new_constant(a->c, a->g, hint, t);
}

om_node *om_adapt_node(om_adapt *a, const char *op, int32_t nin, om_value *const *in,
		       int32_t nout)
{
	const char *name = a->n->name && a->n->name[0] ? a->n->name : a->n->op;
	char buf[200];
	snprintf(buf, sizeof buf, "%.150s/%s", name, op);
	/* the node is named after its first output, a name fresh in the graph */
	om_value *first = nout > 0 ? om_graph_fresh_value(a->g, buf) : NULL;
	const char *nm = om_arena_strdup(a->g->model->arena, first ? first->name : buf);
	om_node *k = nm ? om_graph_add_node(a->g, op, "", nm, nin, nout) : NULL;
	if (!k || (nout > 0 && !first))
		return NULL;
	for (int32_t i = 0; i < nin; i++)
		k->in[i] = in[i];
	for (int32_t o = 0; o < nout; o++) {
		om_value *v = o ? om_graph_fresh_value(a->g, buf) : first;
		if (!v)
			return NULL;
		om_node_set_output(k, o, v);
	}
	a->toposort = true;
	return k;
}

/* v's type: its own when it has a rank, else what inference (run before the conversion)
 * found; NULL when neither knows */
static const om_type *type_of(const om_adapt *a, const om_value *v)
{
	if (!v)
		return NULL;
	if (v->type.kind == OM_TYPE_TENSOR && v->type.rank >= 0 && v->type.elem)
		return &v->type;
	const om_vinfo *vi = om_vinfo_get(a->c, a->g, (om_value *)v);
	if (vi && vi->type.kind == OM_TYPE_TENSOR)
		return &vi->type;
	return v->type.kind == OM_TYPE_TENSOR ? &v->type : NULL;
}

int32_t om_adapt_rank(const om_adapt *a, const om_value *v)
{
	if (v && v->init)
		return v->init->rank;
	const om_type *t = type_of(a, v);
	return t ? t->rank : -1;
}

int64_t om_adapt_dim(const om_adapt *a, const om_value *v, int32_t axis)
{
	if (v && v->init)
		return axis >= 0 && axis < v->init->rank ? v->init->dims[axis] : -1;
	const om_type *t = type_of(a, v);
	return t && axis >= 0 && axis < t->rank && t->dims ? t->dims[axis].value : -1;
}

int32_t om_adapt_elem(const om_adapt *a, const om_value *v)
{
	if (v && v->init)
		return v->init->dtype;
	const om_type *t = type_of(a, v);
	return t ? t->elem : 0;
}
