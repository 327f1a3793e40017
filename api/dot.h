/* dot.h — a model (or its plan, or a simplification diff) as Graphviz dot text. */
#ifndef OM_DOT_H
#define OM_DOT_H

#include <stdio.h>

#include "ir.h"

/** What --plan knows about a value: the buffer it lives in and whether it aliases it. */
typedef struct om_dot_plan_value {
	int buffer;  /* buffer id (colour), -1 when none (constant, omitted) */
	int is_view; /* 1: a view of the buffer of its op's input */
} om_dot_plan_value;

typedef struct om_dot_config {
	/* --plan: called per value; returns 0 and fills *pv when the plan knows the value */
	int (*plan_value)(void *arg, const om_value *v, om_dot_plan_value *pv);
	/* --plan: a note for a node (merged Transpose axes, kernel mode), or NULL */
	const char *(*plan_node)(void *arg, const om_node *n);
	void *plan_arg;
	/* --diff: the simplified model drawn against `m`: removed nodes greyed, folded values
	 * marked, new nodes highlighted */
	const om_model *diff;
	/* each op box gets a tooltip with the node's attributes (dot_attrs.c) */
	int attributes;
} om_dot_config;

/** Counts of what was drawn (tests check them against the model). */
typedef struct om_dot_stats {
	int nodes; /* op boxes, inputs and outputs included */
	int edges;
} om_dot_stats;

/** Writes m's main graph (subgraphs as clusters) as dot to f. `opt` may be NULL. */
om_kind om_dot_write(const om_model *m, const om_dot_config *opt, FILE *f, om_dot_stats *stats,
		     om_status *st);

/** Appends s to f as the inside of a dot double-quoted string: quotes and backslashes escaped,
 *  control characters and invalid UTF-8 replaced, so that no name can break the syntax. */
void om_dot_escape(FILE *f, const char *s);

/** Appends `, tooltip="name=value\n..."`: n's attributes (dot_attrs.c). */
void om_dot_put_attributes(FILE *f, const om_node *n);

/** A Graphviz context for rendering. Graphviz 2.42's pango plugin keeps pointers into a
 *  context's font data after the context is freed, so a second context in the same process
 *  reads freed memory: make one renderer and reuse it for every picture. */
#endif
