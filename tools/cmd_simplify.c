/* cmd_simplify.c — `omopt simplify IN.onnx OUT.onnx [options]`: runs the pass pipeline and
 * prints a per-op before/after table and the time taken; with --check, runs the original and
 * the result on the same inputs (om_check), and with --bisect names the pass and node that
 * changed results (om_bisect). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_cli.h"
#include "cmd.h"
#include "omopt_testing.h"
#include "dtype_cli.h"
#include "ophist.h"
#include "progress.h"

enum { MAX_SKIP = 32, MAX_NAMES = 256 };

static const char usage_text[] =
	"usage: omopt simplify IN.onnx OUT.onnx [CHECK_N] [--skip PASS,...|all]... [--no-fold]\n"
	"                      [--skip-optimization] [--skip-fuse-bn]\n"
	"                      [--fold-max-bytes N] [--fold-qdq] [--verify] [-v]\n"
	"                      [--external-data [--external-name NAME]]\n"
	"                      [--input-shape NAME:D1,D2,... [NAME:D1,...]...]...\n"
	"                      [--outputs A,B[:DTYPE],...] [--inputs C,D,...]\n"
	"                      [--drop-unused-outputs] [--no-shapes | --all-shapes]\n"
	"                      [--inline-functions | --no-inline-functions]\n"
	"                      [--check N [--bisect]] [--input NAME=FILE]...\n"
	"                      [--input-dir DIR] [--rtol R] [--atol A] [--seed N]\n"
	"                      (inputs and tolerances of --check and --dtype)\n"
	"                      [--dtype fp16|bf16|fp32 [--keep-fp32 NODE]... [--no-keep-measure]]\n"
	"                      [--opset N]\n"
	"\n"
	"Folds Shape->Gather->Unsqueeze->Concat->Reshape chains into literals (also with dynamic\n"
	"dims), folds constants, drops dead and identity nodes, merges Transposes, folds\n"
	"BatchNormalization and per-channel Mul/Add into Conv, turns MatMul+Add into Gemm, merges\n"
	"duplicate nodes and initializers; repeated to a fixed point. Graph inputs and outputs\n"
	"keep their names, types and dynamic dims unless an option below changes them; ops of\n"
	"unknown domains pass through. Writes the inferred shapes of intermediate values to\n"
	"value_info (--no-shapes: none).\n"
	"Prints a per-op before/after table and the time.\n"
	"\n"
	"  --skip PASS,...     do not run these passes (repeatable; `all`: none of them);\n"
	"                      the passes, in order, run again while one changes something\n"
	"                      (`omopt run` adds fusions):\n"
	"%s"
	"  --no-fold           same as --skip fold_constants (onnxsim's --skip-constant-folding,\n"
	"                      OnnxSlim's --no-constant-folding)\n"
	"  --skip-optimization shape inference, constant folding and cleanup only: skips\n"
	"                      every pass but infer_shapes, fold_constants, fold_shape_chains\n"
	"                      and eliminate_dead (onnxsim's; OnnxSlim's --skip-optimizations)\n"
	"  --skip-fuse-bn      same as --skip fuse_conv_bn (onnxsim's)\n"
	"  CHECK_N             a third argument, a number: --check CHECK_N (onnxsim's)\n"
	"  --fold-max-bytes N  fold a node when each of its outputs is at most N bytes, even\n"
	"                      if the model grows (default: a fold may not make the saved\n"
	"                      model larger: its outputs may exceed the constants it frees\n"
	"                      by at most 4096 bytes, covered by what other rewrites saved)\n"
	"  --fold-qdq          also fold QuantizeLinear/DequantizeLinear on constants (a\n"
	"                      float model; by default a quantized model stays quantized)\n"
	"  --verify            check the IR after every pass\n"
	"  --opset N           convert the simplified model to default-domain opset N (7 to\n"
	"                      23), up or down, as ONNX's version converter does; a node the\n"
	"                      target cannot express is an error and nothing is written\n"
	"  -v                  print each pass's change count and time, the saved size\n"
	"                      before and after, and how many folds were not made and why\n"
	"                      (-vv: each of them, and every inferred type)\n"
	"  --external-data     write weights of 1 KiB and more to a file beside OUT.onnx\n"
	"                      named by their content, OUT.onnx.<16 hex digits>.data,\n"
	"                      in place before OUT.onnx (so that a reader of OUT.onnx, even\n"
	"                      while other saves to it run, finds the weights it names or\n"
	"                      none, never others); the one a replaced OUT.onnx named goes\n"
	"                      (OnnxSlim's --save-as-external-data)\n"
	"  --external-name NAME\n"
	"                      with --external-data: that file name instead (replaced\n"
	"                      before OUT.onnx; two saves at once may then mix)\n"
	"  --input-shape NAME:D1,D2,... [NAME:D1,D2,...]...\n"
	"                      give graph input NAME this shape before simplifying\n"
	"                      (repeatable, several shapes after one flag; a dim is a number\n"
	"                      or a symbol: x:1,3,224,224, x:N,3,224,224; x: is a scalar;\n"
	"                      1,3,224,224 without a name: the model's one input). Also\n"
	"                      spelled --overwrite-input-shape (onnxsim) and --input-shapes\n"
	"                      (OnnxSlim). The rank must be the declared one. A declared\n"
	"                      number that changes is said on stderr (a warning), and the\n"
	"                      shapes the model declares inside and at its outputs are then\n"
	"                      inferred again; a declared symbol given a number or a symbol\n"
	"                      takes it in every input, output and value_info that names it\n"
	"  --outputs A,B,...   keep only what computes these tensors, which become the\n"
	"                      graph outputs (a sub-model; repeatable, several names after\n"
	"                      one flag once IN and OUT are given). NAME:DTYPE (OnnxSlim's\n"
	"                      logits:float32): the output must have that element type\n"
	"                      (an error otherwise: omopt adds no Cast)\n"
	"  --inputs C,D,...    these tensors become graph inputs, typed by shape inference,\n"
	"                      and what computes them goes (with --outputs: the part\n"
	"                      between; repeatable). Graph inputs nothing reads then go\n"
	"  --drop-unused-outputs\n"
	"                      optional node outputs nothing reads become \"\" (Dropout's\n"
	"                      mask, BatchNormalization's statistics, LSTM's Y_h, ...)\n"
	"  --no-shapes         do not write the inferred shapes to value_info (onnxsim's\n"
	"                      --skip-shape-inference, OnnxSlim's --no-shape-infer)\n"
	"  --all-shapes        accepted for older scripts: every inferred shape is written\n"
	"  --no-inline-functions\n"
	"                      keep calls of model-local functions (default: functions of\n"
	"                      the model's own domains are inlined, --inline-functions)\n"
	"  --check N           run IN.onnx and the result with omopt's executor on N input\n"
	"                      sets and print, per output, the max absolute and relative\n"
	"                      difference and the tolerances; exit 3 when one is over them\n"
	"                      (OUT.onnx is written anyway: `omopt compare IN OUT` shows\n"
	"                      every value; OnnxSlim's --model-check: --check 1).\n"
	"                      Example: --check 3\n"
	"  --bisect            when the check fails, run the passes again one by one and\n"
	"                      name the first pass, and the node it rewrote, that changed\n"
	"                      results, with the first value that differs (implies --check 1\n"
	"                      when --check is not given). Example: --check 3 --bisect\n"
	"%s"
	"%s"
	"  --test-break-pass P testing only: after pass P first runs, also change the weight\n"
	"                      of the first Conv/MatMul/Gemm on purpose\n"
	"                      (om_simplify_with_break), to see --check and --bisect catch it\n"
	"\n"
	"Size: the written model is never larger than the original (after inlining, input\n"
	"shapes and the sub-model): when the passes would make its weights and nodes larger,\n"
	"the model is written without their rewrites, and only as many inferred shapes go to\n"
	"value_info as fit in what the model was (all of them, but on an already clean model).\n"
	"\n"
	"Examples:\n"
	"  omopt simplify m.onnx s.onnx --input-shape x:1,3,224,224\n"
	"  omopt simplify m.onnx s.onnx --input-shape idx:batch,16 --no-shapes\n"
	"  omopt simplify m.onnx head.onnx --inputs stage3_out --outputs logits\n"
	"  omopt simplify m.onnx s.onnx --drop-unused-outputs --no-inline-functions\n"
	"  omopt simplify m.onnx half.onnx --dtype fp16 --check 2\n"
	"  omopt simplify m.onnx s.onnx --overwrite-input-shape a:1,3,224,224 b:1,10\n"
	"  omopt simplify m.onnx s.onnx --skip fuse_conv_bn,merge_common\n"
	"\n"
	"Progress goes to stderr when the work takes over a second, on a terminal (or with -v).\n"
	"Exit status: 0 done (and the check passed), 1 model or I/O error, 2 usage error,\n"
	"3 the check failed (with --dtype: also the half model's outputs over the tolerance).\n";

static void usage(FILE *f)
{
	char passes[4096];
	fprintf(f, usage_text, cmd_pass_list(passes, sizeof passes, OM_LEVEL_SIMPLIFY),
		cli_check_help, cli_dtype_help);
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
	return cmd_usage_error("simplify", fmt, arg);
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

/* "NAME:D1,D2,..." (split at the last ':') into *o; its strings point into spec (modified).
 * "D1,D2,..." alone (onnxsim's spelling for a model of one input): o->name NULL, resolved
 * once the model is loaded. */
static bool parse_shape(char *spec, om_input_shape *o)
{
	char *colon = strrchr(spec, ':');
	if (colon == spec)
		return false;
	if (!colon && spec[strspn(spec, "0123456789,")])
		return false;
	if (colon)
		*colon = 0;
	*o = (om_input_shape){.name = colon ? spec : NULL};
	char *p = colon ? colon + 1 : spec;
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
	int32_t elems[MAX_NAMES];         /* OnnxSlim's NAME:DTYPE: the element type, or 0 */
	int n;
} name_list;

/* The TensorProto element type of an OnnxSlim/numpy dtype name, or 0. */
static int32_t dtype_named(const char *s)
{
	static const struct { const char *name; int32_t elem; } t[] = {
		{"float32", OM_FLOAT}, {"float", OM_FLOAT}, {"fp32", OM_FLOAT},
		{"float16", OM_FLOAT16}, {"fp16", OM_FLOAT16}, {"bfloat16", OM_BFLOAT16},
		{"float64", OM_DOUBLE}, {"double", OM_DOUBLE}, {"int64", OM_INT64},
		{"int32", OM_INT32}, {"int16", OM_INT16}, {"int8", OM_INT8},
		{"uint64", OM_UINT64}, {"uint32", OM_UINT32}, {"uint16", OM_UINT16},
		{"uint8", OM_UINT8}, {"bool", OM_BOOL}, {"string", OM_STRING},
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (!strcmp(s, t[i].name))
			return t[i].elem;
	return 0;
}

/* Appends the comma-separated names of arg (modified) to l; a name ending in ":DTYPE" of a
 * known dtype (OnnxSlim's "logits:float32") gives its element type too ("out:0", a
 * TensorFlow name, stays a name). */
static bool add_names(name_list *l, char *arg)
{
	for (char *tok = arg; tok;) {
		char *comma = strchr(tok, ',');
		if (comma)
			*comma = 0;
		if (!*tok || l->n == MAX_NAMES)
			return false;
		char *colon = strrchr(tok, ':');
		int32_t elem = colon && colon != tok ? dtype_named(colon + 1) : 0;
		if (elem)
			*colon = 0;
		l->elems[l->n] = elem;
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

typedef struct simplify_args {
	const char *paths[2];
	const char *skip[MAX_SKIP + 1];
	int nskip;
	om_simplify_options opt;
	om_save_options save;
	cli_check_args check; /* check.opt.runs 0: no check */
	cli_dtype_args dtype; /* dtype.dtype 0: no conversion */
	int bisect;
	int64_t opset;          /* --opset: the default-domain opset to convert to; 0: none */
	const char *break_pass; /* --test-break-pass: the rewrites' call breaks after it */
	om_input_shape shapes[MAX_NAMES];
	name_list ins, outs;
	char *copies[3 * MAX_NAMES]; /* the --input-shape/--inputs/--outputs arguments, split */
	int ncopies;
} simplify_args;

/* 0 ok, 2 usage error (printed), -1 --help */
/* Adds pass name to the skip list: 0, or a usage error (2). */
static int skip_pass(simplify_args *a, const char *name)
{
	if (!known_pass(name))
		return usage_error("no pass named '%s' (--help lists them)", name);
	for (int i = 0; i < a->nskip; i++)
		if (!strcmp(a->skip[i], name))
			return 0;
	if (a->nskip == MAX_SKIP)
		return usage_error("too many --skip options%s", "");
	a->skip[a->nskip++] = name;
	return 0;
}

/* --skip's value: pass names separated by commas, or "all" (no rewrite at all). */
static int skip_list(simplify_args *a, char *list)
{
	for (char *tok = list; tok;) {
		char *comma = strchr(tok, ',');
		if (comma)
			*comma = 0;
		if (!*tok)
			return usage_error("bad --skip list (PASS,PASS,... or all)%s", "");
		if (!strcmp(tok, "all"))
			a->opt.no_passes = 1;
		else if (skip_pass(a, tok))
			return 2;
		tok = comma ? comma + 1 : NULL;
	}
	return 0;
}

/* onnxsim's --skip-optimization: shape inference, constant folding and cleanup only. */
static int skip_rewrites(simplify_args *a)
{
	static const char *const kept[] = {"infer_shapes", "fold_constants", "fold_shape_chains",
					   "eliminate_dead"};
	for (int i = 0; om_simplify_pass_name(i); i++) {
		const char *name = om_simplify_pass_name(i);
		bool keep = false;
		for (size_t k = 0; k < sizeof kept / sizeof *kept; k++)
			keep |= !strcmp(name, kept[k]);
		if (!keep && skip_pass(a, name))
			return 2;
	}
	return 0;
}

/* Flags of onnxsim and OnnxSlim that are one of ours: the equivalent, or NULL. */
static const char *alias_of(const char *arg)
{
	static const char *const t[][2] = {
		{"--overwrite-input-shape", "--input-shape"}, /* onnxsim */
		{"--input-shapes", "--input-shape"},          /* OnnxSlim */
		{"--skip-constant-folding", "--no-fold"},     /* onnxsim */
		{"--no-constant-folding", "--no-fold"},       /* OnnxSlim */
		{"--skip-shape-inference", "--no-shapes"},    /* onnxsim */
		{"--no-shape-infer", "--no-shapes"},          /* OnnxSlim */
		{"--save-as-external-data", "--external-data"}, /* OnnxSlim */
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (!strcmp(arg, t[i][0]))
			return t[i][1];
	return NULL;
}

/* Whether argv's next word is one more value of a flag that takes several, as onnxsim's and
 * OnnxSlim's do (argparse's nargs='+'): a shape ("x:1,3", "1,3"), or a name once both paths
 * are given. */
static bool more_values(const char *next, bool shapes, int npaths)
{
	if (!next || next[0] == '-' || !next[0])
		return false;
	if (shapes)
		return strchr(next, ':') || !next[strspn(next, "0123456789,")];
	return npaths == 2 || strchr(next, ':');
}

static int parse_args(int argc, char **argv, simplify_args *a)
{
	int npaths = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (alias_of(arg))
			arg = alias_of(arg);
		int used = cli_check_arg(argc, argv, &i, &a->check, "omopt simplify");
		if (used < 0)
			return 2;
		if (!used)
			used = cli_dtype_arg(argc, argv, &i, &a->dtype, "omopt simplify");
		if (used < 0)
			return 2;
		if (used)
			continue;
		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			return -1;
		} else if (!strcmp(arg, "--check")) {
			i++;
			if (!val || cmd_parse_count(val, 1, 10000, &a->check.opt.runs))
				return usage_error("--check needs a run count (1 to 10000)%s", "");
		} else if (!strcmp(arg, "--model-check")) { /* OnnxSlim */
			if (!a->check.opt.runs)
				a->check.opt.runs = 1;
		} else if (!strcmp(arg, "--bisect")) {
			a->bisect = 1;
		} else if (!strcmp(arg, "--test-break-pass")) {
			i++;
			if (!val || !known_pass(val))
				return usage_error("--test-break-pass needs a pass name%s", "");
			a->break_pass = val;
		} else if (!strcmp(arg, "--no-fold") || !strcmp(arg, "--skip-fuse-bn")) {
			if (skip_pass(a, arg[2] == 'n' ? "fold_constants" : "fuse_conv_bn"))
				return 2;
		} else if (!strcmp(arg, "--skip-optimization") ||
			   !strcmp(arg, "--skip-optimizations")) {
			if (skip_rewrites(a))
				return 2;
		} else if (!strcmp(arg, "--skip")) {
			if (!val)
				return usage_error("%s needs a pass name", arg);
			i++;
			char *copy = strdup(val);
			if (!copy || a->ncopies == (int)(sizeof a->copies / sizeof *a->copies)) {
				free(copy);
				return usage_error("too many %s options", arg);
			}
			a->copies[a->ncopies++] = copy;
			if (skip_list(a, copy))
				return 2;
		} else if (!strcmp(arg, "--opset")) {
			char *end;
			errno = 0;
			long long v = val ? strtoll(val, &end, 10) : 0;
			if (!val || errno || *end || end == val || v < OM_OPSET_CONVERT_MIN ||
			    v > OM_OPSET_CONVERT_MAX)
				return usage_error("--opset needs an opset from 7 to 23%s", "");
			i++;
			a->opset = v;
		} else if (!strcmp(arg, "--fold-max-bytes")) {
			if (!val)
				return usage_error("%s needs a number", arg);
			i++;
			char *end;
			errno = 0;
			unsigned long long v = strtoull(val, &end, 10);
			if (errno || *end || end == val || val[0] == '-' || v == 0)
				return usage_error("bad byte count '%s'", val);
			a->opt.fold_max_bytes = (size_t)v;
		} else if (!strcmp(arg, "--input-shape") || !strcmp(arg, "--inputs") ||
			   !strcmp(arg, "--outputs")) {
			if (!val)
				return usage_error("%s needs an argument", arg);
			const bool outputs = arg[2] == 'o', inputs = arg[7] == 's';
			do { /* one value, or several (nargs='+' of onnxsim and OnnxSlim) */
				val = argv[++i];
				char *copy = strdup(val);
				if (!copy || a->ncopies == (int)(sizeof a->copies /
								 sizeof *a->copies)) {
					free(copy);
					return usage_error("too many %s options", arg);
				}
				a->copies[a->ncopies++] = copy;
				if (outputs ? !add_names(&a->outs, copy)
				    : inputs ? !add_names(&a->ins, copy)
					     : a->opt.n_input_shapes == MAX_NAMES ||
						       !parse_shape(copy,
							&a->shapes[a->opt.n_input_shapes++]))
					return usage_error(
						outputs || inputs
							? "bad tensor names '%s' (NAME,NAME,... or "
							  "NAME:DTYPE)"
							: "bad input shape '%s' (NAME:D1,D2,... with "
							  "numbers or symbols)", val);
			} while (more_values(i + 1 < argc ? argv[i + 1] : NULL, !outputs && !inputs,
					     npaths));
		} else if (!strcmp(arg, "--drop-unused-outputs")) {
			a->opt.drop_unused_outputs = 1;
		} else if (!strcmp(arg, "--no-shapes")) {
			a->opt.no_value_info = 1;
		} else if (!strcmp(arg, "--all-shapes")) {
			a->opt.all_value_info = 1;
		} else if (!strcmp(arg, "--inline-functions")) {
			a->opt.keep_functions = 0;
		} else if (!strcmp(arg, "--no-inline-functions")) {
			a->opt.keep_functions = 1;
		} else if (!strcmp(arg, "--fold-qdq")) {
			a->opt.fold_qdq = 1;
		} else if (!strcmp(arg, "--verify")) {
			a->opt.verify = 1;
		} else if (!strcmp(arg, "-v") || !strcmp(arg, "--verbose")) {
			a->opt.verbose = 1;
		} else if (!strcmp(arg, "-vv")) {
			a->opt.verbose = 2;
		} else if (!strcmp(arg, "--external-data")) {
			a->save.external_data = 1;
		} else if (!strcmp(arg, "--external-name")) {
			i++;
			if (!val || !*val)
				return usage_error("--external-name needs a file name%s", "");
			a->save.external_name = val;
		} else if (arg[0] == '-' && arg[1]) {
			return usage_error("unknown option '%s'", arg);
		} else if (npaths < 2) {
			a->paths[npaths++] = arg;
		} else if (npaths == 2 && !a->check.opt.runs &&
			   !cmd_parse_count(arg, 0, 10000, &a->check.opt.runs)) {
			npaths++; /* onnxsim's third positional argument: check_n */
		} else {
			return usage_error("unexpected argument '%s'", arg);
		}
	}
	if (npaths < 2)
		return usage_error("needs IN.onnx and OUT.onnx%s", "");
	if (a->bisect && !a->check.opt.runs)
		a->check.opt.runs = 1;
	if (a->check.n && !a->check.opt.runs && !a->dtype.dtype)
		return usage_error("--input is for --check, --bisect or --dtype%s", "");
	if (a->save.external_name && !a->save.external_data)
		return usage_error("--external-name is for --external-data%s", "");
	if ((a->dtype.nkeep || a->dtype.no_measure) && !a->dtype.dtype)
		return usage_error("--keep-fp32 and --no-keep-measure are for --dtype%s", "");
	if (a->dtype.dtype && a->check.opt.rtol <= 0)
		a->check.opt.rtol = 1e-2; /* half precision: the check's default tolerance */
	a->opt.skip = a->skip;
	a->opt.overwrite_fixed_dims = 1; /* with a warning (warn_fixed) */
	a->opt.input_shapes = a->opt.n_input_shapes ? a->shapes : NULL;
	a->opt.inputs = a->ins.n ? a->ins.names : NULL;
	a->opt.outputs = a->outs.n ? a->outs.names : NULL;
	return 0;
}

/* --check (and --bisect): 0 passed, 3 failed, 1 an error */
static int check(const simplify_args *a, const om_model *m, cli_progress *prog)
{
	om_status st = {0};
	om_model *orig = NULL;
	const om_simplify_options asked = asked_only(&a->opt);
	if (om_model_load(a->paths[0], &orig, &st) || om_simplify(orig, &asked, &st)) {
		om_model_free(orig);
		return cmd_fail(&st);
	}
	om_check_options copt = a->check.opt;
	copt.progress = cli_progress_report;
	copt.progress_user = prog;
	om_check_report rep;
	om_kind k = om_check(orig, m, &copt, &rep, &st);
	cli_progress_end(prog);
	int rc = k ? cmd_fail(&st) : 0;
	if (!k)
		cli_print_check(stdout, &rep);
	if (!k && !rep.passed) {
		rc = CMD_CHECK_FAILED;
		fprintf(stderr, "omopt simplify: the check failed; %s was written anyway (`omopt "
				"compare %s %s` compares every value)\n", a->paths[1], a->paths[0],
			a->paths[1]);
	}
	if (!k && !rep.passed && a->bisect) {
		/* the failing run's inputs, all given: one run per step */
		copt.runs = 1;
		copt.input_names = (const char *const *)rep.failed_input_names;
		copt.inputs = rep.failed_inputs;
		copt.ninputs = rep.nfailed_inputs;
		om_bisect_report br;
		fflush(stdout);
		const om_simplify_options rewrites = rewrites_only(&a->opt);
		if (om_bisect_with_break(orig, &rewrites, a->break_pass, &copt, &br, &st))
			rc = cmd_fail(&st);
		else
			cli_print_bisect(stdout, &br);
		cli_progress_end(prog);
	}
	om_check_report_free(&rep);
	om_model_free(orig);
	return rc;
}

/* Name-less input shapes (onnxsim's "1,3,224,224") name the model's one fed input. Every
 * declared number the shapes change is said on stderr. 0, or 1 (an error, printed). */
static int resolve_shapes(simplify_args *a, const om_model *m)
{
	om_status st = {0};
	const char *only = NULL;
	int fed = 0;
	for (int i = 0; i < om_model_input_count(m); i++) {
		om_io_info io;
		if (om_model_input_info(m, i, &io, &st))
			return cmd_fail(&st);
		if (!io.has_initializer)
			fed++, only = io.name;
	}
	for (int k = 0; k < a->opt.n_input_shapes; k++) {
		om_input_shape *s = &a->shapes[k];
		if (!s->name && fed != 1) {
			fprintf(stderr, "omopt simplify: an input shape without a name is for a model "
					"of one input; this one has %d (NAME:D1,D2,...)\n", fed);
			return 1;
		}
		if (!s->name)
			s->name = only;
		for (int i = 0; i < om_model_input_count(m); i++) {
			om_io_info io;
			if (om_model_input_info(m, i, &io, &st))
				return cmd_fail(&st);
			if (strcmp(io.name, s->name) || io.rank != s->rank)
				continue;
			for (int d = 0; d < s->rank; d++)
				if (io.dims[d] >= 0 && io.dims[d] != s->dims[d]) {
					fprintf(stderr, "omopt simplify: warning: input '%s' dim %d is "
							"declared %lld and becomes ", s->name, d,
						(long long)io.dims[d]);
					if (s->dims[d] >= 0)
						fprintf(stderr, "%lld", (long long)s->dims[d]);
					else
						fprintf(stderr, "%s", s->dim_params[d]);
					fprintf(stderr, "; the shapes the model declares inside and at "
							"its outputs are inferred again\n");
				}
		}
	}
	return 0;
}

/* OnnxSlim's --outputs NAME:DTYPE: each such output has that element type, or 1 (printed):
 * omopt cuts the graph there but does not cast. */
static int check_output_types(const simplify_args *a, const om_model *m)
{
	om_status st = {0};
	for (int k = 0; k < a->outs.n; k++) {
		if (!a->outs.elems[k])
			continue;
		for (int i = 0; i < om_model_output_count(m); i++) {
			om_io_info io;
			if (om_model_output_info(m, i, &io, &st))
				return cmd_fail(&st);
			if (strcmp(io.name, a->outs.names[k]) || !io.elem ||
			    io.elem == a->outs.elems[k])
				continue;
			fprintf(stderr, "omopt simplify: output '%s' has element type %s, not the %s "
					"asked for (omopt does not add a Cast; leave the :DTYPE off)\n",
				io.name, om_dtype_name(io.elem), om_dtype_name(a->outs.elems[k]));
			return 1;
		}
	}
	return 0;
}

static int simplify(simplify_args *a)
{
	om_status st = {0};
	om_model *m = NULL;
	cli_progress prog;
	cli_progress_start(&prog, "omopt simplify", a->opt.verbose);
	a->opt.progress = cli_progress_report;
	a->opt.progress_user = &prog;
	double t0 = now_ms();
	if (om_model_load(a->paths[0], &m, &st))
		return cmd_fail(&st);
	if (resolve_shapes(a, m)) {
		om_model_free(m);
		return 1;
	}
	if (cli_check_read(&a->check, m, &st)) {
		om_model_free(m);
		return cmd_fail(&st);
	}
	/* inputs that cannot feed the model fail now, before the passes and OUT's writing */
	if (cli_check_fits(&a->check, m, a->opt.input_shapes, (int)a->opt.n_input_shapes, &st)) {
		om_model_free(m);
		return cmd_fail(&st);
	}
	double t1 = now_ms();
	om_ophist h = {0};
	int rc = 0;
	if (om_ophist_add(&h, m, 0, &st)) {
		rc = cmd_fail(&st);
		goto out;
	}
	/* never larger than the model asked for (inlined, shaped, cut) unless the user allowed
	 * it (--fold-max-bytes, --fold-qdq): the passes keep to that, and this checks it,
	 * writing that model without the rewrites otherwise. value_info is not counted here:
	 * om_simplify writes as much of it as keeps the model within its size as given. */
	const om_simplify_options asked = asked_only(&a->opt);
	const om_simplify_options rewrites = rewrites_only(&a->opt);
	const bool size_rule = !a->opt.fold_max_bytes && !a->opt.fold_qdq;
	size_t size0 = 0, size1 = 0;
	if (om_simplify(m, &asked, &st) ||
	    (size_rule && om_model_saved_size_without_value_info(m, &size0, &st)) ||
	    om_simplify_with_break(m, &rewrites, a->break_pass, &st) ||
	    (size_rule && om_model_saved_size_without_value_info(m, &size1, &st))) {
		cli_progress_end(&prog);
		rc = cmd_fail(&st);
		goto out;
	}
	cli_progress_end(&prog);
	if (size1 > size0) {
		fprintf(stderr, "omopt simplify: the simplified model would be larger (%zu > %zu "
				"bytes without value_info): writing it without the rewrites\n",
			size1, size0);
		om_model_free(m);
		m = NULL;
		om_simplify_options again = asked;
		again.no_value_info = a->opt.no_value_info;
		if (om_model_load(a->paths[0], &m, &st) || om_simplify(m, &again, &st)) {
			rc = cmd_fail(&st);
			goto out;
		}
	}
	if (check_output_types(a, m)) {
		rc = 1;
		goto out;
	}
	int dtype_rc = 0;
	if (a->dtype.dtype) {
		fflush(stdout);
		dtype_rc = cli_dtype_convert(m, &a->dtype, &a->check, &prog);
		if (dtype_rc == 1) {
			rc = 1;
			goto out;
		}
	}
	/* last, so that the passes and --dtype run at the opset the model was made for */
	if (a->opset && om_opset_convert(m, a->opset, &st)) {
		rc = cmd_fail(&st);
		goto out;
	}
	double t2 = now_ms();
	if (om_model_save(m, a->paths[1], &a->save, &st)) {
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
	if (a->check.opt.runs) {
		double t4 = now_ms();
		fflush(stdout);
		rc = check(a, m, &prog);
		printf("wall time: check %.1f ms\n", now_ms() - t4);
	}
	if (!rc)
		rc = dtype_rc;
out:
	om_ophist_free(&h);
	om_model_free(m);
	return rc;
}

int cmd_simplify(int argc, char **argv)
{
	simplify_args a = {0};
	int rc = parse_args(argc, argv, &a);
	if (rc < 0)
		usage(stdout);
	else if (!rc)
		rc = simplify(&a);
	cli_check_free(&a.check);
	for (int i = 0; i < a.ncopies; i++)
		free(a.copies[i]);
	return rc < 0 ? 0 : rc;
}
