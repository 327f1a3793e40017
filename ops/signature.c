/* signature.c — a node against its op row's signature: input and output counts, empty names in
 * required slots, attribute types, required attributes (ONNX's schema check, as ONNX Runtime
 * does it when it loads a model). Leniency: an attribute the signature does not know is
 * ignored (ONNX Runtime refuses it); a variadic input may not be empty (ONNX allows it). */
#include <string.h>

#include "op.h"

static const char *const type_names[] = {
	"undefined", "float", "int", "string", "tensor", "graph", "floats", "ints", "strings",
	"tensors", "graphs", "sparse tensor", "sparse tensors", "type proto", "type protos"};

static const char *type_name(int32_t t)
{
	return t >= 0 && t < (int32_t)(sizeof type_names / sizeof type_names[0]) ? type_names[t]
										  : "unknown";
}

static bool may_be_empty(uint64_t mask, int32_t i)
{
	return (mask >> (i < 63 ? i : 63)) & 1u;
}

const om_sig *om_op_sig_at(const om_op *op, int64_t opset)
{
	const om_sig *s = op->sig;
	while (s && s->newer && s->newer->since <= opset)
		s = s->newer;
	return s;
}

static const om_sig *sig_at(const om_op *op, int64_t opset)
{
	return om_op_sig_at(op, opset);
}

static om_kind check_count(const om_node *n, const char *what, int32_t given, int32_t lo,
			   int32_t hi, om_status *st)
{
	if (given < lo)
		return om_error(st, OM_ERR_INVALID_MODEL, n, "%d %s%s given, at least %d required",
				given, what, given == 1 ? "" : "s", lo);
	if (given > hi)
		return om_error(st, OM_ERR_INVALID_MODEL, n, "%d %s%s given, at most %d allowed",
				given, what, given == 1 ? "" : "s", hi);
	return OM_OK;
}

static om_kind check_attrs(const om_node *n, const om_sig *s, om_status *st)
{
	for (int32_t i = 0; i < n->nattr; i++) {
		const om_attr *a = &n->attrs[i];
		if (!a->name || a->ref_attr_name)
			continue; /* a function's reference: typed when the function is called */
		for (const om_sig_attr *e = s->attrs; e && e->name; e++)
			if (!strcmp(e->name, a->name) && e->type != a->type)
				return om_error(st, OM_ERR_INVALID_MODEL, n,
						"attribute '%s' is of type %s, %s expected", a->name,
						type_name(a->type), type_name(e->type));
	}
	for (const om_sig_attr *e = s->attrs; e && e->name; e++) {
		if (!e->required)
			continue;
		int32_t i = 0;
		while (i < n->nattr && (!n->attrs[i].name || strcmp(n->attrs[i].name, e->name)))
			i++;
		if (i == n->nattr)
			return om_error(st, OM_ERR_INVALID_MODEL, n,
					"required attribute '%s' is missing", e->name);
	}
	return OM_OK;
}

om_kind om_node_check(const om_op *op, const om_node *n, int64_t opset, om_status *st)
{
	return om_node_check_in(op, n, opset, NULL, st);
}

om_kind om_node_check_in(const om_op *op, const om_node *n, int64_t opset,
			 const om_tensor *const *in, om_status *st)
{
	const om_sig *s = sig_at(op, opset);
	if (!s)
		return OM_OK; /* a row without a signature (a test's extra rows) */
	om_kind rc;
	if ((rc = check_count(n, "input", n->nin, s->min_in, s->max_in, st)) ||
	    (rc = check_count(n, "output", n->nout, s->min_out, s->max_out, st)))
		return rc;
	for (int32_t i = 0; i < n->nin; i++)
		if (!(in ? in[i] != NULL : n->in[i] != NULL) && !may_be_empty(s->opt_in, i))
			return om_error(st, OM_ERR_INVALID_MODEL, n,
					"input %d has no name, the op requires it", i);
	for (int32_t i = 0; i < n->nout; i++)
		if (!n->out[i] && !may_be_empty(s->opt_out, i))
			return om_error(st, OM_ERR_INVALID_MODEL, n,
					"output %d has no name, the op requires it", i);
	return check_attrs(n, s, st);
}
