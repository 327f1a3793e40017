/* onnx_io.h — internals shared by the ONNX loader, writer and tensor files (not public). */
#ifndef OM_ONNX_IO_H
#define OM_ONNX_IO_H

#include "files.h"
#include "ir.h"
#include "onnx.pb-c.h"

/** Nesting limit for subgraphs and for the wire-format check (deeper files are rejected). */
enum { OM_ONNX_MAX_DEPTH = 64 };

/** A file mapped for external data, unmapped with the model. */
typedef struct om_mapping {
	char *path; /* resolved (realpath) */
	void *ptr;
	size_t size;
	/* what the model reads it through: the file, and each folder entry of each location
	 * naming it (a symlink there included), so that a save never replaces one of them */
	om_file_id *ids;
	int32_t nids;
	int fd; /* kept open for om_onnx_read_in when the file is OM_READ_FD_MIN or longer; -1 */
	struct om_mapping *next;
} om_mapping;

/* External-data files this long or longer stay open while mapped: a table that long may be
 * read by rows (om_onnx_read_in); the bound keeps a model of many small files within the
 * process's descriptors */
enum { OM_READ_FD_MIN = 8 << 20 };

/** A tensor the loader made from a TensorProto, with a snapshot to tell whether it changed. */
typedef struct om_loaded {
	const om_tensor *key;
	om_tensor snap;
	const Onnx__TensorProto *proto;
	UT_hash_handle hh;
} om_loaded;

/** A model file mapped read-only (PROT_READ: a stray write faults) whose TensorProto raw_data
 *  payloads the unpacked ModelProto points into; unmapped with the model. */
typedef struct om_source {
	ProtobufCAllocator alloc; /* protobuf-c's memory: malloc/free, the mapping never freed */
	const uint8_t *base;
	size_t size;
	size_t borrowed, copied; /* payload bytes pointing into the mapping, copied (misaligned) */
	size_t deferred;         /* misaligned initializers left in the mapping for the loader to
				    copy or not (om_onnx_payload_align) */
	int fd;                  /* the file, kept open for om_onnx_read_in; -1 when not */
} om_source;

/** What m->resources points at for a loaded model. */
typedef struct om_io_resources {
	Onnx__ModelProto *proto;
	om_source *src; /* NULL when loaded from memory (protobuf-c copied everything) */
	om_mapping *maps;
	om_loaded *loaded; /* uthash by key */
	om_file_id file[2]; /* the model file: its folder entry and what it resolves to */
	int32_t nfile;      /* 0 when loaded from memory */
} om_io_resources;

/** Context for turning TensorProtos into om_tensors. `dir` NULL: external data refused. */
typedef struct om_tensor_ctx {
	om_model *m;
	const char *dir;
	om_mapping **maps;
	om_loaded **loaded; /* NULL: do not record */
	bool in_place;      /* a misaligned raw_data is borrowed, not copied (initializers of a
			       mapped model: borrow.c leaves large ones misaligned) */
} om_tensor_ctx;

/** Converts tp into a new arena om_tensor (*out). Data is borrowed from tp (raw_data) or a
 *  mapping when aligned, else converted into the arena. *out stays NULL with OM_OK when the
 *  tensor is valid ONNX that om_tensor cannot hold (rank > OM_MAX_RANK, unknown element type,
 *  segments): the caller keeps the proto. */
om_kind om_onnx_tensor_from_proto(const om_tensor_ctx *c, const Onnx__TensorProto *tp,
				  om_tensor **out, om_status *st);
/** Maps `location` (relative to dir, checked not to leave it) and returns its bytes. */
om_kind om_onnx_external_map(const char *dir, const char *location, om_mapping **maps,
			     const unsigned char **data, size_t *size, om_status *st);
void om_onnx_mappings_free(om_mapping *maps);
struct om_digest;
/** Writes the bytes [off, off + len) of the file mp maps to o's file at offset `at` (o->f's
 *  end, left there after) hole-aware (holes.c) when that range of the file has holes: only
 *  its data extents are read and written, each hole is left a hole and digested as a record
 *  (om_digest_add_hole), each data byte as itself. *copied false (nothing done): no holes
 *  there, no SEEK_DATA on its file system, or the file is not the one mapped any more; the
 *  caller writes the mapped bytes. */
om_kind om_out_copy_holes(om_out_file *o, uint64_t at, const om_mapping *mp, uint64_t off,
			  uint64_t len, struct om_digest *dg, bool *copied, om_status *st);
/** Reads a protobuf varint at p[*pos] (n bytes in all) into *out and moves *pos past it;
 *  false when it runs past n or over 10 bytes. */
bool om_wire_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *out);
/** Checks the wire format of a ModelProto/TensorProto: lengths, tags, nesting depth. */
om_kind om_onnx_wire_check(const ProtobufCMessageDescriptor *d, const uint8_t *data,
			   size_t size, om_status *st);
/** om_model_save with `limit` in place of protobuf's 2 GB (INT32_MAX) as the largest model
 *  file: a model over it goes to external data (every weight of external_min_bytes or more,
 *  whatever its size), and is refused when it is still over it (tests use small limits). */
om_kind om_onnx_save(const om_model *m, const char *path, const om_save_options *opt,
		     size_t limit, om_status *st);
/** The name of a model's external-data file (publish.c): "<model_base>.<16 hex of digest>.data",
 *  model_base cut so that the name fits NAME_MAX. */
void om_onnx_data_name(const char *model_base, uint64_t digest, char name[NAME_MAX + 1]);
/** name (len bytes) is such a name for model_base. */
bool om_onnx_is_data_name(const char *model_base, const char *name, size_t len);
/** Renames the finished temporary file o over o->path by exchanging the two when a file is
 *  there, then removes the data files the replaced model named by om_onnx_data_name (but
 *  `keep`, NULL for none) and the replaced file; a plain rename where exchange cannot be had. */
om_kind om_onnx_publish_model(om_out_file *o, const char *keep, om_status *st);
/** Renames the finished temporary file o to o->path when nothing is there (*taken false);
 *  when something is, leaves o as it is and sets *taken. */
om_kind om_out_rename_new(om_out_file *o, bool *taken, om_status *st);
/** Reads a whole file into malloc'd memory (tensor and value files). */
om_kind om_onnx_read_file(const char *path, unsigned char **data, size_t *size, om_status *st);
/** Lowers np into a new node of g (values by name in g, subgraphs lowered), as the loader
 *  does; np must live as long as m (the node keeps it as its proto). */
om_kind om_onnx_lower_node(om_model *m, om_graph *g, const Onnx__NodeProto *np, om_status *st);
/** v's initializer data is not aligned for its element type (a large initializer that the
 *  unpack of a mapped file left in place: borrow.c). */
bool om_onnx_init_misaligned(const om_value *v);
/** Gives v's misaligned initializer (om_onnx_init_misaligned) an aligned copy of its payload
 *  (om_onnx_payload_align); OM_OK and nothing done when it is aligned. */
om_kind om_onnx_align_init(om_model *m, om_value *v, om_status *st);
/** Lower an unpacked ModelProto into m (m->proto, m->resources, m->release set). mp and src
 *  (NULL when mp owns all its memory) belong to m from here on, on failure too. */
om_kind om_onnx_lower_model(om_model *m, Onnx__ModelProto *mp, om_source *src, om_status *st);
/** Unpacks the ModelProto mapped at src->base (src->size bytes, passed by om_onnx_wire_check)
 *  with every TensorProto raw_data pointing into the mapping instead of a copy (a payload
 *  misaligned for its element type is copied, aligned: read from fd, the mapped file, when
 *  fd >= 0). Sets src->alloc, which frees *out:
 *  protobuf_c_message_free_unpacked(&(*out)->base, &src->alloc). */
om_kind om_onnx_unpack_borrowed(om_source *src, int fd, Onnx__ModelProto **out,
				om_status *st);
/** An aligned copy of tp's raw_data, a misaligned initializer the unpack left in src's mapping
 *  (initializers of 64 KiB or more: the loader first looks at their readers): raw_data points
 *  at the copy from then on (freed with the proto), and the whole pages of the mapping under
 *  it are replaced by an inaccessible range. NULL when out of memory or raw_data is not in
 *  the mapping (nothing changed). */
uint8_t *om_onnx_payload_align(om_source *src, Onnx__TensorProto *tp);
/** Whether [p, p + n) lies in the read-only file mapping [base, base + size); with give_back,
 *  the whole pages inside [p, p + n) are released (MADV_DONTNEED: a later read faults them back
 *  from the file). */
bool om_onnx_pages_in(const void *base, size_t size, const void *p, size_t n, bool give_back);
/** Whether [p, p + n) lies in the file mapping [base, base + size) of the file open as fd
 *  (-1: none) and was copied into dst by reading the file (pread), which leaves its pages
 *  unmapped: a read of a few rows of a table given back after every run (om_step.give_back)
 *  costs a system call each instead of a page fault each (25 us in this VM). False, dst
 *  unspecified, when not or when the read fails; the caller then copies from p. */
bool om_onnx_read_in(const void *base, size_t size, int fd, const void *p, size_t n, void *dst);
/** Releases a model file mapping (src may be NULL). */
void om_onnx_source_free(om_source *src);
/** Gives back the memory of tp's raw_data, which nothing reads again: an aligned copy is freed
 *  (tp is left without raw_data); the whole pages of the mapping under a borrowed payload are
 *  released with MADV_DONTNEED (the mapping is private and read-only: a later read would fault
 *  them back from the file). Other payloads are left alone. */
void om_onnx_payload_drop(const om_source *src, Onnx__TensorProto *tp);

/* ---- loading (load.c; the public om_model_load is api/load.c) ----------------------------- */

/** A check of a lowered model that a load must pass (the op rows' om_model_check). */
typedef om_kind (*om_model_check_fn)(const om_model *m, om_status *st);
/** Loads the model at path (mapped, wire-checked, unpacked, lowered), then runs `check` when
 *  not NULL; on failure *out is NULL and the error names the file. */
om_kind om_onnx_load_file(const char *path, om_model_check_fn check, om_model **out,
			  om_status *st);
/** The same from bytes; `dir` resolves external data (NULL: none may be used). */
om_kind om_onnx_load_memory(const void *data, size_t size, const char *dir,
			    om_model_check_fn check, om_model **out, om_status *st);

/* ---- declared types and test data (value_file.c) ---------------------------------------- */

/** OM_SEQ_DTYPE for a sequence type, OM_OPT_DTYPE for an optional type, OM_MAP_DTYPE for a map
 *  type, 0 otherwise. */
int32_t om_type_box_kind(const om_type *ty);
/** The element type of a sequence type's tensors (or an optional's tensor, or an optional's
 *  sequence's, or a map's values), OM_UNDEFINED when not declared. */
int32_t om_type_box_elem(const om_type *ty);
/** Reads a value file (input_N.pb / output_N.pb of a backend test): a SequenceProto when ty is
 *  a sequence type, an OptionalProto when it is an optional type, else a TensorProto (or .npy,
 *  om_tensor_read_file). Free with om_value_free. */
om_kind om_value_read_file(const char *path, const om_type *ty, om_tensor *t, om_status *st);
/** The key type of a map type (or of the map in a sequence or optional type), else 0. */
int32_t om_type_map_key(const om_type *ty);

#endif
