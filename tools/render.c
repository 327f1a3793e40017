/* render.c — dot text to SVG/PNG through Graphviz's own library, in process (no shell): within
 * the depth dot can lay out, on a thread with a large stack, into memory, then written with
 * om_file_write (a temporary file renamed over the destination). */
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "render.h"
#include "status.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	/* Graphviz 2.42 keeps a graph's highest rank in a short: a layout deeper than 32767
	 * ranks allocates with a negative count and crashes in mincross (a 16,400-node chain
	 * with edge labels, which take ranks of their own, is enough). The longest path is a
	 * lower bound of the ranks dot uses (its ranking can hang branches below it): keep a
	 * margin. */
	MAX_RANKS = 32000,
	/* dot's layout recurses along paths (network simplex's tree walks): a thread of our own
	 * with a large stack, whatever the caller's (only the pages touched are used) */
	LAYOUT_STACK = 512 << 20,
};

struct om_dot_renderer {
	GVC_t *gvc;
	char note[200];
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

const char *om_dot_render_note(const om_dot_renderer *r)
{
	return r ? r->note : "";
}

typedef struct depth_rec {
	Agrec_t h;
	long depth, indeg;
} depth_rec;

static depth_rec *rec(Agnode_t *n)
{
	return (depth_rec *)aggetrec(n, "om_depth", 0);
}

/* An edge dot ranks by: not a self-loop, not constraint=false. Its minlen (default 1). */
static long rank_len(Agedge_t *e, Agsym_t *constraint, Agsym_t *minlen)
{
	if (agtail(e) == aghead(e))
		return 0;
	const char *c = constraint ? agxget(e, constraint) : "";
	if (!strcmp(c, "false") || !strcmp(c, "0") || !strcmp(c, "no"))
		return 0;
	long len = minlen ? atol(agxget(e, minlen)) : 1;
	return len < 0 ? 0 : len > MAX_RANKS ? MAX_RANKS : len;
}

/* The longest path of g in ranks (edge minlens; every rank counted twice when `labels`: dot
 * gives edge labels ranks of their own). A cycle (dot reverses an edge of it) counts every
 * edge left. -1 when out of memory. */
static long longest_path(Agraph_t *g, bool labels)
{
	Agsym_t *constraint = agattr(g, AGEDGE, "constraint", NULL);
	Agsym_t *minlen = agattr(g, AGEDGE, "minlen", NULL);
	int nn = agnnodes(g);
	Agnode_t **queue = malloc(sizeof *queue * (size_t)(nn ? nn : 1));
	if (!queue)
		return -1;
	aginit(g, AGNODE, "om_depth", sizeof(depth_rec), 0);
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n))
		for (Agedge_t *e = agfstout(g, n); e; e = agnxtout(g, e))
			if (rank_len(e, constraint, minlen))
				rec(aghead(e))->indeg++;
	int head = 0, tail = 0;
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n))
		if (!rec(n)->indeg)
			queue[tail++] = n;
	long deepest = 0, left = 0;
	while (head < tail) {
		Agnode_t *n = queue[head++];
		depth_rec *r = rec(n);
		if (r->depth > deepest)
			deepest = r->depth;
		for (Agedge_t *e = agfstout(g, n); e; e = agnxtout(g, e)) {
			long len = rank_len(e, constraint, minlen);
			if (!len)
				continue;
			depth_rec *h = rec(aghead(e));
			if (h->depth < r->depth + len)
				h->depth = r->depth + len;
			if (!--h->indeg)
				queue[tail++] = aghead(e);
		}
	}
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n))
		for (Agedge_t *e = agfstout(g, n); rec(n)->indeg && e; e = agnxtout(g, e))
			left += rank_len(e, constraint, minlen); /* on or behind a cycle */
	agclean(g, AGNODE, "om_depth");
	free(queue);
	return (deepest + left) * (labels ? 2 : 1);
}

/* Whether some edge has a non-empty label; with `drop`, empties them all. */
static bool edge_labels(Agraph_t *g, bool drop)
{
	Agsym_t *label = agattr(g, AGEDGE, "label", NULL);
	bool any = false;
	for (Agnode_t *n = label ? agfstnode(g) : NULL; n; n = agnxtnode(g, n))
		for (Agedge_t *e = agfstout(g, n); e; e = agnxtout(g, e)) {
			any |= *agxget(e, label) != 0;
			if (drop)
				agxset(e, label, "");
		}
	return any;
}

typedef struct job {
	GVC_t *gvc;
	Agraph_t *g;
	const char *format;
	FILE *f;
	int layout_rc, render_rc;
} job;

static void *layout_and_render(void *arg)
{
	job *j = arg;
	j->layout_rc = gvLayout(j->gvc, j->g, "dot");
	if (!j->layout_rc) {
		j->render_rc = gvRender(j->gvc, j->g, j->format, j->f);
		gvFreeLayout(j->gvc, j->g);
	}
	return NULL;
}

/* On a thread with LAYOUT_STACK of stack; on this one when no such thread can be made. */
static void run_job(job *j)
{
	pthread_attr_t a;
	pthread_t t;
	bool threaded = false;
	if (pthread_attr_init(&a) == 0) {
		threaded = pthread_attr_setstacksize(&a, LAYOUT_STACK) == 0 &&
			   pthread_create(&t, &a, layout_and_render, j) == 0;
		pthread_attr_destroy(&a);
	}
	if (threaded)
		pthread_join(t, NULL);
	else
		layout_and_render(j);
}

om_kind om_dot_render(om_dot_renderer *r, const char *dot_text, size_t len, const char *format,
		      const char *path, om_status *st)
{
	(void)len;
	if (!r)
		return cmd_error(st, OM_ERR_NOMEM, "Graphviz: no context");
	r->note[0] = 0;
	Agraph_t *g = agmemread(dot_text);
	if (!g)
		return cmd_error(st, OM_ERR_INTERNAL, "Graphviz could not parse the dot text");
	bool labels = edge_labels(g, false);
	long ranks = longest_path(g, labels);
	if (ranks > MAX_RANKS && labels && longest_path(g, false) <= MAX_RANKS) {
		edge_labels(g, true);
		snprintf(r->note, sizeof r->note,
			 "edge labels left out: with them the graph is %ld ranks deep, over the "
			 "%d Graphviz's dot lays out", ranks, MAX_RANKS);
		ranks = longest_path(g, false);
	}
	om_kind rc = OM_OK;
	char *out = NULL;
	size_t nout = 0;
	FILE *f = NULL;
	if (ranks < 0)
		rc = cmd_error(st, OM_ERR_NOMEM, "out of memory");
	else if (ranks > MAX_RANKS)
		rc = cmd_error(st, OM_ERR_UNSUPPORTED,
			      "the graph is %ld ranks deep (its longest path), over the %d "
			      "Graphviz's dot lays out: write the dot text (-o FILE.dot) instead",
			      ranks, MAX_RANKS);
	else if (!(f = open_memstream(&out, &nout)))
		rc = cmd_error(st, OM_ERR_NOMEM, "out of memory");
	else {
		job j = {.gvc = r->gvc, .g = g, .format = format, .f = f};
		run_job(&j);
		const bool written = !fclose(f);
		if (j.layout_rc)
			rc = cmd_error(st, OM_ERR_INTERNAL, "Graphviz layout failed");
		else if (j.render_rc || !written)
			rc = cmd_error(st, OM_ERR_IO, "Graphviz could not render %s as %s",
				      path, format);
		else
			rc = om_file_write(path, out, nout, st);
	}
	free(out);
	agclose(g);
	return rc;
}
