/* test_fuse_dynq.c — the fuse_dynq pass on the chains ONNX Runtime's quantize_dynamic writes
 * (DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul by the scale product [-> Add bias]):
 * which fused op it leaves and what it keeps, the chains it must leave alone, and the same
 * bytes before and after through sessions in exact and fast mode at 1 and 2 threads, over
 * a symbolic sequence length of 0, 1, 2 and 7. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "pass.h"

typedef struct dq_shape {
	int32_t bdt;      /* B's type */
	int64_t K, N;
	bool per_col;     /* b's scale and zero point one per column */
	bool bzp;         /* a b zero point input ... */
	int bz;           /* ... of this value (0: B may be packed) */
	bool bias, bias_first; /* an Add of a bias, the bias its first input */
	bool scale_first; /* Mul(scales, Cast) */
	bool share_q;     /* q is a graph output too: the quantizer stays */
	bool other_scale; /* the scale product does not use the quantizer's scale */
	bool cast_out;    /* the Cast's output is a graph output too (left alone) */
	bool bias_2d;     /* the bias is [1, N] (left alone: the Add stays) */
} dq_shape;

static om_model *model(void)
{
	om_model *m = om_model_new();
	assert_non_null(m);
	m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", 14};
	m->nopsets = 1;
	return m;
}

static void constant(om_graph *g, const char *name, om_tensor *t)
{
	om_value *v = om_graph_value(g, name);
	v->init = t;
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(g->model, &v->type, t);
	tu_push_value(g, &g->inits, &g->ninits, v);
}

static om_node *node(om_graph *g, const char *op, int nin, const char *const *in,
		     const char *const *out, int nout)
{
	om_node *n = om_graph_add_node(g, op, "", out[0], nin, nout);
	assert_non_null(n);
	for (int i = 0; i < nin; i++)
		n->in[i] = in[i] ? om_graph_value(g, in[i]) : NULL;
	for (int i = 0; i < nout; i++)
		om_node_set_output(n, i, om_graph_value(g, out[i]));
	return n;
}

#define S(...) (const char *const[]){__VA_ARGS__}

static uint32_t next(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

/* x [seq, 3, K] (seq a symbol) -> the chain -> out [seq, 3, N] */
static om_model *build(const dq_shape *d)
{
	om_model *m = model();
	om_graph *g = m->graph;
	om_value *x = om_graph_value(g, "x");
	x->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = OM_FLOAT, .rank = 3};
	x->type.dims = om_arena_alloc(m->arena, sizeof(om_dim) * 3);
	x->type.dims[0] = (om_dim){-1, "seq"};
	x->type.dims[1] = (om_dim){3, NULL};
	x->type.dims[2] = (om_dim){d->K, NULL};
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	uint32_t s = 7;
	const int64_t nc = d->per_col ? d->N : 1;
	om_tensor *w = om_model_tensor(m, d->bdt, 2, (int64_t[]){d->K, d->N});
	for (int64_t i = 0; i < d->K * d->N; i++)
		((uint8_t *)w->data)[i] = (uint8_t)next(&s);
	om_tensor *bs = om_model_tensor(m, OM_FLOAT, d->per_col ? 1 : 0, &nc);
	om_tensor *bz = om_model_tensor(m, d->bdt, d->per_col ? 1 : 0, &nc);
	for (int64_t j = 0; j < nc; j++) {
		((float *)bs->data)[j] = (float)(1 + next(&s) % 1000) / 65536.0f;
		((uint8_t *)bz->data)[j] = (uint8_t)(d->bz + (d->bz ? (int)(j % 3) : 0));
	}
	om_tensor *bias = om_model_tensor(m, OM_FLOAT, d->bias_2d ? 2 : 1,
					  d->bias_2d ? (int64_t[]){1, d->N} : &d->N);
	for (int64_t j = 0; j < d->N; j++)
		((float *)bias->data)[j] = (float)((int)(next(&s) % 2001) - 1000) / 256.0f;
	om_tensor *os = om_model_tensor(m, OM_FLOAT, 0, NULL);
	*(float *)os->data = 0.03125f;
	constant(g, "W", w);
	constant(g, "bs", bs);
	constant(g, "bz", bz);
	constant(g, "bias", bias);
	constant(g, "os", os);
	node(g, "DynamicQuantizeLinear", 1, S("x"), S("q", "qs", "qz"), 3);
	node(g, "MatMulInteger", d->bzp ? 4 : 3, S("q", "W", "qz", "bz"), S("acc"), 1);
	om_node *cast = node(g, "Cast", 1, S("acc"), S("accf"), 1);
	om_node_set_attr(cast, "to", OM_ATTR_INT)->i = OM_FLOAT;
	node(g, "Mul", 2, S(d->other_scale ? "os" : "qs", "bs"), S("sc"), 1);
	const char *y = d->bias ? "y0" : "out";
	node(g, "Mul", 2, d->scale_first ? S("sc", "accf") : S("accf", "sc"), S(y), 1);
	if (d->bias)
		node(g, "Add", 2, d->bias_first ? S("bias", "y0") : S("y0", "bias"), S("out"), 1);
	const char *outs[] = {"out", d->share_q ? "q" : "accf"};
	for (int i = 0; i < (d->share_q || d->cast_out ? 2 : 1); i++) {
		om_value *o = om_graph_value(g, outs[i]);
		o->flags |= OM_VALUE_GRAPH_OUTPUT;
		tu_push_value(g, &g->outputs, &g->noutputs, o);
	}
	return m;
}

static void free_model(om_model *m)
{
	HASH_CLEAR(hh, m->graph->values);
	om_model_free(m);
}

/* infer_shapes, the pass, eliminate_dead; returns the pass's change count */
static int run_pass(om_model *m)
{
	om_status st = {0};
	om_pass_ctx c = {.m = m, .scratch = om_arena_new(), .st = &st, .fold_max = 1 << 20};
	assert_non_null(c.scratch);
	int other = 0, changes = 0;
	assert_int_equal(om_pass_infer(&c, m->graph, &other), OM_OK);
	assert_int_equal(om_pass_fuse_dynq(&c, m->graph, &changes), OM_OK);
	assert_int_equal(om_pass_dead(&c, m->graph, &other), OM_OK);
	assert_int_equal(om_verify_graph(m->graph, &st), OM_OK);
	om_pass_ctx_close(&c);
	return changes;
}

static int count(const om_model *m, const char *op)
{
	int k = 0;
	for (int32_t i = 0; i < m->graph->nnodes; i++)
		k += !strcmp(m->graph->nodes[i]->op, op);
	return k;
}

/* the outputs of m at seq (random x with a few exact zeros, a NaN-free range) */
static void run_model(const om_model *m, int64_t seq, int64_t K, int exact, int threads,
		      om_tensor *y, int ny)
{
	om_tensor x = {0};
	om_status st = {0};
	assert_int_equal(om_tensor_alloc(&x, OM_FLOAT, 3, (int64_t[]){seq, 3, K}, &st), OM_OK);
	uint32_t s = (uint32_t)(seq * 31 + K);
	for (int64_t i = 0; i < om_tensor_numel(&x); i++)
		((float *)x.data)[i] = i % 11 == 3 ? 0.0f
						 : (float)((int)(next(&s) % 4001) - 1800) / 512.0f;
	om_session *ses;
	om_session_options opt = {.exact = exact, .threads = threads};
	if (om_session_create(m, &opt, &ses, &st))
		fail_msg("session: %s", st.msg);
	if (om_session_run(ses, &x, 1, y, ny, &st))
		fail_msg("run: %s", st.msg);
	om_session_free(ses);
	om_tensor_free(&x);
}

/* the pass's result against the original, bit for bit */
static void same_outputs(const dq_shape *d, const om_model *fused)
{
	om_model *orig = build(d);
	const int ny = d->share_q || d->cast_out ? 2 : 1;
	const int64_t seqs[] = {0, 1, 2, 7};
	for (size_t k = 0; k < sizeof seqs / sizeof seqs[0]; k++)
		for (int mode = 0; mode < 3; mode++) {
			om_tensor a[2] = {{0}}, b[2] = {{0}};
			const int exact = mode == 0, threads = mode == 2 ? 2 : 1;
			run_model(orig, seqs[k], d->K, exact, threads, a, ny);
			run_model(fused, seqs[k], d->K, exact, threads, b, ny);
			for (int i = 0; i < ny; i++) {
				assert_int_equal(a[i].dtype, b[i].dtype);
				assert_int_equal(a[i].rank, b[i].rank);
				assert_memory_equal(a[i].dims, b[i].dims,
						    sizeof(int64_t) * (size_t)a[i].rank);
				assert_int_equal(a[i].nbytes, b[i].nbytes);
				if (a[i].nbytes && memcmp(a[i].data, b[i].data, a[i].nbytes))
					fail_msg("seq %lld mode %d output %d differs",
						 (long long)seqs[k], mode, i);
				om_tensor_free(&a[i]);
				om_tensor_free(&b[i]);
			}
		}
	free_model(orig);
}

/* builds d, runs the pass, checks what is left (want: the fused op, or NULL when left
 * alone; nodes: how many remain), then the outputs */
static void check(const dq_shape *d, const char *want, int nodes)
{
	om_model *m = build(d);
	const int changes = run_pass(m);
	if (!want) {
		assert_int_equal(changes, 0);
	} else {
		assert_true(changes >= 1);
		assert_int_equal(count(m, want), 1);
		assert_int_equal(count(m, "MatMulInteger"), 0);
		assert_int_equal(count(m, "Cast"), 0);
		assert_int_equal(om_model_opset(m, "com.microsoft"), 1);
	}
	assert_int_equal(m->graph->nnodes, nodes);
	same_outputs(d, m);
	free_model(m);
}

static void whole_chain(void **state)
{
	(void)state;
	/* packed B (int8, zero point 0), per tensor, bias */
	check(&(dq_shape){.bdt = OM_INT8, .K = 64, .N = 300, .bias = true},
	      "DynamicQuantizeMatMul", 1);
	/* per column with zero points, operands swapped, uint8 B, odd sizes */
	check(&(dq_shape){.bdt = OM_UINT8, .K = 37, .N = 19, .per_col = true, .bzp = true,
			  .bz = 100, .bias = true, .bias_first = true, .scale_first = true},
	      "DynamicQuantizeMatMul", 1);
	/* no bias; a zero b zero point given; K and N of 1 */
	check(&(dq_shape){.bdt = OM_INT8, .K = 1, .N = 1, .bzp = true},
	      "DynamicQuantizeMatMul", 1);
	check(&(dq_shape){.bdt = OM_INT8, .K = 256, .N = 130, .per_col = true, .bzp = true,
			  .bz = -3, .bias = true},
	      "DynamicQuantizeMatMul", 1);
}

static void quantizer_shared(void **state)
{
	(void)state;
	/* q is read elsewhere: the quantizer stays, MatMulIntegerToFloat reads its outputs */
	check(&(dq_shape){.bdt = OM_INT8, .K = 96, .N = 200, .bias = true, .share_q = true},
	      "MatMulIntegerToFloat", 2);
	/* the scale product uses another scale than the quantizer's */
	check(&(dq_shape){.bdt = OM_UINT8, .K = 20, .N = 9, .per_col = true, .bzp = true,
			  .bz = 7, .other_scale = true},
	      "MatMulIntegerToFloat", 2);
}

static void left_alone(void **state)
{
	(void)state;
	/* the Cast's output read by another */
	check(&(dq_shape){.bdt = OM_INT8, .K = 8, .N = 5, .cast_out = true}, NULL, 5);
	/* a [1, N] bias: the product fuses, the Add stays */
	om_model *m = build(&(dq_shape){.bdt = OM_INT8, .K = 8, .N = 5, .bias = true,
					.bias_2d = true});
	assert_int_equal(run_pass(m), 1);
	assert_int_equal(count(m, "DynamicQuantizeMatMul"), 1);
	assert_int_equal(count(m, "Add"), 1);
	same_outputs(&(dq_shape){.bdt = OM_INT8, .K = 8, .N = 5, .bias = true, .bias_2d = true},
		     m);
	free_model(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whole_chain),
		cmocka_unit_test(quantizer_shared),
		cmocka_unit_test(left_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
