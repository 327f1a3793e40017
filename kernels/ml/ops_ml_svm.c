/* ops_ml_svm.c — ai.onnx.ml SVMClassifier and SVMRegressor (ml opset 1): kernels LINEAR,
 * POLY, RBF, SIGMOID over support vectors (or a linear model without them), libsvm's
 * one-against-one votes and, with prob_a/prob_b, Platt scaling and pairwise coupling; all
 * in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ml_common.h"

enum svm_kernel { K_LINEAR, K_POLY, K_RBF, K_SIGMOID };

typedef struct svm {
	int kernel;
	double gamma, coef0, degree;
	double *sv, *coef, *rho, *pa, *pb;
	int64_t nsv, ncoef, nrho, npa, npb;
} svm;

static void svm_free(svm *m)
{
	free(m->sv);
	free(m->coef);
	free(m->rho);
	free(m->pa);
	free(m->pb);
	memset(m, 0, sizeof *m);
}

static om_kind svm_get(om_ctx *c, svm *m)
{
	static const char *const kernels[] = {"LINEAR", "POLY", "RBF", "SIGMOID", NULL};
	memset(m, 0, sizeof *m);
	m->kernel = om_attr_choice(c->node, "kernel_type", kernels, K_LINEAR);
	if (m->kernel < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"kernel_type is not LINEAR, POLY, RBF or SIGMOID");
	int64_t np;
	const float *p = om_attr_floats(c->node, "kernel_params", &np);
	m->gamma = np > 0 ? p[0] : 0;
	m->coef0 = np > 1 ? p[1] : 0;
	m->degree = np > 2 ? p[2] : 0;
	om_kind rc = ml_reals(c, "support_vectors", &m->sv, &m->nsv);
	if (!rc)
		rc = ml_reals(c, "coefficients", &m->coef, &m->ncoef);
	if (!rc)
		rc = ml_reals(c, "rho", &m->rho, &m->nrho);
	if (!rc)
		rc = ml_reals(c, "prob_a", &m->pa, &m->npa);
	if (!rc)
		rc = ml_reals(c, "prob_b", &m->pb, &m->npb);
	if (!rc && (m->npa != m->npb || !m->ncoef))
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
			      "prob_a and prob_b differ in length, or no coefficients");
	if (rc)
		svm_free(m);
	return rc;
}

/* K(x_row, v) over f features */
static double svm_k(const svm *m, const om_tensor *x, int64_t x0, const double *v, int64_t f)
{
	double s = 0;
	if (m->kernel == K_RBF) {
		for (int64_t j = 0; j < f; j++) {
			const double d = ml_at(x, x0 + j) - v[j];
			s += d * d;
		}
		return exp(-m->gamma * s);
	}
	for (int64_t j = 0; j < f; j++)
		s += ml_at(x, x0 + j) * v[j];
	switch (m->kernel) {
	case K_POLY: return pow(m->gamma * s + m->coef0, m->degree);
	case K_SIGMOID: return tanh(m->gamma * s + m->coef0);
	default: return s;
	}
}

/* ---- SVMRegressor ------------------------------------------------------------------------- */

static om_kind svr_infer(om_ctx *c)
{
	int64_t n, f;
	int post;
	om_kind rc = ml_rows(c, c->in[0], &n, &f);
	if (!rc)
		rc = ml_post_transform(c, &post);
	if (!rc)
		om_set_shape(c->out[0], OM_FLOAT, 2, (int64_t[]){n, 1});
	return rc;
}

static om_kind svr_kernel(om_ctx *c)
{
	int64_t n, f;
	int post;
	svm m;
	om_kind rc = ml_rows(c, c->in[0], &n, &f);
	if (!rc)
		rc = ml_post_transform(c, &post);
	if (rc || (rc = svm_get(c, &m)))
		return rc;
	const int64_t ns = om_attr_int(c->node, "n_supports", 0);
	const int one_class = om_attr_int(c->node, "one_class", 0) != 0;
	/* with support vectors: sum_k coef_k K(x, sv_k) + rho; without: x . coef + rho */
	if (ns < 0 || (ns > 0 && (!ml_is_product(m.nsv, ns, f) || m.ncoef != ns)) ||
	    (!ns && m.ncoef != f) ||
	    m.nrho < 1)
		rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
			      "%lld support values, %lld coefficients, %lld rho for n_supports "
			      "%lld and %lld features", (long long)m.nsv, (long long)m.ncoef,
			      (long long)m.nrho, (long long)ns, (long long)f);
	for (int64_t i = 0; i < n && !rc; i++) {
		double s = m.rho[0];
		if (ns > 0)
			for (int64_t k = 0; k < ns; k++)
				s += m.coef[k] * svm_k(&m, c->in[0], i * f, m.sv + k * f, f);
		else
			for (int64_t j = 0; j < f; j++)
				s += ml_at(c->in[0], i * f + j) * m.coef[j];
		if (one_class)
			s = s > 0 ? 1 : -1;
		ml_post_apply(post, &s, 1);
		ml_store(c->out[0], i, s);
	}
	svm_free(&m);
	return rc;
}

/* ---- SVMClassifier ------------------------------------------------------------------------ */

/* libsvm's multiclass_probability: p from the pairwise probabilities r (k x k) */
static void coupling(int64_t k, const double *r, double *p, double *q, double *qp)
{
	const double eps = 0.005 / (double)k;
	for (int64_t i = 0; i < k; i++) {
		p[i] = 1.0 / (double)k;
		q[i * k + i] = 0;
		for (int64_t j = 0; j < i; j++) {
			q[i * k + i] += r[j * k + i] * r[j * k + i];
			q[i * k + j] = q[j * k + i];
		}
		for (int64_t j = i + 1; j < k; j++) {
			q[i * k + i] += r[j * k + i] * r[j * k + i];
			q[i * k + j] = -r[j * k + i] * r[i * k + j];
		}
	}
	const int64_t iters = k > 100 ? k : 100;
	for (int64_t it = 0; it < iters; it++) {
		double pqp = 0, max_err = 0;
		for (int64_t i = 0; i < k; i++) {
			qp[i] = 0;
			for (int64_t j = 0; j < k; j++)
				qp[i] += q[i * k + j] * p[j];
			pqp += p[i] * qp[i];
		}
		for (int64_t i = 0; i < k; i++) {
			const double e = fabs(qp[i] - pqp);
			max_err = e > max_err ? e : max_err;
		}
		if (max_err < eps)
			break;
		for (int64_t i = 0; i < k; i++) {
			const double diff = (-qp[i] + pqp) / q[i * k + i];
			p[i] += diff;
			pqp = (pqp + diff * (diff * q[i * k + i] + 2 * qp[i])) / (1 + diff) / (1 + diff);
			for (int64_t j = 0; j < k; j++) {
				qp[j] = (qp[j] + diff * q[i * k + j]) / (1 + diff);
				p[j] /= 1 + diff;
			}
		}
	}
}

/* what a classifier node holds: support vectors by class (SVC) or a linear model */
typedef struct svc {
	svm m;
	ml_labels lb;
	int post;
	int64_t ncls, npairs, nvec, nz;
	int64_t *start, *count; /* support vectors of class i: start[i] .. + count[i] */
	int linear;
} svc;

static om_kind svc_get(om_ctx *c, int64_t f, svc *s)
{
	memset(s, 0, sizeof *s);
	om_kind rc = ml_labels_get(c, "classlabels_ints", "classlabels_strings", &s->lb);
	if (!rc)
		rc = ml_post_transform(c, &s->post);
	if (rc || (rc = svm_get(c, &s->m)))
		return rc;
	int64_t nvpc;
	const int64_t *vpc = om_attr_ints(c->node, "vectors_per_class", &nvpc);
	s->ncls = s->lb.n;
	s->npairs = s->ncls * (s->ncls - 1) / 2;
	s->linear = nvpc == 0;
	if (s->linear) {
		/* scores x . coef_k + rho[0] per class */
		s->nz = s->ncls;
		if (!ml_is_product(s->m.ncoef, s->ncls, f) || s->m.nrho < 1)
			rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				      "%lld coefficients for %lld classes of %lld features",
				      (long long)s->m.ncoef, (long long)s->ncls, (long long)f);
		return rc;
	}
	s->start = malloc(sizeof *s->start * (size_t)(2 * nvpc));
	if (!s->start)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (SVM)");
	s->count = s->start + nvpc;
	for (int64_t i = 0; i < nvpc && !rc; i++) {
		/* at most 2^40 vectors in all */
		if (vpc[i] < 0 || vpc[i] > ((int64_t)1 << 40) - s->nvec)
			rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				      "vectors_per_class[%lld] = %lld", (long long)i,
				      (long long)vpc[i]);
		else
			s->start[i] = s->nvec, s->count[i] = vpc[i], s->nvec += vpc[i];
	}
	if (!rc && (nvpc != s->ncls || s->ncls < 2 || !ml_is_product(s->m.nsv, s->nvec, f) ||
		    !ml_is_product(s->m.ncoef, s->ncls - 1, s->nvec) || s->m.nrho != s->npairs ||
		    (s->m.npa && s->m.npa != s->npairs)))
		rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
			      "%lld classes, %lld vector counts, %lld support values, %lld "
			      "coefficients, %lld rho, %lld prob_a for %lld features",
			      (long long)s->ncls, (long long)nvpc, (long long)s->m.nsv,
			      (long long)s->m.ncoef, (long long)s->m.nrho, (long long)s->m.npa,
			      (long long)f);
	/* Z: probabilities per class, or the pairwise scores (two columns for two classes) */
	s->nz = s->m.npa ? s->ncls : s->ncls > 2 ? s->npairs : 2;
	return rc;
}

static void svc_free(svc *s)
{
	svm_free(&s->m);
	free(s->start);
	s->start = NULL;
}

static om_kind svc_infer(om_ctx *c)
{
	int64_t n, f;
	svc s;
	om_kind rc = ml_rows(c, c->in[0], &n, &f);
	if (!rc && (rc = svc_get(c, f, &s)))
		svc_free(&s);
	if (rc)
		return rc;
	om_set_shape(c->out[0], ml_label_dtype(&s.lb), 1, &n);
	if (c->nout > 1 && c->out[1])
		om_set_shape(c->out[1], OM_FLOAT, 2, (int64_t[]){n, s.nz});
	svc_free(&s);
	return OM_OK;
}

/* One row: votes and pairwise scores (libsvm's one-against-one), then Z and the label. */
static void svc_row(const svc *s, const om_tensor *x, int64_t x0, int64_t f, double *w,
		    double *z, int64_t *label)
{
	const int64_t k = s->ncls;
	double *kern = w, *pair = kern + s->nvec, *votes = pair + s->npairs;
	double *r = votes + k, *q = r + k * k, *qp = q + k * k;
	for (int64_t v = 0; v < s->nvec; v++)
		kern[v] = svm_k(&s->m, x, x0, s->m.sv + v * f, f);
	memset(votes, 0, sizeof *votes * (size_t)k);
	int64_t p = 0;
	for (int64_t i = 0; i < k; i++)
		for (int64_t j = i + 1; j < k; j++, p++) {
			double sum = s->m.rho[p];
			const double *ci = s->m.coef + (j - 1) * s->nvec, *cj = s->m.coef + i * s->nvec;
			for (int64_t m = s->start[i]; m < s->start[i] + s->count[i]; m++)
				sum += ci[m] * kern[m];
			for (int64_t m = s->start[j]; m < s->start[j] + s->count[j]; m++)
				sum += cj[m] * kern[m];
			pair[p] = sum;
			votes[sum > 0 ? i : j] += 1;
		}
	*label = 0;
	for (int64_t i = 1; i < k; i++)
		*label = votes[i] > votes[*label] ? i : *label;
	if (s->m.npa) {
		/* Platt: P(i beats j) = 1 - logistic(score a + b), kept in [1e-7, 1 - 1e-7] */
		p = 0;
		for (int64_t i = 0; i < k; i++)
			for (int64_t j = i + 1; j < k; j++, p++) {
				double v = 1 - ml_logistic(pair[p] * s->m.pa[p] + s->m.pb[p]);
				v = v < 1e-7 ? 1e-7 : v > 1 - 1e-7 ? 1 - 1e-7 : v;
				r[i * k + j] = v;
				r[j * k + i] = 1 - v;
			}
		coupling(k, r, z, q, qp);
		ml_post_apply(s->post, z, k);
	} else if (k == 2) {
		/* one pairwise score s: (-s, s) under NONE, else (1 - s, s) (ONNX Runtime) */
		z[0] = s->post == ML_POST_NONE ? -pair[0] : 1 - pair[0];
		z[1] = pair[0];
		if (s->post == ML_POST_PROBIT)
			z[1] = ml_probit(pair[0]), z[0] = -z[1];
	} else {
		memcpy(z, pair, sizeof *z * (size_t)s->npairs);
		ml_post_apply(s->post, z, s->npairs);
	}
}

static om_kind svc_kernel(om_ctx *c)
{
	int64_t n, f;
	svc s;
	om_kind rc = ml_rows(c, c->in[0], &n, &f);
	if (rc)
		return rc;
	if ((rc = svc_get(c, f, &s))) {
		svc_free(&s);
		return rc;
	}
	const int64_t k = s.ncls;
	double *w = malloc(sizeof *w * (size_t)(s.nvec + s.npairs + 2 * k + 2 * k * k + s.nz + 2));
	if (!w)
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (SVM)");
	om_tensor *zt = c->nout > 1 ? c->out[1] : NULL;
	double *z = w ? w + s.nvec + s.npairs + 2 * k + 2 * k * k : NULL;
	for (int64_t i = 0; i < n && !rc; i++) {
		int64_t label = 0;
		if (s.linear) {
			for (int64_t cl = 0; cl < k; cl++) {
				z[cl] = s.m.rho[0];
				for (int64_t j = 0; j < f; j++)
					z[cl] += ml_at(c->in[0], i * f + j) * s.m.coef[cl * f + j];
				label = z[cl] > z[label] ? cl : label;
			}
			ml_post_apply(s.post, z, k);
		} else {
			svc_row(&s, c->in[0], i * f, f, w, z, &label);
		}
		rc = ml_label_put(c, &s.lb, c->out[0], i, label);
		for (int64_t j = 0; zt && j < s.nz && !rc; j++)
			ml_store(zt, i * s.nz + j, z[j]);
	}
	if (rc)
		ml_labels_clear_from(c->out[0], 0);
	free(w);
	svc_free(&s);
	return rc;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_SVMClassifier_1[] = {{"classlabels_ints", OM_ATTR_INTS, 0},
	{"classlabels_strings", OM_ATTR_STRINGS, 0}, {"coefficients", OM_ATTR_FLOATS, 0},
	{"kernel_params", OM_ATTR_FLOATS, 0}, {"kernel_type", OM_ATTR_STRING, 0},
	{"post_transform", OM_ATTR_STRING, 0}, {"prob_a", OM_ATTR_FLOATS, 0},
	{"prob_b", OM_ATTR_FLOATS, 0}, {"rho", OM_ATTR_FLOATS, 0},
	{"support_vectors", OM_ATTR_FLOATS, 0}, {"vectors_per_class", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* SVMClassifier-1: X -> Y Z */
static const om_sig sig_SVMClassifier_1 = {1, 1, 1, 2, 2, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_SVMClassifier_1, NULL};
static const om_sig_attr attrs_SVMRegressor_1[] = {{"coefficients", OM_ATTR_FLOATS, 0},
	{"kernel_params", OM_ATTR_FLOATS, 0}, {"kernel_type", OM_ATTR_STRING, 0},
	{"n_supports", OM_ATTR_INT, 0}, {"one_class", OM_ATTR_INT, 0},
	{"post_transform", OM_ATTR_STRING, 0}, {"rho", OM_ATTR_FLOATS, 0},
	{"support_vectors", OM_ATTR_FLOATS, 0}, {NULL, 0, 0}};
/* SVMRegressor-1: X -> Y */
static const om_sig sig_SVMRegressor_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_SVMRegressor_1, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"SVMClassifier", "ai.onnx.ml", 1, svc_infer, svc_kernel, OM_OP_EXACT,
	 &sig_SVMClassifier_1, OM_OPC_NONE, NULL, 0, NULL},
	{"SVMRegressor", "ai.onnx.ml", 1, svr_infer, svr_kernel, OM_OP_EXACT,
	 &sig_SVMRegressor_1, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_ml_svm = OM_TABLE(rows);
