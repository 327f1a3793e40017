/* ops_qlinear_ew.c — com.microsoft QLinearAdd and QLinearMul (ONNX Runtime's QOperator
 * element-wise ops): A and B int8 or uint8 of one type, broadcasting as Add and Mul, each with a
 * one-value float scale and an optional zero point of its type, C's likewise; C has A's type.
 * The arithmetic is ONNX Runtime 1.30's on x86 (MLAS), in float, round half to even, saturated:
 *   Add: with ra = sa / sc, rb = sb / sc and F = zc - fma(ra, za, rb zb) (MLAS's compiler
 *        contracts it: the bits of ONNX Runtime's on 300,000 random sums),
 *        c = rint(fma(a, ra, fma(b, rb, F))); a run where one operand is a single value folds
 *        it into F first (F + x r, product and sum each rounded), as MLAS does;
 *   Mul: c = rint(float((a - za)(b - zb)) * (sa * sb / sc)) + zc (the integer product exact).
 * Every thread count and clone gives the same bits (fmaf is exact); a run's operands step by 0
 * or 1 (broadcast.h), each pairing and type a straight loop of its own. */
#include <math.h>
#include <string.h>

#include "broadcast.h"
#include "clones.h"
#include "op.h"
#include "qparam.h"

/* the two rows (om_op.param) */
enum { QEW_ADD = 0, QEW_MUL = 1 };

/* where A's, B's and C's scale and zero point are */
static const int QEW_SCALE[3] = {1, 4, 6}, QEW_ZP[3] = {2, 5, 7};

static om_kind qew_check(om_ctx *c, om_qparam *p)
{
	const om_tensor *a = om_ctx_in(c, 0), *b = om_ctx_in(c, 3);
	if (!a || !b || !om_is_q8(a->dtype) || b->dtype != a->dtype)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"A and B int8 or uint8 of one type");
	for (int k = 0; k < 3; k++) {
		om_kind rc = om_qparam_get(c, QEW_SCALE[k], QEW_ZP[k], a->dtype, p ? &p[k] : NULL);
		if (rc)
			return rc;
	}
	return OM_OK;
}

static om_kind qew_infer(om_ctx *c)
{
	om_kind rc = qew_check(c, NULL);
	if (rc)
		return rc;
	const om_tensor *ab[2] = {c->in[0], c->in[3]};
	return om_bcast_infer(c, 2, ab, c->in[0]->dtype, c->out[0]);
}

/* what a run needs: the op, the type, and its constants */
typedef struct qew_job {
	int op;
	bool sgn;
	float ra, rb, fab, fba; /* Add: the ratios; F with A's term first, and with B's first */
	float r, zc;           /* Mul: the ratio; C's zero point */
	int32_t za, zb;
} qew_job;

/* Add over a run: x runs, y runs too (yrun) or is folded into f; sgn and yrun are constants
 * at each call, so that every clone has a straight loop it vectorizes */
OM_INLINE void qew_add_loop(int64_t n, uint8_t *o, const uint8_t *x, float rx,
			    const uint8_t *y, bool yrun, float ry, float f, bool sgn)
{
	for (int64_t i = 0; i < n; i++) {
		const float xv = (float)om_q8_at(x, i, sgn);
		const float v = yrun ? fmaf(xv, rx, fmaf((float)om_q8_at(y, i, sgn), ry, f))
				     : fmaf(xv, rx, f);
		o[i] = om_q8_byte(rintf(v), sgn);
	}
}

/* o[i] = Add of x[i * sx] (ratio rx) and y[i * sy] (ratio ry) over f; steps 0 or 1 */
OM_CLONES static void qew_add_run(int64_t n, uint8_t *o, const uint8_t *x, int64_t sx, float rx,
				  const uint8_t *y, int64_t sy, float ry, float f, bool sgn)
{
	if (!sy) /* y one value: folded into f (its product and sum each rounded) */
		f = f + (float)om_q8_at(y, 0, sgn) * ry;
	if (!sx) { /* both one value */
		qew_add_loop(1, o, x, rx, y, false, ry, f, sgn);
		memset(o + 1, o[0], (size_t)(n - 1));
	} else if (sgn) {
		if (sy)
			qew_add_loop(n, o, x, rx, y, true, ry, f, true);
		else
			qew_add_loop(n, o, x, rx, y, false, ry, f, true);
	} else {
		if (sy)
			qew_add_loop(n, o, x, rx, y, true, ry, f, false);
		else
			qew_add_loop(n, o, x, rx, y, false, ry, f, false);
	}
}

/* Mul over a run of a (step sa) and b (step sb), the steps and sgn constants at each call */
OM_INLINE void qew_mul_loop(int64_t n, uint8_t *o, const uint8_t *a, bool sa, const uint8_t *b,
			    bool sb, const qew_job *j, bool sgn)
{
	const int32_t za = j->za, zb = j->zb;
	const float r = j->r, zc = j->zc;
	for (int64_t i = 0; i < n; i++) {
		const int32_t p = (om_q8_at(a, sa ? i : 0, sgn) - za) *
				  (om_q8_at(b, sb ? i : 0, sgn) - zb);
		o[i] = om_q8_byte(rintf((float)p * r) + zc, sgn);
	}
}

OM_CLONES static void qew_mul_run(int64_t n, uint8_t *o, const uint8_t *a, int64_t sa,
				  const uint8_t *b, int64_t sb, const qew_job *j)
{
	if (!sa && !sb) {
		qew_mul_loop(1, o, a, false, b, false, j, j->sgn);
		memset(o + 1, o[0], (size_t)(n - 1));
	} else if (j->sgn) {
		if (sa && sb)
			qew_mul_loop(n, o, a, true, b, true, j, true);
		else if (sa)
			qew_mul_loop(n, o, a, true, b, false, j, true);
		else
			qew_mul_loop(n, o, a, false, b, true, j, true);
	} else {
		if (sa && sb)
			qew_mul_loop(n, o, a, true, b, true, j, false);
		else if (sa)
			qew_mul_loop(n, o, a, true, b, false, j, false);
		else
			qew_mul_loop(n, o, a, false, b, true, j, false);
	}
}

static void qew_run(int64_t n, void *out, const void *const *in, const int64_t *step,
		    const void *arg)
{
	const qew_job *j = arg;
	const uint8_t *a = in[0], *b = in[1];
	if (j->op == QEW_MUL)
		qew_mul_run(n, out, a, step[1], b, step[2], j);
	else if (step[1] || !step[2]) /* A runs (B one value or not), or both one value */
		qew_add_run(n, out, a, step[1], j->ra, b, step[2], j->rb, j->fab, j->sgn);
	else /* A one value, B runs: MLAS takes B as its first operand, A as the scalar */
		qew_add_run(n, out, b, step[2], j->rb, a, 0, j->ra, j->fba, j->sgn);
}

static om_kind qew_kernel(om_ctx *c)
{
	om_qparam p[3];
	om_kind rc = qew_check(c, p);
	if (rc)
		return rc;
	const om_tensor *ab[2] = {c->in[0], c->in[3]};
	om_bcast bc;
	if ((rc = om_bcast_init(c, &bc, c->out[0], 2, ab)))
		return rc;
	qew_job j = {.op = c->op->param, .sgn = ab[0]->dtype == OM_INT8, .za = p[0].zp,
		     .zb = p[1].zp, .zc = (float)p[2].zp};
	j.ra = p[0].scale / p[2].scale, j.rb = p[1].scale / p[2].scale;
	const float zc = (float)p[2].zp, za = (float)p[0].zp, zb = (float)p[1].zp;
	j.fab = zc - fmaf(j.ra, za, j.rb * zb);
	j.fba = zc - fmaf(j.rb, zb, j.ra * za);
	j.r = p[0].scale * p[1].scale / p[2].scale;
	const void *data[2] = {ab[0]->data, ab[1]->data};
	om_bcast_run(&bc, c->out[0]->data, data, qew_run, &j);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

/* QLinearAdd-1: A A_scale [A_zero_point] B B_scale [B_zero_point] C_scale [C_zero_point] -> C */
static const om_sig sig_ms_QLinearAdd_1 = {1, 7, 8, 1, 1, 0xa4, 0x0, 0x0, 0x0, 0x0, 0x0, NULL,
	NULL};
/* QLinearMul-1: A A_scale [A_zero_point] B B_scale [B_zero_point] C_scale [C_zero_point] -> C */
static const om_sig sig_ms_QLinearMul_1 = {1, 7, 8, 1, 1, 0xa4, 0x0, 0x0, 0x0, 0x0, 0x0, NULL,
	NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"QLinearAdd", "com.microsoft", 1, qew_infer, qew_kernel,
	 OM_OP_EXACT, &sig_ms_QLinearAdd_1, OM_OPC_NONE, NULL, QEW_ADD, NULL},
	{"QLinearMul", "com.microsoft", 1, qew_infer, qew_kernel,
	 OM_OP_EXACT, &sig_ms_QLinearMul_1, OM_OPC_NONE, NULL, QEW_MUL, NULL},
};

const om_op_table om_ops_qlinear_ew = OM_TABLE(rows);
