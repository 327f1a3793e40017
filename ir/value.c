/* value.c — sequence, optional and map values: make, insert, erase, check, deep copy, free
 * (value.h). */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "value.h"

om_kind om_box_new(int32_t kind, int32_t elem, om_tensor *out, om_status *st)
{
	memset(out, 0, sizeof *out);
	if (kind != OM_SEQUENCE && kind != OM_OPTIONAL && kind != OM_MAP)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"a box is OM_SEQUENCE, OM_OPTIONAL or OM_MAP, not kind %d", kind);
	if (kind == OM_MAP && elem != OM_INT64 && elem != OM_STRING)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"a map's keys are int64 or string, not %s", om_dtype_name(elem));
	om_seq *b = calloc(1, sizeof *b);
	if (!b)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	b->elem = elem;
	out->dtype = kind;
	out->data = b;
	return OM_OK;
}

om_kind om_box_adopt(om_seq *b, int64_t pos, om_tensor *v, om_status *st)
{
	if (pos < 0 || pos > b->n)
		return om_error(st, OM_ERR_INTERNAL, NULL, "position %lld outside 0..%lld",
				(long long)pos, (long long)b->n);
	if (b->n == b->cap) {
		int64_t cap = b->cap ? 2 * b->cap : 4;
		if ((uint64_t)cap > SIZE_MAX / sizeof *b->items)
			return om_error(st, OM_ERR_NOMEM, NULL, "sequence too long");
		om_tensor *items = realloc(b->items, sizeof *items * (size_t)cap);
		if (!items)
			return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
		b->items = items;
		b->cap = cap;
	}
	memmove(b->items + pos + 1, b->items + pos, sizeof *b->items * (size_t)(b->n - pos));
	b->items[pos] = *v;
	b->n++;
	memset(v, 0, sizeof *v);
	return OM_OK;
}

om_kind om_box_insert(om_seq *b, int64_t pos, const om_tensor *v, om_status *st)
{
	if (!b || !v || pos < 0 || pos > b->n)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "no box, no value, or position "
				"%lld outside 0..%lld", (long long)pos, (long long)(b ? b->n : 0));
	if (om_is_box(v) && !v->data)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "the box has no items");
	om_tensor copy;
	om_kind rc = om_value_copy(&copy, v, st);
	if (!rc && (rc = om_box_adopt(b, pos, &copy, st)))
		om_value_free(&copy);
	return rc;
}

void om_box_erase(om_seq *b, int64_t pos)
{
	if (pos < 0 || pos >= b->n)
		return;
	om_value_free(&b->items[pos]);
	memmove(b->items + pos, b->items + pos + 1, sizeof *b->items * (size_t)(b->n - pos - 1));
	b->n--;
}

om_kind om_value_copy(om_tensor *dst, const om_tensor *src, om_status *st)
{
	if (!om_is_box(src)) {
		om_kind rc = om_tensor_alloc(dst, src->dtype, src->rank, src->dims, st);
		if (!rc && (rc = om_tensor_copy_data(dst, src, st)))
			om_tensor_free(dst);
		return rc;
	}
	const om_seq *s = om_box(src);
	om_kind rc = om_box_new(src->dtype, s->elem, dst, st);
	for (int64_t i = 0; !rc && i < s->n; i++)
		rc = om_box_insert(om_box(dst), i, &s->items[i], st);
	if (rc)
		om_value_free(dst);
	return rc;
}

bool om_value_has_strings(const om_tensor *v)
{
	if (!om_is_box(v))
		return v->dtype == OM_STRING;
	const om_seq *b = om_box(v);
	for (int64_t i = 0; i < b->n; i++)
		if (om_value_has_strings(&b->items[i]))
			return true;
	return false;
}

void om_value_free(om_tensor *t)
{
	if (!t)
		return;
	if (!om_is_box(t)) {
		om_tensor_free(t);
		return;
	}
	om_seq *b = om_box(t);
	for (int64_t i = 0; b && i < b->n; i++)
		om_value_free(&b->items[i]);
	if (b)
		free(b->items);
	free(b);
	memset(t, 0, sizeof *t);
}

om_kind om_map_adopt(int32_t key_type, om_tensor *keys, om_tensor *values, om_tensor *out,
		     om_status *st)
{
	om_kind rc = om_box_new(OM_MAP_DTYPE, key_type, out, st);
	if (!rc && !(rc = om_box_adopt(om_box(out), 0, keys, st)))
		rc = om_box_adopt(om_box(out), 1, values, st);
	if (rc)
		om_value_free(out);
	om_value_free(keys);
	om_value_free(values);
	return rc;
}

static int cmp_str(const void *x, const void *y)
{
	const om_str *a = x, *b = y;
	int64_t n = a->len < b->len ? a->len : b->len;
	int r = n > 0 ? memcmp(a->ptr, b->ptr, (size_t)n) : 0;
	return r ? r : (a->len > b->len) - (a->len < b->len);
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

/* no key twice (a sorted copy) */
static om_kind distinct_keys(const om_tensor *k, om_status *st)
{
	const int64_t n = k->dims[0];
	if (n < 2)
		return OM_OK;
	size_t es = k->dtype == OM_STRING ? sizeof(om_str) : sizeof(int64_t);
	if ((uint64_t)n > SIZE_MAX / es)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "a map too large");
	void *c = malloc(es * (size_t)n);
	if (!c)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	memcpy(c, k->data, es * (size_t)n);
	int (*cmp)(const void *, const void *) = k->dtype == OM_STRING ? cmp_str : cmp_i64;
	qsort(c, (size_t)n, es, cmp);
	bool twice = false;
	for (int64_t i = 1; i < n && !twice; i++)
		twice = !cmp((char *)c + es * (size_t)(i - 1), (char *)c + es * (size_t)i);
	free(c);
	return twice ? om_error(st, OM_ERR_INVALID_INPUT, NULL, "a map has a key twice") : OM_OK;
}

static om_kind check_at(const om_tensor *v, int depth, om_status *st)
{
	if (!v)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "no value");
	if (!om_is_box(v)) {
		if (v->rank < 0 || v->rank > OM_MAX_RANK || om_shape_numel(v->rank, v->dims) < 0 ||
		    (v->dtype != OM_STRING && !om_dtype_bits(v->dtype)))
			return om_error(st, OM_ERR_INVALID_INPUT, NULL,
					"a tensor has a bad shape or element type");
		size_t need = om_tensor_bytes_for(v->dtype, v->rank, v->dims);
		if (need && (!v->data || (v->dtype != OM_STRING && v->nbytes < need)))
			return om_error(st, OM_ERR_INVALID_INPUT, NULL,
					"a tensor has %zu bytes, its shape needs %zu", v->nbytes,
					need);
		return OM_OK;
	}
	const om_seq *b = om_box(v);
	if (!b || b->n < 0 || (b->n && !b->items))
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "a box has no items");
	if (depth > 16)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "values nest too deep");
	for (int64_t i = 0; i < b->n; i++) {
		om_kind rc = check_at(&b->items[i], depth + 1, st);
		if (rc)
			return rc;
	}
	if (v->dtype == OM_OPT_DTYPE && b->n > 1)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "an optional holds %lld values",
				(long long)b->n);
	if (v->dtype != OM_MAP_DTYPE)
		return OM_OK;
	if (b->n != 2 || om_is_box(&b->items[0]) || b->items[0].rank != 1 ||
	    b->items[0].dtype != b->elem || (b->elem != OM_INT64 && b->elem != OM_STRING))
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"a map holds its keys (a 1-D int64 or string tensor of its key "
				"type) and its values");
	const om_tensor *vals = &b->items[1];
	const int64_t n = b->items[0].dims[0];
	if (om_is_box(vals) ? vals->dtype != OM_SEQ_DTYPE || om_box(vals)->n != n
			    : vals->rank != 1 || vals->dims[0] != n)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"a map of %lld keys needs %lld values (a 1-D tensor or a "
				"sequence)", (long long)n, (long long)n);
	return distinct_keys(&b->items[0], st);
}

om_kind om_value_check(const om_tensor *v, om_status *st)
{
	return check_at(v, 0, st);
}
