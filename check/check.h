/*
 * check.h — what the files of check/ share (not public; om_check, om_compare and om_bisect in
 * omopt.h are the interface): random inputs and the runs of the first model on them, tensor
 * differences, and copies of a model with more graph outputs.
 */
#ifndef OM_CHECK_H
#define OM_CHECK_H

#include "ir.h"

/* ---- random numbers (random.c): splitmix64, state in the caller ------------------------- */

typedef struct om_rng {
	uint64_t s;
} om_rng;

uint64_t om_rng_next(om_rng *r);
/** A stream of its own for (seed, a, b): the same arguments give the same numbers. */
om_rng om_rng_for(uint64_t seed, uint64_t a, uint64_t b);
/** Fills t (allocated: dtype and dims set) with random elements: float types standard normal,
 *  integers uniform in [0, int_hi), bool 0 or 1. OM_ERR_UNSUPPORTED for other types. */
om_kind om_random_fill(om_tensor *t, om_rng *r, int64_t int_hi, const char *name,
		       om_status *st);
/** Whether om_random_fill makes values of element type dtype. */
bool om_random_type(int32_t dtype);

/* ---- input sets and the first model's runs (inputs.c) ----------------------------------- */

/** Inputs by name; every tensor owned (om_tensor_free). */
typedef struct om_inset {
	int n;
	char **names;
	om_tensor *t;
} om_inset;

void om_inset_free(om_inset *s);

/** opt with its defaults filled in (runs >= 1, seed, rtol, atol). */
om_check_options om_check_defaults(const om_check_options *opt);

/**
 * Makes the inputs of run `run` for session s (om_check's rules, omopt.h) and runs s on them:
 * from attempt *attempt on (0: the plain kind of random inputs; odd: integers in [0, 2); 2, 3:
 * non-batch symbols 32 v; 4, 5: 256 + 64 (v - 1)), the next while s rejects the inputs. On success
 * *attempt is the one that worked, *in the inputs, *out the outputs (om_session_output_count
 * values: om_outputs_free), desc (ndesc bytes) the symbols' values ("batch=1 seq=2") and kind
 * (nkind bytes) how the random inputs were made ("" when every input was given).
 * Overridable initializers (om_session_overridable_count) the caller does not give keep their
 * defaults (they are not in *in), except in odd runs with `overrides`: random values of their
 * declared type and shape then (tensors of a declared rank and an element type
 * om_random_fill makes), or their defaults again when s rejects every attempt with them.
 */
om_kind om_reference_run(om_session *s, const om_check_options *opt, int run, bool overrides,
			 int *attempt, om_inset *in, om_tensor **out, char *desc, size_t ndesc,
			 char *kind, size_t nkind, om_status *st);

/** The number of runs om_check makes (opt with its defaults): one when every required input is
 *  given, else opt->runs; at least two when some overridable initializer takes random values
 *  (om_reference_run: run 0 at the defaults, run 1 overriding). */
int om_check_runs(const om_session *s, const om_check_options *opt);

/** Runs s on the inputs of `in` named as its inputs; *out as om_reference_run's. A required
 *  input of s missing from `in` is OM_ERR_INVALID_INPUT; an overridable initializer missing
 *  takes its default. */
om_kind om_run_named(om_session *s, const om_inset *in, om_tensor **out, om_status *st);

/** Appends run `run`'s description to buf (size bytes): its symbols' values (desc), and kind
 *  when it differs from last_kind. */
void om_describe_run(char *buf, size_t size, int run, const char *desc, const char *kind,
		     const char *last_kind);

/** Runs sb on `in` and compares its outputs, by name, with sa's outputs oa on the same inputs:
 *  diffs[i] (sa's output i; name and producers already set) takes the worse of what it held
 *  and this run. *failed when some output is over tolerance, missing or not computed;
 *  *failure receives sb's failing status when it holds none yet (kind OM_OK). Errors: out of
 *  memory only. */
om_kind om_check_outputs(om_session *sa, const om_tensor *oa, om_session *sb,
			 const om_inset *in, const om_check_options *opt, om_diff *diffs,
			 bool *failed, om_status *failure, om_status *st);
/** om_check, with the status of the first failure of `model` (creating its session or running
 *  it: the node it names) in *failure (kind OM_OK when it never failed); rep->error is that
 *  status formatted. */
om_kind om_check_status(const om_model *original, const om_model *model,
			const om_check_options *opt, om_check_report *rep, om_status *failure,
			om_status *st);

/** Frees n values of om_run_named / om_reference_run and the array. */
void om_outputs_free(om_tensor *out, int n);

/** om_status formatted into buf (om_status_format). */
void om_check_format_error(const om_status *st, char *buf, size_t size);

/* ---- differences (diff.c) --------------------------------------------------------------- */

/** Compares b against the reference a (omopt.h's definitions) into d's state, dtype, rank,
 *  dims and max_abs / max_rel / ref_max; name and producers are the caller's. A value that
 *  is not a tensor (a sequence, an optional) is OM_DIFF_SKIPPED. */
om_kind om_diff_values(const om_tensor *a, const om_tensor *b, double rtol, double atol,
		       om_diff *d, om_status *st);
/** Folds d into worst (the same value in another run): the larger differences, the worse
 *  state. */
void om_diff_merge(om_diff *worst, const om_diff *d);
/** d's producers: ref_node / ref_op in a's main graph, node / op in b's (by d->name). */
void om_diff_producers(om_diff *d, const om_model *a, const om_model *b);
/** Copies a name into a fixed field (cut when longer). */
void om_diff_name(char *dst, size_t size, const char *src);

/* ---- models with more outputs (expose.c) ------------------------------------------------ */

/** *out = a copy of m, topologically sorted, whose main graph's outputs also list every value
 *  in `names` (n names) that a node of m computes. */
om_kind om_model_expose(const om_model *m, const char *const *names, int n, om_model **out,
			om_status *st);

#endif
