/* reduce_plan.c — kept x reduced walks over a tensor (reduce_plan.h). */
#include "reduce_plan.h"

om_kind om_red_axes_mask(om_ctx *c, const int64_t *axes, int64_t n, int32_t rank, bool *mask)
{
	for (int64_t i = 0; i < n; i++) {
		int32_t a;
		om_kind rc = om_norm_axis(c, axes[i], rank, &a);
		if (rc)
			return rc;
		if (mask[a])
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"axis %lld appears twice", (long long)axes[i]);
		mask[a] = true;
	}
	return OM_OK;
}

void om_red_plan_make(const om_tensor *x, const bool *mask, bool keepdims, om_red_plan *p)
{
	int64_t stride[OM_MAX_RANK], s = 1;
	for (int32_t d = x->rank - 1; d >= 0; d--) {
		stride[d] = s;
		s *= x->dims[d] ? x->dims[d] : 1;
	}
	p->nk = p->nr = p->out_rank = 0;
	p->nout = p->nred = 1;
	p->noop = false;
	int last = -1; /* role of the previous dim of extent > 1: 0 kept, 1 reduced */
	for (int32_t d = 0; d < x->rank; d++) {
		const int64_t e = x->dims[d];
		if (!mask[d] || keepdims)
			p->out_dims[p->out_rank++] = mask[d] ? 1 : e;
		if (mask[d])
			p->nred *= e;
		else
			p->nout *= e;
		if (e == 1)
			continue;
		int64_t *ext = mask[d] ? p->rext : p->kext, *str = mask[d] ? p->rstr : p->kstr;
		int32_t *cnt = mask[d] ? &p->nr : &p->nk;
		if (last == (int)mask[d] && e != 0 && ext[*cnt - 1] != 0) {
			ext[*cnt - 1] *= e;
			str[*cnt - 1] = stride[d];
		} else {
			ext[*cnt] = e;
			str[*cnt] = stride[d];
			(*cnt)++;
		}
		last = mask[d];
	}
}

void om_red_each_run(const om_red_plan *p, int64_t base, om_run_fn fn, void *arg)
{
	if (p->nred == 0)
		return;
	if (p->nr == 0) {
		fn(arg, base, 1, 1);
		return;
	}
	int64_t idx[OM_MAX_RANK] = {0}, off = base;
	const int32_t inner = p->nr - 1;
	for (;;) {
		fn(arg, off, p->rext[inner], p->rstr[inner]);
		int32_t d = inner - 1;
		for (; d >= 0; d--) {
			off += p->rstr[d];
			if (++idx[d] < p->rext[d])
				break;
			off -= p->rstr[d] * p->rext[d];
			idx[d] = 0;
		}
		if (d < 0)
			return;
	}
}

void om_red_next_base(const om_red_plan *p, int64_t *kidx, int64_t *base)
{
	for (int32_t d = p->nk - 1; d >= 0; d--) {
		*base += p->kstr[d];
		if (++kidx[d] < p->kext[d])
			return;
		*base -= p->kstr[d] * p->kext[d];
		kidx[d] = 0;
	}
}
