/* test_diff_models.c — differential harness (c), issue 9: every model under ../shared/models
 * (and the models of tests/session and examples/) loaded twice, one copy simplified, both run
 * by the executor on the same inputs, outputs compared (floats within rtol 1e-4 + atol 1e-5:
 * fusions reorder arithmetic; other types bit for bit). Each model runs at its reference
 * inputs (in/NAME.npy), at twice the batch (the symbols that are some input's dim 0) and at
 * half of every other symbol, with random inputs in the ranges the reference inputs have.
 * Where the original model fails at some shape, the simplified one may do anything there.
 *
 *   test_diff_models [--seed N] [-v]      (--count and --case are accepted and unused) */
#include <dirent.h>
#include <sys/stat.h>

#include "diffutil.h"
#include "nodetest.h"

/* Cases that fail on main for reasons other tasks own; remove a line when it passes. */
static const dt_known known_failures[] = {
	{NULL, NULL},
};

static dt_opts opts;

enum { MAXIO = 16, MAXSYM = 16 };

typedef struct symtab {
	const char *name[MAXSYM]; /* dim_param, or "input:dim" for an unnamed dynamic dim */
	char own[MAXSYM][64];
	int64_t ref[MAXSYM];      /* value in the reference inputs (1 when none) */
	bool batch[MAXSYM];       /* dim 0 of some input */
	int n;
} symtab;

typedef struct ref_input {
	om_tensor t;     /* the reference tensor (dtype 0 when the file is missing) */
	double lo, hi;   /* its value range */
} ref_input;

static int sym_index(symtab *s, const om_value *v, int32_t d)
{
	char key[64];
	if (v->type.dims[d].param)
		snprintf(key, sizeof key, "%s", v->type.dims[d].param);
	else
		snprintf(key, sizeof key, "%s:%d", v->name, d);
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], key))
			return i;
	if (s->n == MAXSYM)
		return -1;
	snprintf(s->own[s->n], sizeof s->own[s->n], "%s", key);
	s->name[s->n] = s->own[s->n];
	s->ref[s->n] = 1;
	return s->n++;
}

static double elem(const om_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case OM_FLOAT: return ((const float *)t->data)[i];
	case OM_DOUBLE: return ((const double *)t->data)[i];
	case OM_INT64: return (double)((const int64_t *)t->data)[i];
	case OM_INT32: return ((const int32_t *)t->data)[i];
	case OM_BOOL: case OM_UINT8: return ((const uint8_t *)t->data)[i];
	case OM_INT8: return ((const int8_t *)t->data)[i];
	default: return 0;
	}
}

static void set_elem(om_tensor *t, int64_t i, double x)
{
	switch (t->dtype) {
	case OM_FLOAT: ((float *)t->data)[i] = (float)x; break;
	case OM_DOUBLE: ((double *)t->data)[i] = x; break;
	case OM_INT64: ((int64_t *)t->data)[i] = (int64_t)x; break;
	case OM_INT32: ((int32_t *)t->data)[i] = (int32_t)x; break;
	case OM_BOOL: ((uint8_t *)t->data)[i] = x != 0; break;
	case OM_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)x; break;
	case OM_INT8: ((int8_t *)t->data)[i] = (int8_t)x; break;
	default: break;
	}
}

/** Inputs of configuration cfg: 0 the reference ones, 1 batch symbols doubled, 2 the other
 *  symbols halved; false when cfg changes nothing (or inputs cannot be made). */
static bool make_inputs(const om_model *m, const om_session *s, const ref_input *ref,
			const symtab *st, int cfg, nt_rng *r, om_tensor *in)
{
	bool changed = cfg == 0;
	const int nin = om_session_input_count(s);
	for (int i = 0; i < nin; i++) {
		const om_value *v = om_graph_find(m->graph, om_session_input_name(s, i));
		if (!v || v->type.kind != OM_TYPE_TENSOR || v->type.rank < 0)
			return false;
		if (cfg == 0 && ref[i].t.dtype) {
			in[i] = ref[i].t;
			continue;
		}
		int64_t dims[OM_MAX_RANK];
		for (int32_t d = 0; d < v->type.rank; d++) {
			dims[d] = v->type.dims[d].value;
			if (dims[d] >= 0)
				continue;
			int k = 0;
			char key[64];
			if (v->type.dims[d].param)
				snprintf(key, sizeof key, "%s", v->type.dims[d].param);
			else
				snprintf(key, sizeof key, "%s:%d", v->name, d);
			while (k < st->n && strcmp(st->name[k], key))
				k++;
			dims[d] = k < st->n ? st->ref[k] : 1;
			if (k < st->n && cfg == 1 && st->batch[k])
				dims[d] *= 2, changed = true;
			if (k < st->n && cfg == 2 && !st->batch[k] && dims[d] >= 2) {
				/* an image side that is a multiple of 32 stays one (strided nets) */
				dims[d] = dims[d] % 32 == 0 && dims[d] > 32 ? dims[d] - 32 : dims[d] / 2;
				changed = true;
			}
		}
		om_status sts = {0};
		if (om_tensor_alloc(&in[i], v->type.elem, v->type.rank, dims, &sts))
			return false;
		const bool ints = v->type.elem != OM_FLOAT && v->type.elem != OM_DOUBLE;
		const double lo = ref[i].t.dtype ? ref[i].lo : ints ? 1 : -1,
			     hi = ref[i].t.dtype ? ref[i].hi : ints ? 2 : 1;
		for (int64_t e = 0; e < om_tensor_numel(&in[i]); e++) {
			const double u = (double)nt_rand(r, 0, 1 << 20) / (1 << 20);
			set_elem(&in[i], e, ints ? lo + (double)nt_rand(r, 0, (int64_t)(hi - lo))
						 : lo + u * (hi - lo));
		}
	}
	return changed;
}

static void free_inputs(const ref_input *ref, om_tensor *in, int n, int cfg)
{
	for (int i = 0; i < n; i++)
		if (cfg != 0 || !ref[i].t.dtype)
			om_tensor_free(&in[i]);
}

/** Checks one model file; NULL when it agrees, else the finding in msg. */
static const char *check_model(const char *path, const char *indir, int *ran, char *msg,
			       size_t size)
{
	om_model *orig = NULL, *simp = NULL;
	om_session *so = NULL, *ss = NULL;
	om_status st = {0};
	const char *finding = NULL;
	ref_input ref[MAXIO] = {0};
	symtab syms = {0};
	om_kind rc;
	if (om_model_load(path, &orig, &st) || om_model_load(path, &simp, &st)) {
		snprintf(msg, size, "load: %s", st.msg);
		finding = msg;
		goto done;
	}
	if ((rc = om_session_create(orig, NULL, &so, &st)))
		goto done; /* the original does not plan: nothing to compare */
	if ((rc = om_simplify(simp, &(om_simplify_options){.verify = 1}, &st))) {
		snprintf(msg, size, "simplify: %s: %s", om_kind_name(rc), st.msg);
		finding = msg;
		goto done;
	}
	if ((rc = om_session_create(simp, NULL, &ss, &st))) {
		snprintf(msg, size, "simplified model not plannable: %s: %s", om_kind_name(rc),
			 st.msg);
		finding = msg;
		goto done;
	}
	const int nin = om_session_input_count(so), nout = om_session_output_count(so);
	if (nin > MAXIO || nout > MAXIO || om_session_input_count(ss) != nin ||
	    om_session_output_count(ss) != nout) {
		snprintf(msg, size, "inputs/outputs %d/%d vs %d/%d", nin, nout,
			 om_session_input_count(ss), om_session_output_count(ss));
		finding = nin > MAXIO || nout > MAXIO ? NULL : msg;
		goto done;
	}
	for (int i = 0; i < nin; i++) { /* symbols, reference inputs and their ranges */
		const om_value *v = om_graph_find(orig->graph, om_session_input_name(so, i));
		char file[600];
		snprintf(file, sizeof file, "%s/%s.npy", indir ? indir : ".", v->name);
		if (indir && om_tensor_read_file(file, &ref[i].t, &st))
			memset(&ref[i].t, 0, sizeof ref[i].t); /* no reference: random in [-1, 1] */
		else if (indir) {
			const int64_t n = om_tensor_numel(&ref[i].t);
			ref[i].lo = n ? elem(&ref[i].t, 0) : 0;
			ref[i].hi = ref[i].lo;
			for (int64_t e = 1; e < n; e++) {
				const double x = elem(&ref[i].t, e);
				ref[i].lo = x < ref[i].lo ? x : ref[i].lo;
				ref[i].hi = x > ref[i].hi ? x : ref[i].hi;
			}
		}
		for (int32_t d = 0; v->type.kind == OM_TYPE_TENSOR && d < v->type.rank; d++) {
			if (v->type.dims[d].value >= 0)
				continue;
			const int k = sym_index(&syms, v, d);
			if (k < 0)
				continue;
			if (ref[i].t.dtype && ref[i].t.rank == v->type.rank)
				syms.ref[k] = ref[i].t.dims[d];
			syms.batch[k] |= d == 0;
		}
	}
	om_tensor in[MAXIO], oo[MAXIO], os[MAXIO];
	for (int cfg = 0; cfg < 3 && !finding; cfg++) {
		nt_rng r = {opts.seed + (uint64_t)cfg};
		memset(in, 0, sizeof in);
		if (!make_inputs(orig, so, ref, &syms, cfg, &r, in)) {
			free_inputs(ref, in, nin, cfg);
			continue;
		}
		static const char *const names[] = {"reference inputs", "batch doubled",
						    "other symbols halved"};
		memset(oo, 0, sizeof oo);
		if (om_session_run(so, in, nin, oo, nout, &st)) {
			if (opts.verbose)
				printf("  %s: original fails (%s): skipped\n", names[cfg], st.msg);
			free_inputs(ref, in, nin, cfg);
			continue;
		}
		(*ran)++;
		memset(os, 0, sizeof os);
		if ((rc = om_session_run(ss, in, nin, os, nout, &st))) {
			snprintf(msg, size, "%s: original runs, simplified fails: %s: %s", names[cfg],
				 om_kind_name(rc), st.msg);
			finding = msg;
		}
		char what[256];
		for (int o = 0; o < nout && !finding; o++)
			if (dt_diff_close(&os[o], &oo[o], 1e-4, 1e-5, what, sizeof what)) {
				snprintf(msg, size, "%s: output %s: %s", names[cfg],
					 om_session_output_name(so, o), what);
				finding = msg;
			}
		if (opts.verbose && !finding)
			printf("  %s: %d outputs agree\n", names[cfg], nout);
		for (int o = 0; o < nout; o++) {
			om_tensor_free(&oo[o]);
			if (!rc)
				om_tensor_free(&os[o]);
		}
		free_inputs(ref, in, nin, cfg);
	}
done:
	for (int i = 0; i < MAXIO; i++)
		om_tensor_free(&ref[i].t);
	om_session_free(so);
	om_session_free(ss);
	if (orig)
		om_model_free(orig);
	if (simp)
		om_model_free(simp);
	return finding;
}

static void one(dt_tally *t, const char *id, const char *path, const char *indir)
{
	char msg[1024];
	int ran = 0;
	if (opts.only && strcmp(opts.only, id))
		return;
	const char *f = check_model(path, indir, &ran, msg, sizeof msg);
	t->runs += ran;
	if (!f && !ran && dt_known_find(known_failures, id) < 0) {
		t->cases++, t->invalid++;
		printf("%s: the original runs at none of the shapes\n", id);
		return;
	}
	dt_record(t, known_failures, id, f);
	if (!f)
		printf("%s: simplified agrees at %d shapes\n", id, ran);
}

static void models_simplify_faithfully(void **state)
{
	(void)state;
	dt_tally t = {0};
	static const char *const own[] = {"tests/session/if_untaken.onnx",
					  "tests/session/reshape_by_shape.onnx",
					  "tests/session/reshape_by_value.onnx",
					  "examples/tiny_shuffle.onnx"};
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
		one(&t, own[i], tu_source_path(own[i]), NULL);
	const char *shared = tu_shared_dir();
	char dir[512];
	DIR *d = NULL;
	if (shared) {
		snprintf(dir, sizeof dir, "%s/models", shared);
		d = opendir(dir);
	}
	if (d) {
		const char *names[64];
		int n = 0;
		for (struct dirent *e; (e = readdir(d)) && n < 64;)
			if (e->d_name[0] != '.')
				names[n++] = strdup(e->d_name);
		closedir(d);
		for (int i = 0; i < n; i++) /* readdir's order is the file system's: sort */
			for (int j = i + 1; j < n; j++)
				if (strcmp(names[j], names[i]) < 0) {
					const char *x = names[i];
					names[i] = names[j], names[j] = x;
				}
		for (int i = 0; i < n; i++) {
			char path[1024], indir[1024];
			struct stat sb;
			snprintf(path, sizeof path, "%s/%s/model.onnx", dir, names[i]);
			snprintf(indir, sizeof indir, "%s/%s/in", dir, names[i]);
			if (!stat(path, &sb))
				one(&t, names[i], path, indir);
			free((void *)names[i]);
		}
	}
	dt_end(&t, known_failures, "models");
	if (!d)
		printf("../shared/models is absent: only the models of tests/ and examples/ ran\n");
}

int main(int argc, char **argv)
{
	if (dt_parse(argc, argv, &opts, 0x5eed000c, 1, 1))
		return 2;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(models_simplify_faithfully),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
