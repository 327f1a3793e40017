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

#include "conv_winograd.h"
#include "gemm.h"

enum { L = 8 };                  /* tiles per lane group */
enum { BLOCK_FLOATS = 1 << 19 }; /* V + M floats per block of tiles (2 MiB) */

/* ---- 1-D transforms: k-th element of a row at p[k * s], L lanes each ---------------------- */

static inline void bt4(const float *restrict d, int64_t ds, float *restrict r, int64_t rs)
{
	for (int l = 0; l < L; l++) {
		const float d0 = d[l], d1 = d[ds + l], d2 = d[2 * ds + l], d3 = d[3 * ds + l];
		const float d4 = d[4 * ds + l], d5 = d[5 * ds + l];
		r[l] = 4 * d0 - 5 * d2 + d4;
		r[rs + l] = (d3 + d4) - 4 * (d1 + d2);
		r[2 * rs + l] = (d4 - d3) + 4 * (d1 - d2);
		r[3 * rs + l] = (d4 - d2) + 2 * (d3 - d1);
		r[4 * rs + l] = (d4 - d2) - 2 * (d3 - d1);
		r[5 * rs + l] = 4 * d1 - 5 * d3 + d5;
	}
}

static inline void at4(const float *restrict d, int64_t ds, float *restrict r, int64_t rs)
{
	for (int l = 0; l < L; l++) {
		const float s12 = d[ds + l] + d[2 * ds + l], d12 = d[ds + l] - d[2 * ds + l];
		const float s34 = d[3 * ds + l] + d[4 * ds + l];
		const float d34 = d[3 * ds + l] - d[4 * ds + l];
		r[l] = d[l] + s12 + s34;
		r[rs + l] = d12 + 2 * d34;
		r[2 * rs + l] = s12 + 4 * s34;
		r[3 * rs + l] = d12 + 8 * d34 + d[5 * ds + l];
	}
}

static inline void bt2(const float *restrict d, int64_t ds, float *restrict r, int64_t rs)
{
	for (int l = 0; l < L; l++) {
		const float d0 = d[l], d1 = d[ds + l], d2 = d[2 * ds + l], d3 = d[3 * ds + l];
		r[l] = d0 - d2;
		r[rs + l] = d1 + d2;
		r[2 * rs + l] = d2 - d1;
		r[3 * rs + l] = d1 - d3;
	}
}

static inline void at2(const float *restrict d, int64_t ds, float *restrict r, int64_t rs)
{
	for (int l = 0; l < L; l++) {
		r[l] = d[l] + d[ds + l] + d[2 * ds + l];
		r[rs + l] = d[ds + l] - d[2 * ds + l] - d[3 * ds + l];
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

int om_winograd_tile(const om_spatial *sp, int64_t Cg, int64_t Mg)
{
	if (sp->n != 2 || Cg < 1 || Mg < 1)
		return 0;
	for (int i = 0; i < 2; i++)
		if (sp->k[i] != 3 || sp->stride[i] != 1 || sp->dil[i] != 1)
			return 0;
	int64_t t4 = ((sp->out[0] + 3) / 4) * ((sp->out[1] + 3) / 4);
	if (t4 >= 9)
		return 4;
	return 0;
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

/* U from the state when it was derived from this geometry, else computed (into the state when
 * W is a constant, else into *tmp, which the caller frees). */
static const float *weights(om_ctx *c, const wino *g, const float *w, float **tmp)
{
	const int64_t key[15] = {0x57494e4f, g->m, g->M, g->Cg, g->group};
	int64_t nu = g->a * g->a * g->M * g->Cg;
	bool keep = c->state && (c->const_in & 2);
	wino_state *s = keep ? *c->state : NULL;
	if (s && s->nu == nu && !memcmp(s->key, key, sizeof key))
		return s->u;
	if (keep) {
		free(*c->state);
		*c->state = s = malloc(sizeof *s + sizeof(float) * (size_t)nu);
		if (!s)
			return NULL;
		memcpy(s->key, key, sizeof key);
		s->nu = nu;
		weight_transform(g, w, s->u);
		return s->u;
	}
	if (!(*tmp = malloc(sizeof(float) * (size_t)nu)))
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

/* V [a*a][Cg][nt] for tiles t0 .. t0 + nt - 1 of group gi. */
static void input_transform(const wino *g, const float *x, int64_t gi, int64_t t0, int64_t nt,
			    float *v)
{
	const int a = g->a;
	const int64_t HW = g->H * g->W;
	for (int64_t l0 = 0; l0 < nt; l0 += L) {
		int64_t base[L], iy[L], ix[L];
		bool inner[L];
		const int nl = nt - l0 < L ? (int)(nt - l0) : L;
		for (int l = 0; l < L; l++) {
			int64_t n = 0, oy = 0, ox = 0;
			if (l < nl)
				tile_pos(g, t0 + l0 + l, &n, &oy, &ox);
			iy[l] = oy - g->pt;
			ix[l] = ox - g->pl;
			base[l] = (n * g->C + gi * g->Cg) * HW;
			inner[l] = l < nl && iy[l] >= 0 && iy[l] + a <= g->H && ix[l] >= 0 &&
				   ix[l] + a <= g->W;
		}
		for (int64_t c = 0; c < g->Cg; c++) {
			float d[36 * L], t[36 * L], r[36 * L];
			for (int l = 0; l < L; l++) {
				const float *src = x + base[l] + c * HW;
				if (inner[l]) {
					const float *p = src + iy[l] * g->W + ix[l];
					for (int i = 0; i < a; i++)
						for (int j = 0; j < a; j++)
							d[(i * a + j) * L + l] = p[i * g->W + j];
					continue;
				}
				for (int i = 0; i < a; i++)
					for (int j = 0; j < a; j++) {
						int64_t yy = iy[l] + i, xx = ix[l] + j;
						d[(i * a + j) * L + l] =
							l < nl && yy >= 0 && yy < g->H && xx >= 0 &&
									xx < g->W
								? src[yy * g->W + xx]
								: 0.0f;
					}
			}
			/* columns, then rows */
			for (int j = 0; j < a; j++) {
				if (a == 6)
					bt4(d + j * L, a * L, t + j * L, a * L);
				else
					bt2(d + j * L, a * L, t + j * L, a * L);
			}
			for (int i = 0; i < a; i++) {
				if (a == 6)
					bt4(t + i * a * L, L, r + i * a * L, L);
				else
					bt2(t + i * a * L, L, r + i * a * L, L);
			}
			for (int k = 0; k < a * a; k++)
				memcpy(v + (k * g->Cg + c) * nt + l0, r + k * L,
				       sizeof(float) * (size_t)nl);
		}
	}
}

/* Y's tiles t0 .. t0 + nt - 1 of group gi from Mt [a*a][Mg][nt], with the epilogue. */
static void output_transform(const wino *g, const float *mt, int64_t gi, int64_t t0,
			     int64_t nt, const om_conv_epi *e, float *y)
{
	const int a = g->a, m = g->m;
	const int64_t OHW = g->OH * g->OW;
	for (int64_t l0 = 0; l0 < nt; l0 += L) {
		int64_t n[L], oy[L], ox[L];
		const int nl = nt - l0 < L ? (int)(nt - l0) : L;
		for (int l = 0; l < nl; l++)
			tile_pos(g, t0 + l0 + l, &n[l], &oy[l], &ox[l]);
		for (int64_t mm = 0; mm < g->Mg; mm++) {
			float d[36 * L], t[24 * L], r[16 * L];
			for (int k = 0; k < a * a; k++) {
				const float *src = mt + (k * g->Mg + mm) * nt + l0;
				memcpy(d + k * L, src, sizeof(float) * (size_t)nl);
				for (int l = nl; l < L; l++)
					d[k * L + l] = 0;
			}
			for (int j = 0; j < a; j++) {
				if (a == 6)
					at4(d + j * L, a * L, t + j * L, a * L);
				else
					at2(d + j * L, a * L, t + j * L, a * L);
			}
			for (int i = 0; i < m; i++) {
				if (a == 6)
					at4(t + i * a * L, L, r + i * m * L, L);
				else
					at2(t + i * a * L, L, r + i * m * L, L);
			}
			const int64_t ch = gi * g->Mg + mm;
			const float b = e->bias ? e->bias[ch] : 0.0f;
			for (int l = 0; l < nl; l++) {
				const int64_t off =
					(n[l] * g->M + ch) * OHW + oy[l] * g->OW + ox[l];
				const int64_t hi = g->OH - oy[l] < m ? g->OH - oy[l] : m;
				const int64_t wi = g->OW - ox[l] < m ? g->OW - ox[l] : m;
				for (int64_t i = 0; i < hi; i++)
					for (int64_t j = 0; j < wi; j++) {
						const int64_t o = off + i * g->OW + j;
						float v = r[(i * m + j) * L + l] + b;
						if (e->z)
							v += e->z[o];
						y[o] = om_conv_act(e, v);
					}
			}
		}
	}
}

/* ---- the conv ------------------------------------------------------------------------------ */

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
	float *tmp = NULL;
	const float *u = weights(c, &g, w, &tmp);
	float *v = u ? malloc(sizeof(float) * (size_t)(aa * (g.Cg + g.Mg) * tb)) : NULL;
	if (!v) {
		free(tmp);
		return om_error(c->st, OM_ERR_NOMEM, c->node, "Winograd buffers");
	}
	float *mt = v + aa * g.Cg * tb;
	for (int64_t gi = 0; gi < group; gi++) {
		const float *ug = u + gi * aa * g.Mg * g.Cg;
		for (int64_t t0 = 0; t0 < g.T; t0 += tb) {
			const int64_t nt = g.T - t0 < tb ? g.T - t0 : tb;
			input_transform(&g, x, gi, t0, nt, v);
			for (int64_t k = 0; k < aa; k++)
				om_sgemm(0, false, false, g.Mg, nt, g.Cg, 1, ug + k * g.Mg * g.Cg,
					 g.Cg, v + k * g.Cg * nt, nt, 0, mt + k * g.Mg * nt, nt);
			output_transform(&g, mt, gi, t0, nt, e, y);
		}
	}
	free(v);
	free(tmp);
	return OM_OK;
}
