/* registry.c — every op table, and opset dispatch over them. */
#include <string.h>

#include "registry.h"

/* one line per kernel file; a file that defines a table must be listed here */
extern const om_op_table om_ops_view, om_ops_move, om_ops_index, om_ops_generate,
	om_ops_elementwise, om_ops_cast, om_ops_reduce, om_ops_norm, om_ops_linalg, om_ops_conv,
	om_ops_pool, om_ops_resize, om_ops_control, om_ops_rnn;
extern const om_op_table om_ops_loss;
extern const om_op_table om_ops_attention;
extern const om_op_table om_ops_quant;
extern const om_op_table om_ops_sample;
extern const om_op_table om_ops_scatter;
extern const om_op_table om_ops_detect;
extern const om_op_table om_ops_signal;
extern const om_op_table om_ops_misc;
extern const om_op_table om_ops_unique;
extern const om_op_table om_ops_fold;
extern const om_op_table om_ops_einsum;
extern const om_op_table om_ops_contrib;
extern const om_op_table om_ops_sequence, om_ops_optional;
extern const om_op_table om_ops_random;

static const om_op_table *const tables[] = {
	&om_ops_view,   &om_ops_move,        &om_ops_index, &om_ops_generate, &om_ops_elementwise,
	&om_ops_cast,   &om_ops_reduce,      &om_ops_norm,  &om_ops_linalg,   &om_ops_conv,
	&om_ops_pool,   &om_ops_resize,      &om_ops_control, &om_ops_rnn,
	&om_ops_loss,
	&om_ops_attention,
	&om_ops_quant,
	&om_ops_sample,
	&om_ops_scatter,
	&om_ops_detect,
	&om_ops_signal,
	&om_ops_misc,
	&om_ops_unique,
	&om_ops_fold,
	&om_ops_einsum,
	&om_ops_contrib,
	&om_ops_sequence, &om_ops_optional,
	&om_ops_random,
};

static bool same_domain(const char *a, const char *b)
{
	if (!a || !strcmp(a, "ai.onnx"))
		a = "";
	if (!b || !strcmp(b, "ai.onnx"))
		b = "";
	return !strcmp(a, b);
}

const om_op *om_op_find(const char *domain, const char *name, int64_t opset)
{
	const om_op *best = NULL;
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		for (size_t i = 0; i < tables[t]->count; i++) {
			const om_op *r = &tables[t]->rows[i];
			if (r->since > opset || strcmp(r->name, name) || !same_domain(r->domain, domain))
				continue;
			if (!best || r->since > best->since)
				best = r;
		}
	return best;
}

const om_op *om_node_op(const om_model *m, const om_node *n)
{
	return om_op_find(n->domain, n->op, om_model_opset(m, n->domain));
}

enum om_opcode om_node_code(const om_model *m, const om_node *n)
{
	const om_op *op = om_node_op(m, n);
	return op ? (enum om_opcode)op->code : OM_OPC_NONE;
}

bool om_node_has(const om_model *m, const om_node *n, uint32_t flags)
{
	const om_op *op = om_node_op(m, n);
	return op && (op->flags & flags) == flags;
}

void om_op_each(void (*fn)(const om_op *op, void *arg), void *arg)
{
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		for (size_t i = 0; i < tables[t]->count; i++)
			fn(&tables[t]->rows[i], arg);
}

/* ---- a model against the rows (the public loader calls it: api/load.c) ------------------- */

static om_kind check_graph(const om_model *m, const om_graph *g, om_status *st)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		const om_op *op = om_node_op(m, n);
		om_kind rc = op ? om_node_check(op, n, om_model_opset(m, n->domain), st) : OM_OK;
		for (int32_t a = 0; !rc && a < n->nattr; a++) {
			const om_attr *at = &n->attrs[a];
			if (at->type == OM_ATTR_GRAPH && at->g)
				rc = check_graph(m, at->g, st);
			for (int64_t k = 0; !rc && at->type == OM_ATTR_GRAPHS && k < at->n; k++)
				if (at->graphs[k])
					rc = check_graph(m, at->graphs[k], st);
		}
		if (rc)
			return rc;
	}
	return OM_OK;
}

om_kind om_model_check(const om_model *m, om_status *st)
{
	if (m->ir_version < 0 || m->ir_version > OM_IR_VERSION_MAX)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL,
				"IR version %lld is not one ONNX defines (1 to %d)",
				(long long)m->ir_version, OM_IR_VERSION_MAX);
	return m->graph ? check_graph(m, m->graph, st) : OM_OK;
}
