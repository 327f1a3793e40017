/* dot_html.h — `omopt dot -o FILE.html`: one self-contained page that pans, zooms, searches
 * and explains the drawing (tools/html/viewer.html around Graphviz's SVG). */
#ifndef OM_DOT_HTML_H
#define OM_DOT_HTML_H

#include <stddef.h>

#include "render.h"

/** Lays out dot_text with r (SVG, in a temporary file removed after), puts it in the viewer's
 *  page titled `title` and writes the page to path (om_file_write). */
om_kind cli_dot_html(om_dot_renderer *r, const char *dot_text, size_t len, const char *title,
		     const char *path, om_status *st);

#endif
