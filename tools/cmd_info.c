/* cmd_info.c — `omopt info MODEL`: IR version, producer, opsets, inputs and outputs with
 * their types (symbols by name), op histogram, initializer count and bytes; `omopt info --ops`:
 * the operator rows the executor has. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "registry.h"
#include "ophist.h"

static const char usage_text[] =
	"usage: omopt info MODEL.onnx\n"
	"       omopt info --ops\n"
	"\n"
	"Prints the model's IR version, producer, opset imports, graph inputs and outputs with\n"
	"element types and dims (symbolic dims by name, ? when unknown), the op histogram\n"
	"(subgraphs included) and the initializers' count and bytes.\n"
	"--ops lists the operator rows omopt runs, one per line: domain, op, the first opset\n"
	"version the row implements, and its flags (view, exact, data-dependent, in-place,\n"
	"control, random, qdq, shape-of, elementwise, commutative, same-shape-copy, layout;\n"
	"docs/ops.md), and 'no kernel' for rows that only infer. A node runs the row with the\n"
	"highest version <= the model's opset.\n";

static void print_row(const om_op *op, void *arg)
{
	static const char *const names[] = {"view",        "exact",       "data-dependent",
					    "in-place",    "control",     "random",
					    "qdq",         "shape-of",    "elementwise",
					    "commutative", "same-shape-copy", "layout"};
	int *count = arg;
	printf("%-14s %-32s %4d ", op->domain[0] ? op->domain : "ai.onnx", op->name,
	       (int)op->since);
	const char *sep = "";
	for (unsigned b = 0; b < sizeof names / sizeof names[0]; b++)
		if (op->flags & (1u << b)) {
			printf("%s%s", sep, names[b]);
			sep = ",";
		}
	if (!op->kernel && !(op->flags & OM_OP_VIEW))
		printf("%sno kernel", sep);
	printf("\n");
	(*count)++;
}

static int list_ops(void)
{
	int count = 0;
	om_op_each(print_row, &count);
	printf("%d rows\n", count);
	return 0;
}

static void print_values(const char *title, om_value *const *v, int32_t n)
{
	printf("%s (%d):\n", title, n);
	for (int32_t i = 0; i < n; i++) {
		char ty[512];
		om_type_format(&v[i]->type, ty, sizeof ty);
		printf("  %-32s %s%s\n", v[i]->name, ty,
		       (v[i]->flags & OM_VALUE_INITIALIZER) ? "  (has initializer)" : "");
	}
}

static void init_bytes(const om_graph *g, int64_t *count, int64_t *bytes)
{
	for (int32_t i = 0; i < g->ninits; i++) {
		(*count)++;
		if (g->inits[i]->init)
			*bytes += (int64_t)g->inits[i]->init->nbytes;
	}
	for (int32_t i = 0; i < g->nnodes; i++)
		for (int32_t a = 0; a < g->nodes[i]->nattr; a++) {
			const om_attr *at = &g->nodes[i]->attrs[a];
			if (at->g)
				init_bytes(at->g, count, bytes);
			for (int64_t k = 0; at->graphs && k < at->n; k++)
				init_bytes(at->graphs[k], count, bytes);
		}
}

int cmd_info(int argc, char **argv)
{
	const char *path = NULL;
	if (argc == 2 && !strcmp(argv[1], "--ops"))
		return list_ops();
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage_text, stdout);
			return 0;
		}
		if ((argv[i][0] == '-' && argv[i][1]) || path) {
			fprintf(stderr, "omopt info: unexpected argument '%s'\n%s", argv[i],
				usage_text);
			return 2;
		}
		path = argv[i];
	}
	if (!path) {
		fprintf(stderr, "omopt info: needs a model\n%s", usage_text);
		return 2;
	}
	om_status st = {0};
	om_model *m = NULL;
	if (om_model_load(path, &m, &st))
		return cmd_fail(&st);
	printf("ir_version: %lld\n", (long long)m->ir_version);
	printf("producer: %s %s\n", m->producer_name ? m->producer_name : "",
	       m->producer_version ? m->producer_version : "");
	printf("opsets:");
	for (int32_t i = 0; i < m->nopsets; i++)
		printf(" %s=%lld", m->opsets[i].domain && m->opsets[i].domain[0]
					   ? m->opsets[i].domain : "ai.onnx",
		       (long long)m->opsets[i].version);
	printf("\n");
	const om_graph *g = m->graph;
	print_values("inputs", g->inputs, g->ninputs);
	print_values("outputs", g->outputs, g->noutputs);
	om_ophist h = {0};
	if (om_ophist_add(&h, g, 0)) {
		om_model_free(m);
		fprintf(stderr, "omopt info: out of memory\n");
		return 1;
	}
	om_ophist_sort(&h);
	printf("ops (%lld nodes):\n", (long long)h.total[0]);
	for (int32_t i = 0; i < h.n; i++)
		printf("  %-28s %8lld\n", h.rows[i].op, (long long)h.rows[i].count[0]);
	int64_t count = 0, bytes = 0;
	init_bytes(g, &count, &bytes);
	printf("initializers: %lld (%lld bytes)\n", (long long)count, (long long)bytes);
	om_ophist_free(&h);
	om_model_free(m);
	return 0;
}
