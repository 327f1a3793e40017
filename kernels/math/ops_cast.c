/* ops_cast.c — Cast and CastLike, and om_cast_elems (cast.h) which other ops reuse.
 *
 * A conversion goes through a pivot in blocks: floating sources are read as double, signed
 * integers and bool as int64_t, unsigned integers as uint64_t, strings are parsed into the
 * pivot that suits the target; then the pivot is written in the target type. Float to integer
 * never has undefined behaviour: NaN is 0, values saturate to int64 and then wrap to the
 * target width (what x86 compilers give for in-range int32 values). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cast.h"
#include "cast_half.h"
#include "ew.h"
#include "float8.h"
#include "subbyte.h"

enum { BLOCK = 256 };
enum pv_kind { PV_F, PV_I, PV_U };

typedef struct pivot {
	int kind;
	union {
		double f[BLOCK];
		int64_t i[BLOCK];
		uint64_t u[BLOCK];
	};
} pivot;

static int kind_of(int32_t dt)
{
	switch (dt) {
	case OM_FLOAT: case OM_DOUBLE: case OM_FLOAT16: case OM_BFLOAT16:
	case OM_FLOAT8E4M3FN: case OM_FLOAT8E4M3FNUZ: case OM_FLOAT8E5M2: case OM_FLOAT8E5M2FNUZ:
	case OM_FLOAT4E2M1: case OM_FLOAT8E8M0:
		return PV_F;
	case OM_INT8: case OM_INT16: case OM_INT32: case OM_INT64: case OM_BOOL: case OM_INT4:
	case OM_INT2:
		return PV_I;
	case OM_UINT8: case OM_UINT16: case OM_UINT32: case OM_UINT64: case OM_UINT4:
	case OM_UINT2:
		return PV_U;
	default:
		return -1;
	}
}

bool om_cast_supported(int32_t sdt, int32_t ddt)
{
	return (kind_of(sdt) >= 0 || sdt == OM_STRING) && (kind_of(ddt) >= 0 || ddt == OM_STRING);
}

/* ---- readers: n elements at src[off..] into the pivot ----------------------------------- */

#define RD_CASE(P, DT, T, CT, LD)                                                          \
	case DT:                                                                           \
		for (int64_t k = 0; k < n; k++)                                            \
			p->P[k] = LD(((const T *)src)[off + k]);                           \
		break;

static void read_block(pivot *p, int32_t dt, const void *src, int64_t off, int64_t n)
{
	p->kind = kind_of(dt);
	switch (dt) {
		OM_EW_FLOATS(RD_CASE, f)
		OM_EW_SINTS(RD_CASE, i)
		OM_EW_BOOLS(RD_CASE, i)
		OM_EW_UINTS(RD_CASE, u)
	case OM_INT4: case OM_INT2: {
		const int bits = om_dtype_bits(dt);
		for (int64_t k = 0; k < n; k++)
			p->i[k] = om_sub_signed(om_sub_get(src, off + k, bits), bits);
		break;
	}
	case OM_UINT4: case OM_UINT2: {
		const int bits = om_dtype_bits(dt);
		for (int64_t k = 0; k < n; k++)
			p->u[k] = om_sub_get(src, off + k, bits);
		break;
	}
	case OM_FLOAT4E2M1:
		for (int64_t k = 0; k < n; k++)
			p->f[k] = om_f4_to_float(om_sub_get(src, off + k, 4));
		break;
	case OM_FLOAT8E8M0:
		for (int64_t k = 0; k < n; k++)
			p->f[k] = om_e8m0_to_float(((const uint8_t *)src)[off + k]);
		break;
	default: /* float8 */
		for (int64_t k = 0; k < n; k++)
			p->f[k] = om_f8_to_float(((const uint8_t *)src)[off + k], om_f8_format(dt));
		break;
	}
}

/* ---- writers: the pivot into n elements at dst[off..] ----------------------------------- */

static inline uint64_t f2u_wrap(double v)
{
	return v < 0 ? (uint64_t)om_ew_f2i(v) : om_ew_f2u(v);
}

/* one pivot value as the compute type of a float target, or as an integer bit pattern */
#define PV_AS_FLOAT(p, k)                                                                  \
	(p->kind == PV_F ? p->f[k] : p->kind == PV_I ? (double)p->i[k] : (double)p->u[k])
#define PV_AS_UBITS(p, k)                                                                  \
	(p->kind == PV_F ? f2u_wrap(p->f[k]) : p->kind == PV_I ? (uint64_t)p->i[k] : p->u[k])
#define PV_AS_SBITS(p, k)                                                                  \
	(p->kind == PV_F   ? (uint64_t)om_ew_f2i(p->f[k])                                  \
	 : p->kind == PV_I ? (uint64_t)p->i[k]                                             \
			   : p->u[k])

#define WR_FLOAT(A, DT, T, CT, LD)                                                         \
	case DT:                                                                           \
		if (p->kind == PV_I) /* int64 -> float rounds once, as C does */           \
			for (int64_t k = 0; k < n; k++)                                    \
				((T *)dst)[off + k] = OM_EW_ST_##DT((CT)p->i[k]);          \
		else if (p->kind == PV_U)                                                  \
			for (int64_t k = 0; k < n; k++)                                    \
				((T *)dst)[off + k] = OM_EW_ST_##DT((CT)p->u[k]);          \
		else                                                                       \
			for (int64_t k = 0; k < n; k++)                                    \
				((T *)dst)[off + k] = OM_EW_ST_##DT((CT)p->f[k]);          \
		break;
#define WR_INT(A, DT, T, CT, LD)                                                           \
	case DT:                                                                           \
		for (int64_t k = 0; k < n; k++)                                            \
			((T *)dst)[off + k] = OM_EW_ST_##DT(A(p, k));                      \
		break;

static void write_block(const pivot *p, int32_t dt, void *dst, int64_t off, int64_t n,
			bool saturate, int e8m0_round)
{
	switch (dt) {
		OM_EW_FLOATS(WR_FLOAT, 0)
		OM_EW_SINTS(WR_INT, PV_AS_SBITS)
		OM_EW_UINTS(WR_INT, PV_AS_UBITS)
	case OM_BOOL:
		for (int64_t k = 0; k < n; k++)
			((uint8_t *)dst)[off + k] = p->kind == PV_F ? p->f[k] != 0
						  : p->kind == PV_I ? p->i[k] != 0
								    : p->u[k] != 0;
		break;
	case OM_INT4: case OM_INT2: { /* the low bits: wraps as the wider integers do */
		const int bits = om_dtype_bits(dt);
		for (int64_t k = 0; k < n; k++)
			om_sub_set(dst, off + k, bits, (uint8_t)PV_AS_SBITS(p, k));
		break;
	}
	case OM_UINT4: case OM_UINT2: {
		const int bits = om_dtype_bits(dt);
		for (int64_t k = 0; k < n; k++)
			om_sub_set(dst, off + k, bits, (uint8_t)PV_AS_UBITS(p, k));
		break;
	}
	case OM_FLOAT4E2M1:
		for (int64_t k = 0; k < n; k++)
			om_sub_set(dst, off + k, 4, om_float_to_f4((float)PV_AS_FLOAT(p, k)));
		break;
	case OM_FLOAT8E8M0:
		for (int64_t k = 0; k < n; k++)
			((uint8_t *)dst)[off + k] =
				om_float_to_e8m0((float)PV_AS_FLOAT(p, k), e8m0_round, saturate);
		break;
	default: /* float8 */
		for (int64_t k = 0; k < n; k++) {
			const float v = (float)PV_AS_FLOAT(p, k);
			((uint8_t *)dst)[off + k] = om_float_to_f8(v, om_f8_format(dt), saturate);
		}
		break;
	}
}

/* ---- strings ----------------------------------------------------------------------------- */

/* shortest "%.Ng" that reads back as the same value (numpy's spelling for finite values) */
static int format_float(char *buf, size_t size, double v, bool single)
{
	if (v != v)
		return snprintf(buf, size, "NaN");
	if (isinf(v))
		return snprintf(buf, size, v < 0 ? "-INF" : "INF");
	for (int prec = 1; prec <= 17; prec++) {
		int len = snprintf(buf, size, "%.*g", prec, v);
		double back = strtod(buf, NULL);
		if (single ? (float)back == (float)v : back == v)
			return len;
	}
	return snprintf(buf, size, "%.17g", v);
}

static om_kind to_strings(om_ctx *c, om_str *dst, const pivot *p, int32_t sdt, int64_t off,
			  int64_t n)
{
	char buf[64];
	for (int64_t k = 0; k < n; k++) {
		int len;
		if (p->kind == PV_F)
			len = format_float(buf, sizeof buf, p->f[k], sdt != OM_DOUBLE);
		else if (p->kind == PV_I)
			len = snprintf(buf, sizeof buf, "%lld", (long long)p->i[k]);
		else
			len = snprintf(buf, sizeof buf, "%llu", (unsigned long long)p->u[k]);
		if (len < 0 || (size_t)len >= sizeof buf)
			len = 0;
		char *s = malloc((size_t)len + 1);
		if (!s)
			return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		memcpy(s, buf, (size_t)len + 1);
		dst[off + k] = (om_str){s, len};
	}
	return OM_OK;
}

static om_kind from_strings(om_ctx *c, pivot *p, int32_t ddt, const om_str *src, int64_t off,
			    int64_t n)
{
	p->kind = kind_of(ddt) == PV_F || ddt == OM_BOOL ? PV_F : kind_of(ddt);
	char buf[128];
	for (int64_t k = 0; k < n; k++) {
		const om_str *s = &src[off + k];
		if (s->len < 0 || (size_t)s->len >= sizeof buf || (s->len && !s->ptr))
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"string of %lld bytes is not a number", (long long)s->len);
		if (s->len)
			memcpy(buf, s->ptr, (size_t)s->len);
		buf[s->len] = 0;
		char *end = buf;
		if (p->kind == PV_F)
			p->f[k] = strtod(buf, &end);
		else if (p->kind == PV_I)
			p->i[k] = strtoll(buf, &end, 10);
		else
			p->u[k] = strtoull(buf, &end, 10);
		if (end == buf || *end)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"'%s' is not a number", buf);
	}
	return OM_OK;
}

om_kind om_cast_elems(om_ctx *c, void *dst, int32_t ddt, const void *src, int32_t sdt, int64_t n,
		      int saturate)
{
	if (!om_cast_supported(sdt, ddt))
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "cast from %s to %s",
				om_dtype_name(sdt), om_dtype_name(ddt));
	if (sdt == ddt && ddt != OM_STRING) {
		if (n > 0)
			memcpy(dst, src, om_tensor_bytes_for(sdt, 1, &n));
		return OM_OK;
	}
	if (om_cast_half_has(sdt, ddt)) { /* the same bits in vector loops */
		if (n > 0)
			om_cast_half(c->threads, dst, ddt, src, sdt, n);
		return OM_OK;
	}
	/* dst may hold anything (session buffers are not zeroed): the padding bits of a sub-byte
	 * tensor and the strings not yet made (an error stops half way) start at zero */
	if (n > 0 && (om_dtype_bits(ddt) < 8 || ddt == OM_STRING))
		memset(dst, 0, om_tensor_bytes_for(ddt, 1, &n));
	const char *rm = ddt == OM_FLOAT8E8M0 ? om_attr_string(c->node, "round_mode", "up") : "";
	const int round = !strcmp(rm, "down") ? OM_E8M0_DOWN
			  : !strcmp(rm, "nearest") ? OM_E8M0_NEAREST : OM_E8M0_UP;
	pivot p;
	for (int64_t off = 0; off < n; off += BLOCK) {
		const int64_t m = n - off < BLOCK ? n - off : BLOCK;
		om_kind rc = OM_OK;
		if (sdt == OM_STRING && ddt == OM_STRING) {
			om_tensor d = {.dtype = OM_STRING, .rank = 1, .dims = {m},
				       .data = (om_str *)dst + off};
			const om_tensor s = {.dtype = OM_STRING, .rank = 1, .dims = {m},
					     .data = (om_str *)src + off};
			rc = om_tensor_copy_data(&d, &s, c->st);
		} else if (sdt == OM_STRING) {
			rc = from_strings(c, &p, ddt, src, off, m);
			if (!rc)
				write_block(&p, ddt, dst, off, m, saturate, round);
		} else {
			read_block(&p, sdt, src, off, m);
			if (ddt == OM_STRING)
				rc = to_strings(c, dst, &p, sdt, off, m);
			else
				write_block(&p, ddt, dst, off, m, saturate, round);
		}
		if (rc)
			return rc;
	}
	return OM_OK;
}

/* ---- Cast, CastLike ---------------------------------------------------------------------- */

static om_kind cast_infer_to(om_ctx *c, int64_t to)
{
	if (c->nin < 1 || !c->in[0] || !c->nout || !c->out[0])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "input or output missing");
	if (to <= 0 || to >= OM_DTYPE_COUNT)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "bad target type %lld",
				(long long)to);
	if (!om_cast_supported(c->in[0]->dtype, (int32_t)to))
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "cast from %s to %s",
				om_dtype_name(c->in[0]->dtype), om_dtype_name((int32_t)to));
	om_set_shape(c->out[0], (int32_t)to, c->in[0]->rank, c->in[0]->dims);
	return OM_OK;
}

static om_kind cast_run(om_ctx *c)
{
	const om_tensor *x = c->in[0];
	const int saturate = (int)om_attr_int(c->node, "saturate", 1);
	if (x->nbytes < om_tensor_bytes_for(x->dtype, x->rank, x->dims) ||
	    c->out[0]->nbytes < om_tensor_bytes_for(c->out[0]->dtype, x->rank, x->dims))
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "buffer below its shape");
	return om_cast_elems(c, c->out[0]->data, c->out[0]->dtype, x->data, x->dtype,
			     om_tensor_numel(x), saturate);
}

static om_kind cast_infer(om_ctx *c)
{
	return cast_infer_to(c, om_attr_int(c->node, "to", 0));
}

static om_kind castlike_infer(om_ctx *c)
{
	if (c->nin < 2 || !c->in[1])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "target_type is missing");
	return cast_infer_to(c, c->in[1]->dtype);
}

/* BitCast: the same bytes read as another type of the same width (a view) */
static om_kind bitcast_infer(om_ctx *c)
{
	const int64_t to = om_attr_int(c->node, "to", 0);
	om_kind rc = cast_infer_to(c, to);
	if (rc && rc != OM_ERR_UNSUPPORTED)
		return rc;
	const int32_t from = c->in[0]->dtype;
	const int bits = om_dtype_bits(from);
	if (from == OM_STRING || to == OM_STRING || bits != om_dtype_bits((int32_t)to) || bits < 8)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"cannot reinterpret %s as %s", om_dtype_name(from),
				om_dtype_name((int32_t)to));
	om_set_shape(c->out[0], (int32_t)to, c->in[0]->rank, c->in[0]->dims);
	return OM_OK;
}

/* elementwise, and the input itself when the type does not change */
#define SAME (OM_OP_EXACT | OM_OP_ELEMENTWISE | OM_OP_SAME_SHAPE_COPY)
/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_BitCast_26[] = {{"to", OM_ATTR_INT, 1}, {NULL, 0, 0}};
/* BitCast-26: input -> output */
static const om_sig sig_BitCast_26 = {26, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_BitCast_26, NULL};
static const om_sig_attr attrs_Cast_1_v24[] = {{"round_mode", OM_ATTR_STRING, 0},
	{"saturate", OM_ATTR_INT, 0}, {"to", OM_ATTR_INT, 1}, {NULL, 0, 0}};
/* Cast-24: input -> output */
static const om_sig sig_Cast_1_v24 = {24, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_Cast_1_v24, NULL};
static const om_sig_attr attrs_Cast_1_v19[] = {{"saturate", OM_ATTR_INT, 0}, {"to", OM_ATTR_INT, 1},
	{NULL, 0, 0}};
/* Cast-19: input -> output */
static const om_sig sig_Cast_1_v19 = {19, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_Cast_1_v19, &sig_Cast_1_v24};
static const om_sig_attr attrs_Cast_1_v13[] = {{"to", OM_ATTR_INT, 1}, {NULL, 0, 0}};
/* Cast-13: input -> output */
static const om_sig sig_Cast_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_Cast_1_v13, &sig_Cast_1_v19};
static const om_sig_attr attrs_Cast_1_v6[] = {{"to", OM_ATTR_INT, 1}, {NULL, 0, 0}};
/* Cast-6: input -> output */
static const om_sig sig_Cast_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Cast_1_v6,
	&sig_Cast_1_v13};
static const om_sig_attr attrs_Cast_1[] = {{"to", OM_ATTR_STRING, 1}, {NULL, 0, 0}};
/* Cast-1: input -> output */
static const om_sig sig_Cast_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Cast_1,
	&sig_Cast_1_v6};
static const om_sig_attr attrs_CastLike_15_v24[] = {{"round_mode", OM_ATTR_STRING, 0},
	{"saturate", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* CastLike-24: input target_type -> output */
static const om_sig sig_CastLike_15_v24 = {24, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1,
	attrs_CastLike_15_v24, NULL};
static const om_sig_attr attrs_CastLike_15_v19[] = {{"saturate", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* CastLike-19: input target_type -> output */
static const om_sig sig_CastLike_15_v19 = {19, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1,
	attrs_CastLike_15_v19, &sig_CastLike_15_v24};
/* CastLike-15: input target_type -> output */
static const om_sig sig_CastLike_15 = {15, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1, NULL,
	&sig_CastLike_15_v19};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"BitCast", "", 26, bitcast_infer, NULL, OM_OP_VIEW | OM_OP_EXACT, &sig_BitCast_26,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"Cast", "", 1, cast_infer, cast_run, SAME, &sig_Cast_1, OM_OPC_CAST, NULL, 0, NULL},
	{"CastLike", "", 15, castlike_infer, cast_run, SAME, &sig_CastLike_15, OM_OPC_NONE, NULL,
	 0, NULL},
};

const om_op_table om_ops_cast = OM_TABLE(rows);
