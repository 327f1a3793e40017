/* registry.c — opset dispatch over every op table (registry_tables.c) through the index
 * sorted at build time (op_index.h), and a model's nodes checked against their rows. */
#include <string.h>

#include "registry.h"
#include "op_index.h"

const om_op *om_op_find(const char *domain, const char *name, int64_t opset)
{
	domain = om_op_domain_key(domain);
	/* the first index entry of (domain, name), then the highest since <= opset among its
	 * rows (in since order; of equal ones the first listed, as a scan of the tables finds) */
	size_t lo = 0, hi = om_op_index_count;
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;
		if (om_op_key_cmp(om_op_index_row(mid), domain, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	const om_op *best = NULL;
	for (; lo < om_op_index_count; lo++) {
		const om_op *r = om_op_index_row(lo);
		if (om_op_key_cmp(r, domain, name) || r->since > opset)
			break;
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
	for (size_t t = 0; t < om_op_ntables; t++)
		for (size_t i = 0; i < om_op_tables[t]->count; i++)
			fn(&om_op_tables[t]->rows[i], arg);
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

/* ---- derivative rules (ops/grad.h) -------------------------------------------------------- */

extern const om_grad_table *const om_grad_tables[];
extern const size_t om_grad_ntables;

om_grad_fn om_op_grad(const om_op *op)
{
	if (!op)
		return NULL;
	const char *domain = om_op_domain_key(op->domain);
	for (size_t t = 0; t < om_grad_ntables; t++)
		for (size_t i = 0; i < om_grad_tables[t]->count; i++) {
			const om_grad_rule *r = &om_grad_tables[t]->rules[i];
			if (!strcmp(r->name, op->name) &&
			    !strcmp(om_op_domain_key(r->domain), domain))
				return r->fn;
		}
	return NULL;
}
