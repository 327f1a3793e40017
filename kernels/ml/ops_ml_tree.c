/* ops_ml_tree.c — ai.onnx.ml TreeEnsembleRegressor, TreeEnsembleClassifier (ml opset 1, the
 * *_as_tensor attributes of opset 3) and TreeEnsemble (opset 5): scores in double, summed
 * (or averaged, min, max) over the trees, then base values and the post transform. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ml_forest.h"

/* The scores one row gets from every tree: acc[t] aggregated by agg, has[t] whether a leaf
 * gave target t a weight. */
static om_kind forest_row(om_ctx *c, const ml_forest *fo, const om_tensor *x, int64_t x0,
			  int agg, double *acc, unsigned char *has, int64_t nt)
{
	memset(acc, 0, sizeof *acc * (size_t)nt);
	memset(has, 0, (size_t)nt);
	for (int64_t t = 0; t < fo->ntrees; t++) {
		const int64_t leaf = ml_forest_leaf(fo, t, x, x0);
		if (leaf < 0)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"tree %lld has a cycle", (long long)t);
		const ml_tnode *l = &fo->nodes[leaf];
		for (int64_t k = l->w0; k < l->w0 + l->nw; k++) {
			const int64_t id = fo->w[k].target;
			const double w = fo->w[k].w;
			if (agg == ML_AGG_MIN)
				acc[id] = has[id] && acc[id] <= w ? acc[id] : w;
			else if (agg == ML_AGG_MAX)
				acc[id] = has[id] && acc[id] >= w ? acc[id] : w;
			else
				acc[id] += w;
			has[id] = 1;
		}
	}
	if (agg == ML_AGG_AVERAGE)
		for (int64_t k = 0; k < nt; k++)
			acc[k] /= (double)fo->ntrees;
	return OM_OK;
}

/* scratch of nt doubles and nt flags, or NULL after the NOMEM error */
static double *scratch(om_ctx *c, int64_t nt, unsigned char **has)
{
	double *acc = malloc(sizeof *acc * (size_t)(2 * nt + 2));
	*has = malloc((size_t)nt + 1);
	if (!acc || !*has) {
		free(acc);
		free(*has);
		om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (scores)");
		return NULL;
	}
	return acc;
}

static om_kind check_features(om_ctx *c, const ml_forest *fo, int64_t f)
{
	if (fo->max_feature >= f)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"a branch reads feature %lld of %lld", (long long)fo->max_feature,
				(long long)f);
	return OM_OK;
}

/* ---- TreeEnsembleRegressor ---------------------------------------------------------------- */

static om_kind reg_params(om_ctx *c, int64_t *nt, int *agg, int *post)
{
	static const char *const aggs[] = {"AVERAGE", "SUM", "MIN", "MAX", NULL};
	*nt = om_attr_int(c->node, "n_targets", 1);
	*agg = om_attr_choice(c->node, "aggregate_function", aggs, ML_AGG_SUM);
	if (*nt < 1 || *nt > ((int64_t)1 << 30) || *agg < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"n_targets %lld or aggregate_function is not valid", (long long)*nt);
	return ml_post_transform(c, post);
}

static om_kind reg_infer(om_ctx *c)
{
	int64_t n, f, nt;
	int agg, post;
	om_kind rc = ml_rows(c, c->in[0], &n, &f);
	if (!rc)
		rc = reg_params(c, &nt, &agg, &post);
	if (!rc)
		om_set_shape(c->out[0], OM_FLOAT, 2, (int64_t[]){n, nt});
	return rc;
}

static om_kind reg_kernel(om_ctx *c)
{
	int64_t n, f, nt, nb;
	int agg, post;
	ml_forest fo;
	double *base = NULL;
	om_kind rc = ml_rows(c, c->in[0], &n, &f);
	if (!rc)
		rc = reg_params(c, &nt, &agg, &post);
	if (!rc)
		rc = ml_reals(c, "base_values", &base, &nb);
	if (!rc && nb && nb != nt)
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
			      "base_values has %lld values, not n_targets %lld", (long long)nb,
			      (long long)nt);
	if (rc || (rc = ml_forest_legacy(c, "target", nt, &fo))) {
		free(base);
		return rc;
	}
	unsigned char *has = NULL;
	double *acc = (rc = check_features(c, &fo, f)) ? NULL : scratch(c, nt, &has);
	if (!rc && !acc)
		rc = OM_ERR_NOMEM;
	for (int64_t i = 0; i < n && !rc; i++) {
		rc = forest_row(c, &fo, c->in[0], i * f, agg, acc, has, nt);
		for (int64_t k = 0; k < nt && !rc; k++)
			acc[k] += nb ? base[k] : 0;
		ml_post_apply(post, acc, nt);
		for (int64_t k = 0; k < nt && !rc; k++)
			ml_store(c->out[0], i * nt + k, acc[k]);
	}
	if (acc) {
		free(acc);
		free(has);
	}
	free(base);
	ml_forest_free(&fo);
	return rc;
}

/* ---- TreeEnsembleClassifier --------------------------------------------------------------- */

static om_kind cls_infer(om_ctx *c)
{
	int64_t n, f;
	int post;
	ml_labels l;
	om_kind rc = ml_rows(c, c->in[0], &n, &f);
	if (!rc)
		rc = ml_labels_get(c, "classlabels_int64s", "classlabels_strings", &l);
	if (!rc)
		rc = ml_post_transform(c, &post);
	if (rc)
		return rc;
	om_set_shape(c->out[0], ml_label_dtype(&l), 1, &n);
	if (c->nout > 1 && c->out[1])
		om_set_shape(c->out[1], OM_FLOAT, 2, (int64_t[]){n, l.n});
	return OM_OK;
}

/* Two classes whose weights all go to one class id: ONNX Runtime's rule (the ONNX text says
 * nothing): s is that class's score plus base_values[0] (or its own base value); the label is
 * class 1 when s > 0.5 (all weights >= 0: s is a probability) or s > 0 (a margin), and the
 * scores are (1 - s, s), or (-s, s), or (logistic(-s), logistic(s)) under LOGISTIC. */
static void binary_row(double s, int all_pos, int post, double *z, int64_t *label)
{
	if (all_pos) {
		*label = s > 0.5;
		z[0] = 1 - s;
		z[1] = s;
	} else {
		*label = s > 0;
		z[0] = post == ML_POST_LOGISTIC ? ml_logistic(-s) : -s;
		z[1] = post == ML_POST_LOGISTIC ? ml_logistic(s) : s;
	}
	if (post == ML_POST_PROBIT)
		z[1] = ml_probit(s), z[0] = -z[1];
}

static om_kind cls_kernel(om_ctx *c)
{
	int64_t n, f, nb;
	int post;
	ml_labels l;
	ml_forest fo;
	double *base = NULL;
	om_kind rc = ml_rows(c, c->in[0], &n, &f);
	if (!rc)
		rc = ml_labels_get(c, "classlabels_int64s", "classlabels_strings", &l);
	if (!rc)
		rc = ml_post_transform(c, &post);
	if (!rc)
		rc = ml_reals(c, "base_values", &base, &nb);
	const int64_t ne = l.n;
	if (!rc && nb && nb != ne && !(ne == 2 && nb == 1))
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
			      "base_values has %lld values for %lld classes", (long long)nb,
			      (long long)ne);
	if (rc || (rc = ml_forest_legacy(c, "class", ne, &fo))) {
		free(base);
		return rc;
	}
	/* one class id only, of two classes: the binary rule above */
	int one_id = fo.nw > 0, all_pos = 1;
	for (int64_t k = 0; k < fo.nw; k++) {
		one_id &= fo.w[k].target == fo.w[0].target;
		all_pos &= fo.w[k].w >= 0;
	}
	const int binary = ne == 2 && one_id;
	unsigned char *has = NULL;
	double *acc = (rc = check_features(c, &fo, f)) ? NULL : scratch(c, ne, &has);
	if (!rc && !acc)
		rc = OM_ERR_NOMEM;
	om_tensor *z = c->nout > 1 ? c->out[1] : NULL;
	for (int64_t i = 0; i < n && !rc; i++) {
		rc = forest_row(c, &fo, c->in[0], i * f, ML_AGG_SUM, acc, has, ne);
		if (rc)
			break;
		int64_t label = 0;
		double *zr = acc + ne;
		if (binary) {
			const int64_t id = fo.w[0].target;
			const double s = acc[id] + (nb == 2 ? base[id] : nb == 1 ? base[0] : 0);
			binary_row(s, all_pos, post, zr, &label);
		} else {
			for (int64_t k = 0; k < ne; k++) {
				if (nb) {
					acc[k] += base[k];
					has[k] = 1;
				}
				if (has[k] && (!has[label] || acc[k] > acc[label]))
					label = k;
			}
			memcpy(zr, acc, sizeof *zr * (size_t)ne);
			ml_post_apply(post, zr, ne);
		}
		rc = ml_label_put(c, &l, c->out[0], i, label);
		for (int64_t k = 0; z && k < ne && !rc; k++)
			ml_store(z, i * ne + k, zr[k]);
	}
	if (rc)
		ml_labels_clear_from(c->out[0], 0);
	if (acc) {
		free(acc);
		free(has);
	}
	free(base);
	ml_forest_free(&fo);
	return rc;
}

/* ---- TreeEnsemble (ml opset 5) ------------------------------------------------------------ */

static om_kind te_params(om_ctx *c, int64_t *nt, int *agg, int *post)
{
	*nt = om_attr_int(c->node, "n_targets", -1);
	const int64_t a = om_attr_int(c->node, "aggregate_function", ML_AGG_SUM);
	const int64_t p = om_attr_int(c->node, "post_transform", ML_POST_NONE);
	if (*nt < 1 || *nt > ((int64_t)1 << 30) || a < 0 || a > ML_AGG_MAX || p < 0 ||
	    p > ML_POST_PROBIT)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"n_targets %lld, aggregate_function %lld or post_transform %lld "
				"is not valid", (long long)*nt, (long long)a, (long long)p);
	*agg = (int)a;
	*post = (int)p;
	const om_tensor *x = c->in[0];
	if (x->dtype != OM_FLOAT && x->dtype != OM_DOUBLE && x->dtype != OM_FLOAT16)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "X has type %s",
				om_dtype_name(x->dtype));
	return OM_OK;
}

static om_kind te_infer(om_ctx *c)
{
	int64_t n, f, nt;
	int agg, post;
	om_kind rc = ml_rows(c, c->in[0], &n, &f);
	if (!rc)
		rc = te_params(c, &nt, &agg, &post);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, 2, (int64_t[]){n, nt});
	return rc;
}

static om_kind te_kernel(om_ctx *c)
{
	int64_t n, f, nt;
	int agg, post;
	ml_forest fo;
	om_kind rc = ml_rows(c, c->in[0], &n, &f);
	if (!rc)
		rc = te_params(c, &nt, &agg, &post);
	if (rc || (rc = ml_forest_v5(c, nt, &fo)))
		return rc;
	unsigned char *has = NULL;
	double *acc = (rc = check_features(c, &fo, f)) ? NULL : scratch(c, nt, &has);
	if (!rc && !acc)
		rc = OM_ERR_NOMEM;
	for (int64_t i = 0; i < n && !rc; i++) {
		rc = forest_row(c, &fo, c->in[0], i * f, agg, acc, has, nt);
		ml_post_apply(post, acc, nt);
		for (int64_t k = 0; k < nt && !rc; k++)
			ml_store(c->out[0], i * nt + k, acc[k]);
	}
	if (acc) {
		free(acc);
		free(has);
	}
	ml_forest_free(&fo);
	return rc;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_TreeEnsembleClassifier_1_v3[] = {{"base_values", OM_ATTR_FLOATS, 0},
	{"base_values_as_tensor", OM_ATTR_TENSOR, 0}, {"class_ids", OM_ATTR_INTS, 0},
	{"class_nodeids", OM_ATTR_INTS, 0}, {"class_treeids", OM_ATTR_INTS, 0},
	{"class_weights", OM_ATTR_FLOATS, 0}, {"class_weights_as_tensor", OM_ATTR_TENSOR, 0},
	{"classlabels_int64s", OM_ATTR_INTS, 0}, {"classlabels_strings", OM_ATTR_STRINGS, 0},
	{"nodes_falsenodeids", OM_ATTR_INTS, 0}, {"nodes_featureids", OM_ATTR_INTS, 0},
	{"nodes_hitrates", OM_ATTR_FLOATS, 0}, {"nodes_hitrates_as_tensor", OM_ATTR_TENSOR, 0},
	{"nodes_missing_value_tracks_true", OM_ATTR_INTS, 0}, {"nodes_modes", OM_ATTR_STRINGS, 0},
	{"nodes_nodeids", OM_ATTR_INTS, 0}, {"nodes_treeids", OM_ATTR_INTS, 0},
	{"nodes_truenodeids", OM_ATTR_INTS, 0}, {"nodes_values", OM_ATTR_FLOATS, 0},
	{"nodes_values_as_tensor", OM_ATTR_TENSOR, 0}, {"post_transform", OM_ATTR_STRING, 0},
	{NULL, 0, 0}};
/* TreeEnsembleClassifier-3: X -> Y Z */
static const om_sig sig_TreeEnsembleClassifier_1_v3 = {3, 1, 1, 2, 2, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_TreeEnsembleClassifier_1_v3, NULL};
static const om_sig_attr attrs_TreeEnsembleClassifier_1[] = {{"base_values", OM_ATTR_FLOATS, 0},
	{"class_ids", OM_ATTR_INTS, 0}, {"class_nodeids", OM_ATTR_INTS, 0},
	{"class_treeids", OM_ATTR_INTS, 0}, {"class_weights", OM_ATTR_FLOATS, 0},
	{"classlabels_int64s", OM_ATTR_INTS, 0}, {"classlabels_strings", OM_ATTR_STRINGS, 0},
	{"nodes_falsenodeids", OM_ATTR_INTS, 0}, {"nodes_featureids", OM_ATTR_INTS, 0},
	{"nodes_hitrates", OM_ATTR_FLOATS, 0}, {"nodes_missing_value_tracks_true", OM_ATTR_INTS, 0},
	{"nodes_modes", OM_ATTR_STRINGS, 0}, {"nodes_nodeids", OM_ATTR_INTS, 0},
	{"nodes_treeids", OM_ATTR_INTS, 0}, {"nodes_truenodeids", OM_ATTR_INTS, 0},
	{"nodes_values", OM_ATTR_FLOATS, 0}, {"post_transform", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* TreeEnsembleClassifier-1: X -> Y Z */
static const om_sig sig_TreeEnsembleClassifier_1 = {1, 1, 1, 2, 2, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_TreeEnsembleClassifier_1, &sig_TreeEnsembleClassifier_1_v3};
static const om_sig_attr attrs_TreeEnsembleRegressor_1_v3[] = {
	{"aggregate_function", OM_ATTR_STRING, 0},
	{"base_values", OM_ATTR_FLOATS, 0}, {"base_values_as_tensor", OM_ATTR_TENSOR, 0},
	{"n_targets", OM_ATTR_INT, 0}, {"nodes_falsenodeids", OM_ATTR_INTS, 0},
	{"nodes_featureids", OM_ATTR_INTS, 0}, {"nodes_hitrates", OM_ATTR_FLOATS, 0},
	{"nodes_hitrates_as_tensor", OM_ATTR_TENSOR, 0},
	{"nodes_missing_value_tracks_true", OM_ATTR_INTS, 0}, {"nodes_modes", OM_ATTR_STRINGS, 0},
	{"nodes_nodeids", OM_ATTR_INTS, 0}, {"nodes_treeids", OM_ATTR_INTS, 0},
	{"nodes_truenodeids", OM_ATTR_INTS, 0}, {"nodes_values", OM_ATTR_FLOATS, 0},
	{"nodes_values_as_tensor", OM_ATTR_TENSOR, 0}, {"post_transform", OM_ATTR_STRING, 0},
	{"target_ids", OM_ATTR_INTS, 0}, {"target_nodeids", OM_ATTR_INTS, 0},
	{"target_treeids", OM_ATTR_INTS, 0}, {"target_weights", OM_ATTR_FLOATS, 0},
	{"target_weights_as_tensor", OM_ATTR_TENSOR, 0}, {NULL, 0, 0}};
/* TreeEnsembleRegressor-3: X -> Y */
static const om_sig sig_TreeEnsembleRegressor_1_v3 = {3, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_TreeEnsembleRegressor_1_v3, NULL};
static const om_sig_attr attrs_TreeEnsembleRegressor_1[] = {
	{"aggregate_function", OM_ATTR_STRING, 0},
	{"base_values", OM_ATTR_FLOATS, 0}, {"n_targets", OM_ATTR_INT, 0},
	{"nodes_falsenodeids", OM_ATTR_INTS, 0}, {"nodes_featureids", OM_ATTR_INTS, 0},
	{"nodes_hitrates", OM_ATTR_FLOATS, 0}, {"nodes_missing_value_tracks_true", OM_ATTR_INTS, 0},
	{"nodes_modes", OM_ATTR_STRINGS, 0}, {"nodes_nodeids", OM_ATTR_INTS, 0},
	{"nodes_treeids", OM_ATTR_INTS, 0}, {"nodes_truenodeids", OM_ATTR_INTS, 0},
	{"nodes_values", OM_ATTR_FLOATS, 0}, {"post_transform", OM_ATTR_STRING, 0},
	{"target_ids", OM_ATTR_INTS, 0}, {"target_nodeids", OM_ATTR_INTS, 0},
	{"target_treeids", OM_ATTR_INTS, 0}, {"target_weights", OM_ATTR_FLOATS, 0}, {NULL, 0, 0}};
/* TreeEnsembleRegressor-1: X -> Y */
static const om_sig sig_TreeEnsembleRegressor_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_TreeEnsembleRegressor_1, &sig_TreeEnsembleRegressor_1_v3};
static const om_sig_attr attrs_TreeEnsemble_5[] = {{"aggregate_function", OM_ATTR_INT, 0},
	{"leaf_targetids", OM_ATTR_INTS, 1}, {"leaf_weights", OM_ATTR_TENSOR, 1},
	{"membership_values", OM_ATTR_TENSOR, 0}, {"n_targets", OM_ATTR_INT, 0},
	{"nodes_falseleafs", OM_ATTR_INTS, 1}, {"nodes_falsenodeids", OM_ATTR_INTS, 1},
	{"nodes_featureids", OM_ATTR_INTS, 1}, {"nodes_hitrates", OM_ATTR_TENSOR, 0},
	{"nodes_missing_value_tracks_true", OM_ATTR_INTS, 0}, {"nodes_modes", OM_ATTR_TENSOR, 1},
	{"nodes_splits", OM_ATTR_TENSOR, 1}, {"nodes_trueleafs", OM_ATTR_INTS, 1},
	{"nodes_truenodeids", OM_ATTR_INTS, 1}, {"post_transform", OM_ATTR_INT, 0},
	{"tree_roots", OM_ATTR_INTS, 1}, {NULL, 0, 0}};
/* TreeEnsemble-5: X -> Y */
static const om_sig sig_TreeEnsemble_5 = {5, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_TreeEnsemble_5, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"TreeEnsembleClassifier", "ai.onnx.ml", 1, cls_infer, cls_kernel, OM_OP_EXACT,
	 &sig_TreeEnsembleClassifier_1, OM_OPC_NONE, NULL, 0, NULL},
	{"TreeEnsembleRegressor", "ai.onnx.ml", 1, reg_infer, reg_kernel, OM_OP_EXACT,
	 &sig_TreeEnsembleRegressor_1, OM_OPC_NONE, NULL, 0, NULL},
	{"TreeEnsemble", "ai.onnx.ml", 5, te_infer, te_kernel, OM_OP_EXACT, &sig_TreeEnsemble_5,
	 OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_ml_tree = OM_TABLE(rows);
