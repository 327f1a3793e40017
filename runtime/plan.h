/*
 * plan.h — a session's plan of a graph (plan.c) and the session itself (session.c).
 *
 * A plan is the graph's nodes in topological order (steps) over slots, one per value: constants
 * (initializers, Constant outputs, nodes folded at plan time, Shape/Size of known shapes), fed
 * inputs, references to an enclosing graph's values, and node outputs. A slot's `meta` holds
 * the dtype and shape when plan-time inference settled them; a step whose shapes are not all
 * settled is dynamic and is inferred again in every run. Buffers come from the session's pool
 * when a step runs and go back when the last consumer of every value aliasing them has run.
 */
#ifndef OM_PLAN_H
#define OM_PLAN_H

#include <pthread.h>

#include "activation.h"
#include "pool.h"
#include "session.h"

enum { OM_ABSORBED_UP = 1, OM_ABSORBED_DOWN = 2 }; /* om_step.absorbed */

enum om_slot_kind { OM_SLOT_NODE = 0, OM_SLOT_CONST, OM_SLOT_INPUT, OM_SLOT_OUTER };

typedef struct om_slot {
	const om_value *v;
	om_tensor meta; /* dtype, rank, dims when known; data too for constants */
	uint8_t kind;   /* om_slot_kind */
	uint8_t known;  /* meta's shape holds in every run */
	uint8_t owned;  /* meta.data was allocated by the plan (folded constant) */
	int32_t uses;   /* reads per run: step inputs, subgraph references, graph outputs */
	int32_t up, from; /* OM_SLOT_OUTER: the value is slot `from` of the plan `up` levels up */
	int64_t chans;    /* channel-blocked (plan_layout.c): its logical channels; 0: plain */
} om_slot;

typedef struct om_step {
	const om_node *node;
	const om_op *op;
	int64_t opset;
	int32_t *in, *out; /* slot per node input/output, -1 when omitted */
	int32_t *implicit; /* slots this step's subgraphs read from this graph (liveness) */
	int32_t nimplicit;
	uint8_t folded, dead, dynamic, view, exact; /* dead: nothing reads its outputs */
	uint8_t deferred; /* a subgraph step whose plan-time inference failed (InvalidModel at run) */
	uint8_t absorbed; /* not run: the step producing its input applies it as its `post`
			     (OM_ABSORBED_UP), or its reader applies it as its `scale`
			     (OM_ABSORBED_DOWN) (plan_absorb.c) */
	om_act post;      /* the activation absorbed into this step (OM_OP_EPILOGUE rows), or none */
	int32_t scale;    /* OM_OP_IN_SCALE rows: the slot of in[0]'s factor (om_ctx.in_scale) from
			     an absorbed Mul, or -1 */
	int32_t sum;      /* OM_OP_SUM rows: the slot of the addend of an absorbed Add, given to
			     the kernel as input 3, or -1 */
	uint64_t blocked; /* positions whose values are channel-blocked (plan_layout.c: om_ctx) */
	int32_t prof; /* row in the session's profile table */
	int32_t ix;   /* the step's number in the session (runner.h: its om_step_state) */
	uint32_t give_back; /* bit i: in[i] is a constant in the model's file mapping that only
			       byte-move reads (OM_OP_UNALIGNED) of a few rows use: its pages
			       are released after the step (om_model_file_pages, plan.c) */
	om_choice plan_impl; /* the implementation its row's choose named at plan time (op.h),
				written only by om_plan_choose; name NULL: none */
} om_step;

typedef struct om_plan {
	const om_graph *g;
	struct om_plan *parent, *next;
	om_slot *slots;
	int32_t nslots, capslots;
	om_step *steps;
	int32_t nsteps;
	int32_t *inputs, *outputs; /* slots of the fed inputs and of the graph outputs, in order */
	int32_t ninputs, noutputs;
	int32_t nrequired; /* inputs[0..nrequired) must be fed; the rest (the main graph of an IR >= 4
			      model) are overridable initializers, their v->init the default */
	int32_t block; /* channels per block of the blocked values (plan_layout.c), 0: none */
	const om_value **hkeys; /* open-addressing map: value -> slot */
	int32_t *hvals;
	uint32_t hmask;
} om_plan;

/* A session: the plans (never changed once made) and what runs left for the caller to see.
 * Everything a run writes is in a runner (runner.h); `lock` guards the runner lists and what
 * runs merge into the session when they end (profile totals, the last run's record). */
struct om_session {
	const om_model *m;
	om_session_options opt;
	const om_op_table *extra;
	om_arena *arena; /* plans live here */
	om_plan *main, *plans;
	size_t mem_limit;  /* bytes a run's pool may hold (om_session_options.max_memory); 0: none */
	int32_t nsteps_all; /* steps of every plan (om_step.ix) */
	om_profile_row *prof; /* rows by op type (or node): totals over the finished runs */
	int32_t nprof, capprof;
	om_node_hook hook;
	void *hook_arg;
	pthread_mutex_t *lock; /* malloc'd: taken through a const session too */
	struct om_runner *idle, *runners; /* runners nobody uses; all of them */
	uint8_t *last_mode;     /* per om_step.ix: om_node_mode of the last finished run */
	const char **last_impl; /* per om_step.ix: the implementation it named then, or NULL */
};

/** Plans g (the main graph when parent is NULL) into a new plan linked into s->plans;
 *  subgraphs of its nodes are planned too. */
om_kind om_plan_graph(om_session *s, const om_graph *g, om_plan *parent, om_plan **out,
		      om_status *st);
/** The slot of value v in p, or -1. */
int32_t om_plan_slot(const om_plan *p, const om_value *v);
/** A new slot of p for value v (om_slot_kind), or -1 when p has no room. */
int32_t om_plan_add_slot(om_plan *p, const om_value *v, int kind);
/** The row of node n's step in the session's profile table, or -1 when out of memory. */
int32_t om_plan_profile_row(om_session *s, const om_node *n);
/** Fast mode: the float16/bfloat16 compute of the main graph planned in float32, Cast steps
 *  at its edges (plan_half.c); before the uses are counted. */
om_kind om_plan_widen(om_session *s, om_plan *p, om_status *st);
/** The plan-time shape of every slot of p (plan_probe.c; malloc'd, nslots entries, rank -1:
 *  unknown): the settled ones, and for steps shaped per run the probe's (the graph inputs'
 *  symbolic dims taken as representative numbers). NULL when out of memory. */
om_tensor *om_plan_probe(const om_plan *p);
/** om_plan_probe with a graph input's symbolic dims taken as `batch` in axis 0 and `side`
 *  elsewhere. */
om_tensor *om_plan_probe_with(const om_plan *p, int64_t batch, int64_t side);
/** Folds the activations that qualify into the steps producing their inputs (plan_absorb.c;
 *  fast mode only); t: om_plan_probe's shapes. */
om_kind om_plan_absorb(const om_session *s, om_plan *p, const om_tensor *t, om_status *st);
/** Folds the Muls by a factor per channel that qualify into the convolutions reading them
 *  (plan_absorb.c; fast mode only, after om_plan_layout); t: om_plan_probe's shapes. */
om_kind om_plan_absorb_scales(const om_session *s, om_plan *p, const om_tensor *t,
			      om_status *st);
/** Folds the Adds that qualify into the convolutions writing their addends, and the
 *  activations after them (plan_absorb.c; fast mode only, after om_plan_layout); t:
 *  om_plan_probe's shapes, t2 another probe's (om_plan_probe_with, other symbol values). */
om_kind om_plan_absorb_sums(const om_session *s, om_plan *p, const om_tensor *t,
			    const om_tensor *t2, om_status *st);
/** Keeps the values between the convolutions that qualify channel-blocked (plan_layout.c;
 *  fast mode only, after om_plan_absorb); t: om_plan_probe's shapes. */
om_kind om_plan_layout(const om_session *s, om_plan *p, const om_tensor *t, om_status *st);
/** Records in each step that has its shapes settled the implementation its kernel will run
 *  (plan_choose.c: the row's choose function, op.h); the last step of planning a graph. */
void om_plan_choose(om_session *s, om_plan *p);
/** Whether step sp of plan p may give back the file pages of its constant input j once its
 *  kernel has made a copy of its own (om_ctx_own_copy): j is a constant of at least 256 KiB in
 *  the model's file mapping that no other step reads whole and that is no graph output. */
bool om_plan_copied_gives_back(const om_session *s, const om_plan *p, const om_step *sp,
			       int32_t j);
/** The plan of graph g, or NULL. */
om_plan *om_plan_find(const om_session *s, const om_graph *g);
typedef struct om_infer_cache om_infer_cache;
/** Infers a dynamic step's outputs for this run, or takes them from *cache (made on first use)
 *  when the inputs have the shapes (and, when inference reads values, the bytes) of the cached
 *  run. */
om_kind om_infer_step(const om_plan *p, const om_step *sp, om_infer_cache **cache, om_ctx *c);
void om_infer_cache_free(om_infer_cache *ic);
/** Frees what plans own outside the arena (folded constants). */
void om_plan_release(om_plan *p);

struct om_frame;
struct om_runner;
/** Starts the time limit of a run on r (om_session_options.max_run_ms): run.c. */
void om_run_start_clock(struct om_runner *r);
/** Runs plan p once on runner r (run.c); parent is the frame of the enclosing graph's run (NULL
 *  for the main graph). out[i] receive malloc'd tensors. */
om_kind om_run_plan(struct om_runner *r, const om_plan *p, struct om_frame *parent,
		    const om_tensor *const *in, int nin, om_tensor *out, int nout, om_status *st);
/** Records the string elements of out[] that no input holds: the run owns them (run_strings.c). */
om_kind om_run_adopt_strings(struct om_runner *r, const om_node *n, const om_tensor *const *in,
			     int32_t nin, om_tensor *const *out, int32_t nout, om_status *st);
/** Frees the strings the run owns. */
void om_run_free_strings(struct om_runner *r);

#endif
