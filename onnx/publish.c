/* publish.c — the last steps of a model save: an external-data file placed under a name
 * nothing has (renameat2 RENAME_NOREPLACE), so that no other model names it; the model file
 * renamed over its destination by exchanging the two (RENAME_EXCHANGE), so that the file it
 * replaced is known, and the external-data files that file named by om_onnx_data_name removed:
 * no model names them any more. */
#define _GNU_SOURCE /* renameat2 (Linux 3.15, glibc 2.28) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "onnx_io.h"

enum { HEX = 16, SUFFIX = 1 + HEX + 5 }; /* ".<16 hex>.data" */

/* Messages nested deeper are not looked into (as the loader's wire check refuses them). */
enum { MAX_DEPTH = 4 * OM_ONNX_MAX_DEPTH };

static size_t prefix_len(const char *model_base)
{
	size_t n = strlen(model_base);
	return n < NAME_MAX - SUFFIX ? n : NAME_MAX - SUFFIX;
}

void om_onnx_data_name(const char *model_base, uint64_t digest, char name[NAME_MAX + 1])
{
	/* as long as any other: the digits are filled in once the bytes are written */
	snprintf(name, NAME_MAX + 1, "%.*s.%016llx.data", (int)prefix_len(model_base), model_base,
		 (unsigned long long)digest);
}

bool om_onnx_is_data_name(const char *model_base, const char *name, size_t len)
{
	const size_t p = prefix_len(model_base);
	if (len != p + SUFFIX || memcmp(name, model_base, p) || name[p] != '.' ||
	    memcmp(name + p + 1 + HEX, ".data", 5))
		return false;
	for (size_t i = p + 1; i < p + 1 + HEX; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	return true;
}

/* ---- the locations a model file names ----------------------------------------------------- */

typedef struct walk {
	const char *dir;  /* the model's folder, "" or ending in '/' */
	const char *base; /* the model's file name */
	const char *keep; /* a location not to remove (the new model's), or NULL */
	unsigned ext_field; /* TensorProto.external_data's field number */
} walk;

/* A field's payload: p[*pos] on (len-delimited: *sub, *nsub), false when malformed. */
static bool next_field(const uint8_t *p, size_t n, size_t *pos, uint64_t *tag, const uint8_t **sub,
		       size_t *nsub)
{
	uint64_t v;
	*sub = NULL;
	if (!om_wire_varint(p, n, pos, tag))
		return false;
	switch (*tag & 7) {
	case 0:
		return om_wire_varint(p, n, pos, &v);
	case 1:
	case 5:
		v = (*tag & 7) == 1 ? 8 : 4;
		break;
	case 2:
		if (!om_wire_varint(p, n, pos, &v))
			return false;
		*sub = p + *pos;
		*nsub = (size_t)v;
		break;
	default:
		return false;
	}
	if (v > n - *pos)
		return false;
	*pos += (size_t)v;
	return true;
}

/* One StringStringEntryProto of a tensor's external_data: removes the file a "location" names
 * when it is a data file of this model's name other than w->keep. */
static void entry(const walk *w, const uint8_t *p, size_t n)
{
	const uint8_t *key = NULL, *val = NULL, *sub;
	size_t nkey = 0, nval = 0, nsub = 0, pos = 0;
	uint64_t tag;
	while (pos < n && next_field(p, n, &pos, &tag, &sub, &nsub))
		if (sub && (tag >> 3) == 1)
			key = sub, nkey = nsub;
		else if (sub && (tag >> 3) == 2)
			val = sub, nval = nsub;
	if (!key || nkey != 8 || memcmp(key, "location", 8) || !val ||
	    !om_onnx_is_data_name(w->base, (const char *)val, nval) ||
	    (w->keep && strlen(w->keep) == nval && !memcmp(w->keep, val, nval)))
		return;
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s%.*s", w->dir, (int)nval, (const char *)val) <
	    (int)sizeof path)
		unlink(path);
}

static void message(const walk *w, const ProtobufCMessageDescriptor *d, const uint8_t *p,
		    size_t n, int depth)
{
	const uint8_t *sub;
	size_t nsub = 0, pos = 0;
	uint64_t tag;
	while (depth < MAX_DEPTH && pos < n && next_field(p, n, &pos, &tag, &sub, &nsub)) {
		const unsigned id = (unsigned)(tag >> 3);
		const ProtobufCFieldDescriptor *f =
			sub ? protobuf_c_message_descriptor_get_field(d, id) : NULL;
		if (d == &onnx__tensor_proto__descriptor && id == w->ext_field)
			entry(w, sub, nsub);
		else if (f && f->type == PROTOBUF_C_TYPE_MESSAGE)
			message(w, f->descriptor, sub, nsub, depth + 1);
	}
}

/* Removes the data files the model file `old` (a name of the replaced file) named. */
static void remove_stale(const char *path, const char *old, const char *keep)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + 1 : 0, path);
	walk w = {dir, slash ? slash + 1 : path, keep,
		  protobuf_c_message_descriptor_get_field_by_name(&onnx__tensor_proto__descriptor,
								  "external_data")->id};
	/* not through a symlink, and only a regular file */
	int fd = open(old, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat sb;
	if (fd < 0)
		return;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
		void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			message(&w, &onnx__model_proto__descriptor, p, (size_t)sb.st_size, 0);
			munmap(p, (size_t)sb.st_size);
		}
	}
	close(fd);
}

/* Whether renameat2's flag failed because this filesystem has no such flag. */
static bool no_flag(void)
{
	return errno == EINVAL || errno == ENOSYS || errno == ENOTSUP;
}

om_kind om_onnx_publish_model(om_out_file *o, const char *keep, om_status *st)
{
	/* Another save to this path may place its model between our look and our rename: a
	 * model found is exchanged (its data files are then ours to remove), a free name is
	 * taken only while free (else a model placed meanwhile would be replaced unseen and its
	 * data files left behind), and either is tried again when the other save got there
	 * first. Bounded: then a plain rename. */
	for (int tries = 0; !o->stream && tries < 64; tries++) {
		struct stat sb;
		if (lstat(o->path, &sb) != 0) {
			if (errno != ENOENT)
				break;
			if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE) == 0)
				return om_out_renamed(o, 0, st);
			if (errno == EEXIST)
				continue;
			break;
		}
		if (!S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode))
			break;
		if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_EXCHANGE) == 0) {
			/* o->tmp names the replaced file now: its data files, then itself */
			remove_stale(o->path, o->tmp, keep);
			om_out_discard(o);
			return OM_OK;
		}
		if (errno != ENOENT) /* gone meanwhile: again; else no exchange here */
			break;
	}
	return om_out_rename(o, st); /* no such flags on this filesystem, or not a file there */
}

om_kind om_out_rename_new(om_out_file *o, bool *taken, om_status *st)
{
	*taken = false;
	int r = renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE);
	if (r != 0 && no_flag()) {
		/* no RENAME_NOREPLACE on this filesystem: a second name, made only when free */
		r = link(o->tmp, o->path);
		if (r == 0)
			unlink(o->tmp);
	}
	if (r != 0 && errno == EEXIST) {
		*taken = true;
		return OM_OK;
	}
	return om_out_renamed(o, r, st);
}
