/* ops_optional.c — Optional OptionalHasElement OptionalGetElement on om_seq values (seq.h): an
 * optional is a box of 0 or 1 item. Rows are OM_OP_CONTROL (the kernels place their outputs). */
#include "control.h"
#include "value.h"

#define ROW (OM_OP_CONTROL | OM_OP_EXACT)

static om_kind opt_infer(om_ctx *c)
{
	if (c->nin > 1 || c->nout != 1)
		return om_ctl_bad(c, "one optional input and one output");
	return OM_NEED_VALUE;
}

/* Optional's own: without an input, the type attribute says what the empty optional holds */
static om_kind optional_infer(om_ctx *c)
{
	om_kind rc = opt_infer(c);
	if (rc == OM_NEED_VALUE && (c->nin < 1 || !c->in[0]) && !om_node_attr(c->node, "type"))
		return om_ctl_bad(c, "an Optional without input needs the type attribute");
	return rc;
}

/* Optional(x): x (a tensor or a sequence) in a box; no x: the empty optional */
static om_kind optional_kernel(om_ctx *c)
{
	om_kind rc = optional_infer(c);
	if (rc != OM_NEED_VALUE)
		return rc;
	const om_tensor *x = c->nin ? c->in[0] : NULL;
	if (x && x->dtype == OM_OPT_DTYPE)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"the input of Optional cannot be an optional");
	om_tensor v;
	if ((rc = om_box_new(OM_OPT_DTYPE, x ? x->dtype : OM_UNDEFINED, &v, c->st)))
		return rc;
	if (x)
		rc = om_box_insert(om_box(&v), 0, x, c->st);
	if (!rc)
		rc = om_ctx_output_value(c, 0, &v);
	if (rc)
		om_value_free(&v);
	return rc;
}

/* false for the empty optional or a missing input; true for a full one, a tensor, a sequence */
static om_kind has_kernel(om_ctx *c)
{
	om_kind rc = opt_infer(c);
	if (rc != OM_NEED_VALUE || (rc = om_ctx_output(c, 0, OM_BOOL, 0, NULL)))
		return rc;
	const om_tensor *x = c->nin ? c->in[0] : NULL;
	*(unsigned char *)c->out[0]->data = x && (x->dtype != OM_OPT_DTYPE || om_box(x)->n > 0);
	return OM_OK;
}

/* the element of a full optional (a view into the input's box); a tensor or a sequence
 * (opset 18) is its own element */
static om_kind get_kernel(om_ctx *c)
{
	om_kind rc = opt_infer(c);
	if (rc != OM_NEED_VALUE)
		return rc;
	const om_tensor *x = c->nin ? c->in[0] : NULL;
	if (!x)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "the input is missing");
	if (x->dtype == OM_SEQ_DTYPE)
		return om_ctx_output_alias(c, 0, x, 0);
	if (x->dtype != OM_OPT_DTYPE)
		return om_ctl_put_output(c, 0, x); /* a pool tensor may die first: copy */
	if (!om_box(x)->n)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "the optional is empty");
	return om_ctx_output_alias(c, 0, &om_box(x)->items[0], 0);
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_Optional_15[] = {{"type", OM_ATTR_TYPE_PROTO, 0}, {NULL, 0, 0}};
/* Optional-15: [input] -> output */
static const om_sig sig_Optional_15 = {15, 0, 1, 1, 1, 0x1, 0x0, 0x1, 0x0, 0x0, 0x0,
	attrs_Optional_15, NULL};
/* OptionalHasElement-18: [input] -> output */
static const om_sig sig_OptionalHasElement_15_v18 = {18, 0, 1, 1, 1, 0x1, 0x0, 0x1, 0x0, 0x0, 0x0,
	NULL, NULL};
/* OptionalHasElement-15: input -> output */
static const om_sig sig_OptionalHasElement_15 = {15, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL,
	&sig_OptionalHasElement_15_v18};
/* OptionalGetElement-18: input -> output */
static const om_sig sig_OptionalGetElement_15_v18 = {18, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	NULL, NULL};
/* OptionalGetElement-15: input -> output */
static const om_sig sig_OptionalGetElement_15 = {15, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x0, NULL,
	&sig_OptionalGetElement_15_v18};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"Optional", "", 15, optional_infer, optional_kernel, ROW, &sig_Optional_15, OM_OPC_NONE,
	 NULL, 0, NULL},
	{"OptionalHasElement", "", 15, opt_infer, has_kernel, ROW, &sig_OptionalHasElement_15,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"OptionalGetElement", "", 15, opt_infer, get_kernel, ROW, &sig_OptionalGetElement_15,
	 OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_optional = OM_TABLE(rows);
