/* reshape_literal.h — the one rule for writing a Reshape target as a literal (reshape_literal.c),
 * used by fold_shape_chains (targets from plan-time values) and the view-chain collapse
 * (targets from inferred extents). */
#ifndef OM_RESHAPE_LITERAL_H
#define OM_RESHAPE_LITERAL_H

#include "pass.h"

/**
 * The literal Reshape target for entries e[0..k) (numbers, symbols, or unknown) applied to an
 * input typed x, into lit[0..k): a number stays; a symbol that is x's extent at the same
 * position becomes 0 (copy, only without allowzero); the one entry left becomes -1, only when
 * no other entry is -1 or may be 0, so that -1 resolves for every value of every symbol, 0
 * included. False when there is no such literal (two entries left, or one beside a possible 0).
 */
bool om_reshape_literal(const om_vinfo *x, bool allowzero, int32_t k, const om_pe *e,
			int64_t *lit);

#endif
