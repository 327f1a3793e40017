/* dot_wide.h — what keeps dot's layout linear in edges for wide graphs (dot_wide.c): inputs
 * grouped by producer, and the nodes of a rank too wide for dot's layout picked out. */
#ifndef OM_DOT_WIDE_H
#define OM_DOT_WIDE_H

#include <stdbool.h>
#include <stdint.h>

enum {
	/* Graphviz's dot lays out a rank of k nodes, or k parallel edges, in time that grows
	 * much faster than k (500 unrelated node pairs in a row: 1.5 s; 2,000: 107 s; 5,000
	 * parallel edges: 50 s). A node with more inputs, a graph with more outputs or a rank
	 * with more nodes than OM_DOT_WIDE is summarized, */
	OM_DOT_WIDE = 100,
	/* keeping this many of them drawn one by one. */
	OM_DOT_WIDE_SHOWN = 16,
};

/** A group of equal ids: the index of its first member and how many there are. */
typedef struct om_dot_group {
	int32_t first, count;
} om_dot_group;

/** Groups ids[0..n) by equal string (NULL ids are left out), the largest groups first (ties
 *  in the order of their first members): fills out[] (room for n) and returns how many
 *  groups; -1 when out of memory. */
int32_t om_dot_group_ids(const char *const *ids, int32_t n, om_dot_group *out);

/** Marks hidden[i] for the items (i < n, with drawn[i]) of every rank holding more than
 *  OM_DOT_WIDE drawn items, except the first OM_DOT_WIDE_SHOWN of each; returns how many
 *  were marked. rank[i] >= 0. hidden[] is cleared first. -1 when out of memory. */
int32_t om_dot_hide_wide_ranks(const int32_t *rank, const bool *drawn, int32_t n,
			       bool *hidden);

#endif
