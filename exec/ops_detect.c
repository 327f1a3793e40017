/* ops_detect.c — NonMaxSuppression (opset 10/11): per batch and class, boxes above the score
 * threshold in descending score order (lower index first on ties), each kept unless its IoU
 * with a kept box exceeds the threshold; output int64 [selected, 3] (data dependent). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numrun.h"
#include "op.h"
#include "shape_util.h"

typedef struct nms_plan {
	int64_t B, C, S, max_out;
	double iou, score;
	bool has_score, center;
} nms_plan;

static om_kind nms_scalar_f(om_ctx *c, const om_tensor *t, double *v)
{
	if (!om_has_value(t))
		return OM_NEED_VALUE;
	if (om_tensor_numel(t) != 1 || !om_load_f64(t->dtype, t->data, 1, 1, v))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "thresholds are scalars");
	return OM_OK;
}

static om_kind nms_plan_make(om_ctx *c, nms_plan *p)
{
	memset(p, 0, sizeof *p);
	const om_tensor *b = c->nin > 0 ? c->in[0] : NULL, *s = c->nin > 1 ? c->in[1] : NULL;
	if (!b || !s || !om_is_float_type(b->dtype) || !om_is_float_type(s->dtype) ||
	    b->rank != 3 || s->rank != 3 || b->dims[2] != 4 || s->dims[0] != b->dims[0] ||
	    s->dims[2] != b->dims[1])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"boxes [B, S, 4] and scores [B, C, S] of a float type");
	p->B = b->dims[0], p->C = s->dims[1], p->S = b->dims[1];
	p->center = om_attr_int(c->node, "center_point_box", 0) != 0;
	om_kind rc = OM_OK;
	if (c->nin > 2 && c->in[2])
		rc = om_read_scalar_int(c, c->in[2], &p->max_out);
	if (!rc && c->nin > 3 && c->in[3])
		rc = nms_scalar_f(c, c->in[3], &p->iou);
	if (!rc && c->nin > 4 && c->in[4]) {
		p->has_score = true;
		rc = nms_scalar_f(c, c->in[4], &p->score);
	}
	if (!rc && (!om_has_value(b) || !om_has_value(s)))
		rc = OM_NEED_VALUE;
	if (p->max_out < 0)
		p->max_out = 0;
	return rc;
}

/* corners [y1, x1, y2, x2] with y1 <= y2, x1 <= x2 */
static void nms_corners(const nms_plan *p, const double *in, double *o)
{
	if (p->center) { /* [xc, yc, w, h] */
		o[0] = in[1] - in[3] / 2, o[2] = in[1] + in[3] / 2;
		o[1] = in[0] - in[2] / 2, o[3] = in[0] + in[2] / 2;
		return;
	}
	o[0] = fmin(in[0], in[2]), o[2] = fmax(in[0], in[2]);
	o[1] = fmin(in[1], in[3]), o[3] = fmax(in[1], in[3]);
}

static double nms_iou(const double *a, const double *b)
{
	const double ih = fmin(a[2], b[2]) - fmax(a[0], b[0]);
	const double iw = fmin(a[3], b[3]) - fmax(a[1], b[1]);
	if (ih <= 0 || iw <= 0)
		return 0;
	const double inter = ih * iw;
	const double uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
	return uni <= 0 ? 0 : inter / uni;
}

typedef struct nms_cand {
	double score;
	int64_t i;
} nms_cand;

static int nms_cmp(const void *a, const void *b)
{
	const nms_cand *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* runs the selection; writes triples to out (when non-NULL, cap of them); counts them */
static om_kind nms_run(om_ctx *c, const nms_plan *p, int64_t *out, int64_t cap, int64_t *count)
{
	const int64_t nb = p->B * p->S * 4, ns = p->B * p->C * p->S;
	double *box = malloc(sizeof(double) * (size_t)(nb + ns + 1));
	nms_cand *cand = malloc(sizeof(nms_cand) * (size_t)(p->S + 1));
	int64_t *kept = malloc(sizeof(int64_t) * (size_t)(p->S + 1));
	if (!box || !cand || !kept) {
		free(box), free(cand), free(kept);
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	}
	double *sc = box + nb;
	om_load_f64(c->in[0]->dtype, c->in[0]->data, 1, nb, box);
	om_load_f64(c->in[1]->dtype, c->in[1]->data, 1, ns, sc);
	for (int64_t i = 0; i < p->B * p->S; i++) {
		double o[4];
		nms_corners(p, box + i * 4, o);
		memcpy(box + i * 4, o, sizeof o);
	}
	int64_t total = 0;
	om_kind rc = OM_OK;
	for (int64_t b = 0; b < p->B; b++)
		for (int64_t k = 0; k < p->C; k++) {
			const double *s = sc + (b * p->C + k) * p->S;
			int64_t nc = 0, nk = 0;
			for (int64_t i = 0; i < p->S; i++)
				if (s[i] == s[i] && (!p->has_score || s[i] > p->score))
					cand[nc].score = s[i], cand[nc++].i = i;
			qsort(cand, (size_t)nc, sizeof *cand, nms_cmp);
			for (int64_t j = 0; j < nc && nk < p->max_out; j++) {
				const double *bb = box + b * p->S * 4, *bj = bb + cand[j].i * 4;
				bool keep = true;
				for (int64_t q = 0; q < nk && keep; q++)
					keep = nms_iou(bj, bb + kept[q] * 4) <= p->iou;
				if (!keep)
					continue;
				kept[nk++] = cand[j].i;
				if (out && total >= cap) {
					rc = om_error(c->st, OM_ERR_INTERNAL, c->node,
						      "count changed");
					break;
				}
				if (out)
					out[total * 3] = b, out[total * 3 + 1] = k,
					out[total * 3 + 2] = cand[j].i;
				total++;
			}
		}
	free(box), free(cand), free(kept);
	*count = total;
	return rc;
}

static om_kind nms_infer(om_ctx *c)
{
	nms_plan p;
	int64_t n = 0;
	om_kind rc = nms_plan_make(c, &p);
	if (!rc)
		rc = nms_run(c, &p, NULL, 0, &n);
	if (!rc)
		om_set_shape(c->out[0], OM_INT64, 2, (int64_t[]){n, 3});
	return rc;
}

static om_kind nms_kernel(om_ctx *c)
{
	nms_plan p;
	int64_t n = 0;
	om_kind rc = nms_plan_make(c, &p);
	if (!rc)
		rc = nms_run(c, &p, c->out[0]->data, c->out[0]->dims[0], &n);
	if (!rc && n != c->out[0]->dims[0])
		rc = om_error(c->st, OM_ERR_INTERNAL, c->node, "count changed");
	return rc;
}

static const om_op rows[] = {
	{"NonMaxSuppression", "", 10, nms_infer, nms_kernel, OM_OP_EXACT | OM_OP_DATA_DEPENDENT},
};

const om_op_table om_ops_detect = OM_TABLE(rows);
