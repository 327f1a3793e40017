/* compare.c — om_compare: every value two models share by name, from one run of copies of
 * both that output them all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

void om_compare_report_free(om_compare_report *rep)
{
	if (!rep)
		return;
	free(rep->values);
	*rep = (om_compare_report){.first_over = -1};
}

/* name -> output index of a session */
typedef struct slot {
	const char *name;
	int index;
	UT_hash_handle hh;
} slot;

static om_kind index_outputs(const om_session *s, slot **map, slot *items, om_status *st)
{
	for (int i = 0; i < om_session_output_count(s); i++) {
		items[i] = (slot){.name = om_session_output_name(s, i), .index = i};
		slot *old = NULL;
		HASH_FIND_STR(*map, items[i].name, old);
		if (old)
			continue;
		HASH_ADD_KEYPTR(hh, *map, items[i].name, strlen(items[i].name), &items[i]);
		HASH_FIND_STR(*map, items[i].name, old);
		if (!old)
			return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	return OM_OK;
}

static int output_index(slot *map, const char *name)
{
	slot *s = NULL;
	HASH_FIND_STR(map, name, s);
	return s ? s->index : -1;
}

/* The names of a's node outputs that b computes or holds (not b's graph inputs). */
static om_kind shared_names(const om_model *a, const om_model *b, const char ***names, int *n,
			    om_status *st)
{
	const om_graph *ga = a->graph, *gb = b->graph;
	int cap = 0;
	for (int32_t i = 0; i < ga->nnodes; i++)
		cap += ga->nodes[i]->nout;
	*n = 0;
	if (!(*names = malloc(sizeof **names * (size_t)(cap ? cap : 1))))
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	for (int32_t i = 0; i < ga->nnodes; i++)
		for (int32_t k = 0; k < ga->nodes[i]->nout; k++) {
			const om_value *v = ga->nodes[i]->out[k];
			const om_value *w = v ? om_graph_find(gb, v->name) : NULL;
			if (w && (w->producer || (w->init && !(w->flags & OM_VALUE_GRAPH_INPUT))))
				(*names)[(*n)++] = v->name;
		}
	return OM_OK;
}

typedef struct cmp {
	const om_check_options *opt;
	om_model *ea, *eb;
	om_session *sa, *sb;
	om_tensor *oa, *ob;
	int na, nb;
	slot *map_a, *map_b, *items_a, *items_b;
} cmp;

static void cmp_free(cmp *c)
{
	HASH_CLEAR(hh, c->map_a);
	HASH_CLEAR(hh, c->map_b);
	free(c->items_a);
	free(c->items_b);
	om_outputs_free(c->oa, c->na);
	om_outputs_free(c->ob, c->nb);
	om_session_free(c->sa);
	om_session_free(c->sb);
	om_model_free(c->ea);
	om_model_free(c->eb);
}

/* The values in ea's order. */
static om_kind collect(cmp *c, const om_model *a, const om_model *b, om_compare_report *rep,
		       om_status *st)
{
	const om_graph *g = c->ea->graph;
	int cap = 0;
	for (int32_t i = 0; i < g->nnodes; i++)
		cap += g->nodes[i]->nout;
	if (!(rep->values = calloc((size_t)(cap ? cap : 1), sizeof *rep->values)))
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	for (int32_t i = 0; i < g->nnodes; i++)
		for (int32_t k = 0; k < g->nodes[i]->nout; k++) {
			const om_value *v = g->nodes[i]->out[k];
			int ia = v ? output_index(c->map_a, v->name) : -1;
			const om_value *w = ia >= 0 ? om_graph_find(c->eb->graph, v->name) : NULL;
			if (!w || (!w->producer && (!w->init || (w->flags & OM_VALUE_GRAPH_INPUT))))
				continue;
			om_diff *d = &rep->values[rep->n++];
			om_diff_name(d->name, sizeof d->name, v->name);
			om_diff_producers(d, a, b);
			d->state = OM_DIFF_MISSING;
			d->rank = -1;
			const om_tensor *tb = NULL;
			if (!w->producer)
				tb = w->init;
			else if (c->ob && output_index(c->map_b, v->name) >= 0)
				tb = &c->ob[output_index(c->map_b, v->name)];
			om_kind rc = tb ? om_diff_values(&c->oa[ia], tb, c->opt->rtol, c->opt->atol,
							 d, st)
					: OM_OK;
			if (rc)
				return rc;
			if (rep->first_over < 0 && d->state != OM_DIFF_OK &&
			    d->state != OM_DIFF_SKIPPED)
				rep->first_over = rep->n - 1;
		}
	return OM_OK;
}

om_kind om_compare(const om_model *a, const om_model *b, const om_check_options *options,
		   om_compare_report *rep, om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	*rep = (om_compare_report){.first_over = -1};
	const om_check_options opt = om_check_defaults(options);
	rep->rtol = opt.rtol;
	rep->atol = opt.atol;
	cmp c = {.opt = &opt};
	const char **names = NULL;
	int n = 0;
	om_kind rc = shared_names(a, b, &names, &n, st);
	if (!rc)
		rc = om_model_expose(a, names, n, &c.ea, st);
	if (!rc)
		rc = om_model_expose(b, names, n, &c.eb, st);
	free(names);
	om_session_options so = {.threads = opt.threads, .keep_half = 1};
	if (!rc)
		rc = om_session_create(c.ea, &so, &c.sa, st);
	if (!rc)
		rc = om_session_create(c.eb, &so, &c.sb, st);
	if (!rc) {
		c.na = om_session_output_count(c.sa);
		c.nb = om_session_output_count(c.sb);
		c.items_a = calloc((size_t)(c.na ? c.na : 1), sizeof *c.items_a);
		c.items_b = calloc((size_t)(c.nb ? c.nb : 1), sizeof *c.items_b);
		if (!c.items_a || !c.items_b)
			rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	if (!rc)
		rc = index_outputs(c.sa, &c.map_a, c.items_a, st);
	if (!rc)
		rc = index_outputs(c.sb, &c.map_b, c.items_b, st);
	om_inset in = {0};
	int attempt = 0;
	char desc[512], kind[128];
	if (!rc)
		rc = om_reference_run(c.sa, &opt, 0, true, &attempt, &in, &c.oa, desc,
				      sizeof desc, kind, sizeof kind, st);
	if (!rc)
		om_describe_run(rep->how, sizeof rep->how, 0, desc, kind, "");
	if (!rc) {
		om_status sb = {0};
		om_kind rb = om_run_named(c.sb, &in, &c.ob, &sb);
		if (rb == OM_ERR_NOMEM)
			rc = om_error(st, rb, NULL, "%s", sb.msg);
		else if (rb)
			om_check_format_error(&sb, rep->error, sizeof rep->error);
	}
	if (!rc)
		rc = collect(&c, a, b, rep, st);
	om_inset_free(&in);
	cmp_free(&c);
	return rc;
}
