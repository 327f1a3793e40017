/* half_types.h — which slots of an ai.onnx op admit float16 and bfloat16 at an opset (ONNX's
 * type constraints, ops/half_types.c written by scripts/gen_half_types.py): what the half
 * conversion (passes/half_convert.c) asks before it changes a node's types. */
#ifndef OM_HALF_TYPES_H
#define OM_HALF_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** One version of one op: bit i of a mask is slot i (63: slot 63 and every later one); a
 *  variadic slot sets its bit and every later one. */
typedef struct om_half_types {
	const char *op;
	int32_t since;
	uint64_t in_f16, out_f16;   /* slots whose type constraint lists tensor(float16) */
	uint64_t in_bf16, out_bf16; /* ... tensor(bfloat16) */
} om_half_types;

/** The generated table, sorted by op name (strcmp) then since. */
const om_half_types *om_half_types_rows(size_t *count);

/** The version of ai.onnx op `op` in force at `opset` (the highest since <= opset); NULL
 *  when ONNX has none (an op of another domain, or one newer than the opset). */
const om_half_types *om_half_types_find(const char *op, int64_t opset);

/** Whether slot i of a mask is set. */
static inline bool om_half_slot(uint64_t mask, int32_t i)
{
	return (mask >> (i < 63 ? i : 63)) & 1u;
}

#endif
