/* ops_string_split.c — StringSplit (opset 20): each element split at `delimiter` (every
 * occurrence delimits, so "a,,b" has an empty middle part and "" is one empty part, as
 * Python's str.split) or, when the delimiter is absent or "", at runs of whitespace with
 * leading and trailing whitespace removed (Python's whitespace: Unicode White_Space and
 * U+001C-U+001F; ONNX Runtime splits at ' ' alone). At most `maxsplit` splits (negative:
 * no limit); the rest of the element is the last part. Y: X's shape + [the most parts],
 * padded with ""; Z (int64, X's shape): the parts of each element. */
#include <string.h>

#include "text_util.h"

/* The whitespace code point at s[*i], advancing *i past it; false (and *i unchanged) when the
 * code point there is not whitespace. */
static bool ws_at(const char *s, int64_t len, int64_t *i)
{
	int64_t j = *i;
	const int32_t cp = om_utf8_next(s, len, &j);
	bool ws;
	switch (cp) {
	case 0x09: case 0x0a: case 0x0b: case 0x0c: case 0x0d: case 0x1c: case 0x1d: case 0x1e:
	case 0x1f: case 0x20: case 0x85: case 0xa0: case 0x1680: case 0x2028: case 0x2029:
	case 0x202f: case 0x205f: case 0x3000:
		ws = true;
		break;
	default:
		ws = cp >= 0x2000 && cp <= 0x200a;
	}
	if (ws)
		*i = j;
	return ws;
}

/* Parts of one element: calls emit(begin, length) for each (emit NULL: counts only). */
typedef struct split_args {
	const char *delim;
	int64_t dlen;    /* 0: whitespace */
	int64_t maxsplit; /* < 0: no limit */
} split_args;

typedef struct part_sink {
	om_str *out;    /* where parts go, or NULL */
	int64_t n;      /* parts so far */
	bool nomem;
} part_sink;

static void emit(part_sink *k, const char *p, int64_t len)
{
	if (k->out && !k->nomem && !om_text_dup(&k->out[k->n], p, len))
		k->nomem = true;
	k->n++;
}

static void split_one(const split_args *a, const om_str *e, part_sink *k)
{
	const char *s = e->ptr;
	const int64_t len = e->len;
	int64_t splits = 0;
	if (a->dlen > 0) {
		int64_t start = 0;
		for (int64_t i = 0; i + a->dlen <= len;) {
			if ((a->maxsplit < 0 || splits < a->maxsplit) &&
			    memcmp(s + i, a->delim, (size_t)a->dlen) == 0) {
				emit(k, s + start, i - start);
				splits++;
				i += a->dlen;
				start = i;
			} else {
				i++;
			}
		}
		emit(k, s + start, len - start);
		return;
	}
	/* whitespace: strip both ends, split at runs */
	int64_t i = 0, end = len;
	while (i < len && ws_at(s, len, &i))
		;
	/* the end of the last non-whitespace code point */
	for (int64_t j = i; j < len;) {
		if (!ws_at(s, len, &j)) {
			om_utf8_next(s, len, &j);
			end = j;
		}
	}
	if (i >= end)
		return;
	int64_t start = i;
	while (i < end) {
		int64_t j = i;
		if ((a->maxsplit < 0 || splits < a->maxsplit) && ws_at(s, len, &j)) {
			emit(k, s + start, i - start);
			splits++;
			while (j < end && ws_at(s, len, &j))
				;
			i = start = j;
		} else {
			om_utf8_next(s, len, &i);
		}
	}
	emit(k, s + start, end - start);
}

static om_kind split_setup(om_ctx *c, split_args *a)
{
	const om_attr *d = om_node_attr(c->node, "delimiter");
	a->delim = d && d->type == OM_ATTR_STRING ? d->s.ptr : NULL;
	a->dlen = a->delim ? d->s.len : 0;
	a->maxsplit = om_attr_int(c->node, "maxsplit", -1);
	if (c->in[0]->dtype != OM_STRING)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "StringSplit takes strings");
	if (c->in[0]->rank >= OM_MAX_RANK)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "input of rank %d: Y's rank "
				"would pass %d", (int)c->in[0]->rank, OM_MAX_RANK);
	return OM_OK;
}

/* The most parts of any element. */
static int64_t most_parts(const split_args *a, const om_tensor *x)
{
	const om_str *e = x->data;
	int64_t most = 0;
	for (int64_t i = 0, n = om_tensor_numel(x); i < n; i++) {
		part_sink k = {NULL, 0, false};
		split_one(a, &e[i], &k);
		if (k.n > most)
			most = k.n;
	}
	return most;
}

static om_kind split_infer(om_ctx *c)
{
	split_args a;
	om_kind rc = split_setup(c, &a);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	if (c->nout > 1 && c->out[1])
		om_set_shape(c->out[1], OM_INT64, x->rank, x->dims);
	if (!om_has_value(x))
		return om_partial(c->out[0], OM_STRING, x->rank + 1);
	rc = om_text_check(c, x);
	if (rc)
		return rc;
	int64_t dims[OM_MAX_RANK];
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	dims[x->rank] = most_parts(&a, x);
	om_set_shape(c->out[0], OM_STRING, x->rank + 1, dims);
	return OM_OK;
}

static om_kind split_kernel(om_ctx *c)
{
	split_args a;
	om_kind rc = split_setup(c, &a);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	om_tensor *y = c->out[0];
	int64_t *z = c->nout > 1 && c->out[1] ? c->out[1]->data : NULL;
	const int64_t n = om_tensor_numel(x), most = y->rank == x->rank + 1 ? y->dims[x->rank] : -1;
	if (most < 0 || om_tensor_numel(y) != n * most)
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "Y's shape does not fit X");
	const om_str *e = x->data;
	om_str *out = y->data;
	for (int64_t i = 0; i < n; i++) {
		part_sink cnt = {NULL, 0, false};
		split_one(&a, &e[i], &cnt);
		if (cnt.n > most) {
			om_text_free_out(y, i * most);
			return om_error(c->st, OM_ERR_INTERNAL, c->node, "parts changed");
		}
		for (int64_t j = 0; j < most; j++)
			out[i * most + j] = (om_str){NULL, 0};
		part_sink k = {out + i * most, 0, false};
		split_one(&a, &e[i], &k);
		for (int64_t j = k.n; j < most && !k.nomem; j++)
			if (!om_text_dup(&out[i * most + j], "", 0))
				k.nomem = true;
		if (k.nomem) {
			om_text_free_out(y, (i + 1) * most); /* element i's slots were zeroed */
			return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		}
		if (z)
			z[i] = k.n;
	}
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_StringSplit_20[] = {{"delimiter", OM_ATTR_STRING, 0},
	{"maxsplit", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* StringSplit-20: X -> Y Z */
static const om_sig sig_StringSplit_20 = {20, 1, 1, 2, 2, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_StringSplit_20, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"StringSplit", "", 20, split_infer, split_kernel, OM_OP_EXACT | OM_OP_DATA_DEPENDENT,
	 &sig_StringSplit_20, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_string_split = OM_TABLE(rows);
