/* test_tensor_scatter.c — TensorScatter (opset 24): every axis of ranks 2-5, both modes, with
 * and without write_indices, elements of 1, 2, 4 and 8 bytes, against the spec's pseudocode
 * written out here (byte for byte); the errors (indices that do not fit, a negative index, the
 * batch axis, shapes that disagree); in a session, output 0 over past_cache's block when past
 * dies there (the hook sees one pointer) and a copy otherwise (a graph input stays unchanged,
 * past read by another output keeps its values). */
#include <string.h>

#include "nodetest.h"
#include "session.h"
#include "testutil.h"

/* the spec's pseudocode: present = past; for each prefix before axis and each update row s,
 * present[prefix, (w[b] + s) (mod max when circular), ...] = update[prefix, s, ...] */
static void reference(unsigned char *y, const unsigned char *past, const unsigned char *upd,
		      const int64_t *w, int32_t rank, const int64_t *dims, int32_t axis,
		      int64_t seq, bool circular, size_t size)
{
	int64_t outer = 1, inner = 1, per_batch = 1;
	for (int32_t d = 0; d < axis; d++)
		outer *= dims[d];
	for (int32_t d = 1; d < axis; d++)
		per_batch *= dims[d];
	for (int32_t d = axis + 1; d < rank; d++)
		inner *= dims[d];
	const int64_t max = dims[axis];
	memcpy(y, past, (size_t)(outer * max * inner) * size);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t s = 0; s < seq; s++) {
			int64_t at = (w ? w[o / per_batch] : 0) + s;
			if (circular)
				at %= max;
			for (int64_t i = 0; i < inner; i++)
				memcpy(y + (size_t)((o * max + at) * inner + i) * size,
				       upd + (size_t)((o * seq + s) * inner + i) * size, size);
		}
}

static int32_t dtype_of(int k)
{
	static const int32_t types[] = {OM_INT8, OM_FLOAT16, OM_FLOAT, OM_DOUBLE};
	return types[k % 4];
}

static void against_reference(void **state)
{
	(void)state;
	nt_rng r = {34};
	int cases = 0;
	for (int32_t rank = 2; rank <= 5; rank++)
		for (int32_t axis = 1; axis < rank; axis++)
			for (int variant = 0; variant < 8; variant++) {
				const bool circular = variant & 1, given = variant & 2;
				const int32_t dt = dtype_of(variant + rank);
				const size_t size = om_dtype_size(dt);
				int64_t dims[OM_MAX_RANK], ud[OM_MAX_RANK];
				for (int32_t d = 0; d < rank; d++)
					dims[d] = nt_rand(&r, 1, 4);
				dims[axis] = nt_rand(&r, 1, 9);
				memcpy(ud, dims, sizeof dims);
				/* variant 4+: a whole-cache or empty update now and then */
				const int64_t seq = variant == 4 ? dims[axis] : variant == 6 ? 0 :
						    nt_rand(&r, 1, dims[axis]);
				ud[axis] = seq;
				int64_t w[4] = {0};
				for (int64_t b = 0; b < dims[0]; b++)
					w[b] = circular ? nt_rand(&r, 0, 3 * dims[axis])
							: nt_rand(&r, 0, dims[axis] - seq);
				const int64_t np = om_shape_numel(rank, dims);
				unsigned char past[4 * 4 * 4 * 9 * 4 * 8], upd[sizeof past];
				unsigned char want[sizeof past];
				for (size_t i = 0; i < sizeof past; i++)
					past[i] = (unsigned char)nt_rand(&r, 0, 255),
					upd[i] = (unsigned char)nt_rand(&r, 0, 255);
				reference(want, past, upd, given ? w : NULL, rank, dims, axis, seq,
					  circular, size);
				om_model *m;
				om_node *n = nt_node(&m, "TensorScatter", given ? 3 : 2, 1);
				/* variants 4-7 name the axis from the end */
				nt_int(n, "axis", axis - (variant & 4 ? rank : 0));
				if (circular || variant & 4)
					nt_str(n, "mode", circular ? "circular" : "linear");
				om_tensor tp = nt_tensor(dt, rank, dims, past);
				om_tensor tu = nt_tensor(dt, rank, ud, upd);
				om_tensor tw = nt_tensor(OM_INT64, 1, dims, w);
				const om_tensor *in[] = {&tp, &tu, given ? &tw : NULL};
				om_tensor out[1];
				om_status st = {0};
				if (om_eval_node(n, 24, in, out, &st))
					fail_msg("rank %d axis %d variant %d: %s", rank, axis,
						 variant, st.msg);
				nt_assert_shape(&out[0], rank, dims);
				assert_int_equal(out[0].dtype, dt);
				assert_memory_equal(out[0].data, want, (size_t)np * size);
				om_tensor_free(&out[0]);
				om_model_free(m);
				cases++;
			}
	assert_int_equal(cases, 10 * 8); /* (rank, axis) pairs: 1 + 2 + 3 + 4 */
}

/* one node: past [2, 1, 4, 2] float, update [2, 1, u, 2], write_indices {w0, w1} */
static om_kind run_one(const char *mode, int64_t axis, int64_t u, int64_t w0, int64_t w1,
		       int32_t wdt)
{
	om_model *m;
	om_node *n = nt_node(&m, "TensorScatter", 3, 1);
	nt_str(n, "mode", mode);
	nt_int(n, "axis", axis);
	const int64_t dp[] = {2, 1, 4, 2}, du[] = {2, 1, u, 2};
	float past[16] = {0}, upd[16] = {0};
	int64_t w[] = {w0, w1};
	int32_t w32[] = {(int32_t)w0, (int32_t)w1};
	om_tensor tp = nt_tensor(OM_FLOAT, 4, dp, past), tu = nt_tensor(OM_FLOAT, 4, du, upd);
	om_tensor tw = nt_tensor(wdt, 1, (int64_t[]){2}, wdt == OM_INT64 ? (void *)w : w32);
	const om_tensor *in[] = {&tp, &tu, &tw};
	om_tensor out[1];
	const om_kind rc = nt_run(n, 24, in, out);
	if (!rc)
		om_tensor_free(&out[0]);
	om_model_free(m);
	return rc;
}

static void errors(void **state)
{
	(void)state;
	assert_int_equal(run_one("linear", -2, 2, 2, 1, OM_INT64), OM_OK);
	assert_int_equal(run_one("linear", -2, 2, 3, 1, OM_INT64), OM_ERR_INVALID_INPUT);
	assert_int_equal(run_one("linear", -2, 2, 0, -1, OM_INT64), OM_ERR_INVALID_INPUT);
	assert_int_equal(run_one("circular", -2, 2, 9, 1, OM_INT64), OM_OK);
	assert_int_equal(run_one("circular", -2, 2, 0, -1, OM_INT64), OM_ERR_INVALID_INPUT);
	assert_int_equal(run_one("circular", -2, 5, 0, 0, OM_INT64), OM_ERR_INVALID_MODEL);
	assert_int_equal(run_one("linear", -2, 2, 0, 0, OM_INT32), OM_ERR_INVALID_MODEL);
	assert_int_equal(run_one("ring", -2, 2, 0, 0, OM_INT64), OM_ERR_INVALID_MODEL);
	assert_int_equal(run_one("linear", 0, 2, 0, 0, OM_INT64), OM_ERR_INVALID_MODEL);
	assert_int_equal(run_one("linear", -4, 2, 0, 0, OM_INT64), OM_ERR_INVALID_MODEL);
	assert_int_equal(run_one("linear", 4, 2, 0, 0, OM_INT64), OM_ERR_INVALID_MODEL);
	/* update differs off the axis: axis 1 with update [2, 1, 2, 2] against [2, 1, 4, 2] */
	assert_int_equal(run_one("linear", 1, 2, 0, 0, OM_INT64), OM_ERR_INVALID_MODEL);
}

typedef struct seen {
	int runs, over; /* TensorScatter runs, and those whose output was past_cache's memory */
} seen;

static void hook(void *arg, const om_node *n, const om_tensor *const *in, int nin,
		 const om_tensor *const *out, int nout)
{
	seen *s = arg;
	if (strcmp(n->op, "TensorScatter") || nin < 1 || nout < 1)
		return;
	s->runs++;
	s->over += in[0]->data == out[0]->data;
}

/* past [1, 2, 6, 3] -> (neg: Neg) -> TensorScatter(., update [1, 2, 2, 3], w) -> y; shared:
 * the Neg's output is a graph output too */
static om_model *cache_model(bool neg, bool shared)
{
	om_model *m = tu_model(24);
	om_graph *g = m->graph;
	const int64_t dp[] = {1, 2, 6, 3}, du[] = {1, 2, 2, 3}, one = 1;
	tu_push_value(g, &g->inputs, &g->ninputs, tu_typed_value(g, "p", OM_FLOAT, 4, dp));
	tu_push_value(g, &g->inputs, &g->ninputs, tu_typed_value(g, "u", OM_FLOAT, 4, du));
	tu_push_value(g, &g->inputs, &g->ninputs, tu_typed_value(g, "w", OM_INT64, 1, &one));
	if (neg)
		tu_graph_node(g, "Neg", "p", "a");
	om_node *t = tu_graph_node(g, "TensorScatter", neg ? "a,u,w" : "p,u,w", "y");
	t->name = "y";
	nt_str(t, "mode", "circular");
	tu_push_value(g, &g->outputs, &g->noutputs, tu_typed_value(g, "y", OM_FLOAT, 4, dp));
	if (shared)
		tu_push_value(g, &g->outputs, &g->noutputs,
			      tu_typed_value(g, "a", OM_FLOAT, 4, dp));
	return m;
}

static void in_place(void **state)
{
	(void)state;
	for (int k = 0; k < 3; k++) {
		const bool neg = k > 0, shared = k == 2;
		om_model *m = cache_model(neg, shared);
		om_session *s = tu_session_create(m);
		seen sn = {0};
		om_session_set_hook(s, hook, &sn);
		float p[36], u[12], keep[36];
		for (int i = 0; i < 36; i++)
			p[i] = keep[i] = (float)i;
		for (int i = 0; i < 12; i++)
			u[i] = 100.0f + (float)i;
		int64_t w = 5; /* rows 5 and 0 (circular) */
		om_tensor in[3] = {nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 2, 6, 3}, p),
				   nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 2, 2, 3}, u),
				   nt_tensor(OM_INT64, 1, (int64_t[]){1}, &w)};
		om_tensor out[2] = {{0}, {0}};
		om_status st = {0};
		if (om_session_run(s, in, 3, out, shared ? 2 : 1, &st))
			fail_msg("case %d: %s", k, st.msg);
		assert_int_equal(sn.runs, 1);
		assert_int_equal(sn.over, neg && !shared); /* only where past dies at the node */
		assert_memory_equal(p, keep, sizeof p);    /* the caller's past is untouched */
		const float *y = out[0].data;
		for (int h = 0; h < 2; h++)
			for (int row = 0; row < 6; row++)
				for (int e = 0; e < 3; e++) {
					const int at = (h * 6 + row) * 3 + e;
					const int s_row = row == 5 ? 0 : row == 0 ? 1 : -1;
					const float want = s_row >= 0 ? u[(h * 2 + s_row) * 3 + e]
							   : neg ? -p[at] : p[at];
					assert_true(y[at] == want);
				}
		if (shared)
			for (int i = 0; i < 36; i++)
				assert_true(((const float *)out[1].data)[i] == -p[i]);
		om_tensor_free(&out[0]);
		om_tensor_free(&out[1]);
		om_session_free(s);
		om_model_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(against_reference),
		cmocka_unit_test(errors),
		cmocka_unit_test(in_place),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
