/* ml_forest.c — tree ensembles' attributes read into one array of nodes (ml_forest.h), and
 * the walk of one row down one tree. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ml_forest.h"

void ml_forest_free(ml_forest *fo)
{
	free(fo->nodes);
	free(fo->w);
	free(fo->roots);
	free(fo->sets);
	memset(fo, 0, sizeof *fo);
}

/* An ints attribute (NULL, 0 when absent); InvalidModel when it has another type or its
 * length is neither `want` nor (when `may_miss`) 0. want < 0: any length. */
static om_kind ints_of(om_ctx *c, const char *name, int64_t want, int may_miss,
		       const int64_t **v, int64_t *n)
{
	const om_attr *a = om_node_attr(c->node, name);
	*v = NULL;
	*n = 0;
	if (a && a->n && a->type != OM_ATTR_INTS)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s is not a list of ints",
				name);
	if (a && a->n) {
		*v = a->ints;
		*n = a->n;
	}
	if (want >= 0 && *n != want && !(may_miss && *n == 0))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%s has %lld values, not %lld", name, (long long)*n, (long long)want);
	return OM_OK;
}

typedef struct tkey {
	int64_t tree, id, at;
} tkey;

static int tkey_cmp(const void *pa, const void *pb)
{
	const tkey *a = pa, *b = pb;
	if (a->tree != b->tree)
		return a->tree < b->tree ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return (a->at > b->at) - (a->at < b->at);
}

static int tw_cmp(const void *pa, const void *pb)
{
	const ml_tw *a = pa, *b = pb;
	return (a->node > b->node) - (a->node < b->node);
}

/* the position of node (tree, id), -1 when none */
static int64_t tkey_find(const tkey *k, int64_t n, int64_t tree, int64_t id)
{
	int64_t lo = 0, hi = n;
	while (lo < hi) {
		const int64_t mid = lo + (hi - lo) / 2;
		if (k[mid].tree < tree || (k[mid].tree == tree && k[mid].id < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && k[lo].tree == tree && k[lo].id == id ? k[lo].at : -1;
}

/* Orders the weights by leaf and points each leaf at its run. */
static void attach_weights(ml_forest *fo)
{
	qsort(fo->w, (size_t)fo->nw, sizeof *fo->w, tw_cmp);
	for (int64_t i = 0; i < fo->nw;) {
		int64_t j = i;
		while (j < fo->nw && fo->w[j].node == fo->w[i].node)
			j++;
		fo->nodes[fo->w[i].node].w0 = i;
		fo->nodes[fo->w[i].node].nw = j - i;
		i = j;
	}
}

static om_kind legacy_nodes(om_ctx *c, ml_forest *fo, tkey *keys, int64_t n)
{
	static const char *const mode_names[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE",
						 "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"};
	const om_attr *modes = om_node_attr(c->node, "nodes_modes");
	const int64_t *tree, *id, *feat, *tru, *fal, *miss;
	int64_t k;
	double *vals = NULL;
	om_kind rc = ints_of(c, "nodes_treeids", n, 0, &tree, &k);
	if (!rc)
		rc = ints_of(c, "nodes_nodeids", n, 0, &id, &k);
	if (!rc)
		rc = ints_of(c, "nodes_featureids", n, 0, &feat, &k);
	if (!rc)
		rc = ints_of(c, "nodes_truenodeids", n, 0, &tru, &k);
	if (!rc)
		rc = ints_of(c, "nodes_falsenodeids", n, 0, &fal, &k);
	if (!rc)
		rc = ints_of(c, "nodes_missing_value_tracks_true", n, 1, &miss, &k);
	if (!rc)
		rc = ml_reals(c, "nodes_values", &vals, &k);
	if (!rc && k != n)
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
			      "nodes_values has %lld values, not %lld", (long long)k, (long long)n);
	if (rc) {
		free(vals);
		return rc;
	}
	for (int64_t i = 0; i < n; i++)
		keys[i] = (tkey){tree[i], id[i], i};
	qsort(keys, (size_t)n, sizeof *keys, tkey_cmp);
	for (int64_t i = 1; i < n && !rc; i++)
		if (keys[i].tree == keys[i - 1].tree && keys[i].id == keys[i - 1].id)
			rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				      "node %lld of tree %lld is listed twice", (long long)keys[i].id,
				      (long long)keys[i].tree);
	for (int64_t i = 0; i < n && !rc; i++) {
		ml_tnode *d = &fo->nodes[i];
		const om_str m = modes->strings[i];
		d->mode = -1;
		if (m.len == 4 && !memcmp(m.ptr, "LEAF", 4))
			d->mode = ML_LEAF;
		for (int j = 0; j < 6 && d->mode < 0; j++)
			if (m.len == (int64_t)strlen(mode_names[j]) &&
			    !memcmp(m.ptr, mode_names[j], (size_t)m.len))
				d->mode = j;
		if (d->mode < 0) {
			rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				      "nodes_modes[%lld] is not a mode", (long long)i);
			break;
		}
		if (d->mode == ML_LEAF)
			continue;
		d->miss_true = miss && miss[i];
		d->feature = feat[i];
		d->split = vals[i];
		d->t = tkey_find(keys, n, tree[i], tru[i]);
		d->f = tkey_find(keys, n, tree[i], fal[i]);
		if (d->feature < 0 || d->t < 0 || d->f < 0)
			rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				      "node %lld of tree %lld: feature %lld, branches %lld, %lld",
				      (long long)id[i], (long long)tree[i], (long long)feat[i],
				      (long long)tru[i], (long long)fal[i]);
		else if (d->feature > fo->max_feature)
			fo->max_feature = d->feature;
	}
	free(vals);
	return rc;
}

om_kind ml_forest_legacy(om_ctx *c, const char *prefix, int64_t ntargets, ml_forest *fo)
{
	memset(fo, 0, sizeof *fo);
	fo->max_feature = -1;
	const om_attr *modes = om_node_attr(c->node, "nodes_modes");
	if (!modes || modes->type != OM_ATTR_STRINGS || modes->n < 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"nodes_modes is not a non-empty list of strings");
	const int64_t n = modes->n;
	fo->nnodes = n;
	fo->nodes = calloc((size_t)n, sizeof *fo->nodes);
	tkey *keys = malloc(sizeof *keys * (size_t)n);
	fo->roots = malloc(sizeof *fo->roots * (size_t)n);
	if (!fo->nodes || !keys || !fo->roots) {
		free(keys);
		ml_forest_free(fo);
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (trees)");
	}
	om_kind rc = legacy_nodes(c, fo, keys, n);
	/* a tree's root: its first node in the attributes' order (ONNX Runtime's choice) */
	for (int64_t i = 0; i < n && !rc;) {
		int64_t j = i, root = keys[i].at;
		for (; j < n && keys[j].tree == keys[i].tree; j++)
			root = keys[j].at < root ? keys[j].at : root;
		fo->roots[fo->ntrees++] = root;
		i = j;
	}
	/* the leaves' weights */
	char name[4][32];
	const char *suffix[4] = {"treeids", "nodeids", "ids", "weights"};
	for (int i = 0; i < 4; i++)
		snprintf(name[i], sizeof name[i], "%s_%s", prefix, suffix[i]);
	const int64_t *wt = NULL, *wn = NULL, *wi = NULL;
	double *ww = NULL;
	int64_t m = 0, k;
	if (!rc)
		rc = ml_reals(c, name[3], &ww, &m);
	if (!rc)
		rc = ints_of(c, name[0], m, 0, &wt, &k);
	if (!rc)
		rc = ints_of(c, name[1], m, 0, &wn, &k);
	if (!rc)
		rc = ints_of(c, name[2], m, 0, &wi, &k);
	if (!rc && m) {
		fo->w = malloc(sizeof *fo->w * (size_t)m);
		if (!fo->w)
			rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (trees)");
	}
	for (int64_t i = 0; i < m && !rc; i++) {
		const int64_t at = tkey_find(keys, n, wt[i], wn[i]);
		if (at < 0 || wi[i] < 0 || wi[i] >= ntargets)
			rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				      "%s[%lld]: no node %lld in tree %lld, or id %lld not below %lld",
				      name[3], (long long)i, (long long)wn[i], (long long)wt[i],
				      (long long)wi[i], (long long)ntargets);
		else
			fo->w[fo->nw++] = (ml_tw){at, wi[i], ww[i]};
	}
	free(ww);
	free(keys);
	if (!rc)
		attach_weights(fo);
	else
		ml_forest_free(fo);
	return rc;
}

/* a tensor attribute of TreeEnsemble as doubles with n values */
static om_kind v5_reals(om_ctx *c, const char *name, int64_t want, double **v)
{
	int64_t k;
	*v = NULL;
	om_kind rc = ml_tensor_reals(c, om_attr_tensor(c->node, name), name, v, &k);
	if (!rc && k != want) {
		free(*v);
		*v = NULL;
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s has %lld values, not %lld",
			      name, (long long)k, (long long)want);
	}
	return rc;
}

/* membership_values: one run per BRANCH_MEMBER node, in node order, each ended by a NaN */
static om_kind v5_sets(om_ctx *c, ml_forest *fo, int64_t nint)
{
	int64_t nm = 0;
	for (int64_t j = 0; j < nint; j++)
		nm += fo->nodes[j].mode == ML_MEMBER;
	const om_tensor *mt = om_attr_tensor(c->node, "membership_values");
	if (!nm)
		return OM_OK;
	om_kind rc = ml_tensor_reals(c, mt, "membership_values", &fo->sets, &fo->nsets);
	if (rc)
		return rc;
	int64_t at = 0;
	for (int64_t j = 0; j < nint; j++) {
		ml_tnode *d = &fo->nodes[j];
		if (d->mode != ML_MEMBER)
			continue;
		d->s0 = at;
		while (at < fo->nsets && !isnan(fo->sets[at]))
			at++;
		if (at >= fo->nsets)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"membership_values has fewer NaN-ended sets than the %lld "
					"BRANCH_MEMBER nodes", (long long)nm);
		d->ns = at - d->s0;
		at++;
	}
	return OM_OK;
}

static om_kind v5_nodes(om_ctx *c, ml_forest *fo, int64_t nint, int64_t nl)
{
	const int64_t *tru, *fal, *tl, *fl, *miss, *feat;
	int64_t k;
	double *splits = NULL;
	om_kind rc = ints_of(c, "nodes_featureids", nint, 0, &feat, &k);
	if (!rc)
		rc = ints_of(c, "nodes_truenodeids", nint, 0, &tru, &k);
	if (!rc)
		rc = ints_of(c, "nodes_falsenodeids", nint, 0, &fal, &k);
	if (!rc)
		rc = ints_of(c, "nodes_trueleafs", nint, 0, &tl, &k);
	if (!rc)
		rc = ints_of(c, "nodes_falseleafs", nint, 0, &fl, &k);
	if (!rc)
		rc = ints_of(c, "nodes_missing_value_tracks_true", nint, 1, &miss, &k);
	if (!rc)
		rc = v5_reals(c, "nodes_splits", nint, &splits);
	const om_tensor *modes = om_attr_tensor(c->node, "nodes_modes");
	if (!rc && (!modes || modes->dtype != OM_UINT8 || om_tensor_numel(modes) != nint ||
		    !modes->data))
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
			      "nodes_modes is not a uint8 tensor of %lld modes", (long long)nint);
	for (int64_t j = 0; j < nint && !rc; j++) {
		ml_tnode *d = &fo->nodes[j];
		const int64_t mode = ((const uint8_t *)modes->data)[j];
		d->mode = (int32_t)mode;
		d->miss_true = miss && miss[j];
		d->feature = feat[j];
		d->split = splits[j];
		d->t = tl[j] ? nint + tru[j] : tru[j];
		d->f = fl[j] ? nint + fal[j] : fal[j];
		const int tbad = tl[j] ? tru[j] < 0 || tru[j] >= nl : tru[j] < 0 || tru[j] >= nint;
		const int fbad = fl[j] ? fal[j] < 0 || fal[j] >= nl : fal[j] < 0 || fal[j] >= nint;
		if (mode > ML_MEMBER || feat[j] < 0 || tbad || fbad)
			rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				      "node %lld: mode %lld, feature %lld, branches %lld, %lld",
				      (long long)j, (long long)mode, (long long)feat[j],
				      (long long)tru[j], (long long)fal[j]);
		else if (d->feature > fo->max_feature)
			fo->max_feature = d->feature;
	}
	if (!rc)
		rc = v5_sets(c, fo, nint);
	/* roots: a root whose branches both name the same leaf is that leaf (a one-leaf tree) */
	const int64_t *roots;
	if (!rc)
		rc = ints_of(c, "tree_roots", -1, 0, &roots, &fo->ntrees);
	if (!rc && !fo->ntrees)
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "tree_roots is empty");
	if (!rc) {
		fo->roots = malloc(sizeof *fo->roots * (size_t)fo->ntrees);
		if (!fo->roots)
			rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (trees)");
	}
	for (int64_t i = 0; i < fo->ntrees && !rc; i++) {
		const int64_t r = roots[i];
		if (r < 0 || r >= nint)
			rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				      "tree_roots[%lld] = %lld is not a node", (long long)i,
				      (long long)r);
		else
			fo->roots[i] = tl[r] && fl[r] && tru[r] == fal[r] ? nint + tru[r] : r;
	}
	free(splits);
	return rc;
}

om_kind ml_forest_v5(om_ctx *c, int64_t ntargets, ml_forest *fo)
{
	memset(fo, 0, sizeof *fo);
	fo->max_feature = -1;
	const int64_t *lt;
	int64_t nint, nl;
	double *lw = NULL;
	om_kind rc = ints_of(c, "nodes_featureids", -1, 0, &lt, &nint);
	if (!rc)
		rc = ints_of(c, "leaf_targetids", -1, 0, &lt, &nl);
	if (!rc)
		rc = v5_reals(c, "leaf_weights", nl, &lw);
	if (!rc && (nint < 1 || nl < 1))
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "no nodes or no leaves");
	if (rc) {
		free(lw);
		return rc;
	}
	fo->nnodes = nint + nl;
	fo->nodes = calloc((size_t)fo->nnodes, sizeof *fo->nodes);
	fo->w = malloc(sizeof *fo->w * (size_t)nl);
	if (!fo->nodes || !fo->w)
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (trees)");
	for (int64_t k = 0; k < nl && !rc; k++) {
		if (lt[k] < 0 || lt[k] >= ntargets)
			rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				      "leaf_targetids[%lld] = %lld is not below n_targets %lld",
				      (long long)k, (long long)lt[k], (long long)ntargets);
		fo->w[k] = (ml_tw){nint + k, lt[k], lw[k]};
		fo->nodes[nint + k] = (ml_tnode){.mode = ML_LEAF, .w0 = k, .nw = 1};
	}
	fo->nw = nl;
	free(lw);
	if (!rc)
		rc = v5_nodes(c, fo, nint, nl);
	if (rc)
		ml_forest_free(fo);
	return rc;
}

static int branch_holds(const ml_forest *fo, const ml_tnode *n, double v)
{
	if (n->miss_true && isnan(v))
		return 1;
	switch (n->mode) {
	case ML_LEQ: return v <= n->split;
	case ML_LT: return v < n->split;
	case ML_GTE: return v >= n->split;
	case ML_GT: return v > n->split;
	case ML_EQ: return v == n->split;
	case ML_NEQ: return v != n->split;
	default:
		for (int64_t k = 0; k < n->ns; k++)
			if (fo->sets[n->s0 + k] == v)
				return 1;
		return 0;
	}
}

int64_t ml_forest_leaf(const ml_forest *fo, int64_t tree, const om_tensor *x, int64_t x0)
{
	int64_t j = fo->roots[tree];
	for (int64_t steps = 0; steps <= fo->nnodes; steps++) {
		const ml_tnode *n = &fo->nodes[j];
		if (n->mode == ML_LEAF)
			return j;
		j = branch_holds(fo, n, ml_at(x, x0 + n->feature)) ? n->t : n->f;
	}
	return -1;
}
