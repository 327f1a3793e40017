/* test_sizes.c — checked size arithmetic (om_shape_numel, om_numel_bytes, om_shape_bytes;
 * sub-byte types included) and the sites that allocate from it: huge shapes give errors, never
 * a short buffer. Values by hand. */
#include <string.h>

#include "eval.h"
#include "pool.h"
#include "testutil.h"

#define P62 (INT64_C(1) << 62)

static void numel_and_bytes(void **state)
{
	(void)state;
	/* the non-zero extents must multiply without overflow even when another one is 0 */
	assert_int_equal(om_shape_numel(3, (int64_t[]){0, P62, 4}), -1);
	assert_int_equal(om_shape_numel(3, (int64_t[]){0, P62, 1}), 0);
	assert_int_equal(om_shape_numel(2, (int64_t[]){P62, 2}), -1);
	assert_int_equal(om_shape_numel(1, (int64_t[]){INT64_MAX}), INT64_MAX);
	/* sub-byte: ceil(n * bits / 8) without forming n * bits */
	assert_int_equal(om_numel_bytes(OM_INT4, P62), P62 / 2);
	assert_int_equal(om_numel_bytes(OM_INT4, P62 + 1), P62 / 2 + 1);
	assert_int_equal(om_numel_bytes(OM_UINT4, INT64_MAX), P62);
	assert_int_equal(om_numel_bytes(OM_FLOAT4E2M1, 3), 2);
	assert_int_equal(om_numel_bytes(OM_UINT2, P62 + 2), P62 / 4 + 1);
	assert_int_equal(om_numel_bytes(OM_INT2, INT64_MAX), P62 / 2);
	assert_int_equal(om_numel_bytes(OM_INT2, 9), 3);
	assert_int_equal(om_numel_bytes(OM_INT2, 0), 0);
	/* whole bytes */
	assert_int_equal(om_numel_bytes(OM_FLOAT, P62 / 2 - 1), INT64_MAX - 3);
	assert_int_equal(om_numel_bytes(OM_FLOAT, P62 / 2), -1);
	assert_int_equal(om_numel_bytes(OM_COMPLEX128, P62 / 16), P62);
	assert_int_equal(om_numel_bytes(OM_COMPLEX128, P62 / 8), -1);
	assert_int_equal(om_numel_bytes(OM_FLOAT, -1), -1);
	assert_int_equal(om_numel_bytes(OM_UNDEFINED, 1), -1);
	assert_int_equal(om_numel_bytes(99, 1), -1);
	assert_int_equal(om_shape_bytes(OM_INT64, 2, (int64_t[]){P62, 2}), -1);
	assert_int_equal(om_shape_bytes(OM_INT64, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}), -1);
	assert_int_equal(om_shape_bytes(OM_UINT4, 2, (int64_t[]){3, 3}), 5);
	/* the size_t form: SIZE_MAX (never allocatable, never below a buffer) on overflow, where
	 * it used to give 0 for 4-bit types with 2^62 elements (a zero-byte buffer) */
	assert_true(om_tensor_bytes_for(OM_INT4, 1, (int64_t[]){INT64_MAX}) == (size_t)P62);
	assert_true(om_tensor_bytes_for(OM_FLOAT, 1, (int64_t[]){P62}) == SIZE_MAX);
	assert_true(om_tensor_bytes_for(OM_FLOAT, 1, (int64_t[]){-1}) == SIZE_MAX);
	assert_true(om_tensor_bytes_for(OM_UNDEFINED, 1, (int64_t[]){4}) == 0);
}

static void alloc_refuses_overflow(void **state)
{
	(void)state;
	om_tensor t;
	om_status st = {0};
	assert_int_equal(om_tensor_alloc(&t, OM_FLOAT, 1, (int64_t[]){P62}, &st),
			 OM_ERR_INVALID_INPUT);
	assert_null(t.data);
	assert_int_equal(om_tensor_alloc(&t, OM_INT64, 2, (int64_t[]){P62, 0}, &st), OM_OK);
	assert_int_equal(t.nbytes, 0);
	om_tensor_free(&t);
	om_model *m = om_model_new();
	assert_null(om_model_tensor(m, OM_DOUBLE, 1, (int64_t[]){P62}));
	om_tensor *u = om_model_tensor(m, OM_UINT2, 1, (int64_t[]){5});
	assert_non_null(u);
	assert_int_equal(u->nbytes, 2);
	om_model_free(m);
}

/* y = ConstantOfShape(s) with a one-element `value` of dtype vt; s an initializer holding
 * `shape` (n entries) or, when shape is NULL, a graph input of n entries */
static om_model *cos_model(int32_t vt, const int64_t *shape, int32_t n)
{
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", 23};
	m->nopsets = 1;
	om_value *s = om_graph_value(g, "s");
	if (shape) {
		s->init = om_model_tensor(m, OM_INT64, 1, (int64_t[]){n});
		memcpy(s->init->data, shape, sizeof(int64_t) * (size_t)n);
		s->flags |= OM_VALUE_INITIALIZER;
		om_type_from_tensor(m, &s->type, s->init);
		tu_push_value(g, &g->inits, &g->ninits, s);
	} else {
		om_tensor like = {.dtype = OM_INT64, .rank = 1, .dims = {n}};
		om_type_from_tensor(m, &s->type, &like);
		s->flags |= OM_VALUE_GRAPH_INPUT;
		tu_push_value(g, &g->inputs, &g->ninputs, s);
	}
	om_node *nd = tu_graph_node(g, "ConstantOfShape", "s", "y");
	om_tensor *v = om_model_tensor(m, vt, 1, (int64_t[]){1});
	memset(v->data, 1, v->nbytes);
	om_node_set_attr(nd, "value", OM_ATTR_TENSOR)->t = v;
	om_value *y = om_graph_value(g, "y");
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	return m;
}

/* simplify's folder sized a 4-bit ConstantOfShape of 2^62 elements as 0 bytes, under its
 * budget, and wrote 2^61 bytes into one (a crash); the node now stays */
static void fold_refuses_huge_subbyte(void **state)
{
	(void)state;
	const int32_t types[] = {OM_INT4, OM_UINT4, OM_FLOAT4E2M1, OM_INT2, OM_UINT2, OM_FLOAT};
	const int64_t counts[] = {P62, P62 + 1, INT64_MAX};
	for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
		for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
			om_model *m = cos_model(types[t], &counts[k], 1);
			om_status st = {0};
			assert_int_equal(om_simplify(m, NULL, &st), OM_OK);
			assert_int_equal(tu_count_op(m->graph, "ConstantOfShape"), 1);
			om_model_free(m);
		}
}

/* runs m once on one int64 input (n entries); the status of the run (or of creating it) */
static om_kind run_once(const om_model *m, size_t max_memory, const int64_t *x, int32_t n,
			om_status *st)
{
	om_session_options o = {.max_memory = max_memory};
	om_session *s = NULL;
	om_kind rc = om_session_create(m, &o, &s, st);
	if (rc)
		return rc;
	om_tensor in = {.dtype = OM_INT64, .rank = 1, .dims = {n}, .data = (void *)x,
			.nbytes = sizeof(int64_t) * (size_t)n};
	om_tensor out = {0};
	rc = om_session_run(s, &in, 1, &out, 1, st);
	om_tensor_free(&out);
	om_session_free(s);
	return rc;
}

/* the reproducer of issue 10: a 4-bit (or 2-bit) ConstantOfShape of about 2^62 elements from a
 * run-time shape was given a zero-byte buffer and written past (a segfault); now the session's
 * memory limit refuses it before anything is allocated, naming the node */
static void run_refuses_huge_subbyte(void **state)
{
	(void)state;
	const int32_t types[] = {OM_INT4, OM_UINT4, OM_FLOAT4E2M1, OM_INT2, OM_UINT2, OM_FLOAT};
	const int64_t counts[] = {P62, P62 + 1, INT64_MAX, INT64_C(1) << 40};
	for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
		for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
			om_model *m = cos_model(types[t], NULL, 1);
			om_status st = {0};
			assert_int_equal(run_once(m, 0, &counts[k], 1, &st), OM_ERR_INVALID_INPUT);
			assert_string_equal(st.node, "ConstantOfShape");
			om_model_free(m);
		}
}

static void run_within_limit(void **state)
{
	(void)state;
	om_model *m = cos_model(OM_FLOAT, NULL, 1);
	om_status st = {0};
	/* 256 floats are 1024 bytes: within a 1 KiB limit; 257 (1028 bytes) are not */
	assert_int_equal(run_once(m, 1024, (int64_t[]){256}, 1, &st), OM_OK);
	assert_int_equal(run_once(m, 1024, (int64_t[]){257}, 1, &st), OM_ERR_INVALID_INPUT);
	assert_string_equal(st.op, "ConstantOfShape");
	assert_non_null(strstr(st.msg, "output 0 needs 1028 bytes"));
	assert_non_null(strstr(st.msg, "limit of 1024 bytes"));
	/* SIZE_MAX: no limit */
	assert_int_equal(run_once(m, SIZE_MAX, (int64_t[]){300}, 1, &st), OM_OK);
	om_model_free(m);
	/* int4: 2048 elements are 1024 bytes; 2049 are 1025 */
	m = cos_model(OM_INT4, NULL, 1);
	assert_int_equal(run_once(m, 1024, (int64_t[]){2048}, 1, &st), OM_OK);
	assert_int_equal(run_once(m, 1024, (int64_t[]){2049}, 1, &st), OM_ERR_INVALID_INPUT);
	om_model_free(m);
	assert_true(om_default_max_memory() > 0);
	assert_true(om_default_max_memory() <= (size_t)8 << 30);
}

/* Range with three integers asked for 17 GB (issue 10 item 7): refused by the default limit */
static void range_over_default_limit(void **state)
{
	(void)state;
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", 18};
	m->nopsets = 1;
	om_value *x = om_graph_value(g, "x");
	om_tensor like = {.dtype = OM_INT64, .rank = 1, .dims = {3}};
	om_type_from_tensor(m, &x->type, &like);
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	const char *names[] = {"a", "b", "d"};
	for (int i = 0; i < 3; i++) {
		om_value *idx = om_graph_value(g, names[i]);
		idx->init = om_model_tensor(m, OM_INT64, 0, NULL);
		*(int64_t *)idx->init->data = i;
		idx->flags |= OM_VALUE_INITIALIZER;
		om_type_from_tensor(m, &idx->type, idx->init);
		tu_push_value(g, &g->inits, &g->ninits, idx);
	}
	tu_graph_node(g, "Gather", "x,a", "start");
	tu_graph_node(g, "Gather", "x,b", "limit");
	tu_graph_node(g, "Gather", "x,d", "delta");
	tu_graph_node(g, "Range", "start,limit,delta", "y");
	om_value *y = om_graph_value(g, "y");
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	om_status st = {0};
	const int64_t big[] = {0, INT64_C(17) << 30 >> 3, 1}, small[] = {5, 50, 5};
	assert_int_equal(run_once(m, 0, big, 3, &st), OM_ERR_INVALID_INPUT);
	assert_string_equal(st.op, "Range");
	assert_non_null(strstr(st.msg, "output 0 needs 18253611008 bytes"));
	assert_int_equal(run_once(m, 0, small, 3, &st), OM_OK);
	om_model_free(m);
}

/* a kernel's own scratch counts against the limit: Conv x:[1,64,16,16], W [1,64,5,5],
 * stride 2, pads 2 gives 256 output bytes but a 400 KiB im2col buffer (1600 x 64 floats) */
static void conv_scratch_within_limit(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	om_value *x = om_graph_value(g, "x");
	om_tensor like = {.dtype = OM_FLOAT, .rank = 4, .dims = {1, 64, 16, 16}};
	om_type_from_tensor(m, &x->type, &like);
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	om_value *w = om_graph_value(g, "W");
	w->init = om_model_tensor(m, OM_FLOAT, 4, (int64_t[]){1, 64, 5, 5});
	memset(w->init->data, 0, w->init->nbytes);
	w->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(m, &w->type, w->init);
	tu_push_value(g, &g->inits, &g->ninits, w);
	om_node *conv = tu_graph_node(g, "Conv", "x,W", "y");
	tu_attr_ints(conv, "strides", 2, (int64_t[]){2, 2});
	tu_attr_ints(conv, "pads", 4, (int64_t[]){2, 2, 2, 2});
	om_value *y = om_graph_value(g, "y");
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	static float xd[64 * 16 * 16];
	om_tensor in = {.dtype = OM_FLOAT, .rank = 4, .dims = {1, 64, 16, 16}, .data = xd,
			.nbytes = sizeof xd};
	const size_t limits[] = {SIZE_MAX, 100 << 10};
	for (int k = 0; k < 2; k++) {
		/* exact: the im2col path (fast mode may take oneDNN's, whose buffers differ) */
		om_session_options o = {.max_memory = limits[k], .exact = 1};
		om_session *s = NULL;
		om_status st = {0};
		assert_int_equal(om_session_create(m, &o, &s, &st), OM_OK);
		om_tensor out = {0};
		om_kind rc = om_session_run(s, &in, 1, &out, 1, &st);
		if (k == 0) {
			assert_int_equal(rc, OM_OK);
			assert_int_equal(out.dims[2], 8);
		} else {
			assert_int_equal(rc, OM_ERR_INVALID_INPUT);
			assert_string_equal(st.op, "Conv");
			assert_non_null(strstr(st.msg, "im2col"));
		}
		om_tensor_free(&out);
		om_session_free(s);
	}
	om_model_free(m);
}

/* a Loop of 3.4e15 iterations (fuzz finding Z7) stops at the session's time limit, naming
 * the node it reached, instead of running for ever */
static void run_time_limit(void **state)
{
	(void)state;
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(tu_source_path("fuzz/corpus/models/"
						      "repro_loop_huge_trip_count.onnx"),
				       &m, &st),
			 OM_OK);
	const om_session_options o = {.max_run_ms = 100};
	om_session *s = NULL;
	assert_int_equal(om_session_create(m, &o, &s, &st), OM_OK);
	static float xd[4];
	om_tensor in = {.dtype = OM_FLOAT, .rank = 2, .dims = {1, 4}, .data = xd,
			.nbytes = sizeof xd};
	om_tensor out = {0};
	assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_ERR_INVALID_INPUT);
	assert_non_null(strstr(st.msg, "limit of 100 ms"));
	assert_true(st.node[0] != 0);
	om_session_free(s);
	om_model_free(m);
}

/* growing past the limit first gives back the free blocks' memory */
static void pool_limit(void **state)
{
	(void)state;
	om_pool p = {.limit = 1024};
	int32_t a = om_pool_get(&p, 512);
	assert_true(a >= 0);
	assert_int_equal(om_pool_get(&p, 1024 - 512 + 1), OM_POOL_OVER_LIMIT);
	int32_t b = om_pool_get(&p, 256);
	assert_true(b >= 0);
	om_pool_release(&p, a);
	om_pool_release(&p, b);
	int32_t c = om_pool_get(&p, 768); /* grows the 512 block: the 256 one may stay */
	assert_true(c >= 0);
	assert_int_equal(p.bytes, 1024);
	assert_int_equal(om_pool_get(&p, 320), OM_POOL_OVER_LIMIT);
	om_pool_release(&p, c);
	c = om_pool_get(&p, 832); /* 768 + 256 free, neither fits: both dropped first */
	assert_true(c >= 0);
	assert_int_equal(p.bytes, 832);
	assert_int_equal(p.busy_bytes, 832);
	assert_true(om_pool_get(&p, 192) >= 0);
	assert_int_equal(p.bytes, 1024);
	om_pool_free(&p);
}

/* Outputs taken every run (om_pool_take, as a caller's present KV and logits) leave their
 * block slots empty; the next runs' new blocks fill them, so the slots (which every get
 * searches) stay as many as one run needs, not one more a run */
static void pool_taken_slots_reused(void **state)
{
	(void)state;
	om_pool p = {0};
	for (int run = 0; run < 50; run++) {
		om_pool_run_begin(&p);
		const int32_t tmp = om_pool_get(&p, 4096);
		const int32_t out1 = om_pool_get(&p, 512), out2 = om_pool_get(&p, 1024);
		assert_true(tmp >= 0 && out1 >= 0 && out2 >= 0);
		om_pool_release(&p, tmp);
		void *a = om_pool_take(&p, out1), *b = om_pool_take(&p, out2);
		assert_non_null(a);
		assert_non_null(b);
		free(a), free(b);
		om_pool_run_end(&p, true);
		assert_true(p.n <= 4);
	}
	om_pool_free(&p);
}

/* In a traced run a free block more than twice a request's size is not taken while a new block
 * keeps the pool within twice the most bytes busy: a decoder's present KV (small, alive to the
 * run's end) held a dead FFN activation's block each, and the pool grew to 2.3 times what was
 * alive. Past the limit, or in a run that is not traced, it is taken. */
static void pool_small_value_new_block(void **state)
{
	(void)state;
	om_pool p = {0};
	om_pool_run_begin(&p); /* the first run: traced */
	assert_true(p.traced);
	const int32_t big = om_pool_get(&p, 4096);
	assert_true(big >= 0);
	om_pool_release(&p, big);
	assert_int_equal(om_pool_get(&p, 2048), big); /* exactly half of it: it fits */
	om_pool_release(&p, big);
	/* 1024-byte values that stay: new blocks, the big one left free (the most bytes busy
	 * grows with them, and the pool stays within twice it) */
	for (int k = 1; k <= 6; k++) {
		const int32_t b = om_pool_get(&p, 1024);
		assert_true(b >= 0 && b != big);
		assert_int_equal(p.bytes, 4096 + 1024 * (size_t)k);
		assert_true(p.bytes <= 2 * p.peak_busy);
	}
	assert_int_equal(p.busy_bytes, 6 * 1024);
	om_pool_free(&p);

	om_pool q = {.limit = 4096 + 512}; /* a new block would pass the limit */
	om_pool_run_begin(&q);
	int32_t b = om_pool_get(&q, 4096);
	om_pool_release(&q, b);
	assert_int_equal(om_pool_get(&q, 1024), b);
	om_pool_free(&q);

	om_pool u = {0}; /* not traced: the smallest block that fits, however large */
	b = om_pool_get(&u, 4096);
	om_pool_release(&u, b);
	assert_int_equal(om_pool_get(&u, 1024), b);
	assert_int_equal(u.bytes, 4096);
	om_pool_free(&u);
}

/* One run of a dense block's pattern on the pool: a value of `grow` more bytes each step,
 * the previous one freed after the next is made (a Concat of everything so far), and a small
 * temporary between; the blocks' pointers after it in ptrs (when not NULL). */
static void dense_run(om_pool *p, size_t base, size_t grow, int steps, void **ptrs)
{
	int32_t prev = om_pool_get(p, base);
	assert_true(prev >= 0);
	for (int k = 1; k <= steps; k++) {
		const int32_t tmp = om_pool_get(p, 64 + 32 * (size_t)k);
		assert_true(tmp >= 0);
		const int32_t next = om_pool_get(p, base + grow * (size_t)k);
		assert_true(next >= 0);
		om_pool_release(p, tmp);
		om_pool_release(p, prev);
		prev = next;
	}
	om_pool_release(p, prev);
	for (int32_t i = 0; ptrs && i < p->n; i++)
		ptrs[i] = p->b[i].ptr;
}

/* the busy blocks' bytes do not overlap */
static void busy_disjoint(const om_pool *p)
{
	for (int32_t i = 0; i < p->n; i++)
		for (int32_t j = i + 1; j < p->n; j++) {
			if (!p->b[i].busy || !p->b[j].busy)
				continue;
			const char *a = p->b[i].ptr, *b = p->b[j].ptr;
			if (a < b + p->b[j].cap && b < a + p->b[i].cap)
				fail_msg("busy blocks %d and %d overlap", i, j);
		}
}

/* dense_run between om_pool_run_begin and om_pool_run_end, `hold` bytes got first and held to
 * the end (0: none), each request checked against the busy blocks; *from_arena: how many of
 * its requests were places in the arena */
static void dense_planned(om_pool *p, size_t base, size_t hold, int *from_arena)
{
	om_pool_run_begin(p);
	const int32_t h = hold ? om_pool_get(p, hold) : -1;
	int arena = h >= 0 && p->b[h].arena;
	int32_t prev = om_pool_get(p, base);
	arena += p->b[prev].arena;
	for (int k = 1; k <= 12; k++) {
		const int32_t tmp = om_pool_get(p, 64 + 32 * (size_t)k);
		const int32_t next = om_pool_get(p, base + 1024 * (size_t)k);
		assert_true(tmp >= 0 && next >= 0);
		arena += p->b[tmp].arena + p->b[next].arena;
		busy_disjoint(p);
		memset(p->b[next].ptr, k, base + 1024 * (size_t)k);
		om_pool_release(p, tmp);
		om_pool_release(p, prev);
		prev = next;
	}
	om_pool_release(p, prev);
	om_pool_release(p, h);
	om_pool_run_end(p, true);
	*from_arena = arena;
}

/* A traced run is laid out in one arena: the next runs of the same requests find every one
 * in place, within 1.1 times the most bytes alive at once (32 KB here: the pool of blocks
 * held 55 KB); a run that keeps a value longer than planned gets blocks where its places
 * would overlap a busy one; a request larger than planned gets a block and the run is planned
 * again, 8 times at most; a place handed over (om_pool_take) is a copy */
static void pool_arena(void **state)
{
	(void)state;
	om_pool p = {0};
	int arena;
	const size_t alive = 4096 + 11 * 1024 + (64 + 32 * 12) + 4096 + 12 * 1024; /* k 12 */
	dense_planned(&p, 4096, 0, &arena);
	assert_int_equal(arena, 0);
	assert_int_equal(p.plans, 1);
	assert_int_equal(p.nplan, 25);
	assert_true(p.bytes <= alive + alive / 10);
	const size_t bytes = p.bytes;
	for (int r = 0; r < 2; r++) {
		dense_planned(&p, 4096, 0, &arena);
		assert_int_equal(arena, 25);
		assert_int_equal(p.plans, 1);
		assert_int_equal(p.bytes, bytes);
	}
	dense_planned(&p, 4096, 64, &arena); /* requests one place later, one held throughout */
	assert_true(arena < 26);
	assert_int_equal(p.plans, 2);
	dense_planned(&p, 4096, 64, &arena);
	assert_int_equal(arena, 26);
	dense_planned(&p, 8192, 64, &arena); /* larger: blocks, planned again */
	assert_int_equal(p.plans, 3);
	dense_planned(&p, 8192, 64, &arena);
	assert_int_equal(arena, 26);
	om_pool_run_begin(&p);
	const int32_t h = om_pool_get(&p, 64);
	assert_true(p.b[h].arena);
	memset(p.b[h].ptr, 7, 64);
	unsigned char *t = om_pool_take(&p, h);
	assert_non_null(t);
	assert_int_equal(t[0], 7);
	assert_int_equal(t[63], 7);
	free(t);
	om_pool_run_end(&p, true);
	om_pool_free(&p);

	om_pool q = {0}; /* sizes that grow in every run: laid out 8 times, then blocks */
	for (int r = 0; r < 20; r++)
		dense_planned(&q, 4096 + 1024 * (size_t)r, 0, &arena);
	assert_int_equal(q.plans, 8);
	om_pool_free(&q);
}

/* One run of 12 requests in a chain (each released after the next is got), request k of
 * 4 KiB when k % 2 == odd, else 1 KiB; returns how many were places in the arena */
static int turn_run(om_pool *p, int odd)
{
	om_pool_run_begin(p);
	int arena = 0;
	int32_t prev = -1;
	for (int k = 0; k < 12; k++) {
		const int32_t b = om_pool_get(p, k % 2 == odd ? 4096 : 1024);
		assert_true(b >= 0);
		arena += p->b[b].arena;
		busy_disjoint(p);
		om_pool_release(p, prev);
		prev = b;
	}
	om_pool_release(p, prev);
	om_pool_run_end(p, true);
	return arena;
}

/* Two runs of the same requests that take turns, each larger than the other in some (a
 * decoder's prompt and its steps): planned after the first of each, at the larger size of
 * every request, both then find all their places, and no run is planned again */
static void pool_turns(void **state)
{
	(void)state;
	om_pool p = {0};
	assert_int_equal(turn_run(&p, 0), 0);
	assert_int_equal(p.plans, 1);
	assert_true(turn_run(&p, 1) < 12); /* the odd ones are larger than planned */
	assert_int_equal(p.plans, 2);
	const size_t bytes = p.bytes;
	for (int r = 0; r < 6; r++) {
		assert_int_equal(turn_run(&p, r % 2), 12);
		assert_int_equal(p.plans, 2);
		assert_int_equal(p.bytes, bytes);
	}
	om_pool_free(&p);
}

/* The same requests in every run find their blocks from the second run on (no block grows,
 * none is added, none moves), within twice the most bytes busy at once; shapes that grow from
 * run to run keep the pool within about twice their need */
static void pool_steady_across_runs(void **state)
{
	(void)state;
	om_pool p = {0};
	void *first[64] = {0}, *again[64] = {0};
	dense_run(&p, 4096, 1024, 12, NULL);
	const size_t bytes = p.bytes;
	const int32_t n = p.n;
	assert_true(n <= 64);
	dense_run(&p, 4096, 1024, 12, first);
	for (int r = 0; r < 3; r++) {
		dense_run(&p, 4096, 1024, 12, again);
		assert_int_equal(p.n, n);
		assert_int_equal(p.bytes, bytes);
		assert_memory_equal(first, again, sizeof first);
	}
	assert_true(p.bytes <= 2 * p.peak_busy);
	om_pool_free(&p);

	om_pool q = {0};
	for (int r = 0; r < 40; r++)
		dense_run(&q, 4096 + 512 * (size_t)r, 1024, 12, NULL);
	print_message("growing shapes: %zu bytes in %d blocks, %zu at most busy\n", q.bytes, q.n,
		      q.peak_busy);
	assert_true(q.bytes <= 2 * q.peak_busy);
	om_pool_free(&q);
}

/* omopt run --max-memory: suffixes, 'none', usage errors; exit 1 naming the node. The shape is
 * a constant: within the limit the output is folded at plan time (not counted), over it the
 * run asks the pool for it and is refused. */
static void cli_max_memory(void **state)
{
	(void)state;
	char dir[256], path[512], cmd[1024], out[4096], err[4096];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "omopt_sizes_"), 0);
	snprintf(path, sizeof path, "%s/cos.onnx", dir);
	om_model *m = cos_model(OM_FLOAT, (const int64_t[]){300}, 1);
	om_status st = {0};
	assert_int_equal(om_model_save(m, path, NULL, &st), OM_OK);
	om_model_free(m);
	static const struct {
		const char *limit;
		int code;
	} cases[] = {{"1K", 1},   {"1199", 1}, {"1200", 0}, {"2K", 0}, {"1M", 0},
		     {"1G", 0},   {"none", 0}, {"0", 2},    {"-1", 2}, {"1X", 2},
		     {"K", 2},    {"1KK", 2},  {"", 2}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(cmd, sizeof cmd, "run cos.onnx --no-optimize --bench 1 --max-memory '%s'",
			 cases[i].limit);
		int code = tu_run_omopt(dir, cmd, out, sizeof out, err, sizeof err);
		if (code != cases[i].code)
			print_error("--max-memory '%s': %s\n", cases[i].limit, err);
		assert_int_equal(code, cases[i].code);
		if (code == 1)
			assert_non_null(strstr(err, "node 'ConstantOfShape' (ConstantOfShape): "
						    "output 0 needs 1200 bytes"));
	}
	assert_int_equal(tu_tmpdir_remove(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(numel_and_bytes),
		cmocka_unit_test(alloc_refuses_overflow),
		cmocka_unit_test(fold_refuses_huge_subbyte),
		cmocka_unit_test(run_refuses_huge_subbyte),
		cmocka_unit_test(run_within_limit),
		cmocka_unit_test(range_over_default_limit),
		cmocka_unit_test(pool_limit),
		cmocka_unit_test(pool_taken_slots_reused),
		cmocka_unit_test(pool_small_value_new_block),
		cmocka_unit_test(pool_steady_across_runs),
		cmocka_unit_test(pool_turns),
		cmocka_unit_test(pool_arena),
		cmocka_unit_test(cli_max_memory),
		cmocka_unit_test(conv_scratch_within_limit),
		cmocka_unit_test(run_time_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
