/* conv_winograd.c — Winograd F(m x m, 3 x 3) Conv, m = 2 or 4: the input is cut into
 * overlapping (m + 2)^2 tiles, each transformed (B^T d B); every one of the (m + 2)^2
 * transformed positions is then a GEMM over channels, U (Mg x Cg) x V (Cg x tiles), through
 * om_sgemm; the inverse transform (A^T M A) gives m x m outputs per tile, written with the
 * epilogue (bias, Z, activation). The weight transform U = G g G^T is computed once per step
 * (kept in the kernel state when W is a constant). The transforms run on L tiles at a time,
 * one tile per vector lane. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "clones.h"
#include "conv_winograd.h"
#include "gemm.h"
#include "parallel.h"

enum { L = 8 };                  /* tiles per lane group */
enum { BLOCK_FLOATS = 1 << 20 }; /* V + M floats per block of tiles (4 MiB) */

/* The transforms are written for any tile and instantiated per tile size (constant extents
 * unroll), each for AVX2 and for the baseline instruction set (picked at load time). */
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define MULTI_ISA OM_CLONES_AVX2

/* ---- 1-D transforms ------------------------------------------------------------------------
 * n lanes, run as vectors (callers pass constants). A^T: element k of lane l at
 * d[k * ds + l * dl], result k at r[k * rs + l * rl]. */

/* B^T: the six inputs of lane l at d0[l] .. d5[l], result k at r[k * rs + l] */
ALWAYS_INLINE void bt4(int n, const float *restrict d0, const float *restrict d1,
		       const float *restrict d2, const float *restrict d3, const float *restrict d4,
		       const float *restrict d5, float *restrict r, int rs)
{
	for (int l = 0; l < n; l++) {
		const float a0 = d0[l], a1 = d1[l], a2 = d2[l], a3 = d3[l], a4 = d4[l], a5 = d5[l];
		r[l] = 4 * a0 - 5 * a2 + a4;
		r[rs + l] = (a3 + a4) - 4 * (a1 + a2);
		r[2 * rs + l] = (a4 - a3) + 4 * (a1 - a2);
		r[3 * rs + l] = (a4 - a2) + 2 * (a3 - a1);
		r[4 * rs + l] = (a4 - a2) - 2 * (a3 - a1);
		r[5 * rs + l] = 4 * a1 - 5 * a3 + a5;
	}
}

ALWAYS_INLINE void at4(int n, const float *restrict d, int ds, int dl, float *restrict r, int rs,
		       int rl)
{
	for (int l = 0; l < n; l++) {
		const float *p = d + l * dl;
		const float s12 = p[ds] + p[2 * ds], d12 = p[ds] - p[2 * ds];
		const float s34 = p[3 * ds] + p[4 * ds], d34 = p[3 * ds] - p[4 * ds];
		float *q = r + l * rl;
		q[0] = p[0] + s12 + s34;
		q[rs] = d12 + 2 * d34;
		q[2 * rs] = s12 + 4 * s34;
		q[3 * rs] = d12 + 8 * d34 + p[5 * ds];
	}
}

ALWAYS_INLINE void bt2(int n, const float *restrict d0, const float *restrict d1,
		       const float *restrict d2, const float *restrict d3, float *restrict r,
		       int rs)
{
	for (int l = 0; l < n; l++) {
		const float a0 = d0[l], a1 = d1[l], a2 = d2[l], a3 = d3[l];
		r[l] = a0 - a2;
		r[rs + l] = a1 + a2;
		r[2 * rs + l] = a2 - a1;
		r[3 * rs + l] = a1 - a3;
	}
}

ALWAYS_INLINE void at2(int n, const float *restrict d, int ds, int dl, float *restrict r, int rs,
		       int rl)
{
	for (int l = 0; l < n; l++) {
		const float *p = d + l * dl;
		float *q = r + l * rl;
		q[0] = p[0] + p[ds] + p[2 * ds];
		q[rs] = p[ds] - p[2 * ds] - p[3 * ds];
	}
}

/* G (a x 3) in double: U = G g G^T */
static const double G4[6][3] = {
	{1.0 / 4, 0, 0},
	{-1.0 / 6, -1.0 / 6, -1.0 / 6},
	{-1.0 / 6, 1.0 / 6, -1.0 / 6},
	{1.0 / 24, 1.0 / 12, 1.0 / 6},
	{1.0 / 24, -1.0 / 12, 1.0 / 6},
	{0, 0, 1},
};
static const double G2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};

/* ---- geometry ----------------------------------------------------------------------------- */

typedef struct wino {
	int m, a;                  /* output tile, input tile (m + 2) */
	int64_t N, C, M, group, Cg, Mg;
	int64_t H, W, OH, OW, pt, pl;
	int64_t th, tw, T;         /* tiles per column, per row, in all (N images) */
} wino;

/* Measured per layer (bench notes in docs/ops.md, single thread, AVX2 OpenBLAS): below 8
 * input channels per group the transforms cost more than the products save; F(4x4) wins once
 * an image has more than 16 of its tiles (a 14 x 14 output is a tie), F(2x2) below that down to
 * 2 x 2 outputs (7 x 7: 10-40% faster than im2col). */
int om_winograd_tile(const om_spatial *sp, int64_t Cg, int64_t Mg)
{
	if (sp->n != 2 || Cg < 8 || Mg < 1)
		return 0;
	for (int i = 0; i < 2; i++)
		if (sp->k[i] != 3 || sp->stride[i] != 1 || sp->dil[i] != 1)
			return 0;
	const int64_t OH = sp->out[0], OW = sp->out[1];
	if (((OH + 3) / 4) * ((OW + 3) / 4) > 16)
		return 4;
	return OH >= 2 && OW >= 2 ? 2 : 0;
}

/* ---- the weight transform ------------------------------------------------------------------ */

/* The state block: what it was derived from, then U [group][a*a][Mg][Cg]. */
typedef struct wino_state {
	int64_t key[15];
	int64_t nu; /* floats in u */
	float u[];
} wino_state;

static void weight_transform(const wino *g, const float *w, float *u)
{
	const int a = g->a;
	const double(*G)[3] = g->m == 4 ? G4 : G2;
	for (int64_t gi = 0; gi < g->group; gi++)
		for (int64_t m = 0; m < g->Mg; m++)
			for (int64_t c = 0; c < g->Cg; c++) {
				const float *k = w + ((gi * g->Mg + m) * g->Cg + c) * 9;
				double t[6][3], r[6][6];
				for (int i = 0; i < a; i++)
					for (int j = 0; j < 3; j++)
						t[i][j] = G[i][0] * k[j] + G[i][1] * k[3 + j] +
							  G[i][2] * k[6 + j];
				for (int i = 0; i < a; i++)
					for (int j = 0; j < a; j++)
						r[i][j] = t[i][0] * G[j][0] + t[i][1] * G[j][1] +
							  t[i][2] * G[j][2];
				float *ug = u + gi * a * a * g->Mg * g->Cg + m * g->Cg + c;
				for (int i = 0; i < a; i++)
					for (int j = 0; j < a; j++)
						ug[(i * a + j) * g->Mg * g->Cg] = (float)r[i][j];
			}
}

/* Large blocks on 2 MiB boundaries, asking for huge pages: the products stream U from memory in
 * every run, and prefetching stops at every 4 KiB page boundary otherwise. free() frees them. */
static void *big_alloc(size_t n)
{
	enum { HUGE = 2 << 20 };
	void *p = NULL;
	if (n < HUGE)
		return malloc(n);
	if (posix_memalign(&p, HUGE, n))
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, (n + HUGE - 1) / HUGE * HUGE, MADV_HUGEPAGE);
#endif
	return p;
}

/* U from the state when it was derived from this geometry, else computed (into the state when
 * W is a constant, else into *tmp, om_ctx_scratch's: the caller gives it back). NULL with c's
 * error set when there is no memory. */
static const float *weights(om_ctx *c, const wino *g, const float *w, float **tmp)
{
	const int64_t key[15] = {0x57494e4f, g->m, g->M, g->Cg, g->group};
	int64_t nu = g->a * g->a * g->M * g->Cg;
	bool keep = c->state && (c->const_in & 2);
	/* a block with a release function is another path's (conv_dnnl.c) */
	wino_state *s = keep && !(c->state_release && *c->state_release) ? *c->state : NULL;
	if (s && s->nu == nu && !memcmp(s->key, key, sizeof key))
		return s->u;
	if (keep) {
		om_ctx_state_reset(c);
		*c->state = s = big_alloc(sizeof *s + sizeof(float) * (size_t)nu);
		if (!s) {
			om_error(c->st, OM_ERR_NOMEM, c->node, "Winograd weights");
			return NULL;
		}
		memcpy(s->key, key, sizeof key);
		s->nu = nu;
		weight_transform(g, w, s->u);
		return s->u;
	}
	if (om_ctx_scratch(c, sizeof(float) * (size_t)nu, "Winograd weights", (void **)tmp))
		return NULL;
	weight_transform(g, w, *tmp);
	return *tmp;
}

/* ---- input and output transforms of a block of tiles -------------------------------------- */

/* Where tile t (of all images) starts: image, top row, left column in the padded output grid. */
static void tile_pos(const wino *g, int64_t t, int64_t *n, int64_t *oy, int64_t *ox)
{
	int64_t per = g->th * g->tw;
	*n = t / per;
	t %= per;
	*oy = t / g->tw * g->m;
	*ox = t % g->tw * g->m;
}

/* The next group of tiles from tile t of a block ending at tile `end`: up to L tiles of one
 * tile row (image n, tile row ti, tiles tj ..). */
static int group_at(const wino *g, int64_t t, int64_t end, int64_t *n, int64_t *oy, int64_t *ox)
{
	tile_pos(g, t, n, oy, ox);
	int64_t nl = g->tw - *ox / g->m;
	if (nl > end - t)
		nl = end - t;
	return nl < L ? (int)nl : L;
}

/* A group's rows are read as m phases of LP columns (column m * l + q is phase q, entry l):
 * tile l's element e is then entry l + e / m of phase e % m, so every step runs on whole
 * vectors of lanes. WIDE: columns read per row (m * LP, m <= 4). */
enum { LP = L + 1, WIDE = 4 * LP };

/* V [a*a][Cg][nt] for tiles t0 .. t0 + nt - 1 of group gi, channels [c0, c1) of the group (each
 * writes its own rows of V). Per group of tiles and channel:
 * the a input rows under it (read in place, or copied with the padding as zeros) split into
 * phases, the vertical transform along them, then the horizontal one. */
ALWAYS_INLINE void input_transform(const wino *g, const int a, const float *x, int64_t gi,
				   int64_t t0, int64_t nt, int64_t c0, int64_t c1, float *v)
{
	const int m = a - 2, wide = m * LP;
	static const float zeros[WIDE];
	const int64_t HW = g->H * g->W;
	/* channel by channel, each sweeping the block's tiles: V's rows fill in order */
	for (int64_t c = c0; c < c1; c++)
		for (int64_t t = t0; t < t0 + nt;) {
			int64_t n, oy, ox;
			const int nl = group_at(g, t, t0 + nt, &n, &oy, &ox);
			const int64_t iy = oy - g->pt, ix = ox - g->pl;
			const bool inside = ix >= 0 && ix + wide <= g->W;
			/* columns [j0, j1) of the row lie in the image */
			const int64_t j0 = ix >= 0 ? 0 : -ix < wide ? -ix : wide;
			const int64_t j1 = g->W - ix < wide ? g->W - ix : wide;
			float *vt = v + (t - t0);
			const float *src = x + (n * g->C + gi * g->Cg + c) * HW;
			const float *rows[6];
			float buf[6][WIDE], ph[6][WIDE], tv[6][WIDE], r[36 * L];
			for (int i = 0; i < a; i++) {
				const int64_t yy = iy + i;
				if (yy < 0 || yy >= g->H) {
					rows[i] = zeros;
				} else if (inside) {
					rows[i] = src + yy * g->W + ix;
				} else {
					const float *sr = src + yy * g->W + ix;
					for (int64_t j = 0; j < j0; j++)
						buf[i][j] = 0.0f;
					for (int64_t j = j0; j < j1; j++)
						buf[i][j] = sr[j];
					for (int64_t j = j1 > j0 ? j1 : j0; j < wide; j++)
						buf[i][j] = 0.0f;
					rows[i] = buf[i];
				}
			}
			for (int i = 0; i < a; i++) {
				const float *restrict ri = rows[i];
				float *restrict pi = ph[i];
				for (int l = 0; l < LP; l++)
					for (int q = 0; q < m; q++)
						pi[q * LP + l] = ri[m * l + q];
			}
			/* vertical */
			if (a == 6)
				bt4(wide, ph[0], ph[1], ph[2], ph[3], ph[4], ph[5], tv[0], WIDE);
			else
				bt2(wide, ph[0], ph[1], ph[2], ph[3], tv[0], WIDE);
			/* horizontal: element e of tile l at tv[k][(e % m) * LP + l + e / m] */
			for (int k = 0; k < a; k++) {
				const float *p = tv[k];
				if (a == 6)
					bt4(L, p, p + LP, p + 2 * LP, p + 3 * LP, p + 1, p + LP + 1,
					    r + k * a * L, L);
				else
					bt2(L, p, p + LP, p + 1, p + LP + 1, r + k * a * L, L);
			}
			float *vc = vt + c * nt;
			if (t - t0 + L <= nt) /* lanes past nl: the next group rewrites them */
				for (int k = 0; k < a * a; k++)
					memcpy(vc + k * g->Cg * nt, r + k * L, sizeof(float) * L);
			else
				for (int k = 0; k < a * a; k++)
					for (int l = 0; l < nl; l++)
						vc[k * g->Cg * nt + l] = r[k * L + l];
			t += nl;
		}
}

MULTI_ISA static void input_transform4(const wino *g, const float *x, int64_t gi, int64_t t0,
				       int64_t nt, int64_t c0, int64_t c1, float *v)
{
	input_transform(g, 6, x, gi, t0, nt, c0, c1, v);
}

MULTI_ISA static void input_transform2(const wino *g, const float *x, int64_t gi, int64_t t0,
				       int64_t nt, int64_t c0, int64_t c1, float *v)
{
	input_transform(g, 4, x, gi, t0, nt, c0, c1, v);
}

/* y[0..n) = act((o + b) + z) (as om_conv_epi_row computes it), hb, hz, relu constants */
ALWAYS_INLINE void store_loop(const float *restrict o, float *restrict y, const float *restrict z,
			      float b, int64_t n, bool hb, bool hz, bool relu)
{
	for (int64_t p = 0; p < n; p++) {
		float v = o[p];
		if (hb)
			v = v + b;
		if (hz)
			v = v + z[p];
		if (relu)
			v = v < 0 ? 0.0f : v;
		y[p] = v;
	}
}

/* One output row stored with the epilogue in the same pass (none, Relu: inline; the other
 * activations through om_conv_epi_row). off: y's offset in Y. */
ALWAYS_INLINE void store_row(const om_conv_epi *e, int64_t ch, int64_t off, const float *o,
			     float *y, int64_t n)
{
	const bool hb = e->bias != NULL, hz = e->z != NULL;
	const float b = hb ? e->bias[ch] : 0.0f;
	const float *z = hz ? e->z + off : NULL;
	if (e->act == OM_ACT_RELU) {
		if (hb && hz)
			store_loop(o, y, z, b, n, true, true, true);
		else if (hb)
			store_loop(o, y, z, b, n, true, false, true);
		else if (hz)
			store_loop(o, y, z, b, n, false, true, true);
		else
			store_loop(o, y, z, b, n, false, false, true);
	} else if (e->act == OM_ACT_NONE) {
		if (hb && hz)
			store_loop(o, y, z, b, n, true, true, false);
		else if (hb)
			store_loop(o, y, z, b, n, true, false, false);
		else if (hz)
			store_loop(o, y, z, b, n, false, true, false);
		else
			store_loop(o, y, z, b, n, false, false, false);
	} else {
		memcpy(y, o, sizeof(float) * (size_t)n);
		om_conv_epi_row(e, ch, off, y, n);
	}
}

/* Y's tiles t0 .. t0 + nt - 1 of group gi from Mt [a*a][Mg][nt], output channels [m0, m1) of
 * the group (each writes its own outputs): per group of tiles and channel, the vertical transform per tile, the horizontal one into m output rows of the
 * group (lane stride m), each row stored and given the epilogue while in cache. */
ALWAYS_INLINE void output_transform(const wino *g, const int a, const float *mt, int64_t gi,
				    int64_t t0, int64_t nt, int64_t m0, int64_t m1,
				    const om_conv_epi *e, float *y)
{
	const int m = a - 2;
	const int64_t OHW = g->OH * g->OW;
	/* channel by channel, each sweeping the block's tiles: Mt's rows are read in order */
	for (int64_t mm = m0; mm < m1; mm++)
		for (int64_t t = t0; t < t0 + nt;) {
			int64_t n, oy, ox;
			const int nl = group_at(g, t, t0 + nt, &n, &oy, &ox);
			int64_t cols = g->OW - ox < m * nl ? g->OW - ox : m * nl;
			float d[36 * L], tv[24 * L], o[4][4 * L];
			const float *src = mt + mm * nt + (t - t0);
			/* lanes past nl read what follows (L floats of slack end the buffer): they
			 * reach no output */
			for (int k = 0; k < a * a; k++)
				memcpy(d + k * L, src + k * g->Mg * nt, sizeof(float) * L);
			for (int j = 0; j < a; j++) {
				if (a == 6)
					at4(L, d + j * L, a * L, 1, tv + j * L, a * L, 1);
				else
					at2(L, d + j * L, a * L, 1, tv + j * L, a * L, 1);
			}
			for (int i = 0; i < m; i++) {
				float op[4 * L]; /* output j of lane l at op[j * L + l] */
				if (a == 6)
					at4(L, tv + i * a * L, L, 1, op, L, 1);
				else
					at2(L, tv + i * a * L, L, 1, op, L, 1);
				for (int l = 0; l < L; l++)
					for (int j = 0; j < m; j++)
						o[i][m * l + j] = op[j * L + l];
			}
			const int64_t ch = gi * g->Mg + mm;
			for (int i = 0; i < m && oy + i < g->OH; i++) {
				const int64_t off = (n * g->M + ch) * OHW + (oy + i) * g->OW + ox;
				store_row(e, ch, off, o[i], y + off, cols);
			}
			t += nl;
		}
}

MULTI_ISA static void output_transform4(const wino *g, const float *mt, int64_t gi, int64_t t0,
					int64_t nt, int64_t m0, int64_t m1, const om_conv_epi *e,
					float *y)
{
	output_transform(g, 6, mt, gi, t0, nt, m0, m1, e, y);
}

MULTI_ISA static void output_transform2(const wino *g, const float *mt, int64_t gi, int64_t t0,
					int64_t nt, int64_t m0, int64_t m1, const om_conv_epi *e,
					float *y)
{
	output_transform(g, 4, mt, gi, t0, nt, m0, m1, e, y);
}

/* One block's transforms over the run's threads, by channel (om_par_for's pieces); the
 * products between them run on oneDNN's threads as before */
typedef struct wino_job {
	const wino *g;
	int64_t gi, t0, nt;
	const float *x, *mt;
	float *v, *y;
	const om_conv_epi *e;
} wino_job;

static void input_piece(void *arg, int64_t c0, int64_t c1)
{
	const wino_job *j = arg;
	if (j->g->m == 4)
		input_transform4(j->g, j->x, j->gi, j->t0, j->nt, c0, c1, j->v);
	else
		input_transform2(j->g, j->x, j->gi, j->t0, j->nt, c0, c1, j->v);
}

static void output_piece(void *arg, int64_t m0, int64_t m1)
{
	const wino_job *j = arg;
	if (j->g->m == 4)
		output_transform4(j->g, j->mt, j->gi, j->t0, j->nt, m0, m1, j->e, j->y);
	else
		output_transform2(j->g, j->mt, j->gi, j->t0, j->nt, m0, m1, j->e, j->y);
}

/* transformed values (a * a per tile) worth a thread */
enum { TRANSFORM_GRAIN = 1 << 16 };

/* ---- the conv ------------------------------------------------------------------------------ */

void om_conv_warm(const float *p, int64_t n)
{
	float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	for (int64_t i = 0; i + 64 <= n; i += 64) {
		s0 += p[i];
		s1 += p[i + 16];
		s2 += p[i + 32];
		s3 += p[i + 48];
	}
	volatile float sink = s0 + s1 + s2 + s3;
	(void)sink;
}

/* Mt [a*a][Mg][nt] = U [a*a][Mg][Cg] x V [a*a][Cg][nt]: a * a products, each U block warmed
 * first (resnet18: 25.4 -> 23.4 ms a run; OpenBLAS then runs U as its B operand (packed by its
 * oncopy) faster than as A through V^T U^T, which was 10-15% faster with cold weights at few
 * tiles). At more than one thread the products go over the pool whole, each on one thread:
 * a block's products are mostly under the 3e6 multiply-adds at which om_sgemm splits one, so
 * they had run on one thread (Zen 3, resnet18's stages 1-2 at two threads: 1.30 ms a conv
 * against 1.43 at one thread). */
typedef struct prod_job {
	const wino *g;
	const float *u, *v;
	int64_t nt;
	float *mt;
} prod_job;

static void product_piece(void *arg, int64_t k0, int64_t k1)
{
	const prod_job *j = arg;
	const int64_t Mg = j->g->Mg, Cg = j->g->Cg, nt = j->nt;
	for (int64_t k = k0; k < k1; k++) {
		const float *uk = j->u + k * Mg * Cg, *vk = j->v + k * Cg * nt;
		if (Mg * Cg >= OM_WARM_FLOATS)
			om_conv_warm(uk, Mg * Cg);
		om_sgemm(0, false, false, Mg, nt, Cg, 1, uk, Cg, vk, nt, 0, j->mt + k * Mg * nt,
			 nt);
	}
}

static void products(int threads, const wino *g, const float *u, const float *v, int64_t nt,
		     float *mt)
{
	prod_job j = {g, u, v, nt, mt};
	om_par_for(threads, g->a * g->a, 1, product_piece, &j);
}

om_kind om_conv_winograd(om_ctx *c, int tile, const om_spatial *sp, int64_t N, int64_t C,
			 int64_t M, int64_t group, const float *x, const float *w,
			 const om_conv_epi *e, float *y)
{
	wino g = {.m = tile, .a = tile + 2, .N = N, .C = C, .M = M, .group = group,
		  .Cg = C / group, .Mg = M / group, .H = sp->in[0], .W = sp->in[1],
		  .OH = sp->out[0], .OW = sp->out[1], .pt = sp->pb[0], .pl = sp->pb[1]};
	g.th = (g.OH + g.m - 1) / g.m;
	g.tw = (g.OW + g.m - 1) / g.m;
	g.T = N * g.th * g.tw;
	const int64_t aa = g.a * g.a;
	/* tiles per block: V and M of a block in BLOCK_FLOATS, at least 2 lane groups */
	int64_t tb = BLOCK_FLOATS / (aa * (g.Cg + g.Mg)) / L * L;
	if (tb < 2 * L)
		tb = 2 * L;
	if (tb > g.T)
		tb = g.T;
	float *tmp = NULL, *v = NULL;
	const float *u = weights(c, &g, w, &tmp);
	if (!u)
		return c->st->kind;
	om_kind rc = om_ctx_scratch(c, sizeof(float) * (size_t)(aa * (g.Cg + g.Mg) * tb + L),
				    "Winograd buffers", (void **)&v);
	if (rc) {
		om_ctx_scratch_done(c, tmp);
		return rc;
	}
	float *mt = v + aa * g.Cg * tb;
	memset(mt + aa * g.Mg * tb, 0, sizeof(float) * L);
	for (int64_t gi = 0; gi < group; gi++) {
		const float *ug = u + gi * aa * g.Mg * g.Cg;
		for (int64_t t0 = 0; t0 < g.T; t0 += tb) {
			const int64_t nt = g.T - t0 < tb ? g.T - t0 : tb;
			wino_job j = {&g, gi, t0, nt, x, mt, v, y, e};
			const int64_t grain = TRANSFORM_GRAIN / (nt * aa) + 1; /* channels */
			om_par_for(c->threads, g.Cg, grain, input_piece, &j);
			products(c->threads, &g, ug, v, nt, mt);
			om_par_for(c->threads, g.Mg, grain, output_piece, &j);
		}
	}
	om_ctx_scratch_done(c, v);
	om_ctx_scratch_done(c, tmp);
	return OM_OK;
}
