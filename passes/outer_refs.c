/*
 * outer_refs.c — om_value_used_by_subgraph: whether some subgraph of g refers to a value of g
 * by name. The names g's subgraphs refer to are gathered once into a set kept in the pass
 * context, so a question is one lookup instead of a walk of every node and subgraph. The set
 * is for one graph: it is rebuilt when a node holding subgraphs dies or the node list shrinks
 * (compaction), and extended when nodes are appended.
 */
#include <stdlib.h>
#include <string.h>

#include "pass.h"

typedef struct ref_name {
	const char *name; /* a value's name: arena memory that lives as long as the model */
	UT_hash_handle hh;
} ref_name;

struct om_outer_refs {
	const om_graph *g;
	int32_t nnodes;         /* g's nodes looked at */
	const om_node **holders; /* the live nodes of g with subgraphs when looked at */
	int32_t nholders, cap;
	ref_name *names;
	bool nomem;
};

/* A graph between g and the subgraph being read (its definitions shadow g's names). */
typedef struct chain {
	const om_graph *g;
	const struct chain *up;
} chain;

static bool shadowed(const chain *ch, const char *name)
{
	for (; ch; ch = ch->up) {
		const om_value *v = om_graph_find(ch->g, name);
		if (v && !(v->flags & OM_VALUE_OUTER))
			return true;
	}
	return false;
}

static void add_name(om_outer_refs *o, const char *name)
{
	ref_name *e = NULL;
	HASH_FIND_STR(o->names, name, e);
	if (e)
		return;
	e = malloc(sizeof *e);
	if (!e) {
		o->nomem = true;
		return;
	}
	e->name = name;
	HASH_ADD_KEYPTR(hh, o->names, e->name, strlen(e->name), e);
	ref_name *back = NULL;
	HASH_FIND_STR(o->names, name, back);
	if (back != e) {
		free(e);
		o->nomem = true;
	}
}

/* The names sub refers to outside itself that reach g (the graphs of `up` lie between). */
static void gather(om_outer_refs *o, const om_graph *sub, const chain *up)
{
	const om_value *v, *tmp;
	HASH_ITER(hh, sub->values, v, tmp)
		if ((v->flags & OM_VALUE_OUTER) && !shadowed(up, v->name))
			add_name(o, v->name);
	const chain here = {sub, up};
	for (int32_t i = 0; i < sub->nnodes; i++) {
		const om_node *n = sub->nodes[i];
		for (int32_t a = 0; a < n->nattr; a++) {
			if (n->attrs[a].g)
				gather(o, n->attrs[a].g, &here);
			for (int64_t k = 0; n->attrs[a].graphs && k < n->attrs[a].n; k++)
				gather(o, n->attrs[a].graphs[k], &here);
		}
	}
}

static void look_at(om_outer_refs *o, const om_node *n)
{
	if ((n->flags & OM_NODE_DEAD) || !om_node_has_subgraph(n))
		return;
	if (o->nholders == o->cap) {
		int32_t cap = o->cap ? 2 * o->cap : 8;
		const om_node **h = realloc(o->holders, sizeof *h * (size_t)cap);
		if (!h) {
			o->nomem = true;
			return;
		}
		o->holders = h;
		o->cap = cap;
	}
	o->holders[o->nholders++] = n;
	for (int32_t a = 0; a < n->nattr; a++) {
		if (n->attrs[a].g)
			gather(o, n->attrs[a].g, NULL);
		for (int64_t k = 0; n->attrs[a].graphs && k < n->attrs[a].n; k++)
			gather(o, n->attrs[a].graphs[k], NULL);
	}
}

void om_outer_refs_free(om_outer_refs *o)
{
	if (!o)
		return;
	ref_name *e, *tmp;
	HASH_ITER(hh, o->names, e, tmp) {
		HASH_DEL(o->names, e);
		free(e);
	}
	free(o->holders);
	free(o);
}

/* c's set, brought up to date with g (NULL: out of memory; the caller walks instead). */
static om_outer_refs *refs_of(om_pass_ctx *c, const om_graph *g)
{
	om_outer_refs *o = c->outer;
	bool fresh = o && o->g == g && o->nnodes <= g->nnodes && !o->nomem;
	for (int32_t i = 0; fresh && i < o->nholders; i++)
		fresh = !(o->holders[i]->flags & OM_NODE_DEAD);
	if (!fresh) {
		om_outer_refs_free(o);
		o = c->outer = calloc(1, sizeof *o);
		if (!o)
			return NULL;
		o->g = g;
	}
	for (; o->nnodes < g->nnodes; o->nnodes++)
		look_at(o, g->nodes[o->nnodes]);
	return o->nomem ? NULL : o;
}

static bool sub_refers(const om_graph *sub, const char *name)
{
	const om_value *v = om_graph_find(sub, name);
	if (v)
		return (v->flags & OM_VALUE_OUTER) != 0; /* a local definition shadows the name */
	for (int32_t i = 0; i < sub->nnodes; i++) {
		const om_node *n = sub->nodes[i];
		for (int32_t a = 0; a < n->nattr; a++) {
			const om_attr *at = &n->attrs[a];
			if (at->g && sub_refers(at->g, name))
				return true;
			for (int64_t k = 0; at->graphs && k < at->n; k++)
				if (sub_refers(at->graphs[k], name))
					return true;
		}
	}
	return false;
}

bool om_value_used_by_subgraph(om_pass_ctx *c, const om_graph *g, const om_value *v)
{
	const om_outer_refs *o = refs_of(c, g);
	if (o) {
		if (!o->nholders)
			return false;
		const ref_name *e = NULL;
		HASH_FIND_STR(o->names, v->name, e);
		return e != NULL;
	}
	/* no memory for the set: walk the live nodes' subgraphs */
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		if (n->flags & OM_NODE_DEAD)
			continue;
		for (int32_t a = 0; a < n->nattr; a++) {
			const om_attr *at = &n->attrs[a];
			if (at->g && sub_refers(at->g, v->name))
				return true;
			for (int64_t k = 0; at->graphs && k < at->n; k++)
				if (sub_refers(at->graphs[k], v->name))
					return true;
		}
	}
	return false;
}
