/* plan_notes.h — what `omopt dot --plan` draws, read from an executor session's plan. */
#ifndef OM_PLAN_NOTES_H
#define OM_PLAN_NOTES_H

#include "dot.h"

typedef struct om_plan_notes om_plan_notes;

/** Plans m in a session of options opt (NULL: the defaults) and records buffers, views and
 *  kernel notes per value and node. */
om_kind om_plan_notes_make(const om_model *m, const om_session_options *opt, om_plan_notes **out,
			   om_status *st);
/** Points opt's plan callbacks at the notes. */
void om_plan_notes_options(om_plan_notes *p, om_dot_config *opt);
void om_plan_notes_free(om_plan_notes *p);

#endif
