/* ops_rnn.c — RNN, GRU and LSTM (float32; opsets 7 and 14 with `layout`), ONNX spec
 * "Operators.md" for each. The input projection of every time step is one GEMM; each step
 * then adds H(t-1) * R^T (one GEMM per step and direction) and applies the gates, each gate's
 * activation over a row of H (fast mode: num/fastmath.h's Sigmoid and Tanh). GEMMs go
 * through om_sgemm, so exact mode is the fixed-order loop. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detmath.h"
#include "f32_bridge.h"
#include "fastmath.h"
#include "gemm_packed.h"
#include "gemm.h"
#include "op.h"
#include "panels.h"
#include "parallel.h"

enum cell { CELL_RNN, CELL_GRU, CELL_LSTM };

static const int gates_of[] = {[CELL_RNN] = 1, [CELL_GRU] = 3, [CELL_LSTM] = 4};
static const int nact_of[] = {[CELL_RNN] = 1, [CELL_GRU] = 2, [CELL_LSTM] = 3};

/* ---- activation functions (the `activations` attribute) ---------------------------------- */

enum act { A_SIGMOID, A_TANH, A_RELU, A_AFFINE, A_LEAKY, A_THRESH, A_STANH, A_HSIG, A_ELU,
	   A_SOFTSIGN, A_SOFTPLUS };

typedef struct act_fn {
	enum act kind;
	float alpha, beta;
} act_fn;

static const struct {
	const char *name;
	enum act kind;
	int nalpha, nbeta; /* how many of activation_alpha / activation_beta it takes */
	float alpha, beta; /* defaults */
} act_table[] = {
	{"Sigmoid", A_SIGMOID, 0, 0, 0, 0},	{"Tanh", A_TANH, 0, 0, 0, 0},
	{"Relu", A_RELU, 0, 0, 0, 0},		{"Affine", A_AFFINE, 1, 1, 1.0f, 0.0f},
	{"LeakyRelu", A_LEAKY, 1, 0, 0.01f, 0}, {"ThresholdedRelu", A_THRESH, 1, 0, 1.0f, 0},
	{"ScaledTanh", A_STANH, 1, 1, 1.0f, 1.0f}, {"HardSigmoid", A_HSIG, 1, 1, 0.2f, 0.5f},
	{"Elu", A_ELU, 1, 0, 1.0f, 0},		{"Softsign", A_SOFTSIGN, 0, 0, 0, 0},
	{"Softplus", A_SOFTPLUS, 0, 0, 0, 0},
};

static inline float act(const act_fn *f, float x)
{
	switch (f->kind) {
	case A_SIGMOID: return om_det_sigmoidf(x);
	case A_TANH: return om_det_tanhf(x);
	case A_RELU: return x > 0 ? x : 0;
	case A_AFFINE: return f->alpha * x + f->beta;
	case A_LEAKY: return x >= 0 ? x : f->alpha * x;
	case A_THRESH: return x > f->alpha ? x : 0;
	case A_STANH: return f->alpha * om_det_tanhf(f->beta * x);
	case A_HSIG: return fmaxf(0.0f, fminf(1.0f, f->alpha * x + f->beta));
	case A_ELU: return x >= 0 ? x : f->alpha * (float)om_det_expm1(x);
	case A_SOFTSIGN: return x / (1.0f + fabsf(x));
	case A_SOFTPLUS:
		return (float)(x > 0 ? x + om_det_log1p(om_det_exp(-x))
				   : om_det_log1p(om_det_exp(x)));
	}
	return x;
}

/* ---- attributes and shapes --------------------------------------------------------------- */

typedef struct rnn {
	enum cell cell;
	int64_t seq, batch, input, hidden;
	int ndir, layout, gates;
	bool reverse_only, input_forget, linear_before_reset;
	float clip; /* 0: none */
	act_fn acts[2][3]; /* per direction: f, g, h */
} rnn;

static om_kind read_acts(om_ctx *c, rnn *r)
{
	const om_node *n = c->node;
	const om_attr *names = om_node_attr(n, "activations");
	int64_t na = 0, nb = 0;
	const float *alpha = om_attr_floats(n, "activation_alpha", &na);
	const float *beta = om_attr_floats(n, "activation_beta", &nb);
	const int per_dir = nact_of[r->cell];
	static const char *const dflt[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"},
					       {"Sigmoid", "Tanh", "Tanh"}};
	int64_t ia = 0, ib = 0;
	for (int d = 0; d < r->ndir; d++)
		for (int k = 0; k < per_dir; k++) {
			const int idx = d * per_dir + k;
			char name[32];
			if (names && names->type == OM_ATTR_STRINGS) {
				if (idx >= names->n)
					return om_error(c->st, OM_ERR_INVALID_MODEL, n,
							"activations lists %lld functions, %d needed",
							(long long)names->n, per_dir * r->ndir);
				const om_str s = names->strings[idx];
				snprintf(name, sizeof name, "%.*s", (int)(s.len < 31 ? s.len : 31),
					 s.ptr ? s.ptr : "");
			} else {
				snprintf(name, sizeof name, "%s", dflt[r->cell][k]);
			}
			size_t t = 0;
			while (t < sizeof act_table / sizeof act_table[0] &&
			       strcmp(act_table[t].name, name))
				t++;
			if (t == sizeof act_table / sizeof act_table[0])
				return om_error(c->st, OM_ERR_UNSUPPORTED, n,
						"activation function '%s'", name);
			act_fn *f = &r->acts[d][k];
			f->kind = act_table[t].kind;
			f->alpha = act_table[t].alpha;
			f->beta = act_table[t].beta;
			if (act_table[t].nalpha && ia < na)
				f->alpha = alpha[ia++];
			if (act_table[t].nbeta && ib < nb)
				f->beta = beta[ib++];
		}
	return OM_OK;
}

static bool has(const om_ctx *c, int i)
{
	return i < c->nin && c->in[i];
}

/* Reads attributes and checks every input's shape against X, W and hidden_size. */
static om_kind geometry(om_ctx *c, enum cell cell, rnn *r)
{
	const om_node *n = c->node;
	memset(r, 0, sizeof *r);
	r->cell = cell;
	r->gates = gates_of[cell];
	const char *dir = om_attr_string(n, "direction", "forward");
	r->ndir = !strcmp(dir, "bidirectional") ? 2 : 1;
	r->reverse_only = !strcmp(dir, "reverse");
	if (r->ndir == 1 && !r->reverse_only && strcmp(dir, "forward"))
		return om_error(c->st, OM_ERR_INVALID_MODEL, n, "direction '%s'", dir);
	r->layout = (int)om_attr_int(n, "layout", 0);
	r->clip = om_attr_float(n, "clip", 0.0f);
	r->input_forget = om_attr_int(n, "input_forget", 0) != 0;
	r->linear_before_reset = om_attr_int(n, "linear_before_reset", 0) != 0;
	const om_tensor *x = c->in[0], *w = c->nin > 1 ? c->in[1] : NULL,
			*rr = c->nin > 2 ? c->in[2] : NULL;
	if (!x || !w || !rr || x->rank != 3 || w->rank != 3 || rr->rank != 3)
		return om_error(c->st, OM_ERR_INVALID_MODEL, n, "X, W and R must be rank 3");
	const int32_t t = x->dtype; /* float32; float16 and bfloat16 run through float32 */
	if ((t != OM_FLOAT && !om_f32_bridged(t, false)) || w->dtype != t || rr->dtype != t)
		return om_error(c->st, OM_ERR_UNSUPPORTED, n,
				"X, W and R of one type: float, float16 or bfloat16");
	if (r->layout != 0 && r->layout != 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, n, "layout %d", r->layout);
	r->seq = x->dims[r->layout ? 1 : 0];
	r->batch = x->dims[r->layout ? 0 : 1];
	r->input = x->dims[2];
	r->hidden = om_attr_int(n, "hidden_size", rr->dims[2]);
	const int64_t gh = r->gates * r->hidden;
	if (r->hidden <= 0 || w->dims[0] != r->ndir || w->dims[1] != gh || w->dims[2] != r->input ||
	    rr->dims[0] != r->ndir || rr->dims[1] != gh || rr->dims[2] != r->hidden)
		return om_error(c->st, OM_ERR_INVALID_MODEL, n,
				"W or R do not match %d direction(s), %d gates, hidden %lld, input "
				"%lld", r->ndir, r->gates, (long long)r->hidden, (long long)r->input);
	const int64_t hshape[3] = {r->layout ? r->batch : r->ndir, r->layout ? r->ndir : r->batch,
				   r->hidden};
	if (has(c, 3) && (c->in[3]->dtype != t || c->in[3]->rank != 2 ||
			  c->in[3]->dims[0] != r->ndir || c->in[3]->dims[1] != 2 * gh))
		return om_error(c->st, OM_ERR_INVALID_MODEL, n, "B must be [%d, %lld]", r->ndir,
				(long long)(2 * gh));
	if (has(c, 4) && (c->in[4]->rank != 1 || c->in[4]->dims[0] != r->batch ||
			  (c->in[4]->dtype != OM_INT32 && c->in[4]->dtype != OM_INT64)))
		return om_error(c->st, OM_ERR_INVALID_MODEL, n, "sequence_lens must be [batch] int");
	for (int i = 5; i <= (cell == CELL_LSTM ? 6 : 5); i++)
		if (has(c, i) && (c->in[i]->dtype != t || c->in[i]->rank != 3 ||
				  memcmp(c->in[i]->dims, hshape, sizeof hshape)))
			return om_error(c->st, OM_ERR_INVALID_MODEL, n,
					"initial state %d must be [%lld, %lld, %lld]", i,
					(long long)hshape[0], (long long)hshape[1],
					(long long)hshape[2]);
	if (cell == CELL_LSTM && has(c, 7) &&
	    (c->in[7]->dtype != t || c->in[7]->rank != 2 || c->in[7]->dims[0] != r->ndir ||
	     c->in[7]->dims[1] != 3 * r->hidden))
		return om_error(c->st, OM_ERR_INVALID_MODEL, n, "P must be [%d, %lld]", r->ndir,
				(long long)(3 * r->hidden));
	return read_acts(c, r);
}

static om_kind infer(om_ctx *c, enum cell cell)
{
	rnn r;
	om_kind rc = geometry(c, cell, &r);
	if (rc)
		return rc;
	const int64_t y[4] = {r.layout ? r.batch : r.seq, r.layout ? r.seq : r.ndir,
			      r.layout ? r.ndir : r.batch, r.hidden};
	const int64_t h[3] = {r.layout ? r.batch : r.ndir, r.layout ? r.ndir : r.batch, r.hidden};
	const int32_t t = c->in[0]->dtype;
	if (c->nout > 0 && c->out[0])
		om_set_shape(c->out[0], t, 4, y);
	for (int i = 1; i < c->nout && i < (cell == CELL_LSTM ? 3 : 2); i++)
		if (c->out[i])
			om_set_shape(c->out[i], t, 3, h);
	return OM_OK;
}

static om_kind infer_rnn(om_ctx *c) { return infer(c, CELL_RNN); }
static om_kind infer_gru(om_ctx *c) { return infer(c, CELL_GRU); }
static om_kind infer_lstm(om_ctx *c) { return infer(c, CELL_LSTM); }

/* ---- the recurrence ---------------------------------------------------------------------- */

/* v = min(max(v, -clip), clip) over n when the node clips: a pass of its own after the
 * pre-activations (their loops then vectorize; clip is rare) */
static void clip_row(const rnn *r, int64_t n, float *v)
{
	const float cl = r->clip;
	if (cl > 0)
		for (int64_t k = 0; k < n; k++)
			v[k] = fmaxf(-cl, fminf(cl, v[k]));
}

/* Offsets of [a][b][hidden] state tensors in either layout: (direction, batch) */
static inline int64_t state_at(const rnn *r, int d, int64_t b)
{
	return (r->layout ? b * r->ndir + d : d * r->batch + b) * r->hidden;
}

static inline int64_t y_at(const rnn *r, int64_t t, int d, int64_t b)
{
	return (r->layout ? (b * r->seq + t) * r->ndir + d : (t * r->ndir + d) * r->batch + b) *
	       r->hidden;
}

/* Working memory of one direction. xw: [seq*batch, G*H] input projections plus biases;
 * h, cst: [batch, H] running state; rec: [batch, G*H]; rh, gh: [batch, H] (GRU reset); h2:
 * [batch, H], the team's second state (run_team). */
typedef struct work {
	om_ctx pc;              /* the packed product's context (packed_rec), with rp */
	om_gemm_packed *rp;     /* this direction's R packed, or NULL */
	const om_panels *pan;   /* or its gates' R packed in panels (batch 1), or NULL: om_sgemm */
	om_kind rc;             /* a failure of the packed product */
	const float *xw, *R, *rbh, *P;
	float *h, *cst, *rec, *rh, *gh, *y, *h2;
	const int64_t *lens;
} work;

/* f over v[0..n) in place: fast mode takes num/fastmath.h's Sigmoid and Tanh over the whole
 * row (the recurrence's gates are most of an LSTM's time: 4-6x ONNX Runtime's with one scalar
 * call an element); every other case, and exact mode, the scalar function */
static void act_row(const act_fn *f, bool fast, int64_t n, float *v)
{
	if (fast && f->kind == A_SIGMOID)
		om_fast_sigmoid_f32(n, v, v);
	else if (fast && f->kind == A_TANH)
		om_fast_tanh_f32(n, v, v);
	else
		for (int64_t k = 0; k < n; k++)
			v[k] = act(f, v[k]);
}

/* The cell updates below take n units of a batch row: xb, rb and P point at the first unit's
 * value of their first gate, a gate's values r->hidden floats after the previous gate's */

static void step_rnn(const rnn *r, const act_fn *a, bool fast, const float *xb,
		     const float *rb, float *hb, int64_t n)
{
	for (int64_t k = 0; k < n; k++)
		hb[k] = xb[k] + rb[k];
	clip_row(r, n, hb);
	act_row(&a[0], fast, n, hb);
}

/* g = clip(x + g + p c) over n (p NULL: + 0, as the one-element formula adds no peephole) */
static void gate_pre(const rnn *r, int64_t n, float *restrict g, const float *restrict x,
		     const float *restrict p, const float *restrict c)
{
	if (p)
		for (int64_t k = 0; k < n; k++)
			g[k] = x[k] + g[k] + p[k] * c[k];
	else
		for (int64_t k = 0; k < n; k++)
			g[k] = x[k] + g[k] + 0.0f;
	clip_row(r, n, g);
}

/* gate order i, o, f, c; peepholes P: i, o, f. Each gate's pre-activations are written over
 * its part of rb (the row of H(t-1) R^T), then activated as a row; every element takes the
 * operations of the one-element formulas, in their order */
static void step_lstm(const rnn *r, const act_fn *a, bool fast, const float *xb, float *rb,
		      const float *P, float *hb, float *cb, int64_t n)
{
	const int64_t H = r->hidden;
	float *ig = rb, *og = rb + H, *fg = rb + 2 * H, *cg = rb + 3 * H;
	gate_pre(r, n, ig, xb, P, cb);
	if (!r->input_forget)
		gate_pre(r, n, fg, xb + 2 * H, P ? P + 2 * H : NULL, cb);
	for (int64_t k = 0; k < n; k++)
		cg[k] = xb[3 * H + k] + cg[k];
	clip_row(r, n, cg);
	act_row(&a[0], fast, n, ig);
	if (r->input_forget)
		for (int64_t k = 0; k < n; k++)
			fg[k] = 1.0f - ig[k];
	else
		act_row(&a[0], fast, n, fg);
	act_row(&a[1], fast, n, cg);
	for (int64_t k = 0; k < n; k++) {
		cb[k] = fg[k] * cb[k] + ig[k] * cg[k];
		cg[k] = cb[k]; /* its activation below */
	}
	gate_pre(r, n, og, xb + H, P ? P + H : NULL, cb);
	act_row(&a[0], fast, n, og);
	act_row(&a[2], fast, n, cg);
	for (int64_t k = 0; k < n; k++)
		hb[k] = og[k] * cg[k];
}

/* GRU without linear_before_reset multiplies r . H(t-1) by Rh apart, so the step's product
 * only needs the z and r gates */
static bool gru_split(const rnn *r)
{
	return r->cell == CELL_GRU && !r->linear_before_reset;
}

/* rec = H(t-1) R^T (the rows of the gates the step multiplies first) for units [u0, u1), which
 * are whole panel groups unless u0 is 0 and u1 H */
static void step_product(const om_ctx *c, const rnn *r, work *w, const float *h, int64_t u0,
			 int64_t u1)
{
	const int64_t H = r->hidden, GH = r->gates * H, NR = gru_split(r) ? 2 * H : GH;
	if (w->pan) {
		const int64_t g0 = u0 / OM_PANEL_ROWS;
		const int64_t g1 = (u1 + OM_PANEL_ROWS - 1) / OM_PANEL_ROWS;
		for (int64_t b = 0; b < r->batch; b++)
			for (int g = 0; g < r->gates; g++)
				om_panels_mul(&w->pan[g], g0, g1, h + b * H,
					      w->rec + b * GH + g * H);
	} else if (!w->rp || !om_gemm_packed_mul(&w->pc, w->rp, 0, false, r->batch, 1.0f, h, H,
						 0.0f, w->rec, GH, &w->rc)) {
		om_sgemm(c->exact, false, true, r->batch, NR, H, 1.0f, h, H, w->R, H, 0.0f, w->rec,
			 GH);
	}
}

/* GRU: the z and r gates of units [u0, u1) activated in place in rec, rh = r . H(t-1) */
static void gru_gates(const rnn *r, const act_fn *a, bool fast, work *w, int64_t t,
		      const float *h, int64_t u0, int64_t u1)
{
	const int64_t H = r->hidden, GH = r->gates * H, n = u1 - u0;
	for (int64_t b = 0; b < r->batch; b++) {
		const float *xb = w->xw + (t * r->batch + b) * GH + u0;
		float *rb = w->rec + b * GH + u0;
		for (int64_t g = 0; g < 2 * H; g += H) { /* z and r, in place */
			for (int64_t k = 0; k < n; k++)
				rb[g + k] = xb[g + k] + rb[g + k];
			clip_row(r, n, rb + g);
			act_row(&a[0], fast, n, rb + g);
		}
		for (int64_t k = 0; k < n; k++)
			w->rh[b * H + u0 + k] = rb[H + k] * h[b * H + u0 + k];
	}
}

/* step t's new state (h_out, and cst) and output for units [u0, u1) of each batch row, rec
 * (and GRU's gh) holding the step's products; h_in: H(t-1), h_out the same memory or a
 * second state (run_team) */
static void cell_units(const rnn *r, int d, bool fast, work *w, int64_t t, const float *h_in,
		       float *h_out, int64_t u0, int64_t u1)
{
	const int64_t H = r->hidden, GH = r->gates * H, n = u1 - u0;
	const act_fn *a = r->acts[d];
	for (int64_t b = 0; b < r->batch; b++) {
		float *hb = h_out + b * H + u0, *yb = w->y ? w->y + y_at(r, t, d, b) + u0 : NULL;
		if (h_out != h_in)
			memcpy(hb, h_in + b * H + u0, sizeof(float) * (size_t)n);
		if (t >= w->lens[b]) { /* past this sequence's end: no step, zero output */
			if (yb)
				memset(yb, 0, sizeof(float) * (size_t)n);
			continue;
		}
		const float *xb = w->xw + (t * r->batch + b) * GH + u0;
		float *rb = w->rec + b * GH + u0;
		if (r->cell == CELL_RNN) {
			step_rnn(r, a, fast, xb, rb, hb, n);
		} else if (r->cell == CELL_LSTM) {
			step_lstm(r, a, fast, xb, rb, w->P ? w->P + u0 : NULL, hb,
				  w->cst + b * H + u0, n);
		} else {
			float *hc = w->gh + b * H + u0; /* its candidates over gh's row */
			const float *rbh = w->rbh + u0;
			for (int64_t k = 0; k < n; k++)
				hc[k] = gru_split(r) ? xb[2 * H + k] + hc[k]
						     : xb[2 * H + k] +
							       rb[H + k] * (rb[2 * H + k] + rbh[k]);
			clip_row(r, n, hc);
			act_row(&a[1], fast, n, hc);
			for (int64_t k = 0; k < n; k++) {
				const float z = rb[k];
				hb[k] = (1.0f - z) * hc[k] + z * hb[k];
			}
		}
		if (yb)
			memcpy(yb, hb, sizeof(float) * (size_t)n);
	}
}

static int64_t step_time(const rnn *r, int d, int64_t step)
{
	return d == 1 || r->reverse_only ? r->seq - 1 - step : step;
}

static void run_direction(const om_ctx *c, const rnn *r, int d, work *w)
{
	const int64_t H = r->hidden;
	const bool fast = !c->exact;
	for (int64_t step = 0; step < r->seq; step++) {
		const int64_t t = step_time(r, d, step);
		step_product(c, r, w, w->h, 0, H);
		if (w->rc)
			return;
		if (r->cell == CELL_GRU) {
			gru_gates(r, r->acts[d], fast, w, t, w->h, 0, H);
			if (gru_split(r)) /* gh = (r . H(t-1)) Rh^T */
				om_sgemm(c->exact, false, true, r->batch, H, H, 1.0f, w->rh, H,
					 w->R + 2 * H * H, H, 0.0f, w->gh, H);
		}
		cell_units(r, d, fast, w, t, w->h, w->h, 0, H);
	}
}

/* One direction of batch 1 split by units over a team of threads (fast mode, R in panels,
 * not gru_split): each member multiplies its units' panel groups of every gate and updates
 * those units, H(t-1) read from one state and H(t) written to the other, then the team meets
 * before the next step. Each half of R then streams from its own core's cache: one sequence
 * of 64 steps, two threads against one, ms: a GRU of 256 units 0.48 -> 0.38, an LSTM of 256
 * 0.75 -> 0.48; of 128 (TEAM_MNK below), 0.155 -> 0.30, the barriers costing more than the
 * split gains. Every unit's arithmetic is the one-thread run's. */
#define TEAM_MNK 1.5e5 /* multiply-adds of a step's product (G H H) worth a team */

typedef struct team_job {
	const om_ctx *c;
	const rnn *r;
	work *w;
} team_job;

static void team_member(void *arg, om_par_team *team, int slot, int count)
{
	const team_job *j = arg;
	const rnn *r = j->r;
	work *w = j->w;
	const int64_t H = r->hidden, G = om_panels_groups(&w->pan[0]);
	const int64_t u0 = G * slot / count * OM_PANEL_ROWS;
	const int64_t u1 = G * (slot + 1) / count * OM_PANEL_ROWS < H
				   ? G * (slot + 1) / count * OM_PANEL_ROWS
				   : H;
	float *h_in = w->h, *h_out = w->h2;
	for (int64_t step = 0; step < r->seq; step++) {
		const int64_t t = step_time(r, 0, step);
		if (u0 < u1) {
			step_product(j->c, r, w, h_in, u0, u1);
			if (r->cell == CELL_GRU)
				gru_gates(r, r->acts[0], true, w, t, h_in, u0, u1);
			cell_units(r, 0, true, w, t, h_in, h_out, u0, u1);
		}
		om_par_barrier(team);
		float *tmp = h_in;
		h_in = h_out, h_out = tmp;
	}
	for (int64_t b = 0; h_in != w->h && u0 < u1 && b < r->batch; b++)
		memcpy(w->h + b * H + u0, h_in + b * H + u0, sizeof(float) * (size_t)(u1 - u0));
}

/* the directions of a bidirectional run, one a thread: each has its own state and working
 * memory, and its steps' products are small (at two threads a bidirectional LSTM of 128 units
 * on 16 sequences of 100 ran 22.8 ms, 1.6x its one-thread time, with each product split) */
typedef struct dir_job {
	const om_ctx *c;
	const rnn *r;
	work *w;
} dir_job;

static void dir_piece(void *arg, int64_t lo, int64_t hi)
{
	const dir_job *j = arg;
	for (int64_t d = lo; d < hi; d++)
		run_direction(j->c, j->r, (int)d, &j->w[d]);
}

/* Fast mode's R, each direction's packed once (when R is a plan-time constant): at batch 1 in
 * panels (num/panels.h; one thread, one sequence of 64 steps: a GRU of 256 units 0.70 ->
 * 0.48 ms a run against oneDNN's packed matmul, an LSTM of 256 1.02 -> 0.75, of 512 3.6 ->
 * 3.85, its R streaming from L3 either way), else for oneDNN's matmul
 * (ops/gemm_packed.h): the recurrence multiplies it T times a run, a few rows each, and
 * oneDNN's sgemm packs it again in every call (a bidirectional LSTM of 128 units on 4
 * sequences of 50 at one thread: 2.07 -> 1.55 ms a run). Each direction has its own packed
 * product in the step's state (the directions may run on two threads at once) and runs it on
 * one thread when the directions take one each or the product is small (below, om_sgemm
 * splits none either). GRU without linear_before_reset multiplies two parts of R apart:
 * om_sgemm. */
enum { REC_STATE_KEY = 2 };
typedef struct rec_state {
	int64_t key[REC_STATE_KEY]; /* directions, panels */
	void *slot[2];              /* each direction's packed R: a state slot of its own */
	void (*release[2])(void *);
	om_panels pan[2][4];        /* or each direction's gates in panels */
	bool packed;                /* pan made */
} rec_state;

static void rec_release(void *p)
{
	rec_state *s = p;
	for (int d = 0; d < 2; d++) {
		om_ctx one = {.state = &s->slot[d], .state_release = &s->release[d]};
		om_ctx_state_reset(&one);
		for (int g = 0; g < 4; g++)
			om_panels_free(&s->pan[d][g]);
	}
}

#define REC_SPLIT_MNK 3e6 /* multiply-adds of a product worth two threads (num/gemm.c's) */

/* R's panels for every direction and gate (false: out of memory, none) */
static bool pack_panels(const om_ctx *c, const rnn *r, rec_state *s)
{
	const int64_t H = r->hidden;
	const float *R = c->in[2]->data;
	for (int d = 0; d < r->ndir; d++)
		for (int g = 0; g < r->gates; g++)
			if (!om_panels_pack(&s->pan[d][g], R + (d * r->gates + g) * H * H, H, H,
					    H)) {
				rec_release(s);
				return false;
			}
	return true;
}

static void packed_rec(om_ctx *c, const rnn *r, work *w)
{
	const int64_t H = r->hidden, GH = r->gates * H;
	if (c->exact || gru_split(r))
		return;
	const bool panels = r->batch == 1 && (c->const_in & (UINT64_C(1) << 2));
	const int64_t key[REC_STATE_KEY] = {r->ndir, panels};
	bool made;
	rec_state *s = om_ctx_state_keyed(c, rec_release, key, REC_STATE_KEY, sizeof *s, &made);
	if (s && panels) {
		if (!s->packed)
			s->packed = pack_panels(c, r, s);
		for (int d = 0; s->packed && d < r->ndir; d++)
			w[d].pan = s->pan[d];
		return;
	}
	const bool one = r->ndir > 1 || (double)r->batch * (double)GH * (double)H < REC_SPLIT_MNK;
	for (int d = 0; s && d < r->ndir; d++) {
		om_ctx *pc = &w[d].pc;
		*pc = *c;
		pc->state = &s->slot[d], pc->state_release = &s->release[d];
		pc->threads = one ? 1 : c->threads;
		const om_gemm_b b = {true, 1, H, GH, H, 0, (const float *)c->in[2]->data + d * GH * H};
		w[d].rp = om_gemm_packed_get(pc, 2, &b, r->seq * r->batch);
	}
}

static om_kind kernel(om_ctx *c, enum cell cell)
{
	rnn r;
	om_kind rc = geometry(c, cell, &r);
	if (rc)
		return rc;
	const int64_t H = r.hidden, GH = r.gates * H, SB = r.seq * r.batch, BH = r.batch * H;
	const size_t nd = (size_t)r.ndir; /* every buffer below but xs: one part per direction */
	/* the float buffers in one scratch, each part from a 16-byte boundary: xw, then h, cst,
	 * rh, gh, h2 (BH each), rec, and xs (X in time-major order, for layout 1) */
	const size_t nxw = (nd * (size_t)(SB * GH) + 3) / 4 * 4, nbh = (nd * (size_t)BH + 3) / 4 * 4;
	const size_t nrec = (nd * (size_t)(r.batch * GH) + 3) / 4 * 4;
	const size_t nxs = r.layout ? (size_t)(SB * r.input) : 0;
	float *xs = NULL, *xw = NULL;
	float *zero_row = calloc((size_t)H + 1, sizeof(float)); /* Rbh when there is no B */
	int64_t *lens = malloc(sizeof(int64_t) * (size_t)(r.batch + 1));
	if (!zero_row || !lens) {
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		goto out;
	}
	if ((rc = om_ctx_scratch(c, sizeof(float) * (nxw + 5 * nbh + nrec + nxs),
				 "the recurrence's buffers", (void **)&xw)))
		goto out;
	float *h = xw + nxw, *cst = h + nbh, *rh = cst + nbh, *gh = rh + nbh, *h2 = gh + nbh;
	float *rec = h2 + nbh;
	for (int64_t b = 0; b < r.batch; b++) {
		int64_t len = r.seq;
		if (has(c, 4))
			len = c->in[4]->dtype == OM_INT32 ? ((const int32_t *)c->in[4]->data)[b]
							 : ((const int64_t *)c->in[4]->data)[b];
		if (len < 0 || len > r.seq) {
			rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				      "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)b,
				      (long long)len, (long long)r.seq);
			goto out;
		}
		lens[b] = len;
	}
	/* X in time-major order [seq, batch, input] */
	const float *x = c->in[0]->data;
	if (r.layout) {
		xs = rec + nrec;
		for (int64_t t = 0; t < r.seq; t++)
			for (int64_t b = 0; b < r.batch; b++)
				memcpy(xs + (t * r.batch + b) * r.input, x + (b * r.seq + t) * r.input,
				       sizeof(float) * (size_t)r.input);
		x = xs;
	}
	float *y = c->nout > 0 && c->out[0] ? c->out[0]->data : NULL;
	work w[2];
	for (int d = 0; d < r.ndir; d++) {
		const float *W = (const float *)c->in[1]->data + d * GH * r.input;
		const float *B = has(c, 3) ? (const float *)c->in[3]->data + d * 2 * GH : NULL;
		float *xwd = xw + d * SB * GH, *hd = h + d * BH, *cd = cst + d * BH;
		/* xw = X W^T + Wb + Rb (GRU with linear_before_reset: Rbh stays out): the bias row
		 * once, copied into every row; the product on all the run's threads */
		for (int64_t k = 0; SB && k < GH; k++) {
			const bool keep_rbh = cell == CELL_GRU && r.linear_before_reset && k >= 2 * H;
			xwd[k] = B ? B[k] + (keep_rbh ? 0.0f : B[GH + k]) : 0.0f;
		}
		for (int64_t i = 1; i < SB; i++)
			memcpy(xwd + i * GH, xwd, sizeof(float) * (size_t)GH);
		if (SB && r.input)
			om_sgemm(c->exact, false, true, SB, GH, r.input, 1.0f, x, r.input, W, r.input,
				 1.0f, xwd, GH);
		for (int64_t b = 0; b < r.batch; b++) {
			const int64_t at = state_at(&r, d, b);
			for (int64_t k = 0; k < H; k++) {
				hd[b * H + k] = has(c, 5) ? ((const float *)c->in[5]->data)[at + k] : 0;
				cd[b * H + k] = cell == CELL_LSTM && has(c, 6)
							? ((const float *)c->in[6]->data)[at + k]
							: 0;
			}
		}
		w[d] = (work){.xw = xwd, .R = (const float *)c->in[2]->data + d * GH * H,
			      .rbh = B && cell == CELL_GRU ? B + GH + 2 * H : zero_row,
			      .P = cell == CELL_LSTM && has(c, 7)
					   ? (const float *)c->in[7]->data + d * 3 * H
					   : NULL,
			      .h = hd, .cst = cd, .rec = rec + d * r.batch * GH, .rh = rh + d * BH,
			      .gh = gh + d * BH, .y = y, .h2 = h2 + d * BH, .lens = lens};
	}
	packed_rec(c, &r, w);
	if (w[0].pan && r.ndir == 1 && (double)GH * (double)H >= TEAM_MNK) {
		team_job tj = {c, &r, w};
		om_par_team_run(c->threads, om_panels_groups(&w[0].pan[0]), team_member, &tj);
	} else {
		dir_job j = {c, &r, w};
		om_par_for(c->threads, r.ndir, 1, dir_piece, &j);
	}
	for (int d = 0; d < r.ndir && !rc; d++)
		rc = w[d].rc;
	if (rc)
		goto out;
	/* Y_h (and Y_c): the state after each sequence's last step; a sequence of length 0 has
	 * none and gives zeros, not the initial state (as ONNX Runtime) */
	for (int d = 0; d < r.ndir; d++)
		for (int o = 1; o < c->nout && o <= (cell == CELL_LSTM ? 2 : 1); o++) {
			if (!c->out[o])
				continue;
			const float *src = o == 1 ? w[d].h : w[d].cst;
			for (int64_t b = 0; b < r.batch; b++) {
				float *dst = (float *)c->out[o]->data + state_at(&r, d, b);
				if (lens[b])
					memcpy(dst, src + b * H, sizeof(float) * (size_t)H);
				else
					memset(dst, 0, sizeof(float) * (size_t)H);
			}
		}
out:
	om_ctx_scratch_done(c, xw);
	free(zero_row), free(lens);
	return rc;
}

/* float16/bfloat16 through float32 (the same float32 kernel, its results rounded) */
static bool bridged(const om_ctx *c)
{
	return c->nin > 0 && c->in[0] && om_f32_bridged(c->in[0]->dtype, false);
}

static om_kind kernel_rnn(om_ctx *c)
{
	return bridged(c) ? om_run_as_f32(c, kernel_rnn, false) : kernel(c, CELL_RNN);
}

static om_kind kernel_gru(om_ctx *c)
{
	return bridged(c) ? om_run_as_f32(c, kernel_gru, false) : kernel(c, CELL_GRU);
}

static om_kind kernel_lstm(om_ctx *c)
{
	return bridged(c) ? om_run_as_f32(c, kernel_lstm, false) : kernel(c, CELL_LSTM);
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_RNN_7_v22[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {"layout", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* RNN-22: X W R [B] [sequence_lens] [initial_h] -> [Y] [Y_h] */
static const om_sig sig_RNN_7_v22 = {22, 3, 6, 0, 2, 0x38, 0x3, 0x2f, 0x3, 0x2f, 0x3,
	attrs_RNN_7_v22, NULL};
static const om_sig_attr attrs_RNN_7_v14[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {"layout", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* RNN-14: X W R [B] [sequence_lens] [initial_h] -> [Y] [Y_h] */
static const om_sig sig_RNN_7_v14 = {14, 3, 6, 0, 2, 0x38, 0x3, 0x2f, 0x3, 0x0, 0x0,
	attrs_RNN_7_v14, &sig_RNN_7_v22};
static const om_sig_attr attrs_RNN_7[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* RNN-7: X W R [B] [sequence_lens] [initial_h] -> [Y] [Y_h] */
static const om_sig sig_RNN_7 = {7, 3, 6, 0, 2, 0x38, 0x3, 0x2f, 0x3, 0x0, 0x0, attrs_RNN_7,
	&sig_RNN_7_v14};
static const om_sig_attr attrs_GRU_7_v22[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {"layout", OM_ATTR_INT, 0},
	{"linear_before_reset", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GRU-22: X W R [B] [sequence_lens] [initial_h] -> [Y] [Y_h] */
static const om_sig sig_GRU_7_v22 = {22, 3, 6, 0, 2, 0x38, 0x3, 0x2f, 0x3, 0x2f, 0x3,
	attrs_GRU_7_v22, NULL};
static const om_sig_attr attrs_GRU_7_v14[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {"layout", OM_ATTR_INT, 0},
	{"linear_before_reset", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GRU-14: X W R [B] [sequence_lens] [initial_h] -> [Y] [Y_h] */
static const om_sig sig_GRU_7_v14 = {14, 3, 6, 0, 2, 0x38, 0x3, 0x2f, 0x3, 0x0, 0x0,
	attrs_GRU_7_v14, &sig_GRU_7_v22};
static const om_sig_attr attrs_GRU_7[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {"linear_before_reset", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GRU-7: X W R [B] [sequence_lens] [initial_h] -> [Y] [Y_h] */
static const om_sig sig_GRU_7 = {7, 3, 6, 0, 2, 0x38, 0x3, 0x2f, 0x3, 0x0, 0x0, attrs_GRU_7,
	&sig_GRU_7_v14};
static const om_sig_attr attrs_LSTM_7_v22[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {"input_forget", OM_ATTR_INT, 0},
	{"layout", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* LSTM-22: X W R [B] [sequence_lens] [initial_h] [initial_c] [P] -> [Y] [Y_h] [Y_c] */
static const om_sig sig_LSTM_7_v22 = {22, 3, 8, 0, 3, 0xf8, 0x7, 0xef, 0x7, 0xef, 0x7,
	attrs_LSTM_7_v22, NULL};
static const om_sig_attr attrs_LSTM_7_v14[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {"input_forget", OM_ATTR_INT, 0},
	{"layout", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* LSTM-14: X W R [B] [sequence_lens] [initial_h] [initial_c] [P] -> [Y] [Y_h] [Y_c] */
static const om_sig sig_LSTM_7_v14 = {14, 3, 8, 0, 3, 0xf8, 0x7, 0xef, 0x7, 0x0, 0x0,
	attrs_LSTM_7_v14, &sig_LSTM_7_v22};
static const om_sig_attr attrs_LSTM_7[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {"input_forget", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* LSTM-7: X W R [B] [sequence_lens] [initial_h] [initial_c] [P] -> [Y] [Y_h] [Y_c] */
static const om_sig sig_LSTM_7 = {7, 3, 8, 0, 3, 0xf8, 0x7, 0xef, 0x7, 0x0, 0x0, attrs_LSTM_7,
	&sig_LSTM_7_v14};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"RNN", "", 7, infer_rnn, kernel_rnn, OM_OP_EXACT, &sig_RNN_7, OM_OPC_NONE, NULL, 0, NULL},
	{"GRU", "", 7, infer_gru, kernel_gru, OM_OP_EXACT, &sig_GRU_7, OM_OPC_NONE, NULL, 0, NULL},
	{"LSTM", "", 7, infer_lstm, kernel_lstm, OM_OP_EXACT, &sig_LSTM_7, OM_OPC_NONE, NULL, 0,
	 NULL},
};

const om_op_table om_ops_rnn = OM_TABLE(rows);
