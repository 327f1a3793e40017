/* ophist.h — op-type histogram of a model (all graphs, subgraphs included), for the
 * simplify before/after table and `omopt info`. */
#ifndef OM_OPHIST_H
#define OM_OPHIST_H

#include "ir.h"

typedef struct om_ophist_row {
	char op[128]; /* "Conv", or "domain.Op" outside the default domain */
	int64_t count[2];
} om_ophist_row;

typedef struct om_ophist {
	om_ophist_row *rows;
	int32_t n, cap;
	int64_t total[2];
} om_ophist;

/** Adds every node of g and its subgraphs to column col (0 or 1). 0 or -1 (out of memory). */
int om_ophist_add(om_ophist *h, const om_graph *g, int col);
/** Sorts rows by op name. */
void om_ophist_sort(om_ophist *h);
void om_ophist_free(om_ophist *h);

/** Writes a value's type as "float[N,3,?,224]" (or "?" when unknown) into buf. */
void om_type_format(const om_type *t, char *buf, size_t size);

#endif
