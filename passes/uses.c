/* uses.c — the consumer index of one graph: per value a linked list of (node, input slot)
 * entries in one array, found through an open-addressing table keyed by the value's address. */
#include <stdlib.h>

#include "uses.h"

typedef struct use {
	om_node *n;
	int32_t slot;
	int32_t next; /* next entry of the same value, -1 at the end */
} use;

typedef struct head {
	const om_value *v; /* NULL: free slot */
	int32_t first;
} head;

struct om_uses {
	const om_graph *g;
	bool broken;
	use *e;
	size_t ne, cap_e;
	head *tab;
	size_t ntab, cap_tab; /* cap_tab a power of two, at most half full */
	uint64_t visits;
};

static size_t slot_of(const om_value *v, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)v * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20) & (cap - 1);
}

static bool grow_table(om_uses *u)
{
	size_t cap = u->cap_tab ? 2 * u->cap_tab : 1024;
	head *t = calloc(cap, sizeof *t);
	if (!t)
		return false;
	for (size_t i = 0; i < u->cap_tab; i++) {
		if (!u->tab[i].v)
			continue;
		size_t s = slot_of(u->tab[i].v, cap);
		while (t[s].v)
			s = (s + 1) & (cap - 1);
		t[s] = u->tab[i];
	}
	free(u->tab);
	u->tab = t;
	u->cap_tab = cap;
	return true;
}

/* The list head of v; created empty when `make` (NULL when it cannot be). */
static int32_t *head_of(om_uses *u, const om_value *v, bool make)
{
	if (u->cap_tab) {
		size_t s = slot_of(v, u->cap_tab);
		for (; u->tab[s].v; s = (s + 1) & (u->cap_tab - 1))
			if (u->tab[s].v == v)
				return &u->tab[s].first;
	}
	if (!make)
		return NULL;
	if (2 * (u->ntab + 1) > u->cap_tab && !grow_table(u))
		return NULL;
	size_t s = slot_of(v, u->cap_tab);
	while (u->tab[s].v)
		s = (s + 1) & (u->cap_tab - 1);
	u->tab[s] = (head){v, -1};
	u->ntab++;
	return &u->tab[s].first;
}

/* Adds (n, slot) to v's list; marks the index broken when it cannot. */
static void push(om_uses *u, const om_value *v, om_node *n, int32_t slot)
{
	if (u->broken)
		return;
	if (u->ne == u->cap_e) {
		size_t cap = u->cap_e ? 2 * u->cap_e : 1024;
		use *e = cap < INT32_MAX ? realloc(u->e, cap * sizeof *e) : NULL;
		if (!e) {
			u->broken = true;
			return;
		}
		u->e = e;
		u->cap_e = cap;
	}
	int32_t *h = head_of(u, v, true);
	if (!h) {
		u->broken = true;
		return;
	}
	u->e[u->ne] = (use){n, slot, *h};
	*h = (int32_t)u->ne++;
}

void om_uses_open(om_pass_ctx *c, om_graph *g)
{
	om_uses_close(c);
	om_uses *u = calloc(1, sizeof *u);
	if (!u)
		return; /* no index: om_uses_replace scans */
	u->g = g;
	c->uses = u;
	c->uses_builds++;
	/* room for every input at once: a value per input at most, the table half full */
	size_t nin = 0, cap = 1024;
	for (int32_t i = 0; i < g->nnodes; i++)
		nin += (size_t)g->nodes[i]->nin;
	while (cap < 2 * nin && cap < (SIZE_MAX >> 2))
		cap *= 2;
	u->tab = calloc(cap, sizeof *u->tab);
	u->e = malloc(sizeof *u->e * (nin ? nin : 1));
	if (!u->tab || !u->e || nin >= INT32_MAX) {
		u->broken = true;
		return;
	}
	u->cap_tab = cap;
	u->cap_e = nin ? nin : 1;
	for (int32_t i = 0; i < g->nnodes; i++)
		om_uses_add_node(c, g->nodes[i]);
}

void om_uses_close(om_pass_ctx *c)
{
	if (!c->uses)
		return;
	c->uses_visits += c->uses->visits;
	free(c->uses->e);
	free(c->uses->tab);
	free(c->uses);
	c->uses = NULL;
}

void om_uses_add_node(om_pass_ctx *c, om_node *n)
{
	if (!c->uses || c->uses->g != n->graph)
		return;
	for (int32_t k = 0; k < n->nin; k++)
		if (n->in[k])
			push(c->uses, n->in[k], n, k);
}

void om_uses_set_input(om_pass_ctx *c, om_node *n, int32_t slot, om_value *v)
{
	n->in[slot] = v;
	if (v && c->uses && c->uses->g == n->graph)
		push(c->uses, v, n, slot);
}

void om_uses_replace(om_pass_ctx *c, om_graph *g, const om_value *from, om_value *to)
{
	om_uses *u = c->uses;
	if (from == to)
		return;
	if (!u || u->g != g || u->broken) {
		c->uses_visits += (uint64_t)g->nnodes;
		for (int32_t i = 0; i < g->nnodes; i++) {
			om_node *n = g->nodes[i];
			for (int32_t k = 0; k < n->nin; k++)
				if (n->in[k] == from) {
					om_rewrite_touch(c, n);
					n->in[k] = to;
				}
		}
		return;
	}
	int32_t *ht = to ? head_of(u, to, true) : NULL; /* first: it may grow the table */
	if (to && !ht) {
		u->broken = true;
		om_uses_replace(c, g, from, to);
		return;
	}
	int32_t *hf = head_of(u, from, false);
	if (!hf)
		return;
	/* each entry still reading `from` moves to `to`'s list; stale ones are dropped */
	for (int32_t i = *hf, next; i >= 0; i = next) {
		use *e = &u->e[i];
		next = e->next;
		u->visits++;
		if (e->slot >= e->n->nin || e->n->in[e->slot] != from)
			continue;
		om_rewrite_touch(c, e->n);
		e->n->in[e->slot] = to;
		if (ht) {
			e->next = *ht;
			*ht = i;
		}
	}
	*hf = -1;
}

uint64_t om_uses_visits(const om_pass_ctx *c)
{
	return c->uses_visits + (c->uses ? c->uses->visits : 0);
}

int32_t om_uses_readers(const om_pass_ctx *c, const om_graph *g, const om_value *v,
			om_node **out, int32_t cap)
{
	om_uses *u = c->uses;
	if (!u || u->g != g || u->broken)
		return -1;
	const int32_t *h = head_of(u, v, false);
	int32_t n = 0;
	for (int32_t k = h ? *h : -1; k >= 0; k = u->e[k].next) {
		const use *e = &u->e[k];
		if ((e->n->flags & OM_NODE_DEAD) || e->slot >= e->n->nin || e->n->in[e->slot] != v)
			continue;
		if (n < cap)
			out[n] = e->n;
		n++;
	}
	return n;
}
