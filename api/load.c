/* load.c — om_model_load / om_model_load_memory (include/omopt.h): the ONNX loader
 * (onnx/load.c) followed by the op rows' check of every node (om_model_check, ops/op.h); then
 * the large misaligned initializers the unpack left in the mapped file (onnx/borrow.c) get
 * aligned copies, except those that only rows flagged OM_OP_UNALIGNED read (outside in[1],
 * their indices): a Gather over an embedding table then reads the rows it gathers from the
 * mapping, and the others never become resident. */
#include "onnx_io.h"
#include "registry.h"

/* the initializer v names, seen from graph g: its own, or an enclosing graph's */
static om_value *init_of(const om_graph *g, om_value *v)
{
	if (v->flags & OM_VALUE_INITIALIZER)
		return v->init ? v : NULL;
	if (v->producer || (v->flags & OM_VALUE_GRAPH_INPUT))
		return NULL;
	for (const om_graph *p = g->parent; p; p = p->parent) {
		om_value *o = om_graph_find(p, v->name);
		if (o)
			return (o->flags & OM_VALUE_INITIALIZER) && o->init ? o : NULL;
	}
	return NULL;
}

static om_kind align_readers(om_model *m, const om_graph *g, om_status *st)
{
	om_kind k = OM_OK;
	for (int32_t i = 0; !k && i < g->ninits; i++) {
		om_value *v = g->inits[i]; /* fed or written whole: always aligned */
		if ((v->flags & (OM_VALUE_GRAPH_INPUT | OM_VALUE_GRAPH_OUTPUT)) &&
		    om_onnx_init_misaligned(v))
			k = om_onnx_align_init(m, v, st);
	}
	for (int32_t i = 0; !k && i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		const om_op *op = om_op_find(n->domain, n->op, om_model_opset(m, n->domain));
		const bool bytes = op && (op->flags & OM_OP_UNALIGNED);
		for (int32_t j = 0; !k && j < n->nin; j++) {
			om_value *v = n->in[j] ? init_of(g, n->in[j]) : NULL;
			if (v && (!bytes || j == 1) && om_onnx_init_misaligned(v))
				k = om_onnx_align_init(m, v, st);
		}
		for (int32_t a = 0; !k && a < n->nattr; a++) {
			if (n->attrs[a].g)
				k = align_readers(m, n->attrs[a].g, st);
			for (int64_t s = 0; !k && n->attrs[a].graphs && s < n->attrs[a].n; s++)
				k = align_readers(m, n->attrs[a].graphs[s], st);
		}
	}
	return k;
}

static om_kind align_payloads(om_model *m, om_status *st)
{
	return m->graph ? align_readers(m, m->graph, st) : OM_OK;
}

om_kind om_model_load(const char *path, om_model **out, om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	om_kind k = om_onnx_load_file(path, om_model_check, out, st);
	if (!k && (k = align_payloads(*out, st))) {
		om_model_free(*out);
		*out = NULL;
	}
	return k;
}

om_kind om_model_load_memory(const void *data, size_t size, const char *dir, om_model **out,
			     om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	return om_onnx_load_memory(data, size, dir, om_model_check, out, st);
}
