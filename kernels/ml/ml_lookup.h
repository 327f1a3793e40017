/* ml_lookup.h — key look-up tables of the ai.onnx.ml ops (LabelEncoder, CategoryMapper,
 * DictVectorizer): a column of keys (strings, integers or floats) sorted once, then searched
 * for each element of an input column. */
#ifndef OM_ML_LOOKUP_H
#define OM_ML_LOOKUP_H

#include "op.h"

/** A column of elements: an attribute list (ints, floats, strings) or a tensor's data. */
typedef struct om_ml_col {
	int32_t dtype; /* OM_STRING, OM_INT16, OM_INT32, OM_INT64, OM_FLOAT or OM_DOUBLE */
	int64_t n;
	const void *data;
} om_ml_col;

/** A sorted key column. */
typedef struct om_ml_table {
	int32_t dtype;
	int64_t n;
	struct om_ml_entry *e; /* n entries, sorted; malloc'd */
} om_ml_table;

/** Whether dtype is a key or value type these ops know (above). */
bool om_ml_col_type(int32_t dtype);
/** The column of the node's attribute `name`: a list of ints (INT64), floats (FLOAT), strings
 *  (STRING), or a tensor attribute (its elements flattened). n 0 and dtype 0 when absent;
 *  InvalidModel for a tensor of another type. */
om_kind om_ml_attr_col(om_ctx *c, const char *name, om_ml_col *col);
/** Builds t from keys (InvalidModel for an unknown type); free with om_ml_table_free. */
om_kind om_ml_table_make(om_ctx *c, const om_ml_col *keys, om_ml_table *t);
void om_ml_table_free(om_ml_table *t);
/** The position in the key column of the first key equal to element k of col (of the
 *  table's dtype), or -1. Integers compare by value, strings by bytes, floats by bits (every
 *  NaN the same key). */
int64_t om_ml_find(const om_ml_table *t, const om_ml_col *col, int64_t k);
/** dst[k] = src[j] (same dtype; a string is duplicated with malloc). */
om_kind om_ml_put(om_ctx *c, void *dst, int64_t k, const om_ml_col *src, int64_t j);

#endif
