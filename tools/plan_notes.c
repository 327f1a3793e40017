/* plan_notes.c — the executor's plan as dot annotations (written once the session exposes
 * its plan). */
#include <stdlib.h>

#include "plan_notes.h"

struct om_plan_notes {
	int unused;
};

om_kind om_plan_notes_make(const om_model *m, om_plan_notes **out, om_status *st)
{
	(void)m;
	*out = NULL;
	return om_error(st, OM_ERR_UNSUPPORTED, NULL, "--plan needs the executor's plan (not yet)");
}

void om_plan_notes_options(om_plan_notes *p, om_dot_options *opt)
{
	(void)p, (void)opt;
}

void om_plan_notes_free(om_plan_notes *p)
{
	free(p);
}
