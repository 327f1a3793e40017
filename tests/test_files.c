/* test_files.c — how omopt touches files: a save never replaces a file the loaded model reads
 * (its external data, or the model file with weights), leaves nothing partial behind, outputs
 * replace symlinks instead of writing through them, and FIFOs, devices and folders given as
 * models, external data or tensor files are refused at once (never waited on). */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	return tu_tmpdir_make(tmpdir, sizeof tmpdir, "omopt_files_");
}

static int teardown(void **state)
{
	(void)state;
	return tu_tmpdir_remove(tmpdir);
}

static const char *tmp(const char *name)
{
	return tu_join(tmpdir, name);
}

/* A fresh, empty folder under tmpdir; later names are relative to it through tmp(). */
static void subdir(const char *name)
{
	assert_int_equal(mkdir(tmp(name), 0755), 0);
}

static int omopt(const char *args, char *err, size_t nerr)
{
	char out[8192];
	return tu_run_omopt(tmpdir, args, out, sizeof out, err, nerr);
}

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t cap = 1 << 16;
	unsigned char *b = malloc(cap);
	*n = fread(b, 1, cap, f);
	assert_true(*n < cap);
	fclose(f);
	return b;
}

/* The bytes of a (small) file, kept to check later that nobody changed them. */
typedef struct kept {
	char path[512];
	unsigned char bytes[16384];
	size_t n;
} kept;

static void keep(kept *k, const char *path)
{
	snprintf(k->path, sizeof k->path, "%s", path);
	unsigned char *b = slurp(path, &k->n);
	assert_true(k->n <= sizeof k->bytes);
	memcpy(k->bytes, b, k->n);
	free(b);
}

/* path is still a regular file holding the kept bytes */
static void unchanged(const kept *k)
{
	struct stat sb;
	assert_int_equal(lstat(k->path, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	size_t n;
	unsigned char *b = slurp(k->path, &n);
	assert_int_equal(n, k->n);
	assert_memory_equal(b, k->bytes, n);
	free(b);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The names in folder dir (under tmpdir), "." entries and the command's captured output
 * excepted, sorted and joined by spaces: what a command left there. */
static const char *listing(const char *dir)
{
	static char buf[2048];
	char names[32][256];
	int n = 0;
	DIR *d = opendir(tmp(dir));
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strncmp(e->d_name, ".omopt_", 7))
			continue;
		assert_true(n < 32);
		snprintf(names[n++], sizeof names[0], "%s", e->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof names[0], by_name);
	buf[0] = 0;
	for (int i = 0; i < n; i++)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " " : "",
			 names[i]);
	return buf;
}

/* y = Identity(x + w), w a float[1000] constant: simplify drops the Identity. Saved to path
 * with w in the external file `ext` beside it (NULL: inline). */
static void write_model(const char *path, const char *ext)
{
	om_model *m = om_model_new();
	assert_non_null(m);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", 13};
	m->nopsets = 1;
	m->ir_version = 8;
	om_graph *g = m->graph = om_graph_new(m, NULL);
	int64_t nw = 1000;
	om_value *x = om_graph_value(g, "x"), *w = om_graph_value(g, "w");
	om_value *t = om_graph_value(g, "t"), *y = om_graph_value(g, "y");
	w->init = om_model_tensor(m, OM_FLOAT, 1, &nw);
	for (int64_t i = 0; i < nw; i++)
		((float *)w->init->data)[i] = (float)i;
	w->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(m, &x->type, w->init);
	om_type_from_tensor(m, &w->type, w->init);
	om_type_from_tensor(m, &y->type, w->init);
	x->flags |= OM_VALUE_GRAPH_INPUT;
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	tu_push_value(g, &g->inits, &g->ninits, w);
	om_node *add = om_graph_add_node(g, "Add", "", "add", 2, 1);
	add->in[0] = x, add->in[1] = w;
	om_node_set_output(add, 0, t);
	om_node *id = om_graph_add_node(g, "Identity", "", "id", 1, 1);
	id->in[0] = t;
	om_node_set_output(id, 0, y);
	om_save_options o = {.external_data = ext != NULL, .external_name = ext};
	om_status st = {0};
	assert_int_equal(om_model_save(m, path, &o, &st), OM_OK);
	HASH_CLEAR(hh, g->values); /* a model not made by the loader */
	om_model_free(m);
}

/* The model at path loads and its w holds 0, 1, 2, ... */
static void loads_with_weights(const char *path)
{
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(path, &m, &st), OM_OK);
	const om_value *w = om_graph_find(m->graph, "w");
	assert_non_null(w);
	assert_non_null(w->init);
	assert_int_equal(w->init->nbytes, 4000);
	for (int i = 0; i < 1000; i++)
		assert_true(((const float *)w->init->data)[i] == (float)i);
	om_model_free(m);
}

/* `simplify a.onnx b.onnx --external-data --external-name b.onnx.data` with a.onnx's weights
 * in b.onnx.data: writing b.onnx.data would break a.onnx. Refused before anything is
 * written. (By default the weights go to b.onnx.<digest>.data: no clash.) */
static void save_never_replaces_its_weights(void **state)
{
	(void)state;
	char err[8192];
	subdir("w");
	write_model(tmp("w/a.onnx"), "b.onnx.data");
	kept a, d;
	keep(&a, tmp("w/a.onnx"));
	keep(&d, tmp("w/b.onnx.data"));
	assert_int_equal(omopt("simplify w/a.onnx w/b.onnx --external-data --external-name "
			       "b.onnx.data", err, sizeof err), 1);
	assert_non_null(strstr(err, "omopt: Io: "));
	assert_non_null(strstr(err, "b.onnx.data' holds external data"));
	/* the output model itself onto the weights */
	assert_int_equal(omopt("simplify w/a.onnx w/b.onnx.data", err, sizeof err), 1);
	assert_non_null(strstr(err, "b.onnx.data' holds external data"));
	assert_string_equal(listing("w"), "a.onnx b.onnx.data");
	unchanged(&a), unchanged(&d);
	loads_with_weights(tmp("w/a.onnx"));
	/* the default name is the weights' own: beside, not onto, b.onnx.data */
	assert_int_equal(omopt("simplify w/a.onnx w/b.onnx --external-data", err, sizeof err), 0);
	assert_string_equal(listing("w"), "a.onnx b.onnx b.onnx.5e9b165867ee2b92.data b.onnx.data");
	unchanged(&a), unchanged(&d);
	loads_with_weights(tmp("w/b.onnx"));
	assert_int_equal(unlink(tmp("w/b.onnx")), 0);
	assert_int_equal(unlink(tmp("w/b.onnx.5e9b165867ee2b92.data")), 0);

	/* the same through another name: a hard link, a symlink used as the location */
	assert_int_equal(link(tmp("w/b.onnx.data"), tmp("w/c.onnx.data")), 0);
	assert_int_equal(omopt("simplify w/a.onnx w/c.onnx --external-data --external-name "
			       "c.onnx.data", err, sizeof err), 1);
	subdir("s");
	write_model(tmp("s/real.onnx"), "real.bin");
	assert_int_equal(rename(tmp("s/real.bin"), tmp("s/w.bin")), 0);
	assert_int_equal(symlink("w.bin", tmp("s/real.bin")), 0);
	kept w;
	keep(&w, tmp("s/w.bin"));
	assert_int_equal(omopt("simplify s/real.onnx s/real.bin", err, sizeof err), 1);
	struct stat sb;
	assert_int_equal(lstat(tmp("s/real.bin"), &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	/* a symlink that is not the location is only a name: replaced, its target untouched */
	assert_int_equal(symlink("w.bin", tmp("s/other.onnx")), 0);
	assert_int_equal(omopt("simplify s/real.onnx s/other.onnx", err, sizeof err), 0);
	assert_int_equal(lstat(tmp("s/other.onnx"), &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	unchanged(&w);
	loads_with_weights(tmp("s/real.onnx"));
	loads_with_weights(tmp("s/other.onnx"));

	/* the library says the same: saving the loaded model with its weights onto real.bin */
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(tmp("s/real.onnx"), &m, &st), OM_OK);
	om_save_options o = {.external_data = 1, .external_name = "real.bin"};
	assert_int_equal(om_model_save(m, tmp("s/new.onnx"), &o, &st), OM_ERR_IO);
	assert_non_null(strstr(st.msg, "real.bin' holds external data"));
	om_model_free(m);
	assert_string_equal(listing("s"), "other.onnx real.bin real.onnx w.bin");
}

/* In place: the model file is replaced whole (temporary file + rename); its weights file,
 * named by its content, never replaces a file (the file the input reads has that name: the
 * next one is taken), and the one the replaced model named goes; a weights file named by the
 * caller that the input reads is refused. */
static void simplify_in_place(void **state)
{
	(void)state;
	char err[8192];
	subdir("p");
	write_model(tmp("p/inline.onnx"), NULL);
	assert_int_equal(omopt("simplify p/inline.onnx p/inline.onnx", err, sizeof err), 0);
	loads_with_weights(tmp("p/inline.onnx"));
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(tmp("p/inline.onnx"), &m, &st), OM_OK);
	assert_int_equal(tu_count_op(m->graph, "Identity"), 0); /* it was simplified */
	om_model_free(m);
	/* inline in place, then moved out to inline.onnx.<digest>.data (nothing read it) */
	assert_int_equal(omopt("simplify p/inline.onnx p/inline.onnx --external-data", err,
			       sizeof err),
			 0);
	loads_with_weights(tmp("p/inline.onnx"));
	assert_string_equal(listing("p"), "inline.onnx inline.onnx.5e9b165867ee2b92.data");
	/* now it reads that file: in place again, the weights go to the next name and the file
	 * the replaced model read goes; then back to the first */
	kept a, d;
	assert_int_equal(omopt("simplify p/inline.onnx p/inline.onnx --external-data", err,
			       sizeof err),
			 0);
	loads_with_weights(tmp("p/inline.onnx"));
	const char *names = listing("p");
	assert_int_equal(strlen(names), strlen("inline.onnx inline.onnx.5e9b165867ee2b92.data"));
	assert_true(!strncmp(names, "inline.onnx inline.onnx.", 24) &&
		    strcmp(names, "inline.onnx inline.onnx.5e9b165867ee2b92.data"));
	assert_int_equal(omopt("simplify p/inline.onnx p/inline.onnx --external-data", err,
			       sizeof err),
			 0);
	loads_with_weights(tmp("p/inline.onnx"));
	assert_string_equal(listing("p"), "inline.onnx inline.onnx.5e9b165867ee2b92.data");
	/* under the name given, the file the input reads would be rewritten: refused */
	keep(&d, tmp("p/inline.onnx.5e9b165867ee2b92.data"));
	keep(&a, tmp("p/inline.onnx"));
	assert_int_equal(omopt("simplify p/inline.onnx p/inline.onnx --external-data "
			       "--external-name inline.onnx.5e9b165867ee2b92.data", err, sizeof err),
			 1);
	assert_non_null(strstr(err, "inline.onnx.5e9b165867ee2b92.data' holds external data"));
	unchanged(&a), unchanged(&d);
	/* and the weights file may not replace the model file either */
	write_model(tmp("p/m.data"), NULL);
	kept md;
	keep(&md, tmp("p/m.data"));
	assert_int_equal(omopt("simplify p/m.data p/m --external-data --external-name m.data", err,
			       sizeof err),
			 1);
	assert_non_null(strstr(err, "m.data' is the model file being saved from"));
	unchanged(&md);
	/* without external data, in place works, and the weights file it named goes */
	assert_int_equal(omopt("simplify p/inline.onnx p/inline.onnx", err, sizeof err), 0);
	loads_with_weights(tmp("p/inline.onnx"));
	assert_string_equal(listing("p"), "inline.onnx m.data");
}

/* A folder as OUT: refused before anything is written (no OUT.data, no temporary file). */
static void save_onto_a_folder(void **state)
{
	(void)state;
	char err[8192];
	subdir("f");
	subdir("f/D");
	write_model(tmp("f/a.onnx"), NULL);
	assert_int_equal(omopt("simplify f/a.onnx f/D --external-data", err, sizeof err), 1);
	assert_non_null(strstr(err, "'f/D' is a folder"));
	assert_int_equal(omopt("simplify f/a.onnx f/D/ --external-data", err, sizeof err), 1);
	assert_string_equal(listing("f"), "D a.onnx");
	assert_string_equal(listing("f/D"), "");
	/* the weights file's name is a folder: refused, nothing left */
	subdir("f/E.data");
	assert_int_equal(omopt("simplify f/a.onnx f/E --external-data --external-name E.data", err,
			       sizeof err),
			 1);
	assert_non_null(strstr(err, "'f/E.data' is a folder"));
	assert_string_equal(listing("f"), "D E.data a.onnx");
	assert_string_equal(listing("f/E.data"), "");
	/* a folder at the content name is left alone: the next name is taken */
	subdir("f/F.5e9b165867ee2b92.data");
	assert_int_equal(omopt("simplify f/a.onnx f/F --external-data", err, sizeof err), 0);
	assert_string_equal(listing("f/F.5e9b165867ee2b92.data"), "");
	loads_with_weights(tmp("f/F"));
	char rm[600];
	snprintf(rm, sizeof rm, "rm -r '%s'/F '%s'/F.*.data", tmp("f"), tmp("f"));
	assert_int_equal(system(rm), 0);
	/* run --save-optimized and om_tensor_write_file too */
	assert_int_equal(omopt("run f/a.onnx --save-optimized f/D", err, sizeof err), 1);
	om_tensor t = {.dtype = OM_FLOAT, .rank = 1, .dims = {1}, .data = (float[]){1},
		       .nbytes = 4};
	om_status st = {0};
	assert_int_equal(om_tensor_write_file(tmp("f/D"), &t, "x", &st), OM_ERR_IO);
	assert_string_equal(listing("f"), "D E.data a.onnx");
}

/* `run` replaces each output file (a symlink there included) instead of writing through it */
static void run_outputs_replace_symlinks(void **state)
{
	(void)state;
	char err[8192];
	subdir("r");
	subdir("r/out");
	write_model(tmp("r/m.onnx"), NULL);
	float x[1000];
	for (int i = 0; i < 1000; i++)
		x[i] = 0.5f;
	om_tensor t = {.dtype = OM_FLOAT, .rank = 1, .dims = {1000}, .data = x, .nbytes = 4000};
	om_status st = {0};
	assert_int_equal(om_tensor_write_file(tmp("r/x.npy"), &t, "x", &st), OM_OK);
	FILE *f = fopen(tmp("r/victim"), "w");
	fputs("not an output\n", f);
	fclose(f);
	kept v;
	keep(&v, tmp("r/victim"));
	assert_int_equal(symlink("../victim", tmp("r/out/output_0.pb")), 0);
	assert_int_equal(omopt("run r/m.onnx --input x=r/x.npy --output-dir r/out", err,
			       sizeof err),
			 0);
	unchanged(&v);
	struct stat sb;
	assert_int_equal(lstat(tmp("r/out/output_0.pb"), &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	om_tensor y;
	assert_int_equal(om_tensor_read_file(tmp("r/out/output_0.pb"), &y, &st), OM_OK);
	assert_int_equal(y.dims[0], 1000);
	for (int i = 0; i < 1000; i++)
		assert_true(((float *)y.data)[i] == (float)i + 0.5f);
	om_tensor_free(&y);
	assert_string_equal(listing("r/out"), "output_0.pb");
	/* .npy likewise */
	assert_int_equal(symlink("../victim", tmp("r/out/output_0.npy")), 0);
	assert_int_equal(omopt("run r/m.onnx --input x=r/x.npy --output-dir r/out "
			       "--output-format npy",
			       err, sizeof err),
			 0);
	unchanged(&v);
	assert_int_equal(lstat(tmp("r/out/output_0.npy"), &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_string_equal(listing("r/out"), "output_0.npy output_0.pb");
	/* an output folder whose parents are missing is made with them */
	assert_int_equal(omopt("run r/m.onnx --input x=r/x.npy --output-dir r/new/deep/out",
			       err, sizeof err),
			 0);
	assert_string_equal(listing("r/new/deep/out"), "output_0.pb");
}

/* FIFOs (and devices, folders) as model, external data or tensor file: exit 1 at once with
 * a message. An alarm fails the test if anything waits on a FIFO. */
static void fifos_refused(void **state)
{
	(void)state;
	char err[8192];
	subdir("q");
	assert_int_equal(mkfifo(tmp("q/pipe.onnx"), 0644), 0);
	alarm(60);
	const char *cmds[] = {"info q/pipe.onnx", "simplify q/pipe.onnx q/o.onnx",
			      "dot q/pipe.onnx", "run q/pipe.onnx --output-dir q/o"};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		assert_int_equal(omopt(cmds[i], err, sizeof err), 1);
		assert_non_null(strstr(err, "model 'q/pipe.onnx' is a FIFO, not a regular file"));
	}
	assert_int_equal(omopt("info /dev/zero", err, sizeof err), 1);
	assert_non_null(strstr(err, "is a character device"));
	assert_int_equal(omopt("info q", err, sizeof err), 1);
	assert_non_null(strstr(err, "model 'q' is a folder"));
	/* external data that is a FIFO */
	write_model(tmp("q/e.onnx"), "e.bin");
	assert_int_equal(rename(tmp("q/e.bin"), tmp("q/e.real")), 0);
	assert_int_equal(mkfifo(tmp("q/e.bin"), 0644), 0);
	assert_int_equal(omopt("info q/e.onnx", err, sizeof err), 1);
	assert_non_null(strstr(err, "e.bin' is a FIFO"));
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(tmp("q/e.onnx"), &m, &st), OM_ERR_IO);
	assert_null(m);
	/* tensor inputs: by name (.npy) and from --input-dir (.pb) */
	write_model(tmp("q/m.onnx"), NULL);
	assert_int_equal(mkfifo(tmp("q/x.npy"), 0644), 0);
	assert_int_equal(omopt("run q/m.onnx --input x=q/x.npy --output-dir q/o", err, sizeof err),
			 1);
	assert_non_null(strstr(err, "tensor file 'q/x.npy' is a FIFO"));
	subdir("q/in");
	assert_int_equal(mkfifo(tmp("q/in/input_0.pb"), 0644), 0);
	assert_int_equal(omopt("run q/m.onnx --input-dir q/in --output-dir q/o", err, sizeof err),
			 1);
	assert_non_null(strstr(err, "input_0.pb' is a FIFO"));
	om_tensor t;
	assert_int_equal(om_tensor_read_file(tmp("q/x.npy"), &t, &st), OM_ERR_IO);
	alarm(0);
}

/* `dot -o`: an error when the file cannot be written (exit 1, not 0), written beside the
 * destination and renamed over it (a symlink there replaced), a FIFO nobody reads refused */
static void dot_outputs(void **state)
{
	(void)state;
	char err[8192];
	subdir("d");
	subdir("d/D.svg");
	write_model(tmp("d/m.onnx"), NULL);
	assert_int_equal(omopt("dot d/m.onnx -o d/no/x.svg", err, sizeof err), 1);
	assert_non_null(strstr(err, "omopt: Io: "));
	assert_int_equal(omopt("dot d/m.onnx -o d/D.svg", err, sizeof err), 1);
	assert_non_null(strstr(err, "'d/D.svg' is a folder"));
	assert_int_equal(omopt("dot d/m.onnx -o d/no/x.dot", err, sizeof err), 1);
	FILE *f = fopen(tmp("d/victim"), "w");
	fputs("not a picture\n", f);
	fclose(f);
	kept v;
	keep(&v, tmp("d/victim"));
	assert_int_equal(symlink("victim", tmp("d/x.svg")), 0);
	assert_int_equal(symlink("victim", tmp("d/x.dot")), 0);
	assert_int_equal(omopt("dot d/m.onnx -o d/x.svg", err, sizeof err), 0);
	assert_int_equal(omopt("dot d/m.onnx -o d/x.dot", err, sizeof err), 0);
	unchanged(&v);
	size_t n;
	unsigned char *b = slurp(tmp("d/x.dot"), &n);
	assert_true(n > 20 && !memcmp(b, "digraph omopt {", 15));
	free(b);
	b = slurp(tmp("d/x.svg"), &n);
	b[n - 1] = 0;
	assert_non_null(strstr((char *)b, "<svg"));
	free(b);
	assert_string_equal(listing("d"), "D.svg m.onnx victim x.dot x.svg");
	assert_int_equal(mkfifo(tmp("d/p.svg"), 0644), 0);
	alarm(60);
	assert_int_equal(omopt("dot d/m.onnx -o d/p.svg", err, sizeof err), 1);
	assert_non_null(strstr(err, "a FIFO nobody reads"));
	alarm(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(save_never_replaces_its_weights),
		cmocka_unit_test(simplify_in_place),
		cmocka_unit_test(save_onto_a_folder),
		cmocka_unit_test(run_outputs_replace_symlinks),
		cmocka_unit_test(fifos_refused),
		cmocka_unit_test(dot_outputs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
