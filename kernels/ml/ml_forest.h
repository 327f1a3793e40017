/* ml_forest.h — a tree ensemble as one array of nodes: TreeEnsembleClassifier and
 * TreeEnsembleRegressor (nodes named by tree and node ids) and TreeEnsemble (ml opset 5:
 * nodes and leaves by index, set-membership branches) both become an ml_forest. */
#ifndef OM_ML_FOREST_H
#define OM_ML_FOREST_H

#include "ml_common.h"

enum ml_mode { ML_LEQ, ML_LT, ML_GTE, ML_GT, ML_EQ, ML_NEQ, ML_MEMBER, ML_LEAF };
enum ml_agg { ML_AGG_AVERAGE, ML_AGG_SUM, ML_AGG_MIN, ML_AGG_MAX }; /* TreeEnsemble's numbers */

typedef struct ml_tnode {
	int32_t mode;       /* enum ml_mode */
	int32_t miss_true;  /* a NaN feature takes the true branch */
	int64_t feature;
	double split;
	int64_t t, f;       /* branches: the nodes taken when the test holds / fails */
	int64_t w0, nw;     /* leaves: their weights are w[w0 .. w0 + nw) */
	int64_t s0, ns;     /* ML_MEMBER: the set is sets[s0 .. s0 + ns) */
} ml_tnode;

typedef struct ml_tw {
	int64_t node;   /* the leaf (while sorting) */
	int64_t target; /* class or target id */
	double w;
} ml_tw;

typedef struct ml_forest {
	ml_tnode *nodes;
	int64_t nnodes;
	ml_tw *w;
	int64_t nw;
	int64_t *roots;
	int64_t ntrees;
	double *sets;
	int64_t nsets;
	int64_t max_feature; /* the largest feature a branch reads, -1 when none */
} ml_forest;

void ml_forest_free(ml_forest *fo);
/** The forest of a TreeEnsembleClassifier (prefix "class") or TreeEnsembleRegressor
 *  ("target"): every target id below ntargets. */
om_kind ml_forest_legacy(om_ctx *c, const char *prefix, int64_t ntargets, ml_forest *fo);
/** The forest of a TreeEnsemble (ml opset 5) of ntargets targets. */
om_kind ml_forest_v5(om_ctx *c, int64_t ntargets, ml_forest *fo);
/** The leaf that row x (f features, read through ml_at from element x0 of X) reaches in
 *  tree `tree`; -1 when the walk does not end (a cycle). */
int64_t ml_forest_leaf(const ml_forest *fo, int64_t tree, const om_tensor *x, int64_t x0);

#endif
