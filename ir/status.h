/* status.h — the IR's status helpers: om_error, the internal kind OM_NEED_VALUE, and the rule
 * that a public entry point accepts a NULL status. */
#ifndef OM_STATUS_H
#define OM_STATUS_H

#include "omopt.h"

struct om_node;
/** Fills st (may be NULL) and returns kind. `n` may be NULL. printf-style message. */
om_kind om_error(om_status *st, om_kind kind, const struct om_node *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Not an error: an op row's infer needs the value of an input that is known only at run time
 * (ops/op.h), so the node is shaped again when it runs. The planner, the passes' inference and
 * the evaluator consume it; no public function returns it (the session's entry points turn a
 * stray one into OM_ERR_INTERNAL). Its number is outside om_kind's public ones.
 */
#define OM_NEED_VALUE ((om_kind)0x100)
_Static_assert(OM_NEED_VALUE > OM_ERR_INTERNAL, "OM_NEED_VALUE outside the public kinds");

/** rc as a public entry point returns it: OM_NEED_VALUE becomes OM_ERR_INTERNAL (st filled). */
om_kind om_public_kind(om_status *st, om_kind rc);

/*
 * Every public entry point accepts st == NULL (include/omopt.h): it then works on a status of
 * its own, so that nothing below it has to test st. Its first statement is
 *     st = OM_STATUS_OR_LOCAL(st);
 * (the compound literal lives until the function returns).
 */
#define OM_STATUS_OR_LOCAL(st) ((st) ? (st) : &(om_status){.kind = OM_OK})

#endif /* OM_STATUS_H */
