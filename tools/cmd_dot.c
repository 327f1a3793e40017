/* cmd_dot.c — `omopt dot MODEL [-o FILE.dot|.svg|.png|.html] [--plan [--no-optimize]]
 * [--diff SIMPLIFIED.onnx]`. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dot_html.h"
#include "render.h"

static const char usage_text[] =
	"usage: omopt dot MODEL [-o FILE.dot|FILE.svg|FILE.png|FILE.html]\n"
	"                 [--diff SIMPLIFIED.onnx]\n"
	"                 [--plan [--no-optimize] [--threads N] [--layout L] [--exact]]\n"
	"\n"
	"Draws MODEL with Graphviz: op boxes labelled with op type and name, edges with element\n"
	"type and shape (symbols by name), initializers and constants summarized in the boxes that\n"
	"use them, subgraphs of If/Loop/Scan as clusters. In very large or densely connected\n"
	"graphs (DenseNet's skip edges) the longest edges are drawn as small \"\u2192 name\" stubs\n"
	"beside their consumer, so that Graphviz's layout finishes in seconds; so are wide\n"
	"graphs summarized: a node with over 100 inputs gets one edge per producer (\"\u00d7k\")\n"
	"for the 16 producers that give the most and a \"+N more\" note, over 100 graph outputs\n"
	"or nodes of one level keep 16 drawn and one \"+N more\" box. Graphviz's dot\n"
	"lays out at most 32,000 ranks: deeper pictures leave the edge labels out (they take\n"
	"ranks of their own), deeper still are refused (the dot text can still be written).\n"
	"\n"
	"  -o FILE      .dot writes the dot text; .svg and .png are rendered in process by\n"
	"               Graphviz's library (written beside FILE, then renamed over it).\n"
	"               .html writes one self-contained page (no network: the SVG inline with\n"
	"               its own script) that pans (drag), zooms (wheel), searches a node or a\n"
	"               tensor by name, shows a node's attributes and its inputs' and\n"
	"               outputs' names, dtypes and shapes on click, and collapses repeated\n"
	"               blocks (names that differ in numbers only); with --diff and --plan\n"
	"               their colours. Default: dot text on standard output.\n"
	"  --plan       draw the executor's plan: buffers by colour, views dashed, kernel notes;\n"
	"               the model is optimized first as `omopt run` does (om_optimize's fusions:\n"
	"               the plan that runs), unless --no-optimize\n"
	"  --no-optimize  with --plan: the plan of the model as loaded\n"
	"  --threads N, --layout L, --exact\n"
	"               with --plan: the plan of `omopt run` with these options (which convs\n"
	"               run on oneDNN and the layout between them depend on them); default 1\n"
	"               thread, layout auto, fast mode\n"
	"  --diff S     draw S (a simplified MODEL) against MODEL: removed nodes grey, new nodes\n"
	"               orange, folded values on orange edges\n";

static const char *suffix(const char *path)
{
	const char *dot = strrchr(path, '.');
	return dot ? dot + 1 : "";
}

int cmd_dot(int argc, char **argv)
{
	const char *model_path = NULL, *out = NULL, *diff_path = NULL;
	int plan = 0, no_optimize = 0;
	om_session_options so = {0};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "--diff") && i + 1 < argc) {
			diff_path = argv[++i];
		} else if (!strcmp(argv[i], "--plan")) {
			plan = 1;
		} else if (!strcmp(argv[i], "--no-optimize")) {
			no_optimize = 1;
		} else if (!strcmp(argv[i], "--exact")) {
			so.exact = 1;
		} else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			if (cmd_parse_count(argv[++i], 1, OM_MAX_THREADS, &so.threads))
				return cmd_usage_error("dot", "bad thread count '%s'", argv[i]);
		} else if (!strcmp(argv[i], "--layout") && i + 1 < argc) {
			if (cmd_parse_layout(argv[++i], &so.layout))
				return cmd_usage_error("dot", "unknown layout '%s' (" CMD_LAYOUTS ")",
						       argv[i]);
		} else if (argv[i][0] == '-' || model_path) {
			return cmd_usage_error("dot", "unexpected argument '%s'", argv[i]);
		} else {
			model_path = argv[i];
		}
	}
	if (!model_path)
		return cmd_usage_error("dot", "needs a model");
	if (!plan && (no_optimize || so.threads || so.layout || so.exact))
		return cmd_usage_error("dot", "--no-optimize, --threads, --layout and --exact are "
					      "for --plan");
	if (so.exact && so.layout)
		return cmd_usage_error("dot", "--layout is for fast mode (exact mode keeps every "
					      "value plain)");
	const char *fmt = out ? suffix(out) : "dot";
	const bool html = !strcmp(fmt, "html") || !strcmp(fmt, "htm");
	if (strcmp(fmt, "dot") && strcmp(fmt, "gv") && strcmp(fmt, "svg") && strcmp(fmt, "png") &&
	    !html) {
		fprintf(stderr, "omopt dot: -o wants a .dot, .svg, .png or .html file, not '%s'\n",
			out);
		return 2;
	}
	om_status st = {0};
	om_model *m = NULL, *d = NULL;
	char *text = NULL;
	size_t len = 0;
	om_kind k = om_model_load(model_path, &m, &st);
	const om_simplify_options oo = {.exact = so.exact}; /* the plan omopt run would make */
	if (!k && plan && !no_optimize && om_optimize(m, &oo, &st)) {
		/* as omopt run: never fatal, the plan of the model as loaded instead */
		fprintf(stderr, "omopt dot: not optimized (%s: %s); drawing the model as loaded\n",
			om_kind_name(st.kind), st.msg);
		om_model_free(m);
		m = NULL;
		st = (om_status){0};
		k = om_model_load(model_path, &m, &st);
	}
	if (!k && diff_path)
		k = om_model_load(diff_path, &d, &st);
	if (!k)
		k = om_model_dot(m, &(om_dot_options){.plan = plan, .diff = d, .session = &so,
						      .attributes = html},
				 &text, &len, &st);
	if (k) {
		/* nothing drawn */
	} else if (!strcmp(fmt, "dot") || !strcmp(fmt, "gv")) {
		if (out)
			k = om_file_write(out, text, len, &st);
		else if (fwrite(text, 1, len, stdout) != len || fflush(stdout))
			k = cmd_error(&st, OM_ERR_IO, "cannot write the dot text");
	} else {
		om_dot_renderer *r = om_dot_renderer_new();
		char title[1024];
		snprintf(title, sizeof title, "%s%s%s%s \u2014 omopt dot", model_path,
			 d ? " against " : "", d ? diff_path : "", plan ? " (plan)" : "");
		k = !r ? cmd_error(&st, OM_ERR_NOMEM, "Graphviz: no context")
		    : html ? cli_dot_html(r, text, len, title, out, &st)
			   : om_dot_render(r, text, len, fmt, out, &st);
		if (r && *om_dot_render_note(r))
			fprintf(stderr, "omopt dot: %s\n", om_dot_render_note(r));
		om_dot_renderer_free(r);
	}
	om_free(text);
	om_model_free(m);
	om_model_free(d);
	return k ? cmd_fail(&st) : 0;
}
