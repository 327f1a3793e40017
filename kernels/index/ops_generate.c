/* ops_generate.c — Constant, ConstantOfShape, Range (seed §2): operators that make a tensor
 * from attributes or scalar inputs. */
#include <math.h>
#include <string.h>

#include "half.h"
#include "index_util.h"
#include "move.h"
#include "subbyte.h"

/* Range's element start + i*delta must not be contracted into an FMA (the bits would depend
 * on the instruction set): contraction off for this file, even under -ffp-contract=fast with
 * GCC, and the product and the sum are separate statements. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

/* ---- Constant ------------------------------------------------------------------------------ */

static const char *const constant_attrs[] = {"value", "sparse_value", "value_float",
					     "value_floats", "value_int", "value_ints",
					     "value_string", "value_strings"};

/* The one value attribute of a Constant node; errors when none or several are set. */
static om_kind constant_attr(om_ctx *c, const om_attr **out)
{
	const om_attr *found = NULL;
	for (size_t i = 0; i < sizeof constant_attrs / sizeof constant_attrs[0]; i++) {
		const om_attr *a = om_node_attr(c->node, constant_attrs[i]);
		if (!a)
			continue;
		if (found)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"both '%s' and '%s' are set", found->name, a->name);
		found = a;
	}
	if (!found)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "no value attribute");
	if (!strcmp(found->name, "sparse_value"))
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "sparse_value");
	static const struct {
		const char *name;
		int32_t type;
	} want[] = {{"value", OM_ATTR_TENSOR},         {"value_float", OM_ATTR_FLOAT},
		    {"value_floats", OM_ATTR_FLOATS},  {"value_int", OM_ATTR_INT},
		    {"value_ints", OM_ATTR_INTS},      {"value_string", OM_ATTR_STRING},
		    {"value_strings", OM_ATTR_STRINGS}};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!strcmp(found->name, want[i].name) &&
		    (found->type != want[i].type || (want[i].type == OM_ATTR_TENSOR && !found->t)))
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"attribute '%s' has the wrong type", found->name);
	*out = found;
	return OM_OK;
}

static om_kind constant_infer(om_ctx *c)
{
	const om_attr *a;
	om_kind rc = constant_attr(c, &a);
	if (rc)
		return rc;
	int64_t n = a->n;
	switch (a->type) {
	case OM_ATTR_TENSOR:
		if (a->t->rank < 0 || a->t->rank > OM_MAX_RANK || om_tensor_numel(a->t) < 0)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "bad value tensor");
		om_set_shape(c->out[0], a->t->dtype, a->t->rank, a->t->dims);
		return OM_OK;
	case OM_ATTR_FLOAT: om_set_shape(c->out[0], OM_FLOAT, 0, NULL); return OM_OK;
	case OM_ATTR_INT: om_set_shape(c->out[0], OM_INT64, 0, NULL); return OM_OK;
	case OM_ATTR_STRING: om_set_shape(c->out[0], OM_STRING, 0, NULL); return OM_OK;
	case OM_ATTR_FLOATS: om_set_shape(c->out[0], OM_FLOAT, 1, &n); return OM_OK;
	case OM_ATTR_INTS: om_set_shape(c->out[0], OM_INT64, 1, &n); return OM_OK;
	default: om_set_shape(c->out[0], OM_STRING, 1, &n); return OM_OK;
	}
}

static om_kind constant_kernel(om_ctx *c)
{
	const om_attr *a;
	om_kind rc = constant_attr(c, &a);
	if (rc)
		return rc;
	om_tensor *y = c->out[0];
	om_str *s = y->data;
	switch (a->type) {
	case OM_ATTR_TENSOR: {
		if (a->t->dtype != OM_STRING) {
			if (y->nbytes && a->t->nbytes >= y->nbytes)
				memcpy(y->data, a->t->data, y->nbytes);
			return OM_OK;
		}
		om_move_n(y->data, a->t->data, sizeof(om_str), om_tensor_numel(y));
		break;
	}
	case OM_ATTR_FLOAT: memcpy(y->data, &a->f, sizeof(float)); return OM_OK;
	case OM_ATTR_INT: memcpy(y->data, &a->i, sizeof(int64_t)); return OM_OK;
	case OM_ATTR_FLOATS: om_move_n(y->data, a->floats, sizeof(float), a->n); return OM_OK;
	case OM_ATTR_INTS: om_move_n(y->data, a->ints, sizeof(int64_t), a->n); return OM_OK;
	case OM_ATTR_STRING: s[0] = a->s; break;
	default: om_move_n(y->data, a->strings, sizeof(om_str), a->n); break;
	}
	return om_ix_own_strings(c, y);
}

/* ---- ConstantOfShape ---------------------------------------------------------------------- */

static om_kind cos_value(om_ctx *c, const om_tensor **out)
{
	const om_attr *a = om_node_attr(c->node, "value");
	*out = NULL;
	if (!a)
		return OM_OK;
	const int bits = a->type == OM_ATTR_TENSOR && a->t ? om_dtype_bits(a->t->dtype) : 0;
	if (!bits || om_tensor_numel(a->t) != 1 || a->t->nbytes < (size_t)(bits + 7) / 8)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"'value' must be a one-element tensor");
	*out = a->t;
	return OM_OK;
}

static om_kind cos_infer(om_ctx *c)
{
	const om_tensor *v;
	om_kind rc = cos_value(c, &v);
	if (rc)
		return rc;
	if ((rc = om_ix_check_index_type(c, c->in[0], "the shape input")))
		return rc;
	if (c->in[0]->rank > 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "the shape input is not 1-D");
	int64_t dims[OM_MAX_RANK], rank;
	if ((rc = om_read_ints(c, c->in[0], dims, OM_MAX_RANK, &rank)) == OM_NEED_VALUE) {
		/* partial (op.h): the value's type; the rank is the shape's length */
		c->out[0]->dtype = v ? v->dtype : OM_FLOAT;
		int64_t k = c->in[0]->rank == 1 ? c->in[0]->dims[0] : c->in[0]->rank == 0;
		if (k >= 0 && k <= OM_MAX_RANK) {
			c->out[0]->rank = (int32_t)k;
			for (int64_t i = 0; i < k; i++)
				c->out[0]->dims[i] = -1;
		}
	}
	if (rc)
		return rc;
	for (int64_t i = 0; i < rank; i++)
		if (dims[i] < 0)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"negative extent %lld at axis %lld", (long long)dims[i],
					(long long)i);
	return om_ix_set_shape(c, c->out[0], v ? v->dtype : OM_FLOAT, (int32_t)rank, dims);
}

static om_kind cos_kernel(om_ctx *c)
{
	const om_tensor *v;
	om_kind rc = cos_value(c, &v);
	if (rc)
		return rc;
	om_tensor *y = c->out[0];
	if (!v || om_dtype_size(v->dtype) == 0) /* default float 0; the padding of sub-bytes */
		memset(y->data, 0, y->nbytes);
	if (!v)
		return OM_OK;
	int64_t n = om_tensor_numel(y);
	size_t size = om_dtype_size(v->dtype);
	if (size == 0) { /* sub-byte: 8 / bits elements per byte, lowest bits first */
		const int bits = om_dtype_bits(v->dtype);
		const uint8_t e = om_sub_get(v->data, 0, bits);
		for (int64_t i = 0; i < n; i++)
			om_sub_set(y->data, i, bits, e);
		return OM_OK;
	}
	unsigned char *d = y->data;
	for (int64_t i = 0; i < n; i++)
		om_move1(d + (size_t)i * size, v->data, size);
	return om_ix_own_strings(c, y);
}

/* ---- Range ---------------------------------------------------------------------------------- */

static bool range_type(int32_t t)
{
	return t == OM_FLOAT || t == OM_DOUBLE || t == OM_INT16 || t == OM_INT32 ||
	       t == OM_INT64 || t == OM_FLOAT16 || t == OM_BFLOAT16;
}

/* float16 and bfloat16 compute in float32 (seed §2) */
static float range_f32(const om_tensor *t)
{
	return (float)om_ix_float_at(t, 0);
}

static om_kind range_count(om_ctx *c, int64_t *count)
{
	const om_tensor *s = c->in[0], *l = c->in[1], *d = c->in[2];
	if (!s || !l || !d)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "needs three inputs");
	if (!range_type(s->dtype) || l->dtype != s->dtype || d->dtype != s->dtype)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"start, limit and delta must share a type of float, double, int16, "
				"int32, int64, float16, bfloat16");
	if (om_tensor_numel(s) != 1 || om_tensor_numel(l) != 1 || om_tensor_numel(d) != 1 ||
	    s->rank > 1 || l->rank > 1 || d->rank > 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"start, limit and delta must be scalars");
	if (!om_has_value(s) || !om_has_value(l) || !om_has_value(d))
		return OM_NEED_VALUE;
	double q;
	if (om_ix_is_int(s->dtype)) {
		int64_t a = om_ix_int_at(s, 0), b = om_ix_int_at(l, 0), e = om_ix_int_at(d, 0);
		if (e == 0)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "delta is 0");
		int64_t diff;
		q = __builtin_sub_overflow(b, a, &diff) ? ((double)b - (double)a) / (double)e
							: (double)diff / (double)e;
	} else {
		/* the difference and the quotient in double from the element values (as ONNX
		 * Runtime: Range(8.733858f, 41.733856f, 3.3f) has 10 elements, where a float32
		 * difference would give 11) */
		double a = om_ix_float_at(s, 0), e = om_ix_float_at(d, 0);
		if (e == 0)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "delta is 0");
		q = (om_ix_float_at(l, 0) - a) / e;
	}
	q = ceil(q);
	if (!isfinite(q))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "the count is not finite");
	if (q > 4611686018427387904.0) /* 2^62 */
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "the count is too large");
	*count = q > 0 ? (int64_t)q : 0;
	return OM_OK;
}

static om_kind range_infer(om_ctx *c)
{
	int64_t n = -1;
	om_kind rc = range_count(c, &n);
	if (rc == OM_NEED_VALUE) /* partial (op.h): start's type, one dim of unknown length */
		om_set_shape(c->out[0], c->in[0]->dtype, 1, &n);
	if (rc)
		return rc;
	return om_ix_set_shape(c, c->out[0], c->in[0]->dtype, 1, &n);
}

/* element i = start + i * delta in the element type (integers wrap as two's complement) */
#define RANGE_INT(T, UT)                                                                        \
	do {                                                                                    \
		UT a = (UT)*(const T *)c->in[0]->data, e = (UT)*(const T *)c->in[2]->data;    \
		for (int64_t i = 0; i < n; i++)                                                 \
			((T *)y->data)[i] = (T)(UT)(a + (UT)i * e);                             \
	} while (0)

static om_kind range_kernel(om_ctx *c)
{
	om_tensor *y = c->out[0];
	int64_t n = y->dims[0];
	switch (y->dtype) {
	case OM_INT16: RANGE_INT(int16_t, uint32_t); break;
	case OM_INT32: RANGE_INT(int32_t, uint32_t); break;
	case OM_INT64: RANGE_INT(int64_t, uint64_t); break;
	case OM_DOUBLE: {
		double a = om_ix_float_at(c->in[0], 0), e = om_ix_float_at(c->in[2], 0);
		for (int64_t i = 0; i < n; i++) {
			const double step = (double)i * e;
			((double *)y->data)[i] = a + step;
		}
		break;
	}
	default: {
		float a = range_f32(c->in[0]), e = range_f32(c->in[2]);
		for (int64_t i = 0; i < n; i++) {
			const float step = (float)i * e;
			const float v = a + step;
			uint16_t *h = y->data;
			if (y->dtype == OM_FLOAT)
				((float *)y->data)[i] = v;
			else if (y->dtype == OM_FLOAT16)
				h[i] = om_float_to_half(v);
			else
				h[i] = om_float_to_bf16(v);
		}
		break;
	}
	}
	return OM_OK;
}

/* ---- table ---------------------------------------------------------------------------------- */

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_Constant_1_v13[] = {{"sparse_value", OM_ATTR_SPARSE_TENSOR, 0},
	{"value", OM_ATTR_TENSOR, 0}, {"value_float", OM_ATTR_FLOAT, 0},
	{"value_floats", OM_ATTR_FLOATS, 0}, {"value_int", OM_ATTR_INT, 0},
	{"value_ints", OM_ATTR_INTS, 0}, {"value_string", OM_ATTR_STRING, 0},
	{"value_strings", OM_ATTR_STRINGS, 0}, {NULL, 0, 0}};
/* Constant-13: - -> output */
static const om_sig sig_Constant_1_v13 = {13, 0, 0, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x1,
	attrs_Constant_1_v13, NULL};
static const om_sig_attr attrs_Constant_1_v12[] = {{"sparse_value", OM_ATTR_SPARSE_TENSOR, 0},
	{"value", OM_ATTR_TENSOR, 0}, {"value_float", OM_ATTR_FLOAT, 0},
	{"value_floats", OM_ATTR_FLOATS, 0}, {"value_int", OM_ATTR_INT, 0},
	{"value_ints", OM_ATTR_INTS, 0}, {"value_string", OM_ATTR_STRING, 0},
	{"value_strings", OM_ATTR_STRINGS, 0}, {NULL, 0, 0}};
/* Constant-12: - -> output */
static const om_sig sig_Constant_1_v12 = {12, 0, 0, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x0,
	attrs_Constant_1_v12, &sig_Constant_1_v13};
static const om_sig_attr attrs_Constant_1_v11[] = {{"sparse_value", OM_ATTR_SPARSE_TENSOR, 0},
	{"value", OM_ATTR_TENSOR, 0}, {NULL, 0, 0}};
/* Constant-11: - -> output */
static const om_sig sig_Constant_1_v11 = {11, 0, 0, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x0,
	attrs_Constant_1_v11, &sig_Constant_1_v12};
static const om_sig_attr attrs_Constant_1[] = {{"value", OM_ATTR_TENSOR, 1}, {NULL, 0, 0}};
/* Constant-1: - -> output */
static const om_sig sig_Constant_1 = {1, 0, 0, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x0, attrs_Constant_1,
	&sig_Constant_1_v11};
static const om_sig_attr attrs_ConstantOfShape_9_v20[] = {{"value", OM_ATTR_TENSOR, 0},
	{NULL, 0, 0}};
/* ConstantOfShape-20: input -> output */
static const om_sig sig_ConstantOfShape_9_v20 = {20, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x1,
	attrs_ConstantOfShape_9_v20, NULL};
static const om_sig_attr attrs_ConstantOfShape_9[] = {{"value", OM_ATTR_TENSOR, 0}, {NULL, 0, 0}};
/* ConstantOfShape-9: input -> output */
static const om_sig sig_ConstantOfShape_9 = {9, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x0,
	attrs_ConstantOfShape_9, &sig_ConstantOfShape_9_v20};
static const om_sig_attr attrs_Range_11_v27[] = {{"stash_type", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Range-27: start limit delta -> output */
static const om_sig sig_Range_11_v27 = {27, 3, 3, 1, 1, 0x0, 0x0, 0x7, 0x1, 0x7, 0x1,
	attrs_Range_11_v27, NULL};
/* Range-11: start limit delta -> output */
static const om_sig sig_Range_11 = {11, 3, 3, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL,
	&sig_Range_11_v27};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"Constant", "", 1, constant_infer, constant_kernel, OM_OP_EXACT, &sig_Constant_1,
	 OM_OPC_CONSTANT, NULL, 0, NULL},
	{"ConstantOfShape", "", 9, cos_infer, cos_kernel, OM_OP_EXACT, &sig_ConstantOfShape_9,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"Range", "", 11, range_infer, range_kernel, OM_OP_EXACT, &sig_Range_11, OM_OPC_NONE, NULL,
	 0, NULL},
};

const om_op_table om_ops_generate = OM_TABLE(rows);
