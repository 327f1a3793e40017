/* render.c — dot text to SVG/PNG through Graphviz's own library, in process (no shell). */
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "dot.h"

#include <stdlib.h>

struct om_dot_renderer {
	GVC_t *gvc;
};

om_dot_renderer *om_dot_renderer_new(void)
{
	om_dot_renderer *r = calloc(1, sizeof *r);
	if (r && !(r->gvc = gvContext())) {
		free(r);
		r = NULL;
	}
	return r;
}

void om_dot_renderer_free(om_dot_renderer *r)
{
	if (!r)
		return;
	gvFreeContext(r->gvc);
	free(r);
}

om_kind om_dot_render(om_dot_renderer *r, const char *dot_text, size_t len, const char *format,
		      const char *path, om_status *st)
{
	(void)len;
	if (!r)
		return om_error(st, OM_ERR_NOMEM, NULL, "Graphviz: no context");
	GVC_t *gvc = r->gvc;
	Agraph_t *g = agmemread(dot_text);
	if (!g)
		return om_error(st, OM_ERR_INTERNAL, NULL, "Graphviz could not parse the dot text");
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
	return rc;
}
