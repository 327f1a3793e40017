/* cmd_simplify.c — `omopt simplify IN.onnx OUT.onnx [options]`: runs the pass pipeline and
 * prints a per-op before/after table and the time taken. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "ophist.h"

enum { MAX_SKIP = 32 };

static const char usage_text[] =
	"usage: omopt simplify IN.onnx OUT.onnx [--skip PASS]... [--no-fold]\n"
	"                      [--fold-max-bytes N] [--fold-qdq] [--verify] [-v]\n"
	"                      [--external-data]\n"
	"\n"
	"Folds Shape->Gather->Unsqueeze->Concat->Reshape chains into literals (also with dynamic\n"
	"dims), folds constants, drops dead and identity nodes, merges Transposes, folds\n"
	"BatchNormalization and per-channel Mul/Add into Conv, turns MatMul+Add into Gemm, merges\n"
	"duplicate nodes and initializers; repeated to a fixed point. Graph inputs and outputs\n"
	"keep their names, types and dynamic dims; ops of unknown domains pass through. Prints a\n"
	"per-op before/after table and the time.\n"
	"\n"
	"  --skip PASS         do not run PASS (repeatable); passes, in order:\n"
	"                      %s\n"
	"  --no-fold           same as --skip fold_constants\n"
	"  --fold-max-bytes N  fold a node when each of its outputs is at most N bytes, even\n"
	"                      if the model grows (default: a fold may not make the saved\n"
	"                      model larger: its outputs may exceed the constants it frees\n"
	"                      by at most 4096 bytes, covered by what other rewrites saved)\n"
	"  --fold-qdq          also fold QuantizeLinear/DequantizeLinear on constants (a\n"
	"                      float model; by default a quantized model stays quantized)\n"
	"  --verify            check the IR after every pass\n"
	"  -v                  print each pass's change count, the saved size before and\n"
	"                      after, and each fold not made and why (-vv: and every\n"
	"                      inferred type)\n"
	"  --external-data     write weights of 1 KiB and more to OUT.onnx.data\n";

static void usage(FILE *f)
{
	char names[512] = "";
	size_t k = 0;
	for (int i = 0; om_simplify_pass_name(i) && k < sizeof names; i++)
		k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", i ? " " : "",
				      om_simplify_pass_name(i));
	fprintf(f, usage_text, names);
}

static bool known_pass(const char *name)
{
	for (int i = 0; om_simplify_pass_name(i); i++)
		if (!strcmp(om_simplify_pass_name(i), name))
			return true;
	return false;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "omopt simplify: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	usage(stderr);
	return 2;
}

static void print_table(const om_ophist *h)
{
	printf("%-28s %8s %8s\n", "op", "before", "after");
	for (int i = 0; i < h->n; i++)
		printf("%-28s %8lld %8lld\n", h->rows[i].op, (long long)h->rows[i].count[0],
		       (long long)h->rows[i].count[1]);
	printf("%-28s %8lld %8lld\n", "total nodes", (long long)h->total[0],
	       (long long)h->total[1]);
}

int cmd_simplify(int argc, char **argv)
{
	const char *paths[2] = {NULL, NULL};
	const char *skip[MAX_SKIP + 1] = {NULL};
	int nskip = 0, npaths = 0;
	om_simplify_options opt = {0};
	om_save_options save = {0};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--skip") || !strcmp(a, "--no-fold")) {
			const char *name = a[2] == 'n' ? "fold_constants" : i + 1 < argc ? argv[++i]
											 : NULL;
			if (!name)
				return usage_error("%s needs a pass name", a);
			if (!known_pass(name))
				return usage_error("no pass named '%s'", name);
			if (nskip == MAX_SKIP)
				return usage_error("too many --skip options%s", "");
			skip[nskip++] = name;
		} else if (!strcmp(a, "--fold-max-bytes")) {
			if (i + 1 >= argc)
				return usage_error("%s needs a number", a);
			char *end;
			errno = 0;
			unsigned long long v = strtoull(argv[++i], &end, 10);
			if (errno || *end || end == argv[i] || argv[i][0] == '-' || v == 0)
				return usage_error("bad byte count '%s'", argv[i]);
			opt.fold_max_bytes = (size_t)v;
		} else if (!strcmp(a, "--fold-qdq")) {
			opt.fold_qdq = 1;
		} else if (!strcmp(a, "--verify")) {
			opt.verify = 1;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			opt.verbose = 1;
		} else if (!strcmp(a, "-vv")) {
			opt.verbose = 2;
		} else if (!strcmp(a, "--external-data")) {
			save.external_data = 1;
		} else if (a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		} else if (npaths < 2) {
			paths[npaths++] = a;
		} else {
			return usage_error("unexpected argument '%s'", a);
		}
	}
	if (npaths != 2)
		return usage_error("needs IN.onnx and OUT.onnx%s", "");
	opt.skip = skip;

	om_status st = {0};
	om_model *m = NULL;
	double t0 = now_ms();
	if (om_model_load(paths[0], &m, &st))
		return cmd_fail(&st);
	double t1 = now_ms();
	om_ophist h = {0};
	int rc = 0;
	if (om_ophist_add(&h, m, 0, &st)) {
		rc = cmd_fail(&st);
		goto out;
	}
	/* never larger than the original unless the user allowed it (--fold-max-bytes,
	 * --fold-qdq): the passes keep to that, and this checks it, writing the original
	 * unchanged otherwise */
	const bool size_rule = !opt.fold_max_bytes && !opt.fold_qdq;
	size_t size0 = 0, size1 = 0;
	if ((size_rule && om_model_saved_size(m, &size0, &st)) || om_simplify(m, &opt, &st) ||
	    (size_rule && om_model_saved_size(m, &size1, &st))) {
		rc = cmd_fail(&st);
		goto out;
	}
	if (size1 > size0) {
		fprintf(stderr, "omopt simplify: the simplified model would be larger (%zu > %zu "
				"bytes): writing the original unchanged\n", size1, size0);
		om_model_free(m);
		m = NULL;
		if (om_model_load(paths[0], &m, &st)) {
			rc = cmd_fail(&st);
			goto out;
		}
	}
	double t2 = now_ms();
	if (om_model_save(m, paths[1], &save, &st)) {
		rc = cmd_fail(&st);
		goto out;
	}
	double t3 = now_ms();
	if (om_ophist_add(&h, m, 1, &st)) {
		rc = cmd_fail(&st);
		goto out;
	}
	print_table(&h);
	printf("wall time: load %.1f ms, passes %.1f ms, save %.1f ms\n", t1 - t0, t2 - t1, t3 - t2);
out:
	om_ophist_free(&h);
	om_model_free(m);
	return rc;
}
