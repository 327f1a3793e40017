/*
 * op_index.h — every op row of every table in (domain, name, since) order, so that om_op_find
 * is a binary search instead of a scan of every row. The order is computed at build time:
 * gen_op_index.c links the tables (registry_tables.c), sorts references to their rows and
 * writes op_index.c, a const array compiled into the runtime. No table is sorted or cached at
 * run time.
 */
#ifndef OM_OP_INDEX_H
#define OM_OP_INDEX_H

#include <stdint.h>
#include <string.h>

#include "op.h"

/* the tables (registry_tables.c) */
extern const om_op_table *const om_op_tables[];
extern const size_t om_op_ntables;

/* one row: om_op_tables[table]->rows[row] */
typedef struct om_op_ref {
	uint16_t table, row;
} om_op_ref;

/* generated (op_index.c) */
extern const om_op_ref om_op_index[];
extern const size_t om_op_index_count;

/** The domain as the index orders it: "ai.onnx" and NULL are "". */
static inline const char *om_op_domain_key(const char *d)
{
	return !d || !strcmp(d, "ai.onnx") ? "" : d;
}

/** Row r's (domain, name) against the key (domain already through om_op_domain_key). */
static inline int om_op_key_cmp(const om_op *r, const char *domain, const char *name)
{
	int c = strcmp(om_op_domain_key(r->domain), domain);
	return c ? c : strcmp(r->name, name);
}

static inline const om_op *om_op_index_row(size_t i)
{
	return &om_op_tables[om_op_index[i].table]->rows[om_op_index[i].row];
}

#endif
