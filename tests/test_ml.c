/* test_ml.c — the ai.onnx.ml numeric rows (kernels/ml) against hand computations: transforms,
 * trees (both attribute forms, aggregates, base values, missing values, binary rule), linear
 * models, SVMs, post transforms, and the malformed attributes each must refuse. */
#include "nodetest.h"

#define ML "ai.onnx.ml"

static om_node *ml_node(om_model **m, const char *op, int32_t nin, int32_t nout)
{
	om_node *n = nt_node(m, op, nin, nout);
	n->domain = ML;
	return n;
}

static void ml_strs(om_node *n, const char *name, const char *const *v, int64_t count)
{
	om_attr *a = om_node_set_attr(n, name, OM_ATTR_STRINGS);
	a->strings = om_arena_alloc(n->graph->model->arena, sizeof(om_str) * (size_t)(count + 1));
	for (int64_t i = 0; i < count; i++)
		a->strings[i] = (om_str){om_arena_strndup(n->graph->model->arena, v[i], strlen(v[i])),
					 (int64_t)strlen(v[i])};
	a->n = count;
}

/* a 1-D tensor attribute of `count` elements of dtype copied from v */
static void ml_tattr(om_node *n, const char *name, int32_t dtype, const void *v, int64_t count)
{
	om_tensor *t = om_model_tensor(n->graph->model, dtype, 1, &count);
	memcpy(t->data, v, om_dtype_size(dtype) * (size_t)count);
	om_node_set_attr(n, name, OM_ATTR_TENSOR)->t = t;
}

#define I64S(n, name, ...) nt_ints(n, name, (int64_t[]){__VA_ARGS__}, \
				   sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define F32S(n, name, ...) nt_floats(n, name, (float[]){__VA_ARGS__}, \
				     sizeof((float[]){__VA_ARGS__}) / sizeof(float))

static void transforms(void **state)
{
	(void)state;
	om_model *m;
	om_tensor out[2];
	/* Binarizer: X > 0.4, X's type */
	om_node *n = ml_node(&m, "Binarizer", 1, 1);
	nt_float(n, "threshold", 0.4f);
	om_tensor x = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, (float[]){-1, 0.4f, 0.5f, 2});
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&x}, out), OM_OK);
	nt_check_f32(&out[0], 1, (int64_t[]){4}, (float[]){0, 0, 1, 1}, 0);
	om_tensor_free(&out[0]);
	om_tensor xi = NT_I64(-3, 0, 1, 7);
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&xi}, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_INT64);
	assert_memory_equal(out[0].data, ((int64_t[]){0, 0, 1, 1}), 32);
	om_tensor_free(&out[0]);
	nt_free(m);
	/* Scaler: (X - offset) * scale per feature */
	n = ml_node(&m, "Scaler", 1, 1);
	F32S(n, "offset", 1, 2);
	F32S(n, "scale", 2, 0.5f);
	om_tensor x2 = nt_tensor(OM_INT64, 2, (int64_t[]){2, 2}, (int64_t[]){1, 2, 3, 4});
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&x2}, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, (float[]){0, 0, 4, 1}, 0);
	om_tensor_free(&out[0]);
	F32S(n, "scale", 2, 0.5f, 1);
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&x2}, out), OM_ERR_INVALID_INPUT);
	nt_free(m);
	/* Normalizer: rows over MAX, L1, L2; a zero row stays */
	n = ml_node(&m, "Normalizer", 1, 1);
	om_tensor x3 = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 2}, (float[]){3, 4, 0, 0});
	const char *norms[] = {"MAX", "L1", "L2"};
	const float want[3][4] = {{0.75f, 1, 0, 0}, {3 / 7.0f, 4 / 7.0f, 0, 0}, {0.6f, 0.8f, 0, 0}};
	for (int k = 0; k < 3; k++) {
		nt_str(n, "norm", norms[k]);
		assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&x3}, out), OM_OK);
		nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, want[k], 1e-7);
		om_tensor_free(&out[0]);
	}
	nt_str(n, "norm", "L3");
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&x3}, out), OM_ERR_INVALID_MODEL);
	nt_free(m);
	/* Imputer: NaN -> the feature's value; int64: replaced_value_int64 */
	n = ml_node(&m, "Imputer", 1, 1);
	F32S(n, "imputed_value_floats", 10, 20);
	nt_float(n, "replaced_value_float", NAN);
	om_tensor x4 = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 2}, (float[]){1, NAN, NAN, 4});
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&x4}, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, (float[]){1, 20, 10, 4}, 0);
	om_tensor_free(&out[0]);
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&xi}, out), OM_ERR_INVALID_MODEL);
	n->nattr = 0; /* the int64 form alone */
	I64S(n, "imputed_value_int64s", 9);
	nt_int(n, "replaced_value_int64", 0);
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&xi}, out), OM_OK);
	assert_memory_equal(out[0].data, ((int64_t[]){-3, 9, 1, 7}), 32);
	om_tensor_free(&out[0]);
	nt_free(m);
}

static void encoders(void **state)
{
	(void)state;
	om_model *m;
	om_tensor out[1];
	/* OneHotEncoder: X's shape + (3) */
	om_node *n = ml_node(&m, "OneHotEncoder", 1, 1);
	I64S(n, "cats_int64s", 5, 1, 7);
	om_tensor x = nt_tensor(OM_INT64, 2, (int64_t[]){2, 1}, (int64_t[]){1, 4});
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&x}, out), OM_OK);
	nt_check_f32(&out[0], 3, (int64_t[]){2, 1, 3}, (float[]){0, 1, 0, 0, 0, 0}, 0);
	om_tensor_free(&out[0]);
	nt_int(n, "zeros", 0);
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&x}, out), OM_ERR_INVALID_INPUT);
	const char *cats[] = {"b", "a"};
	ml_strs(n, "cats_strings", cats, 2);
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&x}, out), OM_ERR_INVALID_MODEL);
	n->nattr = 0; /* cats_strings alone */
	ml_strs(n, "cats_strings", cats, 2);
	om_str sv[] = {{"a", 1}, {"b", 1}};
	om_tensor xs = nt_tensor(OM_STRING, 1, (int64_t[]){2}, sv);
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&xs}, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, (float[]){0, 1, 1, 0}, 0);
	om_tensor_free(&out[0]);
	nt_free(m);
	/* ArrayFeatureExtractor: X[..., [2, 0]] */
	n = ml_node(&m, "ArrayFeatureExtractor", 2, 1);
	om_tensor x2 = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
	om_tensor ix = NT_I64(2, 0);
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&x2, &ix}, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, (float[]){3, 1, 6, 4}, 0);
	om_tensor_free(&out[0]);
	om_str s3[] = {{"x", 1}, {"yy", 2}, {"z", 1}};
	om_tensor xs3 = nt_tensor(OM_STRING, 1, (int64_t[]){3}, s3);
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&xs3, &ix}, out), OM_OK);
	const om_str *got = out[0].data;
	assert_true(got[0].len == 1 && got[0].ptr[0] == 'z' && got[1].ptr[0] == 'x');
	om_tensor_free(&out[0]);
	om_tensor bad = NT_I64(3);
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&x2, &bad}, out),
			 OM_ERR_INVALID_INPUT);
	nt_free(m);
	/* FeatureVectorizer: (2, 1) and the first 2 of (2, 3); a third input padded to 2 */
	n = ml_node(&m, "FeatureVectorizer", 3, 1);
	I64S(n, "inputdimensions", 1, 2, 2);
	om_tensor a = nt_tensor(OM_INT64, 2, (int64_t[]){2, 1}, (int64_t[]){7, 8});
	om_tensor c = nt_tensor(OM_DOUBLE, 2, (int64_t[]){2, 1}, (double[]){-1, -2});
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&a, &x2, &c}, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 5},
		     (float[]){7, 1, 2, -1, 0, 8, 4, 5, -2, 0}, 0);
	om_tensor_free(&out[0]);
	nt_free(m);
}

/* Tree 0: x0 <= 0.5 ? leaf 1 : (x1 < 2 ? leaf 3 : leaf 4); tree 1: one leaf. Node ids are
 * listed out of order to check the lookup by (tree, id). */
static om_node *tree_node(om_model **m, const char *op, const char *pre, int32_t nout)
{
	om_node *n = ml_node(m, op, 1, nout);
	I64S(n, "nodes_treeids", 0, 0, 0, 0, 0, 1);
	I64S(n, "nodes_nodeids", 0, 2, 1, 3, 4, 0);
	I64S(n, "nodes_featureids", 0, 1, 0, 0, 0, 0);
	const char *modes[] = {"BRANCH_LEQ", "BRANCH_LT", "LEAF", "LEAF", "LEAF", "LEAF"};
	ml_strs(n, "nodes_modes", modes, 6);
	F32S(n, "nodes_values", 0.5f, 2, 0, 0, 0, 0);
	I64S(n, "nodes_truenodeids", 1, 3, 0, 0, 0, 0);
	I64S(n, "nodes_falsenodeids", 2, 4, 0, 0, 0, 0);
	I64S(n, "nodes_missing_value_tracks_true", 1, 0, 0, 0, 0, 0);
	char name[32];
	snprintf(name, sizeof name, "%s_treeids", pre);
	I64S(n, name, 0, 0, 0, 1);
	snprintf(name, sizeof name, "%s_nodeids", pre);
	I64S(n, name, 1, 3, 4, 0);
	snprintf(name, sizeof name, "%s_ids", pre);
	I64S(n, name, 0, 1, 2, 0);
	snprintf(name, sizeof name, "%s_weights", pre);
	F32S(n, name, 1, 10, 100, 1000);
	return n;
}

static void tree_regressor(void **state)
{
	(void)state;
	om_model *m;
	om_tensor out[1];
	om_node *n = tree_node(&m, "TreeEnsembleRegressor", "target", 1);
	nt_int(n, "n_targets", 3);
	/* rows: left; right, x1 < 2; right, x1 >= 2; NaN x0 goes left (tracks true) */
	om_tensor x = nt_tensor(OM_FLOAT, 2, (int64_t[]){4, 2},
				(float[]){0, 9, 1, 1, 1, 3, NAN, 5});
	const om_tensor *in[] = {&x};
	assert_int_equal(nt_run(n, 3, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){4, 3}, (float[]){1001, 0, 0, 1000, 10, 0, 1000, 0, 100,
							      1001, 0, 0}, 0);
	om_tensor_free(&out[0]);
	/* AVERAGE over the 2 trees, base values; MAX */
	nt_str(n, "aggregate_function", "AVERAGE");
	F32S(n, "base_values", 1, 2, 3);
	assert_int_equal(nt_run(n, 3, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){4, 3}, (float[]){501.5f, 2, 3, 501, 7, 3, 501, 2, 53,
							      501.5f, 2, 3}, 0);
	om_tensor_free(&out[0]);
	nt_str(n, "aggregate_function", "MAX");
	assert_int_equal(nt_run(n, 3, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){4, 3}, (float[]){1001, 2, 3, 1001, 12, 3, 1001, 2, 103,
							      1001, 2, 3}, 0);
	om_tensor_free(&out[0]);
	/* the same as ml opset 3 double tensors; both forms at once is an error */
	ml_tattr(n, "base_values_as_tensor", OM_DOUBLE, (double[]){1, 2, 3}, 3);
	assert_int_equal(nt_run(n, 3, in, out), OM_ERR_INVALID_MODEL);
	n->nattr--; /* drop base_values_as_tensor again */
	/* a feature past X's 2 */
	om_tensor x1 = nt_tensor(OM_FLOAT, 2, (int64_t[]){1, 1}, (float[]){3});
	assert_int_equal(nt_run(n, 3, (const om_tensor *[]){&x1}, out), OM_ERR_INVALID_INPUT);
	/* a target id past n_targets, a branch to a missing node, a cycle */
	nt_int(n, "n_targets", 2);
	assert_int_equal(nt_run(n, 3, in, out), OM_ERR_INVALID_MODEL);
	nt_int(n, "n_targets", 3);
	I64S(n, "nodes_falsenodeids", 2, 9, 0, 0, 0, 0);
	assert_int_equal(nt_run(n, 3, in, out), OM_ERR_INVALID_MODEL);
	I64S(n, "nodes_falsenodeids", 0, 4, 0, 0, 0, 0);
	assert_int_equal(nt_run(n, 3, in, out), OM_ERR_INVALID_MODEL);
	nt_free(m);
}

static void tree_classifier(void **state)
{
	(void)state;
	om_model *m;
	om_tensor out[2];
	om_node *n = tree_node(&m, "TreeEnsembleClassifier", "class", 2);
	I64S(n, "classlabels_int64s", 10, 20, 30);
	om_tensor x = nt_tensor(OM_FLOAT, 2, (int64_t[]){3, 2}, (float[]){0, 9, 1, 1, 1, 3});
	const om_tensor *in[] = {&x};
	assert_int_equal(nt_run(n, 1, in, out), OM_OK);
	/* scores (1001, 0, 0), (1000, 10, 0), (1000, 0, 100): class 0 every time */
	assert_memory_equal(out[0].data, ((int64_t[]){10, 10, 10}), 24);
	nt_check_f32(&out[1], 2, (int64_t[]){3, 3}, (float[]){1001, 0, 0, 1000, 10, 0, 1000, 0, 100},
		     0);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	/* base values move the top class: (1, -8, -95), (0, 2, -95), (0, -8, 5); string labels */
	nt_free(m);
	n = tree_node(&m, "TreeEnsembleClassifier", "class", 2);
	const char *labels[] = {"a", "bb", "c"};
	ml_strs(n, "classlabels_strings", labels, 3);
	F32S(n, "base_values", -1000, -8, -95);
	assert_int_equal(nt_run(n, 1, in, out), OM_OK);
	const om_str *s = out[0].data;
	assert_true(s[0].len == 1 && s[0].ptr[0] == 'a');
	assert_true(s[1].len == 2 && !memcmp(s[1].ptr, "bb", 2));
	assert_true(s[2].len == 1 && s[2].ptr[0] == 'c');
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	nt_free(m);
	/* two classes, weights for one class id only, all >= 0: s > 0.5 is class 1, Z (1-s, s) */
	n = ml_node(&m, "TreeEnsembleClassifier", 1, 2);
	I64S(n, "nodes_treeids", 0, 0, 0);
	I64S(n, "nodes_nodeids", 0, 1, 2);
	I64S(n, "nodes_featureids", 0, 0, 0);
	const char *modes[] = {"BRANCH_LEQ", "LEAF", "LEAF"};
	ml_strs(n, "nodes_modes", modes, 3);
	F32S(n, "nodes_values", 0, 0, 0);
	I64S(n, "nodes_truenodeids", 1, 0, 0);
	I64S(n, "nodes_falsenodeids", 2, 0, 0);
	I64S(n, "class_treeids", 0, 0);
	I64S(n, "class_nodeids", 1, 2);
	I64S(n, "class_ids", 0, 0);
	F32S(n, "class_weights", 0.25f, 0.75f);
	I64S(n, "classlabels_int64s", 4, 9);
	om_tensor xb = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 1}, (float[]){-1, 1});
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&xb}, out), OM_OK);
	assert_memory_equal(out[0].data, ((int64_t[]){4, 9}), 16);
	nt_check_f32(&out[1], 2, (int64_t[]){2, 2}, (float[]){0.75f, 0.25f, 0.25f, 0.75f}, 0);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	/* a margin (a weight < 0) under LOGISTIC: s > 0 is class 1, Z (logistic(-s), logistic(s)) */
	F32S(n, "class_weights", -2, 2);
	nt_str(n, "post_transform", "LOGISTIC");
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&xb}, out), OM_OK);
	assert_memory_equal(out[0].data, ((int64_t[]){4, 9}), 16);
	const float l2 = (float)(1 / (1 + exp(-2.0)));
	nt_check_f32(&out[1], 2, (int64_t[]){2, 2}, (float[]){l2, 1 - l2, 1 - l2, l2}, 1e-7);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	nt_free(m);
}

static void tree_ensemble_v5(void **state)
{
	(void)state;
	om_model *m;
	om_tensor out[1];
	/* tree 0: x1 > 1 ? leaf 0 (target 0, 2) : x0 in {3, 4} ? leaf 1 (target 1, 4) : leaf 2
	 * (target 1, 8); tree 1: its root names leaf 3 on both sides (target 0, 16) */
	om_node *n = ml_node(&m, "TreeEnsemble", 1, 1);
	I64S(n, "nodes_featureids", 1, 0, 0);
	ml_tattr(n, "nodes_modes", OM_UINT8, (uint8_t[]){3, 6, 0}, 3);
	ml_tattr(n, "nodes_splits", OM_DOUBLE, (double[]){1, NAN, 0}, 3);
	I64S(n, "nodes_truenodeids", 0, 1, 3);
	I64S(n, "nodes_trueleafs", 1, 1, 1);
	I64S(n, "nodes_falsenodeids", 1, 2, 3);
	I64S(n, "nodes_falseleafs", 0, 1, 1);
	I64S(n, "leaf_targetids", 0, 1, 1, 0);
	ml_tattr(n, "leaf_weights", OM_FLOAT, (float[]){2, 4, 8, 16}, 4);
	ml_tattr(n, "membership_values", OM_FLOAT, (float[]){3, 4, NAN}, 3);
	I64S(n, "tree_roots", 0, 2);
	nt_int(n, "n_targets", 2);
	om_tensor x = nt_tensor(OM_DOUBLE, 2, (int64_t[]){3, 2}, (double[]){0, 5, 4, 0, 5, 0});
	const om_tensor *in[] = {&x};
	assert_int_equal(nt_run(n, 5, in, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_DOUBLE);
	nt_assert_shape(&out[0], 2, (int64_t[]){3, 2});
	const double *y = out[0].data;
	const double want[] = {18, 0, 16, 4, 16, 8};
	for (int i = 0; i < 6; i++)
		assert_true(y[i] == want[i]);
	om_tensor_free(&out[0]);
	/* AVERAGE: (x) / 2 trees; MIN: targets no tree reaches stay 0 */
	nt_int(n, "aggregate_function", 0);
	assert_int_equal(nt_run(n, 5, in, out), OM_OK);
	y = out[0].data;
	for (int i = 0; i < 6; i++)
		assert_true(y[i] == want[i] / 2);
	om_tensor_free(&out[0]);
	/* a second member node without its NaN-ended set */
	ml_tattr(n, "nodes_modes", OM_UINT8, (uint8_t[]){6, 6, 0}, 3);
	assert_int_equal(nt_run(n, 5, in, out), OM_ERR_INVALID_MODEL);
	/* a leaf index past the leaves */
	ml_tattr(n, "nodes_modes", OM_UINT8, (uint8_t[]){3, 6, 0}, 3);
	I64S(n, "nodes_truenodeids", 0, 1, 4);
	assert_int_equal(nt_run(n, 5, in, out), OM_ERR_INVALID_MODEL);
	/* integer X is not a TreeEnsemble input */
	I64S(n, "nodes_truenodeids", 0, 1, 3);
	om_tensor xi = nt_tensor(OM_INT64, 2, (int64_t[]){1, 2}, (int64_t[]){0, 0});
	assert_int_equal(nt_run(n, 5, (const om_tensor *[]){&xi}, out), OM_ERR_INVALID_MODEL);
	nt_free(m);
}

static void linear(void **state)
{
	(void)state;
	om_model *m;
	om_tensor out[2];
	/* two targets: (x0 + 2 x1 + 1, -x0 + 0); SOFTMAX of (0, ln 3) is (1/4, 3/4) */
	om_node *n = ml_node(&m, "LinearRegressor", 1, 1);
	nt_int(n, "targets", 2);
	F32S(n, "coefficients", 1, 2, -1, 0);
	F32S(n, "intercepts", 1, 0);
	om_tensor x = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 2}, (float[]){1, 1, 0, -0.5f});
	const om_tensor *in[] = {&x};
	assert_int_equal(nt_run(n, 1, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, (float[]){4, -1, 0, 0}, 0);
	om_tensor_free(&out[0]);
	F32S(n, "coefficients", 0, 0, 0, 0);
	F32S(n, "intercepts", 0, (float)log(3.0));
	nt_str(n, "post_transform", "SOFTMAX");
	assert_int_equal(nt_run(n, 1, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, (float[]){0.25f, 0.75f, 0.25f, 0.75f}, 1e-7);
	om_tensor_free(&out[0]);
	/* SOFTMAX_ZERO leaves the zero score at 0; PROBIT(0.5) = 0 */
	nt_str(n, "post_transform", "SOFTMAX_ZERO");
	assert_int_equal(nt_run(n, 1, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, (float[]){0, 1, 0, 1}, 1e-7);
	om_tensor_free(&out[0]);
	F32S(n, "intercepts", 0.5f, 0.5f);
	nt_str(n, "post_transform", "PROBIT");
	assert_int_equal(nt_run(n, 1, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, (float[]){0, 0, 0, 0}, 1e-7);
	om_tensor_free(&out[0]);
	F32S(n, "coefficients", 1, 2, 3);
	assert_int_equal(nt_run(n, 1, in, out), OM_ERR_INVALID_INPUT);
	nt_free(m);
	/* LinearClassifier, one row for two labels: s = x0 - x1; label 7 when s > 0 */
	n = ml_node(&m, "LinearClassifier", 1, 2);
	F32S(n, "coefficients", 1, -1);
	I64S(n, "classlabels_ints", 3, 7);
	assert_int_equal(nt_run(n, 1, in, out), OM_OK);
	assert_memory_equal(out[0].data, ((int64_t[]){3, 7}), 16);
	nt_check_f32(&out[1], 2, (int64_t[]){2, 2}, (float[]){0, 0, -0.5f, 0.5f}, 0);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	/* three labels: the top of x . w_k + b_k */
	F32S(n, "coefficients", 1, 0, 0, 1, -1, -1);
	F32S(n, "intercepts", 0, 0.5f, 0);
	I64S(n, "classlabels_ints", 3, 7, 9);
	assert_int_equal(nt_run(n, 1, in, out), OM_OK);
	assert_memory_equal(out[0].data, ((int64_t[]){7, 9}), 16);
	nt_check_f32(&out[1], 2, (int64_t[]){2, 3}, (float[]){1, 1.5f, -2, 0, 0, 0.5f}, 0);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	nt_free(m);
}

static void svm(void **state)
{
	(void)state;
	om_model *m;
	om_tensor out[2];
	/* SVMRegressor, RBF: 2 exp(-|x - (0,0)|^2) - exp(-|x - (1,1)|^2) + 0.5 */
	om_node *n = ml_node(&m, "SVMRegressor", 1, 1);
	nt_str(n, "kernel_type", "RBF");
	F32S(n, "kernel_params", 1, 0, 0);
	F32S(n, "support_vectors", 0, 0, 1, 1);
	F32S(n, "coefficients", 2, -1);
	F32S(n, "rho", 0.5f);
	nt_int(n, "n_supports", 2);
	om_tensor x = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 2}, (float[]){0, 0, 1, 0});
	const om_tensor *in[] = {&x};
	assert_int_equal(nt_run(n, 1, in, out), OM_OK);
	const float r0 = (float)(2 - exp(-2.0) + 0.5), r1 = (float)(2 * exp(-1.0) - exp(-1.0) + 0.5);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 1}, (float[]){r0, r1}, 1e-7);
	om_tensor_free(&out[0]);
	/* one class: the sign of 2 - e^-2 - 1 and e^-1 - 1; then POLY (x . v + 1)^2 */
	nt_int(n, "one_class", 1);
	F32S(n, "rho", -1);
	assert_int_equal(nt_run(n, 1, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 1}, (float[]){1, -1}, 0);
	om_tensor_free(&out[0]);
	nt_int(n, "one_class", 0);
	nt_str(n, "kernel_type", "POLY");
	F32S(n, "kernel_params", 1, 1, 2);
	F32S(n, "rho", 0);
	assert_int_equal(nt_run(n, 1, in, out), OM_OK);
	/* row 0: 2 (0 + 1)^2 - (0 + 1)^2 = 1; row 1: 2 (1)^2 - (1 + 1)^2 = -2 */
	nt_check_f32(&out[0], 2, (int64_t[]){2, 1}, (float[]){1, -2}, 0);
	om_tensor_free(&out[0]);
	nt_int(n, "n_supports", 3);
	assert_int_equal(nt_run(n, 1, in, out), OM_ERR_INVALID_INPUT);
	nt_free(m);
	/* SVMClassifier, LINEAR, three classes of one support vector each. Pair (i, j) sums
	 * row j - 1 of the coefficients over class i's vectors and row i over class j's, plus
	 * rho: s01 = K0 - K1, s02 = K0 - K2, s12 = K1 - K2; s > 0 is a vote for i, else j */
	n = ml_node(&m, "SVMClassifier", 1, 2);
	F32S(n, "support_vectors", 1, 0, 0, 1, -1, -1);
	I64S(n, "vectors_per_class", 1, 1, 1);
	F32S(n, "coefficients", 1, -1, -1, 1, 1, -1);
	F32S(n, "rho", 0, 0, 0);
	I64S(n, "classlabels_ints", 5, 6, 7);
	/* x = (1, 0): K = (1, 0, -1); s01 = 1 (0 wins), s02 = 2 (0 wins), s12 = 1 (1 wins):
	 * votes (2, 1, 0) -> label 5 */
	om_tensor x1 = nt_tensor(OM_FLOAT, 2, (int64_t[]){1, 2}, (float[]){1, 0});
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&x1}, out), OM_OK);
	assert_memory_equal(out[0].data, ((int64_t[]){5}), 8);
	nt_check_f32(&out[1], 2, (int64_t[]){1, 3}, (float[]){1, 2, 1}, 0);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	/* x = (-1, -1): K = (-1, -1, 2); s01 = 0 (1 wins), s02 = -3 (2 wins), s12 = -3 (2 wins):
	 * votes (0, 1, 2) -> label 7 */
	om_tensor x2 = nt_tensor(OM_FLOAT, 2, (int64_t[]){1, 2}, (float[]){-1, -1});
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&x2}, out), OM_OK);
	assert_memory_equal(out[0].data, ((int64_t[]){7}), 8);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	F32S(n, "rho", 0, 0);
	assert_int_equal(nt_run(n, 1, (const om_tensor *[]){&x2}, out), OM_ERR_INVALID_INPUT);
	nt_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(transforms),    cmocka_unit_test(encoders),
		cmocka_unit_test(tree_regressor), cmocka_unit_test(tree_classifier),
		cmocka_unit_test(tree_ensemble_v5), cmocka_unit_test(linear),
		cmocka_unit_test(svm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
