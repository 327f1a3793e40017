/*
 * value_info_fit.c — the written shapes within the size rule. value_info adds bytes to a
 * model, so a model simplify barely changes could be saved larger than it came. Before the
 * shapes are written, om_vi_marks_take notes how many value_info entries each graph has;
 * afterwards om_vi_fit keeps, of the entries added since, the longest prefix (main graph
 * first, then subgraphs, each in node order) with which the saved model is at most `limit`
 * bytes. The saved size grows with each entry kept, so a binary search on the count finds
 * it in log2(added) measurements.
 */
#include "pass.h"

/* Appends g and its subgraphs (depth first) to mk when `into` is set; returns the count. */
static int32_t collect(om_graph *g, om_vi_marks *mk, bool into)
{
	int32_t n = 1;
	if (into) {
		mk->g[mk->n] = g;
		mk->base[mk->n++] = g->ninfos;
	}
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *nd = g->nodes[i];
		for (int32_t a = 0; a < nd->nattr; a++) {
			const om_attr *at = &nd->attrs[a];
			if (at->g)
				n += collect(at->g, mk, into);
			for (int64_t k = 0; at->graphs && k < at->n; k++)
				n += collect(at->graphs[k], mk, into);
		}
	}
	return n;
}

om_kind om_vi_marks_take(om_pass_ctx *c, om_vi_marks *mk)
{
	const int32_t n = collect(c->m->graph, mk, false);
	*mk = (om_vi_marks){0};
	mk->g = om_arena_alloc(c->scratch, sizeof *mk->g * (size_t)n);
	mk->base = om_arena_alloc(c->scratch, sizeof *mk->base * (size_t)n);
	if (!mk->g || !mk->base)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory");
	collect(c->m->graph, mk, true);
	return OM_OK;
}

/* Keeps the first `keep` added entries over mk's graphs; the others leave value_info. */
static void keep_first(const om_vi_marks *mk, const int32_t *added, int64_t keep)
{
	for (int32_t i = 0; i < mk->n; i++) {
		om_graph *g = mk->g[i];
		const int32_t k = (int32_t)(keep < added[i] ? keep : added[i]);
		for (int32_t j = mk->base[i]; j < mk->base[i] + added[i]; j++) {
			if (j < mk->base[i] + k)
				g->infos[j]->flags |= OM_VALUE_INFO;
			else
				g->infos[j]->flags &= ~(uint32_t)OM_VALUE_INFO;
		}
		g->ninfos = mk->base[i] + k;
		keep -= k;
	}
}

om_kind om_vi_fit(om_pass_ctx *c, const om_vi_marks *mk, size_t limit, int64_t *kept,
		  int64_t *added, size_t *bytes)
{
	int32_t *per = om_arena_alloc(c->scratch, sizeof *per * (size_t)(mk->n + 1));
	if (!per)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory");
	*added = 0;
	for (int32_t i = 0; i < mk->n; i++) {
		per[i] = mk->g[i]->ninfos - mk->base[i];
		*added += per[i];
	}
	*kept = *added;
	om_kind rc = om_model_saved_size(c->m, bytes, c->st);
	if (rc || *bytes <= limit)
		return rc;
	/* the most entries known to fit (lo) and the fewest known not to (hi) */
	int64_t lo = 0, hi = *added;
	while (hi - lo > 1 && !rc) {
		const int64_t mid = lo + (hi - lo) / 2;
		size_t size = 0;
		keep_first(mk, per, mid);
		rc = om_model_saved_size(c->m, &size, c->st);
		if (size <= limit)
			lo = mid;
		else
			hi = mid;
	}
	keep_first(mk, per, lo);
	*kept = lo;
	return rc ? rc : om_model_saved_size(c->m, bytes, c->st);
}
