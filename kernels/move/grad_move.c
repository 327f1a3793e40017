/* grad_move.c — derivative rules of the view and move rows (ops/grad.h): the gradient of a
 * reshape-like op is the output's gradient reshaped back to the input's shape, Transpose's
 * the gradient transposed by the inverse permutation. */
#include "grad.h"

static om_kind grad_identity(om_grad_ctx *c)
{
	c->dx[0] = c->dy[0];
	return c->st->kind;
}

/* Reshape, Flatten, Squeeze, Unsqueeze: the same elements in the same order */
static om_kind grad_reshape(om_grad_ctx *c)
{
	c->dx[0] = om_grad_reshape_like(c, c->dy[0], c->n->in[0]);
	return c->st->kind;
}

static om_kind grad_transpose(om_grad_ctx *c)
{
	int64_t count = 0;
	const int64_t *perm = om_attr_ints(c->n, "perm", &count);
	om_node *t = om_grad_node(c, "Transpose", 1, &c->dy[0]);
	if (perm && t) { /* no perm: the axes reversed, its own inverse */
		int64_t inv[OM_MAX_RANK];
		if (count > OM_MAX_RANK)
			return om_grad_unsupported(c, "perm is longer than the largest rank");
		uint32_t seen = 0;
		for (int64_t d = 0; d < count; d++) {
			if (perm[d] < 0 || perm[d] >= count || (seen >> perm[d] & 1))
				return om_grad_unsupported(c, "perm is not a permutation");
			seen |= 1u << perm[d];
			inv[perm[d]] = d;
		}
		om_grad_attr_ints(c, t, "perm", inv, count);
	}
	c->dx[0] = t ? t->out[0] : NULL;
	return c->st->kind;
}

static const om_grad_rule rules[] = {
	{"Identity", "", grad_identity},
	{"Reshape", "", grad_reshape},
	{"Flatten", "", grad_reshape},
	{"Squeeze", "", grad_reshape},
	{"Unsqueeze", "", grad_reshape},
	{"Transpose", "", grad_transpose},
};

const om_grad_table om_grads_move = {rules, sizeof rules / sizeof rules[0]};
