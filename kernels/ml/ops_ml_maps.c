/* ops_ml_maps.c — ai.onnx.ml ZipMap, DictVectorizer and CastMap: maps (ir/value.h) in and out.
 * The rows are OM_OP_CONTROL, as every row that takes or makes boxes (docs/session.md): the
 * kernels place their outputs and run only inside a session. String elements of a tensor
 * output are borrowed from the input map (which lives as long as the run's strings), static
 * pads, or (CastMap's numbers as text) held in the step's state block until its next run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ml_lookup.h"
#include "value.h"

#define ROW (OM_OP_CONTROL | OM_OP_EXACT)

static om_kind bad(om_ctx *c, om_kind k, const char *msg)
{
	return om_error(c->st, k, c->node, "%s", msg);
}

static om_kind need_session(om_ctx *c)
{
	if (!c->run)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
				"%s runs only inside a session", c->node->op);
	return c->nout == 1 && c->out[0] ? OM_OK : bad(c, OM_ERR_INVALID_MODEL, "one output");
}

/* the map input 0 with values as one 1-D tensor */
static om_kind need_map(om_ctx *c, const om_tensor **m)
{
	const om_tensor *x = om_ctx_in(c, 0);
	if (!x || x->dtype != OM_MAP_DTYPE || !x->data)
		return bad(c, OM_ERR_INVALID_INPUT, "the input must be a map");
	om_status why = {0};
	if (om_value_check(x, &why))
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "%s", why.msg);
	if (om_is_box(om_map_values(x)))
		return bad(c, OM_ERR_INVALID_INPUT, "the map's values must be numbers or strings");
	*m = x;
	return OM_OK;
}

static om_kind map_infer(om_ctx *c)
{
	if (c->nout != 1)
		return bad(c, OM_ERR_INVALID_MODEL, "one output");
	return OM_NEED_VALUE; /* values of their own kind: shaped by the kernels */
}

/* ---- ZipMap: the rows of X as maps from the class labels ------------------------------- */

static om_kind zipmap_kernel(om_ctx *c)
{
	om_kind rc = need_session(c);
	if (rc)
		return rc;
	const om_tensor *x = om_ctx_in(c, 0);
	if (!x || om_is_box(x) || x->dtype != OM_FLOAT || x->rank < 1 || x->rank > 2)
		return bad(c, OM_ERR_INVALID_INPUT, "X must be a float tensor [N, C] or [C]");
	om_ml_col labels, ints;
	if ((rc = om_ml_attr_col(c, "classlabels_strings", &labels)) ||
	    (rc = om_ml_attr_col(c, "classlabels_int64s", &ints)))
		return rc;
	if (!labels.dtype == !ints.dtype || (labels.dtype && labels.dtype != OM_STRING) ||
	    (ints.dtype && ints.dtype != OM_INT64))
		return bad(c, OM_ERR_INVALID_MODEL,
			   "exactly one of classlabels_strings and classlabels_int64s");
	if (!labels.dtype)
		labels = ints;
	const int64_t ncls = x->dims[x->rank - 1], nrow = x->rank == 2 ? x->dims[0] : 1;
	if (ncls != labels.n)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"X has %lld columns for %lld class labels", (long long)ncls,
				(long long)labels.n);
	const size_t es = labels.dtype == OM_STRING ? sizeof(om_str) + 16 : sizeof(int64_t);
	if ((rc = om_ctx_reserve(c, (size_t)nrow * ((size_t)ncls * (es + sizeof(float)) + 256),
				 "its maps")))
		return rc;
	const om_tensor src = {.dtype = labels.dtype, .rank = 1, .dims = {labels.n},
			       .data = (void *)labels.data,
			       .nbytes = (size_t)om_numel_bytes(labels.dtype, labels.n)};
	om_tensor keys, seq;
	if ((rc = om_tensor_alloc(&keys, labels.dtype, 1, &labels.n, c->st)))
		return rc;
	if ((rc = om_tensor_copy_data(&keys, &src, c->st)) ||
	    (rc = om_box_new(OM_SEQ_DTYPE, OM_UNDEFINED, &seq, c->st))) {
		om_value_free(&keys);
		return rc;
	}
	for (int64_t r = 0; !rc && r < nrow; r++) {
		om_tensor k, v, m;
		if ((rc = om_value_copy(&k, &keys, c->st)))
			break;
		if ((rc = om_tensor_alloc(&v, OM_FLOAT, 1, &ncls, c->st))) {
			om_value_free(&k);
			break;
		}
		if (ncls)
			memcpy(v.data, (const float *)x->data + r * ncls, sizeof(float) * (size_t)ncls);
		if ((rc = om_map_adopt(labels.dtype, &k, &v, &m, c->st)))
			break;
		if (r == 0 && om_value_check(&m, &(om_status){0}))
			rc = bad(c, OM_ERR_INVALID_MODEL, "a class label is listed twice");
		if (rc || (rc = om_box_adopt(om_box(&seq), r, &m, c->st)))
			om_value_free(&m);
	}
	om_value_free(&keys);
	if (!rc)
		rc = om_ctx_output_value(c, 0, &seq);
	if (rc)
		om_value_free(&seq);
	return rc;
}

/* ---- DictVectorizer: the map's values at their keys' places in the vocabulary ------------ */

static const om_str no_string = {"", 0};

static om_kind dictvec_kernel(om_ctx *c)
{
	const om_tensor *m;
	om_kind rc = need_session(c);
	if (rc || (rc = need_map(c, &m)))
		return rc;
	om_ml_col voc, ints;
	if ((rc = om_ml_attr_col(c, "string_vocabulary", &voc)) ||
	    (rc = om_ml_attr_col(c, "int64_vocabulary", &ints)))
		return rc;
	if (!voc.dtype == !ints.dtype || (voc.dtype && voc.dtype != OM_STRING) ||
	    (ints.dtype && ints.dtype != OM_INT64))
		return bad(c, OM_ERR_INVALID_MODEL,
			   "exactly one of string_vocabulary and int64_vocabulary");
	if (!voc.dtype)
		voc = ints;
	const om_tensor *keys = om_map_keys(m), *vals = om_map_values(m);
	if (keys->dtype != voc.dtype)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"the map's keys are %s, the vocabulary %s",
				om_dtype_name(keys->dtype), om_dtype_name(voc.dtype));
	const int32_t vt = vals->dtype;
	if (vt != OM_INT64 && vt != OM_FLOAT && vt != OM_DOUBLE && vt != OM_STRING)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "values of type %s",
				om_dtype_name(vt));
	const int64_t dims[2] = {1, voc.n};
	if ((rc = om_ctx_output(c, 0, vt, 2, dims)))
		return rc;
	void *y = c->out[0]->data;
	if (vt == OM_STRING)
		for (int64_t i = 0; i < voc.n; i++)
			((om_str *)y)[i] = no_string;
	else
		memset(y, 0, c->out[0]->nbytes);
	om_ml_table t;
	if ((rc = om_ml_table_make(c, &voc, &t)))
		return rc;
	const om_ml_col kc = {keys->dtype, keys->dims[0], keys->data};
	const size_t es = om_dtype_size(vt);
	for (int64_t k = 0; k < kc.n; k++) {
		const int64_t j = om_ml_find(&t, &kc, k); /* a key not in the vocabulary: left out */
		if (j >= 0)
			memcpy((char *)y + es * (size_t)j, (const char *)vals->data + es * (size_t)k,
			       es);
	}
	om_ml_table_free(&t);
	return OM_OK;
}

/* ---- CastMap: an int64-keyed map as a row, by ascending key ------------------------------ */

enum { TO_FLOAT, TO_STRING, TO_INT64 };

static int cmp_pos(const void *a, const void *b, const int64_t *k)
{
	int64_t x = k[*(const int64_t *)a], y = k[*(const int64_t *)b];
	return (x > y) - (x < y);
}

/* positions of the keys in ascending key order (insertion sort on short maps is not enough:
 * a merge sort by index) */
static void sort_pos(int64_t *p, int64_t *tmp, int64_t n, const int64_t *k)
{
	if (n < 2)
		return;
	int64_t h = n / 2;
	sort_pos(p, tmp, h, k);
	sort_pos(p + h, tmp, n - h, k);
	int64_t i = 0, j = h, o = 0;
	while (i < h && j < n)
		tmp[o++] = cmp_pos(&p[j], &p[i], k) < 0 ? p[j++] : p[i++];
	while (i < h)
		tmp[o++] = p[i++];
	while (j < n)
		tmp[o++] = p[j++];
	memcpy(p, tmp, sizeof *p * (size_t)n);
}

static om_kind parse_number(om_ctx *c, om_str s, bool integer, double *out)
{
	char buf[128];
	if (s.len <= 0 || s.len >= (int64_t)sizeof buf)
		return bad(c, OM_ERR_INVALID_INPUT, "a value is not a number");
	memcpy(buf, s.ptr, (size_t)s.len);
	buf[s.len] = 0;
	char *end = NULL;
	if (integer) {
		long long v = strtoll(buf, &end, 10);
		*out = (double)v;
		if (end != buf) {
			*out = (double)v;
			return OM_OK;
		}
	} else {
		float f = strtof(buf, &end);
		*out = f;
		if (end != buf)
			return OM_OK;
	}
	return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "'%s' is not a number", buf);
}

static om_kind castmap_kernel(om_ctx *c)
{
	const om_tensor *m;
	om_kind rc = need_session(c);
	if (rc || (rc = need_map(c, &m)))
		return rc;
	static const char *const to[] = {"TO_FLOAT", "TO_STRING", "TO_INT64", NULL};
	static const char *const form[] = {"DENSE", "SPARSE", NULL};
	const int cast = om_attr_choice(c->node, "cast_to", to, TO_FLOAT);
	const int sparse = om_attr_choice(c->node, "map_form", form, 0);
	const int64_t max_map = om_attr_int(c->node, "max_map", 1);
	if (cast < 0 || sparse < 0 || (sparse && max_map <= 0))
		return bad(c, OM_ERR_INVALID_MODEL,
			   "cast_to TO_FLOAT, TO_STRING or TO_INT64; map_form DENSE or SPARSE "
			   "(with max_map > 0)");
	const om_tensor *keys = om_map_keys(m), *vals = om_map_values(m);
	if (keys->dtype != OM_INT64 || (vals->dtype != OM_FLOAT && vals->dtype != OM_STRING))
		return bad(c, OM_ERR_INVALID_INPUT,
			   "the map must be map(int64, float) or map(int64, string)");
	const int64_t n = keys->dims[0], width = sparse ? max_map : n;
	const int32_t yt = cast == TO_FLOAT ? OM_FLOAT : cast == TO_INT64 ? OM_INT64 : OM_STRING;
	const int64_t *k = keys->data;
	if ((rc = om_ctx_reserve(c, sizeof(int64_t) * 2 * (size_t)n + (size_t)n * 64 + 1,
				 "its key order")))
		return rc;
	int64_t *pos = malloc(sizeof *pos * (size_t)(2 * n + 1));
	if (!pos)
		return bad(c, OM_ERR_NOMEM, "out of memory");
	for (int64_t i = 0; i < n; i++)
		pos[i] = i;
	sort_pos(pos, pos + n, n, k);
	/* numbers as text: one block in the step's state, kept until its next run */
	char *text = NULL;
	if (yt == OM_STRING && vals->dtype == OM_FLOAT) {
		om_ctx_state_reset(c);
		if (!c->state || !(text = malloc((size_t)n * 64 + 1))) {
			free(pos);
			return bad(c, c->state ? OM_ERR_NOMEM : OM_ERR_UNSUPPORTED,
				   "no room for the strings");
		}
		*c->state = text;
	}
	const int64_t dims[2] = {1, width};
	if ((rc = om_ctx_output(c, 0, yt, 2, dims))) {
		free(pos);
		return rc;
	}
	void *y = c->out[0]->data;
	static const om_str pad = {"0.f", 3}; /* ONNX Runtime's pad of a sparse string row */
	for (int64_t i = 0; i < width; i++) {
		if (yt == OM_STRING)
			((om_str *)y)[i] = pad;
		else if (yt == OM_FLOAT)
			((float *)y)[i] = 0;
		else
			((int64_t *)y)[i] = 0;
	}
	for (int64_t r = 0; !rc && r < n; r++) {
		const int64_t i = pos[r];
		const int64_t at = sparse ? k[i] : r;
		if (sparse && k[i] < 0) {
			rc = bad(c, OM_ERR_INVALID_INPUT, "a negative key in a SPARSE CastMap");
			break;
		}
		if (at >= width)
			continue; /* beyond max_map: left out */
		if (vals->dtype == OM_STRING) {
			const om_str s = ((const om_str *)vals->data)[i];
			double v = 0;
			if (yt == OM_STRING)
				((om_str *)y)[at] = s;
			else if (!(rc = parse_number(c, s, yt == OM_INT64, &v))) {
				if (yt == OM_FLOAT)
					((float *)y)[at] = (float)v;
				else
					((int64_t *)y)[at] = (int64_t)v;
			}
			continue;
		}
		const float f = ((const float *)vals->data)[i];
		if (yt == OM_FLOAT) {
			((float *)y)[at] = f;
		} else if (yt == OM_INT64) {
			if (!(f > -9223372036854775808.0f && f < 9223372036854775808.0f))
				rc = bad(c, OM_ERR_INVALID_INPUT, "a value beyond int64");
			else
				((int64_t *)y)[at] = (int64_t)f;
		} else {
			char *p = text + 64 * i;
			int len = snprintf(p, 64, "%f", (double)f); /* std::to_string's form */
			((om_str *)y)[at] = (om_str){p, len > 0 && len < 64 ? len : 0};
		}
	}
	free(pos);
	return rc;
}

/* ---- signatures (written by hand from ONNX's docs/Changelog-ml.md) ---- */

static const om_sig_attr attrs_ZipMap_1[] = {{"classlabels_int64s", OM_ATTR_INTS, 0},
	{"classlabels_strings", OM_ATTR_STRINGS, 0}, {NULL, 0, 0}};
static const om_sig sig_ml_ZipMap_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_ZipMap_1, NULL};
static const om_sig_attr attrs_DictVectorizer_1[] = {{"int64_vocabulary", OM_ATTR_INTS, 0},
	{"string_vocabulary", OM_ATTR_STRINGS, 0}, {NULL, 0, 0}};
static const om_sig sig_ml_DictVectorizer_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_DictVectorizer_1, NULL};
static const om_sig_attr attrs_CastMap_1[] = {{"cast_to", OM_ATTR_STRING, 0},
	{"map_form", OM_ATTR_STRING, 0}, {"max_map", OM_ATTR_INT, 0}, {NULL, 0, 0}};
static const om_sig sig_ml_CastMap_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_CastMap_1, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"ZipMap", "ai.onnx.ml", 1, map_infer, zipmap_kernel, ROW, &sig_ml_ZipMap_1, OM_OPC_NONE,
	 NULL, 0, NULL},
	{"DictVectorizer", "ai.onnx.ml", 1, map_infer, dictvec_kernel, ROW,
	 &sig_ml_DictVectorizer_1, OM_OPC_NONE, NULL, 0, NULL},
	{"CastMap", "ai.onnx.ml", 1, map_infer, castmap_kernel, ROW, &sig_ml_CastMap_1,
	 OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_ml_maps = OM_TABLE(rows);
