/* ml_lookup.c — sorted key columns for the ai.onnx.ml look-up ops (ml_lookup.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ml_lookup.h"

typedef struct om_ml_entry {
	int64_t i;      /* an integer key, or a float key's bits */
	const char *p;  /* a string key */
	int64_t len;
	int64_t pos;    /* its position in the key column */
} om_ml_entry;

bool om_ml_col_type(int32_t dtype)
{
	switch (dtype) {
	case OM_STRING: case OM_INT16: case OM_INT32: case OM_INT64: case OM_FLOAT: case OM_DOUBLE:
		return true;
	default:
		return false;
	}
}

om_kind om_ml_attr_col(om_ctx *c, const char *name, om_ml_col *col)
{
	memset(col, 0, sizeof *col);
	const om_attr *a = om_node_attr(c->node, name);
	if (!a)
		return OM_OK;
	switch (a->type) {
	case OM_ATTR_INTS: *col = (om_ml_col){OM_INT64, a->n, a->ints}; break;
	case OM_ATTR_FLOATS: *col = (om_ml_col){OM_FLOAT, a->n, a->floats}; break;
	case OM_ATTR_STRINGS: *col = (om_ml_col){OM_STRING, a->n, a->strings}; break;
	case OM_ATTR_TENSOR:
		if (!a->t || !om_ml_col_type(a->t->dtype) || om_tensor_numel(a->t) < 0)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"attribute %s has element type %s", name,
					a->t ? om_dtype_name(a->t->dtype) : "none");
		*col = (om_ml_col){a->t->dtype, om_tensor_numel(a->t), a->t->data};
		break;
	default:
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"attribute %s has the wrong kind", name);
	}
	if (col->n && !col->data)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "attribute %s has no data",
				name);
	return OM_OK;
}

/* element k of col as a key */
static om_ml_entry key_at(const om_ml_col *col, int64_t k)
{
	om_ml_entry e = {0, NULL, 0, k};
	switch (col->dtype) {
	case OM_STRING: {
		const om_str s = ((const om_str *)col->data)[k];
		e.p = s.ptr;
		e.len = s.len > 0 ? s.len : 0;
		break;
	}
	case OM_INT16: e.i = ((const int16_t *)col->data)[k]; break;
	case OM_INT32: e.i = ((const int32_t *)col->data)[k]; break;
	case OM_INT64: e.i = ((const int64_t *)col->data)[k]; break;
	case OM_FLOAT: {
		float f = ((const float *)col->data)[k];
		uint32_t b;
		memcpy(&b, &f, sizeof b);
		e.i = isnan(f) ? 0x7fc00000 : (int64_t)b;
		break;
	}
	case OM_DOUBLE: {
		double d = ((const double *)col->data)[k];
		memcpy(&e.i, &d, sizeof e.i);
		if (isnan(d))
			e.i = INT64_C(0x7ff8000000000000);
		break;
	}
	default: break;
	}
	return e;
}

static int cmp_key(const om_ml_entry *a, const om_ml_entry *b)
{
	if (a->p || b->p) {
		int64_t n = a->len < b->len ? a->len : b->len;
		int r = n ? memcmp(a->p ? a->p : "", b->p ? b->p : "", (size_t)n) : 0;
		return r ? r : (a->len > b->len) - (a->len < b->len);
	}
	return (a->i > b->i) - (a->i < b->i);
}

static int cmp_entry(const void *x, const void *y)
{
	const om_ml_entry *a = x, *b = y;
	int r = cmp_key(a, b);
	return r ? r : (a->pos > b->pos) - (a->pos < b->pos); /* the first of equal keys first */
}

om_kind om_ml_table_make(om_ctx *c, const om_ml_col *keys, om_ml_table *t)
{
	memset(t, 0, sizeof *t);
	if (!om_ml_col_type(keys->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "keys of type %s",
				om_dtype_name(keys->dtype));
	if (keys->n < 0 || (uint64_t)keys->n > SIZE_MAX / sizeof(om_ml_entry))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "too many keys");
	t->dtype = keys->dtype;
	t->n = keys->n;
	if (!keys->n)
		return OM_OK;
	om_kind rc = om_ctx_reserve(c, sizeof(om_ml_entry) * (size_t)keys->n, "its key table");
	if (rc)
		return rc;
	if (!(t->e = malloc(sizeof(om_ml_entry) * (size_t)keys->n)))
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (keys)");
	for (int64_t k = 0; k < keys->n; k++)
		t->e[k] = key_at(keys, k);
	qsort(t->e, (size_t)t->n, sizeof *t->e, cmp_entry);
	return OM_OK;
}

void om_ml_table_free(om_ml_table *t)
{
	free(t->e);
	memset(t, 0, sizeof *t);
}

int64_t om_ml_find(const om_ml_table *t, const om_ml_col *col, int64_t k)
{
	const om_ml_entry want = key_at(col, k);
	int64_t lo = 0, hi = t->n; /* the first entry not below want */
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (cmp_key(&t->e[mid], &want) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && !cmp_key(&t->e[lo], &want) ? t->e[lo].pos : -1;
}

om_kind om_ml_put(om_ctx *c, void *dst, int64_t k, const om_ml_col *src, int64_t j)
{
	if (src->dtype != OM_STRING) {
		size_t es = om_dtype_size(src->dtype);
		memcpy((char *)dst + (size_t)k * es, (const char *)src->data + (size_t)j * es, es);
		return OM_OK;
	}
	const om_str s = ((const om_str *)src->data)[j];
	int64_t len = s.len > 0 && s.ptr ? s.len : 0;
	char *p = malloc((size_t)len + 1);
	if (!p)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (strings)");
	if (len)
		memcpy(p, s.ptr, (size_t)len);
	p[len] = 0;
	((om_str *)dst)[k] = (om_str){p, len};
	return OM_OK;
}
