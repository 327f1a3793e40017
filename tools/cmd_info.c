/* cmd_info.c — `omopt info MODEL`: IR version, producer, opsets, inputs and outputs with
 * their types (symbols by name), op histogram, initializer count and bytes; `omopt info --ops`:
 * the operator rows the executor has. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
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

/* by domain (ai.onnx first), name, then since-version */
static int row_order(const void *pa, const void *pb)
{
	const om_op_info *a = pa, *b = pb;
	int c = strcmp(a->domain, b->domain);
	if (!c)
		c = strcmp(a->name, b->name);
	return c ? c : (a->since > b->since) - (a->since < b->since);
}

static int list_ops(void)
{
	om_op_info *rows;
	int n;
	om_status st;
	if (om_op_rows(&rows, &n, &st))
		return cmd_fail(&st);
	qsort(rows, (size_t)n, sizeof *rows, row_order);
	for (int i = 0; i < n; i++) {
		const om_op_info *r = &rows[i];
		printf("%-14s %-32s %4d ", r->domain[0] ? r->domain : "ai.onnx", r->name, r->since);
		const char *sep = "";
		for (int b = 0; om_op_flag_name(b); b++)
			if (r->flags & (1u << b)) {
				printf("%s%s", sep, om_op_flag_name(b));
				sep = ",";
			}
		if (!r->has_kernel)
			printf("%sno kernel", sep);
		printf("\n");
	}
	printf("%d rows\n", n);
	om_free(rows);
	return 0;
}

/* inputs (title "inputs") or outputs of the main graph */
static om_kind print_values(const om_model *m, bool inputs, om_status *st)
{
	const int n = inputs ? om_model_input_count(m) : om_model_output_count(m);
	printf("%s (%d):\n", inputs ? "inputs" : "outputs", n);
	for (int i = 0; i < n; i++) {
		om_io_info io;
		om_kind k = inputs ? om_model_input_info(m, i, &io, st)
				   : om_model_output_info(m, i, &io, st);
		if (k)
			return k;
		char ty[512];
		om_io_format(&io, ty, sizeof ty);
		printf("  %-32s %s%s\n", io.name, ty,
		       io.has_initializer ? "  (has initializer)" : "");
	}
	return OM_OK;
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
		if (!strcmp(argv[i], "--ops"))
			return cmd_usage_error("info", "--ops lists the ops omopt knows and takes no "
						       "model (omopt info --ops)");
		if ((argv[i][0] == '-' && argv[i][1]) || path)
			return cmd_usage_error("info", "unexpected argument '%s'", argv[i]);
		path = argv[i];
	}
	if (!path)
		return cmd_usage_error("info", "needs a model");
	om_status st = {0};
	om_model *m = NULL;
	if (om_model_load(path, &m, &st))
		return cmd_fail(&st);
	const char *version;
	const char *producer = om_model_producer(m, &version);
	printf("ir_version: %lld\n", (long long)om_model_ir_version(m));
	printf("producer: %s %s\n", producer, version);
	printf("opsets:");
	for (int i = 0; i < om_model_opset_count(m); i++) {
		int64_t v;
		const char *d = om_model_opset_import(m, i, &v);
		printf(" %s=%lld", d[0] ? d : "ai.onnx", (long long)v);
	}
	printf("\n");
	om_ophist h = {0};
	int rc = 0;
	if (print_values(m, true, &st) || print_values(m, false, &st) ||
	    om_ophist_add(&h, m, 0, &st)) {
		rc = cmd_fail(&st);
		goto out;
	}
	printf("ops (%lld nodes):\n", (long long)h.total[0]);
	for (int i = 0; i < h.n; i++)
		printf("  %-28s %8lld\n", h.rows[i].op, (long long)h.rows[i].count[0]);
	int64_t count;
	const int64_t bytes = om_model_initializer_bytes(m, &count);
	printf("initializers: %lld (%lld bytes)\n", (long long)count, (long long)bytes);
out:
	om_ophist_free(&h);
	om_model_free(m);
	return rc;
}
