/* merge_ifs.h — the parts of the merge_ifs pass (merge_ifs.c): conditions that are functions
 * of an If's condition (if_conds.c) and views sunk into an If's branches (if_sink.c). */
#ifndef OM_MERGE_IFS_H
#define OM_MERGE_IFS_H

#include "pass.h"

/** True when some subgraph of n (at any depth) refers to a value named `name` of n's graph. */
bool om_node_sub_refers(const om_node *n, const char *name);
/** True when live node n of g reads v: as an input or from one of its subgraphs by name. */
bool om_node_reads(const om_node *n, const om_value *v);
/** True when nothing in g reads v but n (and v is no graph output). */
bool om_only_reader(const om_graph *g, const om_value *v, const om_node *n);
/** Equal(Size(Shape(y)) or Gather(Shape(y), i), k) where y is an If's output whose branches
 *  give a different known rank or dim: the Equal becomes the If's condition or its Not when
 *  it only serves as a condition; If(Not(x)) becomes If(x) with its branches swapped. */
om_kind om_if_conditions(om_pass_ctx *c, om_graph *g, int *changes);
/** A Squeeze, Unsqueeze or Reshape that alone reads an If's output moves into both branches
 *  when each branch writes that output with a view or an Identity of its own. */
om_kind om_if_sink_views(om_pass_ctx *c, om_graph *g, int *changes);

#endif
