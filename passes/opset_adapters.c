/*
 * opset_adapters.c — what om_opset_convert does to the ops whose signature or meaning changed
 * between opsets (ONNX's version converter's adapters, onnx/version_converter/adapters/).
 *
 * An adapter belongs to an op: om_adapter_of finds it by asking the registry for the adapter
 * op's row at the source opset and comparing rows, so the op's versions stay in its rows. An
 * adapter reads what changed from the two rows and their signatures (which form an
 * attribute or input has at each end) and rewrites the node; where the rows do not carry a
 * fact (a new value of a string attribute), the adapter says where ONNX's Changelog puts it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "half.h"
#include "opset_convert.h"

/* ---- constants read back -------------------------------------------------------------- */

static bool t_int(const om_tensor *t, int64_t i, int64_t *out)
{
	if (t->dtype == OM_INT64)
		*out = ((const int64_t *)t->data)[i];
	else if (t->dtype == OM_INT32)
		*out = ((const int32_t *)t->data)[i];
	else
		return false;
	return true;
}

static bool t_float(const om_tensor *t, double *out)
{
	if (om_tensor_numel(t) != 1)
		return false;
	if (t->dtype == OM_FLOAT)
		*out = *(const float *)t->data;
	else if (t->dtype == OM_DOUBLE)
		*out = *(const double *)t->data;
	else if (t->dtype == OM_FLOAT16)
		*out = om_half_to_float(*(const uint16_t *)t->data);
	else
		return false;
	return true;
}


static bool attr_is(const om_node *n, const char *name, const char *dflt, const char *s)
{
	return !strcmp(om_attr_string(n, name, dflt), s);
}

/* ---- an attribute that became an input (or back) ---------------------------------------- */

static om_kind attr_to_input(om_adapt *a, const char *name, int32_t slot, enum om_attr_form f)
{
	om_node *n = a->n;
	const om_attr *at = om_node_attr(n, name);
	if (!at)
		return OM_OK; /* absent attribute, omitted input: the same default */
	char hint[160];
	snprintf(hint, sizeof hint, "%.120s_%s", n->name && n->name[0] ? n->name : n->op, name);
	om_value *v = NULL;
	if (f == OM_AF_INTS && at->type == OM_ATTR_INTS)
		v = om_adapt_int64s(a, hint, at->ints, at->n, 1);
	else if (f == OM_AF_INT1 && at->type == OM_ATTR_INT)
		v = om_adapt_int64s(a, hint, &at->i, 1, 1);
	else if ((f == OM_AF_SCALAR_OF_X || f == OM_AF_FLOAT) && at->type == OM_ATTR_FLOAT) {
		const om_value *x = n->nin ? n->in[0] : NULL;
		const int32_t t = f == OM_AF_FLOAT ? OM_FLOAT : om_adapt_elem(a, x);
		if (t != OM_FLOAT && t != OM_DOUBLE && t != OM_FLOAT16)
			return om_adapt_fail(a, "the input's element type is not known (a "
						"float type is needed to write the attribute as an "
						"input)");
		v = om_adapt_float(a, hint, t, at->f, 1);
	} else {
		return om_adapt_fail(a, "an attribute of an unexpected type");
	}
	if (!v)
		return om_error(a->c->st, OM_ERR_NOMEM, n, "out of memory for an input");
	om_adapt_drop_attr(n, name);
	return om_adapt_set_input(a, slot, v);
}

static om_kind input_to_attr(om_adapt *a, const char *name, int32_t slot, enum om_attr_form f)
{
	om_node *n = a->n;
	if (slot >= n->nin || !n->in[slot])
		return OM_OK;
	const om_tensor *t = om_adapt_const(a->g, n->in[slot]);
	char why[200];
	if (!t) {
		snprintf(why, sizeof why, "input %d (%.60s) is not a constant, and the target "
			 "takes it as attribute %.40s", (int)slot, n->in[slot]->name, name);
		return om_adapt_fail(a, why);
	}
	const int64_t cnt = om_tensor_numel(t);
	om_kind rc = OM_OK;
	if (f == OM_AF_INTS) {
		if (t->rank > 1 || cnt < 0 || cnt > OM_MAX_RANK * 2 + 64)
			return om_adapt_fail(a, "a list input that does not fit an attribute");
		int64_t v[OM_MAX_RANK * 2 + 64];
		for (int64_t i = 0; i < cnt; i++)
			if (!t_int(t, i, &v[i]))
				return om_adapt_fail(a, "a list input that is not int32 or int64");
		if (cnt > 0) /* empty: the attribute's absence means the same */
			rc = om_adapt_set_ints(a, n, name, v, cnt);
	} else if (f == OM_AF_INT1) {
		int64_t v;
		if (cnt != 1 || !t_int(t, 0, &v))
			return om_adapt_fail(a, "an input that is not one integer");
		rc = om_adapt_set_int(a, n, name, v);
	} else {
		double x;
		if (!t_float(t, &x))
			return om_adapt_fail(a, "an input that is not one float");
		om_attr *at = om_node_set_attr(n, name, OM_ATTR_FLOAT);
		if (!at)
			return om_error(a->c->st, OM_ERR_NOMEM, n, "out of memory");
		at->f = (float)x;
	}
	if (rc)
		return rc;
	n->in[slot] = NULL;
	om_adapt_trim_inputs(n);
	return OM_OK;
}

om_kind om_adapt_attr_input(om_adapt *a, const char *name, int32_t slot, enum om_attr_form f)
{
	const bool was = om_sig_knows(a->sfrom, name), is = om_sig_knows(a->sto, name);
	if (was == is)
		return OM_OK;
	return was ? attr_to_input(a, name, slot, f) : input_to_attr(a, name, slot, f);
}

/* ---- Squeeze, Unsqueeze (13), ReduceSum (13), the other Reduce ops (18): axes ------------ */

static om_kind ad_axes(om_adapt *a)
{
	om_node *n = a->n;
	if (om_attr_int(n, "noop_with_empty_axes", 0) &&
	    !om_sig_knows(a->sto, "noop_with_empty_axes")) {
		const om_tensor *t = n->nin > 1 && n->in[1] ? om_adapt_const(a->g, n->in[1]) : NULL;
		if (!(n->nin > 1 && n->in[1]) || !t || om_tensor_numel(t) == 0)
			return om_adapt_fail(a, "noop_with_empty_axes with axes that may be empty: "
						"an identity the target's op cannot say");
		om_adapt_drop_attr(n, "noop_with_empty_axes");
	}
	return om_adapt_attr_input(a, "axes", 1, OM_AF_INTS);
}

/* ---- Split: split an input from 13, num_outputs from 18 --------------------------------- */

static om_kind ad_split(om_adapt *a)
{
	om_node *n = a->n;
	const bool had_num = om_sig_knows(a->sfrom, "num_outputs");
	const bool has_num = om_sig_knows(a->sto, "num_outputs");
	const bool sized = om_node_attr(n, "split") || (n->nin > 1 && n->in[1]);
	if (had_num && !has_num && !sized) {
		/* before 18 a Split without sizes makes equal parts: sizes are written unless
		 * the dim is a multiple of the output count (18 makes the last part smaller) */
		const om_value *x = n->nin ? n->in[0] : NULL;
		const int32_t r = om_adapt_rank(a, x);
		int64_t axis = om_attr_int(n, "axis", 0);
		axis = axis < 0 ? axis + r : axis;
		const int64_t dim = r > 0 && axis >= 0 && axis < r
					    ? om_adapt_dim(a, x, (int32_t)axis) : -1;
		const int64_t parts = n->nout;
		if (dim < 0 || dim > INT64_MAX / 2 || parts < 1 || parts > 4096)
			return om_adapt_fail(a, "the split dim is not known, so the target's equal "
						"split cannot be checked against num_outputs");
		om_adapt_drop_attr(n, "num_outputs");
		if (dim % parts) {
			const int64_t chunk = (dim + parts - 1) / parts;
			if (chunk * (parts - 1) >= dim)
				return om_adapt_fail(a, "num_outputs leaves an empty last part");
			int64_t sizes[4096];
			for (int64_t i = 0; i < parts; i++)
				sizes[i] = i < parts - 1 ? chunk : dim - chunk * (parts - 1);
			if (om_sig_knows(a->sto, "split"))
				return om_adapt_set_ints(a, n, "split", sizes, parts);
			om_value *v = om_adapt_int64s(a, "split", sizes, parts, 1);
			return v ? om_adapt_set_input(a, 1, v)
				 : om_error(a->c->st, OM_ERR_NOMEM, n, "out of memory");
		}
	} else if (!had_num && has_num && !sized) {
		om_kind rc = om_adapt_set_int(a, n, "num_outputs", n->nout);
		if (rc)
			return rc;
	}
	return om_adapt_attr_input(a, "split", 1, OM_AF_INTS);
}

#define NOMEM(a) om_error((a)->c->st, OM_ERR_NOMEM, (a)->n, "out of memory")

/* ---- Softmax, LogSoftmax, Hardmax: before 13 the input is coerced to 2-D at axis -------- */

/* n reads `in` instead of its input 0 and writes a fresh value, which `op` (a node made
 * here, reading it and `extra`) turns into n's output. */
static om_node *wrap_output(om_adapt *a, const char *op, om_value *extra)
{
	om_node *n = a->n;
	om_value *y = n->out[0];
	om_value *mid = om_graph_fresh_value(a->g, y->name);
	if (!mid)
		return NULL;
	om_value *in[2] = {mid, extra};
	om_node *k = om_adapt_node(a, op, extra ? 2 : 1, in, 1);
	if (!k)
		return NULL;
	om_node_set_output(n, 0, mid);
	om_node_set_output(k, 0, y);
	return k;
}

static om_kind ad_softmax(om_adapt *a)
{
	om_node *n = a->n;
	if (!a->to || a->from == a->to || n->nin < 1 || !n->in[0] || n->nout < 1 || !n->out[0])
		return OM_OK;
	const bool up = a->to->since > a->from->since; /* from the 2-D row to the one-axis row */
	om_value *x = n->in[0];
	const int32_t r = om_adapt_rank(a, x);
	if (up) {
		const int64_t axis = om_attr_int(n, "axis", 1);
		const int64_t ax = axis < 0 ? axis + r : axis;
		if (r > 0 && ax == r - 1)
			return om_adapt_set_int(a, n, "axis", -1);
		/* Flatten at axis, the op along axis 1, Reshape back to x's shape */
		om_node *shape = om_adapt_node(a, "Shape", 1, &x, 1);
		om_node *flat = om_adapt_node(a, "Flatten", 1, &x, 1);
		if (!shape || !flat || om_adapt_set_int(a, flat, "axis", axis))
			return NOMEM(a);
		n->in[0] = flat->out[0];
		om_node *back = wrap_output(a, "Reshape", shape->out[0]);
		if (!back)
			return NOMEM(a);
		/* a 0 in x's shape is an extent, not "copy": allowzero where Reshape has it (14);
		 * at 13 a 0 at dim 2 or later of x would be read as a copy (docs/passes.md) */
		const om_op *rs = om_op_find(n->domain, "Reshape", a->dst);
		if (rs && om_sig_knows(om_op_sig_at(rs, a->dst), "allowzero") &&
		    om_adapt_set_int(a, back, "allowzero", 1))
			return NOMEM(a);
		return om_adapt_set_int(a, n, "axis", 1);
	}
	const int64_t axis = om_attr_int(n, "axis", -1);
	if (r < 0 && axis == -1 && a->dst >= 11) /* negative axes from Softmax-11 */
		return om_adapt_set_int(a, n, "axis", -1);
	if (r < 1 || r > OM_MAX_RANK)
		return om_adapt_fail(a, "the input's rank is not known, and the target coerces it "
					"to 2-D");
	const int64_t ax = axis < 0 ? axis + r : axis;
	if (ax < 0 || ax >= r)
		return om_adapt_fail(a, "axis out of range");
	if (ax == r - 1)
		return om_adapt_set_int(a, n, "axis", r - 1);
	/* the axis moved last by a Transpose, and back */
	int64_t perm[OM_MAX_RANK], back[OM_MAX_RANK];
	for (int32_t i = 0, k = 0; i < r; i++)
		if (i != ax)
			perm[k++] = i;
	perm[r - 1] = ax;
	for (int32_t i = 0; i < r; i++)
		back[perm[i]] = i;
	om_node *t1 = om_adapt_node(a, "Transpose", 1, &x, 1);
	if (!t1 || om_adapt_set_ints(a, t1, "perm", perm, r))
		return NOMEM(a);
	n->in[0] = t1->out[0];
	om_node *t2 = wrap_output(a, "Transpose", NULL);
	if (!t2 || om_adapt_set_ints(a, t2, "perm", back, r))
		return NOMEM(a);
	return om_adapt_set_int(a, n, "axis", r - 1);
}

/* ---- Resize: roi from 11 (required before 13), attributes of 18, a mode of 19 ---------- */

static om_kind empty_input(om_adapt *a, int32_t slot)
{
	if (slot < a->n->nin && a->n->in[slot])
		return OM_OK;
	om_value *v = om_adapt_float(a, "empty", OM_FLOAT, 0, 0);
	return v ? om_adapt_set_input(a, slot, v)
		 : om_error(a->c->st, OM_ERR_NOMEM, a->n, "out of memory");
}

static om_kind ad_resize(om_adapt *a)
{
	om_node *n = a->n;
	if (!a->sto || !a->sfrom)
		return OM_OK;
	const bool had_roi = a->sfrom->max_in > 2, has_roi = a->sto->max_in > 2;
	om_kind rc = OM_OK;
	if (!had_roi && has_roi) {
		/* Resize-10 (X, scales) sampled at the input's corners (asymmetric), rounding
		 * down for nearest: ONNX's Resize_10_11 adapter */
		om_value *scales = n->nin > 1 ? n->in[1] : NULL;
		if ((rc = om_adapt_set_input(a, 2, scales)))
			return rc;
		n->in[1] = NULL;
		if ((rc = om_adapt_set_string(a, n, "coordinate_transformation_mode",
					      "asymmetric")))
			return rc;
		if (attr_is(n, "mode", "nearest", "nearest") &&
		    (rc = om_adapt_set_string(a, n, "nearest_mode", "floor")))
			return rc;
	} else if (had_roi && !has_roi) {
		const bool nearest = attr_is(n, "mode", "nearest", "nearest");
		if (!attr_is(n, "coordinate_transformation_mode", "half_pixel", "asymmetric") ||
		    (nearest && !attr_is(n, "nearest_mode", "round_prefer_floor", "floor")) ||
		    attr_is(n, "mode", "nearest", "cubic") || om_attr_int(n, "exclude_outside", 0))
			return om_adapt_fail(a, "Resize-10 samples at the corners (asymmetric, "
						"nearest rounds down), nearest or linear only");
		if (n->nin > 3 && n->in[3])
			return om_adapt_fail(a, "Resize-10 takes scales, not sizes");
		if (n->nin < 3 || !n->in[2])
			return om_adapt_fail(a, "no scales");
		n->in[1] = n->in[2];
		n->nin = 2;
		static const char *const gone[] = {"coordinate_transformation_mode", "nearest_mode",
			"cubic_coeff_a", "exclude_outside", "extrapolation_value"};
		for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
			om_adapt_drop_attr(n, gone[i]);
	}
	/* inputs the target requires that the node omits: empty roi or scales */
	for (int32_t s = 1; has_roi && s < a->sto->min_in; s++)
		if ((rc = empty_input(a, s)))
			return rc;
	/* half_pixel_symmetric came with Resize-19 */
	if (a->dst < 19 &&
	    attr_is(n, "coordinate_transformation_mode", "half_pixel", "half_pixel_symmetric"))
		return om_adapt_fail(a, "coordinate_transformation_mode half_pixel_symmetric");
	return OM_OK;
}

/* ---- Upsample: deprecated where Resize exists ------------------------------------------- */

static om_kind ad_upsample(om_adapt *a)
{
	om_node *n = a->n;
	const om_op *resize = om_op_find(n->domain, "Resize", a->dst);
	if (!resize)
		return OM_OK;
	const om_sig *rs = om_op_sig_at(resize, a->dst);
	om_kind rc = OM_OK;
	/* scales: an attribute of Upsample-7 */
	const om_attr *sc = om_node_attr(n, "scales");
	if (sc && sc->type == OM_ATTR_FLOATS) {
		const int64_t dims[1] = {sc->n};
		om_tensor *t = om_model_tensor(a->g->model, OM_FLOAT, 1, dims);
		om_value *v = t ? (memcpy(t->data, sc->floats, sizeof(float) * (size_t)sc->n),
				   om_new_constant(a->c, a->g, "scales", t)) : NULL;
		if (!v || (rc = om_adapt_set_input(a, 1, v)))
			return rc ? rc : om_error(a->c->st, OM_ERR_NOMEM, n, "out of memory");
		om_adapt_drop_attr(n, "scales");
	}
	const bool nearest = attr_is(n, "mode", "nearest", "nearest");
	if (!nearest && !attr_is(n, "mode", "nearest", "linear") &&
	    !attr_is(n, "mode", "nearest", "bilinear"))
		return om_adapt_fail(a, "an Upsample mode Resize does not have");
	if ((rc = om_adapt_set_string(a, n, "mode", nearest ? "nearest" : "linear")))
		return rc;
	if (rs && rs->max_in > 2) {
		om_value *scales = n->nin > 1 ? n->in[1] : NULL;
		if ((rc = om_adapt_set_input(a, 2, scales)))
			return rc;
		n->in[1] = NULL;
		if ((rc = empty_input(a, 1)))
			return rc;
		if ((rc = om_adapt_set_string(a, n, "coordinate_transformation_mode",
					      "asymmetric")))
			return rc;
		if (nearest && (rc = om_adapt_set_string(a, n, "nearest_mode", "floor")))
			return rc;
	}
	n->op = resize->name;
	return OM_OK;
}

/* Clip and Pad took float types only while their bounds and pads were attributes (ONNX's
 * type constraints; the signatures do not carry them) */
static om_kind floats_only(om_adapt *a, const char *attr)
{
	if (!om_sig_knows(a->sto, attr) || om_sig_knows(a->sfrom, attr))
		return OM_OK;
	const int32_t t = om_adapt_elem(a, a->n->nin ? a->n->in[0] : NULL);
	if (t != OM_FLOAT && t != OM_DOUBLE && t != OM_FLOAT16)
		return om_adapt_fail(a, "the target's op takes float types only (or the input's "
					"type is not known)");
	return OM_OK;
}

/* ---- Pad: pads and value inputs from 11, axes from 18, wrap from 19 --------------------- */

static om_kind ad_pad(om_adapt *a)
{
	om_node *n = a->n;
	om_kind rc;
	if (a->sto && a->sto->max_in < 4 && n->nin > 3 && n->in[3]) {
		/* axes: the target pads every axis, so the pads are written for all of them */
		const om_tensor *ax = om_adapt_const(a->g, n->in[3]);
		const om_tensor *pd = n->nin > 1 ? om_adapt_const(a->g, n->in[1]) : NULL;
		const int32_t r = om_adapt_rank(a, n->in[0]);
		const int64_t k = ax ? om_tensor_numel(ax) : -1;
		if (!ax || !pd || r < 1 || r > OM_MAX_RANK || k < 0 || k > r ||
		    om_tensor_numel(pd) != 2 * k)
			return om_adapt_fail(a, "axes and pads must be constants and the input's "
						"rank known to pad every axis");
		int64_t full[2 * OM_MAX_RANK] = {0};
		for (int64_t i = 0; i < k; i++) {
			int64_t x, lo, hi;
			if (!t_int(ax, i, &x) || !t_int(pd, i, &lo) || !t_int(pd, k + i, &hi))
				return om_adapt_fail(a, "axes or pads not integers");
			x = x < 0 ? x + r : x;
			if (x < 0 || x >= r)
				return om_adapt_fail(a, "an axis out of range");
			full[x] = lo;
			full[r + x] = hi;
		}
		om_value *v = om_adapt_int64s(a, "pads", full, 2 * r, 1);
		if (!v)
			return om_error(a->c->st, OM_ERR_NOMEM, n, "out of memory");
		n->in[1] = v;
		n->in[3] = NULL;
		om_adapt_trim_inputs(n);
	}
	if ((rc = floats_only(a, "pads")) ||
	    (rc = om_adapt_attr_input(a, "pads", 1, OM_AF_INTS)) ||
	    (rc = om_adapt_attr_input(a, "value", 2, OM_AF_SCALAR_OF_X)))
		return rc;
	/* mode wrap came with Pad-19 */
	if (a->dst < 19 && attr_is(n, "mode", "constant", "wrap"))
		return om_adapt_fail(a, "mode wrap");
	return OM_OK;
}

/* ---- the other attributes that became inputs -------------------------------------------- */

static om_kind ad_clip(om_adapt *a)
{
	om_kind rc = floats_only(a, "min");
	if (rc)
		return rc;
	rc = om_adapt_attr_input(a, "min", 1, OM_AF_SCALAR_OF_X);
	return rc ? rc : om_adapt_attr_input(a, "max", 2, OM_AF_SCALAR_OF_X);
}

static om_kind ad_topk(om_adapt *a)
{
	return om_adapt_attr_input(a, "k", 1, OM_AF_INT1);
}

static om_kind ad_slice(om_adapt *a)
{
	om_node *n = a->n;
	if (om_sig_knows(a->sto, "starts") && n->nin > 4 && n->in[4]) {
		const om_tensor *t = om_adapt_const(a->g, n->in[4]);
		const int64_t cnt = t ? om_tensor_numel(t) : -1;
		for (int64_t i = 0; i < cnt; i++) {
			int64_t s;
			if (!t_int(t, i, &s) || s != 1)
				return om_adapt_fail(a, "steps other than 1 before Slice-10");
		}
		if (cnt < 0)
			return om_adapt_fail(a, "steps that are not a constant");
		n->in[4] = NULL;
		om_adapt_trim_inputs(n);
	}
	om_kind rc = om_adapt_attr_input(a, "starts", 1, OM_AF_INTS);
	if (!rc)
		rc = om_adapt_attr_input(a, "ends", 2, OM_AF_INTS);
	return rc ? rc : om_adapt_attr_input(a, "axes", 3, OM_AF_INTS);
}

/* Dropout: ratio an input from 12 (and training_mode); in inference it passes its input */
static om_kind ad_dropout(om_adapt *a)
{
	om_node *n = a->n;
	/* the mask of an inference run: all false in ONNX Runtime before 12 (ONNX does not say),
	 * all true from 12 (ONNX's text): a node that writes it keeps its row */
	if (a->to != a->from && n->nout > 1 && n->out[1])
		return om_adapt_fail(a, "the mask output: ONNX Runtime writes all false before 12 "
					"and all true from 12 in inference");
	if (a->sto && a->sto->max_in < 3 && n->nin > 2 && n->in[2]) {
		const om_tensor *t = om_adapt_const(a->g, n->in[2]);
		if (!t || om_tensor_numel(t) != 1 || t->dtype != OM_BOOL ||
		    *(const uint8_t *)t->data)
			return om_adapt_fail(a, "training_mode that is not a constant false");
		n->in[2] = NULL;
		om_adapt_trim_inputs(n);
	}
	if (!om_sig_knows(a->sfrom, "ratio") && om_sig_knows(a->sto, "ratio") && n->nin > 1 &&
	    n->in[1] && !om_adapt_const(a->g, n->in[1])) {
		/* a ratio no inference run reads */
		n->in[1] = NULL;
		om_adapt_trim_inputs(n);
	}
	return om_adapt_attr_input(a, "ratio", 1, OM_AF_FLOAT);
}

/* RoiAlign: coordinate_transformation_mode from 16, whose default (half_pixel) is not what
 * RoiAlign-10 did (output_half_pixel) */
static om_kind ad_roialign(om_adapt *a)
{
	static const char key[] = "coordinate_transformation_mode";
	const bool had = om_sig_knows(a->sfrom, key), has = om_sig_knows(a->sto, key);
	if (!had && has)
		return om_adapt_set_string(a, a->n, key, "output_half_pixel");
	if (had && !has) {
		if (!attr_is(a->n, key, "half_pixel", "output_half_pixel"))
			return om_adapt_fail(a, "RoiAlign before 16 samples as output_half_pixel");
		om_adapt_drop_attr(a->n, key);
	}
	return OM_OK;
}

/* Scatter (deprecated at 11) is ScatterElements, where that exists, and back */
static om_kind ad_scatter(om_adapt *a)
{
	om_node *n = a->n;
	const om_op *se = om_op_find(n->domain, "ScatterElements", a->dst);
	const om_op *s = om_op_find(n->domain, "Scatter", a->dst);
	const om_op *want = se ? se : s;
	if (want && want != a->to) {
		n->op = want->name;
		if (!se && om_attr_choice(n, "reduction", (const char *const[]){"none", NULL}, 0))
			return om_adapt_fail(a, "a reduction Scatter does not have");
	}
	return OM_OK;
}

/* Trilu (14) before 14: Where(mask, x, 0), the mask from the last two dims' indices (col -
 * row >= k keeps the upper part, <= k the lower), made of ops of opset 11 */
static om_value *one_node(om_adapt *a, const char *op, om_value *x, om_value *y)
{
	om_value *in[2] = {x, y};
	om_node *k = om_adapt_node(a, op, y ? 2 : 1, in, 1);
	return k ? k->out[0] : NULL;
}

static om_kind ad_trilu(om_adapt *a)
{
	om_node *n = a->n;
	if (a->to)
		return OM_OK;
	if (!om_op_find(n->domain, "Range", a->dst))
		return om_adapt_fail(a, "Trilu is lowered with Range, which the target lacks");
	om_value *x = n->nin ? n->in[0] : NULL;
	const int32_t t = om_adapt_elem(a, x), r = om_adapt_rank(a, x);
	if (!x || !t || t == OM_STRING || (r >= 0 && r < 2))
		return om_adapt_fail(a, "the input's element type is not known");
	static const int64_t consts[] = {-2, -1, 0, 1, 0};
	static const int64_t col[2] = {-1, 1};
	om_value *c[5];
	for (int i = 0; i < 5; i++)
		if (!(c[i] = om_adapt_int64s(a, "trilu_c", &consts[i], 1, 0)))
			return NOMEM(a);
	om_value *k = n->nin > 1 && n->in[1] ? n->in[1] : c[4];
	om_value *to_col = om_adapt_int64s(a, "trilu_col", col, 2, 1);
	om_tensor *zt = om_model_tensor(a->g->model, t, 0, NULL);
	om_value *zero = zt ? om_new_constant(a->c, a->g, "trilu_zero", zt) : NULL;
	if (!to_col || !zero)
		return NOMEM(a);
	om_value *s = one_node(a, "Shape", x, NULL);
	om_value *rows = s ? one_node(a, "Gather", s, c[0]) : NULL;
	om_value *cols = s ? one_node(a, "Gather", s, c[1]) : NULL;
	om_value *rin[3] = {c[2], rows, c[3]}, *cin[3] = {c[2], cols, c[3]};
	om_node *rr = rows ? om_adapt_node(a, "Range", 3, rin, 1) : NULL;
	om_node *cr = cols ? om_adapt_node(a, "Range", 3, cin, 1) : NULL;
	om_value *rcol = rr ? one_node(a, "Reshape", rr->out[0], to_col) : NULL;
	om_value *d = rcol && cr ? one_node(a, "Sub", cr->out[0], rcol) : NULL;
	const bool upper = om_attr_int(n, "upper", 1) != 0;
	om_value *out = d ? one_node(a, upper ? "Less" : "Greater", d, k) : NULL;
	om_value *mask = out ? one_node(a, "Not", out, NULL) : NULL;
	if (!mask)
		return NOMEM(a);
	om_value *in[3] = {mask, x, zero};
	return om_node_become(a->c, a->g, n, "", "Where", 3, in, a->c->st);
}

/* Shape's start and end (15): before 15 a Slice of the whole shape */
static om_kind ad_shape(om_adapt *a)
{
	om_node *n = a->n;
	if (om_sig_knows(a->sto, "start") ||
	    (!om_node_attr(n, "end") && !om_attr_int(n, "start", 0)))
		return OM_OK;
	const om_op *slice = om_op_find(n->domain, "Slice", a->dst);
	const om_sig *ss = slice ? om_op_sig_at(slice, a->dst) : NULL;
	if (!ss || om_sig_knows(ss, "starts"))
		return om_adapt_fail(a, "start and end are lowered to a Slice of inputs (10)");
	const int64_t b = om_attr_int(n, "start", 0), e = om_attr_int(n, "end", INT64_MAX);
	const int64_t zero = 0;
	om_value *vb = om_adapt_int64s(a, "shape_start", &b, 1, 1);
	om_value *ve = om_adapt_int64s(a, "shape_end", &e, 1, 1);
	om_value *vz = om_adapt_int64s(a, "shape_axis", &zero, 1, 1);
	om_node *k = vb && ve && vz ? wrap_output(a, "Slice", vb) : NULL;
	if (!k)
		return NOMEM(a);
	om_value *in[4] = {k->in[0], vb, ve, vz};
	om_value **kin = om_arena_alloc(a->g->model->arena, sizeof *kin * 4);
	if (!kin)
		return NOMEM(a);
	memcpy(kin, in, sizeof in);
	k->in = kin;
	k->nin = 4;
	om_adapt_drop_attr(n, "start");
	om_adapt_drop_attr(n, "end");
	return OM_OK;
}

/* CastLike (15): before 15 a Cast to its second input's element type */
static om_kind ad_castlike(om_adapt *a)
{
	om_node *n = a->n;
	if (a->to)
		return OM_OK;
	const int32_t t = n->nin > 1 ? om_adapt_elem(a, n->in[1]) : 0;
	if (!t)
		return om_adapt_fail(a, "the target type (input 1's element type) is not known");
	om_value *x = n->in[0];
	om_kind rc = om_node_become(a->c, a->g, n, n->domain, "Cast", 1, &x, a->c->st);
	return rc ? rc : om_adapt_set_int(a, n, "to", t);
}

/* GreaterOrEqual, LessOrEqual (12): before 12 Or(Greater, Equal) (ONNX's function body; NaN
 * compares false in both) */
static om_kind ad_cmp_equal(om_adapt *a, const char *strict)
{
	om_node *n = a->n;
	if (a->to)
		return OM_OK;
	if (n->nin != 2 || n->nout != 1 || !n->out[0])
		return om_adapt_fail(a, "not two inputs and one output");
	om_value *in[2] = {n->in[0], n->in[1]};
	om_node *eq = om_adapt_node(a, "Equal", 2, in, 1);
	om_node *orn = eq ? wrap_output(a, "Or", eq->out[0]) : NULL;
	if (!orn)
		return NOMEM(a);
	return om_node_become(a->c, a->g, n, n->domain, strict, 2, in, a->c->st);
}

static om_kind ad_greater_equal(om_adapt *a)
{
	return ad_cmp_equal(a, "Greater");
}

static om_kind ad_less_equal(om_adapt *a)
{
	return ad_cmp_equal(a, "Less");
}

/* Constant's value_float, value_int, value_floats, value_ints (12): before 12 a tensor */
static om_kind ad_constant(om_adapt *a)
{
	om_node *n = a->n;
	if (om_sig_knows(a->sto, "value_float"))
		return OM_OK;
	static const char *const names[] = {"value_float", "value_int", "value_floats",
					    "value_ints"};
	for (int k = 0; k < 4; k++) {
		const om_attr *at = om_node_attr(n, names[k]);
		if (!at)
			continue;
		const bool list = k >= 2, flt = !(k & 1);
		const int64_t cnt = list ? at->n : 1;
		if ((list && at->type != (flt ? OM_ATTR_FLOATS : OM_ATTR_INTS)) ||
		    (!list && at->type != (flt ? OM_ATTR_FLOAT : OM_ATTR_INT)) || cnt < 0)
			return om_adapt_fail(a, "a value attribute of an unexpected type");
		const int64_t dims[1] = {cnt};
		om_tensor *t = om_model_tensor(a->g->model, flt ? OM_FLOAT : OM_INT64,
					       list ? 1 : 0, dims);
		if (!t)
			return NOMEM(a);
		if (cnt)
			memcpy(t->data, list ? (flt ? (const void *)at->floats
						    : (const void *)at->ints)
					     : (flt ? (const void *)&at->f : (const void *)&at->i),
			       (flt ? sizeof(float) : sizeof(int64_t)) * (size_t)cnt);
		om_adapt_drop_attr(n, names[k]);
		om_attr *v = om_node_set_attr(n, "value", OM_ATTR_TENSOR);
		if (!v)
			return NOMEM(a);
		v->t = t;
		return OM_OK;
	}
	return OM_OK;
}

/* DFT: axis an input from 20 (a scalar, default -2; the attribute's default was 1) */
static om_kind ad_dft(om_adapt *a)
{
	om_node *n = a->n;
	const bool was = om_sig_knows(a->sfrom, "axis"), is = om_sig_knows(a->sto, "axis");
	if (was == is)
		return OM_OK;
	if (was) {
		const int64_t axis = om_attr_int(n, "axis", 1);
		om_value *v = om_adapt_int64s(a, "dft_axis", &axis, 1, 0);
		if (!v)
			return NOMEM(a);
		om_adapt_drop_attr(n, "axis");
		return om_adapt_set_input(a, 2, v);
	}
	int64_t axis = -2;
	if (n->nin > 2 && n->in[2]) {
		const om_tensor *t = om_adapt_const(a->g, n->in[2]);
		if (!t || om_tensor_numel(t) != 1 || !t_int(t, 0, &axis))
			return om_adapt_fail(a, "axis is not a constant integer");
		n->in[2] = NULL;
		om_adapt_trim_inputs(n);
	}
	return om_adapt_set_int(a, n, "axis", axis);
}

/* Rows whose change the attribute defaults cover (BatchNormalization's training_mode and
 * spatial, GatherND's batch_dims, ScatterND's reduction): the driver drops those */
static om_kind ad_defaults(om_adapt *a)
{
	(void)a;
	return OM_OK;
}

/* ---- the table --------------------------------------------------------------------------- */

typedef struct adapter {
	const char *op;
	om_adapt_fn fn;
} adapter;

static const adapter adapters[] = {
	{"Squeeze", ad_axes}, {"Unsqueeze", ad_axes},
	{"ReduceSum", ad_axes}, {"ReduceMean", ad_axes}, {"ReduceMax", ad_axes},
	{"ReduceMin", ad_axes}, {"ReduceProd", ad_axes}, {"ReduceL1", ad_axes},
	{"ReduceL2", ad_axes}, {"ReduceLogSum", ad_axes}, {"ReduceLogSumExp", ad_axes},
	{"ReduceSumSquare", ad_axes},
	{"Split", ad_split},
	{"Softmax", ad_softmax}, {"LogSoftmax", ad_softmax}, {"Hardmax", ad_softmax},
	{"Resize", ad_resize}, {"Upsample", ad_upsample},
	{"Pad", ad_pad}, {"Clip", ad_clip}, {"TopK", ad_topk}, {"Slice", ad_slice},
	{"Dropout", ad_dropout}, {"RoiAlign", ad_roialign},
	{"Scatter", ad_scatter}, {"ScatterElements", ad_scatter},
	{"BatchNormalization", ad_defaults}, {"GatherND", ad_defaults},
	{"ScatterND", ad_defaults}, {"Trilu", ad_trilu},
	{"Shape", ad_shape}, {"CastLike", ad_castlike}, {"Constant", ad_constant},
	{"GreaterOrEqual", ad_greater_equal}, {"LessOrEqual", ad_less_equal},
	{"DFT", ad_dft},
};

om_adapt_fn om_adapter_of(const om_adapt *a)
{
	for (size_t i = 0; i < sizeof adapters / sizeof adapters[0]; i++)
		if (om_op_find(a->n->domain, adapters[i].op, a->src) == a->from)
			return adapters[i].fn;
	return NULL;
}
