/* test_pass_registry.c — the pass registry (passes/pass_registry.c): its order and levels, the
 * errors of names it does not have, and that include/omopt.h, docs/passes.md and the --help
 * of `omopt simplify` and `omopt run` list exactly its passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "omopt_testing.h"
#include "testutil.h"
#include "pass_registry.h"

enum { MAX_PASSES = 64 };

static const char *const simplify_passes[] = {
	"infer_shapes", "fold_constants", "fold_shape_chains", "inline_if", "unroll_loops",
	"merge_ifs",
	"eliminate_identities", "fuse_transposes", "push_transposes", "fuse_pad", "fuse_conv_bn",
	"fuse_conv_affine", "fuse_matmul_add", "merge_common", "eliminate_dead",
};
static const char *const optimize_passes[] = {
	"fuse_qdq", "fuse_dynq", "fuse_conv_activation", "fuse_layernorm", "fuse_skip_layernorm",
	"fuse_gelu", "fuse_silu", "fuse_matmul_transpose",
};
enum {
	NSIMPLIFY = sizeof simplify_passes / sizeof *simplify_passes,
	NOPTIMIZE = sizeof optimize_passes / sizeof *optimize_passes,
};

static void order_and_levels(void **state)
{
	(void)state;
	om_pass_info rows[MAX_PASSES];
	const int n = om_pass_rows(rows, MAX_PASSES);
	assert_int_equal(n, NSIMPLIFY + NOPTIMIZE);
	assert_int_equal(om_pass_rows(NULL, 0), n);
	for (int i = 0; i < n; i++) {
		const bool first = i < NSIMPLIFY;
		assert_string_equal(rows[i].name, first ? simplify_passes[i]
							: optimize_passes[i - NSIMPLIFY]);
		assert_int_equal(rows[i].level, first ? OM_LEVEL_SIMPLIFY : OM_LEVEL_OPTIMIZE);
		/* one line of the --help and omopt.h lists: 7 + 22 columns before it */
		assert_true(rows[i].what[0] && strlen(rows[i].what) <= 100 - 29);
		assert_string_equal(om_simplify_pass_name(i) ? om_simplify_pass_name(i) : "-",
				    first ? rows[i].name : "-");
	}
	assert_null(om_simplify_pass_name(-1));
	/* a short array gets the first rows */
	om_pass_info two[2] = {{0}};
	assert_int_equal(om_pass_rows(two, 2), n);
	assert_string_equal(two[1].name, "fold_constants");

	/* the internal table: fold_constants and unroll_loops alone may grow the model (the
	 * size rule);
	 * fuse_qdq alone computes another way (an exact-mode optimize leaves it out) */
	int32_t nt;
	const om_pass_row *t = om_pass_table(&nt);
	assert_int_equal(nt, n);
	for (int32_t i = 0; i < nt; i++) {
		assert_non_null(t[i].fn);
		assert_int_equal(!!(t[i].flags & OM_PASS_GROWS),
				 !strcmp(t[i].name, "fold_constants") ||
					 !strcmp(t[i].name, "unroll_loops"));
		assert_int_equal(!!(t[i].flags & OM_PASS_ROUNDS), !strcmp(t[i].name, "fuse_qdq"));
		assert_ptr_equal(om_pass_find(t[i].name, t[i].level), &t[i]);
	}
	assert_null(om_pass_find("fuse_gelu", OM_LEVEL_SIMPLIFY));
	assert_null(om_pass_find(NULL, OM_LEVEL_OPTIMIZE));
	/* level 1 runs in every graph for at most 10 rounds, level 2 in the main graph for 4,
	 * each round typed first and cleaned after */
	const om_pass_level *l1 = om_pass_level_of(OM_LEVEL_SIMPLIFY);
	const om_pass_level *l2 = om_pass_level_of(OM_LEVEL_OPTIMIZE);
	assert_non_null(l1);
	assert_non_null(l2);
	assert_null(om_pass_level_of(0));
	assert_null(om_pass_level_of(OM_LEVEL_OPTIMIZE + 1));
	assert_int_equal(l1->rounds, 10);
	assert_int_equal(l1->flags, OM_ROUNDS_SUBGRAPHS);
	assert_int_equal(l2->rounds, 4);
	assert_int_equal(l2->flags, OM_ROUNDS_INFER_FIRST | OM_ROUNDS_DEAD_LAST);
}

/* y = Relu(x): every pass leaves it as it is */
static om_model *relu_model(void)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	om_value *x = tu_typed_value(g, "x", OM_FLOAT, 1, (int64_t[]){4});
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	tu_graph_node(g, "Relu", "x", "y");
	om_value *y = tu_typed_value(g, "y", OM_FLOAT, 1, (int64_t[]){4});
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	return m;
}

/* The status message of om_simplify (level 1) or om_optimize with these options. */
static om_kind run_level(int level, const om_simplify_options *o, char *msg, size_t n)
{
	om_model *m = relu_model();
	om_status st = {0};
	om_kind k = level == OM_LEVEL_SIMPLIFY ? om_simplify(m, o, &st) : om_optimize(m, o, &st);
	snprintf(msg, n, "%s", k ? st.msg : "");
	assert_int_equal(m->graph->nnodes, 1);
	om_model_free(m);
	return k;
}

/* The status message of om_simplify_with_break with these options. */
static om_kind run_break(const char *brk, const om_simplify_options *o, char *msg, size_t n)
{
	om_model *m = relu_model();
	om_status st = {0};
	om_kind k = om_simplify_with_break(m, o, brk, &st);
	snprintf(msg, n, "%s", k ? st.msg : "");
	om_model_free(m);
	return k;
}

static void unknown_names(void **state)
{
	(void)state;
	char msg[512];
	const char *const nope[] = {"fold_constants", "no_such_pass", NULL};
	const char *const fusion[] = {"fuse_gelu", NULL};
	const char *const all[] = {"fuse_gelu", "eliminate_dead", "fuse_silu", NULL};
	om_simplify_options o = {.skip = nope};
	assert_int_equal(run_level(OM_LEVEL_SIMPLIFY, &o, msg, sizeof msg), OM_ERR_INVALID_INPUT);
	assert_string_equal(msg, "no pass named 'no_such_pass'");
	assert_int_equal(run_level(OM_LEVEL_OPTIMIZE, &o, msg, sizeof msg), OM_ERR_INVALID_INPUT);
	assert_string_equal(msg, "no pass named 'no_such_pass'");
	/* om_simplify does not know the fusions; om_optimize does */
	o.skip = fusion;
	assert_int_equal(run_level(OM_LEVEL_SIMPLIFY, &o, msg, sizeof msg), OM_ERR_INVALID_INPUT);
	assert_string_equal(msg, "no pass named 'fuse_gelu'");
	o.skip = all;
	assert_int_equal(run_level(OM_LEVEL_OPTIMIZE, &o, msg, sizeof msg), OM_OK);
	/* the break pass (a test's, omopt_testing.h) names a pass of level 1, not skipped */
	o = (om_simplify_options){0};
	assert_int_equal(run_break("fuse_gelu", &o, msg, sizeof msg), OM_ERR_INVALID_INPUT);
	assert_string_equal(msg, "test_break_pass: no pass named 'fuse_gelu'");
	o = (om_simplify_options){.no_passes = 1};
	assert_int_equal(run_break("merge_common", &o, msg, sizeof msg), OM_ERR_INVALID_INPUT);
	assert_string_equal(msg, "test_break_pass: skipped pass 'merge_common'");

	/* the command line: a usage error naming the pass, the fusions unknown to simplify */
	char out[8192], err[8192];
	assert_int_equal(tu_run_omopt("/tmp", "simplify a.onnx b.onnx --skip nope", out,
				      sizeof out, err, sizeof err), 2);
	assert_non_null(strstr(err, "omopt simplify: no pass named 'nope'"));
	assert_int_equal(tu_run_omopt("/tmp", "simplify a.onnx b.onnx --skip fuse_silu", out,
				      sizeof out, err, sizeof err), 2);
	assert_non_null(strstr(err, "omopt simplify: no pass named 'fuse_silu'"));
}

/* The list of `level` as --help prints it (tools/pass_help.c), or as omopt.h's comment
 * (prefix " *     "). */
static void list_of(int level, const char *prefix, char *buf, size_t n)
{
	om_pass_info rows[MAX_PASSES];
	const int np = om_pass_rows(rows, MAX_PASSES);
	size_t k = 0;
	buf[0] = '\0';
	for (int i = 0; i < np && k < n; i++)
		if (rows[i].level == level)
			k += (size_t)snprintf(buf + k, n - k, "%s%-21s %s\n", prefix, rows[i].name,
					      rows[i].what);
	assert_true(k < n);
}

/* The whole file at rel under the source tree, NUL-terminated (free it). */
static char *read_source(const char *rel)
{
	FILE *f = fopen(tu_source_path(rel), "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	const long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	assert_non_null(s);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

/* Fails, printing what `where` should hold, when text does not hold want. */
static void expect_in(const char *text, const char *want, const char *where)
{
	if (!strstr(text, want))
		fail_msg("%s does not list the pass registry; it should say:\n%s", where, want);
}

static void header_lists_the_registry(void **state)
{
	(void)state;
	char *h = read_source("include/omopt.h");
	char want[8192], list[4096];
	list_of(OM_LEVEL_SIMPLIFY, " *     ", list, sizeof list);
	snprintf(want, sizeof want, " *   level 1, om_simplify and om_optimize, to a fixed point "
		 "in every graph:\n%s *   level 2,", list);
	expect_in(h, want, "include/omopt.h");
	list_of(OM_LEVEL_OPTIMIZE, " *     ", list, sizeof list);
	snprintf(want, sizeof want, " *   level 2, om_optimize only, then to a fixed point in "
		 "the main graph:\n%s */\n", list);
	expect_in(h, want, "include/omopt.h");
	free(h);
}

/* docs/passes.md: the registry table, and the first column of the pipeline's and the
 * fusions' tables, in order. */
static void docs_list_the_registry(void **state)
{
	(void)state;
	char *d = read_source("docs/passes.md");
	om_pass_info rows[MAX_PASSES];
	const int np = om_pass_rows(rows, MAX_PASSES);
	char want[8192];
	size_t k = (size_t)snprintf(want, sizeof want, "| pass | level | what it does |\n"
				    "|---|---|---|\n");
	for (int i = 0; i < np; i++)
		k += (size_t)snprintf(want + k, sizeof want - k, "| `%s` | %d | %s |\n",
				      rows[i].name, rows[i].level, rows[i].what);
	assert_true(k < sizeof want);
	expect_in(d, want, "docs/passes.md");
	const char *heads[] = {"| pass | file | what it does |", "| fusion | file | pattern"};
	int i = 0;
	for (int t = 0; t < 2; t++) {
		const char *p = strstr(d, heads[t]);
		assert_non_null(p);
		p = strchr(strchr(p, '\n') + 1, '\n') + 1; /* past the |---| line */
		for (; !strncmp(p, "| `", 3); p = strchr(p, '\n') + 1, i++) {
			assert_true(i < np);
			const size_t len = strlen(rows[i].name);
			if (strncmp(p + 3, rows[i].name, len) || p[3 + len] != '`')
				fail_msg("docs/passes.md: table row %d is not `%s`", i,
					 rows[i].name);
			assert_int_equal(rows[i].level, t + 1);
		}
	}
	assert_int_equal(i, np);
	free(d);
}

static void help_lists_the_registry(void **state)
{
	(void)state;
	char out[16384], err[4096], list[4096];
	assert_int_equal(tu_run_omopt("/tmp", "simplify --help", out, sizeof out, err,
				      sizeof err), 0);
	list_of(OM_LEVEL_SIMPLIFY, "    ", list, sizeof list);
	expect_in(out, list, "omopt simplify --help");
	assert_null(strstr(out, "fuse_gelu"));
	assert_int_equal(tu_run_omopt("/tmp", "run --help", out, sizeof out, err, sizeof err), 0);
	list_of(OM_LEVEL_OPTIMIZE, "    ", list, sizeof list);
	expect_in(out, list, "omopt run --help");
	assert_null(strstr(out, "fuse_conv_bn"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(order_and_levels),
		cmocka_unit_test(unknown_names),
		cmocka_unit_test(header_lists_the_registry),
		cmocka_unit_test(docs_list_the_registry),
		cmocka_unit_test(help_lists_the_registry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
