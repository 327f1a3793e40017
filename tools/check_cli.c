/* check_cli.c — see check_cli.h. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_cli.h"
#include "cmd.h"

const char cli_check_help[] =
	"  --input NAME=FILE   feed input NAME from a .npy or TensorProto .pb file in every\n"
	"                      run (repeatable; all of them given: one run, the others would\n"
	"                      repeat it); its shape binds its dims' symbols. Other\n"
	"                      inputs are random: floats standard normal, integers in\n"
	"                      [0,16), bools 0/1; a free symbol (dim_param) is 1+(run+k)%4\n"
	"                      for the k-th symbol, the same in every input; when the model\n"
	"                      rejects that: integers in [0,2); non-batch dims 32v, then\n"
	"                      256+64(v-1), v = 1+(run+k)%4\n"
	"  --rtol R, --atol A  tolerance of a float tensor: max|a-b| <= A + R*max|a|, a the\n"
	"                      original's (default R 1e-4, A 1e-5); other types must be equal\n"
	"  --input-dir DIR     feed the inputs not given by --input from DIR/input_<i>.pb\n"
	"                      (ONNX's test layout: i the input's index), else DIR/NAME.npy\n"
	"  --seed N            seed of the random inputs (default: fixed, so runs repeat)\n";

int cli_usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (%s --help)\n", cmd);
	return -1;
}

int cli_check_arg(int argc, char **argv, int *i, cli_check_args *a, const char *cmd)
{
	const char *arg = argv[*i];
	if (strcmp(arg, "--input") && strcmp(arg, "--input-dir") && strcmp(arg, "--rtol") &&
	    strcmp(arg, "--atol") && strcmp(arg, "--seed"))
		return 0;
	if (*i + 1 >= argc)
		return cli_usage_error(cmd, "%s needs a value", arg);
	const char *val = argv[++*i];
	char *end;
	errno = 0;
	if (!strcmp(arg, "--input")) {
		const char *eq = strchr(val, '=');
		if (!eq || eq == val || !eq[1])
			return cli_usage_error(cmd, "--input wants NAME=FILE, got '%s'", val);
		if (a->n == CLI_MAX_INPUTS)
			return cli_usage_error(cmd, "too many --input options%s", "");
		char *name = strndup(val, (size_t)(eq - val));
		if (!name)
			return cli_usage_error(cmd, "out of memory%s", "");
		for (int k = 0; k < a->n; k++)
			if (!strcmp(a->names[k], name)) {
				free(name);
				return cli_usage_error(cmd, "input given twice: '%s'", val);
			}
		a->names[a->n] = name;
		a->files[a->n++] = eq + 1;
	} else if (!strcmp(arg, "--input-dir")) {
		if (a->input_dir)
			return cli_usage_error(cmd, "--input-dir given twice: '%s'", val);
		a->input_dir = val;
	} else if (!strcmp(arg, "--seed")) {
		unsigned long long v = strtoull(val, &end, 10);
		if (errno || *end || end == val || val[0] == '-')
			return cli_usage_error(cmd, "bad seed '%s'", val);
		a->opt.seed = v;
	} else {
		double v = strtod(val, &end);
		if (errno || *end || end == val || !(v > 0) || !isfinite(v))
			return cli_usage_error(cmd, "bad tolerance '%s' (a positive number)", val);
		*(!strcmp(arg, "--rtol") ? &a->opt.rtol : &a->opt.atol) = v;
	}
	return 1;
}

/* the inputs of m that --input does not name, from a->input_dir */
static om_kind dir_inputs(cli_check_args *a, const om_model *m, om_status *st)
{
	const int n = om_model_input_count(m);
	for (int i = 0; i < n; i++) {
		om_io_info io;
		om_kind rc = om_model_input_info(m, i, &io, st);
		if (rc)
			return rc;
		bool given = false;
		for (int k = 0; k < a->n; k++)
			given |= !strcmp(a->names[k], io.name);
		if (given)
			continue;
		if (a->n == CLI_MAX_INPUTS)
			return cmd_error(st, OM_ERR_INVALID_INPUT, "too many inputs");
		char pb[4096], npy[4096];
		struct stat sb;
		const char *file = cmd_dir_input(a->input_dir, i, io.name, pb, npy, sizeof pb);
		if (stat(file, &sb))
			return cmd_error(st, OM_ERR_INVALID_INPUT,
					 "input '%s' is in neither %s nor %s", io.name, pb, npy);
		char *name = strdup(io.name), *path = strdup(file);
		if (!name || !path) {
			free(name), free(path);
			return cmd_error(st, OM_ERR_NOMEM, "out of memory");
		}
		a->names[a->n] = name;
		a->dir_files[a->n] = path;
		a->files[a->n++] = path;
	}
	return OM_OK;
}

om_kind cli_check_read(cli_check_args *a, const om_model *m, om_status *st)
{
	om_kind rc = a->input_dir ? dir_inputs(a, m, st) : OM_OK;
	for (int k = 0; !rc && k < a->n; k++)
		rc = om_tensor_read_file(a->files[k], &a->tensors[k], st);
	if (rc)
		return rc;
	a->opt.input_names = a->names;
	a->opt.inputs = a->tensors;
	a->opt.ninputs = a->n;
	return OM_OK;
}

/* one given tensor t against the graph input's declared type (or the shape sh gives it) */
static om_kind fits(const om_io_info *io, const om_input_shape *sh, const om_tensor *t,
		    om_status *st)
{
	if (io->elem && t->dtype != io->elem)
		return cmd_error(st, OM_ERR_INVALID_INPUT,
				 "input '%s': the file holds %s, the model declares %s", io->name,
				 om_dtype_name(t->dtype), om_dtype_name(io->elem));
	const int32_t rank = sh ? sh->rank : io->rank;
	if (rank < 0)
		return OM_OK;
	if (t->rank != rank)
		return cmd_error(st, OM_ERR_INVALID_INPUT,
				 "input '%s': the file holds rank %d, the model declares rank %d",
				 io->name, (int)t->rank, (int)rank);
	for (int32_t d = 0; d < rank; d++) {
		const int64_t want = sh ? sh->dims[d] : io->dims[d];
		if (want >= 0 && t->dims[d] != want)
			return cmd_error(st, OM_ERR_INVALID_INPUT,
					 "input '%s': dim %d is %lld in the file, %lld in the model",
					 io->name, (int)d, (long long)t->dims[d],
					 (long long)want);
	}
	return OM_OK;
}

om_kind cli_check_fits(const cli_check_args *a, const om_model *m, const om_input_shape *shapes,
		       int nshapes, om_status *st)
{
	const int n = om_model_input_count(m);
	for (int k = 0; k < a->n; k++) {
		om_io_info io = {0};
		int i = 0;
		for (; i < n; i++) {
			om_kind rc = om_model_input_info(m, i, &io, st);
			if (rc)
				return rc;
			if (!strcmp(io.name, a->names[k]))
				break;
		}
		if (i == n)
			return cmd_error(st, OM_ERR_INVALID_INPUT,
					 "the model has no input '%s' to feed", a->names[k]);
		const om_input_shape *sh = NULL;
		for (int j = 0; j < nshapes; j++)
			if (!strcmp(shapes[j].name, a->names[k]))
				sh = &shapes[j];
		om_kind rc = io.kind ? OM_OK : fits(&io, sh, &a->tensors[k], st);
		if (rc)
			return rc;
	}
	return OM_OK;
}

void cli_check_free(cli_check_args *a)
{
	for (int k = 0; k < a->n; k++) {
		free((char *)a->names[k]);
		free(a->dir_files[k]);
		a->dir_files[k] = NULL;
		om_tensor_free(&a->tensors[k]);
	}
	a->n = 0;
}

static const char *state_name(int32_t s)
{
	switch (s) {
	case OM_DIFF_OK: return "ok";
	case OM_DIFF_OVER: return "OVER";
	case OM_DIFF_SHAPE: return "SHAPE/TYPE DIFFER";
	case OM_DIFF_MISSING: return "MISSING";
	default: return "not compared";
	}
}

static void shape(char *buf, size_t size, const om_diff *d)
{
	size_t k = (size_t)snprintf(buf, size, "%s[", om_dtype_name(d->dtype));
	for (int i = 0; i < d->rank && k < size; i++) {
		k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "",
				      (long long)d->dims[i]);
		if (d->dims_max[i] != d->dims[i] && k < size) /* over the runs */
			k += (size_t)snprintf(buf + k, size - k, "..%lld",
					      (long long)d->dims_max[i]);
	}
	if (k < size)
		snprintf(buf + k, size - k, "]");
}

/* the table's first two columns: as wide as the longest name and shape, at least the
 * header's (names up to 96 characters keep the columns aligned) */
typedef struct widths {
	int name, shape;
} widths;

static widths widths_of(const om_diff *d, int n)
{
	widths w = {32, 22};
	for (int i = 0; i < n; i++) {
		char sh[96] = "";
		if (d[i].rank >= 0)
			shape(sh, sizeof sh, &d[i]);
		const int ln = (int)strlen(d[i].name), ls = (int)strlen(sh);
		w.name = ln > w.name ? (ln < 96 ? ln : 96) : w.name;
		w.shape = ls > w.shape ? ls : w.shape;
	}
	return w;
}

static void row(FILE *f, widths w, const om_diff *d, const char *mark)
{
	char sh[96] = "";
	if (d->rank >= 0)
		shape(sh, sizeof sh, d);
	if (d->state == OM_DIFF_OK || d->state == OM_DIFF_OVER)
		fprintf(f, "  %-*s %-*s %10.3g %10.3g  %s%s\n", w.name, d->name, w.shape, sh,
			d->max_abs, d->max_rel, state_name(d->state), mark);
	else
		fprintf(f, "  %-*s %-*s %10s %10s  %s%s\n", w.name, d->name, w.shape, sh, "-", "-",
			state_name(d->state), mark);
}

static void header(FILE *f, widths w, double rtol, double atol)
{
	fprintf(f, "  %-*s %-*s %10s %10s  result (rtol %g, atol %g)\n", w.name, "value", w.shape,
		"shape", "max abs", "max rel", rtol, atol);
}

void cli_print_check(FILE *f, const om_check_report *r)
{
	fprintf(f, "check: %d run%s on the original and the simplified model (omopt's "
		   "executor)\n", r->runs, r->runs == 1 ? "" : "s");
	fprintf(f, "check: inputs: %s\n", r->how);
	const widths w = widths_of(r->outputs, r->noutputs);
	header(f, w, r->rtol, r->atol);
	for (int i = 0; i < r->noutputs; i++)
		row(f, w, &r->outputs[i], "");
	if (r->error[0])
		fprintf(f, "check: the simplified model failed: %s\n", r->error);
	if (r->passed)
		fprintf(f, "check: passed\n");
	else
		fprintf(f, "check: FAILED in run %d\n", r->failed_run + 1);
}

static void producer(char *buf, size_t size, const char *node, const char *op)
{
	if (op[0])
		snprintf(buf, size, "node '%s' (%s)", node, op);
	else
		snprintf(buf, size, "no node (an input or an initializer)");
}

void cli_print_bisect(FILE *f, const om_bisect_report *r)
{
	if (!r->found) {
		fprintf(f, "bisect: every pass passes the check when re-run step by step (%d "
			   "steps): nothing to name\n", r->steps);
		return;
	}
	fprintf(f, "bisect: pass '%s' (round %d, step %d) is the first that changed results\n",
		r->pass, r->round, r->steps);
	const om_diff *d = &r->first;
	char after[256], before[256];
	producer(after, sizeof after, d->node, d->op);
	producer(before, sizeof before, d->ref_node, d->ref_op);
	if (d->name[0]) {
		char sh[96] = "";
		if (d->rank >= 0)
			shape(sh, sizeof sh, d);
		fprintf(f, "bisect: first differing value: '%s' %s: max abs %.3g, max rel %.3g (%s)\n",
			d->name, sh, d->max_abs, d->max_rel, state_name(d->state));
		fprintf(f, "bisect: computed by %s after the pass, by %s in the original\n", after,
			before);
	} else if (d->op[0]) {
		fprintf(f, "bisect: at %s\n", after);
	}
	if (r->error[0])
		fprintf(f, "bisect: the model after the pass failed: %s\n", r->error);
}

void cli_print_compare(FILE *f, const om_compare_report *r)
{
	fprintf(f, "compare: %d values shared by name; inputs: %s\n", r->n, r->how);
	const widths w = widths_of(r->values, r->n);
	header(f, w, r->rtol, r->atol);
	for (int i = 0; i < r->n; i++)
		row(f, w, &r->values[i], i == r->first_over ? "  <- first" : "");
	if (r->error[0])
		fprintf(f, "compare: the second model failed: %s\n", r->error);
	if (r->first_over >= 0) {
		const om_diff *d = &r->values[r->first_over];
		char a[256], b[256];
		producer(a, sizeof a, d->ref_node, d->ref_op);
		producer(b, sizeof b, d->node, d->op);
		fprintf(f, "compare: first differing value '%s': computed by %s in the first model, "
			   "by %s in the second\n", d->name, a, b);
	} else {
		fprintf(f, "compare: every shared value within tolerance\n");
	}
}
