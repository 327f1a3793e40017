/* random.h — the key a random op's kernel draws its elements under (philox.h). */
#ifndef OM_RANDOM_H
#define OM_RANDOM_H

#include "op.h"
#include "philox.h"

/** The key of node c->node's draw: from its attribute `seed_attr` when the node has it (the
 *  same key in every run, session and mode), else a fresh one from the session
 *  (om_run_services.random_key: a stream per runner, never shared between threads), or, with no
 *  session (om_eval_node), from the clock and the stack's address. */
om_philox_key om_random_key(const om_ctx *c, const char *seed_attr);

/** Whether om_random_store writes elements of dtype: float16, bfloat16, float, double, the
 *  integer types and bool. */
bool om_random_store_type(int32_t dtype);
/** Element i of t set to v (rounded to nearest for the float types; an integer v for the
 *  others, bool: v != 0). */
void om_random_store(om_tensor *t, int64_t i, double v);

#endif
