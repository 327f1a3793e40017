/* value_map.c — om_vmap (value_map.h): a hash of subgraph values to their copies' values. */
#include <stdlib.h>

#include "value_map.h"

struct om_vmap {
	const om_value *from;
	om_value *to;
	UT_hash_handle hh;
};

bool om_vmap_put(om_vmap **map, const om_value *from, om_value *to)
{
	om_vmap *e = malloc(sizeof *e);
	if (!e)
		return false;
	e->from = from;
	e->to = to;
	HASH_ADD_PTR(*map, from, e);
	return true;
}

om_value *om_vmap_get(om_graph *g, om_vmap **map, om_value *v)
{
	if (!v)
		return NULL;
	om_vmap *e = NULL;
	HASH_FIND_PTR(*map, &v, e);
	if (e)
		return e->to;
	om_value *to;
	if (v->flags & OM_VALUE_OUTER) {
		to = om_graph_value(g, v->name); /* g's own value, or one more outer reference */
		if (to && !to->producer && !(to->flags & (OM_VALUE_GRAPH_INPUT |
							  OM_VALUE_INITIALIZER)) && g->parent)
			to->flags |= OM_VALUE_OUTER;
	} else {
		to = om_graph_fresh_value(g, v->name);
		if (to)
			to->type = v->type;
	}
	return to && om_vmap_put(map, v, to) ? to : NULL;
}

bool om_vmap_add_all(om_vmap **dst, om_vmap *src)
{
	om_vmap *e, *tmp;
	bool ok = true;
	HASH_ITER(hh, src, e, tmp)
		ok &= om_vmap_put(dst, e->from, e->to);
	return ok;
}

void om_vmap_free(om_vmap **map)
{
	om_vmap *e, *tmp;
	HASH_ITER(hh, *map, e, tmp) {
		HASH_DEL(*map, e);
		free(e);
	}
}
