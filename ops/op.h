/*
 * op.h — an operator is a table row plus a kernel (see docs/ops.md).
 *
 * One row per (domain, op, since-version). The registry picks, for a node, the row with the
 * highest since-version <= the model's opset for that domain. The same rows serve the
 * executor and the constant folder: one semantics.
 *
 * Inference and kernels see the node's inputs as om_tensor pointers:
 *   - infer(): in[i]->dtype/rank/dims are set; in[i]->data is non-NULL only when the value is
 *     known (a constant at plan time, always at run time). It sets out[i]->dtype, rank, dims.
 *     When it needs a value that is not known it returns OM_NEED_VALUE (seed §1: the node is
 *     shaped again in every run). Shape/attribute problems: OM_ERR_INVALID_MODEL naming the node.
 *     Partial result: before returning OM_NEED_VALUE, infer may set what it knows anyway:
 *     out[i]->dtype (0: unknown), and rank with dims (a dim -1 is unknown; rank -1, which
 *     om_infer_node presets, is unknown). Shape inference keeps it (Range: the dtype of start
 *     and rank 1); the planner ignores outputs of OM_NEED_VALUE.
 *   - kernel(): every in[i]->data is set; out[i]->data points at nbytes of writable memory
 *     (for OM_OP_VIEW rows, the session sets out[0]->data = in[0]->data and the kernel is NULL
 *     or only checks). Index errors at run time: OM_ERR_INVALID_INPUT.
 * in[i] is NULL for an omitted optional input; out[i] is NULL for an omitted optional output.
 *
 * Kernel state (work derived once from constant inputs, e.g. transformed Conv weights):
 *   - const_in bit i (i < 64) is set when in[i] is a plan-time constant: the same bytes in every
 *     run of the step (a bridged kernel sees them converted, still the same in every run).
 *   - state, when not NULL, points at the step's slot in the run's runner (runtime/runner.h):
 *     NULL before the runner's first run of the step, kept across its runs, freed with free()
 *     when the session is freed. Runs under way at once have runners of their own, so a
 *     kernel never shares its block with another thread. A kernel may put one malloc'd block
 *     there (replacing it with free() + malloc when it needs another); it must validate the
 *     block against everything it was derived from (shapes, attributes, dtype) before reuse.
 *     state is NULL when the constant folder or om_eval_node runs the kernel.
 *   - state_release (set whenever state is): a kernel whose block holds resources that free()
 *     does not give back (a library's handles) stores a function here; the session calls it on
 *     the block before free() (and a kernel replacing its block calls it itself first).
 */
#ifndef OM_OP_H
#define OM_OP_H

#include "ir.h"

/* Properties of an op that the passes, the planner and the folder ask the row for (never the
 * op's name). */
enum om_op_flags {
	OM_OP_VIEW = 1u << 0,           /* out[0] aliases in[0]: no byte moves (seed §1) */
	OM_OP_EXACT = 1u << 1,          /* bit-identical on every ISA and thread count */
	OM_OP_DATA_DEPENDENT = 1u << 2, /* output extent depends on input values (NonZero) */
	OM_OP_INPLACE = 1u << 3,        /* kernel may write out[0] over in[0] (same size, dtype) */
	OM_OP_CONTROL = 1u << 4,        /* runs subgraphs (If, Loop, Scan) */
	OM_OP_RANDOM = 1u << 5,         /* outputs differ from run to run: never folded, never
					   evaluated at plan time, never merged */
	OM_OP_QDQ = 1u << 6,            /* QuantizeLinear/DequantizeLinear: a quantized model's
					   structure; not folded unless the user asks */
	OM_OP_SHAPE_OF = 1u << 7,       /* reads only in[0]'s dims, never its bytes (Shape, Size):
					   a constant wherever in[0]'s shape is known */
	OM_OP_ELEMENTWISE = 1u << 8,    /* out[0] at an index depends only on the inputs at the
					   same (broadcast) index */
	OM_OP_COMMUTATIVE = 1u << 9,    /* the inputs may be given in any order */
	OM_OP_SAME_SHAPE_COPY = 1u << 10, /* out[0] holds in[0]'s values whenever it has in[0]'s
					     type and shape (Reshape, Expand, Tile, Cast...) */
	OM_OP_LAYOUT = 1u << 11,        /* reads a channels-first layout (N, C, spatial...) */
	OM_OP_PASSTHROUGH = 1u << 12,   /* out[0] is in[0] (type, shape and values), always */
	OM_OP_EPILOGUE = 1u << 13,      /* the kernel applies om_ctx.post to out[0] (a float
					   output) while it is in cache, when the node has no
					   `activation` of its own */
	OM_OP_IN_SCALE = 1u << 14,      /* the kernel multiplies in[0] (float, (N, C, ...)) by
					   om_ctx.in_scale, a factor per image and channel */
	OM_OP_INPLACE_LAST = 1u << 15,  /* kernel may write out[0] over its last input (same
					   size, dtype), an addend it reads where it writes */
	OM_OP_SUM = 1u << 16,           /* given an input 3 beyond the node's own (a float
					   addend of out[0]'s type, shape and layout: an Add the
					   planner absorbed), the kernel adds it to out[0]
					   before om_ctx.post */
	OM_OP_PERM_AXIS = 1u << 17,     /* inputs of one rank, out[0] of that rank, and the
					   only axis-dependent part is the `axis` attribute:
					   transposed inputs give the transposed output with axis
					   remapped (Concat, Softmax-13: absent, -1 on a
					   one-input row); push_transposes */
	OM_OP_PERM_REDUCE = 1u << 18,   /* a reduction of in[0] over `axes` (attribute, or
					   input 1 when the signature has no such attribute) or
					   one `axis` (ArgMax), with `keepdims`; push_transposes */
	OM_OP_UNALIGNED = 1u << 19,     /* the kernel reads every input but in[1] (indices) with
					   byte moves: a constant there may be misaligned for its
					   element type (a large initializer left in the mapped
					   file, api/load.c: Gather reads only the rows it needs) */
	OM_OP_SELECT = 1u << 20         /* every element of out[0] is an element of the inputs
					   of out[0]'s type, or the largest of some (MaxPool):
					   the op commutes with an increasing map of them (an
					   8-bit DequantizeLinear), whatever the element type */
};
#define OM_OP_FLAG_BITS 21 /* bits used above (om_op_flag_name names each) */

/* Which op a row is, for the passes that match patterns of ops (a fusion looks for a Conv whose
 * output feeds a Relu). Only the ops a pass names have a code; every other row has OM_OPC_NONE.
 * A code names one op of one domain: a node has it when its row (at the model's opset for the
 * node's domain) has it, so a pass never compares op-type or domain strings. */
enum om_opcode {
	OM_OPC_NONE = 0,
	/* ai.onnx */
	OM_OPC_ADD, OM_OPC_SUB, OM_OPC_MUL, OM_OPC_DIV, OM_OPC_POW, OM_OPC_SQRT, OM_OPC_RECIPROCAL,
	OM_OPC_ERF, OM_OPC_TANH, OM_OPC_SIGMOID, OM_OPC_RELU, OM_OPC_LEAKY_RELU,
	OM_OPC_HARD_SIGMOID, OM_OPC_HARD_SWISH, OM_OPC_SWISH, OM_OPC_CLIP, OM_OPC_GELU, OM_OPC_REDUCE_MEAN, OM_OPC_MATMUL,
	OM_OPC_GEMM, OM_OPC_CONV, OM_OPC_BATCH_NORM, OM_OPC_LAYER_NORM, OM_OPC_TRANSPOSE,
	OM_OPC_RESHAPE, OM_OPC_SQUEEZE, OM_OPC_UNSQUEEZE, OM_OPC_SLICE, OM_OPC_EXPAND,
	OM_OPC_DROPOUT, OM_OPC_CAST, OM_OPC_IF, OM_OPC_CONSTANT, OM_OPC_PAD, OM_OPC_AVERAGE_POOL,
	OM_OPC_CONV_TRANSPOSE, OM_OPC_QUANTIZE_LINEAR, OM_OPC_DEQUANTIZE_LINEAR,
	OM_OPC_DYNAMIC_QUANTIZE_LINEAR, OM_OPC_MATMUL_INTEGER,
	OM_OPC_SPLIT, OM_OPC_RESIZE, OM_OPC_LOOP,
	/* com.microsoft */
	OM_OPC_MS_GELU, OM_OPC_MS_FAST_GELU, OM_OPC_MS_BIAS_GELU, OM_OPC_MS_QUICK_GELU,
	OM_OPC_MS_FUSED_CONV, OM_OPC_MS_FUSED_MATMUL, OM_OPC_MS_SKIP_LAYER_NORM,
	OM_OPC_MS_MATMUL_INT_FLOAT, OM_OPC_MS_DYNQ_MATMUL,
	/* ai.onnx, added later (merge_ifs) */
	OM_OPC_EQUAL, OM_OPC_NOT, OM_OPC_SHAPE, OM_OPC_SIZE, OM_OPC_GATHER,
	/* ai.onnx.preview.training (passes/lower_gradient.c) */
	OM_OPC_GRADIENT,
	OM_OPC_COUNT
};
_Static_assert(OM_OPC_COUNT <= 64, "a set of opcodes is a uint64_t");
/* A set of opcodes (om_rewrite_each's filter). */
#define OM_OPC_BIT(code) (UINT64_C(1) << (code))

struct om_runner;
struct om_act;
typedef struct om_run_services om_run_services;

typedef struct om_ctx {
	const om_node *node;
	const struct om_op *op; /* the node's row (the registry's pick at `opset`): what a kernel
				 * shared by several rows asks (op->param), never the op's name */
	int64_t opset;          /* the model's opset for the node's domain */
	int32_t nin, nout;
	const om_tensor *const *in;
	om_tensor *const *out;
	om_status *st;
	int exact;              /* exact mode requested (seed §1, issue 4) */
	int threads;
	int deterministic;      /* om_session_options.deterministic: no one-thread form of a step
				 * chosen by the machine's load (om_par_held) */
	struct om_runner *runner; /* the run this node runs in, for `run` (opaque to kernels) */
	const om_run_services *run; /* what the session offers kernels (below); NULL when folding */
	void **state;           /* the step's kernel state slot (above); NULL when folding */
	void (**state_release)(void *); /* the slot's release function (above) */
	const char **impl;      /* the step's record of the implementation its kernel chose
				 * (om_ctx_chose); NULL when nobody records (folding) */
	uint64_t const_in;      /* bit i: in[i] holds the same bytes in every run (above) */
	/* OM_OP_EPILOGUE rows: an activation (activation.h) the planner folded into this step,
	 * applied last to out[0]; NULL when none (always outside a session) */
	const struct om_act *post;
	/* OM_OP_IN_SCALE rows: a Mul of in[0] the planner folded into this step: the kernel reads
	 * in[0] times in_scale, a float (N or 1, C, 1, 1) or (C, 1, 1) tensor, channel-blocked
	 * like in[0] when in[0] is (then (N or 1, ceil(C / b), 1, 1, b), b in[0]'s lanes); NULL
	 * when none (always outside a session) */
	const om_tensor *in_scale;
	/* Rows with a `layout` function (below): which of the step's inputs and outputs the planner
	 * keeps channel-blocked (OM_LAYOUT_IN(i), OM_LAYOUT_OUT(i)), by `block` channels (or
	 * OM_BLOCK_NHWC); 0 outside a session and in exact mode (a layout function sees the
	 * block the planner plans with) */
	uint64_t blocked;
	int32_t block;
} om_ctx;

typedef om_kind (*om_infer_fn)(om_ctx *c);
typedef om_kind (*om_kernel_fn)(om_ctx *c);

/* The channel-blocked layout (fast mode; runtime/plan_layout.c plans it, ops/layout.h has the
 * helpers). A float value of shape (N, C, H, W) blocked by b (8 or 16, oneDNN's nChw8c and
 * nChw16c) holds element (n, c, h, w) at (((n * Cb + c / b) * H + h) * W + w) * b + c % b,
 * Cb = ceil(C / b): its tensor has shape (N, Cb, H, W, b), so element-wise kernels run on it
 * unchanged. The padding channels (c >= C) hold finite values that no result depends on.
 * A plan may instead block each value by its own channel count (block OM_BLOCK_NHWC): one
 * block of C lanes, (N, 1, H, W, C), which is NHWC, with no padding. Either way a blocked
 * tensor's lanes are its dims[4].
 * A row's layout function says, for a node with the plan-time shapes in c (logical, 4-D),
 * which positions may be blocked: bit i for input i, bit 32 + i for output i. */
#define OM_LAYOUT_IN(i) (UINT64_C(1) << (i))
#define OM_LAYOUT_OUT(i) (UINT64_C(1) << (32 + (i)))
#define OM_BLOCK_NHWC (-1) /* om_ctx.block, om_layout_req.block: NHWC (above) */
typedef struct om_layout_req {
	uint64_t may;  /* positions the kernel takes blocked */
	uint64_t tied; /* positions that are all blocked or all plain (a subset of may) */
	int32_t block; /* the block the kernel needs (or OM_BLOCK_NHWC), 0: any */
} om_layout_req;
typedef void (*om_layout_fn)(const om_ctx *c, om_layout_req *r);

/* A row whose kernel has several implementations (Conv's table, the pools' plain and blocked
 * kernels, Transpose's moves) says at plan time which one a step will run: the planner calls
 * its choose function for every step whose shapes are settled (runtime/plan_choose.c) with c
 * as the kernel will see it but for the values: in[i] and out[i] have their plan-time dtypes
 * and shapes (blocked shapes where c->blocked says so), in[i]->data is set for plan-time
 * constants only (const_in), exact, threads, post, blocked and block are the step's, in_scale
 * has the factor's shape and may have no data; c->st may be written. The function fills *ch
 * (zeroed before the call): the name of the implementation, the static string the kernel
 * names at run time (om_ctx_chose), and what else the choice fixed for a reader ("rank 3
 * (1,0,2) merged"), or leaves ch->name NULL when plan time cannot tell. The kernel decides
 * through the same functions (one decision); it may still decline at run time (oneDNN's
 * primitive), and a step shaped per run has no plan-time record: the step's run-time record
 * (om_ctx_chose) then differs, and `omopt dot --plan` and `run --profile-nodes` show both. */
typedef struct om_choice {
	const char *name; /* static: "winograd-f4", "tiles", ...; NULL: not known at plan time */
	char how[48];     /* "" or a few words on what the choice fixed */
} om_choice;
typedef void (*om_choose_fn)(const om_ctx *c, om_choice *ch);

/* An op's signature at one opset version (ONNX's schema: ops/signature.c checks every node
 * against it before any inference or kernel sees the node). */
typedef struct om_sig_attr {
	const char *name;
	int32_t type;        /* enum om_attr_type */
	int32_t required;
} om_sig_attr;

#define OM_MANY INT32_MAX /* max_in / max_out of a variadic op */

typedef struct om_sig {
	int32_t since;                /* first opset version this signature holds for */
	int32_t min_in, max_in;       /* how many inputs the node lists, "" entries included */
	int32_t min_out, max_out;
	uint64_t opt_in, opt_out;     /* bit i (slot i, 63 for every later one): may be "" */
	uint64_t in_f16, out_f16;     /* the same bits: its ONNX type admits tensor(float16) */
	uint64_t in_bf16, out_bf16;   /* ... tensor(bfloat16) (none: not an ai.onnx schema) */
	const om_sig_attr *attrs;     /* the attributes it knows, {NULL} ends; NULL: none */
	const struct om_sig *newer;   /* the row's signature from a later opset, or NULL */
} om_sig;

typedef struct om_op {
	const char *name;
	const char *domain;  /* "" for ai.onnx */
	int32_t since;       /* first opset version this row implements */
	om_infer_fn infer;
	om_kernel_fn kernel;
	uint32_t flags;
	const om_sig *sig;   /* inputs, outputs and attributes a node may have (above) */
	int32_t code;        /* enum om_opcode: OM_OPC_NONE unless a pass matches this op */
	om_layout_fn layout; /* positions that may be channel-blocked (above); NULL: none */
	/* A constant of the row for the infer and kernel functions it shares with other rows
	 * (c->op->param): which variant it is (QLinearConv or Conv, ReduceSum or ReduceMax) and
	 * what an opset version changed in its meaning, as the family's own enum or bits; 0 for
	 * a row whose functions are its own. */
	int32_t param;
	om_choose_fn choose; /* the implementation a step will run (above); NULL: one */
} om_op;

/* Each kernel file defines one table: `const om_op_table om_ops_<group> = OM_TABLE(rows);` */
typedef struct om_op_table {
	const om_op *rows;
	size_t count;
} om_op_table;

#define OM_TABLE(rows) {(rows), sizeof(rows) / sizeof((rows)[0])}

/** The signature of op at `opset` (the newest whose since <= opset), or NULL when none. */
const om_sig *om_op_sig_at(const om_op *op, int64_t opset);
/** InvalidModel naming n unless n's inputs, outputs and attributes fit op's signature at
 *  `opset` (ops/signature.c). Every path that plans, infers or evaluates a node calls it. */
om_kind om_node_check(const om_op *op, const om_node *n, int64_t opset, om_status *st);
/** The same, with in[i] (not n->in[i]) saying whether input i is given (om_eval_node's
 *  callers pass tensors; in NULL: the node's names). */
om_kind om_node_check_in(const om_op *op, const om_node *n, int64_t opset,
			 const om_tensor *const *in, om_status *st);

/* ---- what a run offers kernels ----------------------------------------------------------
 * The runtime fills om_ctx.run with these when a node runs in a session; kernels reach them
 * through the om_ctx_* calls below, so the kernels never see the runtime (it sits above them).
 * Outside a session (the constant folder, om_eval_node) om_ctx.run is NULL. */
struct om_run_services {
	om_kind (*reserve)(const om_ctx *c, size_t bytes, const char *what);
	om_kind (*check_time)(const om_ctx *c);
	om_kind (*run_graph)(const om_ctx *c, const om_graph *g, const om_tensor *const *in,
			     int nin, om_tensor *out, int nout);
	om_kind (*output)(om_ctx *c, int32_t i, int32_t dtype, int32_t rank, const int64_t *dims);
	om_kind (*output_value)(om_ctx *c, int32_t i, om_tensor *v);
	om_kind (*output_alias)(om_ctx *c, int32_t i, const om_tensor *v, int32_t from);
	uint64_t (*random_key)(const om_ctx *c); /* a fresh key for an unseeded random draw */
	bool (*own_copy)(const om_ctx *c, int32_t i, bool give_back); /* om_ctx_own_copy */
	bool (*read_const)(const om_ctx *c, int32_t i, size_t off, size_t n, void *dst);
	om_kind (*scratch)(const om_ctx *c, size_t bytes, const char *what, void **p);
	void (*scratch_done)(const om_ctx *c, void *p);
};

/**
 * For a kernel that keeps a copy of constant input i of its own (weights packed once into a
 * library's layout) and then no longer reads in[i]: whether the session can give back in[i]'s
 * pages, which it can when they are the model file's and no other step reads them
 * (runtime/plan.c); with give_back (the copy made), it gives them back, so that the weights
 * are not resident twice (a later read faults them in again). False outside a session.
 */
static inline bool om_ctx_own_copy(const om_ctx *c, int32_t i, bool give_back)
{
	return c->run && c->run->own_copy && c->run->own_copy(c, i, give_back);
}

/**
 * For a kernel that reads a few pieces of constant input i (rows of an embedding table):
 * copies bytes [off, off + n) of in[i] into dst by reading the model's file, which leaves the
 * table's pages unmapped, and returns true — when the session gives in[i]'s pages back after
 * the step (runtime/plan.c: a file-mapped table only such steps read). False otherwise
 * (outside a session, another input, a failed read): the kernel then reads in[i] itself.
 * A system call each: for pieces of OM_READ_CONST_MIN bytes or more, where a page fault each
 * (a 64 KiB window) would cost more. n 0 (dst unused): whether in[i] is read this way.
 */
static inline bool om_ctx_read_const(const om_ctx *c, int32_t i, size_t off, size_t n,
				     void *dst)
{
	return c->run && c->run->read_const && c->run->read_const(c, i, off, n, dst);
}
enum { OM_READ_CONST_MIN = 512 };

/**
 * For kernels about to malloc `bytes` of their own (scratch, unpacked copies, growing
 * accumulators): OM_ERR_INVALID_INPUT naming the node and `what` when the session's busy
 * buffers and these bytes would exceed its memory limit (om_session_options.max_memory).
 * OM_OK outside a session (the constant folder bounds its outputs itself) or without a limit.
 */
om_kind om_ctx_reserve(const om_ctx *c, size_t bytes, const char *what);
/**
 * Scratch of a kernel's own until it returns: *p gets at least `bytes` bytes (malloc's
 * alignment; 64 bytes in a session), given back by om_ctx_scratch_done (p NULL: nothing). In a
 * session they lie in the runner's scratch stack (runtime/scratch.h), kept for the next runs
 * and counted against the memory limit (the error om_ctx_reserve gives); outside one,
 * malloc's. A buffer malloc'd and freed
 * at every run cost its pages again each time (glibc gives a freed top of the heap back):
 * GroupQueryAttention's 144 KiB at two threads, 0.06 -> 0.6 ms a decode step, with the other
 * thread's TLB flushed each time. At most OM_SCRATCH_MOST at once in a run (the steps a
 * control step runs in its subgraphs count with its own); the runner releases what a kernel
 * did not give back when it returns.
 */
om_kind om_ctx_scratch(const om_ctx *c, size_t bytes, const char *what, void **p);
/** Gives back om_ctx_scratch's p (NULL: nothing). */
void om_ctx_scratch_done(const om_ctx *c, void *p);
#define OM_SCRATCH_MOST 8
/**
 * A kernel with several implementations (Conv's table, kernels/conv/conv_impl.c) names the one
 * it runs, a static string: the step keeps it as its run-time record, beside the plan-time one
 * (om_op.choose; `omopt dot --plan`, `run --profile-nodes`).
 */
static inline void om_ctx_chose(const om_ctx *c, const char *impl)
{
	if (c->impl)
		*c->impl = impl;
}
/** Input i of c, or NULL when i < 0, the node lists fewer inputs or leaves it empty (""). */
static inline const om_tensor *om_ctx_in(const om_ctx *c, int i)
{
	return i >= 0 && c->nin > i ? c->in[i] : NULL;
}
/**
 * For kernels that iterate (Loop, Scan): OM_ERR_INVALID_INPUT naming the node once the run is
 * past the session's time limit (om_session_options.max_run_ms); OM_OK otherwise, outside a
 * session, or without a limit.
 */
om_kind om_ctx_check_time(const om_ctx *c);
/**
 * Runs subgraph g (a graph attribute of the running node) inside the current run: in[i] feeds
 * g's input i (borrowed; NULL for an omitted optional input), OM_VALUE_OUTER values resolve to
 * the enclosing run's values. out[i] receive malloc'd values (the caller frees them with
 * om_value_free). OM_ERR_UNSUPPORTED outside a session.
 */
om_kind om_ctx_run_graph(const om_ctx *c, const om_graph *g, const om_tensor *const *in, int nin,
			 om_tensor *out, int nout);
/**
 * For OM_OP_CONTROL kernels, whose output shapes are known only once their subgraphs ran: the
 * session does not infer or place their outputs; the kernel gives output i its dtype and shape
 * here and gets c->out[i]->data from the run's pool.
 */
om_kind om_ctx_output(om_ctx *c, int32_t i, int32_t dtype, int32_t rank, const int64_t *dims);
/** For OM_OP_CONTROL kernels: output i = box v, which the run now owns (v is zeroed). */
om_kind om_ctx_output_value(om_ctx *c, int32_t i, om_tensor *v);
/** For OM_OP_CONTROL kernels: output i = v itself, no copy (a view): input `from` or an item
 *  of its box (SequenceAt, OptionalGetElement). The box stays alive while the view is read. */
om_kind om_ctx_output_alias(om_ctx *c, int32_t i, const om_tensor *v, int32_t from);

/* ---- helpers for infer functions and kernels (ops/kernel_util.c) ------------------------ */

/** Releases (state_release) and frees the step's kernel state block, if any: for a kernel
 *  about to put a block of its own there. */
void om_ctx_state_reset(om_ctx *c);
/** The step's kernel state block that `release` frees, when it was made for `key` (nkey
 *  int64_t at the block's start: the block's struct begins with its key). Otherwise the slot
 *  is reset and a new zeroed block of `size` bytes with the key copied in takes its place,
 *  and *made is set. NULL when the step has no state slot, or out of memory. */
void *om_ctx_state_keyed(om_ctx *c, void (*release)(void *), const int64_t *key, size_t nkey,
			 size_t size, bool *made);
/** Sets out's dtype and shape. */
void om_set_shape(om_tensor *out, int32_t dtype, int32_t rank, const int64_t *dims);
/** A partial result (above): out gets dtype and rank (-1, or outside 0..OM_MAX_RANK: unknown)
 *  with every dim unknown. Returns OM_NEED_VALUE. */
om_kind om_partial(om_tensor *out, int32_t dtype, int64_t rank);
/** Normalizes a possibly negative axis into [0, rank); OM_ERR_INVALID_MODEL when outside. */
om_kind om_norm_axis(om_ctx *c, int64_t axis, int32_t rank, int32_t *out);
/** Reads an int32/int64 tensor's elements as int64 (count = numel). Missing data: NEED_VALUE. */
om_kind om_read_ints(om_ctx *c, const om_tensor *t, int64_t *buf, int64_t cap, int64_t *count);
/** Multidirectional (numpy) broadcast of two shapes; INVALID_MODEL when incompatible. */
om_kind om_broadcast_shape(om_ctx *c, int32_t ra, const int64_t *da, int32_t rb,
			   const int64_t *db, int32_t *rank, int64_t *dims);
/** The error for a node that needs a value missing at plan time. */
static inline bool om_has_value(const om_tensor *t) { return t && t->data; }

#endif
