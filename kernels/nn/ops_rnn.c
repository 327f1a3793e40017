/* ops_rnn.c — RNN, GRU and LSTM (float32; opsets 7 and 14 with `layout`), ONNX spec
 * "Operators.md" for each. The input projection of every time step is one GEMM; each step
 * then adds H(t-1) * R^T (one GEMM per step and direction) and applies the gates, each gate's
 * activation over a row of H (fast mode: ops/fastmath.h's Sigmoid and Tanh). GEMMs go
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
 * h, cst: [batch, H] running state; rec: [batch, G*H]; rh, gh: [batch, H] (GRU reset). */
typedef struct work {
	om_ctx pc;          /* the packed product's context (packed_rec), with rp */
	om_gemm_packed *rp; /* this direction's R packed, or NULL: om_sgemm */
	om_kind rc;         /* a failure of the packed product */
	const float *xw, *R, *rbh, *P;
	float *h, *cst, *rec, *rh, *gh, *y;
	const int64_t *lens;
} work;

/* f over v[0..n) in place: fast mode takes ops/fastmath.h's Sigmoid and Tanh over the whole
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

static void step_rnn(const rnn *r, const act_fn *a, bool fast, const float *xb,
		     const float *rb, float *hb)
{
	for (int64_t k = 0; k < r->hidden; k++)
		hb[k] = xb[k] + rb[k];
	clip_row(r, r->hidden, hb);
	act_row(&a[0], fast, r->hidden, hb);
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
		      const float *P, float *hb, float *cb)
{
	const int64_t H = r->hidden;
	float *ig = rb, *og = rb + H, *fg = rb + 2 * H, *cg = rb + 3 * H;
	gate_pre(r, H, ig, xb, P, cb);
	if (!r->input_forget)
		gate_pre(r, H, fg, xb + 2 * H, P ? P + 2 * H : NULL, cb);
	for (int64_t k = 0; k < H; k++)
		cg[k] = xb[3 * H + k] + cg[k];
	clip_row(r, H, cg);
	act_row(&a[0], fast, H, ig);
	if (r->input_forget)
		for (int64_t k = 0; k < H; k++)
			fg[k] = 1.0f - ig[k];
	else
		act_row(&a[0], fast, H, fg);
	act_row(&a[1], fast, H, cg);
	for (int64_t k = 0; k < H; k++) {
		cb[k] = fg[k] * cb[k] + ig[k] * cg[k];
		cg[k] = cb[k]; /* its activation below */
	}
	gate_pre(r, H, og, xb + H, P ? P + H : NULL, cb);
	act_row(&a[0], fast, H, og);
	act_row(&a[2], fast, H, cg);
	for (int64_t k = 0; k < H; k++)
		hb[k] = og[k] * cg[k];
}

static void run_direction(const om_ctx *c, const rnn *r, int d, work *w)
{
	const int64_t H = r->hidden, GH = r->gates * H;
	const act_fn *a = r->acts[d];
	const bool rev = d == 1 || r->reverse_only;
	/* GRU without linear_before_reset multiplies r . H(t-1) by Rh afterwards, so the first
	 * product only needs the z and r gates */
	const bool gru_split = r->cell == CELL_GRU && !r->linear_before_reset;
	const int64_t NR = gru_split ? 2 * H : GH;
	const bool fast = !c->exact;
	for (int64_t step = 0; step < r->seq; step++) {
		const int64_t t = rev ? r->seq - 1 - step : step;
		if (!w->rp || !om_gemm_packed_mul(&w->pc, w->rp, 0, false, r->batch, 1.0f, w->h, H,
						  0.0f, w->rec, GH, &w->rc))
			om_sgemm(c->exact, false, true, r->batch, NR, H, 1.0f, w->h, H, w->R, H,
				 0.0f, w->rec, GH);
		if (w->rc)
			return;
		if (r->cell == CELL_GRU) {
			for (int64_t b = 0; b < r->batch; b++) {
				const float *xb = w->xw + (t * r->batch + b) * GH;
				float *rb = w->rec + b * GH;
				for (int64_t k = 0; k < 2 * H; k++) /* z and r, in place */
					rb[k] = xb[k] + rb[k];
				clip_row(r, 2 * H, rb);
				act_row(&a[0], fast, 2 * H, rb);
				for (int64_t k = 0; k < H; k++)
					w->rh[b * H + k] = rb[H + k] * w->h[b * H + k];
			}
			if (gru_split) /* gh = (r . H(t-1)) Rh^T */
				om_sgemm(c->exact, false, true, r->batch, H, H, 1.0f, w->rh, H,
					 w->R + 2 * H * H, H, 0.0f, w->gh, H);
		}
		for (int64_t b = 0; b < r->batch; b++) {
			float *hb = w->h + b * H, *yb = w->y ? w->y + y_at(r, t, d, b) : NULL;
			if (t >= w->lens[b]) { /* past this sequence's end: no step, zero output */
				if (yb)
					memset(yb, 0, sizeof(float) * (size_t)H);
				continue;
			}
			const float *xb = w->xw + (t * r->batch + b) * GH;
			float *rb = w->rec + b * GH;
			if (r->cell == CELL_RNN) {
				step_rnn(r, a, fast, xb, rb, hb);
			} else if (r->cell == CELL_LSTM) {
				step_lstm(r, a, fast, xb, rb, w->P, hb, w->cst + b * H);
			} else {
				float *hc = w->gh + b * H; /* its candidates over gh's row */
				for (int64_t k = 0; k < H; k++)
					hc[k] = gru_split ? xb[2 * H + k] + hc[k]
							  : xb[2 * H + k] +
								    rb[H + k] * (rb[2 * H + k] + w->rbh[k]);
				clip_row(r, H, hc);
				act_row(&a[1], fast, H, hc);
				for (int64_t k = 0; k < H; k++) {
					const float z = rb[k];
					hb[k] = (1.0f - z) * hc[k] + z * hb[k];
				}
			}
			if (yb)
				memcpy(yb, hb, sizeof(float) * (size_t)H);
		}
	}
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

/* Fast mode's R, each direction's packed once (ops/gemm_packed.h): the recurrence multiplies
 * it T times a run, a few rows each, and oneDNN's sgemm packs it again in every call (a
 * bidirectional LSTM of 128 units on 4 sequences of 50 at one thread: 2.07 -> 1.55 ms a run).
 * Each direction has its own packed product in the step's state (the directions may run on
 * two threads at once) and runs it on one thread when the directions take one each or the
 * product is small (below, om_sgemm splits none either). GRU without linear_before_reset
 * multiplies two parts of R apart: om_sgemm. */
enum { REC_STATE_KEY = 1 };
typedef struct rec_state {
	int64_t key[REC_STATE_KEY]; /* directions */
	void *slot[2];              /* each direction's packed R: a state slot of its own */
	void (*release[2])(void *);
} rec_state;

static void rec_release(void *p)
{
	rec_state *s = p;
	for (int d = 0; d < 2; d++) {
		om_ctx one = {.state = &s->slot[d], .state_release = &s->release[d]};
		om_ctx_state_reset(&one);
	}
}

#define REC_SPLIT_MNK 3e6 /* multiply-adds of a product worth two threads (ops/gemm.c's) */

static void packed_rec(om_ctx *c, const rnn *r, work *w)
{
	const int64_t H = r->hidden, GH = r->gates * H;
	if (c->exact || (r->cell == CELL_GRU && !r->linear_before_reset))
		return;
	const int64_t key[REC_STATE_KEY] = {r->ndir};
	bool made;
	rec_state *s = om_ctx_state_keyed(c, rec_release, key, REC_STATE_KEY, sizeof *s, &made);
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
	const size_t nd = (size_t)r.ndir; /* every buffer below: one part per direction */
	float *xs = NULL, *xw = malloc(sizeof(float) * (nd * (size_t)(SB * GH) + 1));
	float *h = malloc(sizeof(float) * (nd * (size_t)BH + 1));
	float *cst = calloc(nd * (size_t)BH + 1, sizeof(float));
	float *rec = malloc(sizeof(float) * (nd * (size_t)(r.batch * GH) + 1));
	float *rh = malloc(sizeof(float) * (nd * (size_t)BH + 1));
	float *gh = malloc(sizeof(float) * (nd * (size_t)BH + 1));
	float *zero_row = calloc((size_t)H + 1, sizeof(float)); /* Rbh when there is no B */
	int64_t *lens = malloc(sizeof(int64_t) * (size_t)(r.batch + 1));
	if (!xw || !h || !cst || !rec || !rh || !gh || !zero_row || !lens) {
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		goto out;
	}
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
		xs = malloc(sizeof(float) * (size_t)(SB * r.input + 1));
		if (!xs) {
			rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
			goto out;
		}
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
			      .gh = gh + d * BH, .y = y, .lens = lens};
	}
	packed_rec(c, &r, w);
	dir_job j = {c, &r, w};
	om_par_for(c->threads, r.ndir, 1, dir_piece, &j);
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
	free(xs), free(xw), free(h), free(cst), free(rec), free(rh), free(gh), free(zero_row), free(lens);
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

static const om_sig_attr attrs_RNN_7_v14[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {"layout", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* RNN-14: X W R [B] [sequence_lens] [initial_h] -> [Y] [Y_h] */
static const om_sig sig_RNN_7_v14 = {14, 3, 6, 0, 2, 0x38, 0x3, attrs_RNN_7_v14, NULL};
static const om_sig_attr attrs_RNN_7[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* RNN-7: X W R [B] [sequence_lens] [initial_h] -> [Y] [Y_h] */
static const om_sig sig_RNN_7 = {7, 3, 6, 0, 2, 0x38, 0x3, attrs_RNN_7, &sig_RNN_7_v14};
static const om_sig_attr attrs_GRU_7_v14[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {"layout", OM_ATTR_INT, 0},
	{"linear_before_reset", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GRU-14: X W R [B] [sequence_lens] [initial_h] -> [Y] [Y_h] */
static const om_sig sig_GRU_7_v14 = {14, 3, 6, 0, 2, 0x38, 0x3, attrs_GRU_7_v14, NULL};
static const om_sig_attr attrs_GRU_7[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {"linear_before_reset", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GRU-7: X W R [B] [sequence_lens] [initial_h] -> [Y] [Y_h] */
static const om_sig sig_GRU_7 = {7, 3, 6, 0, 2, 0x38, 0x3, attrs_GRU_7, &sig_GRU_7_v14};
static const om_sig_attr attrs_LSTM_7_v14[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {"input_forget", OM_ATTR_INT, 0},
	{"layout", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* LSTM-14: X W R [B] [sequence_lens] [initial_h] [initial_c] [P] -> [Y] [Y_h] [Y_c] */
static const om_sig sig_LSTM_7_v14 = {14, 3, 8, 0, 3, 0xf8, 0x7, attrs_LSTM_7_v14, NULL};
static const om_sig_attr attrs_LSTM_7[] = {{"activation_alpha", OM_ATTR_FLOATS, 0},
	{"activation_beta", OM_ATTR_FLOATS, 0}, {"activations", OM_ATTR_STRINGS, 0},
	{"clip", OM_ATTR_FLOAT, 0}, {"direction", OM_ATTR_STRING, 0},
	{"hidden_size", OM_ATTR_INT, 0}, {"input_forget", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* LSTM-7: X W R [B] [sequence_lens] [initial_h] [initial_c] [P] -> [Y] [Y_h] [Y_c] */
static const om_sig sig_LSTM_7 = {7, 3, 8, 0, 3, 0xf8, 0x7, attrs_LSTM_7, &sig_LSTM_7_v14};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"RNN", "", 7, infer_rnn, kernel_rnn, OM_OP_EXACT, &sig_RNN_7, OM_OPC_NONE, NULL},
	{"GRU", "", 7, infer_gru, kernel_gru, OM_OP_EXACT, &sig_GRU_7, OM_OPC_NONE, NULL},
	{"LSTM", "", 7, infer_lstm, kernel_lstm, OM_OP_EXACT, &sig_LSTM_7, OM_OPC_NONE, NULL},
};

const om_op_table om_ops_rnn = OM_TABLE(rows);
