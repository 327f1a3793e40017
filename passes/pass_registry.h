/*
 * pass_registry.h — the pass registry (passes/pass_registry.c): every pass once, in pipeline
 * order, with its level, and how the rounds of each level run. The driver (driver.c) runs the
 * passes of the levels up to the one asked for; om_pass_rows lists them for users.
 *
 * Level 1 is om_simplify: ONNX in, ONNX out, run to a fixed point in every graph. Level 2 is
 * om_optimize: level 1, then the fusions into ops omopt and ONNX Runtime run (some of them
 * com.microsoft), run to a fixed point in the main graph (docs/passes.md).
 */
#ifndef OM_PASS_REGISTRY_H
#define OM_PASS_REGISTRY_H

#include "pass.h"

/** What a row needs of the driver. */
enum {
	/* may make the saved model larger: before each run the driver measures the saved size
	 * and gives the pass what the other passes saved as its slack (fold.c, docs/passes.md
	 * "Size") */
	OM_PASS_GROWS = 1u << 0,
	/* its rewrite computes in another way than the ops it replaces (an int8 group where a
	 * float one was): an exact-mode session of the result rounds differently, so the driver
	 * skips it when om_simplify_options.exact is set */
	OM_PASS_ROUNDS = 1u << 1,
	/* walks the subgraphs itself (infer_shapes: a node's subgraphs just before the node):
	 * the driver runs it on the main graph only */
	OM_PASS_OWN_SUBGRAPHS = 1u << 2,
};

/** One pass. */
typedef struct om_pass_row {
	const char *name;  /* what `skip` names */
	int32_t level;     /* OM_LEVEL_SIMPLIFY or OM_LEVEL_OPTIMIZE */
	om_pass_fn fn;
	uint32_t flags;    /* OM_PASS_* */
	const char *what;  /* one line (om_pass_rows, --help, omopt.h, docs/passes.md) */
} om_pass_row;

/** How the rounds of a level's rows run (om_pass_level.flags). */
enum {
	OM_ROUNDS_SUBGRAPHS = 1u << 0,   /* each pass runs in the main graph, then in every
					 * subgraph (else in the main graph only) */
	OM_ROUNDS_INFER_FIRST = 1u << 1, /* each round starts by inferring the main graph's
					 * types (not a pass: no skip, no count) */
	OM_ROUNDS_DEAD_LAST = 1u << 2,   /* a round that changed something ends with
					 * eliminate_dead on the main graph (not a pass either) */
};

typedef struct om_pass_level {
	const char *name;  /* "simplify", "optimize": the prefix of verbose and progress lines */
	int32_t rounds;    /* the rows run again while one changes something, at most this often */
	uint32_t flags;    /* OM_LEVEL_* */
} om_pass_level;

/** The rows in pipeline order (the levels ascending); *n gets their count. */
const om_pass_row *om_pass_table(int32_t *n);
/** Level `level` (OM_LEVEL_SIMPLIFY ...); NULL when there is no such level. */
const om_pass_level *om_pass_level_of(int32_t level);
/** The row named `name` whose level is at most `level`; NULL when none. */
const om_pass_row *om_pass_find(const char *name, int32_t level);

#endif
