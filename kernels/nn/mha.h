/* mha.h — the attention core of com.microsoft MultiHeadAttention, Attention and QAttention
 * (ONNX Runtime's AttentionCPUBase): the plan the rows read their nodes into (ops_mha.c,
 * ops_attention_ms.c) and om_mha_run, which computes it (mha_core.c). */
#ifndef OM_MHA_H
#define OM_MHA_H

#include <stdbool.h>
#include <stdint.h>

#include "op.h"

/* where the rows of query, key, value or a past live: element (b, s, h, d) of type dt at
 * data + (b * sb + s * ss + h * sh + d) * dt's size; bias: NULL or the values of type dt added
 * to head h's element d at bias[h * D + d] (in float, as ONNX Runtime 1.30 adds them) */
typedef struct mha_src {
	const char *data;
	int32_t dt;
	int64_t sb, ss, sh;
	const char *bias;
} mha_src;

/* the masks (ONNX Runtime's PrepareMask): none, 1-D end positions (B, or the first B of
 * 3B + 2), end and start positions (2B), raw 0/1 masks (B, T) and (B, S, T) */
enum mha_mask { MHA_MASK_NONE, MHA_MASK_END, MHA_MASK_END_START, MHA_MASK_2D, MHA_MASK_3D };

typedef struct mha_plan {
	int64_t B, N, S, L, P, T;   /* batch, heads, queries, new keys, past keys, T = P + L */
	int64_t Dk, Dv;             /* head sizes of query/key and value */
	int32_t dt;                 /* the outputs': float, float16 or bfloat16 */
	size_t es;
	bool exact, causal;         /* causal: key j hidden from query s when j > P + s */
	float scale, filter;        /* scale of QK', mask_filter_value */
	mha_src q, k, v, pk, pv;    /* pk.data NULL: no past */
	int mask;                   /* enum mha_mask */
	const int32_t *mask_data;
	const char *bias;           /* attention_bias [B or 1, N or 1, S, T], or NULL */
	int64_t bias_b, bias_h;     /* its strides over batch and head (0: broadcast) */
} mha_plan;

/* outputs: y [B, S, N * Dv]; present key [B, N, T, Dk] and value [B, N, T, Dv], NULL: none */
typedef struct mha_out {
	char *y, *pk, *pv;
} mha_out;

/* the form of key_padding_mask / mask_index m (int32) for a plan whose B, S and T are set:
 * MHA_MASK_*, or -1 when none fits */
int om_mha_mask_kind(const mha_plan *p, const om_tensor *m);
/* attention_bias ab ([B or 1, N or 1, S, T] of the plan's type) into p's bias fields; false,
 * p unchanged, when its type or shape is not that */
bool om_mha_attention_bias(mha_plan *p, const om_tensor *ab);
/* computes the plan over (batch, head) pairs on c's threads */
om_kind om_mha_run(om_ctx *c, const mha_plan *p, const mha_out *o);

#endif
