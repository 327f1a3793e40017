/* ops_view.c — Shape Size Squeeze Unsqueeze Flatten Reshape Identity Dropout (seed §1, §2). */
#include <string.h>

#include "half.h"
#include "index_util.h"
#include "random.h"
#include "shape_util.h"

static om_kind bad(om_ctx *c, const char *msg)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", msg);
}

static om_kind need_input(om_ctx *c)
{
	if (c->nin < 1 || !c->in[0] || c->nout < 1 || !c->out[0])
		return bad(c, "the data input and the output are required");
	return OM_OK;
}

/* ---- Shape, Size (plan constants) -------------------------------------------------------- */

/* [start, end) of the dims that Shape returns (opset 15 attributes; both clamp to [0, rank]) */
static void shape_range(om_ctx *c, int64_t *start, int64_t *end)
{
	const int64_t r = c->in[0]->rank;
	int64_t s = om_attr_int(c->node, "start", 0), e = om_attr_int(c->node, "end", r);
	s = s < 0 ? s + r : s;
	e = e < 0 ? e + r : e;
	s = s < 0 ? 0 : s > r ? r : s;
	e = e < 0 ? 0 : e > r ? r : e;
	*start = s;
	*end = e < s ? s : e;
}

static om_kind shape_infer(om_ctx *c)
{
	om_kind rc = need_input(c);
	if (rc)
		return rc;
	int64_t s, e;
	shape_range(c, &s, &e);
	const int64_t n = e - s;
	om_set_shape(c->out[0], OM_INT64, 1, &n);
	return OM_OK;
}

static om_kind shape_kernel(om_ctx *c)
{
	int64_t s, e;
	shape_range(c, &s, &e);
	if (e > s)
		memcpy(c->out[0]->data, c->in[0]->dims + s, sizeof(int64_t) * (size_t)(e - s));
	return OM_OK;
}

static om_kind size_infer(om_ctx *c)
{
	om_kind rc = need_input(c);
	if (rc)
		return rc;
	if (om_tensor_numel(c->in[0]) < 0)
		return bad(c, "the element count overflows");
	om_set_shape(c->out[0], OM_INT64, 0, NULL);
	return OM_OK;
}

static om_kind size_kernel(om_ctx *c)
{
	const int64_t n = om_tensor_numel(c->in[0]);
	memcpy(c->out[0]->data, &n, sizeof n);
	return OM_OK;
}

/* ---- Squeeze, Unsqueeze ------------------------------------------------------------------ */

static om_kind squeeze_common(om_ctx *c, int input)
{
	om_kind rc = need_input(c);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	int64_t axes[OM_MAX_RANK + 1], n;
	bool given;
	if ((rc = om_arg_ints(c, input, input < 0 ? "axes" : NULL, axes, OM_MAX_RANK, &n, &given)))
		return rc == OM_NEED_VALUE ? om_partial(c->out[0], x->dtype, -1) : rc;
	bool drop[OM_MAX_RANK] = {0};
	if (given && n > 0) { /* an empty list is no list (as ONNX Runtime) */
		int32_t ax[OM_MAX_RANK];
		if ((rc = om_norm_axes(c, axes, n, x->rank, ax)))
			return rc;
		for (int64_t i = 0; i < n; i++) {
			if (x->dims[ax[i]] != 1)
				return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
						"cannot squeeze axis %lld of extent %lld",
						(long long)axes[i], (long long)x->dims[ax[i]]);
			drop[ax[i]] = true;
		}
	} else {
		for (int32_t i = 0; i < x->rank; i++)
			drop[i] = x->dims[i] == 1;
	}
	int64_t dims[OM_MAX_RANK];
	int32_t r = 0;
	for (int32_t i = 0; i < x->rank; i++)
		if (!drop[i])
			dims[r++] = x->dims[i];
	om_set_shape(c->out[0], x->dtype, r, dims);
	return OM_OK;
}

static om_kind squeeze_attr(om_ctx *c) { return squeeze_common(c, -1); }
static om_kind squeeze_input(om_ctx *c) { return squeeze_common(c, 1); }

static om_kind unsqueeze_common(om_ctx *c, int input)
{
	om_kind rc = need_input(c);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	int64_t axes[2 * OM_MAX_RANK + 1], n;
	bool given;
	rc = om_arg_ints(c, input, input < 0 ? "axes" : NULL, axes, 2 * OM_MAX_RANK, &n, &given);
	if (rc == OM_NEED_VALUE && input >= 0 && c->in[input])
		return om_partial(c->out[0], x->dtype,
				  c->in[input]->rank == 1 ? x->rank + c->in[input]->dims[0] : -1);
	if (rc)
		return rc;
	if (!given)
		return bad(c, "axes are required");
	const int64_t r = x->rank + n;
	if (r > OM_MAX_RANK)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
				"output rank %lld exceeds %d", (long long)r, OM_MAX_RANK);
	int32_t ax[OM_MAX_RANK];
	if ((rc = om_norm_axes(c, axes, n, (int32_t)r, ax)))
		return rc;
	bool ins[OM_MAX_RANK] = {0};
	for (int64_t i = 0; i < n; i++)
		ins[ax[i]] = true;
	int64_t dims[OM_MAX_RANK];
	for (int32_t i = 0, j = 0; i < r; i++)
		dims[i] = ins[i] ? 1 : x->dims[j++];
	om_set_shape(c->out[0], x->dtype, (int32_t)r, dims);
	return OM_OK;
}

static om_kind unsqueeze_attr(om_ctx *c) { return unsqueeze_common(c, -1); }
static om_kind unsqueeze_input(om_ctx *c) { return unsqueeze_common(c, 1); }

/* ---- Flatten, Reshape -------------------------------------------------------------------- */

static om_kind flatten_infer(om_ctx *c)
{
	om_kind rc = need_input(c);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	int64_t axis = om_attr_int(c->node, "axis", 1);
	if (axis < -x->rank || axis > x->rank)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"axis %lld is outside [-%d, %d]", (long long)axis, x->rank,
				x->rank);
	if (axis < 0)
		axis += x->rank;
	const int64_t d[2] = {om_shape_numel((int32_t)axis, x->dims),
			      om_shape_numel(x->rank - (int32_t)axis, x->dims + axis)};
	if (d[0] < 0 || d[1] < 0)
		return bad(c, "the element count overflows");
	om_set_shape(c->out[0], x->dtype, 2, d);
	return OM_OK;
}

/* target shape rules: 0 copies the input extent (unless allowzero), one -1 takes the rest */
static om_kind reshape_to(om_ctx *c, const int64_t *shape, int64_t n, bool allowzero)
{
	const om_tensor *x = c->in[0];
	if (n > OM_MAX_RANK)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "output rank %lld exceeds %d",
				(long long)n, OM_MAX_RANK);
	int64_t dims[OM_MAX_RANK], known = 1;
	int32_t unknown = -1;
	bool zero = false;
	for (int32_t i = 0; i < n; i++) {
		int64_t d = shape[i];
		if (d == -1) {
			if (unknown >= 0)
				return bad(c, "more than one -1 in the target shape");
			unknown = i;
			dims[i] = -1;
			continue;
		}
		if (d < -1)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"target extent %lld is negative", (long long)d);
		if (d == 0 && !allowzero) {
			if (i >= x->rank)
				return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
						"target extent 0 at %d copies an axis the input "
						"(rank %d) lacks", i, x->rank);
			d = x->dims[i];
		}
		zero |= shape[i] == 0;
		dims[i] = d;
		if (d == 0)
			known = 0;
		else if (known && known > INT64_MAX / d)
			return bad(c, "the target shape's element count overflows");
		else
			known *= d;
	}
	if (allowzero && zero && unknown >= 0)
		return bad(c, "allowzero with both 0 and -1 in the target shape");
	const int64_t total = om_tensor_numel(x);
	if (unknown >= 0) {
		if (known == 0 || total % known)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"cannot infer the -1 extent: %lld elements into "
					"parts of %lld",
					(long long)total, (long long)known);
		dims[unknown] = total / known;
	} else if (known != total) {
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"cannot reshape %lld elements into %lld", (long long)total,
				(long long)known);
	}
	om_set_shape(c->out[0], x->dtype, (int32_t)n, dims);
	return OM_OK;
}

static om_kind reshape_common(om_ctx *c, int input)
{
	om_kind rc = need_input(c);
	if (rc)
		return rc;
	int64_t shape[64], n;
	bool given;
	rc = om_arg_ints(c, input, input < 0 ? "shape" : NULL, shape, 64, &n, &given);
	if (rc == OM_NEED_VALUE && input >= 0 && c->in[input])
		return om_partial(c->out[0], c->in[0]->dtype,
				  c->in[input]->rank == 1 ? c->in[input]->dims[0] : -1);
	if (rc)
		return rc;
	if (!given)
		return bad(c, "the target shape is required");
	return reshape_to(c, shape, n, om_attr_int(c->node, "allowzero", 0) != 0);
}

static om_kind reshape_attr(om_ctx *c) { return reshape_common(c, -1); }
static om_kind reshape_input(om_ctx *c) { return reshape_common(c, 1); }

/* ---- Identity, Dropout ------------------------------------------------------------------- */

static om_kind identity_infer(om_ctx *c)
{
	om_kind rc = need_input(c);
	if (rc)
		return rc;
	om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	return OM_OK;
}

/* the param of a Dropout row: the mask's type */
enum dropout_mask { DROPOUT_MASK_OF_DATA, DROPOUT_MASK_BOOL /* from Dropout-10 */ };

/* Dropout-12+'s mode: *drop is set when training_mode (input 2) is true and the ratio (input
 * 1, 0.5 when absent) is not 0, the ratio in *ratio; a ratio outside [0, 1) is INVALID_INPUT
 * (as in ONNX Runtime). NEED_VALUE while either value is unknown (plan time). */
static om_kind dropout_mode(om_ctx *c, bool *drop, double *ratio)
{
	*drop = false;
	*ratio = 0.5;
	if (c->nin < 3 || !c->in[2]) /* always before Dropout-12 (its signature) */
		return OM_OK;
	if (om_tensor_numel(c->in[2]) != 1) /* known at plan time, the value or not */
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"training_mode has %lld elements, not 1",
				(long long)om_tensor_numel(c->in[2]));
	const om_tensor *r = c->in[1];
	if (r && om_tensor_numel(r) != 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"ratio has %lld elements, not 1", (long long)om_tensor_numel(r));
	if (r && !om_ix_is_float(r->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "ratio of type %s",
				om_dtype_name(r->dtype));
	int64_t t;
	om_kind rc = om_read_scalar_int(c, c->in[2], &t);
	if (rc || !t)
		return rc;
	if (r && !om_has_value(r))
		return OM_NEED_VALUE;
	if (r)
		*ratio = om_ix_float_at(r, 0);
	if (!(*ratio >= 0 && *ratio < 1))
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"ratio %g is outside [0, 1)", *ratio);
	*drop = *ratio != 0;
	return OM_OK;
}

static om_kind dropout_infer(om_ctx *c)
{
	om_kind rc = identity_infer(c);
	bool drop;
	double ratio;
	if (rc || ((rc = dropout_mode(c, &drop, &ratio)) && rc != OM_NEED_VALUE))
		return rc;
	if (c->nout > 1 && c->out[1]) {
		const om_tensor *x = c->in[0];
		om_set_shape(c->out[1], c->op->param == DROPOUT_MASK_OF_DATA ? x->dtype : OM_BOOL,
			     x->rank, x->dims);
	}
	return OM_OK;
}

/* Dropout-12+: not a view, so its kernel copies the data: numbers only (ONNX's T) */
static om_kind dropout_train_infer(om_ctx *c)
{
	if (c->nin > 0 && c->in[0] && c->in[0]->dtype == OM_STRING)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "Dropout of string data");
	om_kind rc = dropout_infer(c);
	bool drop;
	double ratio;
	if (!rc && !dropout_mode(c, &drop, &ratio) && drop && !om_ix_is_float(c->in[0]->dtype))
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
				"training-mode dropout of %s data", om_dtype_name(c->in[0]->dtype));
	return rc;
}

/* the mask all true (1 in the data type before opset 10) */
static om_kind dropout_keep_all(om_ctx *c)
{
	if (c->nout < 2 || !c->out[1])
		return OM_OK;
	om_tensor *m = c->out[1];
	const int64_t n = om_tensor_numel(m);
	const size_t size = om_dtype_size(m->dtype);
	unsigned char one[8] = {0};
	if (m->dtype == OM_BOOL) {
		one[0] = 1;
	} else if (m->dtype == OM_FLOAT) {
		const float f = 1.0f;
		memcpy(one, &f, 4);
	} else if (m->dtype == OM_DOUBLE) {
		const double f = 1.0;
		memcpy(one, &f, 8);
	} else if (m->dtype == OM_FLOAT16) {
		const uint16_t h = om_float_to_half(1.0f);
		memcpy(one, &h, 2);
	} else {
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "mask of type %s",
				om_dtype_name(m->dtype));
	}
	for (int64_t i = 0; i < n; i++)
		memcpy((unsigned char *)m->data + (size_t)i * size, one, size);
	return OM_OK;
}

/* Dropout-1 and -10: output 0 is the input (a view) */
static om_kind dropout_kernel(om_ctx *c)
{
	return dropout_keep_all(c);
}

/* Dropout-12+: in inference mode (or ratio 0) output 0 is the input, the mask all true; in
 * training mode element i is kept (mask true, x * 1 / (1 - ratio)) where a uniform in [0, 1)
 * from Philox block i under the node's key (random.h: its `seed`, else the session's) is at
 * least the ratio, else dropped (0, mask false) */
static om_kind dropout_train_kernel(om_ctx *c)
{
	bool drop;
	double ratio;
	const om_tensor *x = c->in[0];
	if (x->dtype == OM_STRING)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "Dropout of string data");
	om_kind rc = dropout_mode(c, &drop, &ratio);
	if (rc == OM_NEED_VALUE)
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "ratio or training_mode unknown");
	if (rc)
		return rc;
	om_tensor *y = c->out[0];
	if (!drop) {
		if (y->data != x->data)
			memcpy(y->data, x->data, x->nbytes < y->nbytes ? x->nbytes : y->nbytes);
		return dropout_keep_all(c);
	}
	if (!om_ix_is_float(x->dtype))
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
				"training-mode dropout of %s data", om_dtype_name(x->dtype));
	om_tensor *m = c->nout > 1 ? c->out[1] : NULL;
	const om_philox_key key = om_random_key(c, "seed");
	const double scale = 1.0 / (1.0 - ratio);
	const int64_t n = om_tensor_numel(x);
	for (int64_t i = 0; i < n; i++) {
		uint32_t w[4];
		om_philox4x32(key, (uint64_t)i, 0, w);
		const bool keep = om_philox_unit(w[0], w[1]) >= ratio;
		om_random_store(y, i, keep ? om_ix_float_at(x, i) * scale : 0.0);
		if (m)
			((uint8_t *)m->data)[i] = keep;
	}
	return OM_OK;
}

#define VIEW (OM_OP_VIEW | OM_OP_EXACT | OM_OP_SAME_SHAPE_COPY | OM_OP_SELECT)

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_Shape_1_v15[] = {{"end", OM_ATTR_INT, 0}, {"start", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* Shape-15: data -> shape */
static const om_sig sig_Shape_1_v15 = {15, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x1, 0x0,
	attrs_Shape_1_v15, NULL};
/* Shape-13: data -> shape */
static const om_sig sig_Shape_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x1, 0x0, NULL,
	&sig_Shape_1_v15};
/* Shape-1: data -> shape */
static const om_sig sig_Shape_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x0, 0x0, NULL,
	&sig_Shape_1_v13};
/* Size-13: data -> size */
static const om_sig sig_Size_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x1, 0x0, NULL, NULL};
/* Size-1: data -> size */
static const om_sig sig_Size_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x0, 0x0, NULL,
	&sig_Size_1_v13};
static const om_sig_attr attrs_Squeeze_1[] = {{"axes", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Squeeze-1: data -> squeezed */
static const om_sig sig_Squeeze_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Squeeze_1,
	NULL};
/* Squeeze-13: data [axes] -> squeezed */
static const om_sig sig_Squeeze_13 = {13, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
static const om_sig_attr attrs_Unsqueeze_1[] = {{"axes", OM_ATTR_INTS, 1}, {NULL, 0, 0}};
/* Unsqueeze-1: data -> expanded */
static const om_sig sig_Unsqueeze_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_Unsqueeze_1, NULL};
/* Unsqueeze-13: data axes -> expanded */
static const om_sig sig_Unsqueeze_13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
static const om_sig_attr attrs_Flatten_1_v13[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Flatten-13: input -> output */
static const om_sig sig_Flatten_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_Flatten_1_v13, NULL};
static const om_sig_attr attrs_Flatten_1[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Flatten-1: input -> output */
static const om_sig sig_Flatten_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Flatten_1,
	&sig_Flatten_1_v13};
static const om_sig_attr attrs_Reshape_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0},
	{"shape", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Reshape-1: data -> reshaped */
static const om_sig sig_Reshape_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Reshape_1,
	NULL};
static const om_sig_attr attrs_Reshape_5_v14[] = {{"allowzero", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Reshape-14: data shape -> reshaped */
static const om_sig sig_Reshape_5_v14 = {14, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_Reshape_5_v14, NULL};
/* Reshape-13: data shape -> reshaped */
static const om_sig sig_Reshape_5_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL,
	&sig_Reshape_5_v14};
/* Reshape-5: data shape -> reshaped */
static const om_sig sig_Reshape_5 = {5, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Reshape_5_v13};
/* Identity-13: input -> output */
static const om_sig sig_Identity_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Identity-1: input -> output */
static const om_sig sig_Identity_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Identity_1_v13};
static const om_sig_attr attrs_Dropout_1_v7[] = {{"ratio", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Dropout-7: data -> output [mask] */
static const om_sig sig_Dropout_1_v7 = {7, 1, 1, 1, 2, 0x0, 0x2, 0x1, 0x3, 0x0, 0x0,
	attrs_Dropout_1_v7, NULL};
static const om_sig_attr attrs_Dropout_1_v6[] = {{"is_test", OM_ATTR_INT, 0},
	{"ratio", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Dropout-6: data -> output [mask] */
static const om_sig sig_Dropout_1_v6 = {6, 1, 1, 1, 2, 0x0, 0x2, 0x1, 0x3, 0x0, 0x0,
	attrs_Dropout_1_v6, &sig_Dropout_1_v7};
static const om_sig_attr attrs_Dropout_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0},
	{"is_test", OM_ATTR_INT, 0}, {"ratio", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Dropout-1: data -> output [mask] */
static const om_sig sig_Dropout_1 = {1, 1, 1, 1, 2, 0x0, 0x2, 0x1, 0x3, 0x0, 0x0, attrs_Dropout_1,
	&sig_Dropout_1_v6};
static const om_sig_attr attrs_Dropout_12_v22[] = {{"seed", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Dropout-22: data [ratio] [training_mode] -> output [mask] */
static const om_sig sig_Dropout_12_v22 = {22, 1, 3, 1, 2, 0x6, 0x2, 0x3, 0x1, 0x3, 0x1,
	attrs_Dropout_12_v22, NULL};
static const om_sig_attr attrs_Dropout_12_v13[] = {{"seed", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Dropout-13: data [ratio] [training_mode] -> output [mask] */
static const om_sig sig_Dropout_12_v13 = {13, 1, 3, 1, 2, 0x6, 0x2, 0x3, 0x1, 0x1, 0x1,
	attrs_Dropout_12_v13, &sig_Dropout_12_v22};
static const om_sig_attr attrs_Dropout_12[] = {{"seed", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Dropout-12: data [ratio] [training_mode] -> output [mask] */
static const om_sig sig_Dropout_12 = {12, 1, 3, 1, 2, 0x6, 0x2, 0x3, 0x1, 0x0, 0x0,
	attrs_Dropout_12, &sig_Dropout_12_v13};
static const om_sig_attr attrs_Dropout_10[] = {{"ratio", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Dropout-10: data -> output [mask] */
static const om_sig sig_Dropout_10 = {10, 1, 1, 1, 2, 0x0, 0x2, 0x1, 0x1, 0x0, 0x0,
	attrs_Dropout_10, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"Shape", "", 1, shape_infer, shape_kernel, OM_OP_EXACT | OM_OP_SHAPE_OF, &sig_Shape_1,
	 OM_OPC_SHAPE, NULL, 0, NULL},
	{"Size", "", 1, size_infer, size_kernel, OM_OP_EXACT | OM_OP_SHAPE_OF, &sig_Size_1,
	 OM_OPC_SIZE, NULL, 0, NULL},
	{"Squeeze", "", 1, squeeze_attr, NULL, VIEW, &sig_Squeeze_1, OM_OPC_SQUEEZE, NULL, 0, NULL},
	{"Squeeze", "", 13, squeeze_input, NULL, VIEW, &sig_Squeeze_13, OM_OPC_SQUEEZE, NULL, 0,
	 NULL},
	{"Unsqueeze", "", 1, unsqueeze_attr, NULL, VIEW, &sig_Unsqueeze_1, OM_OPC_UNSQUEEZE, NULL,
	 0, NULL},
	{"Unsqueeze", "", 13, unsqueeze_input, NULL, VIEW, &sig_Unsqueeze_13, OM_OPC_UNSQUEEZE,
	 NULL, 0, NULL},
	{"Flatten", "", 1, flatten_infer, NULL, VIEW, &sig_Flatten_1, OM_OPC_NONE, NULL, 0, NULL},
	{"Reshape", "", 1, reshape_attr, NULL, VIEW, &sig_Reshape_1, OM_OPC_RESHAPE, NULL, 0, NULL},
	{"Reshape", "", 5, reshape_input, NULL, VIEW, &sig_Reshape_5, OM_OPC_RESHAPE, NULL, 0,
	 NULL},
	{"Identity", "", 1, identity_infer, NULL, VIEW | OM_OP_PASSTHROUGH, &sig_Identity_1,
	 OM_OPC_NONE, NULL, 0, NULL},
	/* a view in inference; in training mode its output is not its input */
	{"Dropout", "", 1, dropout_infer, dropout_kernel, OM_OP_VIEW | OM_OP_EXACT, &sig_Dropout_1,
	 OM_OPC_DROPOUT, NULL, DROPOUT_MASK_OF_DATA, NULL},
	{"Dropout", "", 10, dropout_infer, dropout_kernel, OM_OP_VIEW | OM_OP_EXACT,
	 &sig_Dropout_10, OM_OPC_DROPOUT, NULL, DROPOUT_MASK_BOOL, NULL},
	/* training_mode: not a view (a dropped element is written), drawn (never folded) */
	{"Dropout", "", 12, dropout_train_infer, dropout_train_kernel, OM_OP_RANDOM | OM_OP_EXACT,
	 &sig_Dropout_12, OM_OPC_DROPOUT, NULL, DROPOUT_MASK_BOOL, NULL},
};

const om_op_table om_ops_view = OM_TABLE(rows);
