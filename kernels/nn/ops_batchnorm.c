/* ops_batchnorm.c — BatchNormalization: inference (per channel, or per element at opset 7's
 * spatial = 0) and training (14+), in double: exact; fast mode's float path and its
 * channel-blocked layout; the activation the planner absorbs after it (OM_OP_EPILOGUE). */
/* -O2 vectorizes only loops of known trip count; quiet comparisons let selects vectorize
 * (results are unchanged: no reassociation, and detmath.h switches contraction off) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic", "no-trapping-math")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "conv_epilogue.h"
#include "layout.h"
#include "norm_common.h"
#include "numrun.h"
#include "parallel.h"

/* Inference: Y = (X - mean) / sqrt(var + eps) * scale + B per channel (per element of a
 * sample when opset 7's spatial = 0). Training (14+): the batch's own statistics, and the
 * running statistics as outputs 1 and 2. The rows' param: BN_SPATIAL where the node has
 * `spatial` (opset 7), BN_TRAINING where it has `training_mode` (14+). */
enum { BN_SPATIAL = 1, BN_TRAINING = 2 };

/* the node asks for per-element parameters (spatial = 0) or for training */
static bool bn_per_elem(const om_ctx *c)
{
	return c->op->param & BN_SPATIAL && om_attr_int(c->node, "spatial", 1) == 0;
}

static bool bn_training(const om_ctx *c)
{
	return c->op->param & BN_TRAINING && om_attr_int(c->node, "training_mode", 0);
}

typedef struct bn_plan {
	int64_t C, spatial, per; /* per: parameters per sample (C, or C * spatial) */
	bool training;
} bn_plan;

static om_kind bn_prepare(om_ctx *c, bn_plan *p, double *par)
{
	om_kind rc = om_norm_channels(c, &p->C, &p->spatial);
	if (rc)
		return rc;
	p->training = bn_training(c);
	const bool per_elem = bn_per_elem(c);
	p->per = per_elem ? p->C * p->spatial : p->C;
	if (p->training && per_elem)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "training without spatial");
	static const char *const names[] = {"scale", "B", "mean", "var"};
	for (int i = 0; i < 4 && !rc; i++)
		rc = om_norm_load_param(c, i + 1 < c->nin ? c->in[i + 1] : NULL, p->per,
					par ? par + i * p->per : NULL, names[i]);
	for (int i = 1; i < c->nout && !rc; i++)
		if (c->out[i] && (!p->training || i > 2))
			rc = om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
				      "output %d is only made in training mode (opset 14+)", i);
	return rc;
}

static om_kind bn_infer(om_ctx *c)
{
	bn_plan p = {0};
	om_kind rc = bn_prepare(c, &p, NULL);
	if (rc)
		return rc;
	om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	for (int i = 1; i < 3 && i < c->nout; i++)
		if (c->out[i])
			om_set_shape(c->out[i], c->in[i + 2]->dtype, 1, &p.C);
	return OM_OK;
}

/* row (b, ch) of x: its spatial elements, as double */
static void bn_row(const om_tensor *x, const bn_plan *p, int64_t b, int64_t ch, double *row)
{
	const size_t off = (size_t)((b * p->C + ch) * p->spatial) * om_dtype_size(x->dtype);
	om_load_f64(x->dtype, (const char *)x->data + off, 1, p->spatial, row);
}

/* per-channel mean and population variance over N and the spatial dims, in double */
static void batch_stats(const om_tensor *x, const bn_plan *p, double *mean, double *var,
			double *row)
{
	const int64_t N = x->dims[0], cnt = N * p->spatial;
	for (int64_t ch = 0; ch < p->C; ch++) {
		double s = 0, q = 0;
		for (int64_t b = 0; b < N; b++) {
			bn_row(x, p, b, ch, row);
			for (int64_t k = 0; k < p->spatial; k++)
				s += row[k];
		}
		mean[ch] = cnt > 0 ? s / (double)cnt : 0;
		for (int64_t b = 0; b < N; b++) {
			bn_row(x, p, b, ch, row);
			for (int64_t k = 0; k < p->spatial; k++) {
				const double d = row[k] - mean[ch];
				const double d2 = d * d;
				q += d2;
			}
		}
		var[ch] = cnt > 0 ? q / (double)cnt : 0;
	}
}

/* Fast mode's y = x * a + b, a and b per channel: rows of `len` floats, each row an (image,
 * channel) of plain X or an (image, block) of blocked X, whose `lanes` channels interleave (a
 * and b then hold `lanes` values a row, 0 in the padding); units [lo, hi) are pieces of
 * `piece` floats (whole pixels) of a row: NHWC's one block an image splits too */
typedef struct bn_fast_job {
	const float *x;
	float *y;
	const float *a, *b;
	int64_t rows, len, lanes, piece, pieces; /* rows: of one image; pieces: of a row */
	const om_conv_epi *post; /* the activation the planner folded in (om_ctx.post), or NULL */
} bn_fast_job;

/* relu: a Relu the planner folded in, applied in the same pass (NaN stays NaN, as Relu's) */
static inline __attribute__((always_inline)) void
bn_lanes(const float *restrict x, float *restrict y, const float *a, const float *b, int64_t len,
	 const int64_t lanes, const bool relu)
{
	for (int64_t s = 0; s < len; s += lanes)
		for (int64_t l = 0; l < lanes; l++) {
			const float v = x[s + l] * a[l] + b[l];
			y[s + l] = relu && v < 0 ? 0.0f : v;
		}
}

OM_CLONES static void
bn_fast_piece(void *arg, int64_t lo, int64_t hi)
{
	const bn_fast_job *j = arg;
	for (int64_t u = lo; u < hi; u++) {
		const int64_t r = u / j->pieces, at = u % j->pieces * j->piece;
		const int64_t len = j->len - at < j->piece ? j->len - at : j->piece;
		const float *a = j->a + r % j->rows * j->lanes, *b = j->b + r % j->rows * j->lanes;
		const float *x = j->x + r * j->len + at;
		float *y = j->y + r * j->len + at;
		const bool relu = j->post && j->post->act == OM_ACT_RELU;
		if (j->lanes == 16 && relu)
			bn_lanes(x, y, a, b, len, 16, true);
		else if (j->lanes == 16)
			bn_lanes(x, y, a, b, len, 16, false);
		else if (j->lanes == 8)
			bn_lanes(x, y, a, b, len, 8, relu);
		else if (j->lanes == 1)
			bn_lanes(x, y, a, b, len, 1, relu);
		else
			bn_lanes(x, y, a, b, len, j->lanes, relu);
		/* other activations while the piece is in cache */
		if (j->post && !relu)
			om_conv_epi_row(j->post, 0, 0, y, len);
	}
}

/* y = x * a + b with a = scale / sqrt(var + eps) and b = B - mean * a per channel (computed
 * in double), split over the run's threads; X plain (lanes 1) or blocked by `lanes` */
static om_kind bn_fast(om_ctx *c, const bn_plan *p, const double *const par[4], double eps,
		       int64_t lanes)
{
	const om_tensor *x = c->in[0];
	const int64_t rows = (p->C + lanes - 1) / lanes, n = rows * lanes;
	om_conv_epi post = {0}; /* the activation the planner folded in (OM_OP_EPILOGUE) */
	om_kind rc = om_conv_epi_activation(c, &post);
	if (rc)
		return rc;
	float *ab = calloc((size_t)(2 * n + 1), sizeof *ab);
	if (!ab)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "no memory for the parameters");
	for (int64_t ch = 0; ch < p->C; ch++) {
		const double a = par[0][ch] / sqrt(par[3][ch] + eps);
		ab[ch] = (float)a;
		ab[n + ch] = (float)(par[1][ch] - par[2][ch] * a);
	}
	enum { GRAIN = 1 << 15 }; /* elements worth a thread */
	const int64_t len = p->spatial * lanes, px = GRAIN / lanes > 0 ? GRAIN / lanes : 1;
	const int64_t piece = len > GRAIN ? px * lanes : (len > 0 ? len : 1);
	bn_fast_job j = {x->data, c->out[0]->data, ab, ab + n, rows, len, lanes,
			 piece,	  (len + piece - 1) / piece, c->post ? &post : NULL};
	om_par_for(c->threads, x->dims[0] * rows * j.pieces, GRAIN / (piece + 1) + 1,
		   bn_fast_piece, &j);
	free(ab);
	return OM_OK;
}

/* BatchNormalization in inference on float32 (N, C, H, W) takes X and Y channel-blocked in
 * fast mode (op.h), both or neither: densenet's BatchNormalization -> Relu -> Conv between
 * its blocked Concats */
static void bn_layout(const om_ctx *c, om_layout_req *r)
{
	*r = (om_layout_req){0};
	const om_tensor *x = c->in[0];
	for (int32_t i = 1; i < c->nout; i++)
		if (c->out[i])
			return;
	if (c->exact || !x || x->dtype != OM_FLOAT || x->rank != 4 || bn_per_elem(c) ||
	    bn_training(c))
		return;
	r->may = r->tied = OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0);
}

/* X (N, Cb, H, W, b) and Y alike: C from the parameters' length (bn_layout's choice) */
static om_kind bn_blocked(om_ctx *c)
{
	const om_tensor *X = c->in[0], *S = c->nin > 1 ? c->in[1] : NULL;
	const int64_t b = X->rank == 5 ? X->dims[4] : 0, C = S && S->rank == 1 ? S->dims[0] : -1;
	if (c->blocked != (OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0)) || b < 1 || X->rank != 5 ||
	    X->dims[4] != b || C < 1 || (C + b - 1) / b != X->dims[1])
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "blocked BatchNormalization");
	const om_tensor lx = om_layout_logical(X, C);
	const om_tensor *in[5] = {&lx};
	for (int32_t i = 1; i < c->nin && i < 5; i++)
		in[i] = c->in[i];
	om_ctx lc = *c;
	lc.in = in, lc.nin = c->nin < 5 ? c->nin : 5;
	bn_plan p = {.C = C, .spatial = X->dims[2] * X->dims[3]};
	double *par;
	om_kind rc = om_ctx_scratch(c, sizeof(double) * (size_t)(4 * C), "the parameters",
				    (void **)&par);
	if (rc)
		return rc;
	rc = bn_prepare(&lc, &p, par);
	const double *const ps[4] = {par, par + C, par + 2 * C, par + 3 * C};
	if (!rc)
		rc = bn_fast(c, &p, ps, om_attr_float(c->node, "epsilon", 1e-5f), b);
	om_ctx_scratch_done(c, par);
	return rc;
}

static om_kind bn_kernel(om_ctx *c)
{
	if (c->blocked)
		return bn_blocked(c);
	bn_plan p = {0};
	om_kind rc = om_norm_channels(c, &p.C, &p.spatial);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	/* 4 parameter sets of per (bn_prepare's: C, or C * spatial), the batch statistics, one
	 * spatial row */
	const int64_t per = bn_per_elem(c) ? p.C * p.spatial : p.C;
	double *par;
	if ((rc = om_ctx_scratch(c, sizeof(double) * (size_t)(4 * per + 2 * p.C + p.spatial + 1),
				 "the parameters", (void **)&par)))
		return rc;
	if ((rc = bn_prepare(c, &p, par))) {
		om_ctx_scratch_done(c, par);
		return rc;
	}
	double *scale = par, *bias = par + p.per, *mean = par + 2 * p.per, *var = par + 3 * p.per;
	double *bmean = par + 4 * p.per, *bvar = bmean + p.C, *row = bvar + p.C;
	const double eps = om_attr_float(c->node, "epsilon", 1e-5f);
	if (p.training) {
		const double mom = om_attr_float(c->node, "momentum", 0.9f);
		batch_stats(x, &p, bmean, bvar, row);
		for (int i = 1; i < 3 && i < c->nout; i++) {
			if (!c->out[i])
				continue;
			const double *in = i == 1 ? mean : var, *cur = i == 1 ? bmean : bvar;
			for (int64_t ch = 0; ch < p.C; ch++) {
				const double v = in[ch] * mom + cur[ch] * (1 - mom);
				om_store_f64(c->out[i]->dtype, (char *)c->out[i]->data +
						     (size_t)ch * om_dtype_size(c->out[i]->dtype),
					     1, &v, 1);
			}
		}
		mean = bmean, var = bvar;
	}
	const size_t es = om_dtype_size(x->dtype);
	if (!c->exact && x->dtype == OM_FLOAT && p.per == p.C) {
		const double *const ps[4] = {scale, bias, mean, var};
		rc = bn_fast(c, &p, ps, eps, 1);
		om_ctx_scratch_done(c, par);
		return rc;
	}
	for (int64_t b = 0; b < x->dims[0]; b++)
		for (int64_t ch = 0; ch < p.C; ch++) {
			bn_row(x, &p, b, ch, row);
			for (int64_t k = 0; k < p.spatial; k++) {
				const int64_t j = p.per == p.C ? ch : ch * p.spatial + k;
				const double d = (row[k] - mean[j]) / sqrt(var[j] + eps);
				row[k] = d * scale[j] + bias[j];
			}
			const size_t off = (size_t)((b * p.C + ch) * p.spatial) * es;
			om_store_f64(x->dtype, (char *)c->out[0]->data + off, 1, row, p.spatial);
		}
	om_ctx_scratch_done(c, par);
	om_conv_epi post = {0}; /* the planner absorbs activations of float outputs only */
	if (c->post && c->out[0]->dtype == OM_FLOAT && !(rc = om_conv_epi_activation(c, &post)))
		om_conv_epi_row(&post, 0, 0, c->out[0]->data, om_tensor_numel(c->out[0]));
	return rc;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_BatchNormalization_7[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{"momentum", OM_ATTR_FLOAT, 0}, {"spatial", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* BatchNormalization-7: X scale B mean var -> Y [mean] [var] [saved_mean] [saved_var] */
static const om_sig sig_BatchNormalization_7 = {7, 5, 5, 1, 5, 0x0, 0x1e, 0x1f, 0x1f, 0x0, 0x0,
	attrs_BatchNormalization_7, NULL};
static const om_sig_attr attrs_BatchNormalization_9[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{"momentum", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* BatchNormalization-9: X scale B mean var -> Y [mean] [var] [saved_mean] [saved_var] */
static const om_sig sig_BatchNormalization_9 = {9, 5, 5, 1, 5, 0x0, 0x1e, 0x1f, 0x1f, 0x0, 0x0,
	attrs_BatchNormalization_9, NULL};
static const om_sig_attr attrs_BatchNormalization_14[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{"momentum", OM_ATTR_FLOAT, 0}, {"training_mode", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* BatchNormalization-14: X scale B input_mean input_var -> Y [running_mean] [running_var] */
static const om_sig sig_BatchNormalization_14 = {14, 5, 5, 1, 3, 0x0, 0x6, 0x1f, 0x7, 0x1f, 0x7,
	attrs_BatchNormalization_14, NULL};

/* ---- end of signatures ---- */

/* BatchNormalization applies the activation after it (OM_OP_EPILOGUE: densenet's BN -> Relu) */
#define BN_FLAGS (OM_OP_EXACT | OM_OP_LAYOUT | OM_OP_EPILOGUE)

static const om_op rows[] = {
	{"BatchNormalization", "", 7, bn_infer, bn_kernel, BN_FLAGS, &sig_BatchNormalization_7,
	 OM_OPC_BATCH_NORM, bn_layout, BN_SPATIAL, NULL},
	{"BatchNormalization", "", 9, bn_infer, bn_kernel, BN_FLAGS, &sig_BatchNormalization_9,
	 OM_OPC_BATCH_NORM, bn_layout, 0, NULL},
	{"BatchNormalization", "", 14, bn_infer, bn_kernel, BN_FLAGS, &sig_BatchNormalization_14,
	 OM_OPC_BATCH_NORM, bn_layout, BN_TRAINING, NULL},
};

const om_op_table om_ops_batchnorm = OM_TABLE(rows);
