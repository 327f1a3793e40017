/* session.c — not written yet. */
#include "op.h"

om_kind om_session_create(const om_model *m, const om_session_options *opt, om_session **out,
			  om_status *st)
{
	(void)m, (void)opt;
	*out = NULL;
	return om_error(st, OM_ERR_UNSUPPORTED, NULL, "the executor is not written yet");
}

void om_session_free(om_session *s)
{
	(void)s;
}
