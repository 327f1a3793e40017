/*
 * conformance.c — runs ONNX backend-test case folders (model.onnx + test_data_set_N/input_N.pb,
 * output_N.pb) and compares with the backend tolerances (rtol 1e-3, atol 1e-7 for floating
 * types, exact otherwise, NaN equals NaN).
 *
 *   conformance [-v] [--xfail FILE] [--filter TEXT] [--opset N] DIR...
 *
 * --opset N converts each case's model to default-domain opset N (om_opset_convert) before it
 * runs: a conversion omopt refuses (OM_ERR_UNSUPPORTED) makes the case unsupported.
 *
 * Case folders are found by recursion under each DIR; a case is named by its path below DIR.
 * Each case runs in a child process, so a crash or a hang fails that case only. A case whose
 * model uses an op without a row, or whose kernel says OM_ERR_UNSUPPORTED, is unsupported.
 * Prints `conformance: N passed, M failed, K unsupported`; exits 1 when a case fails that the
 * xfail file (one name per line, `# reason` comments) does not list, 77 when no DIR exists.
 * An xfail name may be qualified by the last component of DIR (`node/test_x` lists test_x
 * only when DIR ends in `node`).
 *
 * ONNX 1.12's test data stores bfloat16 tensors with the uint16 element type (1.13 on write
 * them as bfloat16). Both are 2-byte elements holding the same bits, so a uint16 tensor file is
 * read as bfloat16 when the model declares that graph input or output bfloat16; every other
 * element type mismatch is still a failure.
 *
 * Cases of random ops (the node tests hold numpy's draws, which no other generator reproduces)
 * are checked by property when their values differ: a model with a node of a type listed in
 * random_ops[] (Dropout only with a training_mode input) passes "by property" when every
 * output has the expected type and shape and, for Bernoulli (also expanded: RandomUniformLike
 * and Less), every element is 0 or 1, 0 where the probability is 0 and 1 where it is 1; for
 * Dropout, output 0 is 0 or x / (1 - ratio) element-wise, and x * mask / (1 - ratio) with its
 * mask output. Such cases count as passed and are named "pass (random, by property)".
 *
 * Graph inputs and outputs of sequence or optional type are read as SequenceProto /
 * OptionalProto files into the executor's sequence values (ir/value.h), fed as such, and
 * compared item by item (the empty optional equals only the empty optional).
 */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "half.h"
#include "ir.h"
#include "onnx_io.h"
#include "value.h"

#define CASE_TIMEOUT_S 120

enum { PASS = 0, FAIL = 1, UNSUPPORTED = 2, PASS_RANDOM = 3 };
static const char *const verdict_names[] = {"pass", "FAIL", "unsupported",
					    "pass (random, by property)"};

typedef struct strlist {
	char **s;
	int n, cap;
} strlist;

static int push(strlist *l, const char *s)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 64;
		char **ns = realloc(l->s, sizeof *ns * (size_t)cap);
		if (!ns)
			return -1;
		l->s = ns;
		l->cap = cap;
	}
	if (!(l->s[l->n] = strdup(s)))
		return -1;
	l->n++;
	return 0;
}

static void strlist_free(strlist *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->s[i]);
	free(l->s);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_dir(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int is_file(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Every folder under dir holding a model.onnx, as paths relative to root. */
static void find_cases(const char *dir, size_t rootlen, strlist *out)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	if (is_file(path)) {
		push(out, dir[rootlen] == '/' ? dir + rootlen + 1 : dir + rootlen);
		return;
	}
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (is_dir(path))
			find_cases(path, rootlen, out);
	}
	closedir(d);
}

/* ---- comparing --------------------------------------------------------------------------- */

static int is_float_type(int32_t t)
{
	return t == OM_FLOAT || t == OM_DOUBLE || t == OM_FLOAT16 || t == OM_BFLOAT16 ||
	       t == OM_COMPLEX64 || t == OM_COMPLEX128;
}

static double elem_double(const om_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case OM_FLOAT: case OM_COMPLEX64: return ((const float *)t->data)[i];
	case OM_DOUBLE: case OM_COMPLEX128: return ((const double *)t->data)[i];
	case OM_FLOAT16: return om_half_to_float(((const uint16_t *)t->data)[i]);
	case OM_BFLOAT16: return om_bits_f32((uint32_t)((const uint16_t *)t->data)[i] << 16);
	}
	return 0;
}

static int close_enough(double got, double want)
{
	if (isnan(want) || isnan(got))
		return isnan(want) && isnan(got);
	if (isinf(want) || isinf(got))
		return got == want;
	return fabs(got - want) <= 1e-7 + 1e-3 * fabs(want);
}

static int compare_tensor(const om_tensor *got, const om_tensor *want, char *msg, size_t size);

/* 0 when equal; else writes why into msg. Sequences and optionals compare item by item. */
static int compare(const om_tensor *got, const om_tensor *want, char *msg, size_t size)
{
	if (!om_is_box(got) && !om_is_box(want))
		return compare_tensor(got, want, msg, size);
	if (got->dtype != want->dtype) {
		snprintf(msg, size, "a %s, expected a %s",
			 om_is_box(got) ? (got->dtype == OM_SEQ_DTYPE ? "sequence" : "optional")
					: "tensor",
			 om_is_box(want) ? (want->dtype == OM_SEQ_DTYPE ? "sequence" : "optional")
					 : "tensor");
		return 1;
	}
	const om_seq *a = om_box(got), *b = om_box(want);
	if (a->n != b->n) {
		snprintf(msg, size, "%lld items, expected %lld", (long long)a->n, (long long)b->n);
		return 1;
	}
	for (int64_t i = 0; i < a->n; i++) {
		char why[400];
		if (compare(&a->items[i], &b->items[i], why, sizeof why)) {
			snprintf(msg, size, "item %lld: %s", (long long)i, why);
			return 1;
		}
	}
	return 0;
}

static int compare_tensor(const om_tensor *got, const om_tensor *want, char *msg, size_t size)
{
	if (got->dtype != want->dtype) {
		snprintf(msg, size, "element type %s, expected %s", om_dtype_name(got->dtype),
			 om_dtype_name(want->dtype));
		return 1;
	}
	int same = got->rank == want->rank;
	for (int32_t i = 0; same && i < got->rank; i++)
		same = got->dims[i] == want->dims[i];
	if (!same) {
		snprintf(msg, size, "shape differs (rank %d vs %d)", got->rank, want->rank);
		return 1;
	}
	int64_t n = om_tensor_numel(want);
	if (is_float_type(want->dtype)) {
		int64_t m = want->dtype == OM_COMPLEX64 || want->dtype == OM_COMPLEX128 ? 2 * n : n;
		for (int64_t i = 0; i < m; i++) {
			double g = elem_double(got, i), w = elem_double(want, i);
			if (!close_enough(g, w)) {
				snprintf(msg, size, "element %lld is %.9g, expected %.9g",
					 (long long)i, g, w);
				return 1;
			}
		}
		return 0;
	}
	if (want->dtype == OM_STRING) {
		const om_str *a = got->data, *b = want->data;
		for (int64_t i = 0; i < n; i++)
			if (a[i].len != b[i].len ||
			    (a[i].len && memcmp(a[i].ptr, b[i].ptr, (size_t)a[i].len))) {
				snprintf(msg, size, "string %lld differs", (long long)i);
				return 1;
			}
		return 0;
	}
	size_t bytes = om_tensor_bytes_for(want->dtype, want->rank, want->dims);
	if (got->nbytes < bytes || want->nbytes < bytes) {
		snprintf(msg, size, "data sizes differ");
		return 1;
	}
	if (want->dtype == OM_BOOL) {
		const unsigned char *a = got->data, *b = want->data;
		for (size_t i = 0; i < bytes; i++)
			if (!a[i] != !b[i]) {
				snprintf(msg, size, "bool %zu differs", i);
				return 1;
			}
		return 0;
	}
	if (bytes && memcmp(got->data, want->data, bytes)) {
		size_t es = om_dtype_size(want->dtype), i = 0;
		while (i < bytes && ((const unsigned char *)got->data)[i] ==
					    ((const unsigned char *)want->data)[i])
			i++;
		snprintf(msg, size, "element %zu differs", es ? i / es : i);
		return 1;
	}
	return 0;
}

/* ---- random ops, by property ------------------------------------------------------------ */

enum { RANDOM_NONE, RANDOM_SHAPE, RANDOM_BERNOULLI, RANDOM_DROPOUT };

/* op types whose outputs are draws */
static const char *const random_ops[] = {"Bernoulli", "RandomUniformLike", "RandomNormalLike",
					 "RandomUniform", "RandomNormal", "Multinomial", "Dropout"};

static int has_op(const om_graph *g, const char *op)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i]->op, op))
			return 1;
	return 0;
}

/* which property the main graph's outputs are checked by (RANDOM_NONE: by value only) */
static int random_kind(const om_model *m)
{
	const om_graph *g = m->graph;
	int any = 0;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		for (size_t k = 0; k < sizeof random_ops / sizeof *random_ops; k++)
			if (!strcmp(n->op, random_ops[k]) &&
			    (strcmp(n->op, "Dropout") || (n->nin > 2 && n->in[2])))
				any = 1;
	}
	if (!any)
		return RANDOM_NONE;
	if (has_op(g, "Dropout"))
		return RANDOM_DROPOUT;
	if (has_op(g, "Bernoulli") || (has_op(g, "RandomUniformLike") && has_op(g, "Less")))
		return RANDOM_BERNOULLI;
	return RANDOM_SHAPE;
}

/* element i of a numeric tensor as a double */
static double num_at(const om_tensor *t, int64_t i)
{
	const void *p = t->data;
	switch (t->dtype) {
	case OM_BOOL: case OM_UINT8: return ((const uint8_t *)p)[i];
	case OM_INT8: return ((const int8_t *)p)[i];
	case OM_INT16: return ((const int16_t *)p)[i];
	case OM_UINT16: return ((const uint16_t *)p)[i];
	case OM_INT32: return ((const int32_t *)p)[i];
	case OM_UINT32: return ((const uint32_t *)p)[i];
	case OM_INT64: return (double)((const int64_t *)p)[i];
	case OM_UINT64: return (double)((const uint64_t *)p)[i];
	default: return elem_double(t, i);
	}
}

static int numeric(const om_tensor *t)
{
	return !om_is_box(t) && t->dtype != OM_STRING && t->dtype != OM_COMPLEX64 &&
	       t->dtype != OM_COMPLEX128 && om_dtype_size(t->dtype) > 0;
}

static int same_shape(const om_tensor *a, const om_tensor *b)
{
	if (a->rank != b->rank)
		return 0;
	for (int32_t i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return 0;
	return 1;
}

/* the first node of type op in m's main graph, or NULL */
static const om_node *first_node(const om_model *m, const char *op)
{
	for (int32_t i = 0; i < m->graph->nnodes; i++)
		if (!strcmp(m->graph->nodes[i]->op, op))
			return m->graph->nodes[i];
	return NULL;
}

/* the tensor a run gave value v: the fed input of its name, or its initializer; NULL when v is
 * absent or computed */
static const om_tensor *fed(const om_value *v, om_session *s, const om_tensor *in, int nin)
{
	if (!v)
		return NULL;
	for (int i = 0; i < nin; i++)
		if (!strcmp(om_session_input_name(s, i), v->name))
			return &in[i];
	return v->init;
}

/* the graph output of v's name, or NULL */
static const om_tensor *output_of(const om_value *v, om_session *s, const om_tensor *out,
				  int nout)
{
	for (int i = 0; v && i < nout; i++)
		if (!strcmp(om_session_output_name(s, i), v->name))
			return &out[i];
	return NULL;
}

/* 0 when the outputs have the property of the case's random kind; else writes why into msg */
static int check_property(int kind, const om_model *m, om_session *s, const om_tensor *in,
			  int nin, const om_tensor *out, const om_tensor *want, int nout, char *msg,
			  size_t size)
{
	for (int i = 0; i < nout; i++) {
		if (om_is_box(&out[i]) || om_is_box(&want[i]) || out[i].dtype != want[i].dtype ||
		    !same_shape(&out[i], &want[i])) {
			snprintf(msg, size, "output %d: type or shape differs from the expected", i);
			return 1;
		}
	}
	if (kind == RANDOM_BERNOULLI) {
		/* p: the input of Bernoulli or of its expansion's RandomUniformLike; y: the node's
		 * output when it is a graph output, else graph output 0 */
		const om_node *n = first_node(m, "Bernoulli");
		if (!n)
			n = first_node(m, "RandomUniformLike");
		const om_tensor *p = n && n->nin > 0 ? fed(n->in[0], s, in, nin) : NULL;
		const om_tensor *y = n && n->nout > 0 ? output_of(n->out[0], s, out, nout) : NULL;
		if (!y && nout > 0)
			y = &out[0];
		if (!p || !y || !numeric(p) || !numeric(y) || !same_shape(p, y)) {
			snprintf(msg, size, "not a Bernoulli draw of its input's shape");
			return 1;
		}
		for (int64_t e = 0; e < om_tensor_numel(y); e++) {
			const double v = num_at(y, e), pe = num_at(p, e);
			if ((v != 0 && v != 1) || (pe <= 0 && v != 0) || (pe >= 1 && v != 1)) {
				snprintf(msg, size, "element %lld is %g with p = %g", (long long)e,
					 v, pe);
				return 1;
			}
		}
	} else if (kind == RANDOM_DROPOUT) {
		const om_node *n = first_node(m, "Dropout");
		const om_tensor *x = n && n->nin > 0 ? fed(n->in[0], s, in, nin) : NULL;
		const om_tensor *r = n && n->nin > 1 ? fed(n->in[1], s, in, nin) : NULL;
		const om_tensor *t = n && n->nin > 2 ? fed(n->in[2], s, in, nin) : NULL;
		const om_tensor *y = n ? output_of(n->out[0], s, out, nout) : NULL;
		const om_tensor *mask = n && n->nout > 1 ? output_of(n->out[1], s, out, nout) : NULL;
		if (!x || !y || !numeric(x) || !same_shape(x, y) || (r && !numeric(r)) ||
		    (t && !numeric(t)) || (mask && !same_shape(mask, y))) {
			snprintf(msg, size, "not a dropout of a fed input");
			return 1;
		}
		const double ratio = r && om_tensor_numel(r) == 1 ? num_at(r, 0) : 0.5;
		const int training = t && om_tensor_numel(t) == 1 && num_at(t, 0) != 0;
		const double scale = training ? 1.0 / (1.0 - ratio) : 1.0;
		for (int64_t e = 0; e < om_tensor_numel(y); e++) {
			const double v = num_at(y, e), xe = num_at(x, e);
			if (!close_enough(v, xe * scale) && v != 0) {
				snprintf(msg, size, "element %lld is %.9g, neither 0 nor %.9g",
					 (long long)e, v, xe * scale);
				return 1;
			}
			if (mask && !close_enough(v, xe * (num_at(mask, e) != 0) * scale)) {
				snprintf(msg, size, "element %lld is %.9g, x * mask * scale is %.9g",
					 (long long)e, v, xe * (num_at(mask, e) != 0) * scale);
				return 1;
			}
		}
	}
	return 0;
}

/* ---- one case ---------------------------------------------------------------------------- */

static int verdict_of(om_kind k)
{
	return k == OM_ERR_UNSUPPORTED ? UNSUPPORTED : FAIL;
}

static int report(int verbose, const char *name, const char *what, const om_status *st)
{
	if (verbose) {
		char buf[1024];
		om_status_format(st, buf, sizeof buf);
		printf("  %s: %s: %s\n", name, what, buf);
	}
	return verdict_of(st->kind);
}

static void free_tensors(om_tensor *t, int n)
{
	for (int i = 0; t && i < n; i++)
		om_value_free(&t[i]);
	free(t);
}

/* The declared type of graph value `name`, or NULL. */
static const om_type *declared_type(const om_model *m, const char *name)
{
	const om_value *v = name ? om_graph_find(m->graph, name) : NULL;
	return v ? &v->type : NULL;
}

/* The element type the model declares for graph value `name`, OM_UNDEFINED when unknown. */
static int32_t declared_elem(const om_model *m, const char *name)
{
	const om_value *v = name ? om_graph_find(m->graph, name) : NULL;
	return v && v->type.kind == OM_TYPE_TENSOR ? v->type.elem : OM_UNDEFINED;
}

/* A uint16 file for a value declared bfloat16 is ONNX 1.12's spelling of bfloat16: same bits. */
static void reinterpret_bfloat16(om_tensor *t, int32_t declared)
{
	if (t->dtype == OM_UINT16 && declared == OM_BFLOAT16)
		t->dtype = OM_BFLOAT16;
}

static int run_data_set(const char *name, const char *set, const om_model *m, om_session *s,
			int random, int verbose)
{
	int nin = om_session_input_count(s), nout = om_session_output_count(s);
	om_tensor *in = calloc((size_t)nin + 1, sizeof *in), *out = calloc((size_t)nout + 1,
								       sizeof *out);
	om_tensor *want = calloc((size_t)nout + 1, sizeof *want);
	om_status st = {0};
	char path[4096], msg[512];
	int verdict = PASS;
	if (!in || !out || !want) {
		verdict = FAIL;
		goto done;
	}
	for (int i = 0; i < nin; i++) {
		snprintf(path, sizeof path, "%s/input_%d.pb", set, i);
		if (om_value_read_file(path, declared_type(m, om_session_input_name(s, i)), &in[i],
				       &st)) {
			verdict = report(verbose, name, "reading an input", &st);
			goto done;
		}
		reinterpret_bfloat16(&in[i], declared_elem(m, om_session_input_name(s, i)));
	}
	snprintf(path, sizeof path, "%s/input_%d.pb", set, nin);
	if (is_file(path)) {
		if (verbose)
			printf("  %s: more input files than graph inputs (%d)\n", name, nin);
		verdict = FAIL;
		goto done;
	}
	for (int i = 0; i < nout; i++) {
		snprintf(path, sizeof path, "%s/output_%d.pb", set, i);
		if (om_value_read_file(path, declared_type(m, om_session_output_name(s, i)),
				       &want[i], &st)) {
			verdict = report(verbose, name, "reading an output", &st);
			goto done;
		}
		reinterpret_bfloat16(&want[i], declared_elem(m, om_session_output_name(s, i)));
	}
	if (om_session_run_values(s, in, nin, out, nout, &st)) {
		verdict = report(verbose, name, "run", &st);
		goto done;
	}
	for (int i = 0; i < nout; i++)
		if (compare(&out[i], &want[i], msg, sizeof msg)) {
			if (verbose && !random)
				printf("  %s: output %d (%s): %s\n", name, i,
				       om_session_output_name(s, i), msg);
			verdict = FAIL;
			break;
		}
	if (verdict == FAIL && random) {
		verdict = PASS_RANDOM;
		if (check_property(random, m, s, in, nin, out, want, nout, msg, sizeof msg)) {
			if (verbose)
				printf("  %s: by property: %s\n", name, msg);
			verdict = FAIL;
		}
	}
done:
	free_tensors(in, nin);
	free_tensors(out, nout);
	free_tensors(want, nout);
	return verdict;
}

static int64_t convert_to; /* --opset: 0 none (set once by main before any case) */

static int run_case(const char *dir, const char *name, int verbose)
{
	char path[4096];
	om_status st = {0};
	om_model *m = NULL;
	om_session *s = NULL;
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	if (om_model_load(path, &m, &st))
		return report(verbose, name, "load", &st);
	int verdict = PASS;
	if (convert_to && om_opset_convert(m, convert_to, &st)) {
		verdict = report(verbose, name, "convert", &st);
		goto done;
	}
	if (om_session_create(m, NULL, &s, &st)) {
		verdict = report(verbose, name, "create", &st);
		goto done;
	}
	strlist sets = {0};
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "test_data_set_", 14)) {
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			push(&sets, path);
		}
	if (d)
		closedir(d);
	if (sets.n == 0 && verbose)
		printf("  %s: no test_data_set_* folder\n", name);
	qsort(sets.s, (size_t)sets.n, sizeof *sets.s, cmp_str);
	const int random = random_kind(m);
	for (int i = 0; i < sets.n && (verdict == PASS || verdict == PASS_RANDOM); i++) {
		const int v = run_data_set(name, sets.s[i], m, s, random, verbose);
		verdict = v == PASS && verdict == PASS_RANDOM ? PASS_RANDOM : v;
	}
	if (sets.n == 0)
		verdict = FAIL;
	strlist_free(&sets);
done:
	om_session_free(s);
	om_model_free(m);
	return verdict;
}

/* Runs the case in a child: a crash or a hang is that case's failure. */
static int run_isolated(const char *dir, const char *name, int verbose)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return run_case(dir, name, verbose);
	if (pid == 0) {
		alarm(CASE_TIMEOUT_S);
		int v = run_case(dir, name, verbose);
		fflush(stdout);
		exit(v); /* exit, not _exit: LeakSanitizer checks the case */
	}
	int status;
	if (waitpid(pid, &status, 0) < 0)
		return FAIL;
	if (WIFEXITED(status) && WEXITSTATUS(status) <= PASS_RANDOM)
		return WEXITSTATUS(status);
	if (verbose)
		printf("  %s: crashed (%s)\n", name,
		       WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "bad exit");
	return FAIL;
}

/* ---- main -------------------------------------------------------------------------------- */

static void read_xfail(const char *path, strlist *out)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "conformance: cannot read %s\n", path);
		return;
	}
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		size_t n = strcspn(p, " \t#\r\n");
		p[n] = 0;
		if (n)
			push(out, p);
	}
	fclose(f);
	qsort(out->s, (size_t)out->n, sizeof *out->s, cmp_str);
}

static int listed(const strlist *l, const char *name)
{
	return l->n && bsearch(&name, l->s, (size_t)l->n, sizeof *l->s, cmp_str) != NULL;
}

int main(int argc, char **argv)
{
	int verbose = 0, counts[4] = {0}, unexpected = 0, xfailed = 0, found_dir = 0;
	const char *filter = NULL;
	strlist xfail = {0}, roots = {0}, xpass = {0};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else if (!strcmp(argv[i], "--xfail") && i + 1 < argc)
			read_xfail(argv[++i], &xfail);
		else if (!strcmp(argv[i], "--filter") && i + 1 < argc)
			filter = argv[++i];
		else if (!strcmp(argv[i], "--opset") && i + 1 < argc)
			convert_to = strtoll(argv[++i], NULL, 10);
		else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: conformance [-v] [--xfail FILE] [--filter TEXT] "
					"[--opset N] DIR...\n");
			return 2;
		} else
			push(&roots, argv[i]);
	}
	for (int r = 0; r < roots.n; r++) {
		const char *root = roots.s[r];
		if (!is_dir(root)) {
			printf("conformance: %s is absent, skipped\n", root);
			continue;
		}
		found_dir = 1;
		strlist cases = {0};
		find_cases(root, strlen(root), &cases);
		qsort(cases.s, (size_t)cases.n, sizeof *cases.s, cmp_str);
		for (int i = 0; i < cases.n; i++) {
			const char *name = cases.s[i][0] ? cases.s[i] : root;
			if (filter && !strstr(name, filter))
				continue;
			char dir[4096];
			snprintf(dir, sizeof dir, "%s%s%s", root, cases.s[i][0] ? "/" : "",
				 cases.s[i]);
			int v = run_isolated(dir, name, verbose);
			counts[v]++;
			const int passed = v == PASS || v == PASS_RANDOM;
			const char *base = strrchr(root, '/') ? strrchr(root, '/') + 1 : root;
			char qualified[4096];
			snprintf(qualified, sizeof qualified, "%s/%s", base, name);
			int xf = listed(&xfail, name) || listed(&xfail, qualified);
			if (v == FAIL && xf)
				xfailed++;
			else if (v == FAIL)
				unexpected++;
			else if (passed && xf)
				push(&xpass, name);
			if (verbose || (v == FAIL && !xf))
				printf("%s %s%s\n", verdict_names[v], name,
				       v == FAIL && xf ? " (xfail)" : "");
		}
		strlist_free(&cases);
	}
	for (int i = 0; i < xpass.n; i++)
		printf("conformance: %s passes now: remove it from the xfail list\n", xpass.s[i]);
	printf("conformance: %d passed, %d failed, %d unsupported\n",
	       counts[PASS] + counts[PASS_RANDOM], counts[FAIL], counts[UNSUPPORTED]);
	if (counts[PASS_RANDOM])
		printf("conformance: %d of the passed are random cases checked by property\n",
		       counts[PASS_RANDOM]);
	if (xfailed || unexpected)
		printf("conformance: %d failures listed as expected, %d unexpected\n", xfailed,
		       unexpected);
	strlist_free(&xfail);
	strlist_free(&roots);
	strlist_free(&xpass);
	if (!found_dir) {
		printf("conformance: none of the case folders exists (skipped)\n");
		return 77;
	}
	return unexpected ? 1 : 0;
}
