/* value_write.c — om_value_file_write: a tensor, sequence, optional or map value as the ONNX
 * backend tests store them (TensorProto, SequenceProto, OptionalProto, MapProto). The messages
 * point into the value's own data; every block they need is kept in a bag and freed after. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "onnx_io.h"
#include "value.h"

typedef struct bag {
	void **p;
	size_t n, cap;
	om_status *st;
} bag;

/* zeroed memory the bag frees; NULL (st set) when out of memory */
static void *bag_alloc(bag *b, size_t count, size_t size)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 32;
		void **p = realloc(b->p, sizeof *p * cap);
		if (!p)
			goto nomem;
		b->p = p;
		b->cap = cap;
	}
	void *m = calloc(count ? count : 1, size);
	if (!m)
		goto nomem;
	b->p[b->n++] = m;
	return m;
nomem:
	om_error(b->st, OM_ERR_NOMEM, NULL, "out of memory");
	return NULL;
}

static void bag_free(bag *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->p[i]);
	free(b->p);
}

/* a TensorProto of `rank` dims over n elements of t from element `at` */
static Onnx__TensorProto *tensor_msg(bag *b, const om_tensor *t, int32_t rank,
				     const int64_t *dims, int64_t at, int64_t n)
{
	Onnx__TensorProto *tp = bag_alloc(b, 1, sizeof *tp);
	int64_t *d = bag_alloc(b, (size_t)rank + 1, sizeof *d);
	if (!tp || !d)
		return NULL;
	onnx__tensor_proto__init(tp);
	memcpy(d, dims, sizeof *d * (size_t)rank);
	tp->n_dims = (size_t)rank;
	tp->dims = d;
	tp->has_data_type = 1;
	tp->data_type = t->dtype;
	if (t->dtype == OM_STRING) {
		ProtobufCBinaryData *s = bag_alloc(b, (size_t)n, sizeof *s);
		if (!s)
			return NULL;
		const om_str *e = (const om_str *)t->data + at;
		for (int64_t i = 0; i < n; i++)
			s[i] = (ProtobufCBinaryData){(size_t)(e[i].len > 0 ? e[i].len : 0),
						     (uint8_t *)e[i].ptr};
		tp->n_string_data = (size_t)n;
		tp->string_data = s;
		return tp;
	}
	const int64_t off = om_numel_bytes(t->dtype, at), len = om_numel_bytes(t->dtype, n);
	if (off < 0 || len < 0 || (uint64_t)(off + len) > t->nbytes) {
		om_error(b->st, OM_ERR_INVALID_INPUT, NULL, "a tensor has fewer bytes than its shape");
		return NULL;
	}
	tp->has_raw_data = 1;
	tp->raw_data = (ProtobufCBinaryData){(size_t)len, (uint8_t *)t->data + off};
	return tp;
}

static Onnx__TensorProto *whole_tensor(bag *b, const om_tensor *t)
{
	return tensor_msg(b, t, t->rank, t->dims, 0, om_tensor_numel(t));
}

static Onnx__SequenceProto *seq_msg(bag *b, const om_tensor *v, int depth);
static Onnx__MapProto *map_msg(bag *b, const om_tensor *v, int depth);
static Onnx__OptionalProto *opt_msg(bag *b, const om_tensor *v, int depth);

/* the values of a map held as one 1-D tensor: a sequence of scalar tensors (onnx's from_dict) */
static Onnx__SequenceProto *scalars_msg(bag *b, const om_tensor *t)
{
	Onnx__SequenceProto *sp = bag_alloc(b, 1, sizeof *sp);
	const int64_t n = t->dims[0];
	Onnx__TensorProto **items = bag_alloc(b, (size_t)n, sizeof *items);
	if (!sp || !items)
		return NULL;
	onnx__sequence_proto__init(sp);
	sp->has_elem_type = 1;
	sp->elem_type = ONNX__SEQUENCE_PROTO__DATA_TYPE__TENSOR;
	for (int64_t i = 0; i < n; i++)
		if (!(items[i] = tensor_msg(b, t, 0, t->dims, i, 1)))
			return NULL;
	sp->n_tensor_values = (size_t)n;
	sp->tensor_values = items;
	return sp;
}

static Onnx__SequenceProto *seq_msg(bag *b, const om_tensor *v, int depth)
{
	if (!om_is_box(v)) /* a map's values as one tensor */
		return scalars_msg(b, v);
	const om_seq *s = om_box(v);
	Onnx__SequenceProto *sp = bag_alloc(b, 1, sizeof *sp);
	if (!sp)
		return NULL;
	onnx__sequence_proto__init(sp);
	const int32_t kind = s->n ? s->items[0].dtype : OM_UNDEFINED;
	sp->has_elem_type = 1;
	sp->elem_type = kind == OM_SEQ_DTYPE   ? ONNX__SEQUENCE_PROTO__DATA_TYPE__SEQUENCE
			: kind == OM_MAP_DTYPE ? ONNX__SEQUENCE_PROTO__DATA_TYPE__MAP
			: kind == OM_OPT_DTYPE ? ONNX__SEQUENCE_PROTO__DATA_TYPE__OPTIONAL
					       : ONNX__SEQUENCE_PROTO__DATA_TYPE__TENSOR;
	void **items = bag_alloc(b, (size_t)s->n, sizeof *items);
	if (!items)
		return NULL;
	for (int64_t i = 0; i < s->n; i++) {
		const om_tensor *it = &s->items[i];
		if (it->dtype != (kind && om_is_box_kind(kind) ? kind : it->dtype) ||
		    om_is_box(it) != om_is_box_kind(kind)) {
			om_error(b->st, OM_ERR_INVALID_INPUT, NULL,
				 "a sequence mixes tensors, sequences, maps and optionals");
			return NULL;
		}
		items[i] = kind == OM_SEQ_DTYPE   ? (void *)seq_msg(b, it, depth + 1)
			   : kind == OM_MAP_DTYPE ? (void *)map_msg(b, it, depth + 1)
			   : kind == OM_OPT_DTYPE ? (void *)opt_msg(b, it, depth + 1)
						  : (void *)whole_tensor(b, it);
		if (!items[i])
			return NULL;
	}
	if (kind == OM_SEQ_DTYPE)
		sp->n_sequence_values = (size_t)s->n, sp->sequence_values = (void *)items;
	else if (kind == OM_MAP_DTYPE)
		sp->n_map_values = (size_t)s->n, sp->map_values = (void *)items;
	else if (kind == OM_OPT_DTYPE)
		sp->n_optional_values = (size_t)s->n, sp->optional_values = (void *)items;
	else
		sp->n_tensor_values = (size_t)s->n, sp->tensor_values = (void *)items;
	return sp;
}

static Onnx__MapProto *map_msg(bag *b, const om_tensor *v, int depth)
{
	(void)depth;
	Onnx__MapProto *mp = bag_alloc(b, 1, sizeof *mp);
	if (!mp)
		return NULL;
	onnx__map_proto__init(mp);
	const om_tensor *keys = om_map_keys(v);
	const int64_t n = keys->dims[0];
	mp->has_key_type = 1;
	mp->key_type = keys->dtype;
	if (keys->dtype == OM_STRING) {
		ProtobufCBinaryData *s = bag_alloc(b, (size_t)n, sizeof *s);
		if (!s)
			return NULL;
		const om_str *e = keys->data;
		for (int64_t i = 0; i < n; i++)
			s[i] = (ProtobufCBinaryData){(size_t)(e[i].len > 0 ? e[i].len : 0),
						     (uint8_t *)e[i].ptr};
		mp->n_string_keys = (size_t)n;
		mp->string_keys = s;
	} else {
		mp->n_keys = (size_t)n;
		mp->keys = keys->data;
	}
	return (mp->values = seq_msg(b, om_map_values(v), depth + 1)) ? mp : NULL;
}

static Onnx__OptionalProto *opt_msg(bag *b, const om_tensor *v, int depth)
{
	Onnx__OptionalProto *op = bag_alloc(b, 1, sizeof *op);
	if (!op)
		return NULL;
	onnx__optional_proto__init(op);
	const om_seq *s = om_box(v);
	op->has_elem_type = 1;
	if (!s->n) {
		op->elem_type = ONNX__OPTIONAL_PROTO__DATA_TYPE__UNDEFINED;
		return op;
	}
	const om_tensor *it = &s->items[0];
	switch (it->dtype) {
	case OM_SEQ_DTYPE:
		op->elem_type = ONNX__OPTIONAL_PROTO__DATA_TYPE__SEQUENCE;
		return (op->sequence_value = seq_msg(b, it, depth + 1)) ? op : NULL;
	case OM_MAP_DTYPE:
		op->elem_type = ONNX__OPTIONAL_PROTO__DATA_TYPE__MAP;
		return (op->map_value = map_msg(b, it, depth + 1)) ? op : NULL;
	case OM_OPT_DTYPE:
		op->elem_type = ONNX__OPTIONAL_PROTO__DATA_TYPE__OPTIONAL;
		return (op->optional_value = opt_msg(b, it, depth + 1)) ? op : NULL;
	default:
		op->elem_type = ONNX__OPTIONAL_PROTO__DATA_TYPE__TENSOR;
		return (op->tensor_value = whole_tensor(b, it)) ? op : NULL;
	}
}

om_kind om_value_file_write(const char *path, const om_tensor *v, const char *name,
			    om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	if (!path || !v)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "no path or no value");
	if (!om_is_box(v))
		return om_tensor_write_file(path, v, name, st);
	om_kind k = om_value_check(v, st);
	if (k)
		return k;
	bag b = {.st = st};
	ProtobufCMessage *msg = NULL;
	char *nm = (char *)(name ? name : "");
	if (v->dtype == OM_SEQ_DTYPE) {
		Onnx__SequenceProto *m = seq_msg(&b, v, 0);
		if (m)
			m->name = nm, msg = &m->base;
	} else if (v->dtype == OM_MAP_DTYPE) {
		Onnx__MapProto *m = map_msg(&b, v, 0);
		if (m)
			m->name = nm, msg = &m->base;
	} else {
		Onnx__OptionalProto *m = opt_msg(&b, v, 0);
		if (m)
			m->name = nm, msg = &m->base;
	}
	if (!msg) {
		bag_free(&b);
		return st->kind ? st->kind : om_error(st, OM_ERR_INTERNAL, NULL, "no message");
	}
	om_out_file o;
	if (!(k = om_out_open(&o, path, st))) {
		k = om_pack_to_file(msg, o.f) ? OM_OK
					      : om_error(st, OM_ERR_IO, NULL, "cannot write '%s'",
							 path);
		if (!k)
			k = om_out_commit(&o, st);
		om_out_discard(&o);
	}
	bag_free(&b);
	return k;
}
