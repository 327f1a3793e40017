/* test_save_faults.c — a save under faults and races: symlinks planted at every name it uses
 * are never followed, a write over the file-size limit fails and leaves nothing, SIGTERM and
 * SIGINT in the middle of a large save leave no temporary file (om_save_cleanup), two
 * concurrent --external-data saves to one name (two processes, or two threads saving to a name
 * nothing has yet) always leave a pair that belongs together,
 * and external-data files are named by their content (XXH64). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "digest.h"
#include "files.h"
#include "testutil.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	return tu_tmpdir_make(tmpdir, sizeof tmpdir, "omopt_faults_");
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

static void subdir(const char *name)
{
	assert_int_equal(mkdir(tmp(name), 0755), 0);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Every name in folder dir (hidden ones included: a temporary file is ".<name>.XXXXXX"), but
 * "." and "..", sorted and joined by spaces. */
static const char *listing(const char *dir)
{
	static char buf[4096];
	char names[32][256];
	int n = 0;
	DIR *d = opendir(tmp(dir));
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
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

/* y = Identity(x + w), w float[n] = base + i (mod 4096): simplify drops the Identity. */
static om_model *make_model(int64_t n, float base)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	om_value *x = om_graph_value(g, "x"), *w = om_graph_value(g, "w");
	om_value *t = om_graph_value(g, "t"), *y = om_graph_value(g, "y");
	w->init = om_model_tensor(m, OM_FLOAT, 1, &n);
	assert_non_null(w->init);
	for (int64_t i = 0; i < n; i++)
		((float *)w->init->data)[i] = base + (float)(i % 4096);
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
	return m;
}

static void free_model(om_model *m)
{
	HASH_CLEAR(hh, m->graph->values); /* a model not made by the loader */
	om_model_free(m);
}

/* make_model's model saved to path inline, or with w in external data named by its content
 * (ext). */
static void write_model(const char *path, int64_t n, float base, bool ext)
{
	om_model *m = make_model(n, base);
	om_save_options o = {.external_data = ext};
	om_status st = {0};
	assert_int_equal(om_model_save(m, path, &o, &st), OM_OK);
	free_model(m);
}

/* The base of the model at path's w (n floats, base + i mod 4096 each): -1 when it holds
 * anything else. */
static float weights_base(const char *path, int64_t n)
{
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(path, &m, &st), OM_OK);
	const om_value *w = om_graph_find(m->graph, "w");
	assert_true(w && w->init && w->init->nbytes == (size_t)n * 4);
	const float *v = w->init->data, base = v[0];
	for (int64_t i = 0; i < n; i++)
		if (v[i] != base + (float)(i % 4096)) {
			om_model_free(m);
			return -1;
		}
	om_model_free(m);
	return base;
}

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	*n = (size_t)ftell(f);
	rewind(f);
	unsigned char *b = malloc(*n + 1);
	assert_int_equal(fread(b, 1, *n, f), *n);
	fclose(f);
	return b;
}

/* The name of a weights file of these bytes: variant 0 their XXH64, variant v the XXH64 of
 * that and v (two 64-bit words), as include/omopt.h says. */
static void data_hex(const unsigned char *b, size_t n, uint64_t variant, char hex[17])
{
	om_digest dg;
	om_digest_init(&dg);
	om_digest_add(&dg, b, n);
	uint64_t h = om_digest_value(&dg);
	if (variant) {
		const uint64_t words[2] = {h, variant};
		om_digest_init(&dg);
		om_digest_add(&dg, words, sizeof words);
		h = om_digest_value(&dg);
	}
	snprintf(hex, 17, "%016llx", (unsigned long long)h);
}

/* The one regular file "<model>.<16 hex>.data" in dir (asserted), its hex checked to name its
 * bytes (variant *variant, when not NULL; else any of the first 64); its name in a static
 * buffer. */
static const char *data_file_variant(const char *dir, const char *model, const int *variant)
{
	static char found[256];
	char rel[600], hex[17];
	found[0] = 0;
	DIR *d = opendir(tmp(dir));
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		const size_t n = strlen(model);
		struct stat sb;
		snprintf(rel, sizeof rel, "%s/%s", dir, e->d_name);
		if (!strncmp(e->d_name, model, n) && strlen(e->d_name) == n + 22 &&
		    !strcmp(e->d_name + n + 17, ".data") && lstat(tmp(rel), &sb) == 0 &&
		    S_ISREG(sb.st_mode)) {
			assert_int_equal(found[0], 0);
			snprintf(found, sizeof found, "%s", e->d_name);
		}
	}
	closedir(d);
	assert_true(found[0]);
	snprintf(rel, sizeof rel, "%s/%s", dir, found);
	size_t nb;
	unsigned char *b = slurp(tmp(rel), &nb);
	int v = variant ? *variant : 0;
	for (data_hex(b, nb, (uint64_t)v, hex);
	     !variant && v < 63 && memcmp(found + strlen(model) + 1, hex, 16);)
		data_hex(b, nb, (uint64_t)++v, hex);
	free(b);
	assert_memory_equal(found + strlen(model) + 1, hex, 16);
	return found;
}

/* data_file_variant, variant 0: the XXH64 of the bytes. */
static const char *data_file(const char *dir, const char *model)
{
	static const int first = 0;
	return data_file_variant(dir, model, &first);
}

/* omopt with args (NULL-terminated) started in tmpdir with the default action for every
 * signal, its output thrown away; returns its pid. */
static pid_t spawn(const char *const *args)
{
	char exe[1024];
	const char *b = getenv("OMOPT_BUILD");
	snprintf(exe, sizeof exe, "%s/tools/omopt", b ? b : ".");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		for (int s = 1; s < 32; s++)
			signal(s, SIG_DFL);
		int devnull = open("/dev/null", O_WRONLY);
		if (chdir(tmpdir) != 0 || devnull < 0)
			_exit(126);
		dup2(devnull, 1);
		dup2(devnull, 2);
		char *argv[16] = {exe};
		for (int i = 0; args[i] && i < 14; i++)
			argv[i + 1] = (char *)args[i];
		execv(exe, argv);
		_exit(127);
	}
	return pid;
}

static int wait_status(pid_t pid)
{
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

/* ---- content names ------------------------------------------------------------------------ */

static void digest_is_xxh64(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		uint64_t h;
	} known[] = {{"", 0xef46db3751d8e999ull},
		     {"a", 0xd24ec4f1a98c6e5bull},
		     {"abc", 0x44bc2cf5ad770999ull},
		     {"Nobody inspects the spammish repetition", 0xfbcea83c8a378bf1ull}};
	for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
		om_digest d;
		om_digest_init(&d);
		om_digest_add(&d, known[i].s, strlen(known[i].s));
		assert_true(om_digest_value(&d) == known[i].h);
	}
	/* streamed in pieces of every size: the same value */
	unsigned char buf[200];
	for (int i = 0; i < 200; i++)
		buf[i] = (unsigned char)(i * 37 + 11);
	om_digest whole;
	om_digest_init(&whole);
	om_digest_add(&whole, buf, sizeof buf);
	for (size_t piece = 1; piece < 70; piece += 3) {
		om_digest d;
		om_digest_init(&d);
		for (size_t at = 0; at < sizeof buf; at += piece)
			om_digest_add(&d, buf + at, at + piece < sizeof buf ? piece : sizeof buf - at);
		assert_true(om_digest_value(&d) == om_digest_value(&whole));
	}
}

/* The same model saved twice: the same files; other weights: another name. */
static void data_named_by_content(void **state)
{
	(void)state;
	subdir("c1");
	subdir("c2");
	write_model(tmp("c1/m.onnx"), 2000, 1, true);
	write_model(tmp("c2/m.onnx"), 2000, 1, true);
	char a[256], rel1[600], rel2[600];
	snprintf(a, sizeof a, "%s", data_file("c1", "m.onnx"));
	assert_string_equal(data_file("c2", "m.onnx"), a);
	snprintf(rel1, sizeof rel1, "c1/%s", a);
	snprintf(rel2, sizeof rel2, "c2/%s", a);
	size_t n1, n2;
	unsigned char *b1 = slurp(tmp(rel1), &n1), *b2 = slurp(tmp(rel2), &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(b1, b2, n1);
	free(b1), free(b2);
	b1 = slurp(tmp("c1/m.onnx"), &n1), b2 = slurp(tmp("c2/m.onnx"), &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(b1, b2, n1);
	free(b1), free(b2);
	/* other weights in c2: another name, and the one the replaced model named is gone */
	write_model(tmp("c2/m.onnx"), 2000, 2, true);
	assert_string_not_equal(data_file("c2", "m.onnx"), a);
	assert_true(weights_base(tmp("c2/m.onnx"), 2000) == 2);
	assert_true(weights_base(tmp("c1/m.onnx"), 2000) == 1);
}

/* ---- symlinks ----------------------------------------------------------------------------- */

static void unchanged_victim(void)
{
	size_t n;
	unsigned char *b = slurp(tmp("victim"), &n);
	assert_int_equal(n, 7);
	assert_memory_equal(b, "victim\n", 7);
	free(b);
}

static void is_regular(const char *rel)
{
	struct stat sb;
	assert_int_equal(lstat(tmp(rel), &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
}

/* A symlink at the model's name (replaced), at its weights file's name (left: the weights
 * take the next name) and at the names of other saves (OUT.data, left): never written
 * through; a symlink at OUT is not read to find the weights file of the model it replaces
 * (which stays). */
static void symlinks_never_followed(void **state)
{
	(void)state;
	char err[8192], out[8192], rel[600];
	FILE *f = fopen(tmp("victim"), "w");
	fputs("victim\n", f);
	fclose(f);
	subdir("l");
	write_model(tmp("l/in.onnx"), 2000, 3, false);
	/* the weights file's name, from a save elsewhere */
	subdir("l0");
	assert_int_equal(tu_run_omopt(tmpdir, "simplify l/in.onnx l0/out.onnx --external-data", out,
				      sizeof out, err, sizeof err),
			 0);
	char data[256];
	snprintf(data, sizeof data, "%s", data_file("l0", "out.onnx"));
	snprintf(rel, sizeof rel, "l/%s", data);
	const char *links[] = {"l/out.onnx", rel, "l/out.onnx.data", "l/.out.onnx.000000"};
	for (size_t i = 0; i < sizeof links / sizeof *links; i++)
		assert_int_equal(symlink("../victim", tmp(links[i])), 0);
	assert_int_equal(tu_run_omopt(tmpdir, "simplify l/in.onnx l/out.onnx --external-data", out,
				      sizeof out, err, sizeof err),
			 0);
	unchanged_victim();
	is_regular("l/out.onnx");
	assert_true(weights_base(tmp("l/out.onnx"), 2000) == 3);
	static const int second = 1;
	char data1[256];
	snprintf(data1, sizeof data1, "%s", data_file_variant("l", "out.onnx", &second));
	/* the others are not the save's: left as they were */
	struct stat sb;
	assert_int_equal(lstat(tmp("l/out.onnx.data"), &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	assert_int_equal(lstat(tmp(rel), &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	assert_int_equal(unlink(tmp(rel)), 0);
	/* from the library (the C API) and inline: the same */
	assert_int_equal(unlink(tmp("l/out.onnx")), 0);
	snprintf(rel, sizeof rel, "l/%s", data1);
	assert_int_equal(unlink(tmp(rel)), 0);
	assert_int_equal(symlink("../victim", tmp("l/out.onnx")), 0);
	write_model(tmp("l/out.onnx"), 2000, 4, false);
	unchanged_victim();
	is_regular("l/out.onnx");
	assert_true(weights_base(tmp("l/out.onnx"), 2000) == 4);
	/* OUT a symlink to a model whose weights file has OUT's kind of name: that model is
	 * not read through the link, its weights stay */
	assert_int_equal(tu_run_omopt(tmpdir, "simplify l/in.onnx l/out.onnx --external-data", out,
				      sizeof out, err, sizeof err),
			 0);
	assert_int_equal(rename(tmp("l/out.onnx"), tmp("l/kept.onnx")), 0);
	assert_int_equal(symlink("kept.onnx", tmp("l/out.onnx")), 0);
	write_model(tmp("l/out.onnx"), 2000, 5, false);
	is_regular("l/out.onnx");
	assert_true(weights_base(tmp("l/kept.onnx"), 2000) == 3);
	unchanged_victim();
	char want[1024];
	snprintf(want, sizeof want, ".out.onnx.000000 in.onnx kept.onnx out.onnx %s out.onnx.data",
		 data);
	assert_true(strcmp(data, "out.onnx.data") < 0);
	assert_string_equal(listing("l"), want);
}

/* ---- the file-size limit ------------------------------------------------------------------ */

/* `ulimit -f` (512-byte blocks in sh) below what the save writes: exit 1 naming EFBIG, and
 * nothing left in the folder; inline, with external data, and from the library. */
static void file_size_limit(void **state)
{
	(void)state;
	subdir("u");
	write_model(tmp("u/in.onnx"), 1 << 20, 6, false); /* 4 MiB */
	const char *cases[] = {"", "--external-data"};
	for (int i = 0; i < 2; i++) {
		char cmd[4096], err[4096] = "";
		const char *b = getenv("OMOPT_BUILD");
		snprintf(cmd, sizeof cmd,
			 "cd '%s' && ulimit -f 2048 && '%s/tools/omopt' simplify in.onnx out.onnx %s "
			 ">/dev/null 2>../u.err",
			 tmp("u"), b ? b : ".", cases[i]);
		int st = system(cmd);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 1);
		FILE *f = fopen(tmp("u.err"), "r");
		assert_non_null(f);
		assert_true(fread(err, 1, sizeof err - 1, f) > 0);
		fclose(f);
		assert_non_null(strstr(err, "File too large"));
		assert_string_equal(listing("u"), "in.onnx");
	}
	/* the library in a process that ignores SIGXFSZ, as om_model_save asks of hosts */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit lim = {1 << 20, 1 << 20};
		setrlimit(RLIMIT_FSIZE, &lim);
		om_model *m = NULL;
		om_status st = {0};
		om_save_options o = {.external_data = 1};
		if (om_model_load(tmp("u/in.onnx"), &m, &st))
			_exit(2);
		om_kind k = om_model_save(m, tmp("u/out.onnx"), &o, &st);
		_exit(k == OM_ERR_IO && strstr(st.msg, "File too large") ? 0 : 3);
	}
	int st = wait_status(pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_string_equal(listing("u"), "in.onnx");
}

/* ---- signals ------------------------------------------------------------------------------ */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A name in dir starting with prefix exists. */
static bool has_entry(const char *dir, const char *prefix)
{
	DIR *d = opendir(tmp(dir));
	assert_non_null(d);
	bool found = false;
	for (struct dirent *e; !found && (e = readdir(d));)
		found = !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return found;
}

/* SIGTERM and SIGINT sent to `omopt simplify` while it writes a 192 MiB model (once its
 * temporary file is there): it dies of the signal and the folder holds only the input. */
static void signals_leave_no_temporary(void **state)
{
	(void)state;
	subdir("g");
	write_model(tmp("g/in.onnx"), 48 << 20, 7, false);
	const int sigs[] = {SIGTERM, SIGINT, SIGTERM, SIGINT};
	for (int i = 0; i < 4; i++) {
		const bool ext = i >= 2;
		const char *args[] = {"simplify", "g/in.onnx", "g/out.onnx",
				      ext ? "--external-data" : NULL, NULL};
		pid_t pid = spawn(args);
		const double t0 = now_s();
		while (!has_entry("g", ".out.onnx.") && now_s() - t0 < 60)
			usleep(1000);
		assert_true(has_entry("g", ".out.onnx.")); /* the save is under way */
		usleep(20000);
		assert_int_equal(kill(pid, sigs[i]), 0);
		int st = wait_status(pid);
		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), sigs[i]);
		assert_string_equal(listing("g"), "in.onnx");
	}
}

/* The library's list: files being written are removed by om_save_cleanup, which leaves the
 * write to fail (cancelled) and nothing behind; past its 64 slots a file is not listed. */
static void cleanup_removes_files_in_flight(void **state)
{
	(void)state;
	subdir("r");
	enum { N = 70 };
	static om_out_file o[N];
	om_status st = {0};
	for (int i = 0; i < N; i++) {
		char name[32];
		snprintf(name, sizeof name, "r/f%02d", i);
		assert_int_equal(om_out_open(&o[i], tmp(name), &st), OM_OK);
		assert_int_equal(fputs("x", o[i].f) >= 0, 1);
	}
	assert_int_equal(om_save_cleanup(), 64);
	assert_int_equal(om_save_cleanup(), 0);
	int removed = 0;
	for (int i = 0; i < N; i++) {
		struct stat sb;
		removed += lstat(o[i].tmp, &sb) != 0;
	}
	assert_int_equal(removed, 64);
	int failed = 0;
	for (int i = 0; i < N; i++) {
		failed += om_out_commit(&o[i], &st) == OM_ERR_IO;
		om_out_discard(&o[i]);
	}
	assert_int_equal(failed, 64);
	/* the 6 unlisted were written; the rest left nothing */
	assert_string_equal(listing("r"), "f64 f65 f66 f67 f68 f69");
	/* the slots are free again */
	assert_int_equal(om_out_open(&o[0], tmp("r/g"), &st), OM_OK);
	assert_int_equal(om_save_cleanup(), 1);
	om_out_discard(&o[0]);
}

/* ---- concurrent saves --------------------------------------------------------------------- */

/* Two `simplify --external-data` of different models to one name at once, 20 times: both
 * succeed and what is left is one model with the weights it was written with, and its data
 * file alone (the one the model replaced named is gone). */
static void concurrent_saves_never_mix(void **state)
{
	(void)state;
	subdir("k");
	enum { N = 1 << 18 };
	write_model(tmp("k/a.onnx"), N, 10, false);
	write_model(tmp("k/b.onnx"), N, 20, false);
	int seen[2] = {0, 0};
	for (int round = 0; round < 20; round++) {
		const char *a[] = {"simplify", "k/a.onnx", "k/out.onnx", "--external-data", NULL};
		const char *b[] = {"simplify", "k/b.onnx", "k/out.onnx", "--external-data", NULL};
		pid_t pa = spawn(a), pb = spawn(b);
		int sa = wait_status(pa), sb = wait_status(pb);
		assert_true(WIFEXITED(sa) && WEXITSTATUS(sa) == 0);
		assert_true(WIFEXITED(sb) && WEXITSTATUS(sb) == 0);
		const float base = weights_base(tmp("k/out.onnx"), N);
		assert_true(base == 10 || base == 20);
		seen[base == 20]++;
		char want[600];
		snprintf(want, sizeof want, "a.onnx b.onnx out.onnx %s",
			 data_file_variant("k", "out.onnx", NULL));
		assert_string_equal(listing("k"), want);
	}
	print_message("last writer: a %d times, b %d times\n", seen[0], seen[1]);
}

/* Removes every file in folder dir. */
static void clear_dir(const char *dir)
{
	DIR *d = opendir(tmp(dir));
	assert_non_null(d);
	char rel[600];
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(rel, sizeof rel, "%s/%s", dir, e->d_name);
			assert_int_equal(unlink(tmp(rel)), 0);
		}
	closedir(d);
}

typedef struct saver {
	const om_model *m;
	const char *path;
	pthread_barrier_t *go, *done;
	int rounds;
	om_kind failed;
} saver;

static void *save_rounds(void *arg)
{
	saver *s = arg;
	const om_save_options o = {.external_data = true};
	for (int r = 0; r < s->rounds; r++) {
		pthread_barrier_wait(s->go);
		om_status st = {0};
		const om_kind k = om_model_save(s->m, s->path, &o, &st);
		if (k)
			s->failed = k;
		pthread_barrier_wait(s->done);
	}
	return NULL;
}

/* Two threads of one process save two models with external data to one new name at once,
 * round after round: the model left names the one data file left (the model found at the
 * name is replaced by exchange, a free name is taken only while free). */
static void concurrent_first_saves_never_mix(void **state)
{
	(void)state;
	subdir("t");
	enum { N = 2048, ROUNDS = 300 };
	const char *path = strdup(tmp("t/out.onnx"));
	pthread_barrier_t go, done;
	pthread_barrier_init(&go, NULL, 3);
	pthread_barrier_init(&done, NULL, 3);
	om_model *ma = make_model(N, 10), *mb = make_model(N, 20);
	saver s[2] = {{ma, path, &go, &done, ROUNDS, OM_OK}, {mb, path, &go, &done, ROUNDS, OM_OK}};
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, save_rounds, &s[i]), 0);
	int seen[2] = {0, 0}, bad = 0;
	for (int r = 0; r < ROUNDS; r++) {
		clear_dir("t");
		pthread_barrier_wait(&go);
		pthread_barrier_wait(&done);
		char want[600];
		const float base = weights_base(path, N);
		assert_true(base == 10 || base == 20);
		seen[base == 20]++;
		snprintf(want, sizeof want, "out.onnx %s", data_file_variant("t", "out.onnx", NULL));
		bad += strcmp(listing("t"), want) != 0;
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	free_model(ma);
	free_model(mb);
	pthread_barrier_destroy(&go);
	pthread_barrier_destroy(&done);
	free((void *)path);
	print_message("last writer: a %d times, b %d times\n", seen[0], seen[1]);
	assert_int_equal(s[0].failed, OM_OK);
	assert_int_equal(s[1].failed, OM_OK);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(digest_is_xxh64),
		cmocka_unit_test(data_named_by_content),
		cmocka_unit_test(symlinks_never_followed),
		cmocka_unit_test(file_size_limit),
		cmocka_unit_test(cleanup_removes_files_in_flight),
		cmocka_unit_test(signals_leave_no_temporary),
		cmocka_unit_test(concurrent_saves_never_mix),
		cmocka_unit_test(concurrent_first_saves_never_mix),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
