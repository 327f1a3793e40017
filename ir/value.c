/* value.c — sequence and optional values: make, insert, erase, deep copy, free (value.h). */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "value.h"

om_kind om_box_new(int32_t kind, int32_t elem, om_tensor *out, om_status *st)
{
	memset(out, 0, sizeof *out);
	if (kind != OM_SEQUENCE && kind != OM_OPTIONAL)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"a box is OM_SEQUENCE or OM_OPTIONAL, not kind %d", kind);
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
