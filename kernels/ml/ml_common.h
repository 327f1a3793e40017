/* ml_common.h — what the ai.onnx.ml rows share: real lists from an attribute or its
 * *_as_tensor form, X as rows of doubles, the post transforms, class labels. */
#ifndef OM_ML_COMMON_H
#define OM_ML_COMMON_H

#include "op.h"

#define OM_ML_DOMAIN "ai.onnx.ml"

/* post_transform, as TreeEnsemble's integer attribute numbers it */
enum ml_post { ML_POST_NONE, ML_POST_SOFTMAX, ML_POST_LOGISTIC, ML_POST_SOFTMAX_ZERO,
	       ML_POST_PROBIT };

/** The string attribute post_transform (default NONE) as enum ml_post; InvalidModel when the
 *  name is not one of the five. */
om_kind ml_post_transform(om_ctx *c, int *post);
/** A list of reals: attribute `name` (floats) or `name`_as_tensor (a float, double or
 *  float16 tensor; ml opset 3); *v malloc'd (NULL when *n is 0). InvalidModel when both are
 *  set or the tensor has another type. */
om_kind ml_reals(om_ctx *c, const char *name, double **v, int64_t *n);
/** A real tensor attribute (TreeEnsemble's leaf_weights, nodes_splits) as doubles, as above. */
om_kind ml_tensor_reals(om_ctx *c, const om_tensor *t, const char *name, double **v,
			int64_t *n);
/** The post transform over one row's n scores, in place (ONNX Runtime's formulas, in double;
 *  PROBIT is its erf-inverse approximation). */
void ml_post_apply(int post, double *s, int64_t n);
double ml_logistic(double v);
double ml_probit(double v);
/** X as n rows of f features: (N, F), or (F) as one row; InvalidModel for another rank or a
 *  type other than float, double, float16, int64, int32. */
om_kind ml_rows(om_ctx *c, const om_tensor *x, int64_t *n, int64_t *f);
/** Whether n == a * b, without overflow (a, b >= 0). */
static inline int ml_is_product(int64_t n, int64_t a, int64_t b)
{
	return b ? n % b == 0 && n / b == a : n == 0;
}
/** Element i of a numeric tensor as a double. */
double ml_at(const om_tensor *t, int64_t i);
/** Writes v as element i of t (float, double or float16). */
void ml_store(om_tensor *t, int64_t i, double v);

/* A classifier's labels: classlabels_ints or classlabels_strings */
typedef struct ml_labels {
	int strings;
	int64_t n;
	const int64_t *ints;
	const om_str *strs;
} ml_labels;

/** The labels of attributes `ints` / `strs` (exactly one must be set, and non-empty). */
om_kind ml_labels_get(om_ctx *c, const char *ints, const char *strs, ml_labels *l);
/** The output type of labels l. */
static inline int32_t ml_label_dtype(const ml_labels *l)
{
	return l->strings ? OM_STRING : OM_INT64;
}
/** y[i] = label k (a malloc'd copy for strings: in a session the run adopts it, when folding
 *  the tensor owns it). */
om_kind ml_label_put(om_ctx *c, const ml_labels *l, om_tensor *y, int64_t i, int64_t k);
/** Clears y's string elements from i on (after a failure, so y can still be freed). */
void ml_labels_clear_from(om_tensor *y, int64_t i);

#endif
