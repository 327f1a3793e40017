/*
 * pass.h — what the passes share: the pass context (pass_ctx.c), the side table of inferred
 * types and plan-time values (infer.c), the per-node rewrite driver (rewrite_each.c) and the
 * graph edits every pass needs (rewrite.c). What they ask of the graph is in match.h; the list
 * of passes and levels in pass_registry.h.
 *
 * Inference never writes into the IR: it fills a side table (om_vinfo, by value pointer) that
 * the rewriting passes read. A value's inferred type has dims that are numbers or symbols; an
 * unknown dim gets a fresh internal symbol ("?N") that only lives in the side table, so that
 * Shape(x)[k] can still be matched with x's dim k. A plan-time value (pv) is a small numeric
 * tensor whose elements are integers (at most OM_PV_MAX elements; int, bool, or float holding
 * integers), each a number or a symbol: a dim symbol (so >= 0), or a value symbol ("?vN", any
 * int64) for an element inference does not know. OM_PE_UNK is only a working state of
 * inference: stored values never hold it.
 */
#ifndef OM_PASS_H
#define OM_PASS_H

#include <string.h>

#include "ir.h"

enum { OM_PE_UNK = 0, OM_PE_NUM, OM_PE_SYM };

/** One element of a plan-time value. */
typedef struct om_pe {
	int32_t kind;
	int64_t num;     /* OM_PE_NUM */
	const char *sym; /* OM_PE_SYM: a dim symbol, or a value symbol "?vN" */
} om_pe;

enum { OM_PV_MAX = 64 }; /* plan-time values are tracked up to this many elements */

typedef struct om_vinfo {
	const om_value *key;
	om_type type;  /* inferred; kind OM_TYPE_UNKNOWN or rank -1 when unknown */
	int32_t npv;   /* element count of the plan-time value; -1 when none */
	int32_t pvrank; /* the value's rank; above 1 its extents are the type's (all numbers) */
	om_pe *pv;
	UT_hash_handle hh;
} om_vinfo;

/** merge_initializers' payload hash of one tensor. A tensor is not changed once made (a pass
 *  that changes a weight makes a new tensor: docs/ir.md), so the hash holds for the whole
 *  pipeline and a later round hashes only the initializers made since. */
typedef struct om_hash_memo {
	const om_tensor *t;
	uint64_t h;
	UT_hash_handle hh;
} om_hash_memo;

typedef struct om_pass_ctx {
	om_model *m;
	om_arena *scratch;    /* side-table memory, freed after simplify */
	size_t fold_max;      /* constant bytes infer may evaluate a node on (1 MiB) */
	size_t fold_cap;      /* the user's fold_max_bytes (cap of one folded output); 0: growth rule */
	int fold_qdq;         /* fold QuantizeLinear/DequantizeLinear (the user asked) */
	int64_t slack;        /* bytes folds may still add to the saved model (fold.c) */
	int nofold;           /* 1 while fold_constants is skipped */
	om_vinfo *info;       /* uthash by value pointer */
	uint32_t nsym;        /* fresh-symbol counter */
	int verbose;          /* 2: infer_shapes prints every value it types */
	struct om_inits_cap *caps; /* room left in the initializer lists grown here */
	struct om_outer_refs *outer; /* names one graph's subgraphs refer to (outer_refs.c) */
	struct {                /* nodes one om_rewrite_each rewrite touched (rewrite.c) */
		const om_graph *g; /* the graph being rewritten; NULL outside om_rewrite_each */
		int32_t n0;        /* g->nnodes before the rewrite: later nodes are new */
		int32_t n, cap;
		bool nomem;        /* the list could not grow: the driver recounts every use */
		om_node **nodes;
	} touched;
	uint64_t recounts;     /* whole-graph use counts om_rewrite_each made (tests: one a call) */
	int32_t ncaps;
	struct om_uses *uses;  /* the consumer index while a pass has one open (uses.h) */
	uint64_t uses_visits;  /* index entries and nodes om_uses_replace visited (tests) */
	uint64_t uses_builds;  /* consumer indexes om_uses_open built (tests) */
	om_hash_memo *hashes;  /* uthash by tensor: payload hashes (passes/common.c) */
	uint64_t hashed;       /* payloads merge_initializers hashed (tests) */
	om_status *st;
} om_pass_ctx;

/** Opens c over m: scratch arena, the options' verbosity, fold_max_bytes (fold_cap, and
 *  fold_max: 1 MiB when 0) and fold_qdq (opt may be NULL for the defaults). OM_ERR_NOMEM when the arena cannot be made. */
om_kind om_pass_ctx_open(om_pass_ctx *c, om_model *m, const om_simplify_options *opt,
			 om_status *st);
/** Frees what c holds (side table, scratch, initializer-list room). */
void om_pass_ctx_close(om_pass_ctx *c);

/** A pass rewrites one graph (subgraphs are visited by the driver) and adds what it changed
 *  to *changes. Errors are only for broken IR or out of memory: inference is best effort. */
typedef om_kind (*om_pass_fn)(om_pass_ctx *c, om_graph *g, int *changes);

om_kind om_pass_infer(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_fold(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_shape_chains(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_identities(om_pass_ctx *c, om_graph *g, int *changes);
/** A view of a view (Squeeze, Unsqueeze, Flatten, Reshape) becomes one Reshape of the first
 *  view's input, or a bypass when the extents are the input's (view_chains.c; part of
 *  eliminate_identities). *done tells whether n changed; only out of memory is an error. */
om_kind om_collapse_view_chain(om_pass_ctx *c, om_graph *g, om_node *n, bool *done);
om_kind om_pass_transposes(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_push_transposes(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_fuse_pad(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_fuse_conv_bn(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_fuse_conv_affine(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_fuse_matmul_add(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_fuse_matmul_transpose(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_common(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_dead(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_inline_if(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_unroll_loops(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_merge_ifs(om_pass_ctx *c, om_graph *g, int *changes);
/* level 2 (om_optimize) */
om_kind om_pass_fuse_conv_act(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_fuse_qdq(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_fuse_dynq(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_fuse_layernorm(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_fuse_skip_layernorm(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_fuse_gelu(om_pass_ctx *c, om_graph *g, int *changes);
om_kind om_pass_fuse_silu(om_pass_ctx *c, om_graph *g, int *changes);

/** Runs fn on g, then (subgraphs) on every subgraph of g's nodes, after g so that they see
 *  g's results (driver.c). */
om_kind om_run_on(om_pass_ctx *c, om_pass_fn fn, om_graph *g, bool subgraphs, int *changes);

/** Writes the inferred types of g's intermediate values into its value_info (value_info.c;
 *  the side table must be fresh). */
om_kind om_pass_value_info(om_pass_ctx *c, om_graph *g, int *changes);
/** g's output declarations take what inference knows (value_info.c): the element type and rank
 *  when undeclared, numbers for dims declared as symbols or unknown, the model's symbols for
 *  dims declared unknown; a declaration of another element type or rank stays as it is. */
om_kind om_declare_outputs(om_pass_ctx *c, om_graph *g, int *changes);
/** Optional node outputs nothing reads become "" (drop_outputs.c). */
om_kind om_pass_drop_outputs(om_pass_ctx *c, om_graph *g, int *changes);
/** Checks the input shapes against m's declarations and writes them (input_shapes.c);
 *  overwrite_fixed: a declared number may change too (om_simplify_options). */
om_kind om_apply_input_shapes(om_model *m, const om_input_shape *shapes, int32_t n,
			      int overwrite_fixed, om_status *st);
/** Cuts the sub-model between the named tensors out of m's main graph (extract.c); either
 *  list may be NULL. */
om_kind om_extract_submodel(om_pass_ctx *c, const char *const *inputs,
			    const char *const *outputs);

/** What om_simplify_steps calls after each pass that changed the model: the round (from 1),
 *  the pass's name and its change count. m is a valid model at that point (it may be copied
 *  with om_model_clone, not changed). Setting *stop ends the pipeline there with OM_OK; an
 *  error returned ends it too and is om_simplify_steps's result. */
typedef om_kind (*om_step_fn)(void *user, const om_model *m, int round, const char *pass,
			      int changes, bool *stop, om_status *st);
/** om_simplify, calling fn (may be NULL) after every pass that changed something; with
 *  break_pass not NULL, the wrong rewrite of om_test_break after that pass's first run
 *  (om_simplify_with_break, include/omopt_testing.h). */
om_kind om_simplify_steps(om_model *m, const om_simplify_options *opt, const char *break_pass,
			  om_step_fn fn, void *user, om_status *st);

/** The rewrite om_simplify_with_break asks for (passes/test_break.c): the
 *  first Conv, MatMul or Gemm of g with a float initializer weight reads a copy of it with 1
 *  added to the elements whose index has an odd number of 1 bits. OM_ERR_INVALID_INPUT
 *  when g has no such node. */
om_kind om_test_break(om_pass_ctx *c, om_graph *g, int *changes);

/** Sets the type of every value that has none to what shape inference finds (annotate.c);
 *  internal symbols become unknown dims. Best effort: only out of memory is an error. */
om_kind om_annotate_types(om_model *m, om_status *st);

#ifndef OM_VERIFY_PASSES
#define OM_VERIFY_PASSES 0 /* 1 in debug builds (meson.build): the ASan+UBSan suite */
#endif
/** Whether the IR verifier runs after every pass: when asked, and always in debug builds. */
static inline bool om_verify_wanted(const om_simplify_options *opt)
{
	return opt->verify || OM_VERIFY_PASSES;
}

/** Checks the IR invariants of g and its subgraphs (passes/verify.c). */
om_kind om_verify_graph(const om_graph *g, om_status *st);

/* ---- side table (passes/infer.c) --------------------------------------------------------- */

/** The entry of v (outer references resolved), or NULL when inference knows nothing. */
om_vinfo *om_vinfo_get(om_pass_ctx *c, const om_graph *g, om_value *v);
/** The entry of v, created empty (type unknown, no pv) when missing. NULL: out of memory. */
om_vinfo *om_vinfo_make(om_pass_ctx *c, const om_value *v);
/** A fresh internal symbol for an unknown dim. */
const char *om_fresh_symbol(om_pass_ctx *c);
/** A fresh internal value symbol ("?vN") for an unknown plan-time element. */
const char *om_fresh_value_symbol(om_pass_ctx *c);
/** True when the symbol is one of inference's own (never written to a model). */
static inline bool om_symbol_internal(const char *s) { return s && s[0] == '?'; }

/* ---- the per-node rewrite driver (passes/rewrite_each.c) -------------------------------- */

/** True when n is an ai.onnx node (domain "" or "ai.onnx"). */
static inline bool om_node_default_domain(const om_node *n)
{
	return !n->domain[0] || !strcmp(n->domain, "ai.onnx");
}

/** A rewrite rooted at node n: rewrites the graph around n and sets *done, or leaves it as it
 *  was with *done false. */
typedef om_kind (*om_node_rewrite_fn)(om_pass_ctx *c, om_graph *g, om_node *n, bool *done);
/**
 * The driver of the fusion passes: calls fn on every live node of g whose row's opcode is in
 * `codes` (a set of OM_OPC_BIT; 0: every default-domain node), in order, with uses counted
 * before the first call and kept exact after every rewrite; adds the rewrites to *changes,
 * then compacts g. The first error of fn is returned at once.
 *
 * The counts are kept from what each rewrite touched, not recounted over the graph: fn calls
 * om_rewrite_touch(c, n) before it changes an input of an existing node n or marks it dead
 * (om_bypass_node, om_uses_replace, om_node_become and om_node_kill do), and nodes it appends
 * are counted when it returns. Debug builds (OM_VERIFY_PASSES) recount after every rewrite
 * and fail with OM_ERR_INTERNAL when the kept counts differ.
 */
om_kind om_rewrite_each(om_pass_ctx *c, om_graph *g, uint64_t codes, om_node_rewrite_fn fn,
			int *changes);
/** Inside om_rewrite_each (on n's graph): n's uses leave the counts until the rewrite ends,
 *  when they come back from its inputs then (none if it is dead). Call it before changing an
 *  input of n or marking n dead. Elsewhere it does nothing. */
void om_rewrite_touch(om_pass_ctx *c, om_node *n);

/* ---- graph edits (passes/rewrite.c) ------------------------------------------------------ */

/** True when some subgraph of a live node of g refers to v by name (an outer reference;
 *  outer_refs.c: the names are gathered once per graph and kept in c). */
bool om_value_used_by_subgraph(om_pass_ctx *c, const om_graph *g, const om_value *v);
typedef struct om_outer_refs om_outer_refs;
/** Frees what om_value_used_by_subgraph kept (om_pass_ctx_close calls it). */
void om_outer_refs_free(om_outer_refs *o);
/** Drops c's set of referred names: the pass drivers call it before each pass. */
static inline void om_outer_refs_reset(om_pass_ctx *c)
{
	om_outer_refs_free(c->outer);
	c->outer = NULL;
}
/**
 * Makes node n (outputs out[0]) disappear by forwarding its output to `src`. When out[0] is a
 * graph output, the graph output keeps its name: src's producer is made to write out[0]
 * instead. Returns false (nothing changed) when that is not possible.
 */
bool om_bypass_node(om_pass_ctx *c, om_graph *g, om_node *n, om_value *src);
/** Turns v into an initializer of g holding t (copied into the arena). Drops its producer
 *  link; the caller marks the producer dead when all its outputs are constants. */
om_kind om_make_constant(om_pass_ctx *c, om_graph *g, om_value *v, const om_tensor *t);
/** Turns single-output node n into a Constant node holding t (copied): for a graph output,
 *  whose name must stay produced by a node. */
om_kind om_node_to_constant(om_graph *g, om_node *n, const om_tensor *t, om_status *st);
/** v stops being an initializer (its payload is given back when m is not shared:
 *  om_model_drop_payload); om_compact_initializers then takes it off its graph's list. */
void om_drop_initializer(om_model *m, om_value *v);
/** Takes the values that are no longer initializers off g's list; returns how many. */
int32_t om_compact_initializers(om_graph *g);
/** A new initializer value named after hint, holding t (copied). NULL when out of memory. */
om_value *om_new_constant(om_pass_ctx *c, om_graph *g, const char *hint, const om_tensor *t);

/** The domain of ONNX Runtime's contrib ops. */
#define OM_MS_DOMAIN "com.microsoft"
/** Node n becomes op (in domain) reading in[0..nin), with no attributes; its outputs stay
 *  (n passed to om_rewrite_touch first). */
om_kind om_node_become(om_pass_ctx *c, om_graph *g, om_node *n, const char *domain,
		       const char *op, int32_t nin, om_value *const *in, om_status *st);
/** Marks n dead and unlinks it from its outputs (n passed to om_rewrite_touch first). */
void om_node_kill(om_pass_ctx *c, om_node *n);
/** Imports the domain (version 1) into the model when it is not imported yet. */
om_kind om_import_domain(om_model *m, const char *domain, om_status *st);
/** Folds node `fused` (which reads conv's output) into conv: w and b become new initializers
 *  and the Conv's inputs 1 and 2 (adding input 2; w NULL keeps the weight), then `fused` is
 *  bypassed and its readers read the Conv's output. *done tells whether the bypass happened;
 *  nothing changes when a new weight over 4 KiB would replace one other nodes read too (it
 *  would be duplicated). */
om_kind om_fuse_into_conv(om_pass_ctx *c, om_graph *g, om_node *conv, const om_tensor *w,
			  const om_tensor *b, om_node *fused, bool *done);


/** Whether m's main graph has an ai.onnx.preview.training Gradient node. */
bool om_model_has_gradient(const om_model *m);
/** Replaces every Gradient node of m's main graph that a graph output depends on by the
 *  backward nodes of its forward computation (lower_gradient.c); OM_ERR_UNSUPPORTED naming
 *  the op when a node on its path has no derivative rule (m is then partly rewritten). */
om_kind om_lower_gradients(om_model *m, om_status *st);
/** The values m's Gradient nodes name (y, xs, zs) that are not graph outputs become extra
 *  graph outputs while the passes run (*held of them, appended); om_gradient_release removes
 *  them. */
om_kind om_gradient_hold(om_model *m, int32_t *held, om_status *st);
void om_gradient_release(om_model *m, int32_t held);

#endif
