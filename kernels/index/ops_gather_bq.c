/* ops_gather_bq.c — com.microsoft GatherBlockQuantized: Gather of a block-quantized table
 * (quantized embeddings). data int4/uint4 (any gather_axis and quantize_axis), or uint8 with
 * bits 2/4/8 packed along the last axis (gather_axis 0, quantize_axis last, as MatMulNBits
 * stores its weights); scales float/float16/bfloat16 per block of block_size along
 * quantize_axis, the output's type; zero points of data's type (uint8: packed like data along
 * the last axis; absent: 0 for int4/uint4, 2^(bits-1) for uint8). Output element =
 * float(code - zero point) * float(scale), stored in the scales' type, as ONNX Runtime 1.30's
 * CPU kernel computes it. An index outside [-s, s) is an error (1.30; later versions write
 * zeros). */
#include <string.h>

#include "index_util.h"
#include "numrun.h"
#include "subbyte.h"

typedef struct gbq_plan {
	const om_tensor *data, *ix, *sc, *zp;
	int32_t ga, qa;         /* gather_axis, quantize_axis, normalized */
	int64_t block, bits;
	int64_t comps;          /* codes per data element: 8 / bits for uint8, else 1 */
	int64_t outer, axis_n;  /* elements before gather_axis; data's extent at it */
	int64_t row;            /* codes after gather_axis (one gathered slice) */
	int64_t qd, qn;         /* codes along quantize_axis; data elements after it */
	int64_t nblk;           /* blocks along quantize_axis */
	int64_t zrow;           /* uint8 packed zero points: bytes per row of blocks */
} gbq_plan;

static om_kind gbq_bad(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", what);
}

static int64_t gbq_prod(const int64_t *d, int32_t from, int32_t to)
{
	int64_t p = 1;
	for (int32_t i = from; i < to; i++)
		p *= d[i];
	return p;
}

/* the attributes, against data's type (ONNX Runtime's constructor checks) */
static om_kind gbq_attrs(om_ctx *c, gbq_plan *p)
{
	const om_tensor *d = p->data;
	const bool u8 = d->dtype == OM_UINT8;
	if (!u8 && d->dtype != OM_INT4 && d->dtype != OM_UINT4)
		return gbq_bad(c, "data must be int4, uint4 or uint8");
	if (d->rank < 1)
		return gbq_bad(c, "data must have rank >= 1");
	p->block = om_attr_int(c->node, "block_size", 128);
	if (p->block < 16 || (p->block & (p->block - 1)))
		return gbq_bad(c, "block_size must be a power of 2, at least 16");
	p->bits = om_attr_int(c->node, "bits", 4);
	if (u8 ? p->bits != 2 && p->bits != 4 && p->bits != 8 : p->bits != 4)
		return gbq_bad(c, "bits must be 4 (int4/uint4) or 2, 4, 8 (uint8)");
	p->comps = u8 ? 8 / p->bits : 1;
	om_kind rc = om_norm_axis(c, om_attr_int(c->node, "gather_axis", 0), d->rank, &p->ga);
	if (!rc)
		rc = om_norm_axis(c, om_attr_int(c->node, "quantize_axis", 1), d->rank, &p->qa);
	if (rc)
		return rc;
	if (u8 && (p->ga != 0 || p->qa != d->rank - 1 || p->ga == p->qa))
		return gbq_bad(c, "uint8 data needs gather_axis 0 and quantize_axis last (rank >= 2)");
	return OM_OK;
}

/* scales [data's dims, blocks along quantize_axis] and zero points beside them */
static om_kind gbq_quant_shapes(om_ctx *c, gbq_plan *p)
{
	const om_tensor *d = p->data, *s = p->sc, *z = p->zp;
	if (s->dtype != OM_FLOAT && s->dtype != OM_FLOAT16 && s->dtype != OM_BFLOAT16)
		return gbq_bad(c, "scales must be float, float16 or bfloat16");
	if (s->rank != d->rank)
		return gbq_bad(c, "data and scales must have the same rank");
	p->qd = d->dims[p->qa] * p->comps;
	p->qn = gbq_prod(d->dims, p->qa + 1, d->rank);
	p->nblk = (p->qd + p->block - 1) / p->block;
	for (int32_t i = 0; i < d->rank; i++)
		if (s->dims[i] != (i == p->qa ? p->nblk : d->dims[i]))
			return gbq_bad(c, "data and scales do not match shapes");
	if (!z)
		return OM_OK;
	if (z->dtype != d->dtype || z->rank != s->rank)
		return gbq_bad(c, "zero_points must have data's type and scales' rank");
	p->zrow = (p->nblk + p->comps - 1) / p->comps;
	for (int32_t i = 0; i < s->rank; i++)
		if (z->dims[i] != (i == p->qa && p->comps > 1 ? p->zrow : s->dims[i]))
			return gbq_bad(c, "scales and zero_points shapes do not match");
	return OM_OK;
}

static om_kind gbq_plan_make(om_ctx *c, gbq_plan *p)
{
	*p = (gbq_plan){.data = om_ctx_in(c, 0), .ix = om_ctx_in(c, 1), .sc = om_ctx_in(c, 2),
			.zp = om_ctx_in(c, 3)};
	if (!p->data || !p->ix || !p->sc)
		return gbq_bad(c, "needs data, indices and scales");
	om_kind rc = gbq_attrs(c, p);
	if (!rc)
		rc = om_ix_check_index_type(c, p->ix, "indices");
	if (!rc)
		rc = gbq_quant_shapes(c, p);
	if (rc)
		return rc;
	const om_tensor *d = p->data;
	p->outer = gbq_prod(d->dims, 0, p->ga);
	p->axis_n = d->dims[p->ga];
	p->row = gbq_prod(d->dims, p->ga + 1, d->rank) * p->comps;
	return OM_OK;
}

static om_kind gbq_infer(om_ctx *c)
{
	gbq_plan p;
	om_kind rc = gbq_plan_make(c, &p);
	if (rc)
		return rc;
	const om_tensor *d = p.data, *ix = p.ix;
	if (d->rank - 1 + ix->rank > OM_MAX_RANK)
		return gbq_bad(c, "the output's rank is too large");
	int64_t dims[OM_MAX_RANK];
	int32_t r = 0;
	for (int32_t i = 0; i < p.ga; i++)
		dims[r++] = d->dims[i];
	for (int32_t i = 0; i < ix->rank; i++)
		dims[r++] = ix->dims[i];
	for (int32_t i = p.ga + 1; i < d->rank; i++)
		dims[r++] = d->dims[i];
	if (p.comps > 1)
		dims[r - 1] *= p.comps; /* quantize_axis is data's last, after gather_axis 0 */
	return om_ix_set_shape(c, c->out[0], p.sc->dtype, r, dims);
}

/* code e (in codes, data's row-major order) of data, as an integer */
static int32_t gbq_code(const gbq_plan *p, const void *src, int64_t e)
{
	if (p->data->dtype == OM_UINT8)
		return p->bits == 8 ? ((const uint8_t *)src)[e] : om_sub_get(src, e, (int)p->bits);
	const uint8_t v = om_sub_get(src, e, 4);
	return p->data->dtype == OM_INT4 ? (int32_t)om_sub_signed(v, 4) : v;
}

/* the zero point of scale s */
static int32_t gbq_zero(const gbq_plan *p, int64_t s)
{
	if (!p->zp)
		return p->data->dtype == OM_UINT8 ? 1 << (p->bits - 1) : 0;
	if (p->comps == 1)
		return gbq_code(p, p->zp->data, s);
	/* uint8 with bits < 8: each row of blocks (quantize_axis last, so qn == 1) packed */
	const uint8_t *row = (const uint8_t *)p->zp->data + s / p->nblk * p->zrow;
	return om_sub_get(row, s % p->nblk, (int)p->bits);
}

/* scale s as float; read with byte moves (OM_OP_UNALIGNED: a misaligned borrowed table) */
static float gbq_scale(const gbq_plan *p, int64_t s)
{
	const unsigned char *at = (const unsigned char *)p->sc->data;
	if (p->sc->dtype == OM_FLOAT) {
		float f;
		memcpy(&f, at + (size_t)s * sizeof f, sizeof f);
		return f;
	}
	uint16_t h;
	memcpy(&h, at + (size_t)s * sizeof h, sizeof h);
	return p->sc->dtype == OM_FLOAT16 ? om_half_to_float(h) : om_bf16_to_float(h);
}

/* one gathered slice: codes [base, base + row) of data, which `codes` holds from code c0 on,
 * into out from element o0. Element e is (x, y, z) around the quantize axis (y along it, in
 * block y / block): counted along, not divided out per element (5 divisions an element made a
 * 128-token embedding 3 ms); a scale and its zero point read again only when the block
 * changes. */
static void gbq_slice(const gbq_plan *p, const void *codes, int64_t c0, int64_t base,
		      int32_t odt, void *out, int64_t o0)
{
	const int64_t span = p->qd * p->qn;
	float *of = odt == OM_FLOAT ? out : NULL;
	uint16_t *oh = odt == OM_FLOAT ? NULL : out;
	int64_t x = base / span, y = base % span / p->qn, z = base % p->qn;
	int64_t yb = y / p->block, yr = y % p->block, last = -1;
	float scale = 0;
	int32_t zero = 0;
	for (int64_t i = 0; i < p->row; i++) {
		const int64_t s = (x * p->nblk + yb) * p->qn + z;
		if (s != last)
			last = s, zero = gbq_zero(p, s), scale = gbq_scale(p, s);
		const float v = (float)(gbq_code(p, codes, base - c0 + i) - zero) * scale;
		if (of)
			of[o0 + i] = v;
		else
			oh[o0 + i] = odt == OM_FLOAT16 ? om_float_to_half(v) : om_float_to_bf16(v);
		if (++z < p->qn)
			continue;
		z = 0;
		if (++yr == p->block)
			yr = 0, yb++;
		if (++y == p->qd)
			y = 0, yb = 0, yr = 0, x++;
	}
}

static om_kind gbq_kernel(om_ctx *c)
{
	gbq_plan p;
	om_kind rc = gbq_plan_make(c, &p);
	if (!rc)
		rc = om_ix_check_indices(c, p.ix, p.axis_n, "index");
	if (rc)
		return rc;
	const int64_t ni = om_tensor_numel(p.ix);
	void *out = c->out[0]->data;
	const int32_t odt = p.sc->dtype;
	/* a slice of whole bytes, read from the model file when the session keeps the table
	 * out of memory (om_ctx_read_const) */
	const size_t bytes = (size_t)(p.row * p.bits / 8);
	void *buf = NULL;
	bool by_file = p.row * p.bits % 8 == 0 && bytes >= OM_READ_CONST_MIN && ni > 0 &&
		       om_ctx_read_const(c, 0, 0, 0, NULL);
	if (by_file && (rc = om_ctx_scratch(c, bytes, "a gathered row", &buf)))
		return rc;
	for (int64_t m = 0; m < p.outer; m++)
		for (int64_t j = 0; j < ni; j++) {
			int64_t k = om_ix_at(p.ix, j);
			k += k < 0 ? p.axis_n : 0;
			const int64_t base = (m * p.axis_n + k) * p.row;
			by_file = by_file &&
				  om_ctx_read_const(c, 0, (size_t)(base * p.bits / 8), bytes, buf);
			gbq_slice(&p, by_file ? buf : p.data->data, by_file ? base : 0, base, odt,
				  out, (m * ni + j) * p.row);
		}
	om_ctx_scratch_done(c, buf);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_ms_GatherBlockQuantized_1[] = {{"bits", OM_ATTR_INT, 0},
	{"block_size", OM_ATTR_INT, 0}, {"gather_axis", OM_ATTR_INT, 0},
	{"quantize_axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GatherBlockQuantized-1: data indices scales [zero_points] -> output */
static const om_sig sig_ms_GatherBlockQuantized_1 = {1, 3, 4, 1, 1, 0x8, 0x0, 0x0, 0x0, 0x0,
	0x0, attrs_ms_GatherBlockQuantized_1, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"GatherBlockQuantized", "com.microsoft", 1, gbq_infer, gbq_kernel,
	 OM_OP_EXACT | OM_OP_QDQ | OM_OP_UNALIGNED, &sig_ms_GatherBlockQuantized_1, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_gather_bq = OM_TABLE(rows);
