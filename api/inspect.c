/* inspect.c — looking at a model through the public API (include/omopt.h, "looking at a
 * model"): header fields, graph inputs and outputs, node and initializer counts, op counts, and
 * the operator rows the library has. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "pass.h"
#include "registry.h"
#include "session.h"

int64_t om_model_ir_version(const om_model *m)
{
	return m->ir_version;
}

const char *om_model_producer(const om_model *m, const char **version)
{
	if (version)
		*version = m->producer_version ? m->producer_version : "";
	return m->producer_name ? m->producer_name : "";
}

int om_model_opset_count(const om_model *m)
{
	return m->nopsets;
}

const char *om_model_opset_import(const om_model *m, int i, int64_t *version)
{
	if (i < 0 || i >= m->nopsets)
		return NULL;
	if (version)
		*version = m->opsets[i].version;
	const char *d = m->opsets[i].domain;
	return d && strcmp(d, "ai.onnx") ? d : "";
}

int om_model_input_count(const om_model *m)
{
	return m->graph ? m->graph->ninputs : 0;
}

int om_model_output_count(const om_model *m)
{
	return m->graph ? m->graph->noutputs : 0;
}

static om_kind value_info(om_value *const *v, int n, int i, om_io_info *info, om_status *st)
{
	if (i < 0 || i >= n)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "no graph input or output %d (%d)",
				i, n);
	om_value_io_info(v[i], info);
	info->has_initializer = (v[i]->flags & OM_VALUE_INITIALIZER) != 0;
	return OM_OK;
}

om_kind om_model_input_info(const om_model *m, int i, om_io_info *info, om_status *st)
{
	return value_info(m->graph ? m->graph->inputs : NULL, om_model_input_count(m), i, info, st);
}

om_kind om_model_output_info(const om_model *m, int i, om_io_info *info, om_status *st)
{
	return value_info(m->graph ? m->graph->outputs : NULL, om_model_output_count(m), i, info,
			  st);
}

int64_t om_model_node_count(const om_model *m)
{
	return m->graph ? m->graph->nnodes : 0;
}

/* ---- over every graph ---------------------------------------------------------------------- */

/* Calls fn on g and on every subgraph of its nodes, depth first; stops at the first false. */
static bool each_graph(const om_graph *g, bool (*fn)(const om_graph *g, void *arg), void *arg)
{
	if (!fn(g, arg))
		return false;
	for (int32_t i = 0; i < g->nnodes; i++)
		for (int32_t a = 0; a < g->nodes[i]->nattr; a++) {
			const om_attr *at = &g->nodes[i]->attrs[a];
			if (at->g && !each_graph(at->g, fn, arg))
				return false;
			for (int64_t k = 0; at->graphs && k < at->n; k++)
				if (at->graphs[k] && !each_graph(at->graphs[k], fn, arg))
					return false;
		}
	return true;
}

typedef struct init_sum {
	int64_t count, bytes;
} init_sum;

static bool add_inits(const om_graph *g, void *arg)
{
	init_sum *sum = arg;
	for (int32_t i = 0; i < g->ninits; i++) {
		sum->count++;
		if (g->inits[i]->init)
			sum->bytes += (int64_t)g->inits[i]->init->nbytes;
	}
	return true;
}

int64_t om_model_initializer_bytes(const om_model *m, int64_t *count)
{
	init_sum sum = {0, 0};
	if (m->graph)
		each_graph(m->graph, add_inits, &sum);
	if (count)
		*count = sum.count;
	return sum.bytes;
}

typedef struct op_counts {
	om_op_count *rows;
	int n, cap;
} op_counts;

static om_op_count *count_row(op_counts *h, const om_node *n)
{
	char key[sizeof h->rows->op];
	if (om_node_default_domain(n))
		snprintf(key, sizeof key, "%s", n->op);
	else
		snprintf(key, sizeof key, "%s.%s", n->domain, n->op);
	for (int i = 0; i < h->n; i++)
		if (!strcmp(h->rows[i].op, key))
			return &h->rows[i];
	if (h->n == h->cap) {
		int cap = h->cap ? 2 * h->cap : 32;
		om_op_count *r = realloc(h->rows, sizeof *r * (size_t)cap);
		if (!r)
			return NULL;
		h->rows = r;
		h->cap = cap;
	}
	om_op_count *r = &h->rows[h->n++];
	memset(r, 0, sizeof *r);
	memcpy(r->op, key, sizeof key);
	return r;
}

static bool count_nodes(const om_graph *g, void *arg)
{
	op_counts *h = arg;
	for (int32_t i = 0; i < g->nnodes; i++) {
		om_op_count *r = count_row(h, g->nodes[i]);
		if (!r)
			return false;
		r->count++;
	}
	return true;
}

static int by_op(const void *a, const void *b)
{
	return strcmp(((const om_op_count *)a)->op, ((const om_op_count *)b)->op);
}

om_kind om_model_op_counts(const om_model *m, om_op_count **rows, int *n, om_status *st)
{
	op_counts h = {0};
	*rows = NULL;
	*n = 0;
	if (m->graph && !each_graph(m->graph, count_nodes, &h)) {
		free(h.rows);
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory counting ops");
	}
	if (h.n)
		qsort(h.rows, (size_t)h.n, sizeof *h.rows, by_op);
	*rows = h.rows;
	*n = h.n;
	return OM_OK;
}

/* ---- the rows ------------------------------------------------------------------------------ */

/* bit b of om_op.flags (ops/op.h enum om_op_flags) */
static const char *const flag_names[] = {
	"view",     "exact",    "data-dependent", "in-place",    "control",
	"random",   "qdq",      "shape-of",       "elementwise", "commutative",
	"same-shape-copy",      "layout",         "passthrough",    "epilogue",
	"in-scale", "in-place-last", "sum", "perm-axis", "perm-reduce",
	"unaligned", "select",
};

_Static_assert(sizeof flag_names / sizeof flag_names[0] == OM_OP_FLAG_BITS,
	       "a name for every flag of ops/op.h");

const char *om_op_flag_name(int bit)
{
	return bit >= 0 && bit < (int)(sizeof flag_names / sizeof flag_names[0]) ? flag_names[bit]
										 : NULL;
}

typedef struct rows_out {
	om_op_info *rows;
	int cap, n;
} rows_out;

static void add_row(const om_op *op, void *arg)
{
	rows_out *o = arg;
	if (o->rows && o->n < o->cap)
		o->rows[o->n] = (om_op_info){.domain = op->domain, .name = op->name,
					     .since = op->since, .flags = op->flags,
					     .has_kernel = op->kernel || (op->flags & OM_OP_VIEW)};
	o->n++;
}

om_kind om_op_rows(om_op_info **rows, int *n, om_status *st)
{
	*rows = NULL;
	*n = 0;
	rows_out count = {NULL, 0, 0};
	om_op_each(add_row, &count);
	rows_out o = {malloc(sizeof *o.rows * (size_t)(count.n ? count.n : 1)), count.n, 0};
	if (!o.rows)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory for the op rows");
	om_op_each(add_row, &o);
	*rows = o.rows;
	*n = o.n;
	return OM_OK;
}
