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

enum { MAX_SKIP = 32, MAX_NAMES = 256 };

static const char usage_text[] =
	"usage: omopt simplify IN.onnx OUT.onnx [--skip PASS]... [--no-fold]\n"
	"                      [--fold-max-bytes N] [--fold-qdq] [--verify] [-v]\n"
	"                      [--external-data] [--input-shape NAME:D1,D2,...]...\n"
	"                      [--outputs A,B,...] [--inputs C,D,...]\n"
	"                      [--drop-unused-outputs] [--no-shapes]\n"
	"                      [--inline-functions | --no-inline-functions]\n"
	"\n"
	"Folds Shape->Gather->Unsqueeze->Concat->Reshape chains into literals (also with dynamic\n"
	"dims), folds constants, drops dead and identity nodes, merges Transposes, folds\n"
	"BatchNormalization and per-channel Mul/Add into Conv, turns MatMul+Add into Gemm, merges\n"
	"duplicate nodes and initializers; repeated to a fixed point. Graph inputs and outputs\n"
	"keep their names, types and dynamic dims unless an option below changes them; ops of\n"
	"unknown domains pass through. Writes the inferred shape of every intermediate value to\n"
	"value_info. Prints a per-op before/after table and the time.\n"
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
	"  --external-data     write weights of 1 KiB and more to OUT.onnx.data\n"
	"  --input-shape NAME:D1,D2,...\n"
	"                      give graph input NAME this shape before simplifying\n"
	"                      (repeatable; a dim is a number or a symbol: x:1,3,224,224,\n"
	"                      x:N,3,224,224; x: is a scalar). The rank must be the\n"
	"                      declared one and a declared number cannot change; a declared\n"
	"                      symbol given a number or a symbol takes it in every input,\n"
	"                      output and value_info that names it\n"
	"  --outputs A,B,...   keep only what computes these tensors, which become the\n"
	"                      graph outputs (a sub-model; repeatable)\n"
	"  --inputs C,D,...    these tensors become graph inputs, typed by shape inference,\n"
	"                      and what computes them goes (with --outputs: the part\n"
	"                      between; repeatable). Graph inputs nothing reads then go\n"
	"  --drop-unused-outputs\n"
	"                      optional node outputs nothing reads become \"\" (Dropout's\n"
	"                      mask, BatchNormalization's statistics, LSTM's Y_h, ...)\n"
	"  --no-shapes         do not write the inferred shapes to value_info\n"
	"  --no-inline-functions\n"
	"                      keep calls of model-local functions (default: functions of\n"
	"                      the model's own domains are inlined, --inline-functions)\n"
	"\n"
	"Size: the written model's weights and nodes are never larger than the original's\n"
	"(after inlining, input shapes and the sub-model; value_info is not counted): when\n"
	"the passes would make it larger, the model is written without their rewrites.\n"
	"\n"
	"Examples:\n"
	"  omopt simplify m.onnx s.onnx --input-shape x:1,3,224,224\n"
	"  omopt simplify m.onnx s.onnx --input-shape idx:batch,16 --no-shapes\n"
	"  omopt simplify m.onnx head.onnx --inputs stage3_out --outputs logits\n"
	"  omopt simplify m.onnx s.onnx --drop-unused-outputs --no-inline-functions\n";

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

/* "NAME:D1,D2,..." (split at the last ':') into *o; its strings point into spec (modified). */
static bool parse_shape(char *spec, om_input_shape *o)
{
	char *colon = strrchr(spec, ':');
	if (!colon || colon == spec)
		return false;
	*colon = 0;
	*o = (om_input_shape){.name = spec};
	char *p = colon + 1;
	if (!*p)
		return true; /* a scalar */
	for (char *tok = p;; o->rank++) {
		char *comma = strchr(tok, ',');
		if (comma)
			*comma = 0;
		if (o->rank == OM_MAX_RANK || !*tok)
			return false;
		if (*tok >= '0' && *tok <= '9') {
			char *end;
			errno = 0;
			long long v = strtoll(tok, &end, 10);
			if (errno || *end || v < 0)
				return false;
			o->dims[o->rank] = v;
		} else if (*tok == '-' || *tok == '+') {
			return false; /* a negative extent */
		} else {
			o->dims[o->rank] = -1;
			o->dim_params[o->rank] = tok;
		}
		if (!comma) {
			o->rank++;
			return true;
		}
		tok = comma + 1;
	}
}

typedef struct name_list {
	const char *names[MAX_NAMES + 1]; /* NULL-terminated */
	int n;
} name_list;

/* Appends the comma-separated names of arg (modified) to l. */
static bool add_names(name_list *l, char *arg)
{
	for (char *tok = arg; tok;) {
		char *comma = strchr(tok, ',');
		if (comma)
			*comma = 0;
		if (!*tok || l->n == MAX_NAMES)
			return false;
		l->names[l->n++] = tok;
		tok = comma ? comma + 1 : NULL;
	}
	return true;
}

/* The options of the first om_simplify call: what the user asked for (functions inlined,
 * input shapes, sub-model, outputs dropped) and no rewrites. */
static om_simplify_options asked_only(const om_simplify_options *opt)
{
	om_simplify_options o = *opt;
	o.no_passes = 1;
	o.no_value_info = 1;
	return o;
}

/* The options of the second call, on the model the first one made: the rewrites. */
static om_simplify_options rewrites_only(const om_simplify_options *opt)
{
	om_simplify_options o = *opt;
	o.input_shapes = NULL;
	o.n_input_shapes = 0;
	o.inputs = o.outputs = NULL;
	return o;
}

/* Loads IN, makes what the user asked for, measures it, runs the rewrites, writes OUT. */
static int simplify_file(const char *const *paths, om_simplify_options *opt, const char **skip,
			 const om_input_shape *shapes, const name_list *ins,
			 const name_list *outs, const om_save_options *save)
{
	opt->skip = skip;
	opt->input_shapes = opt->n_input_shapes ? shapes : NULL;
	opt->inputs = ins->n ? ins->names : NULL;
	opt->outputs = outs->n ? outs->names : NULL;
	const om_simplify_options asked = asked_only(opt);
	const om_simplify_options rewrites = rewrites_only(opt);

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
	/* never larger than the model asked for (inlined, shaped, cut) unless the user allowed
	 * it (--fold-max-bytes, --fold-qdq): the passes keep to that, and this checks it,
	 * writing that model without the rewrites otherwise. value_info is not counted. */
	const bool size_rule = !opt->fold_max_bytes && !opt->fold_qdq;
	size_t size0 = 0, size1 = 0;
	if (om_simplify(m, &asked, &st) ||
	    (size_rule && om_model_saved_size_without_value_info(m, &size0, &st)) ||
	    om_simplify(m, &rewrites, &st) ||
	    (size_rule && om_model_saved_size_without_value_info(m, &size1, &st))) {
		rc = cmd_fail(&st);
		goto out;
	}
	if (size1 > size0) {
		fprintf(stderr, "omopt simplify: the simplified model would be larger (%zu > %zu "
				"bytes without value_info): writing it without the rewrites\n",
			size1, size0);
		om_model_free(m);
		m = NULL;
		om_simplify_options again = asked;
		again.no_value_info = opt->no_value_info;
		if (om_model_load(paths[0], &m, &st) || om_simplify(m, &again, &st)) {
			rc = cmd_fail(&st);
			goto out;
		}
	}
	double t2 = now_ms();
	if (om_model_save(m, paths[1], save, &st)) {
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

int cmd_simplify(int argc, char **argv)
{
	const char *paths[2] = {NULL, NULL};
	const char *skip[MAX_SKIP + 1] = {NULL};
	int nskip = 0, npaths = 0;
	om_simplify_options opt = {0};
	om_save_options save = {0};
	om_input_shape shapes[MAX_NAMES];
	name_list outs = {{0}, 0}, ins = {{0}, 0};
	char *copies[3 * MAX_NAMES]; /* the arguments split in place */
	int ncopies = 0, rc = 0;
	for (int i = 1; i < argc && !rc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			goto done;
		} else if (!strcmp(a, "--skip") || !strcmp(a, "--no-fold")) {
			const char *name = a[2] == 'n' ? "fold_constants" : i + 1 < argc ? argv[++i]
											 : NULL;
			if (!name)
				rc = usage_error("%s needs a pass name", a);
			else if (!known_pass(name))
				rc = usage_error("no pass named '%s'", name);
			else if (nskip == MAX_SKIP)
				rc = usage_error("too many --skip options%s", "");
			else
				skip[nskip++] = name;
		} else if (!strcmp(a, "--fold-max-bytes")) {
			if (i + 1 >= argc) {
				rc = usage_error("%s needs a number", a);
				break;
			}
			char *end;
			errno = 0;
			unsigned long long v = strtoull(argv[++i], &end, 10);
			if (errno || *end || end == argv[i] || argv[i][0] == '-' || v == 0)
				rc = usage_error("bad byte count '%s'", argv[i]);
			opt.fold_max_bytes = (size_t)v;
		} else if (!strcmp(a, "--input-shape") || !strcmp(a, "--inputs") ||
			   !strcmp(a, "--outputs")) {
			if (i + 1 >= argc) {
				rc = usage_error("%s needs an argument", a);
				break;
			}
			char *arg = strdup(argv[++i]);
			if (!arg || ncopies == (int)(sizeof copies / sizeof *copies)) {
				free(arg);
				rc = usage_error("too many %s options", a);
				break;
			}
			copies[ncopies++] = arg;
			if (a[2] == 'o' ? !add_names(&outs, arg) : a[7] == 's' ? !add_names(&ins, arg)
			    : opt.n_input_shapes == MAX_NAMES ||
				      !parse_shape(arg, &shapes[opt.n_input_shapes++]))
				rc = usage_error(a[2] == 'o' || a[7] == 's'
							 ? "bad tensor names '%s' (NAME,NAME,...)"
							 : "bad input shape '%s' (NAME:D1,D2,... with "
							   "numbers or symbols)", argv[i]);
		} else if (!strcmp(a, "--drop-unused-outputs")) {
			opt.drop_unused_outputs = 1;
		} else if (!strcmp(a, "--no-shapes")) {
			opt.no_value_info = 1;
		} else if (!strcmp(a, "--inline-functions")) {
			opt.keep_functions = 0;
		} else if (!strcmp(a, "--no-inline-functions")) {
			opt.keep_functions = 1;
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
			rc = usage_error("unknown option '%s'", a);
		} else if (npaths < 2) {
			paths[npaths++] = a;
		} else {
			rc = usage_error("unexpected argument '%s'", a);
		}
	}
	if (!rc && npaths != 2)
		rc = usage_error("needs IN.onnx and OUT.onnx%s", "");
	if (!rc)
		rc = simplify_file(paths, &opt, skip, shapes, &ins, &outs, &save);
done:
	for (int i = 0; i < ncopies; i++)
		free(copies[i]);
	return rc;
}
