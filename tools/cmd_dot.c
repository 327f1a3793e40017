/* cmd_dot.c — `omopt dot MODEL [-o FILE.dot|.svg|.png] [--plan] [--diff SIMPLIFIED.onnx]`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dot.h"
#include "files.h"
#include "pass.h"
#include "plan_notes.h"

static const char usage_text[] =
	"usage: omopt dot MODEL [-o FILE.dot|FILE.svg|FILE.png] [--plan] [--diff SIMPLIFIED.onnx]\n"
	"\n"
	"Draws MODEL with Graphviz: op boxes labelled with op type and name, edges with element\n"
	"type and shape (symbols by name), initializers and constants summarized in the boxes that\n"
	"use them, subgraphs of If/Loop/Scan as clusters. In very large or densely connected\n"
	"graphs (DenseNet's skip edges) the longest edges are drawn as small \"\u2192 name\" stubs\n"
	"beside their consumer, so that Graphviz's layout finishes in seconds. Graphviz's dot\n"
	"lays out at most 32,000 ranks: deeper pictures leave the edge labels out (they take\n"
	"ranks of their own), deeper still are refused (the dot text can still be written).\n"
	"\n"
	"  -o FILE      .dot writes the dot text; .svg and .png are rendered in process by\n"
	"               Graphviz's library (written beside FILE, then renamed over it).\n"
	"               Default: dot text on standard output.\n"
	"  --plan       draw the executor's plan: buffers by colour, views dashed, kernel notes\n"
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
	int plan = 0;
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
		} else if (argv[i][0] == '-' || model_path) {
			fprintf(stderr, "omopt dot: unexpected argument '%s'\n%s", argv[i], usage_text);
			return 2;
		} else {
			model_path = argv[i];
		}
	}
	if (!model_path) {
		fputs(usage_text, stderr);
		return 2;
	}
	const char *fmt = out ? suffix(out) : "dot";
	if (strcmp(fmt, "dot") && strcmp(fmt, "gv") && strcmp(fmt, "svg") && strcmp(fmt, "png")) {
		fprintf(stderr, "omopt dot: -o wants a .dot, .svg or .png file, not '%s'\n", out);
		return 2;
	}
	om_status st = {0};
	om_model *m = NULL, *d = NULL;
	om_plan_notes *notes = NULL;
	int rc = 1;
	if (om_model_load(model_path, &m, &st) ||
	    (diff_path && om_model_load(diff_path, &d, &st)) ||
	    om_annotate_types(m, &st) || (d && om_annotate_types(d, &st)) ||
	    (plan && om_plan_notes_make(m, &notes, &st))) {
		rc = cmd_fail(&st);
		goto done;
	}
	om_dot_options opt = {.diff = d};
	if (notes)
		om_plan_notes_options(notes, &opt);
	bool text_out = !strcmp(fmt, "dot") || !strcmp(fmt, "gv");
	om_kind k;
	if (text_out && out) { /* beside it, then renamed over it */
		om_out_file o = {0};
		k = om_out_open_stream(&o, out, &st);
		if (!k)
			k = om_dot_write(m, &opt, o.f, NULL, &st);
		if (!k)
			k = om_out_commit(&o, &st);
		om_out_discard(&o);
	} else if (text_out) {
		k = om_dot_write(m, &opt, stdout, NULL, &st);
		if (!k && (fflush(stdout) || ferror(stdout)))
			k = om_error(&st, OM_ERR_IO, NULL, "cannot write the dot text");
	} else {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		k = f ? om_dot_write(m, &opt, f, NULL, &st)
		      : om_error(&st, OM_ERR_NOMEM, NULL, "out of memory");
		if (f && fclose(f) && !k)
			k = om_error(&st, OM_ERR_NOMEM, NULL, "out of memory");
		if (!k) {
			om_dot_renderer *r = om_dot_renderer_new();
			k = om_dot_render(r, text, len, fmt, out, &st);
			if (*om_dot_render_note(r))
				fprintf(stderr, "omopt dot: %s\n", om_dot_render_note(r));
			om_dot_renderer_free(r);
		}
		free(text);
	}
	rc = k ? cmd_fail(&st) : 0;
done:
	om_plan_notes_free(notes);
	om_model_free(m);
	om_model_free(d);
	return rc;
}
