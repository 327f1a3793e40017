/* load.c — om_onnx_load_file / om_onnx_load_memory: bytes → checked, unpacked ModelProto →
 * IR, then the caller's check of the IR (api/load.c passes the op rows' om_model_check); a
 * file that does not load is explained by model_diag.c. A file stays mapped (read-only) as
 * long as the model: its initializers point into the mapping (borrow.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model_diag.h"

/* Replaces a wire-level error in st by what om_onnx_model_diagnose says about the file, or, when
 * it finds nothing, names the file and the top-level field that holds the damage in front of
 * the original message. */
static om_kind explain(const void *data, size_t size, const char *name, om_status *st)
{
	om_status orig = *st;
	om_status d = {0};
	if (om_onnx_model_diagnose(data, size, name, &d)) {
		*st = d;
		return d.kind;
	}
	char who[400], where[200] = "", a[32], b[32];
	snprintf(who, sizeof who, "%s%s%s", name ? "'" : "", name ? name : "the model data",
		 name ? "'" : "");
	uint32_t field;
	size_t start, end;
	if (om_onnx_model_locate(data, size, &field, &start, &end))
		snprintf(where, sizeof where, " inside field %u (%s), bytes %s to %s", field,
			 om_onnx_model_field_name(field), om_onnx_grouped(start, a),
			 om_onnx_grouped(end, b));
	return om_error(st, orig.kind, NULL, "%s is damaged%s: %s", who, where, orig.msg);
}

/* Names the file in a lowering error: in front, or after a message about a node. */
static om_kind name_file(const char *name, om_kind k, om_status *st)
{
	if (!name || !st || k == OM_ERR_NOMEM || strstr(st->msg, name))
		return k;
	char msg[2 * sizeof st->msg + 8];
	if (st->node[0] || st->op[0])
		snprintf(msg, sizeof msg, "%s (in '%s')", st->msg, name);
	else
		snprintf(msg, sizeof msg, "'%s': %s", name, st->msg);
	memcpy(st->msg, msg, sizeof st->msg - 1);
	st->msg[sizeof st->msg - 1] = 0;
	return k;
}

/* Unpacks data: from src's mapping (of the file open as fd) with the tensor payloads left
 * there when src is not NULL. */
static om_kind unpack(const void *data, size_t size, om_source *src, int fd,
		      Onnx__ModelProto **mp, om_status *st)
{
	if (src)
		return om_onnx_unpack_borrowed(src, fd, mp, st);
	*mp = (Onnx__ModelProto *)protobuf_c_message_unpack(&onnx__model_proto__descriptor, NULL,
							    size, data);
	return *mp ? OM_OK : om_error(st, OM_ERR_INVALID_MODEL, NULL, "protobuf cannot parse it");
}

/* src (NULL, or the mapping data is, of the file open as fd) belongs to the model made, or is
 * freed on failure. */
static om_kind load(const void *data, size_t size, const char *dir, const char *name,
		    om_source *src, int fd, om_model_check_fn check, om_model **out,
		    om_status *st)
{
	*out = NULL;
	Onnx__ModelProto *mp = NULL;
	om_kind k = om_onnx_wire_check(&onnx__model_proto__descriptor, data, size, st);
	if (!k)
		k = unpack(data, size, src, fd, &mp, st);
	if (!k && !mp->graph)
		k = om_error(st, OM_ERR_INVALID_MODEL, NULL, "the model has no graph");
	if (k) {
		if (mp)
			protobuf_c_message_free_unpacked(&mp->base, src ? &src->alloc : NULL);
		if (k != OM_ERR_NOMEM && k != OM_ERR_INTERNAL)
			k = explain(data, size, name, st);
		om_onnx_source_free(src);
		return k;
	}
	om_model *m = om_model_new();
	if (!m || (dir && !(m->dir = om_arena_strdup(m->arena, dir)))) {
		protobuf_c_message_free_unpacked(&mp->base, src ? &src->alloc : NULL);
		om_onnx_source_free(src);
		om_model_free(m);
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	k = om_onnx_lower_model(m, mp, src, st);
	if (!k && check)
		k = check(m, st);
	if (k) {
		om_model_free(m);
		return name_file(name, k, st);
	}
	*out = m;
	return OM_OK;
}

om_kind om_onnx_load_memory(const void *data, size_t size, const char *dir,
			    om_model_check_fn check, om_model **out, om_status *st)
{
	return load(data, size, dir, NULL, NULL, -1, check, out, st);
}

/* The folder of path ("." when it has none). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

om_kind om_onnx_load_file(const char *path, om_model_check_fn check, om_model **out,
			  om_status *st)
{
	*out = NULL;
	int fd;
	struct stat sb, entry;
	om_kind k = om_file_open_regular(path, "model", &fd, &sb, st);
	if (k)
		return k;
	size_t size = (size_t)sb.st_size;
	om_source *src = NULL;
	if (size) {
		/* read-only: tensors borrow their bytes from it, and a write would be a bug */
		void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			close(fd);
			return om_error(st, OM_ERR_IO, NULL, "cannot map '%s': %s", path,
					strerror(errno));
		}
		if (!(src = calloc(1, sizeof *src))) {
			munmap(p, size);
			close(fd);
			return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
		}
		src->base = p;
		src->size = size;
		src->fd = -1;
	}
	char *dir = dir_of(path);
	if (dir) { /* the model owns src from here on (kept while its tensors point into it) */
		k = load(src ? src->base : (const void *)"", size, dir, path, src, fd, check, out,
			 st);
	} else {
		om_onnx_source_free(src);
		k = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	if (*out && src)
		src->fd = fd; /* the model's from here on: om_onnx_read_in */
	else
		close(fd);
	free(dir);
	om_io_resources *res = *out ? (*out)->resources : NULL;
	if (res) { /* what a save must not replace with a weights file */
		res->file[res->nfile++] = (om_file_id){sb.st_dev, sb.st_ino};
		if (lstat(path, &entry) == 0) /* a symlink: the link itself too */
			res->file[res->nfile++] = (om_file_id){entry.st_dev, entry.st_ino};
	}
	return k;
}
