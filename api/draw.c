/* draw.c — om_model_dot (include/omopt.h): a model, its plan or a simplification diff as
 * Graphviz dot text (dot.c writes it; plan_notes.c asks a session's plan). */
#include <stdio.h>
#include <stdlib.h>

#include "dot.h"
#include "pass.h"
#include "plan_notes.h"

om_kind om_model_dot(om_model *m, const om_dot_options *opt, char **text, size_t *len,
		     om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	*text = NULL;
	*len = 0;
	om_model *diff = opt ? opt->diff : NULL;
	om_plan_notes *notes = NULL;
	om_kind k = om_annotate_types(m, st);
	if (!k && diff)
		k = om_annotate_types(diff, st);
	if (!k && opt && opt->plan)
		k = om_plan_notes_make(m, opt->session, &notes, st);
	if (k)
		return om_public_kind(st, k);
	om_dot_config cfg = {.diff = diff, .attributes = opt && opt->attributes};
	if (notes)
		om_plan_notes_options(notes, &cfg);
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	k = f ? om_dot_write(m, &cfg, f, NULL, st)
	      : om_error(st, OM_ERR_NOMEM, NULL, "out of memory for the dot text");
	if (f && fclose(f) && !k)
		k = om_error(st, OM_ERR_NOMEM, NULL, "out of memory for the dot text");
	om_plan_notes_free(notes);
	if (k) {
		free(buf);
		return k;
	}
	*text = buf;
	*len = n;
	return OM_OK;
}
