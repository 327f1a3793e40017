/*
 * optimize.c — om_optimize: the graph rewrites before a run (see docs/passes.md). One screen:
 *
 *     om_simplify's pipeline (folding, shape chains, identities, Conv+BN, MatMul+Add -> Gemm, ...)
 *       → infer_shapes → fuse_conv_activation → fuse_layernorm → fuse_skip_layernorm
 *       → fuse_gelu → fuse_silu → fuse_matmul_transpose → eliminate_dead
 *                                                              (to a fixed point)
 *
 * The fusions write ops that omopt and ONNX Runtime run but that are not all ONNX (com.microsoft
 * FusedConv, Gelu, FastGelu, QuickGelu, BiasGelu, SkipLayerNormalization), so om_simplify
 * never runs them. They rewrite the main graph only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimize.h"

static const struct {
	const char *name;
	om_pass_fn fn;
} fusions[] = {
	{"fuse_conv_activation", om_pass_fuse_conv_act},
	{"fuse_layernorm", om_pass_fuse_layernorm},
	{"fuse_skip_layernorm", om_pass_fuse_skip_layernorm},
	{"fuse_gelu", om_pass_fuse_gelu},
	{"fuse_silu", om_pass_fuse_silu},
	{"fuse_matmul_transpose", om_pass_fuse_matmul_transpose},
};

enum { NFUSIONS = sizeof fusions / sizeof fusions[0], MAX_ROUNDS = 4 };

static bool is_fusion(const char *name)
{
	for (int i = 0; i < NFUSIONS; i++)
		if (!strcmp(fusions[i].name, name))
			return true;
	return false;
}

static bool skipped(const om_simplify_options *opt, const char *name)
{
	for (const char *const *s = opt->skip; s && *s; s++)
		if (!strcmp(*s, name))
			return true;
	return false;
}

/* om_simplify with the skip list minus the fusions' names */
static om_kind simplify(om_model *m, const om_simplify_options *opt, om_status *st)
{
	size_t n = 0;
	for (const char *const *s = opt->skip; s && *s; s++)
		n++;
	const char **skip = calloc(n + 1, sizeof *skip);
	if (!skip)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!is_fusion(opt->skip[i]))
			skip[k++] = opt->skip[i];
	om_simplify_options so = *opt;
	so.skip = skip;
	so.no_value_info = 1; /* for running: the fusions would leave part of it stale */
	om_kind rc = om_simplify(m, &so, st);
	free(skip);
	return rc;
}

static om_kind fuse_round(om_pass_ctx *c, const om_simplify_options *opt, int round, int *total)
{
	om_graph *g = c->m->graph;
	int ignored = 0;
	om_kind rc = om_pass_infer(c, g, &ignored);
	for (int p = 0; p < NFUSIONS && !rc; p++) {
		if (skipped(opt, fusions[p].name))
			continue;
		int changes = 0;
		om_outer_refs_reset(c);
		rc = fusions[p].fn(c, g, &changes);
		if (!rc && om_verify_wanted(opt))
			rc = om_verify_graph(g, c->st);
		if (opt->verbose)
			fprintf(stderr, "optimize: round %d: %-20s %d change%s%s\n", round,
				fusions[p].name, changes, changes == 1 ? "" : "s",
				rc ? " (failed)" : "");
		*total += changes;
	}
	if (!rc && *total)
		rc = om_pass_dead(c, g, &ignored);
	return rc;
}

om_kind om_optimize(om_model *m, const om_simplify_options *opt, om_status *st)
{
	om_simplify_options dflt = {0};
	if (!opt)
		opt = &dflt;
	om_kind rc = simplify(m, opt, st);
	if (rc)
		return rc;
	om_pass_ctx c;
	if (om_pass_ctx_open(&c, m, opt, st))
		return st->kind;
	for (int round = 1; round <= MAX_ROUNDS && !rc; round++) {
		int total = 0;
		rc = fuse_round(&c, opt, round, &total);
		if (!total)
			break;
	}
	om_pass_ctx_close(&c);
	return rc;
}
