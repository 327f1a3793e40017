/* render.c — dot text to SVG/PNG through Graphviz's own library, in process (no shell). */
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "dot.h"

om_kind om_dot_render(const char *dot_text, size_t len, const char *format, const char *path,
		      om_status *st)
{
	(void)len;
	GVC_t *gvc = gvContext();
	if (!gvc)
		return om_error(st, OM_ERR_NOMEM, NULL, "Graphviz: no context");
	Agraph_t *g = agmemread(dot_text);
	if (!g) {
		gvFreeContext(gvc);
		return om_error(st, OM_ERR_INTERNAL, NULL, "Graphviz could not parse the dot text");
	}
	om_kind rc = OM_OK;
	if (gvLayout(gvc, g, "dot") != 0)
		rc = om_error(st, OM_ERR_INTERNAL, NULL, "Graphviz layout failed");
	else {
		if (gvRenderFilename(gvc, g, format, path) != 0)
			rc = om_error(st, OM_ERR_IO, NULL, "Graphviz could not write %s as %s", path,
				      format);
		gvFreeLayout(gvc, g);
	}
	agclose(g);
	gvFreeContext(gvc);
	return rc;
}
