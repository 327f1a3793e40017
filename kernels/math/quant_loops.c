/* quant_loops.c — QuantizeLinear/DequantizeLinear's one-pass loops and DynamicQuantizeLinear's
 * range and quantize passes (quant_loops.h): each output element computed alone in float with
 * IEEE division and rint (every clone gives the same bytes as the general path of
 * ops_quant.c). */
#include <math.h>
#include <string.h>

#include "clones.h"
#include "omopt.h"
#include "parallel.h"
#include "quant_loops.h"

/* the least elements worth a thread: a streaming loop's split of 50,000 floats took 8 us on
 * a Zen 5 VM at 2 threads against 4.3 on one (the other core's cache lines, the wake-up), of
 * 200,000 23 against 29 (as elementwise ops, ew.h); mobilenet_v3_small's QDQ model at 2
 * threads, its 84 DequantizeLinear: 0.34 -> 0.18 ms a run (16384 before) */
enum { QL_GRAIN = 65536 };

/* y[i] = saturate(rint(x[i] / s) + z) for one output type T in [lo, hi] */
#define QL_QUANT(NAME, T, LO, HI) \
	OM_CLONES static void NAME(const float *x, int64_t n, float s, float z, T *y) \
	{ \
		for (int64_t i = 0; i < n; i++) { \
			const float q = rintf(x[i] / s) + z; \
			y[i] = (T)(q != q ? 0 : q < (LO) ? (LO) : q > (HI) ? (HI) : q); \
		} \
	}
QL_QUANT(ql_q_i8, int8_t, -128.0f, 127.0f)
QL_QUANT(ql_q_u8, uint8_t, 0.0f, 255.0f)

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define QL_AVX2 1
/* ql_q_i8 / ql_q_u8 (sgn: int8) on AVX2 by hand, the same bytes: 32 floats divided, rounded in
 * the current mode (rintf's), z added, a NaN made 0, clamped, then packed to bytes (the
 * compiler's clones spilled and blended: shufflenet_v2_qdq's 47 QuantizeLinear nodes, one
 * thread on a Zen 3, 2.3 -> 0.8 ms; the model 12.3 -> 9.3 ms a run) */
__attribute__((target("avx2"))) static void ql_q8_avx2(const float *x, int64_t n, float s,
							 float z, bool sgn, uint8_t *y)
{
	const __m256 sv = _mm256_set1_ps(s), zv = _mm256_set1_ps(z);
	const __m256 lo = _mm256_set1_ps(sgn ? -128.0f : 0.0f);
	const __m256 hi = _mm256_set1_ps(sgn ? 127.0f : 255.0f);
	const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
	int64_t i = 0;
	for (; i + 32 <= n; i += 32) {
		__m256i q[4];
		for (int k = 0; k < 4; k++) {
			__m256 v = _mm256_div_ps(_mm256_loadu_ps(x + i + 8 * k), sv);
			v = _mm256_add_ps(_mm256_round_ps(v, _MM_FROUND_CUR_DIRECTION), zv);
			v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));
			q[k] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
		}
		const __m256i a = _mm256_packs_epi32(q[0], q[1]), b = _mm256_packs_epi32(q[2], q[3]);
		const __m256i p = sgn ? _mm256_packs_epi16(a, b) : _mm256_packus_epi16(a, b);
		_mm256_storeu_si256((__m256i *)(y + i), _mm256_permutevar8x32_epi32(p, order));
	}
	if (sgn)
		ql_q_i8(x + i, n - i, s, z, (int8_t *)y + i);
	else
		ql_q_u8(x + i, n - i, s, z, y + i);
}
#endif
QL_QUANT(ql_q_i16, int16_t, -32768.0f, 32767.0f)
QL_QUANT(ql_q_u16, uint16_t, 0.0f, 65535.0f)

/* y[i] = ((float)x[i] - z) * s for one input type T */
#define QL_DEQUANT(NAME, T) \
	OM_CLONES static void NAME(const T *x, int64_t n, float s, float z, float *y) \
	{ \
		for (int64_t i = 0; i < n; i++) \
			y[i] = ((float)x[i] - z) * s; \
	}
QL_DEQUANT(ql_d_i8, int8_t)
QL_DEQUANT(ql_d_u8, uint8_t)
QL_DEQUANT(ql_d_i32, int32_t)

bool om_qloop_has(int32_t qdt, bool quantize)
{
	if (quantize)
		return qdt == OM_INT8 || qdt == OM_UINT8 || qdt == OM_INT16 || qdt == OM_UINT16;
	return qdt == OM_INT8 || qdt == OM_UINT8 || qdt == OM_INT32;
}

/* elements [i, i + k) with parameter p */
static void ql_span(const om_qloop *q, int64_t i, int64_t k, int64_t p)
{
	const float s = q->sc[p], z = q->zp ? q->zp[p] : 0;
	if (q->quantize) {
		const float *x = (const float *)q->x + i;
#ifdef QL_AVX2
		if ((q->qdt == OM_INT8 || q->qdt == OM_UINT8) && __builtin_cpu_supports("avx2")) {
			ql_q8_avx2(x, k, s, z, q->qdt == OM_INT8, (uint8_t *)q->y + i);
			return;
		}
#endif
		switch (q->qdt) {
		case OM_INT8: ql_q_i8(x, k, s, z, (int8_t *)q->y + i); break;
		case OM_UINT8: ql_q_u8(x, k, s, z, (uint8_t *)q->y + i); break;
		case OM_INT16: ql_q_i16(x, k, s, z, (int16_t *)q->y + i); break;
		default: ql_q_u16(x, k, s, z, (uint16_t *)q->y + i); break;
		}
		return;
	}
	float *y = (float *)q->y + i;
	switch (q->qdt) {
	case OM_INT8: ql_d_i8((const int8_t *)q->x + i, k, s, z, y); break;
	case OM_UINT8: ql_d_u8((const uint8_t *)q->x + i, k, s, z, y); break;
	default: ql_d_i32((const int32_t *)q->x + i, k, s, z, y); break;
	}
}

/* elements [lo, hi): the runs they cross, each with its parameter */
static void ql_piece(void *arg, int64_t lo, int64_t hi)
{
	const om_qloop *q = arg;
	while (lo < hi) {
		const int64_t r = lo / q->inner, end = (r + 1) * q->inner;
		const int64_t k = (end < hi ? end : hi) - lo;
		ql_span(q, lo, k, r % q->A);
		lo += k;
	}
}

void om_qloop_run(const om_qloop *q, int threads)
{
	if (q->n > 0 && q->inner > 0)
		om_par_for(threads, q->n, QL_GRAIN, ql_piece, (void *)q);
}

/* ---- DynamicQuantizeLinear ---------------------------------------------------------------- */

/* 16 float lanes and their comparison masks (GCC vector extensions: one AVX-512 register,
 * two AVX2 ones, scalar code in the baseline clone) */
typedef float dq_v8 __attribute__((vector_size(32)));
typedef int32_t dq_m8 __attribute__((vector_size(32)));

/* lanes of x where m is set, else of y (a macro: a function returning dq_v8 would change
 * the baseline clone's ABI) */
#define DQ_PICK(m, x, y) ((dq_v8)(((dq_m8)(x) & (m)) | ((dq_m8)(y) & ~(m))))

/* min(0, x) and max(0, x) over x's numbers (NaN skipped), 32 lanes at a time: each lane keeps
 * a value only when strictly below (above) its own, as the sequential scan, so that the
 * result is the same value (+0 stays over -0 in both) on every clone and every split. Lanes
 * of 8 (ymm: AVX2's clone keeps them in registers; 16-lane vectors there became scalar code,
 * 2.4 ns a float) */
OM_CLONES static void dq_range(const float *v, int64_t n, float *lo, float *hi)
{
	dq_v8 l[4] = {{0}}, h[4] = {{0}}; /* 4 chains: no wait on one another */
	int64_t i = 0;
	for (; i + 32 <= n; i += 32)
		for (int k = 0; k < 4; k++) {
			dq_v8 x;
			memcpy(&x, v + i + 8 * k, sizeof x);
			l[k] = DQ_PICK(x < l[k], x, l[k]);
			h[k] = DQ_PICK(x > h[k], x, h[k]);
		}
	float a = 0, b = 0;
	for (int k = 0; k < 4; k++)
		for (int j = 0; j < 8; j++) {
			a = l[k][j] < a ? l[k][j] : a;
			b = h[k][j] > b ? h[k][j] : b;
		}
	for (; i < n; i++) {
		a = v[i] < a ? v[i] : a;
		b = v[i] > b ? v[i] : b;
	}
	*lo = a, *hi = b;
}

/* the range in at most DQ_PIECES pieces, each its own minimum and maximum */
enum { DQ_PIECES = 64 };
typedef struct dq_ranges {
	const float *x;
	int64_t n, step;
	float lo[DQ_PIECES], hi[DQ_PIECES];
} dq_ranges;

static void dq_range_piece(void *arg, int64_t lo, int64_t hi)
{
	dq_ranges *r = arg;
	for (int64_t k = lo; k < hi; k++) {
		const int64_t a = k * r->step, e = r->n - a < r->step ? r->n - a : r->step;
		dq_range(r->x + a, e, &r->lo[k], &r->hi[k]);
	}
}

void om_dynq_params(const float *x, int64_t n, int threads, float *scale, uint8_t *zp)
{
	dq_ranges r = {.x = x, .n = n < 0 ? 0 : n};
	int64_t pieces = threads > 1 ? r.n / QL_GRAIN : 1;
	pieces = pieces < 1 ? 1 : pieces > threads ? threads : pieces;
	pieces = pieces > DQ_PIECES ? DQ_PIECES : pieces;
	r.step = (r.n + pieces - 1) / pieces;
	if (pieces > 1)
		om_par_for(threads, pieces, 1, dq_range_piece, &r);
	else
		dq_range(x, r.n, &r.lo[0], &r.hi[0]);
	float lo = 0, hi = 0;
	for (int64_t k = 0; k < pieces; k++) {
		lo = r.lo[k] < lo ? r.lo[k] : lo;
		hi = r.hi[k] > hi ? r.hi[k] : hi;
	}
	const float s = (hi - lo) / 255.0f;
	float z = 0;
	if (s > 0 && isfinite(s)) {
		z = rintf(0 - lo / s);
		z = z < 0 ? 0 : z > 255 ? 255 : z;
	}
	*scale = s, *zp = (uint8_t)z;
}

typedef struct dq_job {
	const float *x;
	float scale, zp;
	uint8_t *y;
} dq_job;

static void dq_quant_piece(void *arg, int64_t lo, int64_t hi)
{
	const dq_job *j = arg;
	ql_q_u8(j->x + lo, hi - lo, j->scale, j->zp, j->y + lo);
}

void om_dynq_quantize(const float *x, int64_t n, float scale, uint8_t zp, uint8_t *y,
		      int threads)
{
	if (n <= 0)
		return;
	if (!(scale > 0 && isfinite(scale))) {
		memset(y, 0, (size_t)n);
		return;
	}
	dq_job j = {x, scale, zp, y};
	om_par_for(threads, n, QL_GRAIN, dq_quant_piece, &j);
}
