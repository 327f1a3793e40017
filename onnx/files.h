/* files.h — how omopt touches files: inputs are opened only when they are regular files (a FIFO,
 * a device or a folder is refused without blocking), outputs are written to a temporary file in
 * the destination's folder and renamed over it (a symlink there is replaced, never followed);
 * the temporary files being written are listed for om_save_cleanup (cleanup.c). */
#ifndef OM_FILES_H
#define OM_FILES_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

#include "ir.h"

/** A file's identity: device and inode. */
typedef struct om_file_id {
	dev_t dev;
	ino_t ino;
} om_file_id;

static inline bool om_file_id_eq(om_file_id a, om_file_id b)
{
	return a.dev == b.dev && a.ino == b.ino;
}

/** Opens path read-only when it is a regular file: it is looked at first (anything else is
 *  refused without being opened, so a FIFO cannot block), then opened without blocking and
 *  checked again. `what` names the file in messages ("model", "external data", ...).
 *  Fills *fd and, when sb is not NULL, *sb. OM_ERR_IO on failure. */
om_kind om_file_open_regular(const char *path, const char *what, int *fd, struct stat *sb,
			     om_status *st);

/** An output being written: a temporary file beside `path`, renamed over it when done. */
typedef struct om_out_file {
	FILE *f;
	char path[PATH_MAX];
	char tmp[PATH_MAX]; /* "" once renamed or removed */
	bool stream;        /* om_out_open_stream: written straight into a FIFO or device */
	int slot;           /* tmp's entry for om_save_cleanup (om_cleanup_add), -1: none */
} om_out_file;

/** Refuses, before anything is written, a destination that is not a file that may be replaced:
 *  a folder, a device, a FIFO, or a symlink to one of them (a symlink to a regular file, or
 *  dangling, is replaced itself). */
om_kind om_out_check_dest(const char *path, om_status *st);
/** om_out_check_dest, then om_out_create. */
om_kind om_out_open(om_out_file *o, const char *path, om_status *st);
/** Creates the temporary file (mode 0644, a new name: mkstemp) in path's folder, listed for
 *  om_save_cleanup; o->f is open for writing. path itself is not looked at. */
om_kind om_out_create(om_out_file *o, const char *path, om_status *st);
/** Flushes, fsyncs and closes the temporary file (o->f becomes NULL); removes it on failure. */
om_kind om_out_finish(om_out_file *o, om_status *st);
/** Renames the finished temporary file over o->path; removes it on failure. */
om_kind om_out_rename(om_out_file *o, om_status *st);
/** After o->tmp was renamed into place (r: the rename's result, errno as it left it): on a
 *  failure the temporary file is removed and the error names o->path; on success o holds no
 *  temporary file any more. */
om_kind om_out_renamed(om_out_file *o, int r, om_status *st);
/** om_out_open, except that a destination that is (or links to) a FIFO or a character device
 *  is written straight into, as a stream (`-o /dev/stdout`); a FIFO without a reader is an
 *  error, not a wait. */
om_kind om_out_open_stream(om_out_file *o, const char *path, om_status *st);
/** om_out_finish then om_out_rename. */
om_kind om_out_commit(om_out_file *o, om_status *st);
/** Closes and removes the temporary file if it is still there (after a failure; idempotent). */
void om_out_discard(om_out_file *o);

struct ProtobufCMessage;
/** Writes m's wire form to f as protobuf-c packs it, field by field: a bytes field (a tensor's
 *  raw_data) goes from where it lies, never through a copy of the whole message. false when a
 *  write failed (errno as fwrite left it). */
bool om_pack_to_file(const struct ProtobufCMessage *m, FILE *f);

/* ---- what om_save_cleanup removes (cleanup.c) --------------------------------------------- */

/** Lists path (kept valid and unchanged by the caller until om_cleanup_drop) among the files
 *  om_save_cleanup removes. Returns its slot, or -1 when all are taken (then a signal may
 *  leave that file behind). */
int om_cleanup_add(const char *path);
/** Keeps om_save_cleanup off slot's file while its owner renames it (slot -1: nothing).
 *  false: om_save_cleanup removed it already (the write was cancelled). */
bool om_cleanup_hold(int slot);
/** Gives a held slot back to om_save_cleanup. */
void om_cleanup_release(int slot);
/** Takes slot off the list (waits while om_save_cleanup removes its file); -1: nothing. */
void om_cleanup_drop(int slot);

#endif
