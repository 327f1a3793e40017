/* test_external_lazy.c — external data costs what is read of it: a model naming a sparse 1 TiB
 * file loads, simplifies, runs and saves in seconds within bounded memory (the saved data file
 * sparse too, named the same by two saves); big initializers merge when
 * equal and not when they differ at the last byte; data shorter than the tensor, or past the
 * end of its file, is refused by name without being read. */
#define _GNU_SOURCE /* SEEK_HOLE */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "digest.h"
#include "onnx.pb-c.h"
#include "session.h"
#include "testutil.h"

enum { MAX_ITEMS = 8, ROW = 1024 };

static char dir[256];

static int setup(void **state)
{
	(void)state;
	return tu_tmpdir_make(dir, sizeof dir, "omopt_lazy");
}

static int teardown(void **state)
{
	(void)state;
	return tu_tmpdir_remove(dir);
}

/* ---- a small ONNX writer: graph inputs, outputs, nodes, external float initializers ------- */

typedef struct ext_init {
	Onnx__TensorProto t;
	Onnx__StringStringEntryProto e[3];
	Onnx__StringStringEntryProto *ep[3];
	char off[24], len[24];
	int64_t dims[2];
} ext_init;

typedef struct vinfo {
	Onnx__ValueInfoProto v;
	Onnx__TypeProto type;
	Onnx__TypeProto__Tensor tensor;
} vinfo;

typedef struct node {
	Onnx__NodeProto n;
	char *in[2], *out[1];
} node;

typedef struct proto {
	ext_init init[MAX_ITEMS];
	vinfo in[MAX_ITEMS], out[MAX_ITEMS];
	node node[MAX_ITEMS];
	int32_t ninit, nin, nout, nnode;
} proto;

/* A float initializer of dims[0] x dims[1] at [offset, +bytes) of `location`. */
static void add_init(proto *p, const char *name, int64_t d0, int64_t d1, const char *location,
		     uint64_t offset)
{
	ext_init *x = &p->init[p->ninit++];
	Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
	x->t = t;
	for (int i = 0; i < 3; i++) {
		Onnx__StringStringEntryProto e = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
		x->e[i] = e;
		x->ep[i] = &x->e[i];
	}
	snprintf(x->off, sizeof x->off, "%llu", (unsigned long long)offset);
	snprintf(x->len, sizeof x->len, "%llu", (unsigned long long)(d0 * d1 * 4));
	x->e[0].key = "location", x->e[0].value = (char *)location;
	x->e[1].key = "offset", x->e[1].value = x->off;
	x->e[2].key = "length", x->e[2].value = x->len;
	x->dims[0] = d0, x->dims[1] = d1;
	x->t.name = (char *)name, x->t.n_dims = 2, x->t.dims = x->dims;
	x->t.has_data_type = 1, x->t.data_type = OM_FLOAT;
	x->t.has_data_location = 1;
	x->t.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	x->t.n_external_data = 3, x->t.external_data = x->ep;
}

static void set_vinfo(vinfo *v, const char *name, int32_t elem)
{
	Onnx__ValueInfoProto vi = ONNX__VALUE_INFO_PROTO__INIT;
	Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
	Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
	v->v = vi, v->type = tp, v->tensor = tt;
	v->tensor.has_elem_type = 1, v->tensor.elem_type = elem;
	v->type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	v->type.tensor_type = &v->tensor;
	v->v.name = (char *)name, v->v.type = &v->type;
}

/* op(a[, b]) -> y; a graph output of type elem when elem is not 0. */
static void add_node(proto *p, const char *op, const char *a, const char *b, const char *y,
		     int32_t elem)
{
	node *x = &p->node[p->nnode++];
	Onnx__NodeProto n = ONNX__NODE_PROTO__INIT;
	x->n = n;
	x->in[0] = (char *)a, x->in[1] = (char *)b, x->out[0] = (char *)y;
	x->n.op_type = (char *)op;
	x->n.n_input = b ? 2 : 1, x->n.input = x->in;
	x->n.n_output = 1, x->n.output = x->out;
	if (elem)
		set_vinfo(&p->out[p->nout++], y, elem);
}

static void write_proto(const proto *p, const char *path)
{
	Onnx__TensorProto *inits[MAX_ITEMS];
	Onnx__ValueInfoProto *ins[MAX_ITEMS], *outs[MAX_ITEMS];
	Onnx__NodeProto *nodes[MAX_ITEMS];
	for (int32_t i = 0; i < p->ninit; i++)
		inits[i] = (Onnx__TensorProto *)&p->init[i].t;
	for (int32_t i = 0; i < p->nin; i++)
		ins[i] = (Onnx__ValueInfoProto *)&p->in[i].v;
	for (int32_t i = 0; i < p->nout; i++)
		outs[i] = (Onnx__ValueInfoProto *)&p->out[i].v;
	for (int32_t i = 0; i < p->nnode; i++)
		nodes[i] = (Onnx__NodeProto *)&p->node[i].n;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	g.name = "g";
	g.n_initializer = (size_t)p->ninit, g.initializer = inits;
	g.n_input = (size_t)p->nin, g.input = ins;
	g.n_output = (size_t)p->nout, g.output = outs;
	g.n_node = (size_t)p->nnode, g.node = nodes;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *osp = &os;
	os.domain = "", os.has_version = 1, os.version = 13;
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	mp.has_ir_version = 1, mp.ir_version = 8, mp.graph = &g;
	mp.n_opset_import = 1, mp.opset_import = &osp;
	const size_t size = protobuf_c_message_get_packed_size(&mp.base);
	uint8_t *buf = malloc(size);
	assert_non_null(buf);
	protobuf_c_message_pack(&mp.base, buf);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, size, f), size);
	fclose(f);
	free(buf);
}

/* ---- helpers ------------------------------------------------------------------------------ */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long max_rss_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

static om_model *load(const char *name)
{
	om_model *m = NULL;
	om_status st = {0};
	om_kind k = om_model_load(tu_join(dir, name), &m, &st);
	if (k)
		print_error("%s: %s\n", name, st.msg);
	assert_int_equal(k, OM_OK);
	return m;
}

static void check_ok(om_kind k, const om_status *st)
{
	if (k)
		print_error("%s\n", st->msg);
	assert_int_equal(k, OM_OK);
}

/* The name of the first input of the node that writes y. */
static const char *reader_of(const om_model *m, const char *y)
{
	const om_value *v = om_graph_find(m->graph, y);
	assert_non_null(v);
	assert_non_null(v->producer);
	return v->producer->in[0]->name;
}

static bool has_init(const om_model *m, const char *name)
{
	for (int32_t i = 0; i < m->graph->ninits; i++)
		if (!strcmp(m->graph->inits[i]->name, name))
			return true;
	return false;
}

/* Runs the Gathers of m at rows idx[3] and checks every output equals the rows of `rows`
 * (NULL: zeros), nrows x ROW floats. */
static void run_gathers(const om_model *m, const int64_t *idx, const float *rows, int nout)
{
	om_session *s = tu_session_create(m);
	om_tensor in = {.dtype = OM_INT64, .rank = 1, .dims = {3}, .data = (void *)idx,
			.nbytes = 3 * sizeof *idx};
	om_tensor out[8] = {0};
	om_status st = {0};
	check_ok(om_session_run(s, &in, 1, out, nout, &st), &st);
	for (int o = 0; o < nout; o++) {
		assert_int_equal(out[o].rank, 2);
		assert_int_equal(out[o].dims[0], 3);
		assert_int_equal(out[o].dims[1], ROW);
		const float *y = out[o].data;
		for (int r = 0; r < 3; r++)
			for (int c = 0; c < ROW; c++)
				assert_true(y[r * ROW + c] == (rows ? rows[idx[r] * ROW + c] : 0.0f));
		om_tensor_free(&out[o]);
	}
	om_session_free(s);
}

/* ---- a sparse terabyte ------------------------------------------------------------------- */

/* Makes dir/name a sparse file of the largest size from 1 TiB down to 16 GiB the file system
 * takes; 0 when none. */
static uint64_t sparse_file(const char *name)
{
	const int fd = open(tu_join(dir, name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	uint64_t size = (uint64_t)1 << 40;
	for (; size >= (uint64_t)16 << 30; size /= 2)
		if (ftruncate(fd, (off_t)size) == 0)
			break;
	close(fd);
	return size >= (uint64_t)16 << 30 ? size : 0;
}

/* W and W2 name the whole file; y = Gather(W, idx), y2 = Gather(W2, idx), s = Shape(W):
 * simplify merges W2 into W by its size and sampled digest (the same bytes: never compared
 * whole), folds the Shape, and a run reads three rows. Before, merge_common hashed the whole
 * mapping (1 TiB of reads; killed at 22 GB resident). H1 and H2, the file's two halves, are
 * equal (zeros) with equal samples, but over COMPARE_MAX: not read whole, not merged. */
static void sparse_terabyte(void **state)
{
	(void)state;
	const uint64_t size = sparse_file("tera.bin");
	if (!size) {
		print_message("skipped: the file system takes no sparse file of 16 GiB (%s)\n",
			      strerror(errno));
		skip();
	}
	const int64_t rows = (int64_t)(size / (4 * ROW));
	proto p = {0};
	set_vinfo(&p.in[p.nin++], "idx", OM_INT64);
	add_init(&p, "W", rows, ROW, "tera.bin", 0);
	add_init(&p, "W2", rows, ROW, "tera.bin", 0);
	add_node(&p, "Gather", "W", "idx", "y", OM_FLOAT);
	add_node(&p, "Gather", "W2", "idx", "y2", OM_FLOAT);
	add_init(&p, "H1", rows / 2, ROW, "tera.bin", 0);
	add_init(&p, "H2", rows / 2, ROW, "tera.bin", size / 2);
	add_node(&p, "Gather", "H1", "idx", "y3", OM_FLOAT);
	add_node(&p, "Gather", "H2", "idx", "y4", OM_FLOAT);
	add_node(&p, "Shape", "W", NULL, "s", OM_INT64);
	write_proto(&p, tu_join(dir, "tera.onnx"));
	const double t0 = now();
	const int64_t idx[3] = {0, rows / 4, rows / 2 - 1};
	om_status st = {0};
	/* simplify, then run the simplified model */
	om_model *m = load("tera.onnx");
	check_ok(om_simplify(m, NULL, &st), &st);
	assert_string_equal(reader_of(m, "y2"), "W");
	assert_true(has_init(m, "W") && !has_init(m, "W2"));
	assert_string_equal(reader_of(m, "y3"), "H1");
	assert_string_equal(reader_of(m, "y4"), "H2");
	assert_int_equal(tu_count_op(m->graph, "Shape"), 0);
	run_gathers(m, idx, NULL, 4);
	om_model_free(m);
	/* what `omopt run` does: optimize, then run */
	m = load("tera.onnx");
	check_ok(om_optimize(m, NULL, &st), &st);
	run_gathers(m, idx, NULL, 4);
	om_model_free(m);
	const double secs = now() - t0;
	const long rss = max_rss_mb();
	print_message("%llu GiB of external data: %.2f s, max RSS %ld MB\n",
		      (unsigned long long)(size >> 30), secs, rss);
	assert_true(secs < 20);
	assert_true(rss < 200);
}

/* A ReduceSum of the terabyte is not folded (its kernel would read all of it): simplify
 * leaves the node and returns at once, and a session's planner does not fold it either (the
 * session is made at once; its runs read what they need, within their limits). */
static void sparse_reduce_not_folded(void **state)
{
	(void)state;
	const uint64_t size = sparse_file("tera.bin");
	if (!size)
		skip();
	proto p = {0};
	add_init(&p, "W", (int64_t)(size / (4 * ROW)), ROW, "tera.bin", 0);
	add_node(&p, "ReduceSum", "W", NULL, "r", OM_FLOAT);
	write_proto(&p, tu_join(dir, "reduce.onnx"));
	const double t0 = now();
	om_model *m = load("reduce.onnx");
	om_status st = {0};
	check_ok(om_simplify(m, NULL, &st), &st);
	assert_int_equal(tu_count_op(m->graph, "ReduceSum"), 1);
	om_session *s;
	check_ok(om_session_create(m, NULL, &s, &st), &st);
	assert_int_equal(om_session_node_count(s), 1);
	assert_false(om_session_node_info(s, 0).folded);
	om_session_free(s);
	om_model_free(m);
	assert_true(now() - t0 < 20);
	assert_true(max_rss_mb() < 200);
}

/* ---- saving a sparse terabyte ------------------------------------------------------------- */

enum { NSPOTS = 4, SPOT = 4096 };

/* Where tera.bin has data: 4 KiB at each (the rest is holes); byte i of a spot is spot_byte. */
static uint64_t spot_at(int i, uint64_t size)
{
	const uint64_t at[NSPOTS] = {8192, (uint64_t)1 << 30, size / 2 + 12345 * 4096ull,
				     size - 3 * 4096};
	return at[i];
}

static unsigned char spot_byte(int spot, size_t i)
{
	return (unsigned char)(1 + spot * 31 + i * 7 % 251);
}

/* The file in dir/sub named "<base>.<16 hex>.data" (the one there), written to name. */
static void data_file(const char *sub, const char *base, char name[NAME_MAX + 1])
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, sub);
	DIR *d = opendir(path);
	assert_non_null(d);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (!strncmp(e->d_name, base, strlen(base)) && strstr(e->d_name, ".data"))
			snprintf(name, NAME_MAX + 1, "%s", e->d_name), n++;
	closedir(d);
	assert_int_equal(n, 1);
}

static const om_tensor *init_of(const om_model *m, const char *name)
{
	for (int32_t i = 0; i < m->graph->ninits; i++)
		if (!strcmp(m->graph->inits[i]->name, name))
			return m->graph->inits[i]->init;
	fail_msg("no initializer '%s'", name);
	return NULL;
}

/* t's bytes at [at, at + n) are the spot's bytes (spot >= 0) or zeros. */
static void check_bytes(const om_tensor *t, uint64_t at, size_t n, int spot)
{
	const unsigned char *p = (const unsigned char *)t->data + at;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(p[i], spot >= 0 ? spot_byte(spot, i) : 0);
}

/* W names all of a sparse 1 TiB file holding 16 KiB of data at four places, V 16 KiB of it
 * across the second place; both stay after simplify (Gathers read them) and go to the data file
 * of out.onnx, saved into two folders. Before, the save wrote and hashed every byte (hours, a
 * full disk); now it copies the data extents: a few seconds, a data file of the same apparent
 * size (1 TiB for W, 16 KiB more for V) with a few blocks, the bytes read back equal, and the
 * same content name for the two saves. */
static void sparse_terabyte_saved(void **state)
{
	(void)state;
	const uint64_t size = sparse_file("tera.bin");
	int fd = open(tu_join(dir, "tera.bin"), O_WRONLY);
	assert_true(fd >= 0);
	unsigned char buf[SPOT];
	for (int s = 0; size && s < NSPOTS; s++) {
		for (size_t i = 0; i < SPOT; i++)
			buf[i] = spot_byte(s, i);
		assert_int_equal(pwrite(fd, buf, SPOT, (off_t)spot_at(s, size)), SPOT);
	}
	const bool holes = size && lseek(fd, 0, SEEK_HOLE) == 0;
	close(fd);
	if (!holes) {
		print_message("skipped: the file system takes no sparse file of 16 GiB or more, or "
			      "does not report its holes (SEEK_HOLE)\n");
		skip();
	}
	proto p = {0};
	set_vinfo(&p.in[p.nin++], "idx", OM_INT64);
	add_init(&p, "W", (int64_t)(size / (4 * ROW)), ROW, "tera.bin", 0);
	add_init(&p, "V", 4, ROW, "tera.bin", spot_at(1, size) - 8192);
	add_node(&p, "Gather", "W", "idx", "y", OM_FLOAT);
	add_node(&p, "Gather", "V", "idx", "y2", OM_FLOAT);
	write_proto(&p, tu_join(dir, "tera_save.onnx"));
	const double t0 = now();
	static const char *const subs[2] = {"s1", "s2"};
	char names[2][NAME_MAX + 1];
	for (int k = 0; k < 2; k++) {
		char out[512];
		snprintf(out, sizeof out, "%s/%s", dir, subs[k]);
		assert_int_equal(mkdir(out, 0755), 0);
		snprintf(out, sizeof out, "%s/%s/out.onnx", dir, subs[k]);
		om_model *m = load("tera_save.onnx");
		om_status st = {0};
		check_ok(om_simplify(m, NULL, &st), &st);
		const om_save_options opt = {.external_data = 1};
		check_ok(om_model_save(m, out, &opt, &st), &st);
		om_model_free(m);
		data_file(subs[k], "out.onnx.", names[k]);
	}
	const double secs = now() - t0;
	assert_string_equal(names[0], names[1]);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/s1/%s", dir, names[0]);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_true((uint64_t)sb.st_size == size + 4 * 4096);
	print_message("saved %llu GiB of sparse external data: %.2f s, %lld KiB allocated, "
		      "max RSS %ld MB\n", (unsigned long long)(size >> 30), secs,
		      (long long)sb.st_blocks / 2, max_rss_mb());
	assert_true(sb.st_blocks * 512 < 4 << 20);
	assert_true(secs < 10);
	assert_true(max_rss_mb() < 200);
	/* the saved model reads the same bytes: the spots, zeros around and between them */
	om_model *m = load("s2/out.onnx");
	const om_tensor *w = init_of(m, "W"), *v = init_of(m, "V");
	assert_true(w->nbytes == size && v->nbytes == 4 * 4096);
	for (int s = 0; s < NSPOTS; s++) {
		const uint64_t at = spot_at(s, size);
		check_bytes(w, at, SPOT, s);
		check_bytes(w, at - 64, 64, -1);
		check_bytes(w, at + SPOT, 64, -1);
	}
	check_bytes(w, 0, 4096, -1);
	check_bytes(w, size / 4, 4096, -1);
	check_bytes(w, size - 4096, 4096, -1);
	check_bytes(v, 0, 8192, -1);
	check_bytes(v, 8192, SPOT, 1);
	check_bytes(v, 8192 + SPOT, 4096, -1);
	om_model_free(m);
}

/* A dense external weight is written as it is: the data file holds its bytes, named by their
 * XXH64 (no holes: the hole records never enter). */
static void dense_external_saved(void **state)
{
	(void)state;
	enum { ROWS = 16, BYTES = ROWS * ROW * 4 };
	unsigned char *buf = malloc(BYTES);
	assert_non_null(buf);
	for (size_t i = 0; i < BYTES; i++)
		buf[i] = (unsigned char)(i * 131 + 7);
	FILE *f = fopen(tu_join(dir, "dense.bin"), "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, BYTES, f), BYTES);
	fclose(f);
	proto p = {0};
	set_vinfo(&p.in[p.nin++], "idx", OM_INT64);
	add_init(&p, "D", ROWS, ROW, "dense.bin", 0);
	add_node(&p, "Gather", "D", "idx", "y", OM_FLOAT);
	write_proto(&p, tu_join(dir, "dense.onnx"));
	om_model *m = load("dense.onnx");
	om_status st = {0};
	const om_save_options opt = {.external_data = 1};
	assert_int_equal(mkdir(tu_join(dir, "s3"), 0755), 0);
	char out[PATH_MAX];
	snprintf(out, sizeof out, "%s/s3/out.onnx", dir);
	check_ok(om_model_save(m, out, &opt, &st), &st);
	om_model_free(m);
	om_digest dg;
	om_digest_init(&dg);
	om_digest_add(&dg, buf, BYTES);
	char want[64], name[NAME_MAX + 1];
	snprintf(want, sizeof want, "out.onnx.%016llx.data",
		 (unsigned long long)om_digest_value(&dg));
	data_file("s3", "out.onnx.", name);
	assert_string_equal(name, want);
	snprintf(out, sizeof out, "%s/s3/%s", dir, name);
	f = fopen(out, "rb");
	assert_non_null(f);
	unsigned char *back = malloc(BYTES + 1);
	assert_non_null(back);
	assert_int_equal(fread(back, 1, BYTES + 1, f), BYTES);
	fclose(f);
	assert_memory_equal(back, buf, BYTES);
	free(back);
	free(buf);
}

/* ---- big initializers that are, or are not, equal ---------------------------------------- */

/* Five 8 MiB initializers in one file: A; B equal to A; C differing from A at its last byte;
 * D differing from A in the middle, between the samples the digest reads (found by the full
 * comparison); E equal to A again. B and E read A after simplify; C and D keep their own. */
static void big_initializers_merge(void **state)
{
	(void)state;
	const int64_t rows = 2048; /* 8 MiB each */
	const size_t bytes = (size_t)rows * ROW * 4;
	unsigned char *buf = malloc(5 * bytes);
	assert_non_null(buf);
	uint32_t x = 12345;
	for (size_t i = 0; i < bytes; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (unsigned char)(x >> 16);
	}
	for (int k = 1; k < 5; k++)
		memcpy(buf + k * bytes, buf, bytes);
	buf[3 * bytes - 1] ^= 1;             /* C: the last byte */
	buf[3 * bytes + bytes / 2 + 100] ^= 1; /* D: the middle */
	FILE *f = fopen(tu_join(dir, "five.bin"), "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, 5 * bytes, f), 5 * bytes);
	fclose(f);
	proto p = {0};
	set_vinfo(&p.in[p.nin++], "idx", OM_INT64);
	static const char *const names[5] = {"A", "B", "C", "D", "E"};
	static const char *const outs[5] = {"ya", "yb", "yc", "yd", "ye"};
	for (int k = 0; k < 5; k++) {
		add_init(&p, names[k], rows, ROW, "five.bin", (uint64_t)k * bytes);
		add_node(&p, "Gather", names[k], "idx", outs[k], OM_FLOAT);
	}
	write_proto(&p, tu_join(dir, "five.onnx"));
	om_model *m = load("five.onnx");
	om_status st = {0};
	check_ok(om_simplify(m, NULL, &st), &st);
	assert_string_equal(reader_of(m, "ya"), "A");
	assert_string_equal(reader_of(m, "yb"), "A");
	assert_string_equal(reader_of(m, "yc"), "C");
	assert_string_equal(reader_of(m, "yd"), "D");
	assert_string_equal(reader_of(m, "ye"), "A");
	assert_true(!has_init(m, "B") && !has_init(m, "E") && has_init(m, "C") && has_init(m, "D"));
	/* and the rows read are A's, C's own last row */
	const int64_t idx[3] = {0, rows / 2, rows - 1};
	om_session *s = tu_session_create(m);
	om_tensor in = {.dtype = OM_INT64, .rank = 1, .dims = {3}, .data = (void *)idx,
			.nbytes = sizeof idx};
	om_tensor out[5] = {0};
	check_ok(om_session_run(s, &in, 1, out, 5, &st), &st);
	for (int k = 0; k < 5; k++) {
		const unsigned char *want = buf + (size_t)k * bytes;
		for (int r = 0; r < 3; r++)
			assert_memory_equal((const unsigned char *)out[k].data + r * ROW * 4,
					    want + (size_t)idx[r] * ROW * 4, ROW * 4);
		om_tensor_free(&out[k]);
	}
	om_session_free(s);
	om_model_free(m);
	free(buf);
}

/* ---- external data that is not there ----------------------------------------------------- */

/* Refused at load by the tensor's name, before a byte of the (sparse, 1 GiB) file is read. */
static void short_or_beyond_refused(void **state)
{
	(void)state;
	const int fd = open(tu_join(dir, "gig.bin"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)1 << 30), 0);
	close(fd);
	const int64_t rows = ((int64_t)1 << 30) / (4 * ROW);
	static const struct {
		int64_t rows;
		uint64_t offset;
	} cases[] = {
		{rows + 1, 0},          /* one row more than the file holds */
		{rows, 4096},           /* shifted: its end is past the file's */
		{1, (uint64_t)1 << 40}, /* starts past the end */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		proto p = {0};
		set_vinfo(&p.in[p.nin++], "idx", OM_INT64);
		add_init(&p, "Wbig", cases[i].rows, ROW, "gig.bin", cases[i].offset);
		add_node(&p, "Gather", "Wbig", "idx", "y", OM_FLOAT);
		write_proto(&p, tu_join(dir, "bad.onnx"));
		om_model *m = NULL;
		om_status st = {0};
		const double t0 = now();
		assert_int_equal(om_model_load(tu_join(dir, "bad.onnx"), &m, &st),
				 OM_ERR_INVALID_MODEL);
		assert_true(now() - t0 < 2);
		assert_null(m);
		assert_non_null(strstr(st.msg, "tensor 'Wbig'"));
		assert_non_null(strstr(st.msg, "beyond 'gig.bin'"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: the RSS bound is the process's */
		cmocka_unit_test(sparse_terabyte),
		cmocka_unit_test(sparse_reduce_not_folded),
		cmocka_unit_test(sparse_terabyte_saved),
		cmocka_unit_test(dense_external_saved),
		cmocka_unit_test(big_initializers_merge),
		cmocka_unit_test(short_or_beyond_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
