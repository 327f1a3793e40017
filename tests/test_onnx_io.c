/* test_onnx_io.c — ONNX reader/writer: round trips over the node-test suites, external data,
 * corrupted and truncated files, .npy/.pb tensor files. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx.pb-c.h"
#include "forget_protos.h"
#include "testutil.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/omopt_io_XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *tmp(const char *name)
{
	return tu_join(tmpdir, name);
}

static char *dump(const om_model *m)
{
	char *b = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&b, &n);
	om_model_dump(m, f);
	fclose(f);
	return b;
}


static void fail_status(const char *what, const char *path, const om_status *st)
{
	char b[800];
	om_status_format(st, b, sizeof b);
	print_error("%s %s: %s\n", what, path, b);
}

/* load → save → load gives the same dump; mode 1 also rebuilds every message from the IR and
 * mode 2 writes the weights to an external file. Returns 0 on success. */
static int roundtrip(const char *path, int mode)
{
	om_model *m = NULL, *m2 = NULL;
	om_status st = {0};
	if (om_model_load(path, &m, &st)) {
		fail_status("load", path, &st);
		return 1;
	}
	char *d1 = dump(m);
	if (mode == 1)
		forget_protos(m->graph);
	om_save_options o = {.external_data = mode == 2, .external_min_bytes = 16};
	const char *out = tmp("rt.onnx");
	int bad = 0;
	if (om_model_save(m, out, &o, &st)) {
		fail_status("save", path, &st);
		bad = 1;
	} else if (om_model_load(out, &m2, &st)) {
		fail_status("reload", path, &st);
		bad = 1;
	} else {
		char *d2 = dump(m2);
		if (strcmp(d1, d2)) {
			print_error("dump differs after round trip (mode %d): %s\n", mode, path);
			bad = 1;
		}
		free(d2);
	}
	free(d1);
	om_model_free(m);
	om_model_free(m2);
	return bad;
}

/* Round-trips every DIR/ * /model.onnx; returns the number of models, fails on any bad one. */
static int roundtrip_suite(const char *dir, int mode_mask)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0, bad = 0;
	struct dirent *e;
	char path[1024];
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s/model.onnx", dir, e->d_name);
		if (access(path, R_OK))
			continue;
		n++;
		for (int mode = 0; mode < 3; mode++)
			if (mode_mask & (1 << mode))
				bad += roundtrip(path, mode);
	}
	closedir(d);
	assert_int_equal(bad, 0);
	return n;
}

static void roundtrip_onnx_1_12(void **state)
{
	(void)state;
	int n = roundtrip_suite("/usr/share/libonnx-testdata/data/node", 2); /* rebuilt */
	if (n < 0)
		skip();
	assert_true(n >= 900);
}

static void roundtrip_onnx_1_23(void **state)
{
	(void)state;
	const char *sh = tu_shared_dir();
	if (!sh)
		skip();
	char dir[512];
	snprintf(dir, sizeof dir, "%s/conformance/onnx-node-1.23", sh);
	int n = roundtrip_suite(dir, 1); /* messages reused */
	if (n < 0)
		skip();
	assert_true(n >= 1800);
}

static void roundtrip_real_models(void **state)
{
	(void)state;
	const char *sh = tu_shared_dir();
	if (!sh)
		skip();
	char dir[512];
	snprintf(dir, sizeof dir, "%s/models", sh);
	int n = roundtrip_suite(dir, 7);
	if (n < 0)
		skip();
	assert_true(n >= 4);
}

/* ---- a model made in the test: y = x + w ------------------------------------------------- */

static void clear_model(om_model *m)
{
	HASH_CLEAR(hh, m->graph->values); /* the loader's release does this for loaded models */
	om_model_free(m);
}

static om_model *small_model(int64_t nw)
{
	om_model *m = om_model_new();
	assert_non_null(m);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", 13};
	m->nopsets = 1;
	m->producer_name = "test";
	om_graph *g = m->graph = om_graph_new(m, NULL);
	g->name = "g";
	om_value *x = om_graph_value(g, "x"), *w = om_graph_value(g, "w"),
		 *y = om_graph_value(g, "y");
	w->init = om_model_tensor(m, OM_FLOAT, 1, &nw);
	for (int64_t i = 0; i < nw; i++)
		((float *)w->init->data)[i] = (float)i * 0.5f;
	w->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(m, &x->type, w->init);
	om_type_from_tensor(m, &y->type, w->init);
	om_type_from_tensor(m, &w->type, w->init);
	x->flags |= OM_VALUE_GRAPH_INPUT;
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	g->inputs = om_arena_alloc(m->arena, sizeof(om_value *));
	g->outputs = om_arena_alloc(m->arena, sizeof(om_value *));
	g->inits = om_arena_alloc(m->arena, sizeof(om_value *));
	g->inputs[0] = x, g->outputs[0] = y, g->inits[0] = w;
	g->ninputs = g->noutputs = g->ninits = 1;
	om_node *n = om_graph_add_node(g, "Add", "", "add", 2, 1);
	n->in[0] = x, n->in[1] = w;
	om_node_set_output(n, 0, y);
	return m;
}

static long file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) ? -1 : (long)sb.st_size;
}

static void external_data_roundtrip(void **state)
{
	(void)state;
	om_model *m = small_model(1000);
	om_status st = {0};
	om_save_options o = {.external_data = 1, .external_name = "w.bin"};
	assert_int_equal(om_model_save(m, tmp("ext.onnx"), &o, &st), OM_OK);
	assert_int_equal(file_size(tmp("w.bin")), 4000);
	assert_true(file_size(tmp("ext.onnx")) < 1000); /* the weights are not inline */
	om_model *m2 = NULL;
	assert_int_equal(om_model_load(tmp("ext.onnx"), &m2, &st), OM_OK);
	const om_value *w = om_graph_find(m2->graph, "w");
	assert_non_null(w);
	assert_non_null(w->init);
	assert_int_equal(w->init->nbytes, 4000);
	assert_memory_equal(w->init->data, om_graph_find(m->graph, "w")->init->data, 4000);
	char *d1 = dump(m), *d2 = dump(m2);
	assert_string_equal(d1, d2);
	/* saving the loaded model inline brings the bytes back into the model file */
	assert_int_equal(om_model_save(m2, tmp("inline.onnx"), NULL, &st), OM_OK);
	assert_true(file_size(tmp("inline.onnx")) > 4000);
	om_model *m3 = NULL;
	assert_int_equal(om_model_load(tmp("inline.onnx"), &m3, &st), OM_OK);
	char *d3 = dump(m3);
	assert_string_equal(d1, d3);
	free(d1), free(d2), free(d3);
	om_model_free(m2);
	om_model_free(m3);
	clear_model(m);
}

/* Writes a model (opset 13) whose main graph holds these initializers and nothing else. */
static void write_init_model(const char *path, Onnx__TensorProto **tps, size_t n)
{
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	g.name = "g", g.n_initializer = n, g.initializer = tps;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *osp = &os;
	os.domain = "", os.has_version = 1, os.version = 13;
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	mp.has_ir_version = 1, mp.ir_version = 8, mp.graph = &g;
	mp.n_opset_import = 1, mp.opset_import = &osp;
	size_t size = protobuf_c_message_get_packed_size(&mp.base);
	uint8_t *buf = malloc(size);
	protobuf_c_message_pack(&mp.base, buf);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(buf, 1, size, f);
	fclose(f);
	free(buf);
}

/* Writes a model whose initializer "w" (float[4]) has external data at `location`. */
static void write_ext_model(const char *path, const char *location, const char *offset,
			    const char *length)
{
	Onnx__StringStringEntryProto e[3] = {ONNX__STRING_STRING_ENTRY_PROTO__INIT,
					     ONNX__STRING_STRING_ENTRY_PROTO__INIT,
					     ONNX__STRING_STRING_ENTRY_PROTO__INIT};
	Onnx__StringStringEntryProto *ep[3] = {&e[0], &e[1], &e[2]};
	e[0].key = "location", e[0].value = (char *)location;
	e[1].key = "offset", e[1].value = (char *)offset;
	e[2].key = "length", e[2].value = (char *)length;
	int64_t dims[1] = {4};
	Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
	Onnx__TensorProto *tp = &t;
	t.name = "w", t.n_dims = 1, t.dims = dims, t.has_data_type = 1, t.data_type = OM_FLOAT;
	t.has_data_location = 1, t.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	t.n_external_data = 3, t.external_data = ep;
	write_init_model(path, &tp, 1);
}

static void write_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(p, 1, n, f);
	fclose(f);
}

static om_kind load_kind(const char *path)
{
	om_model *m = NULL;
	om_status st = {0};
	om_kind k = om_model_load(path, &m, &st);
	if (k)
		assert_true(st.msg[0] != 0);
	om_model_free(m);
	return k;
}

static void external_data_checked(void **state)
{
	(void)state;
	const float w[6] = {1, 2, 3, 4, 5, 6};
	assert_int_equal(mkdir(tmp("m"), 0755), 0);
	write_bytes(tmp("m/w.bin"), w, sizeof w);
	write_bytes(tmp("outside.bin"), w, sizeof w);
	/* inside the folder, offset 8: elements 3..6 */
	write_ext_model(tmp("m/ok.onnx"), "w.bin", "8", "16");
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(tmp("m/ok.onnx"), &m, &st), OM_OK);
	const om_tensor *t = om_graph_find(m->graph, "w")->init;
	assert_non_null(t);
	assert_memory_equal(t->data, w + 2, 16);
	om_model_free(m);
	/* escaping the folder */
	write_ext_model(tmp("m/up.onnx"), "../outside.bin", "0", "16");
	assert_int_equal(load_kind(tmp("m/up.onnx")), OM_ERR_INVALID_MODEL);
	write_ext_model(tmp("m/abs.onnx"), tmp("outside.bin"), "0", "16");
	assert_int_equal(load_kind(tmp("m/abs.onnx")), OM_ERR_INVALID_MODEL);
	write_ext_model(tmp("m/mid.onnx"), "sub/../../outside.bin", "0", "16");
	assert_int_equal(load_kind(tmp("m/mid.onnx")), OM_ERR_INVALID_MODEL);
	assert_int_equal(symlink(tmp("outside.bin"), tmp("m/link.bin")), 0);
	write_ext_model(tmp("m/link.onnx"), "link.bin", "0", "16");
	assert_int_equal(load_kind(tmp("m/link.onnx")), OM_ERR_INVALID_MODEL);
	/* out of bounds, wrong length, bad numbers */
	write_ext_model(tmp("m/oob.onnx"), "w.bin", "16", "16");
	assert_int_equal(load_kind(tmp("m/oob.onnx")), OM_ERR_INVALID_MODEL);
	write_ext_model(tmp("m/len.onnx"), "w.bin", "0", "12");
	assert_int_equal(load_kind(tmp("m/len.onnx")), OM_ERR_INVALID_MODEL);
	write_ext_model(tmp("m/huge.onnx"), "w.bin", "18446744073709551615", "16");
	assert_int_equal(load_kind(tmp("m/huge.onnx")), OM_ERR_INVALID_MODEL);
	write_ext_model(tmp("m/neg.onnx"), "w.bin", "-8", "16");
	assert_int_equal(load_kind(tmp("m/neg.onnx")), OM_ERR_INVALID_MODEL);
	write_ext_model(tmp("m/missing.onnx"), "nothere.bin", "0", "16");
	assert_int_not_equal(load_kind(tmp("m/missing.onnx")), OM_OK);
	/* from memory without a folder, external data is refused */
	FILE *f = fopen(tmp("m/ok.onnx"), "rb");
	unsigned char buf[4096];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	assert_int_equal(om_model_load_memory(buf, n, NULL, &m, &st), OM_ERR_INVALID_MODEL);
	assert_null(m);
}

/* ---- corrupted input --------------------------------------------------------------------- */

static unsigned char *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc(*n ? *n : 1);
	assert_int_equal(fread(b, 1, *n, f), *n);
	fclose(f);
	return b;
}

/* Loads (and when that works, dumps and saves) a damaged copy; returns its kind. */
static om_kind try_bytes(const unsigned char *b, size_t n)
{
	om_model *m = NULL;
	om_status st = {0};
	om_kind k = om_model_load_memory(b, n, NULL, &m, &st);
	if (k) {
		assert_null(m);
		assert_true(st.msg[0] != 0);
		return k;
	}
	FILE *f = fopen("/dev/null", "w");
	om_model_dump(m, f);
	fclose(f);
	om_model_save(m, tmp("damaged.onnx"), NULL, &st);
	om_model_free(m);
	return k;
}

static void corrupted_models(void **state)
{
	(void)state;
	const char *sh = tu_shared_dir();
	char path[512];
	snprintf(path, sizeof path, "%s/models/silero_op15/model.onnx", sh ? sh : "");
	size_t n = 0;
	unsigned char *b = sh ? read_file(path, &n) : NULL;
	if (!b) {
		om_model *m = small_model(64);
		om_status st = {0};
		assert_int_equal(om_model_save(m, tmp("small.onnx"), NULL, &st), OM_OK);
		clear_model(m);
		b = read_file(tmp("small.onnx"), &n);
	}
	assert_non_null(b);
	/* truncations: every one of the first 300 lengths, then 300 spread over the file */
	int failed = 0, tried = 0;
	for (size_t len = 0; len < n; len += len < 300 ? 1 : n / 300 + 1) {
		om_kind k = try_bytes(b, len);
		assert_true(k == OM_OK || k == OM_ERR_INVALID_MODEL);
		failed += k != OM_OK;
		tried++;
	}
	assert_true(failed > tried * 9 / 10);
	/* byte flips at 400 places (deterministic), the file otherwise intact */
	unsigned char *c = malloc(n);
	uint64_t r = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 400; i++) {
		memcpy(c, b, n);
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		size_t at = (size_t)(r % n);
		c[at] ^= (unsigned char)(1u << (r >> 60 & 7)) | (i & 1 ? 0x80 : 0);
		om_kind k = try_bytes(c, n);
		assert_true(k == OM_OK || k == OM_ERR_INVALID_MODEL || k == OM_ERR_UNSUPPORTED);
	}
	free(c);
	free(b);
}

static size_t put_varint(unsigned char *p, uint64_t v)
{
	size_t n = 0;
	do {
		p[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

/* Loads path, expects kind and that the message names the file and holds every fragment. */
static void load_says(const char *path, om_kind kind, const char *const *frags)
{
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(path, &m, &st), kind);
	assert_null(m);
	if (!strstr(st.msg, path) || !strstr(st.msg, "'"))
		fail_msg("message does not name '%s': %s", path, st.msg);
	for (; *frags; frags++)
		if (!strstr(st.msg, *frags))
			fail_msg("'%s' missing in: %s", *frags, st.msg);
}

#define SAYS(path, kind, ...) load_says(path, kind, (const char *const[]){__VA_ARGS__, NULL})

static void load_messages(void **state)
{
	(void)state;
	/* cut off: ir_version 8, then graph (field 7) declaring 4,251,318 bytes in a 1,000,000
	 * byte file; the graph field starts at byte 2 */
	const size_t n = 1000000;
	unsigned char *b = calloc(1, n);
	b[0] = 0x08, b[1] = 8, b[2] = 7 << 3 | 2;
	put_varint(b + 3, 4251318);
	write_bytes(tmp("cut.onnx"), b, n);
	SAYS(tmp("cut.onnx"), OM_ERR_INVALID_MODEL, "is truncated", "field 7 (graph) at byte 2",
	     "declares 4,251,318 bytes", "ends at byte 1,000,000");
	/* a real model cut 25 bytes short: the graph field declares more than the file has */
	om_model *m = small_model(64);
	om_status st = {0};
	assert_int_equal(om_model_save(m, tmp("small.onnx"), NULL, &st), OM_OK);
	clear_model(m);
	size_t sn = 0;
	unsigned char *sb = read_file(tmp("small.onnx"), &sn);
	assert_true(sn > 100 && sn < 1000);
	write_bytes(tmp("short.onnx"), sb, sn - 25);
	char ends[64];
	snprintf(ends, sizeof ends, "ends at byte %zu", sn - 25);
	SAYS(tmp("short.onnx"), OM_ERR_INVALID_MODEL, "is truncated", "field 7 (graph)", ends);
	free(sb);
	/* empty, from a file and from memory */
	write_bytes(tmp("e.onnx"), "", 0);
	SAYS(tmp("e.onnx"), OM_ERR_INVALID_MODEL, "is empty (0 bytes)");
	assert_int_equal(om_model_load_memory("", 0, NULL, &m, &st), OM_ERR_INVALID_MODEL);
	assert_non_null(strstr(st.msg, "empty (0 bytes)"));
	/* other formats */
	const float v[3] = {1, 2, 3};
	om_tensor t = {.dtype = OM_FLOAT, .rank = 1, .dims = {3}, .data = (void *)v,
		       .nbytes = sizeof v};
	assert_int_equal(om_tensor_write_file(tmp("x.npy"), &t, "x", &st), OM_OK);
	SAYS(tmp("x.npy"), OM_ERR_INVALID_MODEL, "is a NumPy array, not an ONNX model");
	assert_int_equal(om_tensor_write_file(tmp("x.pb"), &t, "x", &st), OM_OK);
	SAYS(tmp("x.pb"), OM_ERR_INVALID_MODEL, "is a TensorProto", "not an ONNX model");
	write_bytes(tmp("x.json"), "{\"graph\": []}\n", 14);
	SAYS(tmp("x.json"), OM_ERR_INVALID_MODEL, "is JSON text, not an ONNX model");
	write_bytes(tmp("x.txt"), "hello world\n", 12);
	SAYS(tmp("x.txt"), OM_ERR_INVALID_MODEL, "is a text file, not an ONNX model");
	write_bytes(tmp("x.zip"), "PK\x03\x04\x14\x00\x00\x00", 8);
	SAYS(tmp("x.zip"), OM_ERR_INVALID_MODEL, "is a zip archive");
	/* field 3 with wire type 3 (a group start) as the first byte */
	write_bytes(tmp("x.bin"), "\x1b\x01\x02\xff", 4);
	SAYS(tmp("x.bin"), OM_ERR_INVALID_MODEL,
	     "is not an ONNX model (unsupported wire type 3 at byte 0)");
	/* a well-formed ModelProto without a graph */
	write_bytes(tmp("nograph.onnx"), "\x08\x08", 2);
	SAYS(tmp("nograph.onnx"), OM_ERR_INVALID_MODEL, "has no graph");
	/* sound outside, damaged inside: graph (bytes 2 to 7) holds a node with wire type 3 */
	write_bytes(tmp("inner.onnx"), "\x08\x08\x3a\x03\x0a\x01\x1b", 7);
	SAYS(tmp("inner.onnx"), OM_ERR_INVALID_MODEL,
	     "is damaged inside field 7 (graph), bytes 2 to 7: unsupported wire type 3 in a "
	     "NodeProto");
	/* and one protobuf-c refuses: ModelProto.graph.name (field 2) as a varint */
	write_bytes(tmp("parse.onnx"), "\x08\x08\x3a\x02\x10\x01", 6);
	SAYS(tmp("parse.onnx"), OM_ERR_INVALID_MODEL,
	     "is damaged inside field 7 (graph), bytes 2 to 6: protobuf cannot parse it");
	/* I/O errors stay Io and name the file */
	SAYS(tmp("absent.onnx"), OM_ERR_IO, "cannot open");
	free(b);
}

/* Wraps buf[0..n) as field `field` of a new message: the result starts at buf again. */
static size_t wrap(unsigned char *buf, size_t n, unsigned field)
{
	unsigned char head[16];
	size_t h = put_varint(head, field << 3 | 2);
	h += put_varint(head + h, n);
	memmove(buf + h, buf, n);
	memcpy(buf, head, h);
	return n + h;
}

static void deep_nesting_refused(void **state)
{
	(void)state;
	unsigned char *buf = calloc(1, 1 << 20);
	size_t n = 0;
	for (int i = 0; i < 5000; i++) {
		n = wrap(buf, n, 6); /* AttributeProto.g */
		n = wrap(buf, n, 5); /* NodeProto.attribute */
		n = wrap(buf, n, 1); /* GraphProto.node */
	}
	n = wrap(buf, n, 7); /* ModelProto.graph */
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load_memory(buf, n, NULL, &m, &st), OM_ERR_INVALID_MODEL);
	assert_null(m);
	free(buf);
}

static void not_a_model(void **state)
{
	(void)state;
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(tmp("does_not_exist.onnx"), &m, &st), OM_ERR_IO);
	assert_null(m);
	assert_int_equal(om_model_load_memory("", 0, NULL, &m, &st), OM_ERR_INVALID_MODEL);
	assert_int_equal(om_model_load_memory("hello world", 11, NULL, &m, &st),
			 OM_ERR_INVALID_MODEL);
	assert_null(m);
}

/* ---- tensor files ------------------------------------------------------------------------ */

static void tensor_file_roundtrip(const om_tensor *t, const char *name)
{
	om_status st = {0};
	om_tensor back;
	assert_int_equal(om_tensor_write_file(tmp(name), t, "t", &st), OM_OK);
	assert_int_equal(om_tensor_read_file(tmp(name), &back, &st), OM_OK);
	assert_int_equal(back.dtype, t->dtype);
	assert_int_equal(back.rank, t->rank);
	for (int32_t i = 0; i < t->rank; i++)
		assert_int_equal(back.dims[i], t->dims[i]);
	assert_int_equal(back.nbytes, t->nbytes);
	if (t->dtype == OM_STRING) {
		const om_str *a = t->data, *b = back.data;
		for (int64_t i = 0; i < om_tensor_numel(t); i++) {
			assert_int_equal(a[i].len, b[i].len);
			assert_memory_equal(a[i].ptr, b[i].ptr, (size_t)a[i].len);
		}
	} else if (t->nbytes) {
		assert_memory_equal(back.data, t->data, t->nbytes);
	}
	om_tensor_free(&back);
}

static void tensor_files(void **state)
{
	(void)state;
	static const int32_t types[] = {OM_FLOAT, OM_DOUBLE, OM_FLOAT16, OM_BOOL, OM_INT8,
					OM_UINT8, OM_INT16, OM_UINT16, OM_INT32, OM_UINT32,
					OM_INT64, OM_UINT64};
	const int64_t shapes[3][3] = {{0}, {5}, {2, 3, 4}};
	const int32_t ranks[3] = {0, 1, 3};
	om_status st = {0};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		for (int s = 0; s < 3; s++) {
			om_tensor t;
			assert_int_equal(om_tensor_alloc(&t, types[i], ranks[s], shapes[s], &st),
					 OM_OK);
			unsigned char *p = t.data;
			for (size_t k = 0; k < t.nbytes; k++)
				p[k] = (unsigned char)(k * 37 + i);
			if (types[i] == OM_BOOL)
				for (size_t k = 0; k < t.nbytes; k++)
					p[k] &= 1;
			tensor_file_roundtrip(&t, "t.npy");
			tensor_file_roundtrip(&t, "t.pb");
			om_tensor_free(&t);
		}
	/* strings and 4-bit types: .pb only */
	om_tensor s;
	int64_t two = 2;
	assert_int_equal(om_tensor_alloc(&s, OM_STRING, 1, &two, &st), OM_OK);
	om_str *e = s.data;
	e[0] = (om_str){strdup("hello"), 5};
	e[1] = (om_str){strdup(""), 0};
	tensor_file_roundtrip(&s, "s.pb");
	assert_int_equal(om_tensor_write_file(tmp("s.npy"), &s, "s", &st), OM_ERR_UNSUPPORTED);
	om_tensor_free(&s);
	int64_t three = 3;
	assert_int_equal(om_tensor_alloc(&s, OM_INT4, 1, &three, &st), OM_OK);
	assert_int_equal(s.nbytes, 2);
	((unsigned char *)s.data)[0] = 0x7f, ((unsigned char *)s.data)[1] = 0x08;
	tensor_file_roundtrip(&s, "i4.pb");
	om_tensor_free(&s);
}

/* A .npy header as numpy writes it (v1, v2 or v3) for float32 [2, 3]. */
static void npy_versions(void **state)
{
	(void)state;
	const char *hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
	const float v[6] = {1, -2, 3.5f, 4, 5, 6};
	for (int ver = 1; ver <= 3; ver++) {
		unsigned char buf[256] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)ver, 0};
		size_t pre = ver == 1 ? 10 : 12, hl = strlen(hdr);
		size_t total = (pre + hl + 1 + 63) / 64 * 64, len = total - pre;
		buf[8] = (unsigned char)len;
		memcpy(buf + pre, hdr, hl);
		memset(buf + pre + hl, ' ', len - hl - 1);
		buf[total - 1] = '\n';
		memcpy(buf + total, v, sizeof v);
		write_bytes(tmp("v.npy"), buf, total + sizeof v);
		om_tensor t;
		om_status st = {0};
		assert_int_equal(om_tensor_read_file(tmp("v.npy"), &t, &st), OM_OK);
		assert_int_equal(t.dtype, OM_FLOAT);
		assert_int_equal(t.rank, 2);
		assert_int_equal(t.dims[0], 2);
		assert_int_equal(t.dims[1], 3);
		assert_memory_equal(t.data, v, sizeof v);
		om_tensor_free(&t);
		/* one byte short of data, and a header length past the end */
		write_bytes(tmp("v.npy"), buf, total + sizeof v - 1);
		assert_int_equal(om_tensor_read_file(tmp("v.npy"), &t, &st), OM_ERR_INVALID_INPUT);
		buf[9] = 0x7f;
		write_bytes(tmp("v.npy"), buf, total + sizeof v);
		assert_int_not_equal(om_tensor_read_file(tmp("v.npy"), &t, &st), OM_OK);
	}
	/* a file that is neither: an input error that names the file, not a model error */
	static const unsigned char junk[] = {0xff, 0xfe, 0x07, 0x00, 0x13, 0x37};
	om_tensor t;
	om_status st = {0};
	write_bytes(tmp("junk.npy"), junk, sizeof junk);
	assert_int_equal(om_tensor_read_file(tmp("junk.npy"), &t, &st), OM_ERR_INVALID_INPUT);
	assert_non_null(strstr(st.msg, "junk.npy"));
	write_bytes(tmp("junk.pb"), junk, sizeof junk);
	assert_int_equal(om_tensor_read_file(tmp("junk.pb"), &t, &st), OM_ERR_INVALID_INPUT);
	assert_non_null(strstr(st.msg, "junk.pb"));
}

/* A v1 .npy file with header text hdr and two float32 values. */
static void write_npy_v1(const char *path, const char *hdr)
{
	static const float v[2] = {1, 2};
	unsigned char buf[512] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
	const size_t hl = strlen(hdr), total = (10 + hl + 1 + 63) / 64 * 64, len = total - 10;
	assert_true(total + sizeof v <= sizeof buf);
	buf[8] = (unsigned char)len, buf[9] = (unsigned char)(len >> 8);
	memcpy(buf + 10, hdr, hl);
	memset(buf + 10 + hl, ' ', len - hl - 1);
	buf[total - 1] = '\n';
	memcpy(buf + total, v, sizeof v);
	write_bytes(path, buf, total + sizeof v);
}

/* The header is the dict numpy's read_array_header takes: exactly 'descr', 'fortran_order'
 * and 'shape', once each. A repeated key (numpy's dict keeps the last: read as the first
 * before), an unknown or missing one, a value of the wrong kind, "(2)" for a shape (an int)
 * or text after the dict is refused with the reason. */
static void npy_header_dict(void **state)
{
	(void)state;
	static const struct {
		const char *hdr, *says; /* says NULL: read as float32 [2] */
	} cases[] = {
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", NULL},
		{"{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<f4\"}", NULL},
		{"{'descr': '<f4',\n 'fortran_order': False,\t'shape': (2L,)}", NULL},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (1,)}",
		 "repeated key 'shape'"},
		{"{'descr': '<i8', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
		 "repeated key 'descr'"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
		 "unknown key 'x'"},
		{"{'descr': '<f4', 'shape': (2,)}", "missing key 'fortran_order'"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", "bad value of 'shape'"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (2,,)}",
		 "bad value of 'shape'"},
		{"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}",
		 "bad value of 'fortran_order'"},
		{"{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}",
		 "no ',' or '}' after 'descr'"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", "text after the dict"},
		{"[('descr', '<f4')]", "not a dict"},
		{"{,}", "a key that is not a short string"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		write_npy_v1(tmp("h.npy"), cases[i].hdr);
		om_tensor t;
		om_status st = {0};
		const om_kind k = om_tensor_read_file(tmp("h.npy"), &t, &st);
		if (!cases[i].says) {
			assert_int_equal(k, OM_OK);
			assert_int_equal(t.dtype, OM_FLOAT);
			assert_int_equal(t.rank, 1);
			assert_int_equal(t.dims[0], 2);
			om_tensor_free(&t);
			continue;
		}
		assert_int_equal(k, OM_ERR_INVALID_INPUT);
		if (!strstr(st.msg, cases[i].says))
			fail_msg("%s: %s", cases[i].hdr, st.msg);
		assert_non_null(strstr(st.msg, "h.npy"));
	}
}

/* test_abs of the ONNX suite: output_0.pb must be |input_0.pb| element by element. */
static void pb_values_from_suite(void **state)
{
	(void)state;
	const char *dir = "/usr/share/libonnx-testdata/data/node/test_abs/test_data_set_0";
	char in[512], out[512];
	snprintf(in, sizeof in, "%s/input_0.pb", dir);
	snprintf(out, sizeof out, "%s/output_0.pb", dir);
	if (access(in, R_OK))
		skip();
	om_tensor x, y;
	om_status st = {0};
	assert_int_equal(om_tensor_read_file(in, &x, &st), OM_OK);
	assert_int_equal(om_tensor_read_file(out, &y, &st), OM_OK);
	assert_int_equal(x.dtype, OM_FLOAT);
	assert_int_equal(x.rank, 3);
	assert_int_equal(om_tensor_numel(&x), 60);
	bool negative = false;
	for (int64_t i = 0; i < 60; i++) {
		float a = ((float *)x.data)[i];
		negative |= a < 0;
		assert_true(((float *)y.data)[i] == fabsf(a));
	}
	assert_true(negative);
	om_tensor_free(&x);
	om_tensor_free(&y);
}

/* ---- typed fields ------------------------------------------------------------------------ */

static const om_tensor *init_of(const om_model *m, const char *name)
{
	const om_value *v = om_graph_find(m->graph, name);
	assert_non_null(v);
	assert_true(v->flags & OM_VALUE_INITIALIZER);
	return v->init;
}

static void typed_fields(void **state)
{
	(void)state;
	enum { N = 9 };
	Onnx__TensorProto t[N], *tp[N];
	for (int i = 0; i < N; i++) {
		onnx__tensor_proto__init(&t[i]);
		tp[i] = &t[i];
		t[i].has_data_type = 1;
	}
	int64_t d3[1] = {3}, two[1] = {2}, d9[9] = {1, 1, 1, 1, 1, 1, 1, 2, 1};
	int32_t half[3] = {0x3c00, 0xc000, 0x7c00}; /* 1, -2, inf as float16 bits */
	int32_t i4[2] = {0x7f, 0x08};               /* int4 [-1, 7, -8]: low nibble first */
	int32_t i8[3] = {-1, 127, -128};
	uint64_t u32[2] = {4000000000u, 7};
	int64_t i64[2] = {-5, INT64_MAX};
	double dbl[3] = {0.25, -1e300, 3};
	ProtobufCBinaryData strs[2] = {{3, (uint8_t *)"abc"}, {0, NULL}};
	float f9[2] = {1.5f, -2.5f};
	t[0].name = "h", t[0].data_type = OM_FLOAT16, t[0].n_dims = 1, t[0].dims = d3;
	t[0].n_int32_data = 3, t[0].int32_data = half;
	t[1].name = "q", t[1].data_type = OM_INT4, t[1].n_dims = 1, t[1].dims = d3;
	t[1].n_int32_data = 2, t[1].int32_data = i4;
	t[2].name = "b", t[2].data_type = OM_INT8, t[2].n_dims = 1, t[2].dims = d3;
	t[2].n_int32_data = 3, t[2].int32_data = i8;
	t[3].name = "u", t[3].data_type = OM_UINT32, t[3].n_dims = 1, t[3].dims = two;
	t[3].n_uint64_data = 2, t[3].uint64_data = u32;
	t[4].name = "l", t[4].data_type = OM_INT64, t[4].n_dims = 1, t[4].dims = two;
	t[4].n_int64_data = 2, t[4].int64_data = i64;
	t[5].name = "d", t[5].data_type = OM_DOUBLE, t[5].n_dims = 1, t[5].dims = d3;
	t[5].n_double_data = 3, t[5].double_data = dbl;
	t[6].name = "s", t[6].data_type = OM_STRING, t[6].n_dims = 1, t[6].dims = two;
	t[6].n_string_data = 2, t[6].string_data = strs;
	t[7].name = "r9", t[7].data_type = OM_FLOAT, t[7].n_dims = 9, t[7].dims = d9;
	t[7].n_float_data = 2, t[7].float_data = f9;
	t[8].name = "x27", t[8].data_type = 27, t[8].n_dims = 1, t[8].dims = two; /* no om type */
	t[8].has_raw_data = 1, t[8].raw_data = (ProtobufCBinaryData){1, (uint8_t *)"\x1b"};
	write_init_model(tmp("typed.onnx"), tp, N);
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(tmp("typed.onnx"), &m, &st), OM_OK);
	const uint16_t *h = init_of(m, "h")->data;
	assert_int_equal(h[0], 0x3c00), assert_int_equal(h[1], 0xc000);
	assert_int_equal(h[2], 0x7c00);
	const om_tensor *q = init_of(m, "q");
	assert_int_equal(q->nbytes, 2);
	assert_int_equal(((uint8_t *)q->data)[0], 0x7f);
	assert_int_equal(((uint8_t *)q->data)[1], 8);
	const int8_t *b = init_of(m, "b")->data;
	assert_int_equal(b[0], -1), assert_int_equal(b[1], 127), assert_int_equal(b[2], -128);
	const uint32_t *u = init_of(m, "u")->data;
	assert_int_equal(init_of(m, "u")->nbytes, 8);
	assert_true(u[0] == 4000000000u && u[1] == 7);
	assert_memory_equal(init_of(m, "l")->data, i64, sizeof i64);
	assert_memory_equal(init_of(m, "d")->data, dbl, sizeof dbl);
	const om_str *s = init_of(m, "s")->data;
	assert_int_equal(s[0].len, 3), assert_memory_equal(s[0].ptr, "abc", 3);
	assert_int_equal(s[1].len, 0);
	/* rank 9 and an element type om_tensor does not know: loadable, kept as the proto */
	assert_null(init_of(m, "r9"));
	assert_int_equal(om_graph_find(m->graph, "r9")->type.rank, 9);
	assert_null(init_of(m, "x27"));
	char *d1 = dump(m);
	/* the writer turns typed fields into raw_data and keeps what it cannot model */
	forget_protos(m->graph);
	assert_int_equal(om_model_save(m, tmp("typed2.onnx"), NULL, &st), OM_OK);
	om_model *m2 = NULL;
	assert_int_equal(om_model_load(tmp("typed2.onnx"), &m2, &st), OM_OK);
	char *d2 = dump(m2);
	assert_string_equal(d1, d2);
	assert_true(((const Onnx__ModelProto *)m2->proto)->graph->initializer[0]->has_raw_data);
	const Onnx__ModelProto *mp = m2->proto;
	assert_int_equal(mp->graph->n_initializer, N);
	assert_int_equal(mp->graph->initializer[7]->n_dims, 9);
	assert_int_equal(mp->graph->initializer[8]->data_type, 27);
	free(d1), free(d2);
	om_model_free(m);
	om_model_free(m2);
	/* counts that do not match the shape are refused */
	t[2].n_int32_data = 2;
	write_init_model(tmp("short.onnx"), tp, N);
	assert_int_equal(load_kind(tmp("short.onnx")), OM_ERR_INVALID_MODEL);
	t[2].n_int32_data = 3;
	t[3].n_uint64_data = 3, t[3].uint64_data = (uint64_t[3]){1, 2, 3};
	write_init_model(tmp("long.onnx"), tp, N);
	assert_int_equal(load_kind(tmp("long.onnx")), OM_ERR_INVALID_MODEL);
	/* a huge shape without the values: refused before anything that size is allocated */
	int64_t huge[2] = {1 << 30, 1 << 30};
	t[0].dims = huge, t[0].n_dims = 2;
	write_init_model(tmp("huge.onnx"), tp, 1);
	assert_int_equal(load_kind(tmp("huge.onnx")), OM_ERR_INVALID_MODEL);
	huge[0] = -1;
	write_init_model(tmp("neg.onnx"), tp, 1);
	assert_int_equal(load_kind(tmp("neg.onnx")), OM_ERR_INVALID_MODEL);
}

/* ---- what the IR does not model comes back unchanged ------------------------------------- */

static Onnx__StringStringEntryProto kv_a = ONNX__STRING_STRING_ENTRY_PROTO__INIT;

static void unmodelled_fields_kept(void **state)
{
	(void)state;
	Onnx__StringStringEntryProto *kvs[1] = {&kv_a};
	kv_a.key = "k", kv_a.value = "v";
	/* a node y = MyFn(x) with an overload, metadata, device configuration and attributes of
	 * the kept kinds (type proto, sparse tensor) */
	Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
	tt.has_elem_type = 1, tt.elem_type = OM_FLOAT;
	Onnx__TypeProto ty = ONNX__TYPE_PROTO__INIT;
	ty.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, ty.tensor_type = &tt;
	ty.denotation = "IMAGE";
	Onnx__TypeProto__Sequence sq = ONNX__TYPE_PROTO__SEQUENCE__INIT;
	sq.elem_type = &ty;
	Onnx__TypeProto seq = ONNX__TYPE_PROTO__INIT;
	seq.value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE, seq.sequence_type = &sq;
	Onnx__AttributeProto a_tp = ONNX__ATTRIBUTE_PROTO__INIT, a_sp = ONNX__ATTRIBUTE_PROTO__INIT,
			     a_i = ONNX__ATTRIBUTE_PROTO__INIT;
	a_tp.name = "tp", a_tp.has_type = 1, a_tp.tp = &seq;
	a_tp.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO;
	int64_t one = 1, four = 4;
	float fv = 2.5f;
	Onnx__TensorProto sv = ONNX__TENSOR_PROTO__INIT, si = ONNX__TENSOR_PROTO__INIT;
	sv.n_dims = 1, sv.dims = &one, sv.has_data_type = 1, sv.data_type = OM_FLOAT;
	sv.n_float_data = 1, sv.float_data = &fv;
	int64_t idx = 2;
	si.n_dims = 1, si.dims = &one, si.has_data_type = 1, si.data_type = OM_INT64;
	si.n_int64_data = 1, si.int64_data = &idx;
	Onnx__SparseTensorProto sp = ONNX__SPARSE_TENSOR_PROTO__INIT, *spp = &sp;
	sp.values = &sv, sp.indices = &si, sp.n_dims = 1, sp.dims = &four;
	a_sp.name = "sp", a_sp.has_type = 1;
	a_sp.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR;
	a_sp.sparse_tensor = &sp;
	a_i.name = "alpha", a_i.has_type = 1, a_i.has_i = 1, a_i.i = 3;
	a_i.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a_i.doc_string = "attribute doc";
	Onnx__AttributeProto *attrs[3] = {&a_tp, &a_sp, &a_i};
	Onnx__NodeDeviceConfigurationProto dc = ONNX__NODE_DEVICE_CONFIGURATION_PROTO__INIT,
					   *dcp = &dc;
	dc.configuration_id = "cfg", dc.has_pipeline_stage = 1, dc.pipeline_stage = 2;
	char *in[1] = {"x"}, *out[1] = {"y"};
	Onnx__NodeProto node = ONNX__NODE_PROTO__INIT, *np = &node;
	node.n_input = 1, node.input = in, node.n_output = 1, node.output = out;
	node.op_type = "MyFn", node.domain = "my.domain", node.overload = "v2", node.name = "n0";
	node.n_attribute = 3, node.attribute = attrs;
	node.n_metadata_props = 1, node.metadata_props = kvs;
	node.n_device_configurations = 1, node.device_configurations = &dcp;
	/* graph: typed input with a denotation and metadata, a sparse initializer, an annotation */
	Onnx__ValueInfoProto vx = ONNX__VALUE_INFO_PROTO__INIT, vy = ONNX__VALUE_INFO_PROTO__INIT;
	vx.name = "x", vx.type = &ty, vx.n_metadata_props = 1, vx.metadata_props = kvs;
	vy.name = "y", vy.doc_string = "the output";
	Onnx__ValueInfoProto *vin = &vx, *vout = &vy;
	Onnx__TensorAnnotation qa = ONNX__TENSOR_ANNOTATION__INIT, *qap = &qa;
	qa.tensor_name = "y";
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	g.name = "g", g.n_node = 1, g.node = &np, g.n_input = 1, g.input = &vin;
	g.n_output = 1, g.output = &vout, g.n_sparse_initializer = 1, g.sparse_initializer = &spp;
	g.n_quantization_annotation = 1, g.quantization_annotation = &qap;
	g.n_metadata_props = 1, g.metadata_props = kvs;
	/* model: the function MyFn, training info, a device configuration, metadata */
	char *fin[1] = {"a"}, *fout[1] = {"b"}, *nin[1] = {"a"}, *nout[1] = {"b"};
	Onnx__NodeProto fnode = ONNX__NODE_PROTO__INIT, *fnp = &fnode;
	fnode.op_type = "Identity", fnode.n_input = 1, fnode.input = nin;
	fnode.n_output = 1, fnode.output = nout;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, os2 = os;
	os.domain = "", os.has_version = 1, os.version = 18;
	os2.domain = "my.domain", os2.has_version = 1, os2.version = 1;
	Onnx__OperatorSetIdProto *ops[2] = {&os, &os2};
	Onnx__FunctionProto fn = ONNX__FUNCTION_PROTO__INIT, *fnp2 = &fn;
	fn.name = "MyFn", fn.domain = "my.domain", fn.overload = "v2", fn.n_input = 1;
	fn.input = fin, fn.n_output = 1, fn.output = fout, fn.n_node = 1, fn.node = &fnp;
	fn.n_opset_import = 1, fn.opset_import = ops;
	Onnx__TrainingInfoProto ti = ONNX__TRAINING_INFO_PROTO__INIT, *tip = &ti;
	ti.n_update_binding = 1, ti.update_binding = kvs;
	char *devs[2] = {"cpu0", "cpu1"};
	Onnx__DeviceConfigurationProto cfg = ONNX__DEVICE_CONFIGURATION_PROTO__INIT, *cfgp = &cfg;
	cfg.name = "cfg", cfg.has_num_devices = 1, cfg.num_devices = 2, cfg.n_device = 2;
	cfg.device = devs;
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	mp.has_ir_version = 1, mp.ir_version = 11, mp.graph = &g, mp.n_opset_import = 2;
	mp.opset_import = ops, mp.producer_name = "hand", mp.producer_version = "1";
	mp.domain = "test.domain", mp.has_model_version = 1, mp.model_version = 7;
	mp.doc_string = "doc", mp.n_metadata_props = 1, mp.metadata_props = kvs;
	mp.n_functions = 1, mp.functions = &fnp2, mp.n_training_info = 1, mp.training_info = &tip;
	mp.n_configuration = 1, mp.configuration = &cfgp;
	size_t size = protobuf_c_message_get_packed_size(&mp.base);
	uint8_t *buf = malloc(size);
	protobuf_c_message_pack(&mp.base, buf);
	om_model *m = NULL, *m2 = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load_memory(buf, size, NULL, &m, &st), OM_OK);
	free(buf);
	const om_node *n = m->graph->nodes[0];
	assert_string_equal(n->overload, "v2");
	assert_string_equal(n->domain, "my.domain");
	assert_int_equal(n->nmeta, 1);
	assert_int_equal(om_attr_int(n, "alpha", 0), 3);
	assert_int_equal(om_model_opset(m, "my.domain"), 1);
	assert_int_equal(om_graph_find(m->graph, "x")->type.kind, OM_TYPE_TENSOR);
	char *d1 = dump(m);
	forget_protos(m->graph);
	assert_int_equal(om_model_save(m, tmp("kept.onnx"), NULL, &st), OM_OK);
	assert_int_equal(om_model_load(tmp("kept.onnx"), &m2, &st), OM_OK);
	char *d2 = dump(m2);
	assert_string_equal(d1, d2);
	const Onnx__ModelProto *r = m2->proto;
	assert_int_equal(r->ir_version, 11);
	assert_int_equal(r->model_version, 7);
	assert_int_equal(r->n_functions, 1);
	assert_string_equal(r->functions[0]->overload, "v2");
	assert_int_equal(r->functions[0]->n_node, 1);
	assert_int_equal(r->n_training_info, 1);
	assert_int_equal(r->n_configuration, 1);
	assert_int_equal(r->configuration[0]->num_devices, 2);
	assert_int_equal(r->n_metadata_props, 1);
	const Onnx__GraphProto *rg = r->graph;
	assert_int_equal(rg->n_sparse_initializer, 1);
	assert_int_equal(rg->sparse_initializer[0]->dims[0], 4);
	assert_int_equal(rg->n_quantization_annotation, 1);
	assert_int_equal(rg->n_metadata_props, 1);
	assert_int_equal(rg->input[0]->n_metadata_props, 1);
	assert_string_equal(rg->input[0]->type->denotation, "IMAGE");
	assert_string_equal(rg->output[0]->doc_string, "the output");
	const Onnx__NodeProto *rn = rg->node[0];
	assert_int_equal(rn->n_device_configurations, 1);
	assert_int_equal(rn->device_configurations[0]->pipeline_stage, 2);
	assert_int_equal(rn->n_attribute, 3);
	assert_int_equal(rn->attribute[0]->tp->value_case, ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE);
	assert_true(rn->attribute[1]->sparse_tensor->values->float_data[0] == 2.5f);
	assert_string_equal(rn->attribute[2]->doc_string, "attribute doc");
	free(d1), free(d2);
	om_model_free(m);
	om_model_free(m2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(not_a_model),
		cmocka_unit_test(tensor_files),
		cmocka_unit_test(npy_versions),
		cmocka_unit_test(npy_header_dict),
		cmocka_unit_test(pb_values_from_suite),
		cmocka_unit_test(typed_fields),
		cmocka_unit_test(unmodelled_fields_kept),
		cmocka_unit_test(external_data_roundtrip),
		cmocka_unit_test(external_data_checked),
		cmocka_unit_test(deep_nesting_refused),
		cmocka_unit_test(corrupted_models),
		cmocka_unit_test(load_messages),
		cmocka_unit_test(roundtrip_real_models),
		cmocka_unit_test(roundtrip_onnx_1_12),
		cmocka_unit_test(roundtrip_onnx_1_23),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
