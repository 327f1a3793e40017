/*
 * omopt.h — the one public header of the omopt library.
 *
 * omopt reads ONNX models (IR versions 3–10, opsets 1–23) into its own IR, rewrites them
 * (simplify), runs them (session) and writes them back. Every call that can fail returns an
 * om_kind and fills an om_status; nothing in the library aborts or exits.
 *
 * Element types use the numbers of ONNX's TensorProto.DataType. Dims are int64_t.
 */
#ifndef OMOPT_H
#define OMOPT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Handles and ownership. An om_model (om_model_load*) owns its graph and its weights (a model
 * file stays mapped read-only while the model lives: its initializers point into it); the
 * caller frees it with om_model_free. A session keeps the model it was created from alive:
 * om_model_free before om_session_free is allowed, the model goes with its last session (but
 * a model must not be rewritten while a session uses it). An om_session is freed with
 * om_session_free. Tensors returned to the caller
 * (outputs, om_tensor_read_file) own their data: om_tensor_free. Inputs are borrowed for the
 * duration of the call. Strings returned by the library (names, om_kind_name, om_version)
 * live as long as their handle (or forever). Each function below says what it returns and
 * who frees it; reports (om_check_report, ...) are freed with their own _free function.
 *
 * Status. Every function that takes an `om_status *st` accepts NULL there: it then fails the
 * same way, returning the same om_kind, and only the message is lost. A function that fails
 * leaves its out-parameters empty (NULL, 0, a zeroed struct) unless it says otherwise.
 *
 * Lists. A list the library makes for the caller (om_model_op_counts, om_op_rows,
 * om_session_profile) comes back in one call as an array the caller owns:
 *     om_kind f(..., T **items, int *n, om_status *st);   free(*items) with om_free
 * (*items NULL and *n 0 when empty or on an error). One call, no capacity to guess, and no
 * snapshot that a later call (a run, a reset) invalidates: the array is the caller's until it
 * frees it; strings its items point to live as long as the handle they came from. What a
 * handle holds in numbered places (a model's or a session's inputs and outputs, opset imports)
 * is read in place instead, by a count and item i (out of range: NULL or
 * OM_ERR_INVALID_INPUT), and fixed name tables (om_op_flag_name, om_simplify_pass_name) by
 * index up to the first NULL: neither allocates, so neither has anything to free.
 *
 * Threads. The library has no global mutable state. Different handles may be used from
 * different threads at once. A session may be run (om_session_run, om_session_run_values) from
 * any number of threads at once, as ONNX Runtime's Run may: each run under way has its own
 * buffers, kernel states and caches (a runner, kept for the next run), so N concurrent runs
 * hold up to N times the memory of one, each within max_memory; outputs are the bytes one run
 * alone gives. om_session_free and om_session_set_hook need the session alone; the profile,
 * om_session_pool_bytes and the node records count the runs that have returned. Other handles
 * are used by one thread at a time. A model may be read by several sessions of several
 * threads at once, but om_simplify / om_optimize, which rewrite it, need it alone. A run's
 * thread count is its session's `threads` option alone: a run sets OpenMP's count of the
 * calling thread (OpenMP keeps one per thread; oneDNN reads it) and gives the caller's back
 * when it returns; it never changes OpenBLAS's count or pool (om_blas_threads is the explicit
 * call for a host that wants to).
 */

#define OMOPT_VERSION_MAJOR 0
#define OMOPT_VERSION_MINOR 1
#define OMOPT_VERSION_PATCH 0

/* The shared library exports only what this header declares. */
#if defined(__GNUC__) && !defined(OM_API)
#define OM_API __attribute__((visibility("default")))
#elif !defined(OM_API)
#define OM_API
#endif

/** The library's version, "MAJOR.MINOR.PATCH" (the header's numbers when they match). */
OM_API const char *om_version(void);

/* ---- status ------------------------------------------------------------------------------ */

/** What went wrong. OM_OK is 0 so that `if (kind)` tests for failure. These are the only
 *  values a function of this header returns; the numbers are fixed (the ABI, and the Python
 *  package's exceptions, python/omopt/_lib.py, use them). */
typedef enum om_kind {
	OM_OK = 0,
	OM_ERR_INVALID_MODEL, /* the model breaks a rule of ONNX or of omopt's stated semantics
				 of an op (docs/ops.md) */
	OM_ERR_INVALID_INPUT, /* a run-time input is wrong: shape, type, index out of range */
	OM_ERR_UNSUPPORTED,   /* valid ONNX that omopt does not handle (yet) */
	OM_ERR_IO,            /* a file could not be read or written */
	OM_ERR_NOMEM,         /* an allocation failed */
	OM_ERR_INTERNAL       /* a bug in omopt */
} om_kind;

/** A failure as a value: its kind, the node (name and op type) where it happened, a message. */
typedef struct om_status {
	om_kind kind;
	char node[128]; /* node name, "" when not about a node */
	char op[64];    /* node op type, "" when not about a node */
	char msg[512];
} om_status;

/** "InvalidModel", "InvalidInput", "Unsupported", "Io", "NoMemory", "Internal" or "Ok". */
OM_API const char *om_kind_name(om_kind kind);

/** Writes "<Kind>: node '<name>' (<Op>): <message>" (node part left out when empty) to buf;
 *  "" for a NULL st. */
OM_API void om_status_format(const om_status *st, char *buf, size_t size);

/* ---- element types (TensorProto.DataType) ------------------------------------------------ */

enum {
	OM_UNDEFINED = 0, OM_FLOAT = 1, OM_UINT8 = 2, OM_INT8 = 3, OM_UINT16 = 4, OM_INT16 = 5,
	OM_INT32 = 6, OM_INT64 = 7, OM_STRING = 8, OM_BOOL = 9, OM_FLOAT16 = 10, OM_DOUBLE = 11,
	OM_UINT32 = 12, OM_UINT64 = 13, OM_COMPLEX64 = 14, OM_COMPLEX128 = 15, OM_BFLOAT16 = 16,
	OM_FLOAT8E4M3FN = 17, OM_FLOAT8E4M3FNUZ = 18, OM_FLOAT8E5M2 = 19, OM_FLOAT8E5M2FNUZ = 20,
	OM_UINT4 = 21, OM_INT4 = 22, OM_FLOAT4E2M1 = 23, OM_FLOAT8E8M0 = 24, OM_UINT2 = 25,
	OM_INT2 = 26,
	OM_DTYPE_COUNT
};

/** Bytes per element; 0 for sub-byte types (int4, uint4, float4e2m1, int2, uint2) and unknown
 *  types.
 *  A string element is an om_str (pointer and length). */
OM_API size_t om_dtype_size(int32_t dtype);
/** Bits per element (4 or 2 for the sub-byte types), 0 for unknown. */
OM_API int om_dtype_bits(int32_t dtype);
/** ONNX spelling: "float", "int64", "float16", "bfloat16", "string", ... ; "undefined". */
OM_API const char *om_dtype_name(int32_t dtype);

/** One element of a string tensor: bytes (not NUL-terminated in general) and their count. */
typedef struct om_str {
	const char *ptr;
	int64_t len;
} om_str;

/* ---- tensors ----------------------------------------------------------------------------- */

#define OM_MAX_RANK 8

/** A dense row-major tensor. `data` is borrowed unless the function that made it says
 *  otherwise. Sub-byte types pack 8 / bits elements per byte, lowest bits first (ONNX packing:
 *  two 4-bit elements, low nibble first; four 2-bit elements). */
typedef struct om_tensor {
	int32_t dtype;
	int32_t rank;
	int64_t dims[OM_MAX_RANK];
	void *data;
	size_t nbytes;
} om_tensor;

/** Product of dims (1 for rank 0); -1 when a dim is negative or the product of the non-zero
 *  dims overflows int64_t (so every partial product of a valid shape fits, even when
 *  another dim is 0). */
OM_API int64_t om_shape_numel(int32_t rank, const int64_t *dims);
OM_API int64_t om_tensor_numel(const om_tensor *t);
/** Bytes n elements take: n * size, or ceil(n * bits / 8) for sub-byte types; -1 when n < 0,
 *  the type is unknown or the bytes overflow int64_t. The checked size computation: every
 *  size of a buffer for elements goes through it (or om_shape_bytes). */
OM_API int64_t om_numel_bytes(int32_t dtype, int64_t n);
/** om_numel_bytes of the shape's element count; -1 for a bad rank or shape, or overflow. */
OM_API int64_t om_shape_bytes(int32_t dtype, int32_t rank, const int64_t *dims);
/** om_shape_bytes as a size_t: 0 for an unknown type, SIZE_MAX (never allocatable, never
 *  below a buffer's size) when the shape is invalid or its bytes overflow. */
OM_API size_t om_tensor_bytes_for(int32_t dtype, int32_t rank, const int64_t *dims);
/** Sets dtype and shape and mallocs zeroed data (at least 1 byte). Free with om_tensor_free. */
OM_API om_kind om_tensor_alloc(om_tensor *t, int32_t dtype, int32_t rank, const int64_t *dims,
			om_status *st);
/** Copies src's elements into dst's data (same dtype; min of both sizes). String elements
 *  are duplicated with malloc, as om_tensor_alloc'd string tensors own them. */
OM_API om_kind om_tensor_copy_data(om_tensor *dst, const om_tensor *src, om_status *st);
/** Frees data made by om_tensor_alloc (string elements too) and zeroes the struct. */
OM_API void om_tensor_free(om_tensor *t);

/* ---- models ------------------------------------------------------------------------------ */

typedef struct om_model om_model;

/** Loads an ONNX ModelProto file. External data is resolved relative to the file's folder;
 *  a location that leaves that folder is OM_ERR_INVALID_MODEL. Truncated or corrupted files
 *  give OM_ERR_INVALID_MODEL, unreadable ones OM_ERR_IO (so are a model or external-data path
 *  that is not a regular file: a FIFO, a device or a folder is refused, never waited on). */
OM_API om_kind om_model_load(const char *path, om_model **out, om_status *st);
/** Same from memory; `data` must outlive the model (weights are borrowed from it). `dir` is the
 *  folder for external data, or NULL when none may be used. */
OM_API om_kind om_model_load_memory(const void *data, size_t size, const char *dir, om_model **out,
			     om_status *st);

typedef struct om_save_options {
	int external_data;        /* 1: weights >= external_min_bytes go to an external file */
	size_t external_min_bytes; /* default 1024 when 0 */
	const char *external_name; /* file name beside the model; default (NULL or ""): named
				    * by its content, "<model>.<16 hex digits>.data" (below) */
} om_save_options;

/** Writes the model atomically: each file to a new temporary file beside its destination
 *  (mkstemp: a symlink planted at any name is never written through), then renamed over it;
 *  every failure removes them. Models over 2 GB always use external data.
 *  The external-data file is by default named by its content: the XXH64 of its bytes in 16
 *  hex digits ("m.onnx.0123456789abcdef.data"; a weight mapped from a sparse external-data
 *  file is copied by its data extents, its holes left holes and digested as (offset, length)
 *  records, not read: onnx/holes.c), or, when something has that name already
 *  (never replaced), the first free of its variants (the XXH64 of that digest and the
 *  variant's number, 1 to 63). It is in place before the model file that names it is renamed
 *  over the destination, and only that model names it: a reader of the model, even while
 *  other saves to the same path run, finds the weights the model was written with (or, once
 *  a later save removed them, no file: an error), never another save's. The same model saved
 *  to a fresh name gives the same files. When the save replaces a model file, the data files
 *  with this kind of name that the replaced one named are removed after it (files of other
 *  names never are): a copy of a model file keeps its weights only in another folder or with
 *  them copied too. A name given in external_name is used as it is (replaced, then the model
 *  renamed), outside that guarantee: two saves at once to those names may mix.
 *  Never replaces a file a loaded model reads its external data from, nor the model file with
 *  weights: the model file itself may be the destination (replaced whole). `opt` may be NULL.
 *  A signal that ends the process during a save leaves its temporary files behind unless the
 *  host's handler calls om_save_cleanup; SIGXFSZ (a file-size limit) ends it unless ignored,
 *  when the write fails with EFBIG instead (an OM_ERR_IO that removes them). */
OM_API om_kind om_model_save(const om_model *m, const char *path, const om_save_options *opt,
		      om_status *st);
OM_API void om_model_free(om_model *m);
/** The bytes om_model_save would write with every weight inline (*bytes; 0 on error). */
OM_API om_kind om_model_saved_size(const om_model *m, size_t *bytes, om_status *st);
/** om_model_saved_size without shape metadata — any graph's value_info and the types of any
 *  graph's outputs: what the size rule of `omopt simplify` compares (the inferred shapes
 *  simplify writes there are not counted; docs/passes.md, "Size"). */
OM_API om_kind om_model_saved_size_without_value_info(const om_model *m, size_t *bytes,
						      om_status *st);

/* ---- progress ---------------------------------------------------------------------------- */

/** Called by long operations (om_simplify, om_check, om_bisect) before each step, on the
 *  calling thread: `what` names the step ("simplify round 2: fold_constants", "check run 2 of
 *  3"; valid during the call), `done` steps of `total` are behind (total 0 when unknown). The
 *  library never prints progress itself: the caller decides (omopt prints it on a terminal
 *  when the work takes more than a second). */
typedef void (*om_progress_fn)(void *user, const char *what, int done, int total);

/* ---- simplify ---------------------------------------------------------------------------- */

/** The shape a graph input is given before simplifying (om_simplify_options.input_shapes,
 *  `omopt simplify --input-shape NAME:D1,D2,...`). */
typedef struct om_input_shape {
	const char *name;                    /* a graph input (not an initializer) */
	int32_t rank;                        /* 0..OM_MAX_RANK */
	int64_t dims[OM_MAX_RANK];           /* >= 0: that extent; -1: the symbol dim_params[i] */
	const char *dim_params[OM_MAX_RANK]; /* the symbol of a dim whose dims[i] is -1 */
} om_input_shape;

/*
 * Options of om_simplify and om_optimize. Zero-initialize the struct ({0}) and set what you
 * need: zero is every field's default, so fields added later (at the end) keep old callers'
 * behaviour.
 */
typedef struct om_simplify_options {
	size_t fold_max_bytes;   /* 0: folding never makes the saved model larger (docs/passes.md);
				    N: a fold is made when each output is at most N bytes */
	const char *const *skip; /* NULL-terminated pass names to skip, or NULL */
	int verify;              /* run the IR verifier after every pass */
	int verbose;             /* print per-pass changes to stderr */
	int fold_qdq;            /* 1: QuantizeLinear/DequantizeLinear on constants are folded too
				    (a float model; 0 keeps a quantized model quantized) */
	/* Input shapes (borrowed, n_input_shapes of them): each replaces the declared shape of
	 * its graph input before any pass. The rank must be the declared one, a declared number
	 * stays that number; a declared symbol given a number or another symbol is replaced in
	 * every declaration of the model (graph inputs, outputs, value_info) that names it. */
	const om_input_shape *input_shapes;
	int32_t n_input_shapes;
	/* Sub-model: NULL-terminated tensor names of the main graph, or NULL. `outputs` become
	 * the graph outputs, `inputs` the graph inputs (typed from shape inference); only what
	 * computes the outputs from the inputs and initializers stays. */
	const char *const *outputs;
	const char *const *inputs;
	int drop_unused_outputs; /* 1: optional node outputs nothing reads become "" */
	int no_value_info;       /* 1: do not write the inferred shapes to value_info */
	int all_value_info;      /* ignored: every inferred shape is written unless
				    no_value_info (kept so that older callers compile) */
	int keep_functions;      /* 1: do not inline model-local functions */
	int no_passes;           /* 1: run none of the pipeline's passes: only what the fields
				    above ask for (inlining, input shapes, sub-model, dropped
				    outputs, value_info); `omopt simplify` measures the model so
				    made before the rewrites (docs/passes.md, "Size") */
	om_progress_fn progress; /* called before every pass (NULL: none) */
	void *progress_user;     /* progress's first argument */
	int exact;               /* 1: the model is for an exact-mode session (om_session_options
				    .exact): om_optimize leaves out the rewrites that compute
				    another way than the ops they replace (fuse_qdq's int8 groups
				    round differently from their float form) */
	/* 1: an input shape may also change a dim the model declares as a number (onnxsim's
	 * --overwrite-input-shape on a fixed model); the shapes the main graph's value_info and
	 * outputs declare are then dropped, to be inferred again from the new shapes */
	int overwrite_fixed_dims;
} om_simplify_options;

/**
 * Runs the pass pipeline on the model in place (see docs/passes.md). `opt` may be NULL.
 * Before the passes: model-local functions are inlined (unless keep_functions), input shapes
 * are applied, the sub-model is cut out. After them: unused optional outputs are dropped
 * (drop_unused_outputs) and every intermediate value whose element type inference knows is
 * listed in its graph's value_info with its inferred shape, symbols as dim_param (unless
 * no_value_info); graph output declarations (subgraphs' too) take what inference knows
 * (an element type or rank they lacked, numbers for dims it proves for every value of the
 * symbols); graph input declarations stay as given. The size rule (never larger than the
 * model as given, unless fold_max_bytes allows it) counts everything but that metadata.
 * Errors: OM_ERR_INVALID_INPUT for an unknown pass name, an input shape that is not a graph
 * input or does not fit its declaration (rank, a declared number), a sub-model tensor that
 * the main graph does not have or whose outputs cannot be computed from the given inputs;
 * OM_ERR_INVALID_MODEL for a model without a graph or one the verifier rejects; OM_ERR_NOMEM.
 */
OM_API om_kind om_simplify(om_model *m, const om_simplify_options *opt, om_status *st);

/** The default-domain opsets om_opset_convert converts between. */
#define OM_OPSET_CONVERT_MIN 7
#define OM_OPSET_CONVERT_MAX 23
/**
 * Converts m's default-domain opset import to `opset`, up or down, in place, as ONNX's
 * version converter does (`omopt simplify --opset N`; docs/passes.md "Opset conversion"):
 * every node of every graph is rewritten to mean at `opset` what it meant at the model's
 * opset (attributes made inputs and back, Softmax's axis, Split's sizes, Resize's inputs,
 * Upsample as Resize, ...); the op rows say which nodes changed. Graph inputs, outputs, their
 * names, types and dims, and other domains' imports stay. Errors: OM_ERR_UNSUPPORTED naming
 * the node and op when a node cannot be expressed at `opset` (an op that does not exist
 * there, an attribute or element type it lacks, an input that would have to be a constant
 * and is not); m is then partly rewritten and is to be freed, not saved.
 * OM_ERR_INVALID_INPUT for an opset outside OM_OPSET_CONVERT_MIN..MAX; OM_ERR_NOMEM.
 */
OM_API om_kind om_opset_convert(om_model *m, int64_t opset, om_status *st);

/**
 * Optimizes the model for running it, in place: om_simplify's passes, then the fusions of
 * level 2 (the list below) into ops that omopt and ONNX Runtime run (docs/passes.md). A fusion
 * only writes an op the registry runs; the result may hold com.microsoft ops (om_simplify's
 * never does), so it is for running, not for other ONNX runtimes. Graph inputs and outputs
 * keep names, types and dims. `opt` may be NULL; `skip` may also name the fusions; value_info
 * is not written (no_value_info is taken as 1). Errors: as om_simplify (OM_ERR_INVALID_INPUT
 * for an unknown pass name, OM_ERR_INVALID_MODEL for a model without a graph or one the
 * verifier rejects, OM_ERR_NOMEM); a pattern that does not fit is left as it is, never an
 * error.
 */
OM_API om_kind om_optimize(om_model *m, const om_simplify_options *opt, om_status *st);

/* The passes, in order (om_pass_rows; tests/test_pass_registry.c checks this list):
 *   level 1, om_simplify and om_optimize, to a fixed point in every graph:
 *     infer_shapes          types, dims and plan-time values of every value (a side table)
 *     fold_constants        nodes of constant inputs evaluated into initializers
 *     fold_shape_chains     known plan-time values and Reshape/Expand shapes become literals
 *     inline_if             an If of a constant condition becomes its branch's nodes
 *     unroll_loops          a Loop of constant trip count and condition becomes its body repeated
 *     merge_ifs             Ifs on one condition merged; tests of an If's output rank become it
 *     eliminate_identities  Identity, Dropout, no-op Cast, views and Pads read their input
 *     fuse_transposes       Transpose(Transpose(x)) composed; identity permutations go
 *     push_transposes       a Transpose moves past layout-agnostic ops toward its inverse
 *     fuse_pad              a zero Pad into the Conv or AveragePool reading it
 *     fuse_conv_bn          BatchNormalization into the Conv or ConvTranspose weights
 *     fuse_conv_affine      per-channel Mul/Div/Add/Sub into the Conv weights
 *     fuse_matmul_add       Add(MatMul(A, B), C) of 2-D A and B -> Gemm
 *     merge_common          nodes and plan-time values equal to earlier ones merged
 *     eliminate_dead        nodes, initializers and value_info nothing uses go
 *   level 2, om_optimize only, then to a fixed point in the main graph:
 *     fuse_qdq              DQ -> Conv/Gemm [-> Q] -> QLinearConv/QGemm; DQ -> select -> Q -> 8-bit
 *     fuse_dynq             dynamic-quantized MatMulInteger chains -> DynamicQuantizeMatMul
 *     fuse_conv_activation  Conv [+ Add] + activation -> com.microsoft FusedConv
 *     fuse_layernorm        LayerNorm chains -> LayerNormalization
 *     fuse_skip_layernorm   Add [+ bias Add] + LayerNormalization -> SkipLayerNormalization
 *     fuse_gelu             Gelu chains -> Gelu / FastGelu; Gelu(Add(x, bias)) -> BiasGelu
 *     fuse_silu             x * Sigmoid(alpha x) -> com.microsoft QuickGelu
 *     fuse_matmul_transpose Transpose / scalar Mul into com.microsoft FusedMatMul
 */
/** A pass's level: om_simplify runs the passes of level 1, om_optimize those of 1 and 2. */
typedef enum om_pass_level_id { OM_LEVEL_SIMPLIFY = 1, OM_LEVEL_OPTIMIZE = 2 } om_pass_level_id;
/** A pass (om_pass_rows). Strings are static. */
typedef struct om_pass_info {
	const char *name;  /* what om_simplify_options.skip and `omopt simplify --skip` name */
	int level;         /* om_pass_level_id */
	const char *what;  /* one line */
} om_pass_info;
/** The number of passes; with rows not NULL, fills rows[0..min(cap, count)) in pipeline
 *  order (level 1's, then level 2's). */
OM_API int om_pass_rows(om_pass_info *rows, int cap);
/** The name of pass i of om_simplify's pipeline, in order (for `skip`); NULL past the end. */
OM_API const char *om_simplify_pass_name(int i);

/* ---- sessions ---------------------------------------------------------------------------- */

typedef struct om_session om_session;

/* om_session_options.layout: how fast mode lays out the float activations that run between
 * oneDNN's convolutions (the values kept so: `omopt dot --plan`); exact mode keeps NCHW */
typedef enum om_layout_choice {
	OM_LAYOUT_AUTO = 0,    /* NHWC, or channel-blocked when a depthwise conv (which oneDNN
				  runs faster blocked) would otherwise run on NCHW; on AVX2
				  channel-blocked unless 8-bit values need NHWC */
	OM_LAYOUT_BLOCKED = 1, /* channel-blocked: nChw16c on AVX-512, nChw8c on AVX2 */
	OM_LAYOUT_NHWC = 2,    /* channels last (depthwise convs then run on NCHW) */
	OM_LAYOUT_NCHW = 3,    /* nothing kept in another layout: each conv reorders its own */
} om_layout_choice;

/* The most threads a session may be given (om_session_options.threads): more is InvalidInput
 * (OpenMP's pool, oneDNN's and OpenBLAS's crashed or failed to start at 50000-100000) */
#define OM_MAX_THREADS 1024

typedef struct om_session_options {
	int exact;   /* 1: only kernels flagged exact (the same bits on every instruction set and
			thread count, docs/ops.md); a node without one is OM_ERR_UNSUPPORTED */
	int threads; /* 0 or 1: single-threaded; at most OM_MAX_THREADS */
	int profile; /* 1: record time per op type, 2: per node (om_session_profile) */
	/* Memory limit, in bytes, of a run: the tensors it holds at once (intermediate values and
	 * outputs, in the session's buffer pool) plus any buffer a kernel allocates for itself
	 * must stay within it. A request over it is OM_ERR_INVALID_INPUT naming the node, before
	 * anything is allocated (Range or ConstantOfShape asking for 17 GB). 0: the default,
	 * om_default_max_memory(); SIZE_MAX: no limit. Weights and plan-time constants are not
	 * counted (they are the model's). */
	size_t max_memory;
	/* Time limit of a run, in milliseconds: once a run has taken longer it stops with
	 * OM_ERR_INVALID_INPUT naming the node it reached (checked before every node and at every
	 * Loop/Scan iteration, so a Loop of 10^15 iterations ends too). 0: no limit. */
	int64_t max_run_ms;
	om_layout_choice layout; /* fast mode's layout between convs (above); 0: OM_LAYOUT_AUTO */
	/* 1: fast mode runs float16/bfloat16 compute in its own type, rounding after every node
	 * as exact mode does (om_check and om_convert_dtype measure a half model so); 0: planned
	 * in float32 as ONNX Runtime runs it on CPU, Casts at the region's edges (docs/ops.md) */
	int keep_half;
	/* 1: a run's results depend on its inputs and `threads` alone, as ONNX Runtime's
	 * use_deterministic_compute asks. 0 (the default): at 2 threads or more, a convolution that
	 * the pool would run on the calling thread alone (its splits lost lately to another
	 * process's work, docs/session.md) runs its one-thread primitive instead of its slices one
	 * after another: 5-10% faster then, but its last bits may differ from the split's, so a
	 * result depends on the load. Exact mode is deterministic either way. */
	int deterministic;
} om_session_options;

/** The default memory limit of a session: 8 GiB, or half the physical memory when less. */
OM_API size_t om_default_max_memory(void);

/**
 * OpenBLAS, which runs the products oneDNN does not (those under 8192 multiply-adds, double
 * ones, all of them in a build without oneDNN), has one thread count and one pool of workers
 * for the whole process. Sessions never change them: OpenBLAS runs at the host's setting
 * (openblas_set_num_threads, OPENBLAS_NUM_THREADS; by default a thread per core). A host that
 * wants OpenBLAS to follow its sessions' `threads` calls this, once, itself: with oneDNN in
 * the build, one thread and its idle workers stopped (they would compete with OpenMP's pool;
 * OpenBLAS starts them again when a later call wants them); without, `threads` (0: 1).
 * Process-wide, so it changes what every other user of OpenBLAS in the process gets. The
 * omopt command calls it with its --threads.
 */
OM_API void om_blas_threads(int threads);

/** Plans the model's main graph. The session holds a reference to the model (and so to the
 *  file mapping its weights live in) until om_session_free. `opt` may be NULL. */
OM_API om_kind om_session_create(const om_model *m, const om_session_options *opt, om_session **out,
			  om_status *st);
/** Number and names of the graph inputs that must be fed (initializers excluded), in order. */
OM_API int om_session_input_count(const om_session *s);
/** Overridable initializers: in a model of IR version 4 or later, a main-graph input that has
 *  an initializer of its name; the initializer is its default and a run may feed another value
 *  (checked against the input's declaration like any input). The session never treats them as
 *  constants. They follow the required inputs: om_session_input_name and _info take
 *  i = om_session_input_count(s) + j for the j-th (info.has_initializer 1). Before IR 4 every
 *  initializer was listed as an input, and such inputs are constants (this count is 0). */
OM_API int om_session_overridable_count(const om_session *s);
/** i < om_session_input_count + om_session_overridable_count; NULL beyond. */
OM_API const char *om_session_input_name(const om_session *s, int i);
OM_API int om_session_output_count(const om_session *s);
OM_API const char *om_session_output_name(const om_session *s, int i);
/** The declared type of a session's input or output (the model's graph input/output). */
typedef struct om_io_info {
	const char *name;                    /* lives as long as the session */
	int32_t kind;                        /* 0: a tensor; OM_SEQUENCE; OM_OPTIONAL; OM_MAP;
						-1: other (a sparse tensor) */
	int32_t elem;                        /* TensorProto.DataType of the tensor (of a
						sequence's or optional's tensors, of a map's
						values); 0 when not declared */
	int32_t rank;                        /* -1 when not declared (or over OM_MAX_RANK) */
	int64_t dims[OM_MAX_RANK];           /* extent; -1 where symbolic or unknown */
	const char *dim_params[OM_MAX_RANK]; /* the symbol (dim_param) of a dim, or NULL */
	int32_t has_initializer;             /* a graph input that also has an initializer (its
						default value): om_model_input_info, and a
						session's overridable initializers */
	int32_t key;                         /* a map's key type (OM_INT64, OM_STRING), also
						of a map in a sequence or optional; else 0 */
} om_io_info;
/** Fills *info for input i (om_session_input_*) or output i; OM_ERR_INVALID_INPUT when i is
 *  out of range. */
OM_API om_kind om_session_input_info(const om_session *s, int i, om_io_info *info,
				     om_status *st);
OM_API om_kind om_session_output_info(const om_session *s, int i, om_io_info *info,
				      om_status *st);
/** Runs once; from any number of threads at once ("Threads" above). inputs[i] feeds input i
 *  (borrowed; one whose data is not aligned to its element type is copied first). ninputs is
 *  om_session_input_count (overridable initializers take their defaults) or that plus
 *  om_session_overridable_count: an overridable initializer's entry fed, or left at its
 *  default by a zeroed om_tensor (dtype OM_UNDEFINED, data NULL).
 *  outputs[i] receive tensors whose data the caller frees with om_tensor_free (what outputs
 *  held before is overwritten, not freed). On a failure every outputs[i] (i < noutputs) is
 *  zeroed: nothing to free, nothing half made. s NULL: OM_ERR_INVALID_INPUT. */
OM_API om_kind om_session_run(om_session *s, const om_tensor *inputs, int ninputs, om_tensor *outputs,
		       int noutputs, om_status *st);
OM_API void om_session_free(om_session *s);

/** Time per op type (`profile` 1) or per node (`profile` 2: the nodes that run, after
 *  om_optimize and the planner's absorptions) of the runs since the session was created (or
 *  since om_session_profile_reset), slowest first: *rows, a copy the caller frees with om_free
 *  (its strings live as long as the session), and their count *n. A control op's time (If,
 *  Loop, Scan) is its own: the nodes it ran in its subgraphs count under their own rows, so
 *  the rows add up to the time of the runs. No rows (NULL, 0) without `profile`. */
typedef struct om_profile_row {
	const char *op;  /* the op type ("Conv", "FusedConv"), living as long as the session */
	int64_t calls;   /* nodes of this op type run (per node: the node's runs) */
	double ms;       /* their wall time, milliseconds */
	const char *node; /* per node: the node's name (its first output's when it has none);
			     else NULL */
	const char *impl; /* per node: the implementation its kernel chose in the last run
			     (Conv's "winograd-f4", "im2col-gemm", ...: docs/ops.md), a static
			     string; NULL for a kernel with one, and in rows per op type */
	const char *plan_impl; /* per node: the implementation chosen for it at plan time (the
				  same names; NULL when the node's shapes are known only at run
				  time, for a kernel with one, and in rows per op type): impl
				  differs when the kernel declined it or the node is shaped per
				  run */
} om_profile_row;
OM_API om_kind om_session_profile(const om_session *s, om_profile_row **rows, int *n,
				  om_status *st);
/** Zeroes the profile (after a warm-up run, so that it covers the runs that follow). */
OM_API void om_session_profile_reset(om_session *s);
/** Bytes held by the session's buffer pools (one per run that was under way at once; summed)
 *  as the runs that returned left them, and the most bytes one run had busy at once so far.
 *  After a run the pool lays its values out in one arena (again after a run whose sizes or
 *  order differ from the layout's): the most bytes busy at once are then counted from the
 *  arena's size. */
OM_API size_t om_session_pool_bytes(const om_session *s);
OM_API size_t om_session_peak_bytes(const om_session *s);

/* ---- sequences, optionals and maps --------------------------------------------------------- */

/*
 * A sequence, optional or map value (a box) travels as an om_tensor whose dtype is
 * OM_SEQUENCE, OM_OPTIONAL or OM_MAP (outside TensorProto.DataType's numbers), rank 0,
 * nbytes 0, and whose data points at an om_seq the value owns: a sequence holds n values
 * (tensors, or boxes: a sequence of maps), an optional 0 (empty) or 1 (a tensor, a sequence
 * or a map). A map (ONNX's MapProto) holds 2 items, its keys and its values: the keys a 1-D
 * tensor of int64 or string (om_seq.elem says which) of n distinct elements, the values
 * either a 1-D tensor of n elements (a value per key: map(string, float) and the other maps
 * of the ai.onnx.ml ops) or a sequence of n values. Build inputs with om_box_new and
 * om_box_insert (a map: keys at 0, then values at 1); free them, and the outputs of
 * om_session_run_values, with om_value_free.
 */
enum { OM_SEQUENCE = 0x10000, OM_OPTIONAL = 0x10001, OM_MAP = 0x10002 };

typedef struct om_seq {
	int32_t elem;     /* element type of the items when known, else 0 */
	int64_t n, cap;   /* items held; room */
	om_tensor *items; /* owned by the value */
} om_seq;

/** *out = a new empty sequence (kind OM_SEQUENCE) or empty optional (OM_OPTIONAL) of items of
 *  element type elem (0: not said), or an empty map (OM_MAP) whose keys are of type elem
 *  (OM_INT64 or OM_STRING). */
OM_API om_kind om_box_new(int32_t kind, int32_t elem, om_tensor *out, om_status *st);
/** Inserts a deep copy of v (a tensor or a box) at position pos (0..n) of the box b (om_seq *:
 *  box->data). An optional holds one item at most, a map two (keys, values: above). */
OM_API om_kind om_box_insert(om_seq *b, int64_t pos, const om_tensor *v, om_status *st);
/** Frees a tensor made by om_tensor_alloc or a box with all its items; zeroes the struct. */
OM_API void om_value_free(om_tensor *t);
/** om_session_run whose inputs and outputs may also be sequences, optionals and maps
 *  (om_session_run itself gives OM_ERR_UNSUPPORTED for such an output). Free each output with
 *  om_value_free. */
OM_API om_kind om_session_run_values(om_session *s, const om_tensor *inputs, int ninputs,
				     om_tensor *outputs, int noutputs, om_status *st);
/** OM_OK when v is a well-formed value: a tensor, or a box whose items are (a map: keys and
 *  values as above, keys of its key type, no key twice); else OM_ERR_INVALID_INPUT saying
 *  what is wrong. om_session_run_values checks its inputs with it. */
OM_API om_kind om_value_check(const om_tensor *v, om_status *st);
/** Reads a value file as the ONNX backend tests store them: kind 0 a tensor (.pb TensorProto
 *  or .npy: om_tensor_read_file), OM_SEQUENCE a SequenceProto, OM_OPTIONAL an OptionalProto,
 *  OM_MAP a MapProto. Free *v with om_value_free. */
OM_API om_kind om_value_file_read(const char *path, int32_t kind, om_tensor *v, om_status *st);
/** Writes v as a TensorProto (or .npy by the suffix, for a tensor), SequenceProto,
 *  OptionalProto or MapProto named `name`, atomically as om_tensor_write_file. */
OM_API om_kind om_value_file_write(const char *path, const om_tensor *v, const char *name,
				   om_status *st);

/* ---- looking at a model (omopt info) ------------------------------------------------------ */

/** The model's IR version (0 when absent). */
OM_API int64_t om_model_ir_version(const om_model *m);
/** The producer's name ("" when absent); *version (may be NULL) gets its version. */
OM_API const char *om_model_producer(const om_model *m, const char **version);
/** Opset imports: their count, and import i's domain ("" for ai.onnx) with *version. NULL
 *  when i is out of range. */
OM_API int om_model_opset_count(const om_model *m);
OM_API const char *om_model_opset_import(const om_model *m, int i, int64_t *version);
/** The main graph's inputs as declared (inputs with an initializer included) and outputs. */
OM_API int om_model_input_count(const om_model *m);
OM_API int om_model_output_count(const om_model *m);
/** Fills *info (names live as long as the model); OM_ERR_INVALID_INPUT when i is out of
 *  range. */
OM_API om_kind om_model_input_info(const om_model *m, int i, om_io_info *info, om_status *st);
OM_API om_kind om_model_output_info(const om_model *m, int i, om_io_info *info, om_status *st);
/** Nodes of the main graph (subgraphs not counted). */
OM_API int64_t om_model_node_count(const om_model *m);
/** Initializers of every graph (subgraphs included): their bytes, and their count in *count
 *  (may be NULL). */
OM_API int64_t om_model_initializer_bytes(const om_model *m, int64_t *count);

/** Nodes per op type over every graph (subgraphs included). */
typedef struct om_op_count {
	char op[128];  /* "Conv", or "domain.Op" outside the default domain */
	int64_t count;
} om_op_count;
/** *rows = an array the caller frees with om_free, of *n op counts sorted by op. */
OM_API om_kind om_model_op_counts(const om_model *m, om_op_count **rows, int *n, om_status *st);

/** An operator row the library has (docs/ops.md): a node runs the row of its op and domain
 *  with the highest since-version <= the model's opset for that domain. */
typedef struct om_op_info {
	const char *domain;  /* "" for ai.onnx */
	const char *name;
	int since;
	unsigned flags;      /* bit b set: the row has property om_op_flag_name(b) */
	int has_kernel;      /* 0: the row infers shapes but does not run */
} om_op_info;
/** Every row: *rows, an array the caller frees with om_free, and their count *n, in the
 *  registry's order. Its strings are static. */
OM_API om_kind om_op_rows(om_op_info **rows, int *n, om_status *st);
/** The name of property bit b of om_op_info.flags ("view", "exact", "data-dependent", ...;
 *  docs/ops.md); NULL past the last. */
OM_API const char *om_op_flag_name(int bit);

/* ---- drawing (Graphviz dot text) ------------------------------------------------------------ */

typedef struct om_dot_options {
	/* 1: draw the executor's plan (buffers by colour, views dashed, kernel notes); the model
	 * is planned as om_session_create would */
	int plan;
	/* not NULL: draw this model (a simplification of m) against m: nodes m has and it lacks
	 * grey, its new nodes orange, folded values on orange edges */
	om_model *diff;
	/* with plan: the options of the session the plan is made for (threads, layout, exact:
	 * the plan differs with them); NULL: om_session_create's defaults */
	const om_session_options *session;
	/* 1: each op box gets a tooltip (in SVG: its link's title) with the node's attributes,
	 * one "name=value" a line (lists cut after 16 items), each edge its tensor's name */
	int attributes;
} om_dot_options;
/** m (and opt->diff) as Graphviz dot text: op boxes with op type and name, edges with element
 *  type and shape (symbols by name), initializers summarized, subgraphs as clusters. Writes
 *  the types inference finds into values that have none (in m and opt->diff). *text is
 *  malloc'd, NUL-terminated, *len bytes (free with om_free). `opt` may be NULL. */
OM_API om_kind om_model_dot(om_model *m, const om_dot_options *opt, char **text, size_t *len,
			    om_status *st);

/* ---- files and memory ---------------------------------------------------------------------- */

/** Writes len bytes to path atomically: a temporary file beside it, renamed over it (a
 *  symlink there is replaced, not written through); a FIFO or character device there
 *  (/dev/stdout) is written straight into. A folder is refused (OM_ERR_IO). */
OM_API om_kind om_file_write(const char *path, const void *data, size_t len, om_status *st);
/** Removes the temporary files of every save and file write in progress in this process
 *  (om_model_save, om_file_write, om_tensor_write_file), and the external-data file of a
 *  save whose model is not yet in place; returns how many it removed. Async-signal-safe: for
 *  a host's handler of SIGINT, SIGTERM, SIGHUP, ... before it ends the process (the omopt
 *  command's handlers call it, then re-raise the signal). When the process goes on instead,
 *  the saves in progress fail with OM_ERR_IO. The files being written are listed in a fixed
 *  table, the library's one piece of mutable global state, kept for this (64 files at once;
 *  beyond that a file is written unlisted). */
OM_API int om_save_cleanup(void);
/** Frees memory the library returned for the caller to free (om_model_dot's text, the
 *  arrays of om_model_op_counts, om_op_rows and om_session_profile). NULL is allowed. */
OM_API void om_free(void *p);

/* ---- tensor files ------------------------------------------------------------------------ */

/** Reads a serialized ONNX TensorProto (.pb) or a NumPy .npy file into t (om_tensor_free).
 *  Only regular files are opened (a FIFO or a device is refused, never waited on). */
OM_API om_kind om_tensor_read_file(const char *path, om_tensor *t, om_status *st);
/** Writes t as a TensorProto (.pb, named `name`) or as .npy, chosen by the path's suffix,
 *  atomically: a temporary file beside it renamed over it (a symlink there is replaced). */
OM_API om_kind om_tensor_write_file(const char *path, const om_tensor *t, const char *name,
			     om_status *st);

/* ---- check, compare, bisect: a rewritten model against its original ---------------------- */

/*
 * om_check runs two models (an original and, say, its simplified form) with omopt's own
 * executor on the same inputs and compares their graph outputs by name. om_compare compares
 * every value the two models share by name (copies of both run with those values made graph
 * outputs). om_bisect re-runs om_simplify pass by pass on a copy of the original to find the
 * first pass, and the first node, whose rewrite changed results. The models are only read.
 *
 * Inputs. The inputs the caller gives (om_check_options.input_names / inputs) are fed as they
 * are in every run (when the caller gives every required input, om_check makes one run: the
 * others would be the same; but see overridable initializers below); the others are random,
 * from `seed`:
 *   - float, double, float16, bfloat16: standard normal;
 *   - integer types: uniform in [0, 16) (non-negative and small: valid indices of typical
 *     embedding and Gather models); bool: 0 or 1.
 *   - dims: a dim_param of the first model's inputs takes the same value in every input of a
 *     run (a given input's shape binds it); a free one takes a small value that changes from
 *     run to run: the k-th symbol (in the order the inputs declare them) is 1 + (run + k) % 4
 *     in run `run` (from 0), so the first symbol is 1 in the first run. A dim that is neither
 *     a number nor a dim_param is a symbol of its own. An image's height and width (a symbol
 *     at dim 2 or later of an input that a channels-first op, Conv or pooling, reads as its
 *     input 0, directly or through element-wise ops) take 32 (1 + (run + k) % 4) instead:
 *     a CNN on a few pixels, most of them padding, would check little but its padding.
 *   When the first model rejects the random inputs (OM_ERR_INVALID_INPUT or
 *   OM_ERR_INVALID_MODEL from a node: an index out of range, sizes that do not fit), the run
 *   is made again with integers in [0, 2); then with the free symbols that are at no input's
 *   dim 0 (not a batch) taking 32 v instead of v = 1 + (run + k) % 4 (image sizes that the
 *   network's stride divides), then 256 + 64 (v - 1) (at least an audio model's window), each
 *   with both integer ranges. The report says which inputs were used.
 *   Overridable initializers (om_session_overridable_count: an IR >= 4 model's inputs that
 *   have an initializer) the caller does not give take their defaults in even runs (the first
 *   is run 0) and random values of their declared type and shape, by the rules above, in odd
 *   ones; so om_check makes at least two runs when there are any (a tensor of undeclared rank,
 *   or of a type with no random values, keeps its default). A model that rejects every
 *   attempt with random values for them runs that run at their defaults, and the report says
 *   so.
 *
 * Differences, for each pair of tensors (a: the first model's, the reference; b: the second's):
 *   max_abs = max |a - b| over the elements (NaN at the same place in both counts 0; NaN in one
 *   only, or infinities that differ, count infinity); ref_max = max |a| over a's finite
 *   elements; max_rel = max_abs / ref_max (0 when both are 0): the difference relative to the
 *   tensor's scale, which an element near zero does not inflate. A float tensor (float, double,
 *   float16, bfloat16) is within tolerance when max_abs <= atol + rtol * ref_max; a tensor of
 *   another numeric type or bool must be equal. Different element types or shapes are a
 *   failure of their own; strings, complex numbers and sequences are not compared.
 */

typedef struct om_check_options {
	int runs;                       /* input sets (0: 1) */
	uint64_t seed;                  /* of the random inputs (0: a fixed default): the same
					   seed gives the same inputs */
	double rtol, atol;              /* tolerances (0: 1e-4 and 1e-5) */
	const char *const *input_names; /* ninputs names of inputs the caller gives, or NULL */
	const om_tensor *inputs;        /* their values (borrowed), fed in every run */
	int ninputs;
	int threads;                    /* threads of the sessions' kernels (0: 1) */
	om_progress_fn progress;        /* called before every run (NULL: none) */
	void *progress_user;
} om_check_options;

/** How a value compares. */
enum om_diff_state {
	OM_DIFF_OK = 0,  /* within tolerance */
	OM_DIFF_OVER,    /* differences over the tolerance */
	OM_DIFF_SHAPE,   /* element types or shapes differ */
	OM_DIFF_MISSING, /* the second model has no such output, or could not compute it */
	OM_DIFF_SKIPPED  /* not compared: strings, complex numbers, sequences, optionals */
};

/** The difference of one value between two models (units: the tensor's own). */
typedef struct om_diff {
	char name[256];           /* the value's name (cut at 255 bytes) */
	char node[128], op[64];   /* its producer in the second model ("": a graph input, an
				     initializer, or none) */
	char ref_node[128], ref_op[64]; /* its producer in the first model */
	int32_t state;            /* enum om_diff_state */
	int32_t dtype;            /* the first model's element type */
	int32_t rank;             /* the first model's shape (rank -1 when not a tensor) */
	int64_t dims[OM_MAX_RANK];
	double max_abs, max_rel, ref_max; /* as defined above; the largest over the runs */
	int64_t dims_max[OM_MAX_RANK]; /* over several runs (om_check): each dim's largest, and
					  dims the smallest, over the runs of the worst state */
} om_diff;

typedef struct om_check_report {
	int runs;           /* runs made */
	int passed;         /* 1: every output of every run within tolerance */
	int failed_run;     /* the first run that failed (from 0), -1 when none */
	double rtol, atol;  /* the tolerances used */
	char how[1024];     /* how the inputs were made, for people: "run 1: batch=1 seq=2, ..." */
	char error[700];    /* when the second model could not run: its status, formatted */
	int noutputs;
	om_diff *outputs;   /* per graph output of the first model, its worst over the runs */
	int nfailed_inputs; /* failed_run's inputs (first model's order, owned): to feed om_bisect */
	char **failed_input_names;
	om_tensor *failed_inputs;
} om_check_report;

/**
 * Runs `original` and `model` on opt->runs input sets and fills *rep (free it with
 * om_check_report_free, also after an error). Returns OM_OK when the check could be made,
 * whether it passed or not (rep->passed); `model` failing to run is a failed check (rep->error),
 * not an error. Errors: OM_ERR_INVALID_INPUT for a given input the original does not have, of
 * another type or rank, or dims that disagree about a symbol, and when the original rejects
 * every kind of random input (its message says what to give); OM_ERR_UNSUPPORTED when omopt
 * cannot run the original or make an input (a string, a sequence: give it); OM_ERR_NOMEM.
 * `opt` may be NULL.
 */
OM_API om_kind om_check(const om_model *original, const om_model *model,
			const om_check_options *opt, om_check_report *rep, om_status *st);
OM_API void om_check_report_free(om_check_report *rep);

typedef struct om_compare_report {
	double rtol, atol;  /* the tolerances used */
	char how[1024];     /* how the inputs were made (as om_check_report's) */
	char error[700];    /* when the second model could not run: its status, formatted */
	int n;
	om_diff *values;    /* every value of a's main graph whose name a node of b computes or
			       an initializer of b holds, in a's topological order (graph outputs
			       included, graph inputs not) */
	int first_over;     /* index of the first value neither OK nor skipped, -1 when none */
} om_compare_report;

/**
 * Runs a and b once on the same inputs (opt's, the rest random as om_check's first run) with
 * every value they share by name made a graph output, and compares those values. Errors as
 * om_check's. Free *rep with om_compare_report_free (also after an error).
 */
OM_API om_kind om_compare(const om_model *a, const om_model *b, const om_check_options *opt,
			  om_compare_report *rep, om_status *st);
OM_API void om_compare_report_free(om_compare_report *rep);

typedef struct om_bisect_report {
	int found;         /* 1: the pass below is the first that changed results */
	int round;         /* its round (from 1) */
	char pass[64];
	int steps;         /* passes that changed the model, up to and including this one */
	om_diff first;     /* the first value, in the original's topological order, that differs
			      between the original and the model after the pass: its producer in
			      the model after the pass (node, op; the rewritten node) and in the
			      original (ref_node, ref_op) */
	char error[700];   /* when the model after the pass could not run: its status (which
			      names the node) */
} om_bisect_report;

/**
 * Runs om_simplify(sopt) on a copy of `original`, checking the model after every pass that
 * changed it as om_check(original, model, copt) does, and stops at the first that fails:
 * rep->found, its pass and round, and the first value (om_compare on the failing run's
 * inputs) that differs. rep->found is 0 when every step passes. Errors: om_check's and
 * om_simplify's. `sopt` and `copt` may be NULL.
 */
OM_API om_kind om_bisect(const om_model *original, const om_simplify_options *sopt,
			 const om_check_options *copt, om_bisect_report *rep, om_status *st);

/* ---- half precision: float16 / bfloat16 weights and compute -------------------------------- */

/*
 * om_convert_dtype rewrites a float32 model to compute in float16 or bfloat16 with its
 * interface unchanged (graph inputs and outputs keep their names and float32; Casts join them
 * to the converted nodes), and chooses by measurement which nodes stay float32:
 *   1. Every node of the main graph whose float32 slots ONNX's type constraints (at the model's
 *      opset) admit the half type is converted: its float32 initializers become half (float16:
 *      finite values beyond +-65504 clamped), attributes that give an output type (`to`,
 *      `dtype` of float) and float tensor attributes follow. Nodes kept float32 whatever is
 *      measured: ops with no half type where the model has float32 (or of another domain than
 *      ai.onnx), nodes with subgraphs (their bodies unchanged), quantize/dequantize nodes,
 *      nodes with a value of unknown element type, and those in `keep`. Integer, bool, double
 *      and quantized values never change.
 *   2. The keep-list: the float32 model is run by omopt's executor on the check's inputs (as
 *      om_check's: opt->check.inputs, the rest random) with every value kept; each converted
 *      node is then run alone on those values rounded to the half type, and its result
 *      compared with the float32 one (max_rel as om_diff's). A node stays float32 when its
 *      half result overflows (inf or NaN where float32 is finite), when an input it would read
 *      is beyond the half type's range, when omopt cannot run it in half, or when max_rel
 *      exceeds node_rtol.
 *   3. Weights: the nodes converted or kept in step 2 may read their float32 initializers (of
 *      64 elements or more, within the half type's range, in slots where the op admits the
 *      half type) stored in half even when they compute in float32 (one Cast per initializer
 *      gives them the float32 values), so the file is about as small as if they were
 *      converted. The model with all of them in float32 on weights stored in half is checked
 *      (as below, within half the tolerance); when it fails (outputs that depend on the
 *      weights' last bits), runs of them are stored as in step 4's search, and a node whose
 *      weights stay float32 is kept whole (OM_KEEP_WEIGHTS).
 *   4. The converted model is checked against the float32 one (om_check with the check
 *      options; tolerances rtol 1e-2, atol 1e-12 unless given). While outputs are over the
 *      tolerance, the converted nodes with the largest measured max_rel (over node_rtol / 4^k in
 *      round k) are kept too, up to max_rounds rounds. When that is not enough, every converted
 *      node is kept, and runs of them in graph order are converted again, the run reading the
 *      most float32 weight bytes first, each while the outputs pass within half the tolerance
 *      (a failing run is halved and its halves tried; at most 48 checks). Kept nodes read
 *      their weights stored in half as step 3 allowed.
 * No ONNX Runtime is needed. The model is rewritten in place (its main graph is also sorted
 * topologically); `rep` says what was kept and why and how the final model compares.
 */

/** Why a node stays float32 (om_dtype_kept.reason). */
enum om_dtype_reason {
	OM_KEEP_ASKED = 1,    /* named in om_dtype_options.keep */
	OM_KEEP_TYPE,         /* no float16/bfloat16 type at the model's opset, or not ai.onnx */
	OM_KEEP_SUBGRAPH,     /* runs subgraphs */
	OM_KEEP_QDQ,          /* quantize/dequantize */
	OM_KEEP_UNTYPED,      /* a value of unknown element type */
	OM_KEEP_INFER,        /* its op row infers another output type in half */
	OM_KEEP_OVERFLOW,     /* its half result overflows (inf/NaN where float32 is finite) */
	OM_KEEP_INPUT_RANGE,  /* an input it reads is beyond the half type's range */
	OM_KEEP_ERROR,        /* its half result differs by more than node_rtol */
	OM_KEEP_RUN,          /* omopt cannot run it in half (detail: the error) */
	OM_KEEP_OUTPUTS,      /* kept in a later round so that the outputs pass */
	OM_KEEP_WEIGHTS       /* its weights in half alone move the outputs beyond the
				 tolerance (step 3) */
};

typedef struct om_dtype_options {
	int32_t dtype;            /* OM_FLOAT16 or OM_BFLOAT16 */
	om_check_options check;   /* the measurement's and the check's inputs, runs (0: 2), seed,
				     threads, progress; rtol / atol the outputs' tolerances (0: 1e-2,
				     1e-12: relative to the tensor's scale) */
	double node_rtol;         /* a node whose half result is further than this from float32
				     (max_rel) stays float32 (0: 1e-2) */
	int max_rounds;           /* of step 4 (0: 6) */
	const char *const *keep;  /* NULL-terminated node names kept float32, or NULL */
	int no_measure;           /* 1: no steps 2 to 4: convert what the types admit */
} om_dtype_options;

/** A node kept float32. */
typedef struct om_dtype_kept {
	char node[128], op[64];
	int32_t reason;           /* enum om_dtype_reason */
	double max_rel;           /* its measured half result against float32 (largest over the
				     runs; inf on overflow; 0 when not measured) */
	char detail[256];         /* the input out of range, the error, "" */
	int32_t weights_half;     /* 1: it computes in float32 on weights stored in the half type
				     (step 3) */
} om_dtype_kept;

typedef struct om_dtype_report {
	int converted;            /* main-graph nodes converted */
	int nkept;
	om_dtype_kept *kept;      /* nodes kept float32 that have float32 values, in graph order */
	int rounds;               /* conversions checked (steps 3 and 4) */
	int64_t clamped;          /* initializer elements clamped to the half type's range */
	om_check_report check;    /* the final model against the float32 one (check.passed);
				     empty with no_measure */
	int unchanged;            /* 1: the converted model would have been larger than the
				     float32 one (Casts around little float compute, a quantized
				     model): m was left as it was */
} om_dtype_report;

/**
 * Converts m as described above, in place, and fills *rep (free it with om_dtype_report_free,
 * also after an error). Returns OM_OK when the conversion was made, whether the final check
 * passed or not (rep->check.passed). Errors: OM_ERR_INVALID_INPUT for a dtype other than
 * float16/bfloat16 or a given input the model does not have (om_check's), OM_ERR_UNSUPPORTED
 * when omopt cannot run the float32 model, OM_ERR_NOMEM.
 */
OM_API om_kind om_convert_dtype(om_model *m, const om_dtype_options *opt, om_dtype_report *rep,
				om_status *st);
OM_API void om_dtype_report_free(om_dtype_report *rep);

#ifdef __cplusplus
}
#endif
#endif /* OMOPT_H */
