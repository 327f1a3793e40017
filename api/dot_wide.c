/* dot_wide.c — grouping a wide node's inputs by producer and picking out the nodes of ranks
 * too wide for dot's layout (dot_wide.h); both linear in what they are given. */
#include <stdlib.h>
#include <string.h>

#include "dot_wide.h"
#include <uthash.h>

typedef struct group_entry {
	const char *id;
	int32_t group;
	UT_hash_handle hh;
} group_entry;

/* Most members first; then in the order of their first members. */
static int by_count(const void *a, const void *b)
{
	const om_dot_group *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return (x->first > y->first) - (x->first < y->first);
}

int32_t om_dot_group_ids(const char *const *ids, int32_t n, om_dot_group *out)
{
	group_entry *e = calloc((size_t)n + 1, sizeof *e), *map = NULL;
	if (!e)
		return -1;
	int32_t ngroups = 0, used = 0;
	for (int32_t i = 0; i < n; i++) {
		if (!ids[i])
			continue;
		group_entry *g = NULL;
		HASH_FIND_STR(map, ids[i], g);
		if (g) {
			out[g->group].count++;
			continue;
		}
		g = &e[used++];
		g->id = ids[i];
		g->group = ngroups;
		out[ngroups++] = (om_dot_group){i, 1};
		HASH_ADD_KEYPTR(hh, map, g->id, strlen(g->id), g);
	}
	HASH_CLEAR(hh, map);
	free(e);
	qsort(out, (size_t)ngroups, sizeof *out, by_count);
	return ngroups;
}

int32_t om_dot_hide_wide_ranks(const int32_t *rank, const bool *drawn, int32_t n,
			       bool *hidden)
{
	int32_t maxrank = 0;
	for (int32_t i = 0; i < n; i++) {
		hidden[i] = false;
		if (drawn[i] && rank[i] > maxrank)
			maxrank = rank[i];
	}
	int32_t *count = calloc((size_t)maxrank + 1, sizeof *count);
	if (!count)
		return -1;
	for (int32_t i = 0; i < n; i++)
		if (drawn[i])
			count[rank[i]]++;
	int32_t marked = 0;
	for (int32_t r = 0; r <= maxrank; r++)
		count[r] = count[r] > OM_DOT_WIDE ? 0 : -1; /* from now on: how many kept */
	for (int32_t i = 0; i < n; i++) {
		if (!drawn[i] || count[rank[i]] < 0)
			continue;
		if (count[rank[i]] < OM_DOT_WIDE_SHOWN)
			count[rank[i]]++;
		else
			hidden[i] = true, marked++;
	}
	free(count);
	return marked;
}
