/* ops_string_normalizer.c — StringNormalizer (opset 10), as ONNX Runtime runs it: X is [C] or
 * [1, C] (C > 0); elements equal to a stopword are dropped (compared as they are when
 * is_case_sensitive, else both in the case of case_change_action, lower for NONE), the rest
 * lowered, uppered or kept (case_change_action LOWER, UPPER, NONE) code point by code point
 * (simple case mapping, towlower/towupper in the `locale` named, default en_US.UTF-8; "C" and
 * "POSIX" map ASCII alone). A locale this machine lacks maps as C.UTF-8 (ONNX Runtime refuses
 * the model; the two differ only for Turkish and Azeri dotted i). Y is [C'] or [1, C'], and
 * [1] or [1, 1] holding "" when every element was dropped. Ill-formed UTF-8 where a case is
 * mapped: InvalidInput. */
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "text_util.h"

enum { CASE_NONE, CASE_LOWER, CASE_UPPER };

typedef struct norm {
	int action;      /* CASE_* */
	bool sensitive;
	locale_t loc;    /* (locale_t)0 when no case is ever mapped */
	om_str *stops;   /* sorted (length, bytes); malloc'd copies when insensitive */
	int64_t nstops;
	bool own_stops;
} norm;

static int cmp_str(const void *a_, const void *b_)
{
	const om_str *a = a_, *b = b_;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->len ? memcmp(a->ptr, b->ptr, (size_t)a->len) : 0;
}

static void norm_free(norm *n)
{
	if (n->own_stops)
		for (int64_t i = 0; i < n->nstops; i++)
			free((void *)n->stops[i].ptr);
	free(n->stops);
	if (n->loc)
		freelocale(n->loc);
	memset(n, 0, sizeof *n);
}

/* s mapped to `action`'s case into *out (malloc'd); InvalidInput for ill-formed UTF-8. */
static om_kind map_case(om_ctx *c, const norm *n, int action, const om_str *s, om_str *out)
{
	const int64_t len = s->len;
	if (len > (INT64_MAX - 1) / 2)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "string too long");
	/* a code point's mapping takes at most 2 bytes more than it (U+023A-U+023F, U+2C65...:
	 * 2 <-> 3 bytes; a 1-byte one maps to 1 or 2 bytes): 2 * len + 1 is always room */
	char *p = malloc((size_t)(2 * len) + 1);
	if (!p)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	int64_t i = 0, o = 0;
	while (i < len) {
		int32_t cp = om_utf8_next(s->ptr, len, &i);
		if (cp < 0) {
			free(p);
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"a string is not well-formed UTF-8");
		}
		const wint_t m = action == CASE_UPPER ? towupper_l((wint_t)cp, n->loc)
						       : towlower_l((wint_t)cp, n->loc);
		if (m <= 0x10ffff && !(m >= 0xd800 && m < 0xe000))
			cp = (int32_t)m;
		o += om_utf8_put(cp, p + o);
	}
	p[o] = 0;
	*out = (om_str){p, o};
	return OM_OK;
}

static om_kind norm_setup(om_ctx *c, norm *n)
{
	static const char *const actions[] = {"NONE", "LOWER", "UPPER", NULL};
	memset(n, 0, sizeof *n);
	n->action = om_attr_choice(c->node, "case_change_action", actions, CASE_NONE);
	if (n->action < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"case_change_action is not LOWER, UPPER or NONE");
	n->sensitive = om_attr_int(c->node, "is_case_sensitive", 0) != 0;
	const om_attr *sw = om_node_attr(c->node, "stopwords");
	const int64_t ns = sw && sw->type == OM_ATTR_STRINGS ? sw->n : 0;
	if (n->action != CASE_NONE || (!n->sensitive && ns > 0)) {
		const char *name = om_attr_string(c->node, "locale", "");
		if (!*name)
			name = "en_US.UTF-8";
		n->loc = newlocale(LC_CTYPE_MASK, name, (locale_t)0);
		if (!n->loc)
			n->loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
		if (!n->loc)
			return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
					"no locale %s nor C.UTF-8 on this machine", name);
	}
	if (!ns)
		return OM_OK;
	n->stops = calloc((size_t)ns, sizeof *n->stops);
	if (!n->stops)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	n->own_stops = !n->sensitive;
	const int cmp_case = n->action == CASE_UPPER ? CASE_UPPER : CASE_LOWER;
	for (int64_t i = 0; i < ns; i++) {
		const om_str *w = &sw->strings[i];
		if (w->len < 0 || (w->len && !w->ptr))
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "malformed stopword");
		if (n->sensitive) {
			n->stops[i] = *w;
		} else {
			om_kind rc = map_case(c, n, cmp_case, w, &n->stops[i]);
			if (rc) {
				n->nstops = i;
				return rc == OM_ERR_INVALID_INPUT
					       ? om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
							  "a stopword is not well-formed UTF-8")
					       : rc;
			}
		}
		n->nstops = i + 1;
	}
	qsort(n->stops, (size_t)ns, sizeof *n->stops, cmp_str);
	return OM_OK;
}

/* Whether element s is a stopword. */
static om_kind is_stop(om_ctx *c, const norm *n, const om_str *s, bool *stop)
{
	*stop = false;
	if (!n->nstops)
		return OM_OK;
	if (n->sensitive) {
		*stop = bsearch(s, n->stops, (size_t)n->nstops, sizeof *n->stops, cmp_str) != NULL;
		return OM_OK;
	}
	om_str m;
	om_kind rc = map_case(c, n, n->action == CASE_UPPER ? CASE_UPPER : CASE_LOWER, s, &m);
	if (rc)
		return rc;
	*stop = bsearch(&m, n->stops, (size_t)n->nstops, sizeof *n->stops, cmp_str) != NULL;
	free((void *)m.ptr);
	return OM_OK;
}

static om_kind check_input(om_ctx *c, const om_tensor *x, int64_t *count)
{
	if (x->dtype != OM_STRING)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "StringNormalizer takes strings");
	if (x->rank == 1)
		*count = x->dims[0];
	else if (x->rank == 2 && x->dims[0] == 1)
		*count = x->dims[1];
	else
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "X is neither [C] nor [1, C]");
	return OM_OK;
}

/* How many elements stay. */
static om_kind kept(om_ctx *c, const norm *n, const om_tensor *x, int64_t *k)
{
	const om_str *e = x->data;
	int64_t cnt = 0;
	for (int64_t i = 0, m = om_tensor_numel(x); i < m; i++) {
		bool stop;
		om_kind rc = is_stop(c, n, &e[i], &stop);
		if (rc)
			return rc;
		cnt += !stop;
	}
	*k = cnt;
	return OM_OK;
}

static om_kind norm_infer(om_ctx *c)
{
	const om_tensor *x = c->in[0];
	int64_t count = 0;
	om_kind rc = check_input(c, x, &count);
	if (rc)
		return rc;
	if (!om_has_value(x)) {
		int64_t dims[2] = {1, -1};
		om_set_shape(c->out[0], OM_STRING, x->rank, dims + (x->rank == 1));
		return OM_NEED_VALUE;
	}
	if (count < 1)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "X has no element (C is 0)");
	rc = om_text_check(c, x);
	if (rc)
		return rc;
	norm n;
	int64_t k = 0;
	rc = norm_setup(c, &n);
	if (!rc)
		rc = kept(c, &n, x, &k);
	norm_free(&n);
	if (rc)
		return rc;
	const int64_t dims[2] = {1, k > 0 ? k : 1};
	om_set_shape(c->out[0], OM_STRING, x->rank, dims + (x->rank == 1));
	return OM_OK;
}

static om_kind norm_kernel(om_ctx *c)
{
	const om_tensor *x = c->in[0];
	om_tensor *y = c->out[0];
	int64_t count = 0;
	om_kind rc = check_input(c, x, &count);
	if (rc)
		return rc;
	norm n;
	rc = norm_setup(c, &n);
	if (rc) {
		norm_free(&n);
		return rc;
	}
	const om_str *e = x->data;
	om_str *out = y->data;
	const int64_t cap = om_tensor_numel(y);
	int64_t o = 0;
	for (int64_t i = 0; i < count && !rc; i++) {
		bool stop;
		rc = is_stop(c, &n, &e[i], &stop);
		if (rc || stop)
			continue;
		if (o >= cap) {
			rc = om_error(c->st, OM_ERR_INTERNAL, c->node, "Y's shape does not fit");
			break;
		}
		if (n.action == CASE_NONE)
			rc = om_text_dup(&out[o], e[i].ptr, e[i].len)
				     ? OM_OK
				     : om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		else
			rc = map_case(c, &n, n.action, &e[i], &out[o]);
		o += !rc;
	}
	if (!rc && o == 0 && cap == 1)
		rc = om_text_dup(&out[o++], "", 0) ? OM_OK
						   : om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	if (!rc && o != cap)
		rc = om_error(c->st, OM_ERR_INTERNAL, c->node, "Y's shape does not fit");
	if (rc)
		om_text_free_out(y, o);
	norm_free(&n);
	return rc;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_StringNormalizer_10[] = {{"case_change_action", OM_ATTR_STRING, 0},
	{"is_case_sensitive", OM_ATTR_INT, 0}, {"locale", OM_ATTR_STRING, 0},
	{"stopwords", OM_ATTR_STRINGS, 0}, {NULL, 0, 0}};
/* StringNormalizer-10: X -> Y */
static const om_sig sig_StringNormalizer_10 = {10, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_StringNormalizer_10, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"StringNormalizer", "", 10, norm_infer, norm_kernel, OM_OP_EXACT | OM_OP_DATA_DEPENDENT,
	 &sig_StringNormalizer_10, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_string_normalizer = OM_TABLE(rows);
