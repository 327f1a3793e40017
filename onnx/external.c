/* external.c — maps external-data files, refusing locations that leave the model's folder. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx_io.h"

/* A relative path without ".." components (checked before the file system is asked). */
static bool location_is_plain(const char *loc)
{
	if (!*loc || *loc == '/')
		return false;
	for (const char *p = loc; *p;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return false;
		p += n;
		if (*p == '/')
			p++;
	}
	return true;
}

static om_kind map_file(const char *path, om_mapping *mp, struct stat *sb, om_status *st)
{
	int fd;
	om_kind k = om_file_open_regular(path, "external data", &fd, sb, st);
	if (k)
		return k;
	mp->size = (size_t)sb->st_size;
	mp->ptr = NULL;
	mp->fd = -1;
	if (mp->size) {
		/* read-only: tensors borrow their bytes, a write into one is a bug that faults */
		void *p = mmap(NULL, mp->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			close(fd);
			return om_error(st, OM_ERR_IO, NULL, "cannot map '%s': %s", path,
					strerror(errno));
		}
		mp->ptr = p;
	}
	if (mp->size >= OM_READ_FD_MIN)
		mp->fd = fd;
	else
		close(fd);
	return OM_OK;
}

static om_kind add_id(om_mapping *mp, const struct stat *sb, om_status *st)
{
	om_file_id id = {sb->st_dev, sb->st_ino};
	for (int32_t i = 0; i < mp->nids; i++)
		if (om_file_id_eq(mp->ids[i], id))
			return OM_OK;
	om_file_id *ids = realloc(mp->ids, sizeof *ids * (size_t)(mp->nids + 1));
	if (!ids)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	mp->ids = ids;
	mp->ids[mp->nids++] = id;
	return OM_OK;
}

/* Records the folder entries dir/location is reached through (each component, a symlink as
 * itself): a save must not replace any of them. path is dir/location. */
static om_kind add_entry_ids(om_mapping *mp, const char *path, size_t dlen, om_status *st)
{
	char prefix[PATH_MAX];
	for (size_t i = dlen + 1;; i++) {
		if (path[i] != '/' && path[i])
			continue;
		struct stat sb;
		snprintf(prefix, sizeof prefix, "%.*s", (int)i, path);
		om_kind k = lstat(prefix, &sb) == 0 ? add_id(mp, &sb, st) : OM_OK;
		if (k || !path[i])
			return k;
	}
}

om_kind om_onnx_external_map(const char *dir, const char *location, om_mapping **maps,
			     const unsigned char **data, size_t *size, om_status *st)
{
	if (!dir)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL,
				"external data '%s' but no model folder", location);
	if (!location_is_plain(location))
		return om_error(st, OM_ERR_INVALID_MODEL, NULL,
				"external data location '%s' leaves the model folder", location);
	char path[PATH_MAX], rdir[PATH_MAX], rpath[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/%s", dir, location) >= (int)sizeof path)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL, "external data path too long");
	if (!realpath(dir, rdir))
		return om_error(st, OM_ERR_IO, NULL, "model folder '%s': %s", dir,
				strerror(errno));
	if (!realpath(path, rpath))
		return om_error(st, OM_ERR_IO, NULL, "external data '%s': %s", path,
				strerror(errno));
	size_t nd = strlen(rdir);
	bool root = nd == 1 && rdir[0] == '/';
	if (!root && (strncmp(rpath, rdir, nd) != 0 || rpath[nd] != '/'))
		return om_error(st, OM_ERR_INVALID_MODEL, NULL,
				"external data '%s' resolves outside the model folder", location);
	om_mapping *mp = *maps;
	while (mp && strcmp(mp->path, rpath))
		mp = mp->next;
	if (mp) {
		*data = mp->ptr;
		*size = mp->size;
		return add_entry_ids(mp, path, strlen(dir), st);
	}
	mp = calloc(1, sizeof *mp);
	if (!mp || !(mp->path = strdup(rpath))) {
		free(mp);
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	struct stat sb;
	om_kind k = map_file(rpath, mp, &sb, st);
	if (k) {
		free(mp->path);
		free(mp);
		return k;
	}
	mp->next = *maps; /* freed with the others from here on */
	*maps = mp;
	k = add_id(mp, &sb, st);
	if (!k)
		k = add_entry_ids(mp, path, strlen(dir), st);
	*data = mp->ptr;
	*size = mp->size;
	return k;
}

void om_onnx_mappings_free(om_mapping *maps)
{
	while (maps) {
		om_mapping *next = maps->next;
		if (maps->ptr)
			munmap(maps->ptr, maps->size);
		if (maps->fd >= 0)
			close(maps->fd);
		free(maps->path);
		free(maps->ids);
		free(maps);
		maps = next;
	}
}
