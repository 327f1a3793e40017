/* dot.c — a model as Graphviz dot text: op boxes, typed edges, summarized constants,
 * subgraphs as clusters, and the --plan and --diff annotations. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dot.h"
#include "dot_wide.h"
#include "registry.h"

enum {
	MAX_CONST_LINES = 3,
	LARGE_GRAPH = 1000, /* nodes: above this, long edges become reference stubs */
	MAX_SPAN = 40,      /* in a large graph, the longest edge drawn (in ranks) */
	/* dot lays out an edge spanning k ranks as a chain of k virtual nodes (2k with edge
	 * labels); crossing minimization compares the nodes of neighbouring ranks pairwise and
	 * x positioning runs network simplex over all of them. Beyond these budgets (see
	 * layout_fits), the longest edges become reference stubs until the rest fits.
	 * DenseNet-121 (simplified): 2.3e6 and 23000, minutes of layout; the models of
	 * ../shared/models and ResNet, MobileNet, ShuffleNet, ViT, a transformer: at most
	 * 9600 and 1100. */
	CROSS_BUDGET = 100000,
	VIRTUAL_BUDGET = 3000
};

/* name -> id of the drawn thing that produces it, per graph scope */
typedef struct producer {
	const char *name;
	char id[32];
	int32_t pos; /* producing node's index in its graph, nnodes + k for graph input k; -1 for
		      * a node only the diff has */
	UT_hash_handle hh;
} producer;

typedef struct scope {
	struct scope *parent;
	producer *map;
	const om_model *diff_model; /* in diff mode: the simplified model's graph at this level */
	const om_graph *diff_graph;
	int32_t *rank;    /* by node index, then graph inputs (plan_ranks) */
	int32_t max_span; /* longer edges (in ranks) from this scope's own producers: stubs */
} scope;

typedef struct writer {
	FILE *f;
	om_arena *arena;
	const om_dot_config *opt;
	om_dot_stats stats;
	int next_graph, next_stub;
	bool large; /* dot's layout time grows fast with edge length: long edges become stubs */
	bool dense; /* some graph exceeded the budgets: its longest edges became stubs */
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

/* a Constant node: its row's code (Constant's rows share it at every opset) */
static bool is_constant_node(const om_node *n)
{
	const om_op *op = om_op_find(n->domain, n->op, INT64_MAX);
	return op && op->code == OM_OPC_CONSTANT && n->nout == 1;
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

/* An edge for `count` values (more than 1: a bundle of a wide node's inputs, "×count"). */
static void edges(writer *w, const char *from, const char *to, const om_value *v, bool outer,
		  bool folded, int32_t count, const char *indent)
{
	FILE *f = w->f;
	const char *sep = "";
	fprintf(f, "%s%s -> %s [", indent, from, to);
	if (v && (v->type.kind == OM_TYPE_TENSOR || folded || count > 1)) {
		fputs("label=\"", f);
		if (v->type.kind == OM_TYPE_TENSOR)
			put_dims(f, &v->type);
		if (folded)
			fputs(" (folded)", f);
		if (count > 1)
			fprintf(f, " \u00d7%d", count);
		fputs("\"", f);
		sep = ", ";
	}
	if (outer)
		fprintf(f, "%sstyle=dashed", sep), sep = ", ";
	if (folded)
		fprintf(f, "%scolor=\"#c05000\", fontcolor=\"#c05000\"", sep), sep = ", ";
	if (v && w->opt && w->opt->attributes) { /* the tensor's name, for the HTML viewer */
		fprintf(f, "%stooltip=\"", sep);
		om_dot_escape(f, v->name);
		fputc('"', f);
	}
	fputs("];\n", f);
	w->stats.edges++;
}

static void edge(writer *w, const char *from, const char *to, const om_value *v, bool outer,
		 bool folded, const char *indent)
{
	edges(w, from, to, v, outer, folded, 1, indent);
}

/* A small grey note with a dotted edge to `to`: what a summary left out. */
static void note_edge(writer *w, const char *to, const char *text, const char *indent)
{
	char id[32];
	snprintf(id, sizeof id, "s%d", w->next_stub++);
	fprintf(w->f, "%s%s [shape=plaintext, fontsize=8, fontcolor=\"#555555\", label=\"%s\"];\n",
		indent, id, text);
	fprintf(w->f, "%s%s -> %s [style=dotted];\n", indent, id, to);
	w->stats.nodes++;
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
	fputc('"', f);
	if (w->opt && w->opt->attributes)
		om_dot_put_attributes(f, n);
	fprintf(f, "%s];\n", style);
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

/* In a large or dense graph an input produced far above its consumer is drawn as a small
 * reference stub beside the consumer: dot's layout cost grows quickly with edge length. */
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

/* Input i of n is drawn as an edge (or a stub): given and not a constant. */
static bool drawn_input(const om_node *n, int32_t i)
{
	return n->in[i] && !is_constant(om_graph_resolve(n->graph, n->in[i]));
}

/* The edge of input i of n (drawn as `id`, at index pos of its graph), standing for `count`
 * inputs from the same producer. */
static void input_edge(writer *w, const om_node *n, int32_t i, const char *id, int32_t pos,
		       const scope *sc, const om_graph *dg, int32_t count, const char *indent)
{
	const om_value *v = n->in[i];
	bool outer, folded = false;
	if (dg) {
		const om_node *dn = diff_match(dg, n);
		folded = diff_folded(dg, v) || (dn && i < dn->nin && dn->in[i] && dn->in[i]->init);
	}
	const producer *p = lookup(sc, v->name, &outer);
	if (p && !outer && pos >= 0 && p->pos >= 0 && sc->rank &&
	    sc->rank[pos] - sc->rank[p->pos] > sc->max_span)
		stub_edge(w, v, id, indent);
	else if (p)
		edges(w, p->id, id, v, outer, folded, count, indent);
}

/* A node with more than OM_DOT_WIDE drawn inputs: one edge per producer ("×k" when it gives k
 * of the inputs) for the OM_DOT_WIDE_SHOWN producers that give the most, and one note for the
 * rest, so that dot is never handed thousands of parallel edges. */
static void wide_inputs(writer *w, const om_node *n, const char *id, int32_t pos,
			const scope *sc, const om_graph *dg, const char *indent)
{
	const char **ids = malloc(sizeof *ids * (size_t)n->nin);
	om_dot_group *groups = malloc(sizeof *groups * (size_t)n->nin);
	const bool room = ids && groups;
	for (int32_t i = 0; i < n->nin && room; i++) {
		bool outer;
		const producer *p = drawn_input(n, i) ? lookup(sc, n->in[i]->name, &outer) : NULL;
		ids[i] = p ? p->id : NULL;
	}
	const int32_t ng = room ? om_dot_group_ids(ids, n->nin, groups) : -1;
	w->oom |= ng < 0;
	int64_t more = 0;
	for (int32_t k = 0; k < ng; k++)
		if (k < OM_DOT_WIDE_SHOWN)
			input_edge(w, n, groups[k].first, id, pos, sc, dg, groups[k].count, indent);
		else
			more += groups[k].count;
	if (more) {
		char text[96];
		snprintf(text, sizeof text, "+%" PRId64 " more inputs from %d producer%s", more,
			 ng - OM_DOT_WIDE_SHOWN, ng - OM_DOT_WIDE_SHOWN > 1 ? "s" : "");
		note_edge(w, id, text, indent);
	}
	free(ids);
	free(groups);
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
	int32_t drawn = 0;
	for (int32_t i = 0; i < n->nin; i++)
		drawn += drawn_input(n, i);
	if (drawn > OM_DOT_WIDE)
		wide_inputs(w, n, id, pos, sc, dg, indent);
	for (int32_t i = 0; i < n->nin && drawn <= OM_DOT_WIDE; i++)
		if (drawn_input(n, i))
			input_edge(w, n, i, id, pos, sc, dg, 1, indent);
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

typedef struct span {
	int32_t from, to; /* producer and consumer: node index, nnodes + k for graph input k */
	int32_t len;      /* rank[to] - rank[from] */
} span;

static void add_span(const scope *sc, const char *name, int32_t to, span *spans, int32_t *n)
{
	bool outer;
	const producer *p = lookup(sc, name, &outer);
	if (p && !outer)
		spans[(*n)++] = (span){p->pos, to, 0};
}

static int cmp_length(const void *a, const void *b)
{
	int32_t x = ((const span *)a)->len, y = ((const span *)b)->len;
	return (x > y) - (x < y);
}

/* Can dot lay out the edges spans[0..n) quickly? The number of edges passing over each rank
 * (virtual nodes there): their squares summed within CROSS_BUDGET, their sum within
 * VIRTUAL_BUDGET. `width` has room for ranks 0..maxrank + 1. */
static bool layout_fits(const span *spans, int32_t n, const int32_t *rank, int32_t maxrank,
			   int32_t *width)
{
	memset(width, 0, sizeof *width * (size_t)(maxrank + 2));
	for (int32_t i = 0; i < n; i++)
		if (spans[i].len > 1) {
			width[rank[spans[i].from] + 1]++;
			width[rank[spans[i].to]]--;
		}
	int64_t cost = 0, run = 0, virt = 0;
	for (int32_t r = 0; r <= maxrank + 1; r++) {
		run += width[r];
		cost += run * run;
		virt += run;
	}
	return cost <= CROSS_BUDGET && virt <= VIRTUAL_BUDGET;
}

/* Ranks like dot's (about): each node one below its lowest input, nodes without inputs
 * (graph inputs, constant-fed nodes) just above their first consumer. Then the longest edge
 * (in ranks) drawn in g: every edge while the layout cost of the drawn ones stays within
 * the budgets, else the longest ones become stubs until the rest fits; in a large graph,
 * at most MAX_SPAN. Fills sc->rank (nnodes + ninputs entries) and sc->max_span. */
static void plan_ranks(writer *w, const om_graph *g, scope *sc)
{
	int32_t nr = g->nnodes + g->ninputs, cap = 0;
	for (int32_t i = 0; i < g->nnodes; i++)
		cap += g->nodes[i]->nin;
	sc->max_span = w->large ? MAX_SPAN : INT32_MAX;
	int32_t *rank = calloc((size_t)nr + 1, sizeof *rank);
	int32_t *width = malloc(sizeof *width * ((size_t)nr + 3));
	int32_t *first = malloc(sizeof *first * ((size_t)nr + 1));
	span *spans = malloc(sizeof *spans * ((size_t)cap + 1));
	if (!rank || !width || !first || !spans) {
		w->oom = true;
		goto done;
	}
	scope tmp = {0};
	int32_t n = 0;
	for (int32_t i = 0; i < g->ninputs && !w->oom; i++)
		if (!(g->inputs[i]->flags & OM_VALUE_INITIALIZER))
			define(w, &tmp, g->inputs[i]->name, "", g->nnodes + i);
	for (int32_t i = 0; i < g->nnodes && !w->oom; i++) {
		const om_node *nd = g->nodes[i];
		first[i] = -1;
		if (is_constant_node(nd))
			continue;
		int32_t n0 = n;
		for (int32_t k = 0; k < nd->nin; k++)
			if (nd->in[k] && !is_constant(om_graph_resolve(g, nd->in[k])))
				add_span(&tmp, nd->in[k]->name, i, spans, &n);
		for (int32_t k = n0; k < n; k++)
			if (rank[i] < rank[spans[k].from] + 1)
				rank[i] = rank[spans[k].from] + 1;
		first[i] = n0 < n ? -1 : INT32_MAX; /* -1: has inputs; else its first consumer */
		for (int32_t k = 0; k < nd->nout; k++)
			if (nd->out[k])
				define(w, &tmp, nd->out[k]->name, "", i);
	}
	HASH_CLEAR(hh, tmp.map);
	for (int32_t i = g->nnodes; i < nr; i++)
		first[i] = INT32_MAX;
	for (int32_t k = 0; k < n; k++) /* sources move down to their first consumer */
		if (first[spans[k].from] >= 0 && first[spans[k].from] > rank[spans[k].to])
			first[spans[k].from] = rank[spans[k].to];
	int32_t maxrank = 0;
	for (int32_t i = 0; i < nr; i++) {
		if (first[i] >= 0 && first[i] != INT32_MAX)
			rank[i] = first[i] - 1;
		maxrank = rank[i] > maxrank ? rank[i] : maxrank;
	}
	for (int32_t k = 0; k < n; k++)
		spans[k].len = rank[spans[k].to] - rank[spans[k].from];
	qsort(spans, (size_t)n, sizeof *spans, cmp_length);
	int32_t kept = n; /* the edges drawn without a budget: spans[0..kept) */
	while (kept > 0 && spans[kept - 1].len > sc->max_span)
		kept--;
	if (!layout_fits(spans, kept, rank, maxrank, width)) {
		/* binary search for the most edges that fit: spans[0..lo) fit, [0..hi) do not */
		int32_t lo = 0, hi = kept;
		while (hi - lo > 1) {
			int32_t mid = lo + (hi - lo) / 2;
			if (layout_fits(spans, mid, rank, maxrank, width))
				lo = mid;
			else
				hi = mid;
		}
		/* the edges as long as the first one that does not fit all become stubs */
		int32_t limit = spans[lo].len - 1;
		sc->max_span = limit < 1 ? 1 : limit;
		w->dense = true;
	}
done:
	free(width);
	free(first);
	free(spans);
	sc->rank = rank;
}

/* The items of g (nodes, then graph inputs, as plan_ranks counts them) left out of ranks too
 * wide for dot (om_dot_hide_wide_ranks): a box per such rank says how many, and the values
 * they produce are drawn as coming from it. NULL when none (or out of memory: w->oom). */
static bool *hide_wide(writer *w, const om_graph *g, const scope *sc, int gid,
		       const char *indent)
{
	const int32_t nr = g->nnodes + g->ninputs;
	bool *drawn = malloc((size_t)nr + 1), *hidden = malloc((size_t)nr + 1);
	const bool room = drawn && hidden;
	for (int32_t i = 0; i < nr && room; i++)
		drawn[i] = i < g->nnodes ? !is_constant_node(g->nodes[i])
					 : !(g->inputs[i - g->nnodes]->flags & OM_VALUE_INITIALIZER);
	const int32_t nhidden = room && sc->rank ? om_dot_hide_wide_ranks(sc->rank, drawn, nr,
									   hidden)
						 : -1;
	free(drawn);
	if (nhidden <= 0) {
		w->oom |= nhidden < 0;
		free(hidden);
		return NULL;
	}
	int32_t maxrank = 0;
	for (int32_t i = 0; i < nr; i++)
		maxrank = hidden[i] && sc->rank[i] > maxrank ? sc->rank[i] : maxrank;
	int32_t(*count)[2] = calloc((size_t)maxrank + 1, sizeof *count); /* nodes, inputs */
	if (!count) {
		w->oom = true;
		free(hidden);
		return NULL;
	}
	for (int32_t i = 0; i < nr; i++)
		if (hidden[i])
			count[sc->rank[i]][i >= g->nnodes]++;
	for (int32_t r = 0; r <= maxrank; r++) {
		if (!count[r][0] && !count[r][1])
			continue;
		fprintf(w->f, "%sg%d_more%d [style=\"rounded,dashed\", fontcolor=\"#555555\", "
			"label=\"", indent, gid, r);
		if (count[r][0])
			fprintf(w->f, "+%d more nodes%s", count[r][0], count[r][1] ? "\\n" : "");
		if (count[r][1])
			fprintf(w->f, "+%d more graph inputs", count[r][1]);
		fputs("\"];\n", w->f);
		w->stats.nodes++;
	}
	free(count);
	return hidden;
}

/* The graph outputs of g from OM_DOT_WIDE_SHOWN on, when there are more than OM_DOT_WIDE:
 * one ellipse, with an edge from each of the OM_DOT_WIDE_SHOWN producers of the most. */
static void wide_outputs(writer *w, const om_graph *g, const scope *sc, int gid,
			 const char *indent)
{
	const int32_t n = g->noutputs - OM_DOT_WIDE_SHOWN;
	const char **ids = malloc(sizeof *ids * (size_t)n);
	om_dot_group *groups = malloc(sizeof *groups * (size_t)n);
	const bool room = ids && groups;
	for (int32_t i = 0; i < n && room; i++) {
		bool outer;
		const producer *p = lookup(sc, g->outputs[OM_DOT_WIDE_SHOWN + i]->name, &outer);
		ids[i] = p ? p->id : NULL;
	}
	const int32_t ng = room ? om_dot_group_ids(ids, n, groups) : -1;
	w->oom |= ng < 0;
	char id[32];
	snprintf(id, sizeof id, "g%d_outmore", gid);
	fprintf(w->f, "%s%s [shape=ellipse, style=filled, fillcolor=\"#9fc5e8\", "
		"label=\"+%d more outputs\"];\n", indent, id, n);
	w->stats.nodes++;
	for (int32_t k = 0; k < ng && k < OM_DOT_WIDE_SHOWN; k++) {
		const om_value *v = g->outputs[OM_DOT_WIDE_SHOWN + groups[k].first];
		bool outer;
		const producer *p = lookup(sc, v->name, &outer);
		edges(w, p->id, id, v, outer, false, groups[k].count, indent);
	}
	free(ids);
	free(groups);
}

static void write_graph(writer *w, const om_graph *g, scope *parent, const om_graph *dg,
			const char *indent)
{
	FILE *f = w->f;
	int gid = w->next_graph++;
	scope sc = {.parent = parent};
	plan_ranks(w, g, &sc);
	bool *hidden = hide_wide(w, g, &sc, gid, indent);
	char id[32];
	for (int32_t i = 0; i < g->ninputs; i++) {
		const om_value *v = g->inputs[i];
		if (v->flags & OM_VALUE_INITIALIZER)
			continue; /* an input with a default: summarized as a constant */
		if (hidden && hidden[g->nnodes + i]) {
			snprintf(id, sizeof id, "g%d_more%d", gid, sc.rank[g->nnodes + i]);
			define(w, &sc, v->name, id, g->nnodes + i);
			continue;
		}
		snprintf(id, sizeof id, "g%d_in%d", gid, i);
		fprintf(f, "%s%s [shape=ellipse, style=filled, fillcolor=\"#b6d7a8\", label=\"",
			indent, id);
		om_dot_escape(f, v->name);
		fputs("\\n", f);
		put_dims(f, &v->type);
		fputs("\"];\n", f);
		w->stats.nodes++;
		define(w, &sc, v->name, id, g->nnodes + i);
	}
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		if (is_constant_node(n))
			continue;
		if (hidden && hidden[i]) { /* its outputs come from its rank's box */
			snprintf(id, sizeof id, "g%d_more%d", gid, sc.rank[i]);
			for (int32_t o = 0; o < n->nout; o++)
				if (n->out[o])
					define(w, &sc, n->out[o]->name, id, i);
			continue;
		}
		snprintf(id, sizeof id, "g%d_n%d", gid, i);
		draw_node(w, n, id, i, &sc, dg, false, indent);
	}
	if (dg) /* nodes that only the simplified model has */
		for (int32_t i = 0; i < dg->nnodes; i++) {
			const om_node *n = dg->nodes[i];
			if (is_constant_node(n) || !diff_is_new(g, n))
				continue;
			snprintf(id, sizeof id, "g%d_new%d", gid, i);
			draw_node(w, n, id, -1, &sc, NULL, true, indent);
		}
	const bool wide = g->noutputs > OM_DOT_WIDE;
	for (int32_t i = 0; i < (wide ? OM_DOT_WIDE_SHOWN : g->noutputs); i++) {
		const om_value *v = g->outputs[i];
		snprintf(id, sizeof id, "g%d_out%d", gid, i);
		fprintf(f, "%s%s [shape=ellipse, style=filled, fillcolor=\"#9fc5e8\", label=\"",
			indent, id);
		om_dot_escape(f, v->name);
		fputs("\"];\n", f);
		w->stats.nodes++;
		bool outer;
		const producer *p = lookup(&sc, v->name, &outer);
		if (p) /* dot puts an output just below its producer */
			edge(w, p->id, id, v, outer, false, indent);
	}
	if (wide)
		wide_outputs(w, g, &sc, gid, indent);
	HASH_CLEAR(hh, sc.map);
	free(sc.rank);
	free(hidden);
}

om_kind om_dot_write(const om_model *m, const om_dot_config *opt, FILE *f, om_dot_stats *stats,
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
	scope probe = {0};
	plan_ranks(&w, g, &probe); /* sets w.dense */
	free(probe.rank);
	if (w.large || w.dense) /* keep the layout of very large or dense graphs fast */
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
