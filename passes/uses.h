/*
 * uses.h — the consumer index of one graph (passes/uses.c): for every value, the (node, input
 * slot) pairs that read it, so that replacing a value's uses visits its readers instead of
 * every node of the graph (a pass that bypasses k nodes costs O(nodes + uses), not
 * O(k * nodes)).
 *
 * A pass opens the index over g (om_uses_open), rewires inputs through om_uses_set_input and
 * om_uses_replace while it is open, and closes it at its end. The index stays complete as long
 * as every input the pass points at a value goes through those calls (or om_uses_add_node for
 * a node it appends); an entry whose node no longer reads the value is skipped when read, so
 * stale entries cost a little time, never correctness. When the index cannot grow (out of
 * memory) it is marked broken and om_uses_replace walks every node as before.
 */
#ifndef OM_USES_H
#define OM_USES_H

#include "pass.h"

typedef struct om_uses om_uses;

/** Builds the index of g's nodes (dead ones too) into c. A failure to
 *  allocate leaves the index broken (om_uses_replace then scans), never an error. */
void om_uses_open(om_pass_ctx *c, om_graph *g);
/** Drops c's index. */
void om_uses_close(om_pass_ctx *c);
/** n->in[slot] = v, recorded in the index when it is open over n's graph. */
void om_uses_set_input(om_pass_ctx *c, om_node *n, int32_t slot, om_value *v);
/** Records every input of n, a node just appended to the indexed graph. */
void om_uses_add_node(om_pass_ctx *c, om_node *n);
/** Every input of g's nodes (dead ones too) that reads `from` reads `to` (graph outputs are
 *  not touched), found through the index when it is open over g, else by a walk of the nodes;
 *  each node changed is passed to om_rewrite_touch first. */
void om_uses_replace(om_pass_ctx *c, om_graph *g, const om_value *from, om_value *to);
/** How many index entries om_uses_replace has visited since c was opened (tests: a replace
 *  visits the readers of its value, not the graph). */
uint64_t om_uses_visits(const om_pass_ctx *c);
/** The live nodes of the indexed graph that read v now, one entry per input slot, into
 *  out[0..cap); returns their count (which may exceed cap), or -1 when the index is not open
 *  over v's readers' graph g or is broken. */
int32_t om_uses_readers(const om_pass_ctx *c, const om_graph *g, const om_value *v,
			om_node **out, int32_t cap);

#endif
