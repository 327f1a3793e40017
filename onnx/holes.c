/* holes.c — a payload that is a range of a mapped external-data file, copied to an output file
 * hole-aware: only the source's data extents (lseek SEEK_DATA/SEEK_HOLE) are read and written,
 * its holes stay holes in the output, and the digest takes each hole as a record, not as its
 * zero bytes. A terabyte of holes costs a few system calls. */
#define _GNU_SOURCE /* SEEK_DATA, SEEK_HOLE */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "onnx_io.h"

enum { CHUNK = 1 << 20 };

/* The next offset at or after pos where `whence` (SEEK_DATA or SEEK_HOLE) starts, at most end
 * (no data after pos: end); -1 when the file system cannot say. */
static int64_t next(int fd, uint64_t pos, int whence, uint64_t end)
{
	const off_t r = lseek(fd, (off_t)pos, whence);
	if (r < 0)
		return whence == SEEK_DATA && errno == ENXIO ? (int64_t)end : -1;
	return (uint64_t)r < end ? (int64_t)r : (int64_t)end;
}

/* The source file, opened again: the file mp maps (its id, ids[0]), at least `end` bytes;
 * -1 otherwise. */
static int open_source(const om_mapping *mp, uint64_t end)
{
	if (!mp->path || mp->nids < 1)
		return -1;
	int fd = open(mp->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	struct stat sb;
	if (fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
			!om_file_id_eq(mp->ids[0], (om_file_id){sb.st_dev, sb.st_ino}) ||
			(uint64_t)sb.st_size < end)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The range [off, off + len) has a hole (else the plain copy is as cheap and the same). */
static bool has_hole(int fd, uint64_t off, uint64_t len)
{
	const int64_t d = next(fd, off, SEEK_DATA, off + len);
	if (d < 0)
		return false;
	return (uint64_t)d > off || next(fd, off, SEEK_HOLE, off + len) < (int64_t)(off + len);
}

/* Copies the data extent [from, to) of src to out at `at`, digesting it. */
static om_kind copy_extent(const om_out_file *o, int src, int out, uint64_t from, uint64_t to,
			   uint64_t at, unsigned char *buf, om_digest *dg, om_status *st)
{
	while (from < to) {
		const size_t n = to - from < CHUNK ? (size_t)(to - from) : CHUNK;
		const ssize_t r = pread(src, buf, n, (off_t)from);
		if (r <= 0)
			return om_error(st, OM_ERR_IO, NULL, "cannot read external data: %s",
					r < 0 ? strerror(errno) : "the file is shorter now");
		for (size_t done = 0; done < (size_t)r;) {
			const ssize_t w = pwrite(out, buf + done, (size_t)r - done,
						 (off_t)(at + done));
			if (w <= 0)
				return om_error(st, OM_ERR_IO, NULL, "cannot write '%s': %s",
						o->path, strerror(w < 0 ? errno : EIO));
			done += (size_t)w;
		}
		om_digest_add(dg, buf, (size_t)r);
		from += (uint64_t)r, at += (uint64_t)r;
	}
	return OM_OK;
}

/* The extents of [off, off + len) of src written to o from `at` on, holes left as holes. */
static om_kind copy_extents(om_out_file *o, int src, uint64_t at, uint64_t off, uint64_t len,
			    om_digest *dg, om_status *st)
{
	unsigned char *buf = malloc(CHUNK);
	if (!buf)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	const int out = fileno(o->f);
	const uint64_t end = off + len;
	om_kind k = OM_OK;
	for (uint64_t pos = off; !k && pos < end;) {
		const int64_t d = next(src, pos, SEEK_DATA, end);
		const int64_t h = d < 0 || (uint64_t)d >= end ? d : next(src, (uint64_t)d,
									 SEEK_HOLE, end);
		if (d < 0 || h < 0 || ((uint64_t)d < end && h <= d)) {
			k = om_error(st, OM_ERR_IO, NULL, "cannot find the data of external data: %s",
				     strerror(errno ? errno : EIO));
			break;
		}
		if ((uint64_t)d > pos)
			om_digest_add_hole(dg, at + (pos - off), (uint64_t)d - pos);
		if ((uint64_t)d < end)
			k = copy_extent(o, src, out, (uint64_t)d, (uint64_t)h,
					at + ((uint64_t)d - off), buf, dg, st);
		pos = (uint64_t)(d < h ? h : d);
	}
	free(buf);
	/* a hole at the end: the file is made that long without writing it */
	struct stat sb;
	if (!k && (fstat(out, &sb) != 0 ||
		   ((uint64_t)sb.st_size < at + len && ftruncate(out, (off_t)(at + len)) != 0) ||
		   fseeko(o->f, (off_t)(at + len), SEEK_SET) != 0))
		k = om_error(st, OM_ERR_IO, NULL, "cannot write '%s': %s", o->path,
			     strerror(errno));
	return k;
}

om_kind om_out_copy_holes(om_out_file *o, uint64_t at, const om_mapping *mp, uint64_t off,
			  uint64_t len, om_digest *dg, bool *copied, om_status *st)
{
	*copied = false;
	const int src = len ? open_source(mp, off + len) : -1;
	if (src < 0)
		return OM_OK;
	om_kind k = OM_OK;
	if (has_hole(src, off, len)) {
		errno = 0;
		if (fflush(o->f) != 0)
			k = om_error(st, OM_ERR_IO, NULL, "cannot write '%s': %s", o->path,
				     strerror(errno ? errno : EIO));
		if (!k)
			k = copy_extents(o, src, at, off, len, dg, st);
		*copied = !k;
	}
	close(src);
	return k;
}
