/* files.c — regular-file-only input opening and atomic outputs (temporary file + rename). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <protobuf-c/protobuf-c.h>

#include "files.h"

static const char *kind_of(mode_t mode)
{
	return S_ISDIR(mode)	? "a folder"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISCHR(mode)	? "a character device"
	       : S_ISBLK(mode)	? "a block device"
	       : S_ISSOCK(mode) ? "a socket"
				: "of another kind";
}

om_kind om_file_open_regular(const char *path, const char *what, int *fd, struct stat *sb,
			     om_status *st)
{
	*fd = -1;
	struct stat before, after;
	if (stat(path, &before) != 0)
		return om_error(st, OM_ERR_IO, NULL, "cannot open %s '%s': %s", what, path,
				strerror(errno));
	if (!S_ISREG(before.st_mode))
		return om_error(st, OM_ERR_IO, NULL, "%s '%s' is %s, not a regular file", what,
				path, kind_of(before.st_mode));
	/* non-blocking: if it was swapped for a FIFO since, the open still returns */
	int f = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (f < 0)
		return om_error(st, OM_ERR_IO, NULL, "cannot open %s '%s': %s", what, path,
				strerror(errno));
	if (fstat(f, &after) != 0 || !S_ISREG(after.st_mode) || after.st_dev != before.st_dev ||
	    after.st_ino != before.st_ino) {
		close(f);
		return om_error(st, OM_ERR_IO, NULL, "%s '%s' changed while being opened", what,
				path);
	}
	int flags = fcntl(f, F_GETFL);
	if (flags != -1)
		fcntl(f, F_SETFL, flags & ~O_NONBLOCK);
	*fd = f;
	if (sb)
		*sb = after;
	return OM_OK;
}

om_kind om_out_check_dest(const char *path, om_status *st)
{
	struct stat sb;
	size_t n = strlen(path);
	if (!n || path[n - 1] == '/')
		return om_error(st, OM_ERR_IO, NULL, "'%s' is a folder, not a file name", path);
	if (lstat(path, &sb) != 0 || (S_ISLNK(sb.st_mode) && stat(path, &sb) != 0))
		return OM_OK; /* nothing there (or a dangling symlink): created */
	if (S_ISDIR(sb.st_mode))
		return om_error(st, OM_ERR_IO, NULL, "'%s' is a folder, not a file name", path);
	if (!S_ISREG(sb.st_mode))
		return om_error(st, OM_ERR_IO, NULL,
				"'%s' is %s: outputs are files, written beside it and renamed "
				"over it", path, kind_of(sb.st_mode));
	return OM_OK;
}

om_kind om_out_open(om_out_file *o, const char *path, om_status *st)
{
	o->f = NULL;
	o->tmp[0] = 0;
	o->stream = false;
	o->slot = -1;
	om_kind k = om_out_check_dest(path, st);
	return k ? k : om_out_create(o, path, st);
}

om_kind om_out_create(om_out_file *o, const char *path, om_status *st)
{
	o->f = NULL;
	o->tmp[0] = 0;
	o->stream = false;
	o->slot = -1;
	if (snprintf(o->path, sizeof o->path, "%s", path) >= (int)sizeof o->path)
		return om_error(st, OM_ERR_IO, NULL, "path too long: '%.200s...'", path);
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int dlen = slash ? (int)(slash - path) + 1 : 0;
	/* ".<name>.XXXXXX" beside it, the name cut so the whole stays within NAME_MAX */
	if (snprintf(o->tmp, sizeof o->tmp, "%.*s.%.200s.XXXXXX", dlen, path, base) >=
	    (int)sizeof o->tmp) {
		o->tmp[0] = 0;
		return om_error(st, OM_ERR_IO, NULL, "path too long: '%.200s...'", path);
	}
	/* O_EXCL: a new file, never one a symlink planted under the name points at */
	int fd = mkstemp(o->tmp);
	int e = errno;
	if (fd >= 0)
		o->slot = om_cleanup_add(o->tmp);
	if (fd >= 0 && !(o->f = fdopen(fd, "wb"))) {
		e = errno;
		close(fd);
		om_out_discard(o);
		fd = -1;
	}
	if (fd < 0) {
		o->tmp[0] = 0;
		return om_error(st, OM_ERR_IO, NULL, "cannot create a file beside '%s': %s", path,
				strerror(e));
	}
	fchmod(fd, 0644);
	return OM_OK;
}

om_kind om_out_open_stream(om_out_file *o, const char *path, om_status *st)
{
	struct stat sb;
	o->stream = false;
	if (stat(path, &sb) != 0 || !(S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode)))
		return om_out_open(o, path, st);
	o->tmp[0] = 0;
	o->slot = -1;
	snprintf(o->path, sizeof o->path, "%s", path);
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || !(o->f = fdopen(fd, "wb"))) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return om_error(st, OM_ERR_IO, NULL, "cannot write to '%s': %s", path,
				e == ENXIO ? "a FIFO nobody reads" : strerror(e));
	}
	int flags = fcntl(fd, F_GETFL);
	if (flags != -1)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK); /* a full pipe waits for its reader */
	o->stream = true;
	return OM_OK;
}

om_kind om_out_finish(om_out_file *o, om_status *st)
{
	if (!o->f)
		return OM_OK;
	errno = 0;
	bool ok = fflush(o->f) == 0 && (o->stream || fsync(fileno(o->f)) == 0) && !ferror(o->f);
	int e = errno;
	ok = fclose(o->f) == 0 && ok;
	o->f = NULL;
	if (!ok) {
		om_out_discard(o);
		return om_error(st, OM_ERR_IO, NULL, "cannot write '%s': %s", o->path,
				strerror(e ? e : EIO));
	}
	return OM_OK;
}

om_kind om_out_rename(om_out_file *o, om_status *st)
{
	if (o->stream)
		return OM_OK;
	/* a cleanup between the two finds tmp gone: nothing to remove */
	return om_out_renamed(o, rename(o->tmp, o->path), st);
}

om_kind om_out_renamed(om_out_file *o, int r, om_status *st)
{
	if (r != 0) {
		int e = errno;
		om_out_discard(o);
		return om_error(st, OM_ERR_IO, NULL, "cannot write '%s': %s", o->path,
				strerror(e));
	}
	om_cleanup_drop(o->slot);
	o->slot = -1;
	o->tmp[0] = 0;
	return OM_OK;
}

om_kind om_out_commit(om_out_file *o, om_status *st)
{
	om_kind k = om_out_finish(o, st);
	return k ? k : om_out_rename(o, st);
}

void om_out_discard(om_out_file *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp[0]) { /* slot is o's only while tmp names a file (a zeroed o has none) */
		unlink(o->tmp);
		om_cleanup_drop(o->slot);
	}
	o->slot = -1;
	o->tmp[0] = 0;
}

typedef struct file_buffer {
	ProtobufCBuffer base;
	FILE *f;
	bool failed;
} file_buffer;

static void file_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	file_buffer *fb = (file_buffer *)b;
	if (!fb->failed && len && fwrite(data, 1, len, fb->f) != len)
		fb->failed = true;
}

bool om_pack_to_file(const ProtobufCMessage *m, FILE *f)
{
	file_buffer fb = {{file_append}, f, false};
	protobuf_c_message_pack_to_buffer(m, &fb.base);
	return !fb.failed;
}
