/* gqa.h — com.microsoft GroupQueryAttention's plan (ops_gqa.c reads the node into it) and the
 * work on one (batch, kv head) group (gqa_group.c). */
#ifndef OM_GQA_H
#define OM_GQA_H

#include <stdbool.h>
#include <stdint.h>

#include "op.h"

/* where one of query/key/value's heads live: element (b, s, head, d) of a [B, S, *] tensor at
 * data + ((b * S + s) * row + off + head * D + d) * element size */
typedef struct gqa_src {
	const char *data;
	int64_t row, off;
} gqa_src;

typedef struct gqa_plan {
	int64_t B, S, Hq, Hkv, G, D; /* G = Hq / Hkv query heads per kv head */
	int64_t P, total, Tp;        /* past rows, total_sequence_length, present rows */
	int32_t dt;
	size_t es;
	bool packed, first, causal, interleaved, exact;
	int64_t rd, crows;           /* rotary width (0: no rotary), the caches' rows */
	int64_t window;              /* local_window_size, or 0: none */
	int64_t qk_mode;             /* qk_output: 0 none, 1 scores, 2 probabilities */
	float scale, softcap;
	bool smooth;
	gqa_src q, k, v;
	const om_tensor *pk, *pv, *seqlens, *cs, *sn, *pos, *bias, *sink;
	int64_t bias_b, bias_h;      /* attention_bias strides over batch and head (0: broadcast) */
	/* the caches: of the plan's type, or quantized (k/v_quant_type, kv_cache_bit_width):
	 * int8 codes, or int4 codes two a byte (uint8, even element in the low nibble, + 8) */
	int32_t cdt;                 /* past and present key/value's type */
	int64_t qbits;               /* 0: not quantized, 8 or 4 */
	int64_t crow;                /* elements of cdt in one cache row (D, or (D + 1) / 2) */
	size_t crowb;                /* bytes of one cache row */
	const float *ksc, *vsc;      /* k_scale, v_scale (quantized caches) */
	int64_t sc_head;             /* scales per kv head: D (PER_CHANNEL) or 0 (PER_TENSOR) */
} gqa_plan;

/* where the group's results go */
typedef struct gqa_out {
	char *y, *pk, *pv, *qk; /* output, present key and value, output_qk (NULL: none) */
} gqa_out;

/* one worker's scratch for gqa_group (gqa_scratch_floats floats) */
int64_t gqa_scratch_floats(const gqa_plan *p, int64_t chunk);
/* query rows per pass: the group's scores of a pass stay within a few MB */
int64_t gqa_chunk(const gqa_plan *p);
/* the total length of batch b and the rows of the past it keeps (validated by the kernel) */
int64_t gqa_total(const gqa_plan *p, int64_t b);
int64_t gqa_past(const gqa_plan *p, int64_t b);
/* the rotary position of token s of batch b: past + s, or from position_ids */
int64_t gqa_position(const gqa_plan *p, int64_t b, int64_t s);
/* D floats x into one quantized cache row at `row` (scale: the kv head's first scale):
 * code = clamp(rint(x * (1 / scale)), -2^(bits-1), 2^(bits-1) - 1), a zero scale taken as 1,
 * as ONNX Runtime 1.30's CPU kernel quantizes (gqa_kvq.c) */
void gqa_kv_quantize(const gqa_plan *p, const float *scale, const float *x, void *row);
/* n quantized cache rows into n * D floats: code * scale */
void gqa_kv_dequantize(const gqa_plan *p, const float *scale, const void *rows, int64_t n,
		       float *x);
/* group i = b * Hkv + kv head: writes its present rows, then its query heads' outputs */
void gqa_group(const gqa_plan *p, const gqa_out *o, int64_t i, int64_t chunk, float *w);
/* every group over c's threads, from a checked plan: c->out[0] the output [B, S, Hq * D],
 * c->out[1] and [2] the present key and value (absent: scratch), c->out[3] the scores when
 * p->qk_mode; `what` names the scratch in a memory-limit error */
om_kind gqa_run(om_ctx *c, const gqa_plan *p, const char *what);

#endif
