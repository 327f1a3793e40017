/* load.c — om_model_load / om_model_load_memory: bytes → checked, unpacked ModelProto → IR */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx_io.h"

om_kind om_model_load_memory(const void *data, size_t size, const char *dir, om_model **out,
			     om_status *st)
{
	*out = NULL;
	om_kind k = om_onnx_wire_check(&onnx__model_proto__descriptor, data, size, st);
	if (k)
		return k;
	Onnx__ModelProto *mp = (Onnx__ModelProto *)protobuf_c_message_unpack(
		&onnx__model_proto__descriptor, NULL, size, data);
	if (!mp)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL,
				"not an ONNX model (protobuf parse failed)");
	om_model *m = om_model_new();
	if (!m) {
		protobuf_c_message_free_unpacked(&mp->base, NULL);
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	if (dir && !(m->dir = om_arena_strdup(m->arena, dir))) {
		protobuf_c_message_free_unpacked(&mp->base, NULL);
		om_model_free(m);
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	k = om_onnx_lower_model(m, mp, st);
	if (k) {
		om_model_free(m);
		return k;
	}
	*out = m;
	return OM_OK;
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

om_kind om_model_load(const char *path, om_model **out, om_status *st)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return om_error(st, OM_ERR_IO, NULL, "cannot open '%s': %s", path, strerror(errno));
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return om_error(st, OM_ERR_IO, NULL, "'%s' is not a regular file", path);
	}
	size_t size = (size_t)sb.st_size;
	void *data = NULL;
	if (size) {
		data = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (data == MAP_FAILED) {
			close(fd);
			return om_error(st, OM_ERR_IO, NULL, "cannot map '%s': %s", path,
					strerror(errno));
		}
	}
	close(fd);
	char *dir = dir_of(path);
	om_kind k = dir ? om_model_load_memory(size ? data : "", size, dir, out, st)
			: om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	free(dir);
	if (size)
		munmap(data, size); /* protobuf-c copied what the model keeps */
	return k;
}
