/* ops_ml_prep.c — ai.onnx.ml feature transforms: Binarizer, Scaler, Normalizer, Imputer,
 * OneHotEncoder, ArrayFeatureExtractor, FeatureVectorizer (all ml opset 1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index_util.h"
#include "ml_common.h"

/* float, double, int64, int32: the T of most ml ops */
static om_kind numeric_x(om_ctx *c, const om_tensor *x)
{
	switch (x->dtype) {
	case OM_FLOAT: case OM_DOUBLE: case OM_INT64: case OM_INT32:
		return OM_OK;
	default:
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "X has type %s",
				om_dtype_name(x->dtype));
	}
}

/* stores v as element i of a float, double, int64 or int32 tensor */
static void put_num(om_tensor *t, int64_t i, double v)
{
	switch (t->dtype) {
	case OM_INT64: ((int64_t *)t->data)[i] = (int64_t)v; break;
	case OM_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
	default: ml_store(t, i, v); break;
	}
}

/* the length of X's last axis (1 for a scalar) */
static int64_t last_dim(const om_tensor *x)
{
	return x->rank ? x->dims[x->rank - 1] : 1;
}

/* ---- Binarizer: X > threshold ? 1 : 0, X's type and shape -------------------------------- */

static om_kind same_infer(om_ctx *c)
{
	om_kind rc = numeric_x(c, c->in[0]);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	return rc;
}

static om_kind binarizer_kernel(om_ctx *c)
{
	const om_tensor *x = c->in[0];
	const double th = om_attr_float(c->node, "threshold", 0);
	for (int64_t i = 0, n = om_tensor_numel(x); i < n; i++)
		put_num(c->out[0], i, ml_at(x, i) > th ? 1 : 0);
	return OM_OK;
}

/* ---- Scaler: (X - offset) * scale, float, per feature (last axis) or one for all --------- */

static om_kind float_infer(om_ctx *c)
{
	om_kind rc = numeric_x(c, c->in[0]);
	if (!rc)
		om_set_shape(c->out[0], OM_FLOAT, c->in[0]->rank, c->in[0]->dims);
	return rc;
}

/* a per-feature list of f values or one value for all (an empty list: dflt) */
static om_kind per_feature(om_ctx *c, const char *name, int64_t k, int64_t f)
{
	if (k != 1 && k != f)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"%s has %lld values for %lld features", name, (long long)k,
				(long long)f);
	return OM_OK;
}

static om_kind scaler_kernel(om_ctx *c)
{
	const om_tensor *x = c->in[0];
	const int64_t f = last_dim(x);
	int64_t no, ns;
	const float *off = om_attr_floats(c->node, "offset", &no);
	const float *sc = om_attr_floats(c->node, "scale", &ns);
	om_kind rc = OM_OK;
	if (no)
		rc = per_feature(c, "offset", no, f);
	if (!rc && ns)
		rc = per_feature(c, "scale", ns, f);
	for (int64_t i = 0, n = om_tensor_numel(x); i < n && !rc && f; i++) {
		const int64_t j = i % f;
		const double o = no ? off[no == 1 ? 0 : j] : 0, s = ns ? sc[ns == 1 ? 0 : j] : 1;
		ml_store(c->out[0], i, (ml_at(x, i) - o) * s);
	}
	return rc;
}

/* ---- Normalizer: each row (last axis) over its MAX, L1 or L2 norm ----------------------- */

static om_kind norm_kind(om_ctx *c, int *kind)
{
	static const char *const names[] = {"MAX", "L1", "L2", NULL};
	*kind = om_attr_choice(c->node, "norm", names, -1);
	if (*kind < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "norm is not MAX, L1 or L2");
	return OM_OK;
}

static om_kind norm_infer(om_ctx *c)
{
	int kind = 0;
	om_kind rc = norm_kind(c, &kind);
	if (!rc)
		rc = float_infer(c);
	if (!rc && c->in[0]->rank > 2)
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "X has rank %d",
			      (int)c->in[0]->rank);
	return rc;
}

static om_kind norm_kernel(om_ctx *c)
{
	int kind = 0;
	om_kind rc = norm_infer(c);
	if (!rc)
		rc = norm_kind(c, &kind);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	const int64_t f = last_dim(x), n = om_tensor_numel(x);
	for (int64_t r = 0; f && r < n / f; r++) {
		double d = kind == 0 ? -INFINITY : 0;
		for (int64_t j = 0; j < f; j++) {
			const double v = ml_at(x, r * f + j);
			d = kind == 0 ? (v > d ? v : d) : kind == 1 ? d + fabs(v) : d + v * v;
		}
		if (kind == 2)
			d = sqrt(d);
		for (int64_t j = 0; j < f; j++) {
			const double v = ml_at(x, r * f + j);
			/* a zero norm leaves the row as it is (scikit-learn, ONNX Runtime) */
			ml_store(c->out[0], r * f + j, d == 0 ? v : v / d);
		}
	}
	return OM_OK;
}

/* ---- Imputer: replaced_value_* (NaN: every NaN) -> imputed_value_*, per feature ---------- */

static om_kind imputer_kernel(om_ctx *c)
{
	const om_tensor *x = c->in[0];
	const int is_int = x->dtype == OM_INT64 || x->dtype == OM_INT32;
	int64_t nf, ni;
	const float *fv = om_attr_floats(c->node, "imputed_value_floats", &nf);
	const int64_t *iv = om_attr_ints(c->node, "imputed_value_int64s", &ni);
	const int64_t k = is_int ? ni : nf, f = last_dim(x);
	if (!k || (is_int ? nf : ni))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"X of type %s needs imputed_value_%s (and not the other list)",
				om_dtype_name(x->dtype), is_int ? "int64s" : "floats");
	om_kind rc = per_feature(c, "the imputed values", k, f);
	const double rf = om_attr_float(c->node, "replaced_value_float", 0);
	const int64_t ri = om_attr_int(c->node, "replaced_value_int64", 0);
	for (int64_t i = 0, n = om_tensor_numel(x); i < n && !rc; i++) {
		const int64_t j = k == 1 ? 0 : i % f;
		if (is_int) {
			const int64_t v = om_ix_int_at(x, i);
			const int64_t o = v == ri ? iv[j] : v;
			if (x->dtype == OM_INT64)
				((int64_t *)c->out[0]->data)[i] = o;
			else
				((int32_t *)c->out[0]->data)[i] = (int32_t)o;
		} else {
			const double v = ml_at(x, i);
			const int hit = isnan(rf) ? isnan(v) : v == rf;
			ml_store(c->out[0], i, hit ? fv[j] : v);
		}
	}
	return rc;
}

/* ---- OneHotEncoder: X's shape + (categories), 1.0 where X is the category ---------------- */

static om_kind ohe_cats(om_ctx *c, const om_attr **cats)
{
	const om_attr *a = om_node_attr(c->node, "cats_int64s");
	const om_attr *s = om_node_attr(c->node, "cats_strings");
	const om_tensor *x = c->in[0];
	const int str = x->dtype == OM_STRING;
	*cats = str ? s : a;
	if ((a && a->n && s && s->n) || !*cats || !(*cats)->n ||
	    (*cats)->type != (str ? OM_ATTR_STRINGS : OM_ATTR_INTS))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"X of type %s needs a non-empty cats_%s alone",
				om_dtype_name(x->dtype), str ? "strings" : "int64s");
	if (!str && numeric_x(c, x))
		return OM_ERR_INVALID_MODEL;
	if (x->rank >= OM_MAX_RANK)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "X has rank %d",
				(int)x->rank);
	return OM_OK;
}

static om_kind ohe_infer(om_ctx *c)
{
	const om_attr *cats;
	om_kind rc = ohe_cats(c, &cats);
	if (rc)
		return rc;
	int64_t dims[OM_MAX_RANK];
	memcpy(dims, c->in[0]->dims, sizeof *dims * (size_t)c->in[0]->rank);
	dims[c->in[0]->rank] = cats->n;
	om_set_shape(c->out[0], OM_FLOAT, c->in[0]->rank + 1, dims);
	return OM_OK;
}

static om_kind ohe_kernel(om_ctx *c)
{
	const om_attr *cats;
	om_kind rc = ohe_cats(c, &cats);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	const int64_t k = cats->n, zeros = om_attr_int(c->node, "zeros", 1);
	float *y = c->out[0]->data;
	for (int64_t i = 0, n = om_tensor_numel(x); i < n; i++) {
		int64_t hit = -1;
		if (x->dtype == OM_STRING) {
			const om_str v = ((const om_str *)x->data)[i];
			for (int64_t j = 0; j < k && hit < 0; j++)
				if (cats->strings[j].len == v.len &&
				    (!v.len || !memcmp(cats->strings[j].ptr, v.ptr, (size_t)v.len)))
					hit = j;
		} else {
			/* a real X counts by its integer part (ONNX Runtime casts to int64) */
			const double d = ml_at(x, i);
			const int64_t v = d >= -9.2e18 && d <= 9.2e18 ? (int64_t)d : INT64_MIN;
			for (int64_t j = 0; j < k && hit < 0; j++)
				if (cats->ints[j] == v)
					hit = j;
		}
		if (hit < 0 && !zeros)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"X[%lld] is no category and zeros is 0", (long long)i);
		for (int64_t j = 0; j < k; j++)
			y[i * k + j] = j == hit;
	}
	return OM_OK;
}

/* ---- ArrayFeatureExtractor: X[..., Y] along the last axis -------------------------------- */

static om_kind afe_infer(om_ctx *c)
{
	const om_tensor *x = c->in[0], *ix = c->in[1];
	if (x->dtype != OM_STRING && numeric_x(c, x))
		return OM_ERR_INVALID_MODEL;
	if (ix->dtype != OM_INT64)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "Y has type %s, not int64",
				om_dtype_name(ix->dtype));
	if (x->rank < 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "X is a scalar");
	int64_t dims[OM_MAX_RANK];
	memcpy(dims, x->dims, sizeof *dims * (size_t)x->rank);
	dims[x->rank - 1] = om_tensor_numel(ix);
	om_set_shape(c->out[0], x->dtype, x->rank, dims);
	return OM_OK;
}

static om_kind afe_kernel(om_ctx *c)
{
	const om_tensor *x = c->in[0], *ix = c->in[1];
	const int64_t f = last_dim(x), k = om_tensor_numel(ix), n = om_tensor_numel(x);
	const int64_t *idx = ix->data;
	const size_t es = om_dtype_size(x->dtype);
	for (int64_t j = 0; j < k; j++)
		if (idx[j] < 0 || idx[j] >= f)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"index %lld is outside the last axis (%lld)",
					(long long)idx[j], (long long)f);
	char *y = c->out[0]->data;
	const char *xs = x->data;
	for (int64_t r = 0; f && r < n / f; r++)
		for (int64_t j = 0; j < k; j++)
			memcpy(y + (size_t)(r * k + j) * es, xs + (size_t)(r * f + idx[j]) * es, es);
	return om_ix_own_strings(c, c->out[0]);
}

/* ---- FeatureVectorizer: inputs' rows side by side, each cut or padded to its dimension --- */

static om_kind fv_shape(om_ctx *c, int64_t *n, int64_t *total)
{
	int64_t nd;
	const int64_t *d = om_attr_ints(c->node, "inputdimensions", &nd);
	if (nd != c->nin)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"inputdimensions has %lld values for %d inputs", (long long)nd,
				(int)c->nin);
	*total = 0;
	*n = -1;
	for (int32_t i = 0; i < c->nin; i++) {
		const om_tensor *x = c->in[i];
		if (!x || numeric_x(c, x))
			return OM_ERR_INVALID_MODEL;
		if (d[i] < 0 || d[i] > ((int64_t)1 << 40))
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"inputdimensions[%d] = %lld", (int)i, (long long)d[i]);
		const int64_t rows = x->rank >= 2 ? x->dims[0] : 1;
		if (*n >= 0 && rows != *n)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"input %d has %lld rows, not %lld", (int)i, (long long)rows,
					(long long)*n);
		*n = rows;
		*total += d[i];
	}
	return OM_OK;
}

static om_kind fv_infer(om_ctx *c)
{
	int64_t n, total;
	om_kind rc = fv_shape(c, &n, &total);
	if (!rc)
		om_set_shape(c->out[0], OM_FLOAT, 2, (int64_t[]){n, total});
	return rc;
}

static om_kind fv_kernel(om_ctx *c)
{
	int64_t n, total, nd;
	om_kind rc = fv_shape(c, &n, &total);
	if (rc)
		return rc;
	const int64_t *d = om_attr_ints(c->node, "inputdimensions", &nd);
	int64_t col = 0;
	for (int32_t i = 0; i < c->nin; i++) {
		const om_tensor *x = c->in[i];
		const int64_t f = n ? om_tensor_numel(x) / n : 0;
		for (int64_t r = 0; r < n; r++)
			for (int64_t j = 0; j < d[i]; j++)
				ml_store(c->out[0], r * total + col + j,
					 j < f ? ml_at(x, r * f + j) : 0);
		col += d[i];
	}
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_Binarizer_1[] = {{"threshold", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Binarizer-1: X -> Y */
static const om_sig sig_Binarizer_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_Binarizer_1, NULL};
static const om_sig_attr attrs_Scaler_1[] = {{"offset", OM_ATTR_FLOATS, 0},
	{"scale", OM_ATTR_FLOATS, 0}, {NULL, 0, 0}};
/* Scaler-1: X -> Y */
static const om_sig sig_Scaler_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, attrs_Scaler_1,
	NULL};
static const om_sig_attr attrs_Normalizer_1[] = {{"norm", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* Normalizer-1: X -> Y */
static const om_sig sig_Normalizer_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_Normalizer_1, NULL};
static const om_sig_attr attrs_Imputer_1[] = {{"imputed_value_floats", OM_ATTR_FLOATS, 0},
	{"imputed_value_int64s", OM_ATTR_INTS, 0}, {"replaced_value_float", OM_ATTR_FLOAT, 0},
	{"replaced_value_int64", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Imputer-1: X -> Y */
static const om_sig sig_Imputer_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, attrs_Imputer_1,
	NULL};
static const om_sig_attr attrs_OneHotEncoder_1[] = {{"cats_int64s", OM_ATTR_INTS, 0},
	{"cats_strings", OM_ATTR_STRINGS, 0}, {"zeros", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* OneHotEncoder-1: X -> Y */
static const om_sig sig_OneHotEncoder_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_OneHotEncoder_1, NULL};
/* ArrayFeatureExtractor-1: X Y -> Z */
static const om_sig sig_ArrayFeatureExtractor_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	NULL, NULL};
static const om_sig_attr attrs_FeatureVectorizer_1[] = {{"inputdimensions", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* FeatureVectorizer-1: X... -> Y */
static const om_sig sig_FeatureVectorizer_1 = {1, 1, OM_MANY, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_FeatureVectorizer_1, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"Binarizer", "ai.onnx.ml", 1, same_infer, binarizer_kernel, OM_OP_EXACT,
	 &sig_Binarizer_1, OM_OPC_NONE, NULL, 0, NULL},
	{"Scaler", "ai.onnx.ml", 1, float_infer, scaler_kernel, OM_OP_EXACT, &sig_Scaler_1,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"Normalizer", "ai.onnx.ml", 1, norm_infer, norm_kernel, OM_OP_EXACT, &sig_Normalizer_1,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"Imputer", "ai.onnx.ml", 1, same_infer, imputer_kernel, OM_OP_EXACT, &sig_Imputer_1,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"OneHotEncoder", "ai.onnx.ml", 1, ohe_infer, ohe_kernel, OM_OP_EXACT,
	 &sig_OneHotEncoder_1, OM_OPC_NONE, NULL, 0, NULL},
	{"ArrayFeatureExtractor", "ai.onnx.ml", 1, afe_infer, afe_kernel, OM_OP_EXACT,
	 &sig_ArrayFeatureExtractor_1, OM_OPC_NONE, NULL, 0, NULL},
	{"FeatureVectorizer", "ai.onnx.ml", 1, fv_infer, fv_kernel, OM_OP_EXACT,
	 &sig_FeatureVectorizer_1, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_ml_prep = OM_TABLE(rows);
