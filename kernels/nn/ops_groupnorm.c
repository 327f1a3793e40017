/* ops_groupnorm.c — InstanceNormalization and GroupNormalization: the channels of a group (one
 * for InstanceNormalization) standardized per sample, in double: exact. */
/* -O2 vectorizes only loops of known trip count; quiet comparisons let selects vectorize
 * (results are unchanged: no reassociation, and detmath.h switches contraction off) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic", "no-trapping-math")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "norm_common.h"

/* InstanceNormalization (G = C) and GroupNormalization (G = num_groups) standardize C / G
 * channels of one sample at a time; scale and bias hold one value per channel, or per group
 * for GroupNormalization before opset 21. The rows' param: GN_GROUP for GroupNormalization,
 * GN_PER_GROUP where its scale and bias are per group. */
enum { GN_GROUP = 1, GN_PER_GROUP = 2 };

typedef struct gn_plan {
	int64_t C, spatial, G, per;
} gn_plan;

static om_kind gn_prepare(om_ctx *c, gn_plan *p, double *params)
{
	om_kind rc = om_norm_channels(c, &p->C, &p->spatial);
	if (rc)
		return rc;
	const bool group = c->op->param & GN_GROUP;
	p->G = group ? om_attr_int(c->node, "num_groups", 0) : p->C;
	if (group && (p->G <= 0 || p->C % p->G))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"num_groups %lld does not divide %lld channels", (long long)p->G,
				(long long)p->C);
	p->per = c->op->param & GN_PER_GROUP ? p->G : p->C;
	for (int i = 1; i < 3 && !rc; i++)
		rc = om_norm_load_param(c, i < c->nin ? c->in[i] : NULL, p->per,
					params ? params + (i - 1) * p->per : NULL,
					i == 1 ? "scale" : "B");
	return rc;
}

static om_kind gn_infer(om_ctx *c)
{
	gn_plan p = {0};
	om_kind rc = gn_prepare(c, &p, NULL);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	return rc;
}

static om_kind gn_kernel(om_ctx *c)
{
	gn_plan p = {0};
	om_kind rc = gn_prepare(c, &p, NULL);
	if (rc)
		return rc;
	double *par;
	if ((rc = om_ctx_scratch(c, sizeof(double) * (size_t)(2 * p.per + 1), "the parameters",
				 (void **)&par)))
		return rc;
	rc = gn_prepare(c, &p, par);
	/* G is 0 only for an InstanceNormalization of 0 channels: no slices, nothing to do */
	const int64_t per_group = p.G > 0 ? p.C / p.G : 0, n = per_group * p.spatial;
	const bool per_channel = p.per == p.C;
	norm_std l = {.scale = par, .bias = par + p.per,
		    .eps = om_attr_float(c->node, "epsilon", 1e-5f), .smod = p.G,
		    .smul = per_channel && per_group ? per_group : 1,
		    .kdiv = per_channel ? (p.spatial > 0 ? p.spatial : 1) : (n > 0 ? n : 1)};
	norm_slices sl = {c->in[0]->dims[0] * p.G, n, 1};
	if (!rc)
		rc = om_norm_each_slice(c, c->in[0], c->out[0], sl, om_norm_standardize, &l);
	om_ctx_scratch_done(c, par);
	return rc;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_InstanceNormalization_6_v22[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{NULL, 0, 0}};
/* InstanceNormalization-22: input scale B -> output */
static const om_sig sig_InstanceNormalization_6_v22 = {22, 3, 3, 1, 1, 0x0, 0x0, 0x7, 0x1, 0x7, 0x1,
	attrs_InstanceNormalization_6_v22, NULL};
static const om_sig_attr attrs_InstanceNormalization_6[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{NULL, 0, 0}};
/* InstanceNormalization-6: input scale B -> output */
static const om_sig sig_InstanceNormalization_6 = {6, 3, 3, 1, 1, 0x0, 0x0, 0x7, 0x1, 0x0, 0x0,
	attrs_InstanceNormalization_6, &sig_InstanceNormalization_6_v22};
static const om_sig_attr attrs_GroupNormalization_18[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{"num_groups", OM_ATTR_INT, 1}, {NULL, 0, 0}};
/* GroupNormalization-18: X scale bias -> Y */
static const om_sig sig_GroupNormalization_18 = {18, 3, 3, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_GroupNormalization_18, NULL};
static const om_sig_attr attrs_GroupNormalization_21[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{"num_groups", OM_ATTR_INT, 1}, {"stash_type", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GroupNormalization-21: X scale bias -> Y */
static const om_sig sig_GroupNormalization_21 = {21, 3, 3, 1, 1, 0x0, 0x0, 0x7, 0x1, 0x7, 0x1,
	attrs_GroupNormalization_21, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"InstanceNormalization", "", 6, gn_infer, gn_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_InstanceNormalization_6, OM_OPC_NONE, NULL, 0, NULL},
	{"GroupNormalization", "", 18, gn_infer, gn_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_GroupNormalization_18, OM_OPC_NONE, NULL, GN_GROUP | GN_PER_GROUP, NULL},
	{"GroupNormalization", "", 21, gn_infer, gn_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_GroupNormalization_21, OM_OPC_NONE, NULL, GN_GROUP, NULL},
};

const om_op_table om_ops_groupnorm = OM_TABLE(rows);
