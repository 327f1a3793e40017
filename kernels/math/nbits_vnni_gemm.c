/* nbits_vnni_gemm.c — MatMulNBits' prompt product (more than OM_NBITS_DECODE_ROWS rows of A)
 * at accuracy_level 4, 4-bit codes (8-bit: blocks of up to 512 codes, whose sums stay within
 * int32), in integers where the CPU has AVX512-VNNI. A is quantized
 * as the decoding's (nbits_vnni.c): per block of W's rows to 15 bits, each code split as
 * 128 hi + lo, both signed bytes. A panel of GP_NR columns of W is unpacked once into bytes,
 * four consecutive rows of a column in one int32 lane (k-step s: lane j holds codes 4s to
 * 4s + 3 of column j), then GP_MR rows of A at a time multiply it: each k-step broadcasts a
 * row's four lo bytes and four hi bytes and adds their products with every column's four
 * codes (vpdpbusd) into int32 sums, exact within a block. At each block's end the sums become
 * float: y += sa sb (lo + 128 hi) - sa sum(q) zp sb, the zero points' term from the row's code
 * sum (xs) and the panel's -zp sb. A's rounding, 2^-15 of a block's largest |a|, is the only
 * approximation, as when decoding. Without VNNI, on AVX2, nbits_pairs_gemm.c runs instead. */
#include <math.h>
#include <string.h>

#include "nbits.h"
#include "parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GP_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
#define GP_HAVE 1
/* acc += u8 x s8 (vpdpbusd) with the sum tied to its register: GCC 12's intrinsic copies the
 * sums between registers around each one in this loop (53 -> 46 ms on a [128, 1024] x
 * [1024, 32000] product, 1 thread) */
#define GP_DPBUSD(acc, u8, s8) __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u8), "v"(s8))
#else
#define GP_HAVE 0
#endif

enum {
	GP_NR = 32,     /* columns a panel: two registers of int32 lanes */
	GP_MR = 4,      /* rows of A a pass over the panel */
};

typedef struct gp_job {
	const om_nbits *p;
	int64_t steps;      /* k-steps (4 rows of W) a block */
	int64_t ks;         /* k-steps in all: kb * steps */
	const int32_t *qlo; /* A's lo bytes, four rows of W an int32 [M][ks] */
	const int32_t *qhi; /* and hi bytes */
	const float *sa;    /* A's block scales [M][kb] */
	const float *xs;    /* sa * sum(codes) a block [M][kb] */
	uint8_t *panels;    /* one panel (gp_panel_bytes) per slot */
	size_t panel_bytes;
} gp_job;

static size_t gp_a_bytes(const om_nbits *p)
{
	const size_t ks = (size_t)(p->kb * p->bs / 4);
	return (size_t)p->M * (2 * ks * sizeof(int32_t) + 2 * (size_t)p->kb * sizeof(float));
}

/* a panel: codes [ks][GP_NR][4] bytes, then sb and -zp sb [kb][GP_NR] floats */
static size_t gp_panel_bytes(const om_nbits *p)
{
	const size_t ks = (size_t)(p->kb * p->bs / 4);
	return (ks * GP_NR * 4 + 2 * (size_t)p->kb * GP_NR * sizeof(float) + 63) / 64 * 64;
}

size_t om_nbits_vnni_gemm_bytes(const om_nbits *p, int slots)
{
	if (!om_nbits_vnni_cpu())
		return om_nbits_pairs_gemm_bytes(p, slots);
	return gp_a_bytes(p) + 64 + (size_t)slots * gp_panel_bytes(p);
}

/* A quantized into the job's arrays; false when A holds an infinity or a NaN */
static bool gp_prepare(const om_nbits *p, gp_job *j, void *buf)
{
	const int64_t ks = j->ks;
	int32_t *qlo = buf, *qhi = qlo + p->M * ks;
	float *sa = (float *)(qhi + p->M * ks), *xs = sa + p->M * p->kb;
	for (int64_t m = 0; m < p->M; m++) {
		const float *a = p->a + m * p->K;
		int8_t *lo = (int8_t *)(qlo + m * ks), *hi = (int8_t *)(qhi + m * ks);
		memset(lo, 0, (size_t)ks * 4), memset(hi, 0, (size_t)ks * 4);
		for (int64_t b = 0; b < p->kb; b++) {
			const int64_t k0 = b * p->bs, k1 = k0 + p->bs < p->K ? k0 + p->bs : p->K;
			float inv, scale;
			if (!om_nb_q15_block(a, k0, k1, &inv, &scale))
				return false;
			int32_t sum = 0;
			for (int64_t k = k0; k < k1; k++) {
				int32_t c;
				if (!om_nb_q15_code(a[k], inv, &c, &lo[k], &hi[k]))
					return false;
				sum += c;
			}
			sa[m * p->kb + b] = scale;
			xs[m * p->kb + b] = scale * (float)sum;
		}
	}
	j->qlo = qlo, j->qhi = qhi, j->sa = sa, j->xs = xs;
	return true;
}

/* columns [n0, n0 + w) of W into panel t: codes, scales, -zp * scales (0 past w) */
static void gp_pack(const gp_job *j, int64_t n0, int64_t w, uint8_t *t)
{
	const om_nbits *p = j->p;
	const int64_t ks = j->ks, colbytes = p->kb * p->blob;
	uint32_t *codes = (uint32_t *)t;
	float *sb = (float *)(t + ks * GP_NR * 4), *zsb = sb + p->kb * GP_NR;
	for (int64_t c = 0; c < GP_NR; c++) {
		const uint8_t *col = p->b + (n0 + c) * colbytes;
		for (int64_t s = 0; s < ks; s++) {
			uint32_t v = 0;
			if (c < w && p->bits == 8) { /* codes 4s to 4s + 3: 4 bytes */
				v = (uint32_t)col[4 * s] | (uint32_t)col[4 * s + 1] << 8 |
				    (uint32_t)col[4 * s + 2] << 16 | (uint32_t)col[4 * s + 3] << 24;
			} else if (c < w) { /* the low then the high nibbles of 2 bytes */
				const uint32_t b0 = col[2 * s], b1 = col[2 * s + 1];
				v = (b0 & 15) | (b0 >> 4) << 8 | (b1 & 15) << 16 | (b1 >> 4) << 24;
			}
			codes[s * GP_NR + c] = v;
		}
		for (int64_t b = 0; b < p->kb; b++) {
			const float s = c < w ? p->scales[(n0 + c) * p->kb + b] : 0;
			sb[b * GP_NR + c] = s;
			zsb[b * GP_NR + c] = c < w ? -om_nbits_zero(p, n0 + c, b) * s : 0;
		}
	}
}

#if GP_HAVE
/* rows [r0, r0 + R) of A with panel t (columns [n0, n0 + w)) into Y: each block's sums added
 * to Y's rows (in memory: the registers hold the int32 sums) */
static inline __attribute__((always_inline)) GP_TARGET void
gp_rows(const gp_job *j, const uint8_t *t, int64_t n0, int64_t w, int64_t r0, const int R)
{
	const om_nbits *p = j->p;
	const int64_t ks = j->ks;
	const int32_t *codes = (const int32_t *)t;
	const float *sb = (const float *)(t + ks * GP_NR * 4), *zsb = sb + p->kb * GP_NR;
	const __mmask16 m0 = (__mmask16)(w >= 16 ? 0xffff : (1u << w) - 1);
	const __mmask16 m1 = (__mmask16)(w >= 32 ? 0xffff : w > 16 ? (1u << (w - 16)) - 1 : 0);
	__m512 y[GP_MR][2];
	for (int r = 0; r < R; r++)
		y[r][0] = y[r][1] = _mm512_setzero_ps();
	for (int64_t b = 0; b < p->kb; b++) {
		__m512i lo[GP_MR][2], hi[GP_MR][2];
		for (int r = 0; r < R; r++)
			lo[r][0] = lo[r][1] = hi[r][0] = hi[r][1] = _mm512_setzero_si512();
		const int32_t *c = codes + b * j->steps * GP_NR;
		const int32_t *al = j->qlo + r0 * ks + b * j->steps;
		const int32_t *ah = j->qhi + r0 * ks + b * j->steps;
		for (int64_t s = 0; s < j->steps; s++, c += GP_NR) {
			const __m512i w0 = _mm512_loadu_si512(c), w1 = _mm512_loadu_si512(c + 16);
			for (int r = 0; r < R; r++) {
				const __m512i l = _mm512_set1_epi32(al[r * ks + s]);
				const __m512i h = _mm512_set1_epi32(ah[r * ks + s]);
				GP_DPBUSD(lo[r][0], w0, l);
				GP_DPBUSD(lo[r][1], w1, l);
				GP_DPBUSD(hi[r][0], w0, h);
				GP_DPBUSD(hi[r][1], w1, h);
			}
		}
		const float *s0 = sb + b * GP_NR, *z0 = zsb + b * GP_NR;
		for (int r = 0; r < R; r++) {
			const __m512 sa = _mm512_set1_ps(j->sa[(r0 + r) * p->kb + b]);
			const __m512 xs = _mm512_set1_ps(j->xs[(r0 + r) * p->kb + b]);
			for (int h = 0; h < 2; h++) {
				const __m512i d =
					_mm512_add_epi32(lo[r][h], _mm512_slli_epi32(hi[r][h], 7));
				y[r][h] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d),
						    _mm512_mul_ps(sa, _mm512_loadu_ps(s0 + 16 * h)), y[r][h]);
				y[r][h] = _mm512_fmadd_ps(xs, _mm512_loadu_ps(z0 + 16 * h), y[r][h]);
			}
		}
	}
	for (int r = 0; r < R; r++) {
		float *out = p->y + (r0 + r) * p->N + n0;
		for (int h = 0; h < 2; h++) {
			const __mmask16 m = h ? m1 : m0;
			const __m512 v = p->bias ? _mm512_maskz_loadu_ps(m, p->bias + n0 + 16 * h)
						 : _mm512_setzero_ps();
			_mm512_mask_storeu_ps(out + 16 * h, m, _mm512_add_ps(y[r][h], v));
		}
	}
}

/* panels [lo, hi) of GP_NR columns: each packed once, then every row of A */
static GP_TARGET void gp_panels(void *arg, int64_t lo, int64_t hi, int slot)
{
	const gp_job *j = arg;
	const om_nbits *p = j->p;
	uint8_t *t = j->panels + (size_t)slot * j->panel_bytes;
	for (int64_t i = lo; i < hi; i++) {
		const int64_t n0 = i * GP_NR, w = p->N - n0 < GP_NR ? p->N - n0 : GP_NR;
		gp_pack(j, n0, w, t);
		int64_t r = 0;
		for (; r + GP_MR <= p->M; r += GP_MR)
			gp_rows(j, t, n0, w, r, GP_MR);
		switch (p->M - r) {
		case 1: gp_rows(j, t, n0, w, r, 1); break;
		case 2: gp_rows(j, t, n0, w, r, 2); break;
		case 3: gp_rows(j, t, n0, w, r, 3); break;
		default: break;
		}
	}
}
#endif

/* panels a piece of work: ~2^20 multiply-adds, at least one */
static int64_t gp_grain(const om_nbits *p)
{
	const int64_t per = p->M * p->K * GP_NR;
	return per >= (1 << 20) ? 1 : (1 << 20) / per;
}

int om_nbits_vnni_gemm_slots(const om_nbits *p, int threads)
{
	if (!om_nbits_vnni_cpu())
		return om_nbits_pairs_gemm_slots(p, threads);
	return om_par_slots(threads, (p->N + GP_NR - 1) / GP_NR, gp_grain(p));
}

bool om_nbits_vnni_gemm(const om_nbits *p, int threads, void *buf)
{
#if GP_HAVE
	if (!om_nbits_vnni_gemm_ok(p) || p->M < 1)
		return false;
	if (!om_nbits_vnni_cpu())
		return om_nbits_pairs_gemm(p, threads, buf);
	gp_job j = {.p = p, .steps = p->bs / 4, .ks = p->kb * p->bs / 4,
		    .panel_bytes = gp_panel_bytes(p)};
	if (!gp_prepare(p, &j, buf))
		return false;
	const uintptr_t at = ((uintptr_t)buf + gp_a_bytes(p) + 63) / 64 * 64;
	j.panels = (uint8_t *)at;
	om_par_for_slots(threads, (p->N + GP_NR - 1) / GP_NR, gp_grain(p), gp_panels, &j);
	return true;
#else
	(void)p, (void)threads, (void)buf;
	return false;
#endif
}
