/* dot.c — a model as Graphviz dot text: op boxes, typed edges, summarized constants,
 * subgraphs as clusters, and the --plan and --diff annotations. */
#include <inttypes.h>
#include <string.h>

#include "dot.h"

enum {
	MAX_CONST_LINES = 3,
	LARGE_GRAPH = 1000, /* nodes: above this, long edges become reference stubs */
	MAX_SPAN = 40       /* in a large graph, the longest edge drawn (in node positions) */
};

/* name -> id of the drawn thing that produces it, per graph scope */
typedef struct producer {
	const char *name;
	char id[32];
	int32_t pos; /* position of the producing node in its graph; -1 for a graph input */
	UT_hash_handle hh;
} producer;

typedef struct scope {
	struct scope *parent;
	producer *map;
	const om_model *diff_model; /* in diff mode: the simplified model's graph at this level */
	const om_graph *diff_graph;
} scope;

typedef struct writer {
	FILE *f;
	om_arena *arena;
	const om_dot_options *opt;
	om_dot_stats stats;
	int next_graph, next_stub;
	bool large; /* dot's layout time grows fast with edge length: long edges become stubs */
	bool oom;
} writer;

void om_dot_escape(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p) {
		unsigned c = *p;
		int len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
			: (c & 0xf8) == 0xf0 ? 4 : 0;
		bool ok = len > 0;
		for (int k = 1; ok && k < len; k++)
			ok = (p[k] & 0xc0) == 0x80;
		if (!ok) { /* invalid UTF-8: U+FFFD */
			fputs("\xef\xbf\xbd", f);
			p++;
			continue;
		}
		if (len > 1) {
			fwrite(p, 1, (size_t)len, f);
			p += len;
			continue;
		}
		if (c == '"' || c == '\\')
			fputc('\\', f), fputc((int)c, f);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20 || c == 0x7f)
			fputc('?', f);
		else
			fputc((int)c, f);
		p++;
	}
}

static void put_dims(FILE *f, const om_type *t)
{
	fputs(om_dtype_name(t->elem), f);
	if (t->rank < 0)
		return;
	fputc('[', f);
	for (int32_t i = 0; i < t->rank; i++) {
		if (i)
			fputc(',', f);
		if (t->dims[i].value >= 0)
			fprintf(f, "%" PRId64, t->dims[i].value);
		else if (t->dims[i].param)
			om_dot_escape(f, t->dims[i].param);
		else
			fputc('?', f);
	}
	fputc(']', f);
}

static void put_tensor_summary(FILE *f, const om_tensor *t)
{
	fputs(om_dtype_name(t->dtype), f);
	fputc('[', f);
	for (int32_t i = 0; i < t->rank; i++)
		fprintf(f, i ? ",%" PRId64 : "%" PRId64, t->dims[i]);
	fputc(']', f);
	if (t->nbytes >= 1024 * 1024)
		fprintf(f, " %.1f MB", (double)t->nbytes / (1024.0 * 1024.0));
	else if (t->nbytes >= 1024)
		fprintf(f, " %.1f KB", (double)t->nbytes / 1024.0);
	else
		fprintf(f, " %zu B", t->nbytes);
}

static bool is_constant_node(const om_node *n)
{
	return !strcmp(n->op, "Constant") && !n->domain[0] && n->nout == 1;
}

/* The constant tensor behind v (initializer or Constant node), or NULL. */
static const om_tensor *constant_of(const om_value *v)
{
	if (v->init)
		return v->init;
	if (v->producer && is_constant_node(v->producer))
		return om_attr_tensor(v->producer, "value");
	return NULL;
}

static bool is_constant(const om_value *v)
{
	return v->init || (v->producer && is_constant_node(v->producer));
}

static void define(writer *w, scope *sc, const char *name, const char *id, int32_t pos)
{
	producer *p = NULL;
	HASH_FIND_STR(sc->map, name, p);
	if (!p) {
		p = om_arena_alloc(w->arena, sizeof *p);
		if (!p) {
			w->oom = true;
			return;
		}
		p->name = name;
		HASH_ADD_KEYPTR(hh, sc->map, p->name, strlen(p->name), p);
	}
	snprintf(p->id, sizeof p->id, "%s", id);
	p->pos = pos;
}

static const producer *lookup(const scope *sc, const char *name, bool *outer)
{
	*outer = false;
	for (; sc; sc = sc->parent, *outer = true) {
		producer *p = NULL;
		HASH_FIND_STR(sc->map, name, p);
		if (p)
			return p;
	}
	return NULL;
}

/* ---- diff bookkeeping ---------------------------------------------------------------------- */

/* A node of the original survives when the simplified graph has a node with the same op that
 * produces the same first output name. */
static const om_node *diff_match(const om_graph *dg, const om_node *n)
{
	if (!dg || !n->nout || !n->out[0])
		return NULL;
	const om_value *dv = om_graph_find(dg, n->out[0]->name);
	if (dv && dv->producer && !strcmp(dv->producer->op, n->op) &&
	    !strcmp(dv->producer->domain, n->domain))
		return dv->producer;
	return NULL;
}

static bool diff_folded(const om_graph *dg, const om_value *v)
{
	const om_value *dv = dg ? om_graph_find(dg, v->name) : NULL;
	return dv && dv->init && !v->init;
}

/* Is node n of the simplified graph new (no node of the original with its op and output)? */
static bool diff_is_new(const om_graph *og, const om_node *n)
{
	if (!n->nout || !n->out[0])
		return true;
	const om_value *ov = om_graph_find(og, n->out[0]->name);
	return !(ov && ov->producer && !strcmp(ov->producer->op, n->op));
}

/* ---- drawing ------------------------------------------------------------------------------- */

static void write_graph(writer *w, const om_graph *g, scope *parent, const om_graph *dg,
			const char *indent);

static void edge(writer *w, const char *from, const char *to, const om_value *v, bool outer,
		 bool folded, const char *indent)
{
	FILE *f = w->f;
	const char *sep = "";
	fprintf(f, "%s%s -> %s [", indent, from, to);
	if (v && (v->type.kind == OM_TYPE_TENSOR || folded)) {
		fputs("label=\"", f);
		if (v->type.kind == OM_TYPE_TENSOR)
			put_dims(f, &v->type);
		if (folded)
			fputs(" (folded)", f);
		fputs("\"", f);
		sep = ", ";
	}
	if (outer)
		fprintf(f, "%sstyle=dashed", sep), sep = ", ";
	if (folded)
		fprintf(f, "%scolor=\"#c05000\", fontcolor=\"#c05000\"", sep);
	fputs("];\n", f);
	w->stats.edges++;
}

static void node_box(writer *w, const om_node *n, const char *id, const char *style,
		     const char *indent)
{
	FILE *f = w->f;
	fprintf(f, "%s%s [label=\"", indent, id);
	om_dot_escape(f, n->domain[0] ? n->domain : "");
	if (n->domain[0])
		fputc('.', f);
	om_dot_escape(f, n->op);
	if (n->name[0]) {
		fputs("\\n", f);
		om_dot_escape(f, n->name);
	}
	int shown = 0, hidden = 0;
	for (int32_t i = 0; i < n->nin; i++) {
		const om_value *v = n->in[i] ? om_graph_resolve(n->graph, n->in[i]) : NULL;
		const om_tensor *t = v ? constant_of(v) : NULL;
		if (!t)
			continue;
		if (shown++ >= MAX_CONST_LINES) {
			hidden++;
			continue;
		}
		fputs("\\l", f);
		om_dot_escape(f, v->name);
		fputs(": ", f);
		put_tensor_summary(f, t);
	}
	if (hidden)
		fprintf(f, "\\l+%d more constants", hidden);
	const char *note = w->opt && w->opt->plan_node ? w->opt->plan_node(w->opt->plan_arg, n)
						       : NULL;
	if (note) {
		fputs(shown ? "\\l" : "\\n", f);
		om_dot_escape(f, note);
	}
	if (shown)
		fputs("\\l", f);
	fprintf(f, "\"%s];\n", style);
	w->stats.nodes++;
}

static const char *plan_style(writer *w, const om_node *n, char *buf, size_t size)
{
	static const char *const palette[] = {"#cfe2f3", "#d9ead3", "#fff2cc", "#f4cccc",
					      "#d9d2e9", "#fce5cd", "#d0e0e3", "#ead1dc"};
	om_dot_plan_value pv;
	if (!w->opt || !w->opt->plan_value || !n->nout || !n->out[0] ||
	    w->opt->plan_value(w->opt->plan_arg, n->out[0], &pv) || pv.buffer < 0)
		return "";
	snprintf(buf, size, ", style=\"filled%s\", fillcolor=\"%s\", xlabel=\"buf %d%s\"",
		 pv.is_view ? ",dashed" : "", palette[pv.buffer % 8], pv.buffer,
		 pv.is_view ? " (view)" : "");
	return buf;
}

/* In a large graph an input produced far above its consumer is drawn as a small reference
 * stub beside the consumer: dot's layout cost grows quickly with edge length. */
static void stub_edge(writer *w, const om_value *v, const char *to, const char *indent)
{
	char id[32];
	snprintf(id, sizeof id, "s%d", w->next_stub++);
	fprintf(w->f, "%s%s [shape=plaintext, fontsize=8, fontcolor=\"#555555\", label=\"\u2192 ",
		indent, id);
	om_dot_escape(w->f, v->name);
	fputs("\"];\n", w->f);
	fprintf(w->f, "%s%s -> %s [style=dotted];\n", indent, id, to);
	w->stats.nodes++;
	w->stats.edges++;
}

static void draw_node(writer *w, const om_node *n, const char *id, int32_t pos, scope *sc,
		      const om_graph *dg, bool is_new, const char *indent)
{
	char style[160] = "";
	if (is_new)
		snprintf(style, sizeof style, ", style=\"filled,bold\", fillcolor=\"#ffd8a8\"");
	else if (dg && !diff_match(dg, n))
		snprintf(style, sizeof style,
			 ", style=\"filled,dashed\", fillcolor=\"#eeeeee\", fontcolor=\"#999999\", "
			 "color=\"#aaaaaa\"");
	else
		plan_style(w, n, style, sizeof style);
	node_box(w, n, id, style, indent);
	for (int32_t i = 0; i < n->nin; i++) {
		const om_value *v = n->in[i];
		if (!v || is_constant(om_graph_resolve(n->graph, (om_value *)v)))
			continue;
		bool outer, folded = false;
		if (dg) {
			const om_node *dn = diff_match(dg, n);
			folded = diff_folded(dg, v) ||
				 (dn && i < dn->nin && dn->in[i] && dn->in[i]->init);
		}
		const producer *p = lookup(sc, v->name, &outer);
		if (p && w->large && !outer && pos - p->pos > MAX_SPAN)
			stub_edge(w, v, id, indent);
		else if (p)
			edge(w, p->id, id, v, outer, folded, indent);
	}
	for (int32_t i = 0; i < n->nout; i++)
		if (n->out[i])
			define(w, sc, n->out[i]->name, id, pos);
	/* subgraphs as clusters, linked to their node */
	for (int32_t a = 0; a < n->nattr; a++) {
		const om_attr *at = &n->attrs[a];
		const om_graph *subs[1] = {at->g};
		const om_graph *const *list = at->g ? subs : (const om_graph *const *)at->graphs;
		int64_t count = at->g ? 1 : (at->graphs ? at->n : 0);
		for (int64_t k = 0; k < count; k++) {
			int gid = w->next_graph++;
			fprintf(w->f, "%ssubgraph cluster_%d {\n%s  label=\"", indent, gid, indent);
			om_dot_escape(w->f, n->name[0] ? n->name : n->op);
			fputc('.', w->f);
			om_dot_escape(w->f, at->name);
			fprintf(w->f, "\"; style=rounded; color=\"#888888\";\n");
			char sub_indent[64];
			snprintf(sub_indent, sizeof sub_indent, "%s  ", indent);
			write_graph(w, list[k], sc, NULL, sub_indent);
			fprintf(w->f, "%s}\n", indent);
		}
	}
}

static void write_graph(writer *w, const om_graph *g, scope *parent, const om_graph *dg,
			const char *indent)
{
	FILE *f = w->f;
	int gid = w->next_graph++;
	scope sc = {.parent = parent};
	char id[32];
	for (int32_t i = 0; i < g->ninputs; i++) {
		const om_value *v = g->inputs[i];
		if (v->flags & OM_VALUE_INITIALIZER)
			continue; /* an input with a default: summarized as a constant */
		snprintf(id, sizeof id, "g%d_in%d", gid, i);
		fprintf(f, "%s%s [shape=ellipse, style=filled, fillcolor=\"#b6d7a8\", label=\"",
			indent, id);
		om_dot_escape(f, v->name);
		fputs("\\n", f);
		put_dims(f, &v->type);
		fputs("\"];\n", f);
		w->stats.nodes++;
		define(w, &sc, v->name, id, -1);
	}
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		if (is_constant_node(n))
			continue;
		snprintf(id, sizeof id, "g%d_n%d", gid, i);
		draw_node(w, n, id, i, &sc, dg, false, indent);
	}
	if (dg) /* nodes that only the simplified model has */
		for (int32_t i = 0; i < dg->nnodes; i++) {
			const om_node *n = dg->nodes[i];
			if (is_constant_node(n) || !diff_is_new(g, n))
				continue;
			snprintf(id, sizeof id, "g%d_new%d", gid, i);
			draw_node(w, n, id, i, &sc, NULL, true, indent);
		}
	for (int32_t i = 0; i < g->noutputs; i++) {
		const om_value *v = g->outputs[i];
		snprintf(id, sizeof id, "g%d_out%d", gid, i);
		fprintf(f, "%s%s [shape=ellipse, style=filled, fillcolor=\"#9fc5e8\", label=\"",
			indent, id);
		om_dot_escape(f, v->name);
		fputs("\"];\n", f);
		w->stats.nodes++;
		bool outer;
		const producer *p = lookup(&sc, v->name, &outer);
		if (p && w->large && !outer && g->nnodes - p->pos > MAX_SPAN)
			stub_edge(w, v, id, indent);
		else if (p)
			edge(w, p->id, id, v, outer, false, indent);
	}
	HASH_CLEAR(hh, sc.map);
}

om_kind om_dot_write(const om_model *m, const om_dot_options *opt, FILE *f, om_dot_stats *stats,
		     om_status *st)
{
	writer w = {.f = f, .arena = om_arena_new(), .opt = opt};
	if (!w.arena)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	const om_graph *g = m->graph;
	fputs("digraph omopt {\n  charset=\"UTF-8\"; rankdir=TB; newrank=true;\n"
	      "  node [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=10];\n"
	      "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n", f);
	w.large = g->nnodes > LARGE_GRAPH;
	if (w.large) /* keep the layout of very large graphs fast */
		fputs("  nslimit=2; nslimit1=2; mclimit=0.5; searchsize=10; remincross=false;\n", f);
	size_t init_bytes = 0;
	for (int32_t i = 0; i < g->ninits; i++)
		if (g->inits[i]->init)
			init_bytes += g->inits[i]->init->nbytes;
	fprintf(f, "  label=\"");
	om_dot_escape(f, g->name);
	fprintf(f, "\\n%d nodes, %d initializers (%.1f KB)%s\"; labelloc=t;\n", g->nnodes,
		g->ninits, (double)init_bytes / 1024.0,
		opt && opt->diff ? "\\nremoved: grey, new: orange, folded values: orange edges"
				 : "");
	write_graph(&w, g, NULL, opt && opt->diff ? opt->diff->graph : NULL, "  ");
	fputs("}\n", f);
	om_arena_free(w.arena);
	if (stats)
		*stats = w.stats;
	if (w.oom)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	if (ferror(f))
		return om_error(st, OM_ERR_IO, NULL, "could not write the dot text");
	return OM_OK;
}
