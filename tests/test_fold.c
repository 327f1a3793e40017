/* test_fold.c — fold_constants and the saved size: folding never makes the saved model larger
 * (issue 9 #3), chains fold through large intermediates, QuantizeLinear/DequantizeLinear stay
 * unless fold_qdq (issue 9 #2), fold_max_bytes overrides the growth rule (Constant nodes
 * become initializers over it too), -v says why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"
#include "pass.h"
#include "match.h"

/* a tensor value: an initializer when data is given, else a graph input */
static om_value *tensor(om_graph *g, const char *name, int32_t dtype, int32_t rank,
			const int64_t *dims, const void *data)
{
	om_tensor *t = om_model_tensor(g->model, dtype, rank, dims);
	assert_non_null(t);
	om_value *v = om_graph_value(g, name);
	om_type_from_tensor(g->model, &v->type, t);
	if (data) {
		memcpy(t->data, data, t->nbytes);
		v->init = t;
		v->flags |= OM_VALUE_INITIALIZER;
		tu_push_value(g, &g->inits, &g->ninits, v);
	} else {
		v->flags |= OM_VALUE_GRAPH_INPUT;
		tu_push_value(g, &g->inputs, &g->ninputs, v);
	}
	return v;
}

static om_value *i64s(om_graph *g, const char *name, int32_t n, const int64_t *x)
{
	return tensor(g, name, OM_INT64, 1, (int64_t[]){n}, x);
}

static void output(om_graph *g, const char *name)
{
	om_value *v = om_graph_value(g, name);
	v->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, v);
}

static om_node *node(om_graph *g, const char *op, const char *ins, const char *outs,
		     const char *name)
{
	om_node *n = tu_graph_node(g, op, ins, outs);
	n->name = name;
	return n;
}

/* the size the growth rule compares: value_info (the inferred shapes) is not counted */
static size_t saved_size(const om_model *m)
{
	size_t b = 0;
	om_status st = {0};
	assert_int_equal(om_model_saved_size_without_value_info(m, &b, &st), OM_OK);
	assert_true(b > 0);
	return b;
}

/* simplifies m (verifier on) and returns the saved size before */
static size_t simplify(om_model *m, const om_simplify_options *o)
{
	om_simplify_options d = {.verify = 1};
	if (o)
		d = *o, d.verify = 1;
	size_t before = saved_size(m);
	om_status st = {0};
	om_kind rc = om_simplify(m, &d, &st);
	if (rc)
		print_error("%s\n", st.msg);
	assert_int_equal(rc, OM_OK);
	return before;
}

/* x: [1,64] floats 0..63, an initializer */
static om_value *x64(om_graph *g)
{
	float x[64];
	for (int i = 0; i < 64; i++)
		x[i] = (float)i;
	return tensor(g, "x", OM_FLOAT, 2, (int64_t[]){1, 64}, x);
}

/* issue 9 #3: Tile(x:[1,64] initializer, repeats=[1024,1]) would write 262144 bytes */
static void tile_does_not_grow(void **state)
{
	(void)state;
	for (int internal = 0; internal < 2; internal++) {
		om_model *m = tu_model(13);
		om_graph *g = m->graph;
		x64(g);
		i64s(g, "r", 2, (int64_t[]){1024, 1});
		node(g, "Tile", "x,r", "t", "n3");
		if (internal) { /* read by a node instead of being the graph output */
			tensor(g, "in", OM_FLOAT, 2, (int64_t[]){1024, 64}, NULL);
			node(g, "Add", "in,t", "y", "add");
		}
		output(g, internal ? "y" : "t");
		size_t before = simplify(m, NULL);
		assert_int_equal(tu_count_op(g, "Tile"), 1);
		assert_true(saved_size(m) <= before);
		assert_true(before < 1000);
		om_model_free(m);
	}
}

/* Tile -> ReduceSum: the large intermediate is never written, the chain folds to 64 floats */
static void chain_folds_through_large_value(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	x64(g);
	i64s(g, "r", 2, (int64_t[]){1024, 1});
	i64s(g, "ax", 1, (int64_t[]){0});
	node(g, "Tile", "x,r", "t", "n3");
	node(g, "ReduceSum", "t,ax", "y", "rs");
	output(g, "y");
	size_t before = simplify(m, NULL);
	assert_int_equal(g->nnodes, 1);
	assert_string_equal(g->nodes[0]->op, "Constant");
	const om_tensor *y = om_attr_tensor(g->nodes[0], "value");
	assert_non_null(y);
	assert_int_equal(y->rank, 2);
	assert_int_equal(y->dims[0], 1);
	assert_int_equal(y->dims[1], 64);
	for (int i = 0; i < 64; i++)
		assert_true(((const float *)y->data)[i] == 1024.0f * (float)i);
	assert_int_equal(g->ninits, 0);
	assert_true(saved_size(m) <= before);
	om_model_free(m);
}

/* A weight sliced into pieces that are put back together (LSTM gate reordering): no piece
 * alone frees the weight, the group does; the weight's other halves are read by nobody else */
static void sliced_weight_folds_as_a_group(void **state)
{
	(void)state;
	static float w[64 * 64];
	for (int i = 0; i < 64 * 64; i++)
		w[i] = (float)i;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	tensor(g, "in", OM_FLOAT, 2, (int64_t[]){64, 64}, NULL);
	tensor(g, "w", OM_FLOAT, 2, (int64_t[]){64, 64}, w);
	i64s(g, "z", 1, (int64_t[]){0});
	i64s(g, "h", 1, (int64_t[]){32});
	i64s(g, "e", 1, (int64_t[]){64});
	node(g, "Slice", "w,z,h", "top", "s0");
	node(g, "Slice", "w,h,e", "bottom", "s1");
	om_node_set_attr(node(g, "Concat", "bottom,top", "sw", "cat"), "axis", OM_ATTR_INT)->i = 0;
	node(g, "Add", "in,sw", "y", "add");
	output(g, "y");
	size_t before = simplify(m, NULL);
	assert_int_equal(g->nnodes, 1);
	const om_tensor *t = om_value_const(g, g->nodes[0]->in[1]);
	assert_non_null(t);
	assert_true(((const float *)t->data)[0] == 32.0f * 64);
	assert_true(((const float *)t->data)[32 * 64] == 0.0f);
	assert_int_equal(g->ninits, 1);
	assert_true(saved_size(m) <= before);
	om_model_free(m);
}

/* A view of a weight that another node reads (a tied lm_head's Reshape of the embedding
 * table) would grow the model: it stays, its value held as the weight's own bytes (not a
 * copy), and a fold downstream of it reads them: Slice(Reshape(w)) folds to w[100..104) */
static void view_of_shared_weight_held(void **state)
{
	(void)state;
	static float w[64 * 64];
	for (int i = 0; i < 64 * 64; i++)
		w[i] = (float)i * 0.5f;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	tensor(g, "in", OM_FLOAT, 2, (int64_t[]){64, 64}, NULL);
	tensor(g, "in4", OM_FLOAT, 1, (int64_t[]){4}, NULL);
	tensor(g, "w", OM_FLOAT, 2, (int64_t[]){64, 64}, w);
	i64s(g, "flat", 1, (int64_t[]){4096});
	i64s(g, "a", 1, (int64_t[]){100});
	i64s(g, "b", 1, (int64_t[]){104});
	node(g, "MatMul", "in,w", "y", "mm");
	node(g, "Reshape", "w,flat", "r", "view");
	node(g, "Slice", "r,a,b", "s", "slice");
	node(g, "Add", "in4,s", "z", "add");
	output(g, "y");
	output(g, "z");
	size_t before = simplify(m, NULL);
	assert_int_equal(tu_count_op(g, "Reshape"), 0);
	assert_int_equal(tu_count_op(g, "Slice"), 0);
	const om_node *add = NULL;
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i]->op, "Add"))
			add = g->nodes[i];
	assert_non_null(add);
	const om_tensor *t = om_value_const(g, add->in[1]);
	assert_non_null(t);
	assert_int_equal(t->nbytes, 4 * sizeof(float));
	for (int i = 0; i < 4; i++)
		assert_true(((const float *)t->data)[i] == (float)(100 + i) * 0.5f);
	assert_true(saved_size(m) <= before);
	om_model_free(m);
}

/* Folds that would grow the model stay; folds that do not are made; never larger. */
static void folding_never_grows(void **state)
{
	(void)state;
	for (int k = 0; k < 6; k++) {
		om_model *m = tu_model(13);
		om_graph *g = m->graph;
		const char *big = NULL;
		int nodes_after = -1;
		switch (k) {
		case 0: /* ConstantOfShape([256, 256]) -> 256 KiB of zeros */
			tensor(g, "in", OM_FLOAT, 2, (int64_t[]){256, 256}, NULL);
			i64s(g, "s", 2, (int64_t[]){256, 256});
			node(g, "ConstantOfShape", "s", "z", "cos");
			node(g, "Add", "in,z", "y", "add");
			big = "ConstantOfShape";
			break;
		case 1: /* Range(0, 100000, 1) -> 800000 bytes */
			tensor(g, "in", OM_INT64, 1, (int64_t[]){100000}, NULL);
			tensor(g, "a", OM_INT64, 0, NULL, (int64_t[]){0});
			tensor(g, "b", OM_INT64, 0, NULL, (int64_t[]){100000});
			tensor(g, "d", OM_INT64, 0, NULL, (int64_t[]){1});
			node(g, "Range", "a,b,d", "z", "range");
			node(g, "Add", "in,z", "y", "add");
			big = "Range";
			break;
		case 2: /* Expand(scalar, [1000, 1000]) */
			tensor(g, "in", OM_FLOAT, 2, (int64_t[]){1000, 1000}, NULL);
			tensor(g, "one", OM_FLOAT, 0, NULL, (float[]){1});
			i64s(g, "s", 2, (int64_t[]){1000, 1000});
			node(g, "Expand", "one,s", "z", "expand");
			node(g, "Mul", "in,z", "y", "mul");
			big = "Expand";
			break;
		case 3: { /* Constant node of 64 floats -> an initializer of the same bytes */
			tensor(g, "in", OM_FLOAT, 1, (int64_t[]){64}, NULL);
			om_node *c = node(g, "Constant", "", "z", "const");
			om_attr *a = om_node_set_attr(c, "value", OM_ATTR_TENSOR);
			a->t = om_model_tensor(m, OM_FLOAT, 1, (int64_t[]){64});
			node(g, "Add", "in,z", "y", "add");
			nodes_after = 1;
			break;
		}
		case 4: /* Add of two private 4-float constants: 16 bytes replace 32 */
			tensor(g, "in", OM_FLOAT, 1, (int64_t[]){4}, NULL);
			tensor(g, "a", OM_FLOAT, 1, (int64_t[]){4}, (float[]){1, 2, 3, 4});
			tensor(g, "b", OM_FLOAT, 1, (int64_t[]){4}, (float[]){5, 6, 7, 8});
			node(g, "Add", "a,b", "z", "ab");
			node(g, "Mul", "in,z", "y", "mul");
			nodes_after = 1;
			break;
		case 5: /* Transpose of a private weight: same bytes */
			tensor(g, "in", OM_FLOAT, 2, (int64_t[]){2, 3}, NULL);
			tensor(g, "w", OM_FLOAT, 2, (int64_t[]){3, 2}, (float[]){1, 2, 3, 4, 5, 6});
			node(g, "Transpose", "w", "z", "tr");
			node(g, "Add", "in,z", "y", "add");
			nodes_after = 1;
			break;
		}
		output(g, "y");
		size_t before = simplify(m, NULL);
		size_t after = saved_size(m);
		if (after > before)
			print_error("case %d: %zu -> %zu bytes\n", k, before, after);
		assert_true(after <= before);
		if (big)
			assert_int_equal(tu_count_op(g, big), 1);
		if (nodes_after >= 0)
			assert_int_equal(g->nnodes, nodes_after);
		om_model_free(m);
	}
}

/* fold_max_bytes is the cap of one folded output instead of the growth rule */
static void fold_max_bytes_overrides(void **state)
{
	(void)state;
	for (int big = 0; big < 2; big++) {
		om_model *m = tu_model(13);
		om_graph *g = m->graph;
		x64(g);
		i64s(g, "r", 2, (int64_t[]){1024, 1});
		tensor(g, "in", OM_FLOAT, 2, (int64_t[]){1024, 64}, NULL);
		node(g, "Tile", "x,r", "t", "n3");
		node(g, "Add", "in,t", "y", "add");
		output(g, "y");
		om_simplify_options o = {.fold_max_bytes = big ? 262144 : 262143};
		simplify(m, &o);
		assert_int_equal(tu_count_op(g, "Tile"), !big);
		om_model_free(m);
	}
}

/* under fold_max_bytes a Constant node over the cap still becomes an initializer (its data is
 * in the model already; onnxsim's tensor_size_threshold maps to the cap), while an Add whose
 * output is over the cap stays */
static void fold_max_bytes_constant_node(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	tensor(g, "in", OM_FLOAT, 1, (int64_t[]){4096}, NULL);
	om_node *c = node(g, "Constant", "", "z", "const");
	om_attr *a = om_node_set_attr(c, "value", OM_ATTR_TENSOR);
	a->t = om_model_tensor(m, OM_FLOAT, 1, (int64_t[]){4096});
	((float *)a->t->data)[7] = 3.5f;
	node(g, "Add", "z,z", "zz", "double");
	node(g, "Add", "in,zz", "y", "add");
	output(g, "y");
	om_simplify_options o = {.fold_max_bytes = 1024};
	simplify(m, &o);
	assert_int_equal(tu_count_op(g, "Constant"), 0);
	assert_int_equal(g->nnodes, 2); /* z+z is 16 KiB: over the cap, it stays */
	const om_value *z = g->nodes[0]->in[0];
	assert_non_null(z->init);
	assert_int_equal(z->init->nbytes, 16384);
	assert_true(((const float *)z->init->data)[7] == 3.5f);
	om_model_free(m);
}

/* DequantizeLinear(int8 W [2,1,1,1], scale 0.5, zero point 1) -> Conv */
static om_model *qdq_conv(int nconv, bool bn)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	tensor(g, "X", OM_FLOAT, 4, (int64_t[]){1, 1, 2, 2}, NULL);
	tensor(g, "W", OM_INT8, 4, (int64_t[]){2, 1, 1, 1}, (int8_t[]){5, -3});
	tensor(g, "s", OM_FLOAT, 0, NULL, (float[]){0.5f});
	tensor(g, "zp", OM_INT8, 0, NULL, (int8_t[]){1});
	node(g, "DequantizeLinear", "W,s,zp", "Wf", "dq");
	node(g, "Conv", "X,Wf", bn ? "c" : "Y", "conv");
	if (bn) {
		float one[2] = {1, 1}, zero[2] = {0, 0};
		tensor(g, "g", OM_FLOAT, 1, (int64_t[]){2}, (float[]){2, 3});
		tensor(g, "b", OM_FLOAT, 1, (int64_t[]){2}, zero);
		tensor(g, "mu", OM_FLOAT, 1, (int64_t[]){2}, zero);
		tensor(g, "var", OM_FLOAT, 1, (int64_t[]){2}, one);
		node(g, "BatchNormalization", "c,g,b,mu,var", "Y", "bn");
	}
	output(g, "Y");
	if (nconv == 2) { /* a second consumer with its own DequantizeLinear, as exported */
		node(g, "DequantizeLinear", "W,s,zp", "Wf2", "dq2");
		node(g, "Conv", "X,Wf2", "Y2", "conv2");
		output(g, "Y2");
	}
	return m;
}

/* issue 9 #2: a quantized model stays quantized */
static void dequantize_weight_stays(void **state)
{
	(void)state;
	om_model *m = qdq_conv(1, false);
	size_t before = simplify(m, NULL);
	om_graph *g = m->graph;
	assert_int_equal(tu_count_op(g, "DequantizeLinear"), 1);
	const om_value *w = om_graph_find(g, "W");
	assert_non_null(w);
	assert_non_null(w->init);
	assert_int_equal(w->init->dtype, OM_INT8);
	assert_true(saved_size(m) <= before);
	om_model_free(m);

	/* two consumers keep two DequantizeLinear nodes (merge_common leaves QDQ alone) */
	m = qdq_conv(2, false);
	simplify(m, NULL);
	assert_int_equal(tu_count_op(m->graph, "DequantizeLinear"), 2);
	assert_int_equal(tu_count_op(m->graph, "Conv"), 2);
	om_model_free(m);

	/* BatchNormalization is not folded into a weight that a DequantizeLinear computes */
	m = qdq_conv(1, true);
	simplify(m, NULL);
	assert_int_equal(tu_count_op(m->graph, "DequantizeLinear"), 1);
	assert_int_equal(tu_count_op(m->graph, "BatchNormalization"), 1);
	om_model_free(m);
}

/* QuantizeLinear of a float weight stays too: Q -> DQ -> Conv */
static void quantize_weight_stays(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	tensor(g, "X", OM_FLOAT, 4, (int64_t[]){1, 1, 2, 2}, NULL);
	tensor(g, "W", OM_FLOAT, 4, (int64_t[]){2, 1, 1, 1}, (float[]){2, -2});
	tensor(g, "s", OM_FLOAT, 0, NULL, (float[]){0.5f});
	tensor(g, "zp", OM_INT8, 0, NULL, (int8_t[]){0});
	node(g, "QuantizeLinear", "W,s,zp", "Wq", "q");
	node(g, "DequantizeLinear", "Wq,s,zp", "Wf", "dq");
	node(g, "Conv", "X,Wf", "Y", "conv");
	output(g, "Y");
	simplify(m, NULL);
	assert_int_equal(tu_count_op(g, "QuantizeLinear"), 1);
	assert_int_equal(tu_count_op(g, "DequantizeLinear"), 1);
	om_model_free(m);
}

/* fold_qdq: the user's float model; W' = (W - zp) * s */
static void fold_qdq_folds(void **state)
{
	(void)state;
	om_model *m = qdq_conv(1, false);
	om_simplify_options o = {.fold_qdq = 1};
	simplify(m, &o);
	om_graph *g = m->graph;
	assert_int_equal(g->nnodes, 1);
	const om_node *conv = g->nodes[0];
	assert_string_equal(conv->op, "Conv");
	const om_tensor *w = om_value_const(g, conv->in[1]);
	assert_non_null(w);
	assert_int_equal(w->dtype, OM_FLOAT);
	assert_true(((const float *)w->data)[0] == 2.0f);
	assert_true(((const float *)w->data)[1] == -2.0f);
	om_model_free(m);
}

static long file_size(const char *dir, const char *name)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	struct stat sb;
	return stat(p, &sb) ? -1 : (long)sb.st_size;
}

static void save(const om_model *m, const char *dir, const char *name)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	om_status st = {0};
	assert_int_equal(om_model_save(m, p, NULL, &st), OM_OK);
}

/* om_model_saved_size is what om_model_save writes; -v names the fold not made and why;
 * --fold-qdq on the command line */
static void cli_says_why(void **state)
{
	(void)state;
	char dir[512], out[4096], err[8192];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "test_fold"), 0);
	om_model *m = tu_model(13);
	x64(m->graph);
	i64s(m->graph, "r", 2, (int64_t[]){1024, 1});
	node(m->graph, "Tile", "x,r", "t", "n3");
	output(m->graph, "t");
	save(m, dir, "tile.onnx");
	assert_int_equal(file_size(dir, "tile.onnx"), (long)saved_size(m));
	om_model_free(m);
	assert_int_equal(tu_run_omopt(dir, "simplify tile.onnx s.onnx -v --no-shapes", out,
				      sizeof out, err, sizeof err), 0);
	const char *said = "fold: 1 node not folded: 262144 bytes of outputs would replace 272 "
			   "(-vv names each)\n";
	if (!strstr(err, said))
		print_error("stderr: %s\n", err);
	assert_non_null(strstr(err, said));
	assert_int_equal(tu_run_omopt(dir, "simplify tile.onnx s.onnx -vv --no-shapes", out,
				      sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(err, "fold: skipped Tile 'n3': 262144 bytes would replace 272\n"));
	assert_true(file_size(dir, "s.onnx") > 0);
	assert_true(file_size(dir, "s.onnx") <= file_size(dir, "tile.onnx"));

	m = qdq_conv(1, false);
	save(m, dir, "qdq.onnx");
	om_model_free(m);
	assert_int_equal(tu_run_omopt(dir, "simplify qdq.onnx s.onnx -v --no-shapes", out,
				      sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(out, "DequantizeLinear                    1        1\n"));
	assert_non_null(strstr(err, "fold: kept 1 QuantizeLinear/DequantizeLinear node"));
	assert_int_equal(tu_run_omopt(dir, "simplify qdq.onnx s.onnx --fold-qdq", out, sizeof out,
				      err, sizeof err), 0);
	assert_non_null(strstr(out, "DequantizeLinear                    1        0\n"));
	tu_tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tile_does_not_grow),
		cmocka_unit_test(chain_folds_through_large_value),
		cmocka_unit_test(sliced_weight_folds_as_a_group),
		cmocka_unit_test(view_of_shared_weight_held),
		cmocka_unit_test(folding_never_grows),
		cmocka_unit_test(fold_max_bytes_overrides),
		cmocka_unit_test(fold_max_bytes_constant_node),
		cmocka_unit_test(dequantize_weight_stays),
		cmocka_unit_test(quantize_weight_stays),
		cmocka_unit_test(fold_qdq_folds),
		cmocka_unit_test(cli_says_why),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
