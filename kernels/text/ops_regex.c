/* ops_regex.c — RegexFullMatch (opset 20): Y (bool, X's shape) is true where the element
 * matches `pattern` (RE2 syntax, UTF-8, as ONNX Runtime) from its first byte to its last. A
 * pattern RE2 refuses, or none: InvalidModel. The compiled pattern is the step's kernel state. */
#include <stdlib.h>
#include <string.h>

#include "re2_wrap.h"
#include "text_util.h"

typedef struct re_state {
	int64_t key; /* om_ctx_state_keyed's key: 1, the pattern being the node's own */
	om_re2 *re;
} re_state;

static void release_re(void *block)
{
	re_state *s = block;
	om_re2_free(s->re);
	s->re = NULL;
}

static om_kind compile(om_ctx *c, om_re2 **out)
{
	const om_attr *a = om_node_attr(c->node, "pattern");
	if (!a || a->type != OM_ATTR_STRING)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "RegexFullMatch needs pattern");
	if (a->s.len < 0 || (a->s.len && !a->s.ptr))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "malformed pattern");
	char err[160];
	*out = om_re2_new(a->s.len ? a->s.ptr : "", (size_t)a->s.len, err, sizeof err);
	if (!*out)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "pattern: %s", err);
	return OM_OK;
}

static om_kind regex_infer(om_ctx *c)
{
	const om_tensor *x = c->in[0];
	if (x->dtype != OM_STRING)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "RegexFullMatch takes strings");
	om_re2 *re;
	om_kind rc = compile(c, &re);
	if (rc)
		return rc;
	om_re2_free(re);
	om_set_shape(c->out[0], OM_BOOL, x->rank, x->dims);
	return OM_OK;
}

static om_kind regex_kernel(om_ctx *c)
{
	const om_tensor *x = c->in[0];
	om_kind rc = om_text_check(c, x);
	if (rc)
		return rc;
	/* the pattern is an attribute: one compiled block serves every run of the step */
	static const int64_t key = 1;
	re_state *slot = NULL;
	om_re2 *re = NULL;
	bool made = false;
	if (c->state)
		slot = om_ctx_state_keyed(c, release_re, &key, 1, sizeof *slot, &made);
	if (slot && slot->re) {
		re = slot->re;
	} else {
		rc = compile(c, &re);
		if (rc)
			return rc;
		if (slot)
			slot->re = re;
	}
	const om_str *e = x->data;
	bool *y = c->out[0]->data;
	for (int64_t i = 0, n = om_tensor_numel(x); i < n; i++)
		y[i] = om_re2_full_match(re, e[i].len ? e[i].ptr : "", (size_t)e[i].len) != 0;
	if (!slot)
		om_re2_free(re);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_RegexFullMatch_20[] = {{"pattern", OM_ATTR_STRING, 0},
	{NULL, 0, 0}};
/* RegexFullMatch-20: X -> Y */
static const om_sig sig_RegexFullMatch_20 = {20, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_RegexFullMatch_20, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"RegexFullMatch", "", 20, regex_infer, regex_kernel, OM_OP_EXACT | OM_OP_ELEMENTWISE,
	 &sig_RegexFullMatch_20, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_regex = OM_TABLE(rows);
