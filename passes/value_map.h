/* value_map.h — the values a pass copies a subgraph's nodes into (inline_if, unroll_loops): each
 * subgraph value stands for one value of the enclosing graph g. */
#ifndef OM_VALUE_MAP_H
#define OM_VALUE_MAP_H

#include <stdbool.h>

#include "ir.h"

typedef struct om_vmap om_vmap;

/** from stands for to (from's first mapping); false when out of memory. */
bool om_vmap_put(om_vmap **map, const om_value *from, om_value *to);
/** The value of g standing for subgraph value v (NULL: NULL): its mapping, else, mapped now,
 *  an outer reference's value of g by name (one more outer reference when g lacks it), or a
 *  fresh value of g named after v with v's type. NULL when out of memory. */
om_value *om_vmap_get(om_graph *g, om_vmap **map, om_value *v);
/** Adds every mapping of src to *dst; false when out of memory. */
bool om_vmap_add_all(om_vmap **dst, om_vmap *src);
/** Frees the map (NULL afterwards). */
void om_vmap_free(om_vmap **map);

#endif
