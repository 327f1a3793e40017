/* ops_flex_attn.c — ai.onnx.preview FlexAttention (version 1): attention of rank-4 Q, K, V
 * (grouped KV heads) with optional subgraphs that rewrite the scores before the softmax
 * (score_mod) and the probabilities after it (prob_mod). As ONNX's function body: Q and K are
 * each multiplied by sqrt(scale) in their type, their product rounded to that type, then the
 * scores, softmax and probabilities are held in the softmax precision (float unless the
 * inputs are double, or the softmax_precision attribute) and Y = P V is stored in V's type.
 * Products through om_dgemm; the score and probability tensors are whole (B, Hq, L, S)
 * tensors, since the subgraphs take them whole. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detmath.h"
#include "gemm.h"
#include "numrun.h"
#include "op.h"
#include "value.h"

typedef struct fa_plan {
	int64_t B, Hq, Hkv, L, S, E, Ev;
	double ss;   /* sqrt(scale) as the function body rounds it: float, then Q's type */
	int32_t dt;  /* Q, K, V and Y */
	int32_t cdt; /* the softmax precision */
	const om_graph *score_mod, *prob_mod;
} fa_plan;

static om_kind fa_bad(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", what);
}

static const om_graph *fa_graph(const om_ctx *c, const char *name)
{
	const om_attr *a = om_node_attr(c->node, name);
	return a && a->type == OM_ATTR_GRAPH ? a->g : NULL;
}

/* x rounded to type dt (float, double, float16 or bfloat16) */
static double fa_round(int32_t dt, double x)
{
	unsigned char b[8] = {0};
	om_store_f64(dt, b, 1, &x, 1);
	om_load_f64(dt, b, 1, 1, &x);
	return x;
}

static om_kind fa_plan_make(om_ctx *c, fa_plan *p)
{
	memset(p, 0, sizeof *p);
	const om_tensor *q = om_ctx_in(c, 0), *k = om_ctx_in(c, 1), *v = om_ctx_in(c, 2);
	if (!q || !k || !v)
		return fa_bad(c, "needs Q, K and V");
	p->dt = q->dtype;
	if (!om_is_float_type(p->dt) || k->dtype != p->dt || v->dtype != p->dt)
		return fa_bad(c, "Q, K and V must be one float type");
	if (q->rank != 4 || k->rank != 4 || v->rank != 4)
		return fa_bad(c, "Q, K and V must be 4-D");
	p->B = q->dims[0], p->Hq = q->dims[1], p->L = q->dims[2], p->E = q->dims[3];
	p->Hkv = k->dims[1], p->S = k->dims[2], p->Ev = v->dims[3];
	if (k->dims[0] != p->B || v->dims[0] != p->B || k->dims[3] != p->E ||
	    v->dims[1] != p->Hkv || v->dims[2] != p->S)
		return fa_bad(c, "K and V do not match Q (batch, heads, lengths, head size)");
	if (p->Hkv <= 0 || p->Hq % p->Hkv)
		return fa_bad(c, "Q's heads must be a multiple of K's heads");
	const int64_t sd[4] = {p->B, p->Hq, p->L, p->S};
	if (om_shape_numel(4, sd) < 0)
		return fa_bad(c, "the scores are too large");
	const int64_t sp = om_attr_int(c->node, "softmax_precision", 0);
	if (sp == 0)
		p->cdt = p->dt == OM_DOUBLE ? OM_DOUBLE : OM_FLOAT;
	else if (sp == OM_FLOAT || sp == OM_DOUBLE || sp == OM_FLOAT16 || sp == OM_BFLOAT16)
		p->cdt = (int32_t)sp;
	else
		return fa_bad(c, "softmax_precision must be float, double, float16 or bfloat16");
	const om_attr *sa = om_node_attr(c->node, "scale");
	const float scale = sa ? om_attr_float(c->node, "scale", 0)
			       : (float)(1 / sqrt((double)p->E));
	p->ss = fa_round(p->dt, (double)sqrtf(scale));
	p->score_mod = fa_graph(c, "score_mod"), p->prob_mod = fa_graph(c, "prob_mod");
	if ((p->score_mod && (p->score_mod->ninputs != 1 || p->score_mod->noutputs != 1)) ||
	    (p->prob_mod && (p->prob_mod->ninputs != 1 || p->prob_mod->noutputs != 1)))
		return fa_bad(c, "score_mod and prob_mod take one tensor and return one");
	return OM_OK;
}

static om_kind fa_infer(om_ctx *c)
{
	fa_plan p;
	om_kind rc = fa_plan_make(c, &p);
	if (rc)
		return rc;
	const int64_t yd[4] = {p.B, p.Hq, p.L, p.Ev};
	om_set_shape(c->out[0], p.dt, 4, yd);
	return OM_OK;
}

/* rows of n elements at src (type dt, from element `at`) as doubles times f, each rounded to
 * dt when round */
static void fa_load(int32_t dt, const void *src, int64_t at, int64_t n, double f, bool round,
		    double *dst)
{
	om_load_f64(dt, (const char *)src + (size_t)at * om_dtype_size(dt), 1, n, dst);
	for (int64_t i = 0; f != 1 && i < n; i++)
		dst[i] = round ? fa_round(dt, dst[i] * f) : dst[i] * f;
}

/* scores (B, Hq, L, S) of the softmax type into sc->data */
static void fa_scores(const om_ctx *c, const fa_plan *p, double *w, om_tensor *sc)
{
	double *qs = w, *ks = qs + p->L * p->E, *sd = ks + p->S * p->E;
	const int64_t G = p->Hq / p->Hkv, n = p->L * p->S;
	const size_t ces = om_dtype_size(p->cdt);
	for (int64_t b = 0; b < p->B; b++)
		for (int64_t h = 0; h < p->Hq; h++) {
			const int64_t hk = b * p->Hkv + h / G;
			fa_load(p->dt, c->in[0]->data, (b * p->Hq + h) * p->L * p->E, p->L * p->E,
				p->ss, true, qs);
			fa_load(p->dt, c->in[1]->data, hk * p->S * p->E, p->S * p->E, p->ss, true,
				ks);
			if (n && p->E)
				om_dgemm(c->exact, false, true, p->L, p->S, p->E, 1.0, qs, p->E, ks,
					 p->E, 0.0, sd, p->S);
			else
				for (int64_t i = 0; i < n; i++)
					sd[i] = 0;
			for (int64_t i = 0; i < n; i++) /* the product in Q's type */
				sd[i] = fa_round(p->dt, sd[i]);
			om_store_f64(p->cdt, (char *)sc->data + (size_t)((b * p->Hq + h) * n) * ces,
				     1, sd, n);
		}
}

/* softmax of each row of S in place (ONNX Softmax: a row of -inf only gives NaN) */
static void fa_softmax(const fa_plan *p, om_tensor *sc, double *r)
{
	const size_t ces = om_dtype_size(p->cdt);
	for (int64_t row = 0; row < p->B * p->Hq * p->L; row++) {
		char *at = (char *)sc->data + (size_t)(row * p->S) * ces;
		om_load_f64(p->cdt, at, 1, p->S, r);
		double mx = -INFINITY, sum = 0;
		for (int64_t i = 0; i < p->S; i++)
			mx = r[i] > mx || r[i] != r[i] ? r[i] : mx;
		for (int64_t i = 0; i < p->S; i++)
			sum += r[i] = om_det_exp(r[i] - mx);
		for (int64_t i = 0; i < p->S; i++)
			r[i] /= sum;
		om_store_f64(p->cdt, at, 1, r, p->S);
	}
}

/* Y = P V per head, stored in Y's type */
static void fa_output(const om_ctx *c, const fa_plan *p, const om_tensor *pr, double *w)
{
	double *pd = w, *vd = pd + p->L * p->S, *yd = vd + p->S * p->Ev;
	const int64_t G = p->Hq / p->Hkv, ny = p->L * p->Ev;
	const size_t es = om_dtype_size(p->dt);
	for (int64_t b = 0; b < p->B; b++)
		for (int64_t h = 0; h < p->Hq; h++) {
			fa_load(p->cdt, pr->data, (b * p->Hq + h) * p->L * p->S, p->L * p->S, 1,
				false, pd);
			fa_load(p->dt, c->in[2]->data, (b * p->Hkv + h / G) * p->S * p->Ev,
				p->S * p->Ev, 1, false, vd);
			if (ny && p->S)
				om_dgemm(c->exact, false, false, p->L, p->Ev, p->S, 1.0, pd, p->S, vd,
					 p->Ev, 0.0, yd, p->Ev);
			else
				for (int64_t i = 0; i < ny; i++)
					yd[i] = 0;
			om_store_f64(p->dt, (char *)c->out[0]->data +
						    (size_t)((b * p->Hq + h) * ny) * es,
				     1, yd, ny);
		}
}

/* runs modifier g (`what`) on t, whose bytes become g's output (of t's type and shape) */
static om_kind fa_modify(om_ctx *c, const om_graph *g, const char *what, om_tensor *t)
{
	om_tensor res;
	memset(&res, 0, sizeof res);
	const om_tensor *in[1] = {t};
	om_kind rc = om_ctx_run_graph(c, g, in, 1, &res, 1);
	if (rc)
		return rc;
	if (om_is_box(&res) || res.dtype != t->dtype || res.rank != 4 ||
	    memcmp(res.dims, t->dims, sizeof(int64_t) * 4) || res.nbytes < t->nbytes ||
	    (t->nbytes && !res.data))
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
			      "%s must return a tensor of its input's type and shape", what);
	else if (t->nbytes)
		memcpy(t->data, res.data, t->nbytes);
	om_value_free(&res);
	return rc;
}

static om_kind fa_kernel(om_ctx *c)
{
	fa_plan p;
	om_kind rc = fa_plan_make(c, &p);
	if (rc)
		return rc;
	if ((p.score_mod || p.prob_mod) && !c->run)
		return OM_NEED_VALUE; /* subgraphs run in a session: not folded */
	const int64_t sd[4] = {p.B, p.Hq, p.L, p.S};
	const int64_t sbytes = om_shape_bytes(p.cdt, 4, sd);
	const double nw = (double)p.L * (double)(p.E + p.S + p.Ev) +
			  (double)p.S * (double)(p.E + p.Ev) + 1;
	if (sbytes < 0 || nw * sizeof(double) > (double)(SIZE_MAX / 4))
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "the scores are too large");
	const size_t wbytes = (size_t)nw * sizeof(double);
	if (om_ctx_reserve(c, (size_t)sbytes + wbytes, "the scores"))
		return c->st->kind;
	om_tensor sc = {.dtype = p.cdt, .rank = 4, .nbytes = (size_t)sbytes};
	memcpy(sc.dims, sd, sizeof sd);
	sc.data = malloc((size_t)sbytes + 1);
	double *w = malloc(wbytes);
	if (!sc.data || !w) {
		free(sc.data), free(w);
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	}
	fa_scores(c, &p, w, &sc);
	if (p.score_mod)
		rc = fa_modify(c, p.score_mod, "score_mod", &sc);
	if (!rc)
		fa_softmax(&p, &sc, w);
	if (!rc && p.prob_mod)
		rc = fa_modify(c, p.prob_mod, "prob_mod", &sc);
	if (!rc)
		fa_output(c, &p, &sc, w);
	free(sc.data);
	free(w);
	return rc;
}

/* ---- signatures (ONNX onnx/defs/preview/defs.cc; by hand: not in docs/Changelog.md) ---- */

static const om_sig_attr attrs_preview_FlexAttention_1[] = {{"prob_mod", OM_ATTR_GRAPH, 0},
	{"scale", OM_ATTR_FLOAT, 0}, {"score_mod", OM_ATTR_GRAPH, 0},
	{"softmax_precision", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* FlexAttention-1 (ai.onnx.preview): Q K V -> Y */
static const om_sig sig_preview_FlexAttention_1 = {1, 3, 3, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_preview_FlexAttention_1, NULL};

static const om_op rows[] = {
	{"FlexAttention", "ai.onnx.preview", 1, fa_infer, fa_kernel, OM_OP_EXACT,
	 &sig_preview_FlexAttention_1, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_flex_attn = OM_TABLE(rows);
