/* pass_registry.c — the pass registry: every pass of om_simplify and om_optimize, in order. */
#include <string.h>

#include "pass_registry.h"

/* Changing a row: docs/passes.md's tables and the pass list in include/omopt.h follow it
 * (tests/test_pass_registry.c fails until they do and prints what they should say). */
static const om_pass_row rows[] = {
	/* level 1, om_simplify: ONNX in, ONNX out */
	{"infer_shapes", OM_LEVEL_SIMPLIFY, om_pass_infer, OM_PASS_OWN_SUBGRAPHS,
	 "types, dims and plan-time values of every value (a side table)"},
	{"fold_constants", OM_LEVEL_SIMPLIFY, om_pass_fold, OM_PASS_GROWS,
	 "nodes of constant inputs evaluated into initializers"},
	{"fold_shape_chains", OM_LEVEL_SIMPLIFY, om_pass_shape_chains, 0,
	 "known plan-time values and Reshape/Expand shapes become literals"},
	{"inline_if", OM_LEVEL_SIMPLIFY, om_pass_inline_if, 0,
	 "an If of a constant condition becomes its branch's nodes"},
	{"unroll_loops", OM_LEVEL_SIMPLIFY, om_pass_unroll_loops, OM_PASS_GROWS,
	 "a Loop of constant trip count and condition becomes its body repeated"},
	{"merge_ifs", OM_LEVEL_SIMPLIFY, om_pass_merge_ifs, 0,
	 "Ifs on one condition merged; tests of an If's output rank become it"},
	{"eliminate_identities", OM_LEVEL_SIMPLIFY, om_pass_identities, 0,
	 "Identity, Dropout, no-op Cast, views and Pads read their input"},
	{"fuse_transposes", OM_LEVEL_SIMPLIFY, om_pass_transposes, 0,
	 "Transpose(Transpose(x)) composed; identity permutations go"},
	{"push_transposes", OM_LEVEL_SIMPLIFY, om_pass_push_transposes, 0,
	 "a Transpose moves past layout-agnostic ops toward its inverse"},
	{"fuse_pad", OM_LEVEL_SIMPLIFY, om_pass_fuse_pad, 0,
	 "a zero Pad into the Conv or AveragePool reading it"},
	{"fuse_conv_bn", OM_LEVEL_SIMPLIFY, om_pass_fuse_conv_bn, 0,
	 "BatchNormalization into the Conv or ConvTranspose weights"},
	{"fuse_conv_affine", OM_LEVEL_SIMPLIFY, om_pass_fuse_conv_affine, 0,
	 "per-channel Mul/Div/Add/Sub into the Conv weights"},
	{"fuse_matmul_add", OM_LEVEL_SIMPLIFY, om_pass_fuse_matmul_add, 0,
	 "Add(MatMul(A, B), C) of 2-D A and B -> Gemm"},
	{"merge_common", OM_LEVEL_SIMPLIFY, om_pass_common, 0,
	 "nodes and plan-time values equal to earlier ones merged"},
	{"eliminate_dead", OM_LEVEL_SIMPLIFY, om_pass_dead, 0,
	 "nodes, initializers and value_info nothing uses go"},
	/* level 2, om_optimize: ops omopt and ONNX Runtime run (com.microsoft ones too) */
	{"fuse_qdq", OM_LEVEL_OPTIMIZE, om_pass_fuse_qdq, OM_PASS_ROUNDS,
	 "DQ -> Conv/Gemm [-> Q] -> QLinearConv/QGemm; DQ -> select -> Q -> 8-bit"},
	{"fuse_dynq", OM_LEVEL_OPTIMIZE, om_pass_fuse_dynq, 0,
	 "dynamic-quantized MatMulInteger chains -> DynamicQuantizeMatMul"},
	{"fuse_conv_activation", OM_LEVEL_OPTIMIZE, om_pass_fuse_conv_act, 0,
	 "Conv [+ Add] + activation -> com.microsoft FusedConv"},
	{"fuse_layernorm", OM_LEVEL_OPTIMIZE, om_pass_fuse_layernorm, 0,
	 "LayerNorm chains -> LayerNormalization"},
	{"fuse_skip_layernorm", OM_LEVEL_OPTIMIZE, om_pass_fuse_skip_layernorm, 0,
	 "Add [+ bias Add] + LayerNormalization -> SkipLayerNormalization"},
	{"fuse_gelu", OM_LEVEL_OPTIMIZE, om_pass_fuse_gelu, 0,
	 "Gelu chains -> Gelu / FastGelu; Gelu(Add(x, bias)) -> BiasGelu"},
	{"fuse_silu", OM_LEVEL_OPTIMIZE, om_pass_fuse_silu, 0,
	 "x * Sigmoid(alpha x) -> com.microsoft QuickGelu"},
	{"fuse_matmul_transpose", OM_LEVEL_OPTIMIZE, om_pass_fuse_matmul_transpose, 0,
	 "Transpose / scalar Mul into com.microsoft FusedMatMul"},
};

static const om_pass_level levels[] = {
	[OM_LEVEL_SIMPLIFY] = {"simplify", 10, OM_ROUNDS_SUBGRAPHS},
	[OM_LEVEL_OPTIMIZE] = {"optimize", 4, OM_ROUNDS_INFER_FIRST | OM_ROUNDS_DEAD_LAST},
};

enum {
	NROWS = sizeof rows / sizeof rows[0],
	NLEVELS = sizeof levels / sizeof levels[0],
};

const om_pass_row *om_pass_table(int32_t *n)
{
	*n = NROWS;
	return rows;
}

const om_pass_level *om_pass_level_of(int32_t level)
{
	return level >= OM_LEVEL_SIMPLIFY && level < NLEVELS ? &levels[level] : NULL;
}

const om_pass_row *om_pass_find(const char *name, int32_t level)
{
	for (int32_t i = 0; name && i < NROWS; i++)
		if (rows[i].level <= level && !strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

const char *om_simplify_pass_name(int i)
{
	return i >= 0 && i < NROWS && rows[i].level == OM_LEVEL_SIMPLIFY ? rows[i].name : NULL;
}

int om_pass_rows(om_pass_info *out, int cap)
{
	for (int i = 0; out && i < NROWS && i < cap; i++)
		out[i] = (om_pass_info){rows[i].name, rows[i].level, rows[i].what};
	return NROWS;
}
