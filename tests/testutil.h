/* testutil.h — shared helpers for the cmocka tests. */
#ifndef OM_TESTUTIL_H
#define OM_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"

/** $OMOPT_SHARED (../shared) when it exists, else NULL: tests needing it call skip(). */
const char *tu_shared_dir(void);
/** Joins a path under the source tree ($OMOPT_SOURCE) into a static buffer. */
const char *tu_source_path(const char *rel);

/** Makes a fresh folder /tmp/<prefix>XXXXXX into buf; 0 on success (cmocka setup style). */
int tu_tmpdir_make(char *buf, size_t size, const char *prefix);
/** Removes the folder and everything in it; 0 on success. */
int tu_tmpdir_remove(const char *dir);
/** "dir/name" in a static buffer, one of four in turn (so that up to four are in use at once). */
const char *tu_join(const char *dir, const char *name);
/** Runs `omopt ARGS` (the built one, $OMOPT_BUILD/tools/omopt) inside folder dir; returns its
 *  exit code, with its standard output and error in out and err (NUL-terminated). */
int tu_run_omopt(const char *dir, const char *args, char *out, size_t nout, char *err,
		 size_t nerr);
/** An empty model (IR version 8) whose main graph imports the default domain at opset. */
om_model *tu_model(int64_t opset);
/* tu_model that also imports com.microsoft at version 1 (FusedConv, QuickGelu, ...) */
om_model *tu_model_ms(int64_t opset);
/** Appends v to a graph's value list (inputs, outputs, inits) in the model arena. */
void tu_push_value(om_graph *g, om_value ***list, int32_t *n, om_value *v);
/** A node `op` (named op) in g reading and writing the values named in ins/outs,
 *  comma-separated ("a,b"); an empty entry is an omitted optional one ("x,,z"). */
om_node *tu_graph_node(om_graph *g, const char *op, const char *ins, const char *outs);
/** Sets an ints attribute of k values. */
void tu_attr_ints(om_node *n, const char *name, int32_t k, const int64_t *v);
/** A session of m with default options; fails the test, printing the status, when creating
 *  it fails. */
om_session *tu_session_create(const om_model *m);
/** The value `name` of g (made when missing), typed as a tensor of elem with rank dims
 *  (-1: the symbol N). */
om_value *tu_typed_value(om_graph *g, const char *name, int32_t elem, int32_t rank,
			 const int64_t *dims);
/** m saved to a temporary file and loaded again: the loader's view of it (fails the test
 *  when either fails). */
om_model *tu_reload(const om_model *m);
/** n floats of v from seed: a fixed pseudo-random sequence uniform in [-scale, scale]. */
void tu_fill(float *v, int64_t n, uint32_t seed, float scale);
/** A float initializer `name` of g with rank dims, filled by tu_fill(seed, scale). */
om_value *tu_float_init(om_graph *g, const char *name, int32_t rank, const int64_t *dims,
			uint32_t seed, float scale);
struct om_session;
/** The steps of s's main graph absorbed into the steps producing their inputs (fast mode:
 *  runtime/plan_absorb.c). */
int tu_absorbed(const struct om_session *s);
/** The number of nodes of type op in g's node list (subgraphs not counted). */
int tu_count_op(const om_graph *g, const char *op);

#endif
