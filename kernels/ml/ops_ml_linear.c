/* ops_ml_linear.c — ai.onnx.ml LinearRegressor and LinearClassifier (ml opset 1): scores
 * X W^T + b in double, then the post transform; the classifier's label is the top score. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ml_common.h"

/* W (rows x f, from `coefficients`) and b (rows or none, from `intercepts`) */
typedef struct lin {
	double *w, *b;
	int64_t rows, nb;
} lin;

static void lin_free(lin *l)
{
	free(l->w);
	free(l->b);
}

/* rows: the number of score columns wanted, or 0 to take coefficients / f */
static om_kind lin_get(om_ctx *c, int64_t f, int64_t rows, lin *l)
{
	int64_t nw;
	memset(l, 0, sizeof *l);
	om_kind rc = ml_reals(c, "coefficients", &l->w, &nw);
	if (!rc)
		rc = ml_reals(c, "intercepts", &l->b, &l->nb);
	if (!rc && !rows && f > 0)
		rows = nw / f;
	if (!rc && (rows < 1 || !ml_is_product(nw, rows, f) || (l->nb && l->nb != rows)))
		rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
			      "%lld coefficients and %lld intercepts for %lld features",
			      (long long)nw, (long long)l->nb, (long long)f);
	l->rows = rows;
	if (rc)
		lin_free(l);
	return rc;
}

/* s[k] = x_row . W[k] + b[k] */
static void lin_scores(const lin *l, const om_tensor *x, int64_t x0, int64_t f, double *s)
{
	for (int64_t k = 0; k < l->rows; k++) {
		double acc = l->nb ? l->b[k] : 0;
		for (int64_t j = 0; j < f; j++)
			acc += ml_at(x, x0 + j) * l->w[k * f + j];
		s[k] = acc;
	}
}

/* ---- LinearRegressor ---------------------------------------------------------------------- */

static om_kind lr_infer(om_ctx *c)
{
	int64_t n, f, t = om_attr_int(c->node, "targets", 1);
	int post;
	om_kind rc = ml_rows(c, c->in[0], &n, &f);
	if (!rc)
		rc = ml_post_transform(c, &post);
	if (!rc && (t < 1 || t > ((int64_t)1 << 30)))
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "targets is %lld",
			      (long long)t);
	if (!rc)
		om_set_shape(c->out[0], OM_FLOAT, 2, (int64_t[]){n, t});
	return rc;
}

static om_kind lr_kernel(om_ctx *c)
{
	int64_t n, f;
	int post;
	lin l;
	om_kind rc = lr_infer(c);
	if (!rc)
		rc = ml_rows(c, c->in[0], &n, &f);
	if (!rc)
		rc = ml_post_transform(c, &post);
	if (rc || (rc = lin_get(c, f, om_attr_int(c->node, "targets", 1), &l)))
		return rc;
	double *s = malloc(sizeof *s * (size_t)l.rows);
	if (!s)
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (scores)");
	for (int64_t i = 0; i < n && !rc; i++) {
		lin_scores(&l, c->in[0], i * f, f, s);
		ml_post_apply(post, s, l.rows);
		for (int64_t k = 0; k < l.rows; k++)
			ml_store(c->out[0], i * l.rows + k, s[k]);
	}
	free(s);
	lin_free(&l);
	return rc;
}

/* ---- LinearClassifier --------------------------------------------------------------------- */

static om_kind lc_infer(om_ctx *c)
{
	int64_t n, f;
	int post;
	ml_labels lb;
	om_kind rc = ml_rows(c, c->in[0], &n, &f);
	if (!rc)
		rc = ml_labels_get(c, "classlabels_ints", "classlabels_strings", &lb);
	if (!rc)
		rc = ml_post_transform(c, &post);
	if (rc)
		return rc;
	om_set_shape(c->out[0], ml_label_dtype(&lb), 1, &n);
	/* Z has a column per class; one row of coefficients for two classes scores both */
	int64_t nz = lb.n;
	const om_attr *w = om_node_attr(c->node, "coefficients");
	if (w && f > 0 && w->n != lb.n * f)
		nz = w->n / f == 1 && lb.n == 2 ? 2 : w->n / f;
	if (c->nout > 1 && c->out[1])
		om_set_shape(c->out[1], OM_FLOAT, 2, (int64_t[]){n, nz});
	return OM_OK;
}

static om_kind lc_kernel(om_ctx *c)
{
	int64_t n, f;
	int post;
	ml_labels lb;
	lin l;
	om_kind rc = ml_rows(c, c->in[0], &n, &f);
	if (!rc)
		rc = ml_labels_get(c, "classlabels_ints", "classlabels_strings", &lb);
	if (!rc)
		rc = ml_post_transform(c, &post);
	if (rc || (rc = lin_get(c, f, 0, &l)))
		return rc;
	/* one row of scores for two labels: score s for the second, -s for the first (as ONNX
	 * Runtime); otherwise a row per label */
	const int binary = l.rows == 1 && lb.n == 2;
	if (!binary && l.rows != lb.n)
		rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
			      "%lld rows of coefficients for %lld labels", (long long)l.rows,
			      (long long)lb.n);
	const int64_t nz = binary ? 2 : l.rows;
	double *s = rc ? NULL : malloc(sizeof *s * (size_t)(nz + 1));
	if (!rc && !s)
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (scores)");
	om_tensor *z = c->nout > 1 ? c->out[1] : NULL;
	for (int64_t i = 0; i < n && !rc; i++) {
		int64_t label = 0;
		if (binary) {
			lin_scores(&l, c->in[0], i * f, f, s + 1);
			s[0] = -s[1];
		} else {
			lin_scores(&l, c->in[0], i * f, f, s);
		}
		for (int64_t k = 1; k < nz; k++)
			label = s[k] > s[label] ? k : label;
		ml_post_apply(post, s, nz);
		rc = ml_label_put(c, &lb, c->out[0], i, label);
		for (int64_t k = 0; z && k < nz && !rc; k++)
			ml_store(z, i * nz + k, s[k]);
	}
	if (rc)
		ml_labels_clear_from(c->out[0], 0);
	free(s);
	lin_free(&l);
	return rc;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_LinearClassifier_1[] = {{"classlabels_ints", OM_ATTR_INTS, 0},
	{"classlabels_strings", OM_ATTR_STRINGS, 0}, {"coefficients", OM_ATTR_FLOATS, 1},
	{"intercepts", OM_ATTR_FLOATS, 0}, {"multi_class", OM_ATTR_INT, 0},
	{"post_transform", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* LinearClassifier-1: X -> Y Z */
static const om_sig sig_LinearClassifier_1 = {1, 1, 1, 2, 2, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_LinearClassifier_1, NULL};
static const om_sig_attr attrs_LinearRegressor_1[] = {{"coefficients", OM_ATTR_FLOATS, 0},
	{"intercepts", OM_ATTR_FLOATS, 0}, {"post_transform", OM_ATTR_STRING, 0},
	{"targets", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* LinearRegressor-1: X -> Y */
static const om_sig sig_LinearRegressor_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_LinearRegressor_1, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"LinearClassifier", "ai.onnx.ml", 1, lc_infer, lc_kernel, OM_OP_EXACT,
	 &sig_LinearClassifier_1, OM_OPC_NONE, NULL, 0, NULL},
	{"LinearRegressor", "ai.onnx.ml", 1, lr_infer, lr_kernel, OM_OP_EXACT,
	 &sig_LinearRegressor_1, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_ml_linear = OM_TABLE(rows);
