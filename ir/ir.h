/*
 * ir.h — omopt's graph IR (see docs/ir.md for the picture).
 *
 *   om_model ─ graph ─▶ om_graph ─ nodes[] ─▶ om_node ─ in[]/out[] ─▶ om_value ─ init ─▶ om_tensor
 *                          │  └─ values (hash by name) ─────────────▶ om_value
 *                          └─ parent (enclosing graph of an If/Loop/Scan body)
 *
 * Everything is allocated from the model's arena and freed with the model. A value belongs to
 * exactly one graph; a subgraph refers to an enclosing graph's value through a value of its
 * own flagged OM_VALUE_OUTER with the same name (resolved with om_graph_resolve).
 * Whatever the IR does not model is kept as the original protobuf-c message (`proto` fields)
 * so that the writer can emit it unchanged.
 */
#ifndef OM_IR_H
#define OM_IR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
/* uthash exits the process when it runs out of memory unless told otherwise: with
 * HASH_NONFATAL_OOM an add that cannot allocate leaves the item out, and callers check. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "omopt.h"
#include "arena.h"
#include "status.h"

/* ---- types ------------------------------------------------------------------------------- */

/** One dim of a value's shape: a number (value >= 0), a symbol (param != NULL, value -1), or
 *  unknown (value -1, param NULL). A dim stored as -1 in a file is unknown, never a number. */
typedef struct om_dim {
	int64_t value;
	const char *param;
} om_dim;

static inline bool om_dim_known(om_dim d) { return d.value >= 0; }

enum om_type_kind {
	OM_TYPE_UNKNOWN = 0, /* no type recorded */
	OM_TYPE_TENSOR,      /* dense tensor: elem and (when rank >= 0) dims */
	OM_TYPE_OTHER        /* sequence, map, optional, sparse: kept as `proto` */
};

typedef struct om_type {
	int32_t kind;
	int32_t elem;   /* element type, OM_UNDEFINED when unknown */
	int32_t rank;   /* -1: rank unknown (no shape); dims has rank entries otherwise */
	om_dim *dims;
	const void *proto; /* original Onnx__TypeProto, for OM_TYPE_OTHER and denotations */
} om_type;

/* ---- values ------------------------------------------------------------------------------ */

enum om_value_flags {
	OM_VALUE_GRAPH_INPUT = 1u << 0,  /* listed in graph.input */
	OM_VALUE_GRAPH_OUTPUT = 1u << 1, /* listed in graph.output */
	OM_VALUE_INITIALIZER = 1u << 2,  /* listed in graph.initializer (init holds the data) */
	OM_VALUE_INFO = 1u << 3,         /* listed in graph.value_info */
	OM_VALUE_OUTER = 1u << 4         /* a subgraph's reference to an enclosing graph's value */
};

typedef struct om_value {
	const char *name;
	om_type type;
	struct om_node *producer; /* NULL for graph inputs, initializers and outer references */
	int32_t producer_slot;    /* output index in producer */
	uint32_t flags;
	om_tensor *init;   /* the data when constant: initializer or folded value; else NULL */
	const void *init_proto; /* the Onnx__TensorProto it was read from (writer reuses it while
				   init is unchanged); NULL for folded values */
	const char *doc;   /* value_info doc_string */
	int32_t nuses;     /* consumers, valid after om_graph_count_uses */
	UT_hash_handle hh; /* in graph->values, by name */
} om_value;

/* ---- attributes -------------------------------------------------------------------------- */

enum om_attr_type { /* AttributeProto.AttributeType */
	OM_ATTR_UNDEFINED = 0, OM_ATTR_FLOAT = 1, OM_ATTR_INT = 2, OM_ATTR_STRING = 3,
	OM_ATTR_TENSOR = 4, OM_ATTR_GRAPH = 5, OM_ATTR_FLOATS = 6, OM_ATTR_INTS = 7,
	OM_ATTR_STRINGS = 8, OM_ATTR_TENSORS = 9, OM_ATTR_GRAPHS = 10, OM_ATTR_SPARSE_TENSOR = 11,
	OM_ATTR_SPARSE_TENSORS = 12, OM_ATTR_TYPE_PROTO = 13, OM_ATTR_TYPE_PROTOS = 14
};

struct om_graph;

typedef struct om_attr {
	const char *name;
	int32_t type;
	const char *ref_attr_name; /* inside functions; NULL otherwise */
	const char *doc;
	float f;
	int64_t i;
	om_str s;
	om_tensor *t;
	struct om_graph *g;
	int64_t n; /* element count of the list kinds */
	float *floats;
	int64_t *ints;
	om_str *strings;
	om_tensor **tensors;
	struct om_graph **graphs;
	const void *proto; /* original Onnx__AttributeProto (sparse and type-proto kinds) */
} om_attr;

/* ---- nodes ------------------------------------------------------------------------------- */

typedef struct om_kv {
	const char *key, *value;
} om_kv;

typedef struct om_node {
	const char *name; /* may be "" */
	const char *op;
	const char *domain; /* "" for the default domain (ai.onnx) */
	const char *overload;
	const char *doc;
	int32_t nin, nout, nattr, nmeta;
	om_value **in;  /* in[i] NULL: omitted optional input ("") */
	om_value **out; /* out[i] NULL: omitted optional output ("") */
	om_attr *attrs;
	om_kv *meta;    /* metadata_props */
	const void *proto; /* original Onnx__NodeProto (unknown fields), or NULL */
	struct om_graph *graph;
	uint32_t flags;
	int32_t id; /* scratch: position in graph->nodes while a pass or the planner needs it */
} om_node;

/* ---- graphs and models ------------------------------------------------------------------- */

typedef struct om_graph {
	struct om_model *model;
	struct om_graph *parent; /* NULL for the main graph */
	const char *name, *doc;
	om_node **nodes; /* in file order; passes keep a topological order */
	int32_t nnodes, cap_nodes;
	om_value **inputs, **outputs, **inits, **infos; /* in file order */
	int32_t ninputs, noutputs, ninits, ninfos;
	om_kv *meta;
	int32_t nmeta;
	om_value *values; /* uthash: every value named in this graph */
	struct om_fresh *fresh; /* uthash: om_graph_fresh_value's next suffix per hint */
	const void *proto; /* original Onnx__GraphProto: sparse_initializer, quantization_annotation */
	struct om_graph *next_in_model; /* every graph of the model, for om_model_free */
} om_graph;

typedef struct om_opset {
	const char *domain; /* "" for ai.onnx */
	int64_t version;
} om_opset;

struct om_model {
	om_arena *arena;
	int64_t ir_version;
	om_opset *opsets;
	int32_t nopsets, nmeta;
	const char *producer_name, *producer_version, *domain, *doc;
	int64_t model_version;
	om_kv *meta;
	om_graph *graph;
	const char *dir;   /* folder of the model file, for external data; NULL from memory */
	void *proto;       /* the unpacked Onnx__ModelProto (functions, training_info, ...) */
	/* the model-local functions (Onnx__FunctionProto messages) the writer writes: the
	 * loader lists the file's; inlining drops those no node calls any more */
	const void **functions;
	int32_t nfunctions;
	void *resources;   /* loader-owned: file mappings and buffers freed with the model */
	void (*release)(struct om_model *m); /* frees proto and resources; set by the loader */
	/* gives back the memory of initializer v's payload, never read again (the loader's) */
	void (*drop_payload)(struct om_model *m, struct om_value *v);
	/* whether [p, p + n) lies in a file the loader mapped read-only (the model file, external
	 * data); with give_back, its whole pages are released (om_model_file_pages) */
	bool (*file_pages)(const struct om_model *m, const void *p, size_t n, bool give_back);
	/* copies [p, p + n) of such a file into dst by reading the file (om_model_file_read) */
	bool (*file_read)(const struct om_model *m, const void *p, size_t n, void *dst);
	om_graph *all_graphs; /* list through next_in_model */
	atomic_int refs;      /* the owner's and each session's (om_model_retain) */
	const struct om_model *base; /* om_model_clone's original, held (shares its weights) */
};

/* ---- construction and lookup ------------------------------------------------------------- */

om_model *om_model_new(void);
/** Keeps m alive until a matching om_model_free (a session over m: it borrows m's graph and
 *  weights, which may live in a file mapping). Thread-safe; m is not otherwise changed. */
void om_model_retain(const om_model *m);
/** Initializer v is being removed from m and its payload is never read again: the loader may
 *  give the payload's memory back (a copy is freed, pages of the file mapping are released;
 *  m->drop_payload). Nothing happens when m is shared (a clone of another model, or held by
 *  a clone or a session), since they read the same payloads, or for other payloads. */
void om_model_drop_payload(om_model *m, struct om_value *v);
/** Whether [p, p + n) lies in a file mapping of m's loader (or of the model m was cloned from):
 *  read-only file pages, which the page cache holds and a read faults back in. With give_back,
 *  the whole pages inside it are released (MADV_DONTNEED) and leave the resident set; the
 *  bytes stay what they were. A weight that a step reads a few rows of (a Gather over an
 *  embedding table: the kernel maps 64 KiB around each page it faults) need not stay. */
bool om_model_file_pages(const om_model *m, const void *p, size_t n, bool give_back);
/** Whether [p, p + n) lies in a file of m's loader that it keeps open, and was copied into dst
 *  by reading the file rather than the mapping: the pages stay out of the resident set and
 *  cost no page fault. False (dst unspecified) when not or when the read fails: the caller
 *  copies from p. */
bool om_model_file_read(const om_model *m, const void *p, size_t n, void *dst);
/** *out = a copy of m's IR that shares what is never changed once made: tensor payloads,
 *  strings, the original protobuf messages (ir/clone.c). The clone holds m (om_model_retain)
 *  until it is freed, so m's owner may free m first. Rewriting or running the clone leaves m
 *  as it is. OM_ERR_NOMEM; OM_ERR_INTERNAL when a node reads a value its graph does not list. */
om_kind om_model_clone(const om_model *m, om_model **out, om_status *st);
om_graph *om_graph_new(om_model *m, om_graph *parent);
/** The value named `name` in g (not its parents), or NULL. */
om_value *om_graph_find(const om_graph *g, const char *name);
/** The value named `name` in g, created (type unknown) when missing; NULL when out of memory. */
om_value *om_graph_value(om_graph *g, const char *name);
/** A new value with a name unique in g, made from `hint`. */
om_value *om_graph_fresh_value(om_graph *g, const char *hint);
/** Follows OM_VALUE_OUTER references up the parent chain to the defining value. */
om_value *om_graph_resolve(const om_graph *g, om_value *v);
/** Appends a node with room for nin inputs and nout outputs (all NULL). */
om_node *om_graph_add_node(om_graph *g, const char *op, const char *domain, const char *name,
			   int32_t nin, int32_t nout);
/** A node of g like `like` (its op, domain, name, overload, doc string, metadata and proto, and
 *  the same attributes, shared) with nin inputs and nout outputs, all unset; NULL when out of
 *  memory. */
om_node *om_graph_add_node_like(om_graph *g, const om_node *like, int32_t nin, int32_t nout);
/** Sets out[slot] = v and v's producer. */
void om_node_set_output(om_node *n, int32_t slot, om_value *v);
/** Removes nodes whose `flags & OM_NODE_DEAD`, keeping order. */
void om_graph_compact(om_graph *g);
/** Recomputes value->nuses over nodes and graph outputs, subgraph outer references included. */
void om_graph_count_uses(om_graph *g);
/** Adds delta to the nuses of every value node n of g reads (its inputs, and its subgraphs'
 *  outer references): what n adds to om_graph_count_uses while it is live. */
void om_node_add_uses(om_graph *g, const om_node *n, int32_t delta);
/** Calls fn(arg, v) for each value v of g that node n's subgraphs refer to (their outer
 *  references, through nested subgraphs too; a value may come more than once) until fn returns
 *  true; whether it did. */
bool om_node_outer_refs(const om_graph *g, const om_node *n, bool (*fn)(void *arg, om_value *v),
			void *arg);
/** Sorts g->nodes topologically (stable): a node after the producers of its inputs and of the
 *  values of g its subgraphs read (outer references); OM_ERR_INVALID_MODEL on a cycle. */
om_kind om_graph_toposort(om_graph *g, om_status *st);
/** Opset version imported for domain ("" and "ai.onnx" are the same), 0 when not imported. */
int64_t om_model_opset(const om_model *m, const char *domain);

enum { OM_NODE_DEAD = 1u << 0 };

/* ---- attributes -------------------------------------------------------------------------- */

const om_attr *om_node_attr(const om_node *n, const char *name);
/** True when n has a graph attribute (If, Loop, Scan bodies...): it runs subgraphs. */
bool om_node_has_subgraph(const om_node *n);
/** True when some node of g (not looking deeper) has a graph attribute. */
bool om_graph_has_subgraph(const om_graph *g);
int64_t om_attr_int(const om_node *n, const char *name, int64_t dflt);
float om_attr_float(const om_node *n, const char *name, float dflt);
/** The string attribute as a NUL-terminated arena string, or dflt. */
const char *om_attr_string(const om_node *n, const char *name, const char *dflt);
/** ONNX's string-enum attributes (auto_pad, mode, direction): the index of the string
 *  attribute's value in `choices` (NULL-terminated), dflt when the node has none, -1 when its
 *  value is not listed. */
int om_attr_choice(const om_node *n, const char *name, const char *const *choices, int dflt);
/** List attribute: returns the array and sets *count; NULL and 0 when absent. */
const int64_t *om_attr_ints(const om_node *n, const char *name, int64_t *count);
const float *om_attr_floats(const om_node *n, const char *name, int64_t *count);
const om_tensor *om_attr_tensor(const om_node *n, const char *name);
/** Adds (or replaces) an attribute on n; returns it for the caller to fill. */
om_attr *om_node_set_attr(om_node *n, const char *name, int32_t type);

/* ---- tensors in the arena ---------------------------------------------------------------- */

/** A tensor whose data is allocated in the model arena (zeroed). */
om_tensor *om_model_tensor(om_model *m, int32_t dtype, int32_t rank, const int64_t *dims);
/** Deep copy into the arena (string elements too). */
om_tensor *om_model_tensor_copy(om_model *m, const om_tensor *t);

/* ---- type helpers ------------------------------------------------------------------------ */

/** A tensor type with known dims copied from t. */
void om_type_from_tensor(om_model *m, om_type *ty, const om_tensor *t);
bool om_dims_equal(om_dim a, om_dim b); /* same number, or the same symbol */

/** Canonical text dump of the IR (ir/dump.c): round-trip tests and debugging. */
void om_model_dump(const om_model *m, FILE *f);

#endif
