/* simplify.c — the pass pipeline (not written yet). */
#include "ir.h"

om_kind om_simplify(om_model *m, const om_simplify_options *opt, om_status *st)
{
	(void)m, (void)opt, (void)st;
	return OM_OK;
}
