/* test_dtype.c — om_convert_dtype (check/dtype.c, passes/half_convert.c): the type of every
 * value after the conversion, Casts at the boundary, integer chains untouched, an overflowing
 * Exp and what reads its result kept float32 by measurement, the converted model against the
 * float32 one on random inputs, bfloat16, a value a subgraph reads, the file about half, a
 * saturating tail kept float32 as a suffix, kept nodes' weights stored in half or not. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pass.h"
#include "testutil.h"

static void add_init(om_model *m, const char *name, int32_t dtype, int32_t rank,
		     const int64_t *dims, double scale)
{
	om_graph *g = m->graph;
	om_tensor *t = om_model_tensor(m, dtype, rank, dims);
	for (int64_t i = 0, n = om_tensor_numel(t); i < n; i++) {
		double v = scale * (double)((i * 7919) % 13 - 6) / 6.0;
		if (dtype == OM_FLOAT)
			((float *)t->data)[i] = (float)v;
		else
			((int64_t *)t->data)[i] = (int64_t)v;
	}
	om_value *v = om_graph_value(g, name);
	v->init = t;
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(m, &v->type, t);
	tu_push_value(g, &g->inits, &g->ninits, v);
}

static void output(om_graph *g, const char *name, int32_t rank, const int64_t *dims)
{
	om_value *v = tu_typed_value(g, name, OM_FLOAT, rank, dims);
	v->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, v);
}

static void name_node(om_node *n, const char *name)
{
	n->name = om_arena_strdup(n->graph->model->arena, name);
}

/*
 * x:[N,K] float, ids:[N] int64
 *   mm = MatMul(x, W[K,C]) -> h; shape = Shape(h) -> hs (int64); reshape = Reshape(h, hs) -> r
 *   gather = Gather(E[16,C], ids) -> e; add = Add(r, e) -> a; relu = Relu(a) -> out
 *   scale = Mul(x, C20) -> xs; exp = Exp(xs) -> ex (e^(20 x): beyond float16 for x > 0.56)
 *   sum = ReduceSum(ex, axis 1, keepdims) -> den; div = Div(ex, den) -> p (in [0, 1])
 */
static om_model *make_model(int64_t k, int64_t cols)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	om_value *x = tu_typed_value(g, "x", OM_FLOAT, 2, (int64_t[]){-1, k});
	om_value *ids = tu_typed_value(g, "ids", OM_INT64, 1, (int64_t[]){-1});
	x->flags |= OM_VALUE_GRAPH_INPUT;
	ids->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	tu_push_value(g, &g->inputs, &g->ninputs, ids);
	add_init(m, "W", OM_FLOAT, 2, (int64_t[]){k, cols}, 0.5);
	add_init(m, "E", OM_FLOAT, 2, (int64_t[]){16, cols}, 1.0);
	add_init(m, "C20", OM_FLOAT, 0, NULL, 0);
	*(float *)om_graph_find(g, "C20")->init->data = 20;
	add_init(m, "axes", OM_INT64, 1, (int64_t[]){1}, 0);
	*(int64_t *)om_graph_find(g, "axes")->init->data = 1;
	name_node(tu_graph_node(g, "MatMul", "x,W", "h"), "mm");
	name_node(tu_graph_node(g, "Shape", "h", "hs"), "shape");
	name_node(tu_graph_node(g, "Reshape", "h,hs", "r"), "reshape");
	name_node(tu_graph_node(g, "Gather", "E,ids", "e"), "gather");
	name_node(tu_graph_node(g, "Add", "r,e", "a"), "add");
	name_node(tu_graph_node(g, "Relu", "a", "out"), "relu");
	name_node(tu_graph_node(g, "Mul", "x,C20", "xs"), "scale");
	name_node(tu_graph_node(g, "Exp", "xs", "ex"), "exp");
	om_node *sum = tu_graph_node(g, "ReduceSum", "ex,axes", "den");
	name_node(sum, "sum");
	om_node_set_attr(sum, "keepdims", OM_ATTR_INT)->i = 1;
	name_node(tu_graph_node(g, "Div", "ex,den", "p"), "div");
	output(g, "out", 2, (int64_t[]){-1, cols});
	output(g, "p", 2, (int64_t[]){-1, k});
	return m;
}

/* make_model(k, cols) as the loader gives it. */
static om_model *loaded_model(int64_t k, int64_t cols)
{
	om_model *m = make_model(k, cols), *r = tu_reload(m);
	om_model_free(m);
	return r;
}

static const om_node *node_named(const om_graph *g, const char *name)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i]->name, name))
			return g->nodes[i];
	fail_msg("no node '%s'", name);
	return NULL;
}

/* The element type of v in the converted model: its data, or the type the conversion set. */
static int32_t elem(const om_value *v)
{
	return v->init ? v->init->dtype : v->type.elem;
}

static const om_dtype_kept *kept(const om_dtype_report *r, const char *node)
{
	for (int i = 0; i < r->nkept; i++)
		if (!strcmp(r->kept[i].node, node))
			return &r->kept[i];
	return NULL;
}

static void types_after_conversion(void **state)
{
	(void)state;
	om_model *m = loaded_model(64, 32);
	om_dtype_options o = {.dtype = OM_FLOAT16, .no_measure = 1};
	om_dtype_report r;
	om_status st = {0};
	assert_int_equal(om_convert_dtype(m, &o, &r, &st), OM_OK);
	assert_int_equal(om_annotate_types(m, &st), OM_OK); /* types of the untouched values */
	const om_graph *g = m->graph;
	/* the interface: float32 in and out, same names */
	assert_int_equal(g->ninputs, 2);
	assert_string_equal(g->inputs[0]->name, "x");
	assert_int_equal(g->inputs[0]->type.elem, OM_FLOAT);
	assert_int_equal(g->inputs[1]->type.elem, OM_INT64);
	assert_int_equal(g->noutputs, 2);
	for (int i = 0; i < 2; i++) {
		const om_value *v = g->outputs[i];
		assert_int_equal(v->type.elem, OM_FLOAT);
		assert_non_null(v->producer);
		assert_string_equal(v->producer->op, "Cast"); /* float16 -> float32 */
		assert_int_equal(om_attr_int(v->producer, "to", 0), OM_FLOAT);
		assert_int_equal(elem(v->producer->in[0]), OM_FLOAT16);
	}
	/* compute in float16: the MatMul reads x through one Cast and W converted in place */
	const om_node *mm = node_named(g, "mm");
	assert_string_equal(mm->in[0]->producer->op, "Cast");
	assert_ptr_equal(mm->in[0]->producer->in[0], g->inputs[0]);
	assert_string_equal(mm->in[1]->name, "W");
	assert_int_equal(elem(mm->in[1]), OM_FLOAT16);
	assert_int_equal(elem(mm->out[0]), OM_FLOAT16);
	/* x is cast once for its two readers */
	assert_ptr_equal(node_named(g, "scale")->in[0], mm->in[0]);
	assert_int_equal(tu_count_op(g, "Cast"), 3);
	/* the integer chain is untouched: Shape's int64 feeds Reshape as it is, ids too */
	const om_node *rs = node_named(g, "reshape");
	assert_int_equal(elem(rs->in[1]), OM_INT64);
	assert_ptr_equal(rs->in[1]->producer, node_named(g, "shape"));
	assert_ptr_equal(node_named(g, "shape")->in[0], mm->out[0]);
	assert_ptr_equal(node_named(g, "gather")->in[1], g->inputs[1]);
	assert_int_equal(elem(node_named(g, "gather")->in[0]), OM_FLOAT16);
	assert_int_equal(elem(node_named(g, "sum")->in[1]), OM_INT64);
	assert_int_equal(elem(node_named(g, "scale")->in[1]), OM_FLOAT16); /* C20 */
	assert_int_equal(r.converted, 10); /* Shape reads float16 too */
	assert_int_equal(r.nkept, 0);
	/* it runs in omopt's executor */
	om_dtype_report_free(&r);
	om_session *s = tu_session_create(m);
	om_session_free(s);
	om_model_free(m);
}

static void overflowing_exp_is_kept(void **state)
{
	(void)state;
	om_model *m = loaded_model(64, 32);
	om_model *orig = tu_reload(m);
	om_dtype_options o = {.dtype = OM_FLOAT16, .check = {.runs = 3}};
	om_dtype_report r;
	om_status st = {0};
	assert_int_equal(om_convert_dtype(m, &o, &r, &st), OM_OK);
	const om_dtype_kept *k = kept(&r, "exp");
	assert_non_null(k);
	assert_int_equal(k->reason, OM_KEEP_OVERFLOW);
	assert_true(isinf(k->max_rel));
	/* what reads e^(20 x) cannot read it in float16 either */
	assert_non_null(kept(&r, "sum"));
	assert_int_equal(kept(&r, "sum")->reason, OM_KEEP_INPUT_RANGE);
	assert_non_null(kept(&r, "div"));
	assert_null(kept(&r, "mm"));
	assert_null(kept(&r, "relu"));
	assert_true(r.check.passed);
	assert_true(r.check.rtol == 1e-2);
	assert_int_equal(om_annotate_types(m, &st), OM_OK);
	const om_graph *g = m->graph;
	const om_node *exp = node_named(g, "exp");
	assert_int_equal(elem(exp->in[0]), OM_FLOAT);
	assert_int_equal(elem(exp->out[0]), OM_FLOAT);
	assert_int_equal(elem(node_named(g, "div")->out[0]), OM_FLOAT);
	assert_int_equal(elem(node_named(g, "mm")->out[0]), OM_FLOAT16);
	/* the Mul feeding the Exp is converted: the Exp reads it through a Cast to float32 */
	assert_int_equal(elem(node_named(g, "scale")->out[0]), OM_FLOAT16);
	assert_string_equal(exp->in[0]->producer->op, "Cast");
	om_dtype_report_free(&r);

	/* differential: float32 against the converted model on other random inputs */
	om_check_options co = {.runs = 4, .seed = 99, .rtol = 1e-2, .atol = 1e-6};
	om_check_report cr;
	assert_int_equal(om_check(orig, m, &co, &cr, &st), OM_OK);
	assert_true(cr.passed);
	assert_true(cr.outputs[0].max_rel > 0); /* float16 rounding is there */
	assert_true(cr.outputs[0].max_rel < 1e-2);
	om_check_report_free(&cr);
	/* and without the keep-list the overflow shows */
	om_model *bad = tu_reload(orig);
	om_dtype_options no = {.dtype = OM_FLOAT16, .no_measure = 1};
	assert_int_equal(om_convert_dtype(bad, &no, &r, &st), OM_OK);
	om_dtype_report_free(&r);
	assert_int_equal(om_check(orig, bad, &co, &cr, &st), OM_OK);
	assert_false(cr.passed);
	assert_string_equal(cr.outputs[1].name, "p");
	assert_int_equal(cr.outputs[1].state, OM_DIFF_OVER);
	om_check_report_free(&cr);
	om_model_free(bad);
	om_model_free(orig);
	om_model_free(m);
}

static void asked_keep_and_bfloat16(void **state)
{
	(void)state;
	om_model *m = loaded_model(64, 32);
	const char *keep[] = {"relu", NULL};
	om_dtype_options o = {.dtype = OM_BFLOAT16, .keep = keep, .check = {.runs = 2}};
	om_dtype_report r;
	om_status st = {0};
	assert_int_equal(om_convert_dtype(m, &o, &r, &st), OM_OK);
	assert_non_null(kept(&r, "relu"));
	assert_int_equal(kept(&r, "relu")->reason, OM_KEEP_ASKED);
	assert_int_equal(om_annotate_types(m, &st), OM_OK);
	const om_graph *g = m->graph;
	assert_int_equal(elem(node_named(g, "mm")->in[1]), OM_BFLOAT16);
	assert_int_equal(elem(node_named(g, "add")->out[0]), OM_BFLOAT16);
	const om_node *relu = node_named(g, "relu");
	assert_int_equal(elem(relu->in[0]), OM_FLOAT);
	assert_ptr_equal(relu->out[0], g->outputs[0]); /* a float32 node writes it directly */
	assert_true(r.check.passed);
	om_dtype_report_free(&r);
	om_dtype_options bad = {.dtype = OM_DOUBLE};
	assert_int_equal(om_convert_dtype(m, &bad, &r, &st), OM_ERR_INVALID_INPUT);
	om_dtype_report_free(&r);
	om_model_free(m);
}

/* y = If(c) { then: Add(h, one) } { else: Identity(h) }, h = MatMul(x, W) read by both
 * branches: the If stays float32 and h keeps its name in float32 (x:[2,64], W:[64,32]). */
static void subgraph_reads_float32(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	om_value *x = tu_typed_value(g, "x", OM_FLOAT, 2, (int64_t[]){2, 64});
	om_value *c = tu_typed_value(g, "c", OM_BOOL, 0, NULL);
	x->flags |= OM_VALUE_GRAPH_INPUT;
	c->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	tu_push_value(g, &g->inputs, &g->ninputs, c);
	add_init(m, "W", OM_FLOAT, 2, (int64_t[]){64, 32}, 0.5);
	name_node(tu_graph_node(g, "MatMul", "x,W", "h"), "mm");
	om_graph *br[2];
	for (int b = 0; b < 2; b++) {
		br[b] = om_graph_new(m, g);
		om_value *h = om_graph_value(br[b], "h");
		h->flags |= OM_VALUE_OUTER;
		if (b == 0) {
			add_init(m, "one", OM_FLOAT, 0, NULL, 0);
			tu_graph_node(br[b], "Add", "h,one", "yb");
		} else {
			tu_graph_node(br[b], "Identity", "h", "yb");
		}
		om_value *yb = tu_typed_value(br[b], "yb", OM_FLOAT, 2, (int64_t[]){2, 32});
		yb->flags |= OM_VALUE_GRAPH_OUTPUT;
		tu_push_value(br[b], &br[b]->outputs, &br[b]->noutputs, yb);
	}
	om_node *iff = tu_graph_node(g, "If", "c", "y");
	name_node(iff, "if");
	om_node_set_attr(iff, "then_branch", OM_ATTR_GRAPH)->g = br[0];
	om_node_set_attr(iff, "else_branch", OM_ATTR_GRAPH)->g = br[1];
	name_node(tu_graph_node(g, "Relu", "y", "out"), "relu");
	output(g, "out", 2, (int64_t[]){2, 32});
	om_model *r = tu_reload(m);
	om_model_free(m);
	om_dtype_options o = {.dtype = OM_FLOAT16, .check = {.runs = 2}};
	om_dtype_report rep;
	om_status st = {0};
	assert_int_equal(om_convert_dtype(r, &o, &rep, &st), OM_OK);
	assert_int_equal(rep.nkept, 1);
	assert_non_null(kept(&rep, "if"));
	assert_int_equal(kept(&rep, "if")->reason, OM_KEEP_SUBGRAPH);
	const om_value *h = om_graph_find(r->graph, "h");
	assert_int_equal(h->type.elem, OM_FLOAT);
	assert_string_equal(h->producer->op, "Cast"); /* of the MatMul's float16 result */
	assert_int_equal(elem(node_named(r->graph, "mm")->out[0]), OM_FLOAT16);
	assert_true(rep.check.passed);
	om_dtype_report_free(&rep);
	om_model_free(r);
}

/* LSTM in float16 (omopt runs it through its float32 kernel, results rounded): converted, and
 * within 1e-2 of float32 on random inputs. x:[S,1,8], W:[1,128,8], R:[1,128,32], B:[1,256]. */
static void lstm_in_half(void **state)
{
	(void)state;
	om_model *m = tu_model(14);
	om_graph *g = m->graph;
	om_value *x = tu_typed_value(g, "x", OM_FLOAT, 3, (int64_t[]){-1, 1, 8});
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	add_init(m, "W", OM_FLOAT, 3, (int64_t[]){1, 128, 8}, 0.3);
	add_init(m, "R", OM_FLOAT, 3, (int64_t[]){1, 128, 32}, 0.2);
	add_init(m, "B", OM_FLOAT, 2, (int64_t[]){1, 256}, 0.1);
	om_node *n = tu_graph_node(g, "LSTM", "x,W,R,B", "y,yh");
	name_node(n, "lstm");
	om_node_set_attr(n, "hidden_size", OM_ATTR_INT)->i = 32;
	output(g, "yh", 3, (int64_t[]){1, 1, 32});
	om_model *orig = tu_reload(m), *h = tu_reload(m);
	om_model_free(m);
	om_dtype_options o = {.dtype = OM_FLOAT16, .check = {.runs = 2}};
	om_dtype_report r;
	om_status st = {0};
	assert_int_equal(om_convert_dtype(h, &o, &r, &st), OM_OK);
	assert_int_equal(r.converted, 1);
	assert_int_equal(r.nkept, 0);
	om_dtype_report_free(&r);
	assert_int_equal(elem(node_named(h->graph, "lstm")->in[1]), OM_FLOAT16);
	om_check_options co = {.runs = 3, .seed = 5, .rtol = 1e-2, .atol = 1e-6};
	om_check_report cr;
	assert_int_equal(om_check(orig, h, &co, &cr, &st), OM_OK);
	assert_true(cr.passed);
	assert_true(cr.outputs[0].max_rel > 0 && cr.outputs[0].max_rel < 1e-2);
	om_check_report_free(&cr);
	om_model_free(orig);
	om_model_free(h);
}

static void file_about_half(void **state)
{
	(void)state;
	om_model *m = loaded_model(256, 256);
	size_t before = 0, after = 0;
	om_status st = {0};
	assert_int_equal(om_model_saved_size(m, &before, &st), OM_OK);
	om_dtype_options o = {.dtype = OM_FLOAT16, .check = {.runs = 1}};
	om_dtype_report r;
	assert_int_equal(om_convert_dtype(m, &o, &r, &st), OM_OK);
	om_dtype_report_free(&r);
	assert_int_equal(om_model_saved_size(m, &after, &st), OM_OK);
	double ratio = (double)after / (double)before;
	print_message("saved size %zu -> %zu (%.3f)\n", before, after, ratio);
	assert_true(ratio > 0.45 && ratio < 0.56);
	om_model_free(m);
}

/*
 * A saturating tail: x:[N,64] -> mm = MatMul(x, W[64,256]) -> relu -> mm2 = MatMul(., V[256,64])
 * -> z0 (|z0| < 2) -> add = Add(z0, -70) -> sig = Sigmoid -> out, about e^(z0 - 70). The
 * output's relative error is the absolute error of the Add's result, and float16 resolves
 * 70 to 1/16 only: with the Add in float16 the outputs are off by several percent whatever
 * else is kept, while the weights before it convert freely. Keeping a prefix cannot pass
 * short of keeping everything up to the Add; keeping the suffix from the Add on does.
 */
static om_model *saturating_tail_model_c(int64_t nc, float jitter);

static om_model *saturating_tail_model(void)
{
	return saturating_tail_model_c(0, 0);
}

/* The same with C a vector of nc elements (0: a scalar), -70 - jitter * (1 + i % 7) / 7. */
static om_model *saturating_tail_model_c(int64_t nc, float jitter)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	om_value *x = tu_typed_value(g, "x", OM_FLOAT, 2, (int64_t[]){-1, 64});
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	add_init(m, "W", OM_FLOAT, 2, (int64_t[]){64, 256}, 0.25);
	add_init(m, "V", OM_FLOAT, 2, (int64_t[]){256, 64}, 0.02);
	add_init(m, "C", OM_FLOAT, nc ? 1 : 0, (int64_t[]){nc}, 0);
	for (int64_t i = 0; i < (nc ? nc : 1); i++)
		((float *)om_graph_find(g, "C")->init->data)[i] =
			-70.0f - jitter * (float)(1 + i % 7) / 7.0f;
	name_node(tu_graph_node(g, "MatMul", "x,W", "h"), "mm");
	name_node(tu_graph_node(g, "Relu", "h", "r"), "relu");
	name_node(tu_graph_node(g, "MatMul", "r,V", "z0"), "mm2");
	name_node(tu_graph_node(g, "Add", "z0,C", "z"), "add");
	name_node(tu_graph_node(g, "Sigmoid", "z", "out"), "sig");
	output(g, "out", 2, (int64_t[]){-1, 64});
	om_model *r = tu_reload(m);
	om_model_free(m);
	return r;
}

static void saturating_tail_keeps_suffix(void **state)
{
	(void)state;
	om_model *m = saturating_tail_model(), *orig = tu_reload(m);
	size_t before = 0, after = 0;
	om_status st = {0};
	assert_int_equal(om_model_saved_size(m, &before, &st), OM_OK);
	/* atol below the outputs (about 1e-31): they count relative to their scale */
	om_dtype_options o = {.dtype = OM_FLOAT16, .check = {.runs = 2, .atol = 1e-36}};
	om_dtype_report r;
	assert_int_equal(om_convert_dtype(m, &o, &r, &st), OM_OK);
	assert_true(r.check.passed);
	assert_non_null(kept(&r, "sig")); /* e^-70 is below float16's range */
	assert_non_null(kept(&r, "add"));
	assert_int_equal(kept(&r, "add")->reason, OM_KEEP_OUTPUTS);
	assert_null(kept(&r, "mm"));
	assert_null(kept(&r, "mm2"));
	om_dtype_report_free(&r);
	assert_int_equal(om_model_saved_size(m, &after, &st), OM_OK);
	double ratio = (double)after / (double)before;
	print_message("saved size %zu -> %zu (%.3f)\n", before, after, ratio);
	assert_true(ratio < 0.56);

	/* on other inputs too, and the Add in float16 fails there */
	om_check_options co = {.runs = 3, .seed = 7, .rtol = 1e-2, .atol = 1e-36};
	om_check_report cr;
	assert_int_equal(om_check(orig, m, &co, &cr, &st), OM_OK);
	assert_true(cr.passed);
	om_check_report_free(&cr);
	om_model *bad = tu_reload(orig);
	om_dtype_options only_sig = {.dtype = OM_FLOAT16, .no_measure = 1,
				     .keep = (const char *const[]){"sig", NULL}};
	assert_int_equal(om_convert_dtype(bad, &only_sig, &r, &st), OM_OK);
	om_dtype_report_free(&r);
	assert_int_equal(om_check(orig, bad, &co, &cr, &st), OM_OK);
	print_message("the Add in float16: max rel %.3g\n", cr.outputs[0].max_rel);
	assert_false(cr.passed);
	om_check_report_free(&cr);
	om_model_free(bad);
	om_model_free(orig);
	om_model_free(m);
}

/* The element type of initializer `name` in m, and whether a Cast reads it. */
static int32_t init_elem(const om_model *m, const char *name, bool *cast)
{
	const om_value *v = om_graph_find(m->graph, name);
	assert_non_null(v);
	assert_non_null(v->init);
	*cast = false;
	for (int32_t i = 0; i < m->graph->nnodes; i++)
		*cast |= !strcmp(m->graph->nodes[i]->op, "Cast") && m->graph->nodes[i]->in[0] == v;
	return v->init->dtype;
}

/*
 * The tail's Add kept float32 reads its 64 constants stored in float16 when they are exact
 * there (-70: the file shrinks as if it were converted), and in float32, kept whole with
 * OM_KEEP_WEIGHTS, when their float16 rounding alone (up to 1/32 of a logit) moves the outputs
 * by percents.
 */
static void kept_nodes_read_half_weights(void **state)
{
	(void)state;
	const float jitter[] = {0, 0.2f};
	for (int c = 0; c < 2; c++) {
		om_model *m = saturating_tail_model_c(64, jitter[c]), *orig = tu_reload(m);
		om_status st = {0};
		om_dtype_options o = {.dtype = OM_FLOAT16, .check = {.runs = 2, .atol = 1e-36}};
		om_dtype_report r;
		assert_int_equal(om_convert_dtype(m, &o, &r, &st), OM_OK);
		assert_true(r.check.passed);
		const om_dtype_kept *add = kept(&r, "add");
		assert_non_null(add);
		assert_null(kept(&r, "mm"));
		bool cast = false;
		const int32_t e = init_elem(m, "C", &cast);
		print_message("jitter %g: add kept (%d), C %s, %s\n", jitter[c], add->reason,
			      om_dtype_name(e), cast ? "through a Cast" : "read directly");
		if (c == 0) {
			assert_int_equal(add->reason, OM_KEEP_OUTPUTS);
			assert_int_equal(add->weights_half, 1);
			assert_int_equal(e, OM_FLOAT16);
			assert_true(cast);
		} else {
			assert_int_equal(add->reason, OM_KEEP_WEIGHTS);
			assert_int_equal(add->weights_half, 0);
			assert_int_equal(e, OM_FLOAT);
			assert_false(cast);
		}
		om_dtype_report_free(&r);
		/* on other inputs too */
		om_check_options co = {.runs = 3, .seed = 11, .rtol = 1e-2, .atol = 1e-36};
		om_check_report cr;
		assert_int_equal(om_check(orig, m, &co, &cr, &st), OM_OK);
		assert_true(cr.passed);
		om_check_report_free(&cr);
		om_model_free(orig);
		om_model_free(m);
	}
}

static void cli_prints_kept_nodes(void **state)
{
	(void)state;
	char dir[64], path[128], out[8192], err[8192];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "omdtypecli"), 0);
	snprintf(path, sizeof path, "%s/m.onnx", dir);
	om_model *m = make_model(64, 32);
	om_status st = {0};
	assert_int_equal(om_model_save(m, path, NULL, &st), OM_OK);
	om_model_free(m);
	int rc = tu_run_omopt(dir, "simplify m.onnx h.onnx --dtype fp16 --check 2", out,
			      sizeof out, err, sizeof err);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(err, "kept in float32: exp (Exp): overflow (output 'ex')"));
	assert_non_null(strstr(err, "kept in float32: sum (ReduceSum): an input beyond"));
	assert_non_null(strstr(out, "dtype: float16 against the float32 model"));
	assert_int_equal(tu_run_omopt(dir, "simplify m.onnx h.onnx --dtype fp8", out, sizeof out,
				      err, sizeof err), 2);
	assert_int_equal(tu_run_omopt(dir, "simplify m.onnx h.onnx --keep-fp32 mm", out,
				      sizeof out, err, sizeof err), 2);
	tu_tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(types_after_conversion),
		cmocka_unit_test(overflowing_exp_is_kept),
		cmocka_unit_test(asked_keep_and_bfloat16),
		cmocka_unit_test(subgraph_reads_float32),
		cmocka_unit_test(lstm_in_half),
		cmocka_unit_test(file_about_half),
		cmocka_unit_test(saturating_tail_keeps_suffix),
		cmocka_unit_test(kept_nodes_read_half_weights),
		cmocka_unit_test(cli_prints_kept_nodes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
