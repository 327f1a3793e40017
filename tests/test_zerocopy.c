/* test_zerocopy.c — a loaded model's initializers point into the read-only mapping of its file
 * (a misaligned payload is copied, aligned, unless only byte-move readers such as Gather read
 * it), the mapping lives as long as the model and the
 * sessions made from it, a simplify never writes to the file it read, and models over the
 * model-file limit are saved with external data (a small limit stands for protobuf's 2 GB). */
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onnx_io.h"
#include "testutil.h"

enum { N = 4096, NW = 8 }; /* floats per weight; weights w, ww, ..., 8 w's */

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	return tu_tmpdir_make(tmpdir, sizeof tmpdir, "omopt_zerocopy_");
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

/* mp packed into the file at path */
static void write_proto(const char *path, const Onnx__ModelProto *mp)
{
	const size_t size = protobuf_c_message_get_packed_size(&mp->base);
	uint8_t *buf = malloc(size);
	assert_non_null(buf);
	protobuf_c_message_pack(&mp->base, buf);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, size, f), size);
	fclose(f);
	free(buf);
}

/* The value of element i of weight k: distinct everywhere, so a payload is found by content. */
static float wval(int k, int i)
{
	return (float)(k * 100000 + i) + 0.5f;
}

/* Writes: input x float[n]; NW initializers w, ww, ... (name lengths 1..NW move the payloads
 * through every offset mod 8) of float[n] in raw_data; outputs y_k = Add(x, w_k), or
 * Add(x, Neg(w_k)) with `neg` (a fold that leaves w_k unread). */
static void write_model_neg(const char *path, int n, bool neg)
{
	float *data[NW];
	static char names[NW][NW + 1], outs[NW][8];
	Onnx__TensorProto t[NW], *tp[NW];
	Onnx__NodeProto nd[2 * NW], *np[2 * NW];
	char *ins[NW][2], *outp[NW], *negin[NW], *negout[NW];
	static char negs[NW][16];
	Onnx__ValueInfoProto vi[NW + 1], *vin[1], *vout[NW];
	Onnx__TypeProto ty = ONNX__TYPE_PROTO__INIT;
	Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
	Onnx__TensorShapeProto sh = ONNX__TENSOR_SHAPE_PROTO__INIT;
	Onnx__TensorShapeProto__Dimension dim = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT, *dp = &dim;
	dim.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE, dim.dim_value = n;
	sh.n_dim = 1, sh.dim = &dp;
	tt.has_elem_type = 1, tt.elem_type = OM_FLOAT, tt.shape = &sh;
	ty.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, ty.tensor_type = &tt;
	int64_t dims[1] = {n};
	for (int k = 0; k < NW; k++) {
		data[k] = malloc(sizeof(float) * (size_t)n);
		assert_non_null(data[k]);
		memset(names[k], 'w', (size_t)k + 1);
		names[k][k + 1] = 0;
		snprintf(outs[k], sizeof outs[k], "y%d", k);
		for (int i = 0; i < n; i++)
			data[k][i] = wval(k, i);
		t[k] = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
		t[k].name = names[k], t[k].n_dims = 1, t[k].dims = dims;
		t[k].has_data_type = 1, t[k].data_type = OM_FLOAT;
		t[k].has_raw_data = 1;
		t[k].raw_data = (ProtobufCBinaryData){sizeof(float) * (size_t)n, (uint8_t *)data[k]};
		tp[k] = &t[k];
		nd[k] = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
		ins[k][0] = "x", ins[k][1] = names[k], outp[k] = outs[k];
		nd[k].op_type = "Add", nd[k].n_input = 2, nd[k].input = ins[k];
		nd[k].n_output = 1, nd[k].output = &outp[k];
		np[k] = &nd[k];
		if (neg) { /* Neg(w_k) -> neg_k, read by the Add instead of w_k */
			snprintf(negs[k], sizeof negs[k], "neg%d", k);
			negin[k] = names[k], negout[k] = negs[k], ins[k][1] = negs[k];
			nd[NW + k] = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
			nd[NW + k].op_type = "Neg", nd[NW + k].n_input = 1, nd[NW + k].input = &negin[k];
			nd[NW + k].n_output = 1, nd[NW + k].output = &negout[k];
			np[k] = &nd[NW + k], np[NW + k] = &nd[k];
		}
		vi[k + 1] = (Onnx__ValueInfoProto)ONNX__VALUE_INFO_PROTO__INIT;
		vi[k + 1].name = outs[k], vi[k + 1].type = &ty;
		vout[k] = &vi[k + 1];
	}
	vi[0] = (Onnx__ValueInfoProto)ONNX__VALUE_INFO_PROTO__INIT;
	vi[0].name = "x", vi[0].type = &ty;
	vin[0] = &vi[0];
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	g.name = "g", g.n_initializer = NW, g.initializer = tp, g.n_node = neg ? 2 * NW : NW;
	g.node = np;
	g.n_input = 1, g.input = vin, g.n_output = NW, g.output = vout;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *osp = &os;
	os.domain = "", os.has_version = 1, os.version = 13;
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	mp.has_ir_version = 1, mp.ir_version = 8, mp.graph = &g;
	mp.n_opset_import = 1, mp.opset_import = &osp;
	write_proto(path, &mp);
	for (int k = 0; k < NW; k++)
		free(data[k]);
}

static void write_model_n(const char *path, int n)
{
	write_model_neg(path, n, false);
}

static void write_model(const char *path)
{
	write_model_n(path, N);
}

static om_model *load(const char *path)
{
	om_model *m = NULL;
	om_status st = {0};
	if (om_model_load(path, &m, &st))
		fail_msg("loading %s: %s", path, st.msg);
	return m;
}

static const om_source *source(const om_model *m)
{
	const om_io_resources *res = m->resources;
	assert_non_null(res);
	assert_non_null(res->src);
	return res->src;
}

/* The offset of weight k's payload in the file's bytes. */
static size_t payload_offset(const unsigned char *file, size_t n, int k)
{
	float first[4] = {wval(k, 0), wval(k, 1), wval(k, 2), wval(k, 3)};
	for (size_t i = 0; i + sizeof first <= n; i++)
		if (!memcmp(file + i, first, sizeof first))
			return i;
	fail_msg("weight %d not in the file", k);
	return 0;
}

static void initializers_borrowed(void **state)
{
	(void)state;
	write_model(tmp("m.onnx"));
	size_t n;
	unsigned char *file = slurp(tmp("m.onnx"), &n);
	om_model *m = load(tmp("m.onnx"));
	const om_source *src = source(m);
	assert_int_equal(src->size, n);
	assert_memory_equal(src->base, file, n); /* the mapping is the file */
	int borrowed = 0, copied = 0;
	for (int k = 0; k < NW; k++) {
		char name[NW + 1];
		memset(name, 'w', (size_t)k + 1);
		name[k + 1] = 0;
		const om_value *v = om_graph_find(m->graph, name);
		assert_non_null(v);
		assert_non_null(v->init);
		const size_t off = payload_offset(file, n, k);
		const unsigned char *at = src->base + off;
		assert_int_equal((uintptr_t)v->init->data % sizeof(float), 0);
		assert_memory_equal(v->init->data, file + off, N * sizeof(float));
		if (off % sizeof(float) == 0) { /* the page offset keeps file alignment */
			assert_ptr_equal(v->init->data, at);
			borrowed++;
		} else {
			assert_ptr_not_equal(v->init->data, at);
			copied++;
		}
	}
	/* names of 1..8 bytes put the payloads at several residues mod 4: both kinds occur */
	assert_true(borrowed > 0 && copied > 0);
	assert_int_equal(src->borrowed, (size_t)borrowed * N * sizeof(float));
	assert_int_equal(src->copied, (size_t)copied * N * sizeof(float));
	free(file);
	om_model_free(m);
}

/* A copied (misaligned) payload of 64 KiB or more leaves no pages behind in the mapping: its
 * whole pages there become an empty inaccessible range, so that a kernel mapping whole page-cache
 * folios around a neighbour's fault cannot make them resident beside the copy (mincore: the
 * file's pages are in the page cache, having just been written; the range's are not). The
 * values, a run and a save are unchanged. */
static void copied_payload_pages_released(void **state)
{
	(void)state;
	enum { BIG = 32768 }; /* floats: 128 KiB per weight */
	write_model_n(tmp("h.onnx"), BIG);
	size_t n;
	unsigned char *file = slurp(tmp("h.onnx"), &n);
	om_model *m = load(tmp("h.onnx"));
	const om_source *src = source(m);
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int copied = 0, borrowed = 0;
	for (int k = 0; k < NW; k++) {
		const size_t off = payload_offset(file, n, k), len = BIG * sizeof(float);
		const uintptr_t at = (uintptr_t)src->base + off;
		const uintptr_t lo = (at + page - 1) / page * page, hi = (at + len) / page * page;
		unsigned char vec[64];
		assert_true((hi - lo) / page <= sizeof vec);
		assert_int_equal(mincore((void *)lo, hi - lo, vec), 0);
		size_t resident = 0;
		for (size_t i = 0; i < (hi - lo) / page; i++)
			resident += vec[i] & 1;
		if (off % sizeof(float)) {
			assert_int_equal(resident, 0);
			copied++;
		} else {
			assert_int_equal(resident, (hi - lo) / page);
			borrowed++;
		}
	}
	assert_true(copied > 0 && borrowed > 0);
	om_session *s = tu_session_create(m);
	om_tensor x = {.dtype = OM_FLOAT, .rank = 1, .dims = {BIG}};
	float *xd = calloc(BIG, sizeof(float));
	x.data = xd, x.nbytes = BIG * sizeof(float);
	om_tensor y[NW];
	om_status st = {0};
	if (om_session_run(s, &x, 1, y, NW, &st))
		fail_msg("run: %s", st.msg);
	for (int k = 0; k < NW; k++) {
		for (int i = 0; i < BIG; i++)
			assert_true(((const float *)y[k].data)[i] == wval(k, i));
		om_tensor_free(&y[k]);
	}
	om_session_free(s);
	assert_int_equal(om_model_save(m, tmp("h2.onnx"), NULL, &st), OM_OK);
	om_model_free(m);
	om_model *b = load(tmp("h2.onnx"));
	for (int32_t i = 0; i < b->graph->ninits; i++) {
		const om_tensor *t = b->graph->inits[i]->init;
		const int k = (int)strlen(b->graph->inits[i]->name) - 1;
		for (int j = 0; j < BIG; j++)
			assert_true(((const float *)t->data)[j] == wval(k, j));
	}
	om_model_free(b);
	free(xd);
	free(file);
}

/* Whether the payload of weight k (at off in the file, len bytes) still takes memory in m:
 * a copy while its TensorProto keeps raw_data; pages of the mapping while mincore says so. */
static size_t payload_resident(const om_model *m, const unsigned char *file, size_t n, int k,
			       size_t len)
{
	const om_source *src = source(m);
	const Onnx__ModelProto *mp = ((const om_io_resources *)m->resources)->proto;
	const size_t off = payload_offset(file, n, k);
	if (off % sizeof(float)) {
		for (size_t i = 0; i < mp->graph->n_initializer; i++) {
			const Onnx__TensorProto *tp = mp->graph->initializer[i];
			if (strlen(tp->name) == (size_t)k + 1)
				return tp->raw_data.data ? tp->raw_data.len : 0;
		}
		fail_msg("weight %d has no TensorProto", k);
	}
	/* mapped into this process (pagemap's present bit), not merely in the page cache
	 * (mincore's answer for a file mapping) */
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const uintptr_t at = (uintptr_t)src->base + off;
	const uintptr_t lo = (at + page - 1) / page * page, hi = (at + len) / page * page;
	FILE *f = fopen("/proc/self/pagemap", "rb");
	assert_non_null(f);
	size_t resident = 0;
	for (uintptr_t a = lo; a < hi; a += page) {
		uint64_t e = 0;
		assert_int_equal(fseek(f, (long)(a / page * sizeof e), SEEK_SET), 0);
		assert_int_equal(fread(&e, sizeof e, 1, f), 1);
		resident += (e >> 63 & 1) * page;
	}
	fclose(f);
	return resident;
}

/* A weight that a fold leaves unread gives its memory back at once (issue 37: a model whose
 * weights are all folded stays near its own size): a copied payload is freed, the mapping's
 * pages under a borrowed one are released. Not while a session holds the model (it reads the
 * same payloads). The folded model gives -w_k. */
static void folded_weights_give_memory_back(void **state)
{
	(void)state;
	enum { BIG = 32768 }; /* floats: 128 KiB per weight */
	const size_t len = BIG * sizeof(float);
	write_model_neg(tmp("f.onnx"), BIG, true);
	size_t n;
	unsigned char *file = slurp(tmp("f.onnx"), &n);
	om_status st = {0};
	/* held by a session: nothing is given back */
	om_model *m = load(tmp("f.onnx"));
	om_session *s = tu_session_create(m);
	for (int k = 0; k < NW; k++) /* borrowed pages: read once so that they are resident */
		assert_true(((const float *)om_graph_find(m->graph, "w")->init->data)[0] == wval(0, 0));
	assert_int_equal(om_simplify(m, NULL, &st), OM_OK);
	int kept = 0;
	for (int k = 0; k < NW; k++)
		kept += payload_offset(file, n, k) % sizeof(float) != 0 &&
			payload_resident(m, file, n, k, len) == len;
	assert_true(kept > 0); /* the copies stay */
	om_session_free(s);
	om_model_free(m);
	/* the model's own: every payload goes */
	m = load(tmp("f.onnx"));
	for (int32_t i = 0; i < m->graph->ninits; i++) { /* fault the borrowed pages in */
		double sum = 0;
		const om_tensor *t = m->graph->inits[i]->init;
		for (int64_t j = 0; j < om_tensor_numel(t); j += 256)
			sum += ((const float *)t->data)[j];
		assert_true(sum > 0); /* every wval is positive */
	}
	assert_int_equal(om_simplify(m, NULL, &st), OM_OK);
	for (int k = 0; k < NW; k++)
		assert_int_equal(payload_resident(m, file, n, k, len), 0);
	assert_int_equal(m->graph->ninits, NW);
	s = tu_session_create(m);
	om_tensor x = {.dtype = OM_FLOAT, .rank = 1, .dims = {BIG}};
	float *xd = calloc(BIG, sizeof(float));
	x.data = xd, x.nbytes = len;
	om_tensor y[NW];
	if (om_session_run(s, &x, 1, y, NW, &st))
		fail_msg("run: %s", st.msg);
	for (int k = 0; k < NW; k++) {
		for (int i = 0; i < BIG; i += 97)
			assert_true(((const float *)y[k].data)[i] == -wval(k, i));
		om_tensor_free(&y[k]);
	}
	om_session_free(s);
	om_model_free(m);
	free(xd);
	free(file);
}

/* A write into a borrowed initializer faults (the mapping is read-only) instead of changing
 * the model's data silently. */
static void borrowed_bytes_read_only(void **state)
{
	(void)state;
	write_model(tmp("ro.onnx"));
	om_model *m = load(tmp("ro.onnx"));
	const om_source *src = source(m);
	float *target = NULL;
	for (const om_graph *g = m->graph; g && !target; g = NULL)
		for (int32_t i = 0; i < g->ninits; i++) {
			const uintptr_t p = (uintptr_t)g->inits[i]->init->data;
			if (p >= (uintptr_t)src->base && p < (uintptr_t)src->base + src->size)
				target = g->inits[i]->init->data;
		}
	assert_non_null(target);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		*(volatile float *)target = 1.0f;
		_exit(0); /* the write went through: the test fails */
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	/* killed by the fault, or (sanitizer builds) reported and exited non-zero */
	assert_true(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0));
	om_model_free(m);
}

/* A session keeps its model (and the mapping its weights are in) alive. */
static void session_outlives_model(void **state)
{
	(void)state;
	write_model(tmp("s.onnx"));
	om_model *m = load(tmp("s.onnx"));
	om_session *s = tu_session_create(m);
	om_model_free(m); /* the session's reference keeps it */
	om_tensor x = {.dtype = OM_FLOAT, .rank = 1, .dims = {N}};
	float *xd = malloc(N * sizeof(float));
	for (int i = 0; i < N; i++)
		xd[i] = (float)(i % 7);
	x.data = xd, x.nbytes = N * sizeof(float);
	om_tensor y[NW];
	om_status st = {0};
	if (om_session_run(s, &x, 1, y, NW, &st))
		fail_msg("run: %s", st.msg);
	for (int k = 0; k < NW; k++) {
		const float *yd = y[k].data;
		for (int i = 0; i < N; i++)
			assert_true(yd[i] == xd[i] + wval(k, i));
		om_tensor_free(&y[k]);
	}
	free(xd);
	om_session_free(s); /* frees the model too: ASan reports a leak otherwise */
}

/* y = MatMul(x, Transpose(w)): simplify folds the Transpose into a new weight. The input file
 * keeps its bytes, and two saves of the result are the same bytes. */
static void simplify_never_writes_its_input(void **state)
{
	(void)state;
	const int R = 64, C = 32;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	const int64_t wd[2] = {R, C};
	om_value *w = om_graph_value(g, "w");
	w->flags |= OM_VALUE_INITIALIZER;
	w->init = om_model_tensor(m, OM_FLOAT, 2, wd);
	float *wp = w->init->data;
	for (int i = 0; i < R * C; i++)
		wp[i] = (float)i * 0.25f - 3.0f;
	om_type_from_tensor(m, &w->type, w->init);
	tu_push_value(g, &g->inits, &g->ninits, w);
	om_value *x = om_graph_value(g, "x");
	x->flags |= OM_VALUE_GRAPH_INPUT;
	x->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = OM_FLOAT, .rank = 2};
	x->type.dims = om_arena_alloc(m->arena, 2 * sizeof(om_dim));
	x->type.dims[0] = (om_dim){1, NULL}, x->type.dims[1] = (om_dim){C, NULL};
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	int64_t perm[2] = {1, 0};
	tu_attr_ints(tu_graph_node(g, "Transpose", "w", "wt"), "perm", 2, perm);
	tu_graph_node(g, "MatMul", "x,wt", "y");
	om_value *y = om_graph_find(g, "y");
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	om_status st = {0};
	assert_int_equal(om_model_save(m, tmp("t.onnx"), NULL, &st), OM_OK);
	om_model_free(m);

	size_t n0;
	unsigned char *before = slurp(tmp("t.onnx"), &n0);
	om_model *a = load(tmp("t.onnx"));
	if (om_simplify(a, NULL, &st))
		fail_msg("simplify: %s", st.msg);
	assert_int_equal(tu_count_op(a->graph, "Transpose"), 0);
	assert_int_equal(om_model_save(a, tmp("t1.onnx"), NULL, &st), OM_OK);
	assert_int_equal(om_model_save(a, tmp("t2.onnx"), NULL, &st), OM_OK);
	om_model_free(a);
	size_t n, n1, n2;
	unsigned char *after = slurp(tmp("t.onnx"), &n);
	unsigned char *o1 = slurp(tmp("t1.onnx"), &n1), *o2 = slurp(tmp("t2.onnx"), &n2);
	assert_int_equal(n, n0);
	assert_memory_equal(after, before, n);
	assert_int_equal(n1, n2);
	assert_memory_equal(o1, o2, n1);
	/* the folded weight is w transposed */
	om_model *b = load(tmp("t1.onnx"));
	const om_value *wt = NULL;
	for (int32_t i = 0; i < b->graph->ninits; i++)
		wt = b->graph->inits[i];
	assert_non_null(wt);
	assert_int_equal(wt->init->dims[0], C);
	const float *tp = wt->init->data;
	for (int r = 0; r < R; r++)
		for (int c = 0; c < C; c++)
			assert_true(tp[c * R + r] == (float)(r * C + c) * 0.25f - 3.0f);
	om_model_free(b);
	free(before), free(after), free(o1), free(o2);
}

static int64_t file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

/* The size of the one file matching pattern (under tmpdir), -1 when none (two: a failure). */
static int64_t glob_size(const char *pattern)
{
	glob_t g;
	if (glob(tmp(pattern), 0, NULL, &g) != 0)
		return -1;
	assert_int_equal(g.gl_pathc, 1);
	const int64_t n = file_size(g.gl_pathv[0]);
	globfree(&g);
	return n;
}

/* Over the model-file limit (INT32_MAX in om_model_save; 20000 bytes here) the weights go to
 * external data without being asked, each weight above the limit itself included. */
static void over_the_limit_goes_external(void **state)
{
	(void)state;
	write_model(tmp("big.onnx")); /* 8 weights of 16384 bytes */
	om_model *m = load(tmp("big.onnx"));
	om_status st = {0};
	assert_int_equal(om_onnx_save(m, tmp("o.onnx"), NULL, 20000, &st), OM_OK);
	assert_int_equal(glob_size("o.onnx.*.data"), (int64_t)(NW * N * sizeof(float)));
	assert_true(file_size(tmp("o.onnx")) < 20000);
	om_model *b = load(tmp("o.onnx"));
	for (int32_t i = 0; i < b->graph->ninits; i++) {
		const om_tensor *t = b->graph->inits[i]->init;
		const int k = (int)strlen(b->graph->inits[i]->name) - 1;
		assert_int_equal(t->nbytes, N * sizeof(float));
		for (int j = 0; j < N; j++)
			assert_true(((const float *)t->data)[j] == wval(k, j));
	}
	/* external data is written 64-byte aligned: every weight is borrowed from its mapping */
	const om_io_resources *res = b->resources;
	assert_non_null(res->maps);
	const uintptr_t base = (uintptr_t)res->maps->ptr;
	for (int32_t i = 0; i < b->graph->ninits; i++) {
		const uintptr_t p = (uintptr_t)b->graph->inits[i]->init->data;
		assert_true(p >= base && p < base + res->maps->size);
	}
	om_model_free(b);
	/* a limit the model file cannot meet even with its weights outside is refused */
	assert_int_equal(om_onnx_save(m, tmp("p.onnx"), NULL, 100, &st), OM_ERR_UNSUPPORTED);
	assert_int_equal(file_size(tmp("p.onnx")), -1);
	assert_int_equal(glob_size("p.onnx*"), -1);
	assert_int_equal(glob_size(".p.onnx*"), -1);
	om_model_free(m);
}

/* ---- a Gather over a misaligned table (issue 34: peak memory of decoders) ---- */

enum { TR = 2048, TC = 1024 }; /* table rows and columns: 8 MiB of float (a table under that
				 * is not given back: runtime/plan.c GIVE_BACK_MIN) */
enum { NIDX = 16 }; /* rows a run gathers: a gather of 16 or more gives the pages back */

/* The gather models' graph types: the indices int64[NIDX] (idx), a float tensor (out); the
 * members point at one another, so the struct stays where gather_types_init made it */
typedef struct gather_types {
	Onnx__TensorShapeProto__Dimension dim, *dp;
	Onnx__TensorShapeProto sh;
	Onnx__TypeProto__Tensor ti, tf;
	Onnx__TypeProto idx, out;
} gather_types;

static void gather_types_init(gather_types *t)
{
	*t = (gather_types){.dim = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT,
			    .sh = ONNX__TENSOR_SHAPE_PROTO__INIT,
			    .ti = ONNX__TYPE_PROTO__TENSOR__INIT, .tf = ONNX__TYPE_PROTO__TENSOR__INIT,
			    .idx = ONNX__TYPE_PROTO__INIT, .out = ONNX__TYPE_PROTO__INIT};
	t->dim.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	t->dim.dim_value = NIDX;
	t->dp = &t->dim;
	t->sh.n_dim = 1, t->sh.dim = &t->dp;
	t->ti.has_elem_type = 1, t->ti.elem_type = OM_INT64, t->ti.shape = &t->sh;
	t->tf.has_elem_type = 1, t->tf.elem_type = OM_FLOAT;
	t->idx.value_case = t->out.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	t->idx.tensor_type = &t->ti, t->out.tensor_type = &t->tf;
}

/* Writes y = Gather(table, idx) (idx int64[3]) and, with `neg`, also z = Neg(table), the table
 * float[TR, TC] of wval(0, i) named by `namelen` 't's (which moves its payload's offset). */
static void write_gather_model(const char *path, int namelen, bool neg)
{
	static char name[16];
	memset(name, 't', (size_t)namelen);
	name[namelen] = 0;
	float *data = malloc(sizeof(float) * TR * TC);
	assert_non_null(data);
	for (int i = 0; i < TR * TC; i++)
		data[i] = wval(0, i);
	int64_t dims[2] = {TR, TC};
	Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT, *tp = &t;
	t.name = name, t.n_dims = 2, t.dims = dims, t.has_data_type = 1, t.data_type = OM_FLOAT;
	t.has_raw_data = 1, t.raw_data = (ProtobufCBinaryData){sizeof(float) * TR * TC,
							       (uint8_t *)data};
	char *gin[2] = {name, "idx"}, *gout[1] = {"y"}, *nin[1] = {name}, *nout[1] = {"z"};
	Onnx__NodeProto nd[2] = {ONNX__NODE_PROTO__INIT, ONNX__NODE_PROTO__INIT};
	Onnx__NodeProto *np[2] = {&nd[0], &nd[1]};
	nd[0].op_type = "Gather", nd[0].n_input = 2, nd[0].input = gin;
	nd[0].n_output = 1, nd[0].output = gout;
	nd[1].op_type = "Neg", nd[1].n_input = 1, nd[1].input = nin;
	nd[1].n_output = 1, nd[1].output = nout;
	gather_types ty;
	gather_types_init(&ty);
	Onnx__ValueInfoProto vi[3] = {ONNX__VALUE_INFO_PROTO__INIT, ONNX__VALUE_INFO_PROTO__INIT,
				      ONNX__VALUE_INFO_PROTO__INIT};
	Onnx__ValueInfoProto *vin[1] = {&vi[0]}, *vout[2] = {&vi[1], &vi[2]};
	vi[0].name = "idx", vi[0].type = &ty.idx;
	vi[1].name = "y", vi[1].type = &ty.out;
	vi[2].name = "z", vi[2].type = &ty.out;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	g.name = "g", g.n_initializer = 1, g.initializer = &tp, g.n_node = neg ? 2 : 1, g.node = np;
	g.n_input = 1, g.input = vin, g.n_output = neg ? 2 : 1, g.output = vout;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *osp = &os;
	os.domain = "", os.has_version = 1, os.version = 13;
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	mp.has_ir_version = 1, mp.ir_version = 8, mp.graph = &g;
	mp.n_opset_import = 1, mp.opset_import = &osp;
	write_proto(path, &mp);
	free(data);
}

/* A gather model whose table is misaligned for float in the file; *off its payload's offset. */
static const char *misaligned_gather_model(bool neg, size_t *off, char *name)
{
	const char *path = tmp(neg ? "gn.onnx" : "g.onnx");
	for (int len = 1; len <= 8; len++) {
		write_gather_model(path, len, neg);
		size_t n;
		unsigned char *file = slurp(path, &n);
		*off = payload_offset(file, n, 0);
		free(file);
		if (*off % sizeof(float)) {
			memset(name, 't', (size_t)len);
			name[len] = 0;
			return path;
		}
	}
	fail_msg("no name length puts the table at a misaligned offset");
	return NULL;
}

/* Bytes of [p, p + len) mapped into this process (pagemap's present bit), whole pages. */
static size_t mapped_bytes(const void *p, size_t len)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const uintptr_t lo = ((uintptr_t)p + page - 1) / page * page;
	const uintptr_t hi = ((uintptr_t)p + len) / page * page;
	FILE *f = fopen("/proc/self/pagemap", "rb");
	assert_non_null(f);
	size_t resident = 0;
	for (uintptr_t a = lo; a < hi; a += page) {
		uint64_t e = 0;
		assert_int_equal(fseek(f, (long)(a / page * sizeof e), SEEK_SET), 0);
		assert_int_equal(fread(&e, sizeof e, 1, f), 1);
		resident += (e >> 63 & 1) * page;
	}
	fclose(f);
	return resident;
}

/* Runs the gather model's session on NIDX rows far apart (the last -12) and checks y (and
 * z = -table). */
static void run_gather(const om_model *m, bool neg)
{
	om_session *s = tu_session_create(m);
	int64_t idx[NIDX], rows[NIDX];
	for (int r = 0; r < NIDX; r++)
		idx[r] = rows[r] = (int64_t)r * (TR / NIDX) + 3;
	idx[NIDX - 1] = -12, rows[NIDX - 1] = TR - 12;
	om_tensor x = {.dtype = OM_INT64, .rank = 1, .dims = {NIDX}, .data = (void *)idx,
		       .nbytes = sizeof idx};
	om_tensor y[2];
	om_status st = {0};
	if (om_session_run(s, &x, 1, y, neg ? 2 : 1, &st))
		fail_msg("run: %s", st.msg);
	assert_int_equal(y[0].rank, 2);
	assert_int_equal(y[0].dims[0], NIDX);
	assert_int_equal(y[0].dims[1], TC);
	for (int r = 0; r < NIDX; r++)
		for (int c = 0; c < TC; c++)
			assert_true(((const float *)y[0].data)[r * TC + c] ==
				    wval(0, (int)rows[r] * TC + c));
	for (int i = 0; neg && i < TR * TC; i++)
		assert_true(((const float *)y[1].data)[i] == -wval(0, i));
	for (int i = 0; i < (neg ? 2 : 1); i++)
		om_tensor_free(&y[i]);
	om_session_free(s);
}

/* A misaligned table that only a Gather reads (OM_OP_UNALIGNED: byte moves) is not copied: the
 * session gives its pages back when it plans, and the Gather reads its rows from the file
 * (om_ctx_read_const) or, failing that, in the mapping, whose pages it gives back after it
 * ran (the kernel maps 64 KiB or a whole folio around each faulted page: 16 rows far apart
 * would leave ~1 MiB mapped). */
static void gather_reads_misaligned_table_in_place(void **state)
{
	(void)state;
	size_t off;
	char name[16];
	const char *path = misaligned_gather_model(false, &off, name);
	om_model *m = load(path);
	const om_source *src = source(m);
	const om_value *v = om_graph_find(m->graph, name);
	assert_non_null(v);
	assert_ptr_equal(v->init->data, src->base + off);
	assert_int_equal(src->copied, 0);
	assert_int_equal(src->deferred, sizeof(float) * TR * TC);
	run_gather(m, false);
	assert_true(mapped_bytes(v->init->data, v->init->nbytes) < (16 << 10));
	om_model_free(m);
}

/* om_model_file_read copies bytes of the model file without mapping them, and refuses what
 * is not in a file the loader keeps open */
static void file_read_leaves_pages_unmapped(void **state)
{
	(void)state;
	size_t off;
	char name[16];
	om_model *m = load(misaligned_gather_model(false, &off, name));
	const om_value *v = om_graph_find(m->graph, name);
	assert_non_null(v);
	const unsigned char *t = v->init->data;
	assert_true(om_model_file_pages(m, t, v->init->nbytes, true));
	const size_t row = sizeof(float) * TC, at = 1000 * row + 3 * sizeof(float);
	float got[TC];
	assert_true(om_model_file_read(m, t + at, row, got));
	for (int c = 0; c < TC; c++)
		assert_true(got[c] == wval(0, 1000 * TC + 3 + c));
	assert_int_equal(mapped_bytes(t, v->init->nbytes), 0);
	/* the last byte of the file, and not one past it */
	const om_source *src = source(m);
	assert_true(om_model_file_read(m, src->base + src->size - 1, 1, got));
	assert_false(om_model_file_read(m, src->base + src->size - 1, 2, got));
	assert_false(om_model_file_read(m, got, sizeof got, got + 1));
	om_model_free(m);

	/* loaded from memory: no file */
	size_t n;
	unsigned char *file = slurp(tmp("g.onnx"), &n);
	om_status st = {0};
	if (om_model_load_memory(file, n, NULL, &m, &st))
		fail_msg("load_memory: %s", st.msg);
	v = om_graph_find(m->graph, name);
	assert_non_null(v);
	assert_false(om_model_file_read(m, v->init->data, 16, got));
	om_model_free(m);
	free(file);
}

/* y = com.microsoft GatherBlockQuantized(codes, idx, scales): uint8 codes [GR, GC] of 4 bits
 * (2 GC codes a row, byte i = gbq_byte(i)), blocks of 32, float scales gbq_scale(s), no zero
 * points (8); idx int64[NIDX]. 8 MiB of codes: given back, read by rows of 4 KiB. */
enum { GR = 2048, GC = 4096 }; /* rows, bytes a row */
static uint8_t gbq_byte(int64_t i) { return (uint8_t)(i * 7 + i / 4096 * 3); }
static float gbq_scale(int64_t s) { return 0.5f + (float)(s % 61) / 64.0f; }

static void write_gbq_model(const char *path)
{
	enum { NS = GR * (2 * GC / 32) };
	uint8_t *codes = malloc((size_t)GR * GC);
	float *scales = malloc(sizeof(float) * NS);
	assert_non_null(codes);
	assert_non_null(scales);
	for (int64_t i = 0; i < (int64_t)GR * GC; i++)
		codes[i] = gbq_byte(i);
	for (int64_t s = 0; s < NS; s++)
		scales[s] = gbq_scale(s);
	int64_t cdims[2] = {GR, GC}, sdims[2] = {GR, 2 * GC / 32};
	Onnx__TensorProto t[2] = {ONNX__TENSOR_PROTO__INIT, ONNX__TENSOR_PROTO__INIT};
	Onnx__TensorProto *tp[2] = {&t[0], &t[1]};
	t[0].name = "codes", t[0].n_dims = 2, t[0].dims = cdims;
	t[0].has_data_type = 1, t[0].data_type = OM_UINT8;
	t[0].has_raw_data = 1, t[0].raw_data = (ProtobufCBinaryData){(size_t)GR * GC, codes};
	t[1].name = "scales", t[1].n_dims = 2, t[1].dims = sdims;
	t[1].has_data_type = 1, t[1].data_type = OM_FLOAT;
	t[1].has_raw_data = 1;
	t[1].raw_data = (ProtobufCBinaryData){sizeof(float) * NS, (uint8_t *)scales};
	char *gin[3] = {"codes", "idx", "scales"}, *gout[1] = {"y"};
	Onnx__AttributeProto a[2] = {ONNX__ATTRIBUTE_PROTO__INIT, ONNX__ATTRIBUTE_PROTO__INIT};
	Onnx__AttributeProto *ap[2] = {&a[0], &a[1]};
	a[0].name = "bits", a[1].name = "block_size";
	a[0].has_type = a[1].has_type = 1;
	a[0].type = a[1].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a[0].has_i = a[1].has_i = 1, a[0].i = 4, a[1].i = 32;
	Onnx__NodeProto nd = ONNX__NODE_PROTO__INIT, *np = &nd;
	nd.op_type = "GatherBlockQuantized", nd.domain = "com.microsoft";
	nd.n_input = 3, nd.input = gin, nd.n_output = 1, nd.output = gout;
	nd.n_attribute = 2, nd.attribute = ap;
	gather_types ty;
	gather_types_init(&ty);
	Onnx__ValueInfoProto vi[2] = {ONNX__VALUE_INFO_PROTO__INIT, ONNX__VALUE_INFO_PROTO__INIT};
	Onnx__ValueInfoProto *vin = &vi[0], *vout = &vi[1];
	vi[0].name = "idx", vi[0].type = &ty.idx;
	vi[1].name = "y", vi[1].type = &ty.out;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	g.name = "g", g.n_initializer = 2, g.initializer = tp, g.n_node = 1, g.node = &np;
	g.n_input = 1, g.input = &vin, g.n_output = 1, g.output = &vout;
	Onnx__OperatorSetIdProto os[2] = {ONNX__OPERATOR_SET_ID_PROTO__INIT,
					  ONNX__OPERATOR_SET_ID_PROTO__INIT};
	Onnx__OperatorSetIdProto *osp[2] = {&os[0], &os[1]};
	os[0].domain = "", os[0].has_version = 1, os[0].version = 13;
	os[1].domain = "com.microsoft", os[1].has_version = 1, os[1].version = 1;
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	mp.has_ir_version = 1, mp.ir_version = 8, mp.graph = &g;
	mp.n_opset_import = 2, mp.opset_import = osp;
	write_proto(path, &mp);
	free(codes);
	free(scales);
}

/* GatherBlockQuantized's rows read from the file (om_ctx_read_const: whole bytes from the
 * row's offset) dequantize as the table says, and leave the codes unmapped */
static void gbq_reads_rows_from_the_file(void **state)
{
	(void)state;
	const char *path = tmp("gbq.onnx");
	write_gbq_model(path);
	om_model *m = load(path);
	const om_value *v = om_graph_find(m->graph, "codes");
	assert_non_null(v);
	om_session *s = tu_session_create(m);
	int64_t idx[NIDX], rows[NIDX];
	for (int r = 0; r < NIDX; r++)
		idx[r] = rows[r] = (int64_t)r * (GR / NIDX) + 5;
	idx[NIDX - 1] = -1, rows[NIDX - 1] = GR - 1;
	om_tensor x = {.dtype = OM_INT64, .rank = 1, .dims = {NIDX}, .data = (void *)idx,
		       .nbytes = sizeof idx};
	for (int run = 0; run < 2; run++) {
		om_tensor y;
		om_status st = {0};
		if (om_session_run(s, &x, 1, &y, 1, &st))
			fail_msg("run: %s", st.msg);
		assert_int_equal(y.rank, 2);
		assert_int_equal(y.dims[1], 2 * GC);
		const float *yf = y.data;
		for (int r = 0; r < NIDX; r++)
			for (int64_t e = 0; e < 2 * GC; e++) {
				const int64_t code = rows[r] * 2 * GC + e;
				const int q = gbq_byte(code / 2) >> (code % 2 * 4) & 15;
				const float want = (float)(q - 8) * gbq_scale(code / 32);
				assert_true(yf[r * 2 * GC + e] == want);
			}
		om_tensor_free(&y);
		assert_true(mapped_bytes(v->init->data, v->init->nbytes) < (16 << 10));
	}
	om_session_free(s);
	om_model_free(m);
}

/* The same table also read whole (Neg, which loads floats) gets an aligned copy at load, and
 * its pages in the mapping are released as any copied payload's. */
static void misaligned_table_copied_for_other_readers(void **state)
{
	(void)state;
	size_t off;
	char name[16];
	const char *path = misaligned_gather_model(true, &off, name);
	om_model *m = load(path);
	const om_source *src = source(m);
	const om_value *v = om_graph_find(m->graph, name);
	assert_non_null(v);
	assert_int_equal((uintptr_t)v->init->data % sizeof(float), 0);
	assert_ptr_not_equal(v->init->data, src->base + off);
	assert_int_equal(src->copied, sizeof(float) * TR * TC);
	assert_int_equal(src->deferred, 0);
	run_gather(m, true);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(initializers_borrowed),
		cmocka_unit_test(copied_payload_pages_released),
		cmocka_unit_test(folded_weights_give_memory_back),
		cmocka_unit_test(borrowed_bytes_read_only),
		cmocka_unit_test(session_outlives_model),
		cmocka_unit_test(simplify_never_writes_its_input),
		cmocka_unit_test(over_the_limit_goes_external),
		cmocka_unit_test(gather_reads_misaligned_table_in_place),
		cmocka_unit_test(file_read_leaves_pages_unmapped),
		cmocka_unit_test(gbq_reads_rows_from_the_file),
		cmocka_unit_test(misaligned_table_copied_for_other_readers),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
