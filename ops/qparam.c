/* qparam.c — the one-value scale and zero point of the QLinear ops (qparam.h). */
#include "qparam.h"

/* one element: a scalar or a 1-D tensor of one */
static bool one_value(const om_tensor *t)
{
	return t->rank == 0 || (t->rank == 1 && t->dims[0] == 1);
}

om_kind om_qparam_get(om_ctx *c, int si, int zi, int32_t dt, om_qparam *p)
{
	const om_tensor *s = om_ctx_in(c, si), *z = om_ctx_in(c, zi);
	if (!s || s->dtype != OM_FLOAT || !one_value(s))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"input %d: a float scale of one value", si);
	if (z && (z->dtype != dt || !one_value(z)))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"input %d: a zero point of one value of the data's type", zi);
	if (p) {
		p->scale = *(const float *)s->data;
		p->zp = z ? om_q8_at(z->data, 0, dt == OM_INT8) : 0;
	}
	return OM_OK;
}
