/* conv_dw_int.c — the depthwise integer convolution of fast mode (conv_dw_int.h). */
#include <string.h>

#include "conv_dw_flat.h"
#include "conv_dw_int.h"
#include "conv_dw_lanes.h"
#include "gemm_int.h"
#include "parallel.h"

/* taps whose partial sums of products (each at most 255 x 255) stay below 2^24: a float
 * holds every one exactly, whatever the order of the additions */
enum { DW_MAX_TAPS = 258 };
/* multiply-adds worth a thread (conv_depthwise.c's) */
enum { DW_GRAIN_MACS = 1 << 16 };

/* q's plane and phase geometry; false when the phase loop does not take it */
static bool dw_geometry(const om_conv_int *q, om_dw_plane *p, om_dw_flat *f, int64_t *tap)
{
	const om_spatial *sp = q->sp;
	if (sp->n < 1 || sp->n > 2 || q->W->rank != sp->n + 2 || q->W->dims[1] != 1 ||
	    q->group != q->C || q->C < 1 || q->M % q->C)
		return false;
	int64_t taps = 1;
	for (int32_t i = 0; i < sp->n; i++)
		taps *= sp->k[i];
	if (taps < 1 || taps > DW_MAX_TAPS)
		return false;
	*p = om_dw_plane_of(sp);
	return om_dw_flat_plan(p, f, tap);
}

bool om_qconv_dw_takes(const om_ctx *c, const om_conv_int *q)
{
	om_dw_plane p;
	om_dw_flat f;
	int64_t tap[DW_MAX_TAPS];
	return !c->exact && !om_dnnl_int8_exact() && dw_geometry(q, &p, &f, tap);
}

typedef struct dwq_job {
	const om_conv_int *q;
	const om_qconv_out *r;
	const om_dw_plane *p;
	const om_dw_flat *f;
	const int64_t *tap;
	float *buf; /* `per` floats a slot: the phase planes (padding zeroed once), flat sums,
		     * the channel's weights, its outputs (flat bytes, or int32 sums for a bias
		     * over 2^30) */
	int64_t per;
	void *y;
	bool narrow; /* every bias within 2^30 in magnitude */
} dwq_job;

/* the flat sums yw requantized into the channel's outputs y (OH x OW); out: nyw scratch
 * elements of 4 bytes */
static void dwq_out(const dwq_job *j, const float *yw, int32_t bias, float scale, void *out,
		    uint8_t *y)
{
	const om_dw_plane *p = j->p;
	const om_qconv_out *r = j->r;
	const int64_t Wq = j->f->Wq;
	if (j->narrow) { /* the flat rows at once, then their outputs */
		om_conv_requant_f32(yw, j->f->nyw, bias, scale, r->y_zp, r->s8, out);
		om_dw_flat_compact_u8(p, j->f, out, y);
		return;
	}
	int32_t *sums = out;
	for (int64_t oh = 0; oh < p->OH; oh++)
		for (int64_t ow = 0; ow < p->OW; ow++)
			sums[oh * p->OW + ow] = (int32_t)yw[oh * Wq + ow];
	om_conv_requant(sums, p->OH * p->OW, bias, scale, r->y_zp, r->s8, y);
}

static void dwq_piece(void *arg, int64_t c0, int64_t c1, int slot)
{
	const dwq_job *j = arg;
	const om_conv_int *q = j->q;
	const om_qconv_out *r = j->r;
	const om_dw_plane *p = j->p;
	const int64_t nk = p->kh * p->kw, P = p->OH * p->OW, Pin = p->H * p->W;
	float *xq = j->buf + (size_t)slot * (size_t)j->per, *yw = xq + j->f->nbuf;
	float *w = yw + j->f->nyw, *out = w + nk;
	const int64_t nwz = q->wz ? om_tensor_numel(q->wz) : 0;
	const int32_t xz = q->xz ? om_q8_elem(q->xz, 0) : 0;
	const bool sgn = q->X->dtype == OM_INT8;
	for (int64_t nm = c0; nm < c1; nm++) {
		const int64_t n = nm / q->M, m = nm % q->M;
		const int32_t wz = nwz ? om_q8_elem(q->wz, nwz == 1 ? 0 : m) : 0;
		for (int64_t t = 0; t < nk; t++)
			w[t] = (float)(om_q8_elem(q->W, m * nk + t) - wz);
		const uint8_t *xc = (const uint8_t *)q->X->data +
				    (n * q->C + m / (q->M / q->C)) * Pin;
		om_dw_flat_sums_q8(p, j->f, j->tap, xc, sgn, xz, w, xq, yw);
		dwq_out(j, yw, r->bias ? r->bias[m] : 0, om_qconv_scale(r, m), out,
			(uint8_t *)j->y + nm * P);
	}
}

om_kind om_qconv_dw(om_ctx *c, const om_conv_int *q, const om_qconv_out *r, void *y)
{
	om_dw_plane p;
	om_dw_flat f;
	int64_t tap[DW_MAX_TAPS];
	if (!dw_geometry(q, &p, &f, tap))
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"not a depthwise conv the phase loop takes");
	const bool narrow = om_qconv_bias_narrow(r, q->M);
	if (om_qconv_dw_lanes_takes(&f, narrow))
		return om_qconv_dw_lanes(c, q, r, &p, &f, tap, y);
	om_ctx_chose(c, OM_CONV_DW_INT);
	const int64_t nk = p.kh * p.kw, P = p.OH * p.OW, planes = q->N * q->M;
	if (planes < 1 || P < 1)
		return OM_OK;
	const double macs = (double)P * (double)nk;
	const int64_t grain = macs >= DW_GRAIN_MACS ? 1 : (int64_t)(DW_GRAIN_MACS / (macs + 1)) + 1;
	const int slots = om_par_slots(c->threads, planes, grain);
	dwq_job j = {q, r, &p, &f, tap, NULL,
		     (f.nbuf + f.nyw + nk + f.nyw + 15) / 16 * 16, y, narrow};
	om_kind rc = om_ctx_scratch(c, sizeof(float) * (size_t)j.per * (size_t)slots,
				    "the depthwise phase planes", (void **)&j.buf);
	if (rc)
		return rc;
	for (int s = 0; s < slots; s++)
		memset(j.buf + (size_t)s * (size_t)j.per, 0, sizeof(float) * (size_t)f.nbuf);
	om_par_for_slots(c->threads, planes, grain, dwq_piece, &j);
	om_ctx_scratch_done(c, j.buf);
	return OM_OK;
}
