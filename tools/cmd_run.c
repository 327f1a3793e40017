/* cmd_run.c — `omopt run MODEL ...`: run a model on .npy / TensorProto (SequenceProto, MapProto,
 * OptionalProto) inputs, write outputs. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

static const char usage_text[] =
	"usage: omopt run MODEL [--input NAME=FILE]... [--input-dir DIR] [--output-dir DIR]\n"
	"             [--output-format pb|npy] [--exact] [--threads N] [--bench N] [--profile]\n"
	"             [--profile-nodes]\n"
	"             [--no-optimize] [--save-optimized FILE] [--max-memory BYTES]\n"
	"             [--max-run-ms MS] [--layout auto|blocked|nhwc|nchw]\n"
	"\n"
	"Runs MODEL once on its inputs and writes output_<i>.pb (or .npy) in graph-output order.\n"
	"The model is optimized first (om_optimize: the passes of `omopt simplify`, then these\n"
	"fusions into ops omopt and ONNX Runtime run, again while one changes something;\n"
	"docs/passes.md); if that fails, it runs as loaded (with a warning):\n"
	"%s"
	"  --input NAME=FILE   feeds input NAME from a .npy or TensorProto .pb file (a\n"
	"                      sequence, map or optional input: a SequenceProto, MapProto or\n"
	"                      OptionalProto .pb, as ONNX's backend tests store them); also\n"
	"                      an input that has an initializer (IR >= 4), which otherwise\n"
	"                      keeps its initializer's value\n"
	"  --input-dir DIR     feeds the inputs not given by --input from DIR/input_<i>.pb,\n"
	"                      i counting the graph inputs in order (initializers excluded),\n"
	"                      or when there is none from DIR/NAME.npy\n"
	"  --output-dir DIR    where the outputs go (created when missing); may be left out\n"
	"                      with --bench, --profile or --save-optimized\n"
	"  --output-format F   pb (TensorProto, default) or npy; a sequence, map or optional\n"
	"                      output is always a SequenceProto, MapProto or OptionalProto .pb\n"
	"  --exact             only exact kernels: results bit-identical on every machine\n"
	"  --threads N         threads kernels may use (default 1)\n"
	"  --layout L          fast mode's layout of the activations between convolutions:\n"
	"                      auto (default: NHWC, or nChw16c when depthwise convs run; on\n"
	"                      AVX2 nChw8c but for 8-bit values; convs that omopt's kernels\n"
	"                      run faster stay NCHW), blocked (nChw16c; nChw8c on AVX2), nhwc,\n"
	"                      or nchw\n"
	"  --bench N           runs N more times and prints the median and minimum time in ms\n"
	"                      and the mean CPU time (user+sys) per run, all threads\n"
	"  --profile           prints the node counts before and after optimizing and the time\n"
	"                      spent per op type (fused ops under their own names): wall ms\n"
	"                      per run, the mean of the --bench runs, or without --bench of one\n"
	"                      run after a first that warms up (the first run is not in it);\n"
	"                      If, Loop and Scan count their own time only: the nodes of their\n"
	"                      subgraphs count under their own op types\n"
	"  --profile-nodes     the same per node that runs (after optimizing), slowest first,\n"
	"                      with the implementation chosen for it at plan time (Conv's:\n"
	"                      docs/ops.md) and, when its kernel ran another, that one;\n"
	"                      an activation the planner absorbed into the node before it is\n"
	"                      not a row: its time is in that node's\n"
	"  --no-optimize       runs the model as loaded\n"
	"  --save-optimized F  writes the model as it is run to F (with only this, nothing runs);\n"
	"                      it may hold com.microsoft ops, which ONNX Runtime runs\n"
	"  --max-memory BYTES  memory limit of a run (tensors held at once, kernels' buffers);\n"
	"                      K, M, G suffixes (KiB, MiB, GiB) or 'none'; default 8G, or half\n"
	"                      the physical memory when less. A node asking for more fails.\n"
	"  --max-run-ms MS     time limit of a run in milliseconds (checked before every node\n"
	"                      and Loop/Scan iteration; default none): past it, exit 1\n";

typedef struct run_args {
	const char *model, *input_dir, *output_dir, *format, *save;
	const char **inputs; /* NAME=FILE */
	int ninputs, bench, no_optimize;
	om_session_options opt;
} run_args;

static int usage_error(const char *fmt, const char *arg)
{
	return cmd_usage_error("run", fmt, arg);
}

/* a count option's value: 1 to a million */
static int parse_count(const char *s, int *out)
{
	return cmd_parse_count(s, 1, 1000000, out);
}

/* BYTES with an optional K, M or G suffix (KiB, MiB, GiB), or "none" (SIZE_MAX); 0 ok */
static int parse_bytes(const char *s, size_t *out)
{
	if (!strcmp(s, "none")) {
		*out = SIZE_MAX;
		return 0;
	}
	if (s[0] < '0' || s[0] > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
	end += shift != 0;
	if (errno || *end || v == 0 || v > (SIZE_MAX >> shift))
		return -1;
	*out = (size_t)v << shift;
	return 0;
}

/* 0 ok, 2 usage error, -1 --help */
static int parse_args(int argc, char **argv, run_args *a)
{
	a->format = "pb";
	a->inputs = calloc((size_t)argc, sizeof *a->inputs);
	if (!a->inputs)
		return 2;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(arg, "--help") || !strcmp(arg, "-h"))
			return -1;
		if (!strcmp(arg, "--exact")) {
			a->opt.exact = 1;
		} else if (!strcmp(arg, "--profile")) {
			a->opt.profile = 1;
		} else if (!strcmp(arg, "--profile-nodes")) {
			a->opt.profile = 2;
		} else if (!strcmp(arg, "--no-optimize")) {
			a->no_optimize = 1;
		} else if (!strcmp(arg, "--input") || !strcmp(arg, "--input-dir") ||
			   !strcmp(arg, "--output-dir") || !strcmp(arg, "--output-format") ||
			   !strcmp(arg, "--threads") || !strcmp(arg, "--bench") ||
			   !strcmp(arg, "--save-optimized") || !strcmp(arg, "--max-memory") ||
			   !strcmp(arg, "--max-run-ms") || !strcmp(arg, "--layout")) {
			if (!val)
				return usage_error("%s needs a value", arg);
			i++;
			if (!strcmp(arg, "--input")) {
				if (!strchr(val, '=') || val[0] == '=')
					return usage_error("--input wants NAME=FILE, got '%s'",
							   val);
				const size_t len = (size_t)(strchr(val, '=') - val);
				for (int j = 0; j < a->ninputs; j++)
					if (!strncmp(a->inputs[j], val, len + 1))
						return cmd_usage_error(
							"run", "--input '%.*s' is given twice",
							(int)len, val);
				a->inputs[a->ninputs++] = val;
			} else if (!strcmp(arg, "--input-dir")) {
				a->input_dir = val;
			} else if (!strcmp(arg, "--output-dir")) {
				a->output_dir = val;
			} else if (!strcmp(arg, "--save-optimized")) {
				a->save = val;
			} else if (!strcmp(arg, "--output-format")) {
				if (strcmp(val, "pb") && strcmp(val, "npy"))
					return usage_error("unknown output format '%s'", val);
				a->format = val;
			} else if (!strcmp(arg, "--max-memory")) {
				if (parse_bytes(val, &a->opt.max_memory))
					return usage_error("bad byte count '%s'", val);
			} else if (!strcmp(arg, "--max-run-ms")) {
				int ms;
				if (parse_count(val, &ms))
					return usage_error("bad millisecond count '%s'", val);
				a->opt.max_run_ms = ms;
			} else if (!strcmp(arg, "--layout")) {
				if (cmd_parse_layout(val, &a->opt.layout))
					return usage_error("unknown layout '%s' (" CMD_LAYOUTS ")", val);
			} else if (!strcmp(arg, "--threads")) {
				if (parse_count(val, &a->opt.threads))
					return usage_error("bad thread count '%s'", val);
			} else if (parse_count(val, &a->bench)) {
				return usage_error("bad run count '%s'", val);
			}
		} else if (arg[0] == '-' && arg[1]) {
			return usage_error("unknown option '%s'", arg);
		} else if (a->model) {
			return usage_error("more than one model ('%s')", arg);
		} else {
			a->model = arg;
		}
	}
	if (!a->model)
		return usage_error("%s", "no model given");
	if (a->opt.exact && a->opt.layout)
		return usage_error("%s", "--layout is for fast mode (exact mode keeps every value "
					 "plain)");
	if (!a->output_dir && !a->bench && !a->opt.profile && !a->save)
		return usage_error("%s", "--output-dir is required");
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* the session's inputs: the required ones, then the overridable initializers (omopt.h) */
static int all_inputs(const om_session *s)
{
	return om_session_input_count(s) + om_session_overridable_count(s);
}

/* "a, b, c": the session's input names, cut with "..." where buf ends */
static void input_list(const om_session *s, char *buf, size_t size)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; i < all_inputs(s) && at < size; i++) {
		int w = snprintf(buf + at, size - at, "%s%s", i ? ", " : "",
				 om_session_input_name(s, i));
		at += w < 0 ? size : (size_t)w;
	}
	if (at >= size && size > 4)
		memcpy(buf + size - 4, "...", 4);
}

/* whether --input k names the session's input `name` */
static bool names_input(const char *arg, const char *name)
{
	const char *eq = strchr(arg, '=');
	return strlen(name) == (size_t)(eq - arg) && !strncmp(name, arg, strlen(name));
}

/* A MapProto of no entries does not say its values' type, so om_value_file_read gives such a
 * map an empty sequence of values, which the ai.onnx.ml map ops refuse: the values of every
 * empty map in v (itself, or in a sequence or optional) become an empty 1-D tensor of the
 * declared element type elem. */
static om_kind type_empty_maps(om_tensor *v, int32_t elem, int depth, om_status *st)
{
	if (depth > 8 || (v->dtype != OM_SEQUENCE && v->dtype != OM_OPTIONAL && v->dtype != OM_MAP))
		return OM_OK;
	om_seq *b = v->data;
	if (v->dtype == OM_MAP) {
		om_tensor *vals = b->n == 2 ? &b->items[1] : NULL;
		if (!vals || vals->dtype != OM_SEQUENCE || ((om_seq *)vals->data)->n)
			return OM_OK;
		const int64_t zero = 0;
		om_tensor none;
		om_kind rc = om_tensor_alloc(&none, elem, 1, &zero, st);
		if (!rc) {
			om_value_free(vals);
			*vals = none;
		}
		return rc;
	}
	for (int64_t i = 0; i < b->n; i++) {
		om_kind rc = type_empty_maps(&b->items[i], elem, depth + 1, st);
		if (rc)
			return rc;
	}
	return OM_OK;
}

/* Reads every session input: --input NAME=FILE first, else DIR/input_<i>.pb. An overridable
 * initializer is read only from --input NAME=FILE; else in[i] stays zeroed (its default). */
static om_kind read_inputs(const run_args *a, const om_session *s, om_tensor *in, om_status *st)
{
	const int n = all_inputs(s), required = om_session_input_count(s);
	char path[4096], npy[4096];
	for (int k = 0; k < a->ninputs; k++) {
		const int len = (int)(strchr(a->inputs[k], '=') - a->inputs[k]);
		int found = 0;
		for (int i = 0; i < n; i++)
			found |= names_input(a->inputs[k], om_session_input_name(s, i));
		if (!found) {
			char names[256];
			input_list(s, names, sizeof names);
			return cmd_error(st, OM_ERR_INVALID_INPUT,
					 "the model has no input '%.*s' (its inputs: %s)", len,
					 a->inputs[k], n ? names : "none");
		}
	}
	for (int i = 0; i < n; i++) {
		const char *name = om_session_input_name(s, i), *file = NULL;
		for (int k = 0; k < a->ninputs; k++)
			if (names_input(a->inputs[k], name))
				file = strchr(a->inputs[k], '=') + 1;
		if (!file && i >= required)
			continue;
		if (!file && a->input_dir)
			file = cmd_dir_input(a->input_dir, i, name, path, npy, sizeof path);
		if (!file)
			return cmd_error(st, OM_ERR_INVALID_INPUT,
					"input '%s' is not given (--input %s=FILE or --input-dir)",
					name, name);
		/* a sequence, map or optional input: its SequenceProto / MapProto / OptionalProto */
		om_io_info info;
		om_kind rc = om_session_input_info(s, i, &info, st);
		if (!rc)
			rc = om_value_file_read(file, info.kind > 0 ? info.kind : 0, &in[i], st);
		if (!rc && info.key && info.elem > 0)
			rc = type_empty_maps(&in[i], info.elem, 0, st);
		if (rc)
			return rc;
	}
	return OM_OK;
}

/* The folders make_dirs created (so that a failed run removes them again) and the output
 * files written into them. */
typedef struct made_dirs {
	char path[4096];
	size_t ends[64]; /* path cut at ends[k] is the k-th folder created, outermost first */
	int n;
	int written;     /* output_0 .. output_<written-1> written */
} made_dirs;

/* dir and the folders above it, when missing (mkdir -p): before the run, so that a path that
 * cannot be made fails at once. The ones it creates are recorded in *md. */
static om_kind make_dirs(const char *dir, made_dirs *md, om_status *st)
{
	char *path = md->path;
	const size_t n = strlen(dir);
	if (n >= sizeof md->path)
		return cmd_error(st, OM_ERR_IO, "output folder name too long");
	memcpy(path, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		const char c = path[i];
		path[i] = '\0';
		if (!mkdir(path, 0777)) {
			if (md->n < (int)(sizeof md->ends / sizeof *md->ends))
				md->ends[md->n++] = i;
		} else if (errno != EEXIST) {
			om_kind k = cmd_error(st, OM_ERR_IO, "cannot create '%s': %s", path,
					      strerror(errno));
			path[i] = c;
			return k;
		}
		path[i] = c;
	}
	return OM_OK;
}

/* After a failure: the outputs written into a folder this run created, then the folders it
 * created, innermost first (rmdir: a folder something else wrote into meanwhile stays). */
static void unmake_dirs(const run_args *a, made_dirs *md)
{
	char file[4200];
	for (int i = 0; md->n && i < md->written; i++) {
		snprintf(file, sizeof file, "%s/output_%d.%s", a->output_dir, i, a->format);
		remove(file);
	}
	for (int k = md->n - 1; k >= 0; k--) {
		md->path[md->ends[k]] = '\0';
		rmdir(md->path);
	}
	md->n = 0;
}

static om_kind write_outputs(const run_args *a, const om_session *s, const om_tensor *out,
			     made_dirs *md, om_status *st)
{
	char path[4096];
	for (int i = 0; i < om_session_output_count(s); i++) {
		/* a sequence, map or optional: a SequenceProto / MapProto / OptionalProto .pb */
		const bool box = out[i].dtype == OM_SEQUENCE || out[i].dtype == OM_OPTIONAL ||
				 out[i].dtype == OM_MAP;
		snprintf(path, sizeof path, "%s/output_%d.%s", a->output_dir, i,
			 box ? "pb" : a->format);
		om_kind rc = om_value_file_write(path, &out[i], om_session_output_name(s, i), st);
		if (rc)
			return rc;
		md->written = i + 1;
	}
	return OM_OK;
}

/* time per op type or node, per run: the session sums over the `runs` runs it profiled */
static om_kind print_profile(const om_session *s, int runs, om_status *st)
{
	om_profile_row *rows;
	int n;
	om_kind rc = om_session_profile(s, &rows, &n, st);
	if (rc)
		return rc;
	double total = 0;
	for (int i = 0; i < n; i++)
		total += rows[i].ms;
	const bool nodes = n > 0 && rows[0].node;
	printf("profile: wall time per %s, mean of %d run%s after a warm-up run%s\n",
	       nodes ? "node" : "op type", runs, runs > 1 ? "s" : "",
	       runs > 1 ? "" : " (one run varies: --bench N for N)");
	printf("%-24s %10s %12s %7s%s\n", "op", "calls/run", "ms/run", "%",
	       nodes ? "  node (the implementation chosen at plan time; ran: the kernel's when"
		       " it differs)" : "");
	for (int i = 0; i < n; i++) {
		char impl[96] = "";
		const char *plan = rows[i].plan_impl, *ran = rows[i].impl;
		const bool other = ran && (!plan || strcmp(ran, plan));
		if (plan || ran)
			snprintf(impl, sizeof impl, " (%s%s%s%s)", plan ? plan : "",
				 plan && other ? "; " : "", other ? "ran " : "", other ? ran : "");
		printf("%-24s %10.4g %12.4f %6.1f%%%s%s%s\n", rows[i].op,
		       (double)rows[i].calls / runs, rows[i].ms / runs,
		       total > 0 ? 100 * rows[i].ms / total : 0, nodes ? "  " : "",
		       nodes ? rows[i].node : "", impl);
	}
	printf("buffers: %.2f MiB in the pool, at most %.2f MiB busy at once\n",
	       (double)om_session_pool_bytes(s) / (1 << 20),
	       (double)om_session_peak_bytes(s) / (1 << 20));
	om_free(rows);
	return OM_OK;
}

/* user + system CPU time of this process: unlike wall time, blind to the machine's load */
static double cpu_ms(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static om_kind run_all(const run_args *a, om_session *s, om_tensor *in, om_tensor *out,
		       om_status *st)
{
	int nin = all_inputs(s), nout = om_session_output_count(s);
	om_kind rc = om_session_run_values(s, in, nin, out, nout, st);
	if (!rc && !a->bench && a->opt.profile) {
		/* the first run warms up (kernel states, pool): the profile covers a second */
		om_session_profile_reset(s);
		for (int i = 0; i < nout; i++)
			om_value_free(&out[i]);
		rc = om_session_run_values(s, in, nin, out, nout, st);
	}
	if (rc || !a->bench)
		return rc;
	om_session_profile_reset(s); /* the first run warms up: the profile covers the bench runs */
	double *ms = calloc((size_t)a->bench, sizeof *ms);
	if (!ms)
		return cmd_error(st, OM_ERR_NOMEM, "out of memory");
	const double c0 = cpu_ms(); /* the CPU time of the timed runs (the warm-up is done) */
	for (int r = 0; r < a->bench && !rc; r++) {
		om_tensor *tmp = calloc((size_t)(nout ? nout : 1), sizeof *tmp);
		if (!tmp) {
			rc = cmd_error(st, OM_ERR_NOMEM, "out of memory");
			break;
		}
		double t0 = now_ms();
		rc = om_session_run_values(s, in, nin, tmp, nout, st);
		ms[r] = now_ms() - t0;
		for (int i = 0; i < nout; i++)
			om_value_free(&tmp[i]);
		free(tmp);
	}
	if (!rc) {
		qsort(ms, (size_t)a->bench, sizeof *ms, cmp_double);
		double med = a->bench % 2 ? ms[a->bench / 2]
					  : (ms[a->bench / 2 - 1] + ms[a->bench / 2]) / 2;
		const double cpu = (cpu_ms() - c0) / a->bench;
		printf("bench: %d run%s, median %.3f ms, min %.3f ms, cpu %.3f ms per run\n",
		       a->bench, a->bench == 1 ? "" : "s", med, ms[0], cpu);
	}
	free(ms);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	run_args a = {0};
	int prc = parse_args(argc, argv, &a);
	if (prc) {
		free(a.inputs);
		if (prc < 0) {
			char passes[4096];
			printf(usage_text, cmd_pass_list(passes, sizeof passes, OM_LEVEL_OPTIMIZE));
			return 0;
		}
		return prc;
	}
	const long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (cores > 0 && a.opt.threads > cores)
		fprintf(stderr,
			"omopt run: note: %d threads on %ld cores: the threads past %ld share cores "
			"and usually slow the run down\n",
			a.opt.threads, cores, cores);
	/* the command is the host: OpenBLAS follows --threads (sessions never set it, omopt.h) */
	om_blas_threads(a.opt.threads);
	om_status st = {0};
	om_model *m = NULL;
	om_session *s = NULL;
	om_tensor *in = NULL, *out = NULL;
	int nin = 0, nout = 0;
	om_kind rc = om_model_load(a.model, &m, &st);
	const int64_t loaded = m ? om_model_node_count(m) : 0;
	const om_simplify_options oo = {.exact = a.opt.exact};
	if (!rc && !a.no_optimize && om_optimize(m, &oo, &st)) {
		/* never fatal: a pass that fails may have left m half rewritten, so run it as loaded */
		fprintf(stderr, "omopt run: not optimized (%s: %s); running the model as loaded\n",
			om_kind_name(st.kind), st.msg);
		om_model_free(m);
		m = NULL;
		st = (om_status){0};
		a.no_optimize = 1;
		rc = om_model_load(a.model, &m, &st);
	}
	/* the session may still fold nodes or absorb them into others' steps: the profile's
	 * calls say what runs */
	if (!rc && a.opt.profile && a.no_optimize)
		printf("graph: %lld nodes as loaded, not optimized\n", (long long)loaded);
	else if (!rc && a.opt.profile)
		printf("graph: %lld nodes as loaded, %lld after om_optimize\n", (long long)loaded,
		       (long long)om_model_node_count(m));
	if (!rc && a.save)
		rc = om_model_save(m, a.save, NULL, &st);
	bool run = a.output_dir || a.bench || a.opt.profile;
	made_dirs md = {.n = 0};
	if (!rc && a.output_dir)
		rc = make_dirs(a.output_dir, &md, &st);
	if (!rc && run)
		rc = om_session_create(m, &a.opt, &s, &st);
	if (!rc && run) {
		nin = all_inputs(s);
		nout = om_session_output_count(s);
		in = calloc((size_t)(nin ? nin : 1), sizeof *in);
		out = calloc((size_t)(nout ? nout : 1), sizeof *out);
		if (!in || !out)
			rc = cmd_error(&st, OM_ERR_NOMEM, "out of memory");
	}
	if (!rc && run)
		rc = read_inputs(&a, s, in, &st);
	if (!rc && run)
		rc = run_all(&a, s, in, out, &st);
	if (!rc && a.output_dir)
		rc = write_outputs(&a, s, out, &md, &st);
	if (!rc && a.opt.profile)
		rc = print_profile(s, a.bench ? a.bench : 1, &st);
	for (int i = 0; in && i < nin; i++)
		om_value_free(&in[i]);
	for (int i = 0; out && i < nout; i++)
		om_value_free(&out[i]);
	free(in);
	free(out);
	free(a.inputs);
	om_session_free(s);
	om_model_free(m);
	if (rc && a.output_dir)
		unmake_dirs(&a, &md);
	return rc ? cmd_fail(&st) : 0;
}
