/* render.h — dot text to SVG or PNG through Graphviz's library (render.c). The CLI's own: the
 * library gives the dot text (om_model_dot), the tools lay it out. */
#ifndef OM_RENDER_H
#define OM_RENDER_H

#include <stddef.h>

#include "omopt.h"

typedef struct om_dot_renderer om_dot_renderer;
om_dot_renderer *om_dot_renderer_new(void);
void om_dot_renderer_free(om_dot_renderer *r);

/** Renders dot text to an .svg or .png file with Graphviz's library (in process), written
 *  with om_file_write (a temporary file renamed over path; a FIFO or character device is
 *  written straight into). A graph too deep for dot's layout with its edge labels is drawn
 *  without them (see om_dot_render_note); one too deep even so is OM_ERR_UNSUPPORTED, before
 *  any layout. */
om_kind om_dot_render(om_dot_renderer *r, const char *dot_text, size_t len, const char *format,
		      const char *path, om_status *st);
/** What the last om_dot_render left out to make the layout possible, or "". */
const char *om_dot_render_note(const om_dot_renderer *r);

#endif
