/* borrow.c — unpacks a mapped ModelProto without copying its tensor payloads: in a copy of the
 * file's structure bytes every TensorProto raw_data is replaced by a 4-byte index, protobuf-c
 * unpacks that copy, and each raw_data is then pointed back into the mapping (copied only when
 * the payload is misaligned for its element type, so that om_tensor data stays aligned; a large
 * misaligned initializer stays where it is until the loader knows its readers:
 * om_onnx_payload_align). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "onnx_io.h"

/* Copies of misaligned payloads this long or longer go to huge pages when the system has them
 * (a copy of a 100 MB weight then takes 50 page faults, not 25,000). */
enum { HUGE = 2 << 20, RAW_DATA_FIELD = 9, GRAPH_INITIALIZER_FIELD = 5, MARKER_LEN = 4 };

typedef struct payload {
	size_t off, len;
} payload;

typedef struct elide {
	const uint8_t *in;
	size_t *sizes; /* new size of each submessage, in the order the walk meets them */
	size_t nsizes, capsizes, next_size;
	payload *pl;
	size_t npl, cappl, next_pl;
	uint8_t *out; /* NULL while measuring */
	size_t pos;
	bool oom;
} elide;

static void *grow(void *p, size_t *cap, size_t n, size_t size, bool *oom)
{
	if (n < *cap)
		return p;
	size_t c = *cap ? *cap * 2 : 256;
	void *q = c <= SIZE_MAX / size ? realloc(p, c * size) : NULL;
	if (!q) {
		*oom = true;
		return p;
	}
	*cap = c;
	return q;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80)
		v >>= 7, n++;
	return n;
}

static void put(elide *e, const void *p, size_t n)
{
	if (e->out && n)
		memcpy(e->out + e->pos, p, n);
	e->pos += n;
}

static void put_varint(elide *e, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;
	while (v >= 0x80)
		b[n++] = (uint8_t)(v | 0x80), v >>= 7;
	b[n++] = (uint8_t)v;
	put(e, b, n);
}

/* Walks the message at in[start, start + n) of type d, which om_onnx_wire_check accepted:
 * measuring (e->out NULL) records payloads and submessage sizes; emitting writes the elided
 * bytes in the same order. */
static void walk(elide *e, const ProtobufCMessageDescriptor *d, size_t start, size_t n)
{
	const bool tensor = d == &onnx__tensor_proto__descriptor;
	size_t pos = start, end = start + n;
	while (pos < end && !e->oom) {
		const size_t field = pos;
		uint64_t tag, len = 0;
		if (!om_wire_varint(e->in, end, &pos, &tag))
			return;
		if ((tag & 7) != 2) { /* varint or fixed: copied with its tag */
			uint64_t skip;
			if ((tag & 7) == 0)
				om_wire_varint(e->in, end, &pos, &skip);
			else
				pos += (tag & 7) == 1 ? 8 : 4;
			put(e, e->in + field, pos - field);
			continue;
		}
		const size_t tag_end = pos;
		om_wire_varint(e->in, end, &pos, &len);
		const ProtobufCFieldDescriptor *f =
			protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3));
		if (tensor && (tag >> 3) == RAW_DATA_FIELD) {
			size_t i;
			if (!e->out) {
				e->pl = grow(e->pl, &e->cappl, e->npl, sizeof *e->pl, &e->oom);
				if (e->oom)
					return;
				e->pl[e->npl] = (payload){pos, (size_t)len};
				i = e->npl++;
			} else {
				i = e->next_pl++;
			}
			const uint8_t idx[MARKER_LEN] = {(uint8_t)i, (uint8_t)(i >> 8),
							 (uint8_t)(i >> 16), (uint8_t)(i >> 24)};
			put(e, e->in + field, tag_end - field);
			put_varint(e, MARKER_LEN);
			put(e, idx, MARKER_LEN);
		} else if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
			size_t slot = 0;
			if (!e->out) {
				e->sizes = grow(e->sizes, &e->capsizes, e->nsizes, sizeof *e->sizes,
						&e->oom);
				if (e->oom)
					return;
				slot = e->nsizes++;
			}
			size_t sub;
			if (e->out) {
				sub = e->sizes[e->next_size++];
				put(e, e->in + field, tag_end - field);
				put_varint(e, sub);
				walk(e, f->descriptor, pos, (size_t)len);
			} else {
				const size_t before = e->pos;
				walk(e, f->descriptor, pos, (size_t)len);
				sub = e->pos - before;
				e->sizes[slot] = sub;
				e->pos = before + (tag_end - field) + varint_len(sub) + sub;
			}
		} else {
			put(e, e->in + field, pos + (size_t)len - field);
		}
		pos += (size_t)len;
	}
}

static void *b_alloc(void *data, size_t size)
{
	(void)data;
	return malloc(size);
}

/* protobuf-c frees what it allocated; raw_data pointing into the mapping is not its own. */
static void b_free(void *data, void *p)
{
	const om_source *s = data;
	const uintptr_t u = (uintptr_t)p, b = (uintptr_t)s->base;
	if (u >= b && u < b + s->size)
		return;
	free(p);
}

/* An aligned copy of the n bytes at offset off of the file, read with pread when fd >= 0 (the
 * mapping's pages are then never touched) or copied from the mapping at p. */
static uint8_t *copy_payload(int fd, size_t off, const uint8_t *p, size_t n)
{
	void *q = NULL;
	if (n >= HUGE) {
		if (posix_memalign(&q, HUGE, n))
			return NULL;
		madvise(q, n, MADV_HUGEPAGE); /* a hint: without huge pages it stays as it is */
	} else if (!(q = malloc(n))) {
		return NULL;
	}
	size_t done = 0;
	while (fd >= 0 && done < n) {
		const ssize_t r = pread(fd, (uint8_t *)q + done, n - done, (off_t)(off + done));
		if (r <= 0)
			break; /* the rest comes from the mapping */
		done += (size_t)r;
	}
	if (done < n)
		memcpy((uint8_t *)q + done, p + done, n - done);
	return q;
}

/* After a payload was copied, its whole pages in the mapping are replaced by an inaccessible
 * anonymous range, which holds no memory. Otherwise they could become resident anyway: a kernel
 * that maps a whole large page-cache folio on a fault (Linux 6.18 does) maps them when a
 * neighbouring payload is read, and the copy would then count twice in the resident set.
 * Nothing reads the mapping there again: raw_data points at the copy. Shorter payloads are left
 * alone (each hole splits the mapping in the kernel's list). A hint: failure changes nothing. */
enum { HOLE_MIN = 64 << 10 };

static void release_copied(const om_source *src, size_t off, size_t len)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const uintptr_t b = (uintptr_t)src->base;
	const uintptr_t lo = (b + off + page - 1) / page * page, hi = (b + off + len) / page * page;
	if (hi <= lo || hi - lo < HOLE_MIN)
		return;
	(void)mmap((void *)lo, hi - lo, PROT_NONE,
		   MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

/* Misaligned initializers this long or longer are left in the mapping by the unpack: the
 * loader copies them (om_onnx_payload_align) unless every reader reads them with byte moves
 * (a Gather over an embedding table touches only the rows it gathers). */
enum { DEFER_MIN = 64 << 10 };

typedef struct fixer {
	om_source *src;
	int fd;
	const payload *pl;
	size_t npl;
	bool oom;
	bool bad;
} fixer;

static void fix_tensor(fixer *x, Onnx__TensorProto *tp, bool initializer)
{
	if (!tp->has_raw_data)
		return;
	uint32_t i = 0;
	if (tp->raw_data.len != MARKER_LEN) {
		x->bad = true;
		return;
	}
	for (int b = MARKER_LEN - 1; b >= 0; b--)
		i = i << 8 | tp->raw_data.data[b];
	if (i >= x->npl) {
		x->bad = true;
		return;
	}
	b_free(x->src, tp->raw_data.data);
	const payload *p = &x->pl[i];
	const uint8_t *at = x->src->base + p->off;
	size_t align = tp->has_data_type ? om_dtype_size(tp->data_type) : 1;
	align = align > 8 ? 8 : align ? align : 1;
	tp->raw_data = (ProtobufCBinaryData){p->len, NULL};
	if (!p->len)
		return;
	if ((uintptr_t)at % align == 0) {
		tp->raw_data.data = (uint8_t *)at; /* the mapping is PROT_READ: never written */
		x->src->borrowed += p->len;
		return;
	}
	if (initializer && p->len >= DEFER_MIN) {
		tp->raw_data.data = (uint8_t *)at; /* misaligned: om_onnx_payload_align decides */
		x->src->deferred += p->len;
		return;
	}
	uint8_t *copy = copy_payload(x->fd, p->off, at, p->len);
	if (!copy) {
		tp->raw_data.len = 0;
		x->oom = true;
		return;
	}
	tp->raw_data.data = copy;
	x->src->copied += p->len;
	release_copied(x->src, p->off, p->len);
}

/* Visits every message below m (bounded by the wire check's depth) and fixes each tensor;
 * initializer: m is an item of a GraphProto's initializer list. */
static void fix(fixer *x, ProtobufCMessage *m, bool initializer)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	if (d == &onnx__tensor_proto__descriptor)
		fix_tensor(x, (Onnx__TensorProto *)m, initializer);
	const bool graph = d == &onnx__graph_proto__descriptor;
	char *base = (char *)m;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			const size_t n = *(const size_t *)(base + f->quantifier_offset);
			ProtobufCMessage **a = *(ProtobufCMessage ***)(base + f->offset);
			for (size_t k = 0; k < n; k++)
				fix(x, a[k], graph && f->id == GRAPH_INITIALIZER_FIELD);
			continue;
		}
		if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
		    *(const uint32_t *)(base + f->quantifier_offset) != f->id)
			continue;
		ProtobufCMessage *sub = *(ProtobufCMessage **)(base + f->offset);
		if (sub)
			fix(x, sub, false);
	}
}

om_kind om_onnx_unpack_borrowed(om_source *src, int fd, Onnx__ModelProto **out, om_status *st)
{
	*out = NULL;
	src->alloc = (ProtobufCAllocator){b_alloc, b_free, src};
	elide e = {.in = src->base};
	walk(&e, &onnx__model_proto__descriptor, 0, src->size);
	om_kind k = OM_OK;
	if (e.oom || e.npl > UINT32_MAX || !(e.out = malloc(e.pos ? e.pos : 1))) {
		k = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
		goto done;
	}
	const size_t total = e.pos;
	e.pos = 0;
	walk(&e, &onnx__model_proto__descriptor, 0, src->size);
	Onnx__ModelProto *mp = (Onnx__ModelProto *)protobuf_c_message_unpack(
		&onnx__model_proto__descriptor, &src->alloc, total, e.out);
	free(e.out);
	e.out = NULL;
	if (!mp) {
		k = om_error(st, OM_ERR_INVALID_MODEL, NULL, "protobuf cannot parse it");
		goto done;
	}
	fixer x = {.src = src, .fd = fd, .pl = e.pl, .npl = e.npl};
	fix(&x, &mp->base, false);
	if (x.oom || x.bad) {
		protobuf_c_message_free_unpacked(&mp->base, &src->alloc);
		k = x.oom ? om_error(st, OM_ERR_NOMEM, NULL, "out of memory")
			  : om_error(st, OM_ERR_INTERNAL, NULL, "a tensor payload was lost");
		goto done;
	}
	*out = mp;
done:
	free(e.sizes);
	free(e.pl);
	return k;
}

void om_onnx_payload_drop(const om_source *src, Onnx__TensorProto *tp)
{
	if (!src || !tp->has_raw_data || !tp->raw_data.data || !tp->raw_data.len)
		return;
	const uintptr_t u = (uintptr_t)tp->raw_data.data, b = (uintptr_t)src->base;
	if (u >= b && u < b + src->size) {
		const size_t page = (size_t)sysconf(_SC_PAGESIZE);
		const uintptr_t lo = (u + page - 1) / page * page;
		const uintptr_t hi = (u + tp->raw_data.len) / page * page;
		if (hi > lo) /* a hint: failure changes nothing */
			(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
		return;
	}
	free(tp->raw_data.data);
	tp->raw_data = (ProtobufCBinaryData){0, NULL};
	tp->has_raw_data = 0;
}

uint8_t *om_onnx_payload_align(om_source *src, Onnx__TensorProto *tp)
{
	const uintptr_t u = (uintptr_t)tp->raw_data.data, b = (uintptr_t)src->base;
	const size_t len = tp->raw_data.len;
	if (!len || u < b || u - b > src->size || len > src->size - (u - b))
		return NULL;
	uint8_t *copy = copy_payload(-1, 0, tp->raw_data.data, len);
	if (!copy)
		return NULL;
	tp->raw_data.data = copy;
	src->deferred -= len < src->deferred ? len : src->deferred;
	src->copied += len;
	release_copied(src, u - b, len);
	return copy;
}

bool om_onnx_pages_in(const void *base, size_t size, const void *p, size_t n, bool give_back)
{
	const uintptr_t u = (uintptr_t)p, b = (uintptr_t)base;
	if (!base || !n || u < b || u - b > size || n > size - (u - b))
		return false;
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const uintptr_t lo = (u + page - 1) / page * page, hi = (u + n) / page * page;
	if (give_back && hi > lo) /* a hint: failure changes nothing */
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
	return true;
}

bool om_onnx_read_in(const void *base, size_t size, int fd, const void *p, size_t n, void *dst)
{
	const uintptr_t u = (uintptr_t)p, b = (uintptr_t)base;
	if (fd < 0 || !base || u < b || u - b > size || n > size - (u - b))
		return false;
	unsigned char *d = dst;
	for (size_t done = 0; done < n;) {
		const ssize_t got = pread(fd, d + done, n - done, (off_t)(u - b + done));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		done += (size_t)got;
	}
	return true;
}

void om_onnx_source_free(om_source *src)
{
	if (!src)
		return;
	if (src->fd >= 0)
		close(src->fd);
	if (src->size)
		munmap((void *)src->base, src->size);
	free(src);
}
