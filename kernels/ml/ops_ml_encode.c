/* ops_ml_encode.c — ai.onnx.ml LabelEncoder (1, 2; the tensor attributes and wider types of 4)
 * and CategoryMapper: each element of X looked up in a key column, Y the value at the key's
 * position or a default (docs/ops.md). */
#include <string.h>

#include "ml_lookup.h"

#define ROW (OM_OP_EXACT)

/* A look-up: keys, values (the same count) and the default of the values' type. */
typedef struct encoding {
	om_ml_col keys, values, dflt;
	union { int16_t i16; int32_t i32; int64_t i64; float f; double d; om_str s; } dbuf;
	bool by_index; /* LabelEncoder-1 from int64: Y = values[X] (keys are 0..n-1) */
} encoding;

/* the default of the values' type: default_tensor, else default_int64 / default_float /
 * default_string as the values' type */
static om_kind set_default(om_ctx *c, encoding *e)
{
	const int32_t vt = e->values.dtype;
	om_ml_col t;
	om_kind rc = om_ml_attr_col(c, "default_tensor", &t);
	if (rc)
		return rc;
	if (t.dtype) {
		if (t.dtype != vt || t.n < 1)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"default_tensor must hold one %s", om_dtype_name(vt));
		e->dflt = t;
		return OM_OK;
	}
	const int64_t i = om_attr_int(c->node, "default_int64", -1);
	const float f = om_attr_float(c->node, "default_float", -0.0f);
	switch (vt) {
	case OM_STRING: {
		const om_attr *a = om_node_attr(c->node, "default_string");
		e->dbuf.s = a && a->type == OM_ATTR_STRING ? a->s : (om_str){"_Unused", 7};
		break;
	}
	case OM_INT16: e->dbuf.i16 = (int16_t)i; break;
	case OM_INT32: e->dbuf.i32 = (int32_t)i; break;
	case OM_INT64: e->dbuf.i64 = i; break;
	case OM_FLOAT: e->dbuf.f = f; break;
	case OM_DOUBLE: e->dbuf.d = f; break;
	default: break;
	}
	e->dflt = (om_ml_col){vt, 1, &e->dbuf};
	return OM_OK;
}

/* the one attribute of `names` the node has (InvalidModel for two) */
static om_kind one_of(om_ctx *c, const char *const *names, om_ml_col *col)
{
	memset(col, 0, sizeof *col);
	const char *had = NULL;
	for (int k = 0; names[k]; k++) {
		om_ml_col x;
		om_kind rc = om_ml_attr_col(c, names[k], &x);
		if (rc)
			return rc;
		if (!x.dtype)
			continue;
		if (had)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"%s and %s are both set", had, names[k]);
		had = names[k];
		*col = x;
	}
	if (!had)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s (or %s) is required",
				names[0], names[1]);
	return OM_OK;
}

static const int64_t iota_none = 0; /* a column of positions has no data of its own */

/* The node's encoding for an input of element type xt. */
static om_kind encoding_of(om_ctx *c, int32_t xt, encoding *e)
{
	memset(e, 0, sizeof *e);
	om_kind rc;
	switch (c->op->param) {
	case 1: { /* LabelEncoder-1: classes_strings, the direction by X's type */
		om_ml_col cls;
		if ((rc = om_ml_attr_col(c, "classes_strings", &cls)))
			return rc;
		if (cls.dtype && cls.dtype != OM_STRING)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"classes_strings must be strings");
		cls.dtype = OM_STRING;
		if (xt == OM_STRING) {
			e->keys = cls;
			e->values = (om_ml_col){OM_INT64, cls.n, &iota_none}; /* the position */
		} else {
			e->keys = (om_ml_col){OM_INT64, cls.n, &iota_none};
			e->values = cls;
			e->by_index = true;
		}
		break;
	}
	case 2: { /* LabelEncoder-2 and 4: keys_* and values_* */
		static const char *const k[] = {"keys_strings", "keys_int64s", "keys_floats",
						"keys_tensor", NULL};
		static const char *const v[] = {"values_strings", "values_int64s",
						"values_floats", "values_tensor", NULL};
		if ((rc = one_of(c, k, &e->keys)) || (rc = one_of(c, v, &e->values)))
			return rc;
		if (e->keys.n != e->values.n)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"%lld keys and %lld values", (long long)e->keys.n,
					(long long)e->values.n);
		break;
	}
	default: { /* CategoryMapper: cats_strings <-> cats_int64s, the direction by X's type */
		om_ml_col s, i;
		if ((rc = om_ml_attr_col(c, "cats_strings", &s)) ||
		    (rc = om_ml_attr_col(c, "cats_int64s", &i)))
			return rc;
		if ((s.dtype && s.dtype != OM_STRING) || (i.dtype && i.dtype != OM_INT64) ||
		    s.n != i.n)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"cats_strings and cats_int64s must be of one length");
		s.dtype = OM_STRING;
		i.dtype = OM_INT64;
		e->keys = xt == OM_STRING ? s : i;
		e->values = xt == OM_STRING ? i : s;
		break;
	}
	}
	if (!om_ml_col_type(e->values.dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "values of type %s",
				om_dtype_name(e->values.dtype));
	if (xt != e->keys.dtype)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"X has element type %s, the keys are %s", om_dtype_name(xt),
				om_dtype_name(e->keys.dtype));
	return set_default(c, e);
}

static om_kind encode_infer(om_ctx *c)
{
	const om_tensor *x = om_ctx_in(c, 0);
	if (!x || c->nout != 1 || !c->out[0])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "one input, one output");
	encoding e;
	om_kind rc = encoding_of(c, x->dtype, &e);
	if (rc)
		return rc;
	om_set_shape(c->out[0], e.values.dtype, x->rank, x->dims);
	return OM_OK;
}

static om_kind encode_kernel(om_ctx *c)
{
	const om_tensor *x = om_ctx_in(c, 0);
	encoding e;
	om_kind rc = encoding_of(c, x ? x->dtype : 0, &e);
	if (rc)
		return rc;
	const int64_t n = om_tensor_numel(x);
	const om_ml_col xc = {x->dtype, n, x->data};
	void *y = c->out[0]->data;
	if (e.by_index) { /* int64 -> string by position */
		for (int64_t k = 0; !rc && k < n; k++) {
			const int64_t j = ((const int64_t *)x->data)[k];
			rc = j >= 0 && j < e.values.n ? om_ml_put(c, y, k, &e.values, j)
						      : om_ml_put(c, y, k, &e.dflt, 0);
		}
		return rc;
	}
	const bool positions = e.values.data == &iota_none;
	om_ml_table t;
	if ((rc = om_ml_table_make(c, &e.keys, &t)))
		return rc;
	for (int64_t k = 0; !rc && k < n; k++) {
		const int64_t j = om_ml_find(&t, &xc, k);
		if (positions)
			((int64_t *)y)[k] = j >= 0 ? j : e.dflt.dtype == OM_INT64 ?
				*(const int64_t *)e.dflt.data : -1;
		else
			rc = j >= 0 ? om_ml_put(c, y, k, &e.values, j)
				    : om_ml_put(c, y, k, &e.dflt, 0);
	}
	om_ml_table_free(&t);
	return rc;
}

/* ---- signatures (written by hand from ONNX's docs/Changelog-ml.md) ---- */

static const om_sig_attr attrs_LabelEncoder_1[] = {{"classes_strings", OM_ATTR_STRINGS, 0},
	{"default_int64", OM_ATTR_INT, 0}, {"default_string", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
static const om_sig sig_ml_LabelEncoder_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_LabelEncoder_1, NULL};
static const om_sig_attr attrs_LabelEncoder_4[] = {{"default_float", OM_ATTR_FLOAT, 0},
	{"default_int64", OM_ATTR_INT, 0}, {"default_string", OM_ATTR_STRING, 0},
	{"default_tensor", OM_ATTR_TENSOR, 0}, {"keys_floats", OM_ATTR_FLOATS, 0},
	{"keys_int64s", OM_ATTR_INTS, 0}, {"keys_strings", OM_ATTR_STRINGS, 0},
	{"keys_tensor", OM_ATTR_TENSOR, 0}, {"values_floats", OM_ATTR_FLOATS, 0},
	{"values_int64s", OM_ATTR_INTS, 0}, {"values_strings", OM_ATTR_STRINGS, 0},
	{"values_tensor", OM_ATTR_TENSOR, 0}, {NULL, 0, 0}};
static const om_sig sig_ml_LabelEncoder_2_v4 = {4, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_LabelEncoder_4, NULL};
static const om_sig_attr attrs_LabelEncoder_2[] = {{"default_float", OM_ATTR_FLOAT, 0},
	{"default_int64", OM_ATTR_INT, 0}, {"default_string", OM_ATTR_STRING, 0},
	{"keys_floats", OM_ATTR_FLOATS, 0}, {"keys_int64s", OM_ATTR_INTS, 0},
	{"keys_strings", OM_ATTR_STRINGS, 0}, {"values_floats", OM_ATTR_FLOATS, 0},
	{"values_int64s", OM_ATTR_INTS, 0}, {"values_strings", OM_ATTR_STRINGS, 0},
	{NULL, 0, 0}};
static const om_sig sig_ml_LabelEncoder_2 = {2, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_LabelEncoder_2, &sig_ml_LabelEncoder_2_v4};
static const om_sig_attr attrs_CategoryMapper_1[] = {{"cats_int64s", OM_ATTR_INTS, 0},
	{"cats_strings", OM_ATTR_STRINGS, 0}, {"default_int64", OM_ATTR_INT, 0},
	{"default_string", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
static const om_sig sig_ml_CategoryMapper_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_CategoryMapper_1, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"LabelEncoder", "ai.onnx.ml", 1, encode_infer, encode_kernel, ROW,
	 &sig_ml_LabelEncoder_1, OM_OPC_NONE, NULL, 1, NULL},
	{"LabelEncoder", "ai.onnx.ml", 2, encode_infer, encode_kernel, ROW,
	 &sig_ml_LabelEncoder_2, OM_OPC_NONE, NULL, 2, NULL},
	{"CategoryMapper", "ai.onnx.ml", 1, encode_infer, encode_kernel, ROW,
	 &sig_ml_CategoryMapper_1, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_ml_encode = OM_TABLE(rows);
