/* reshape_literal.c — a Reshape target with symbols written as a literal (numbers, 0, -1). */
#include <string.h>

#include "infer.h"
#include "reshape_literal.h"

/* True when the literal 0 at position i of a Reshape target stands for an extent that is a
 * positive number whatever the symbols are: without allowzero it copies x's extent i. */
static bool copies_positive(const om_vinfo *x, int32_t i, bool allowzero)
{
	return !allowzero && om_vi_ranked(x) && i < x->type.rank && om_dim_known(x->type.dims[i]) &&
	       x->type.dims[i].value > 0;
}

/* True when symbol s is x's extent at position i (and allowzero is off, so 0 copies it). */
static bool copies_symbol(const om_vinfo *x, int32_t i, bool allowzero, const char *s)
{
	return s && !allowzero && om_vi_ranked(x) && i < x->type.rank &&
	       !om_dim_known(x->type.dims[i]) && x->type.dims[i].param &&
	       !strcmp(x->type.dims[i].param, s);
}

bool om_reshape_literal(const om_vinfo *x, bool allowzero, int32_t k, const om_pe *e,
			int64_t *lit)
{
	if (k < 0 || k > OM_MAX_RANK)
		return false;
	int32_t nfree = 0, freepos = -1;
	bool minus = false, maybe_zero = false;
	for (int32_t i = 0; i < k; i++) {
		if (e[i].kind == OM_PE_NUM) {
			lit[i] = e[i].num;
			minus |= e[i].num == -1;
			maybe_zero |= e[i].num == 0 && !copies_positive(x, i, allowzero);
			continue;
		}
		if (e[i].kind == OM_PE_SYM && copies_symbol(x, i, allowzero, e[i].sym)) {
			lit[i] = 0; /* copies x's extent: the symbol's value, whatever it is */
			maybe_zero = true;
			continue;
		}
		nfree++;
		freepos = i;
	}
	/* -1 stands for the free entry only when the product of the others is never 0: with a
	 * 0 among them the element count is 0 and -1 has no value (rejected at run time, where
	 * the original target gave the symbol's value) */
	if (nfree > 1 || (nfree == 1 && (minus || maybe_zero)))
		return false;
	if (nfree == 1)
		lit[freepos] = -1;
	return true;
}
