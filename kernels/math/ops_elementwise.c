/* ops_elementwise.c — the rows of the elementwise ops (kernels in ew_binary.c, ew_unary.c). */
#include "ew.h"
#include "layout.h"

#define E (OM_OP_EXACT | OM_OP_ELEMENTWISE)
#define EI (E | OM_OP_INPLACE)
#define C OM_OP_COMMUTATIVE
#define ROWC(Name, since, flags, code)                                                       \
	{#Name, "", since, om_ew_infer_##Name, om_ew_kernel_##Name, flags, &sig_##Name##_##since, \
	 code, NULL, 0, NULL}
#define ROW(Name, since, flags) ROWC(Name, since, flags, OM_OPC_NONE)
/* rows whose result is finite wherever the inputs are: they may run channel-blocked (op.h) */
#define ROWB(Name, since, flags, code)                                                       \
	{#Name, "", since, om_ew_infer_##Name, om_ew_kernel_##Name, flags, &sig_##Name##_##since, \
	 code, om_layout_elementwise, 0, NULL}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

/* Add-13: A B -> C */
static const om_sig sig_Add_1_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1, NULL, NULL};
/* Add-7: A B -> C */
static const om_sig sig_Add_1_v7 = {7, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, NULL,
	&sig_Add_1_v13};
static const om_sig_attr attrs_Add_1_v6[] = {{"axis", OM_ATTR_INT, 0},
	{"broadcast", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Add-6: A B -> C */
static const om_sig sig_Add_1_v6 = {6, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, attrs_Add_1_v6,
	&sig_Add_1_v7};
static const om_sig_attr attrs_Add_1[] = {{"axis", OM_ATTR_INT, 0}, {"broadcast", OM_ATTR_INT, 0},
	{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Add-1: A B -> C */
static const om_sig sig_Add_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, attrs_Add_1,
	&sig_Add_1_v6};
/* Sub-13: A B -> C */
static const om_sig sig_Sub_1_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1, NULL, NULL};
/* Sub-7: A B -> C */
static const om_sig sig_Sub_1_v7 = {7, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, NULL,
	&sig_Sub_1_v13};
static const om_sig_attr attrs_Sub_1_v6[] = {{"axis", OM_ATTR_INT, 0},
	{"broadcast", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Sub-6: A B -> C */
static const om_sig sig_Sub_1_v6 = {6, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, attrs_Sub_1_v6,
	&sig_Sub_1_v7};
static const om_sig_attr attrs_Sub_1[] = {{"axis", OM_ATTR_INT, 0}, {"broadcast", OM_ATTR_INT, 0},
	{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Sub-1: A B -> C */
static const om_sig sig_Sub_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, attrs_Sub_1,
	&sig_Sub_1_v6};
/* Mul-13: A B -> C */
static const om_sig sig_Mul_1_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1, NULL, NULL};
/* Mul-7: A B -> C */
static const om_sig sig_Mul_1_v7 = {7, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, NULL,
	&sig_Mul_1_v13};
static const om_sig_attr attrs_Mul_1_v6[] = {{"axis", OM_ATTR_INT, 0},
	{"broadcast", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Mul-6: A B -> C */
static const om_sig sig_Mul_1_v6 = {6, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, attrs_Mul_1_v6,
	&sig_Mul_1_v7};
static const om_sig_attr attrs_Mul_1[] = {{"axis", OM_ATTR_INT, 0}, {"broadcast", OM_ATTR_INT, 0},
	{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Mul-1: A B -> C */
static const om_sig sig_Mul_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, attrs_Mul_1,
	&sig_Mul_1_v6};
/* Div-13: A B -> C */
static const om_sig sig_Div_1_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1, NULL, NULL};
/* Div-7: A B -> C */
static const om_sig sig_Div_1_v7 = {7, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, NULL,
	&sig_Div_1_v13};
static const om_sig_attr attrs_Div_1_v6[] = {{"axis", OM_ATTR_INT, 0},
	{"broadcast", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Div-6: A B -> C */
static const om_sig sig_Div_1_v6 = {6, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, attrs_Div_1_v6,
	&sig_Div_1_v7};
static const om_sig_attr attrs_Div_1[] = {{"axis", OM_ATTR_INT, 0}, {"broadcast", OM_ATTR_INT, 0},
	{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Div-1: A B -> C */
static const om_sig sig_Div_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, attrs_Div_1,
	&sig_Div_1_v6};
/* Pow-15: X Y -> Z */
static const om_sig sig_Pow_1_v15 = {15, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1, NULL, NULL};
/* Pow-13: X Y -> Z */
static const om_sig sig_Pow_1_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x1, 0x1, NULL,
	&sig_Pow_1_v15};
/* Pow-7: X Y -> Z */
static const om_sig sig_Pow_1_v7 = {7, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, NULL,
	&sig_Pow_1_v13};
static const om_sig_attr attrs_Pow_1[] = {{"axis", OM_ATTR_INT, 0}, {"broadcast", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* Pow-1: X Y -> Z */
static const om_sig sig_Pow_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, attrs_Pow_1,
	&sig_Pow_1_v7};
static const om_sig_attr attrs_Mod_10_v13[] = {{"fmod", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Mod-13: A B -> C */
static const om_sig sig_Mod_10_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1,
	attrs_Mod_10_v13, NULL};
static const om_sig_attr attrs_Mod_10[] = {{"fmod", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Mod-10: A B -> C */
static const om_sig sig_Mod_10 = {10, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, attrs_Mod_10,
	&sig_Mod_10_v13};
/* PRelu-16: X slope -> Y */
static const om_sig sig_PRelu_1_v16 = {16, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1, NULL, NULL};
/* PRelu-6: X slope -> Y */
static const om_sig sig_PRelu_1_v6 = {6, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, NULL,
	&sig_PRelu_1_v16};
static const om_sig_attr attrs_PRelu_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* PRelu-1: X slope -> Y */
static const om_sig sig_PRelu_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, attrs_PRelu_1,
	&sig_PRelu_1_v6};
/* Equal-13: A B -> C */
static const om_sig sig_Equal_1_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x0, 0x3, 0x0, NULL, NULL};
/* Equal-11: A B -> C */
static const om_sig sig_Equal_1_v11 = {11, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x0, 0x0, 0x0, NULL,
	&sig_Equal_1_v13};
/* Equal-7: A B -> C */
static const om_sig sig_Equal_1_v7 = {7, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL,
	&sig_Equal_1_v11};
static const om_sig_attr attrs_Equal_1[] = {{"axis", OM_ATTR_INT, 0}, {"broadcast", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* Equal-1: A B -> C */
static const om_sig sig_Equal_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, attrs_Equal_1,
	&sig_Equal_1_v7};
/* Less-13: A B -> C */
static const om_sig sig_Less_1_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x0, 0x3, 0x0, NULL, NULL};
/* Less-7: A B -> C */
static const om_sig sig_Less_1_v7 = {7, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x0, 0x0, 0x0, NULL,
	&sig_Less_1_v13};
static const om_sig_attr attrs_Less_1[] = {{"axis", OM_ATTR_INT, 0}, {"broadcast", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* Less-1: A B -> C */
static const om_sig sig_Less_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x0, 0x0, 0x0, attrs_Less_1,
	&sig_Less_1_v7};
/* LessOrEqual-16: A B -> C */
static const om_sig sig_LessOrEqual_12_v16 = {16, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x0, 0x3, 0x0, NULL,
	NULL};
/* LessOrEqual-12: A B -> C */
static const om_sig sig_LessOrEqual_12 = {12, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x0, 0x0, 0x0, NULL,
	&sig_LessOrEqual_12_v16};
/* Greater-13: A B -> C */
static const om_sig sig_Greater_1_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x0, 0x3, 0x0, NULL, NULL};
/* Greater-7: A B -> C */
static const om_sig sig_Greater_1_v7 = {7, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x0, 0x0, 0x0, NULL,
	&sig_Greater_1_v13};
static const om_sig_attr attrs_Greater_1[] = {{"axis", OM_ATTR_INT, 0},
	{"broadcast", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Greater-1: A B -> C */
static const om_sig sig_Greater_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x0, 0x0, 0x0, attrs_Greater_1,
	&sig_Greater_1_v7};
/* GreaterOrEqual-16: A B -> C */
static const om_sig sig_GreaterOrEqual_12_v16 = {16, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x0, 0x3, 0x0, NULL,
	NULL};
/* GreaterOrEqual-12: A B -> C */
static const om_sig sig_GreaterOrEqual_12 = {12, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x0, 0x0, 0x0, NULL,
	&sig_GreaterOrEqual_12_v16};
/* And-7: A B -> C */
static const om_sig sig_And_1_v7 = {7, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL, NULL};
static const om_sig_attr attrs_And_1[] = {{"axis", OM_ATTR_INT, 0}, {"broadcast", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* And-1: A B -> C */
static const om_sig sig_And_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, attrs_And_1,
	&sig_And_1_v7};
/* Or-7: A B -> C */
static const om_sig sig_Or_1_v7 = {7, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL, NULL};
static const om_sig_attr attrs_Or_1[] = {{"axis", OM_ATTR_INT, 0}, {"broadcast", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* Or-1: A B -> C */
static const om_sig sig_Or_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, attrs_Or_1,
	&sig_Or_1_v7};
/* Xor-7: A B -> C */
static const om_sig sig_Xor_1_v7 = {7, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL, NULL};
static const om_sig_attr attrs_Xor_1[] = {{"axis", OM_ATTR_INT, 0}, {"broadcast", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* Xor-1: A B -> C */
static const om_sig sig_Xor_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, attrs_Xor_1,
	&sig_Xor_1_v7};
static const om_sig_attr attrs_BitShift_11[] = {{"direction", OM_ATTR_STRING, 1}, {NULL, 0, 0}};
/* BitShift-11: X Y -> Z */
static const om_sig sig_BitShift_11 = {11, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_BitShift_11, NULL};
/* BitwiseAnd-18: A B -> C */
static const om_sig sig_BitwiseAnd_18 = {18, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL, NULL};
/* BitwiseOr-18: A B -> C */
static const om_sig sig_BitwiseOr_18 = {18, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL, NULL};
/* BitwiseXor-18: A B -> C */
static const om_sig sig_BitwiseXor_18 = {18, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL, NULL};
/* Min-13: data_0... -> min */
static const om_sig sig_Min_1_v13 = {13, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1,
	0xffffffffffffffff, 0x1, NULL, NULL};
/* Min-6: data_0... -> min */
static const om_sig sig_Min_1_v6 = {6, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1, 0x0,
	0x0, NULL, &sig_Min_1_v13};
static const om_sig_attr attrs_Min_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Min-1: data_0... -> min */
static const om_sig sig_Min_1 = {1, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1, 0x0, 0x0,
	attrs_Min_1, &sig_Min_1_v6};
/* Max-13: data_0... -> max */
static const om_sig sig_Max_1_v13 = {13, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1,
	0xffffffffffffffff, 0x1, NULL, NULL};
/* Max-6: data_0... -> max */
static const om_sig sig_Max_1_v6 = {6, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1, 0x0,
	0x0, NULL, &sig_Max_1_v13};
static const om_sig_attr attrs_Max_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Max-1: data_0... -> max */
static const om_sig sig_Max_1 = {1, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1, 0x0, 0x0,
	attrs_Max_1, &sig_Max_1_v6};
/* Sum-13: data_0... -> sum */
static const om_sig sig_Sum_1_v13 = {13, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1,
	0xffffffffffffffff, 0x1, NULL, NULL};
/* Sum-6: data_0... -> sum */
static const om_sig sig_Sum_1_v6 = {6, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1, 0x0,
	0x0, NULL, &sig_Sum_1_v13};
static const om_sig_attr attrs_Sum_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Sum-1: data_0... -> sum */
static const om_sig sig_Sum_1 = {1, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1, 0x0, 0x0,
	attrs_Sum_1, &sig_Sum_1_v6};
/* Mean-13: data_0... -> mean */
static const om_sig sig_Mean_1_v13 = {13, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1,
	0xffffffffffffffff, 0x1, NULL, NULL};
/* Mean-6: data_0... -> mean */
static const om_sig sig_Mean_1_v6 = {6, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1, 0x0,
	0x0, NULL, &sig_Mean_1_v13};
static const om_sig_attr attrs_Mean_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Mean-1: data_0... -> mean */
static const om_sig sig_Mean_1 = {1, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1, 0x0, 0x0,
	attrs_Mean_1, &sig_Mean_1_v6};
/* Where-16: condition X Y -> output */
static const om_sig sig_Where_9_v16 = {16, 3, 3, 1, 1, 0x0, 0x0, 0x6, 0x1, 0x6, 0x1, NULL, NULL};
/* Where-9: condition X Y -> output */
static const om_sig sig_Where_9 = {9, 3, 3, 1, 1, 0x0, 0x0, 0x6, 0x1, 0x0, 0x0, NULL,
	&sig_Where_9_v16};
static const om_sig_attr attrs_Clip_1_v6[] = {{"max", OM_ATTR_FLOAT, 0}, {"min", OM_ATTR_FLOAT, 0},
	{NULL, 0, 0}};
/* Clip-6: input -> output */
static const om_sig sig_Clip_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Clip_1_v6,
	NULL};
static const om_sig_attr attrs_Clip_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0},
	{"max", OM_ATTR_FLOAT, 0}, {"min", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Clip-1: input -> output */
static const om_sig sig_Clip_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Clip_1,
	&sig_Clip_1_v6};
/* Clip-13: input [min] [max] -> output */
static const om_sig sig_Clip_11_v13 = {13, 1, 3, 1, 1, 0x6, 0x0, 0x7, 0x1, 0x7, 0x1, NULL, NULL};
/* Clip-11: input [min] [max] -> output */
static const om_sig sig_Clip_11 = {11, 1, 3, 1, 1, 0x6, 0x0, 0x7, 0x1, 0x0, 0x0, NULL,
	&sig_Clip_11_v13};
/* Neg-13: X -> Y */
static const om_sig sig_Neg_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Neg-6: X -> Y */
static const om_sig sig_Neg_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Neg_1_v13};
static const om_sig_attr attrs_Neg_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Neg-1: X -> Y */
static const om_sig sig_Neg_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Neg_1,
	&sig_Neg_1_v6};
/* Abs-13: X -> Y */
static const om_sig sig_Abs_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Abs-6: X -> Y */
static const om_sig sig_Abs_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Abs_1_v13};
static const om_sig_attr attrs_Abs_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Abs-1: X -> Y */
static const om_sig sig_Abs_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Abs_1,
	&sig_Abs_1_v6};
/* Sqrt-13: X -> Y */
static const om_sig sig_Sqrt_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Sqrt-6: X -> Y */
static const om_sig sig_Sqrt_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Sqrt_1_v13};
static const om_sig_attr attrs_Sqrt_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Sqrt-1: X -> Y */
static const om_sig sig_Sqrt_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Sqrt_1,
	&sig_Sqrt_1_v6};
/* Reciprocal-13: X -> Y */
static const om_sig sig_Reciprocal_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL,
	NULL};
/* Reciprocal-6: X -> Y */
static const om_sig sig_Reciprocal_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Reciprocal_1_v13};
static const om_sig_attr attrs_Reciprocal_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* Reciprocal-1: X -> Y */
static const om_sig sig_Reciprocal_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_Reciprocal_1, &sig_Reciprocal_1_v6};
/* Exp-13: input -> output */
static const om_sig sig_Exp_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Exp-6: input -> output */
static const om_sig sig_Exp_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Exp_1_v13};
static const om_sig_attr attrs_Exp_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Exp-1: input -> output */
static const om_sig sig_Exp_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Exp_1,
	&sig_Exp_1_v6};
/* Log-13: input -> output */
static const om_sig sig_Log_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Log-6: input -> output */
static const om_sig sig_Log_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Log_1_v13};
static const om_sig_attr attrs_Log_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Log-1: input -> output */
static const om_sig sig_Log_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Log_1,
	&sig_Log_1_v6};
/* Erf-13: input -> output */
static const om_sig sig_Erf_9_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Erf-9: input -> output */
static const om_sig sig_Erf_9 = {9, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL, &sig_Erf_9_v13};
/* Tanh-13: input -> output */
static const om_sig sig_Tanh_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Tanh-6: input -> output */
static const om_sig sig_Tanh_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Tanh_1_v13};
static const om_sig_attr attrs_Tanh_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Tanh-1: input -> output */
static const om_sig sig_Tanh_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Tanh_1,
	&sig_Tanh_1_v6};
/* Sigmoid-13: X -> Y */
static const om_sig sig_Sigmoid_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Sigmoid-6: X -> Y */
static const om_sig sig_Sigmoid_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Sigmoid_1_v13};
static const om_sig_attr attrs_Sigmoid_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Sigmoid-1: X -> Y */
static const om_sig sig_Sigmoid_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Sigmoid_1,
	&sig_Sigmoid_1_v6};
static const om_sig_attr attrs_HardSigmoid_1_v22[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{"beta", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* HardSigmoid-22: X -> Y */
static const om_sig sig_HardSigmoid_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_HardSigmoid_1_v22, NULL};
static const om_sig_attr attrs_HardSigmoid_1_v6[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{"beta", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* HardSigmoid-6: X -> Y */
static const om_sig sig_HardSigmoid_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_HardSigmoid_1_v6, &sig_HardSigmoid_1_v22};
static const om_sig_attr attrs_HardSigmoid_1[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{"beta", OM_ATTR_FLOAT, 0}, {"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* HardSigmoid-1: X -> Y */
static const om_sig sig_HardSigmoid_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_HardSigmoid_1, &sig_HardSigmoid_1_v6};
/* HardSwish-22: X -> Y */
static const om_sig sig_HardSwish_14_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL,
	NULL};
/* HardSwish-14: X -> Y */
static const om_sig sig_HardSwish_14 = {14, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_HardSwish_14_v22};
/* Relu-13: X -> Y */
static const om_sig sig_Relu_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Relu-6: X -> Y */
static const om_sig sig_Relu_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Relu_1_v13};
static const om_sig_attr attrs_Relu_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Relu-1: X -> Y */
static const om_sig sig_Relu_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Relu_1,
	&sig_Relu_1_v6};
static const om_sig_attr attrs_LeakyRelu_1_v16[] = {{"alpha", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* LeakyRelu-16: X -> Y */
static const om_sig sig_LeakyRelu_1_v16 = {16, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_LeakyRelu_1_v16, NULL};
static const om_sig_attr attrs_LeakyRelu_1_v6[] = {{"alpha", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* LeakyRelu-6: X -> Y */
static const om_sig sig_LeakyRelu_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_LeakyRelu_1_v6, &sig_LeakyRelu_1_v16};
static const om_sig_attr attrs_LeakyRelu_1[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* LeakyRelu-1: X -> Y */
static const om_sig sig_LeakyRelu_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_LeakyRelu_1, &sig_LeakyRelu_1_v6};
static const om_sig_attr attrs_Elu_1_v22[] = {{"alpha", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Elu-22: X -> Y */
static const om_sig sig_Elu_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, attrs_Elu_1_v22,
	NULL};
static const om_sig_attr attrs_Elu_1_v6[] = {{"alpha", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Elu-6: X -> Y */
static const om_sig sig_Elu_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Elu_1_v6,
	&sig_Elu_1_v22};
static const om_sig_attr attrs_Elu_1[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Elu-1: X -> Y */
static const om_sig sig_Elu_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Elu_1,
	&sig_Elu_1_v6};
static const om_sig_attr attrs_Selu_1_v22[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{"gamma", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Selu-22: X -> Y */
static const om_sig sig_Selu_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_Selu_1_v22, NULL};
static const om_sig_attr attrs_Selu_1_v6[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{"gamma", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Selu-6: X -> Y */
static const om_sig sig_Selu_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Selu_1_v6,
	&sig_Selu_1_v22};
static const om_sig_attr attrs_Selu_1[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{"consumed_inputs", OM_ATTR_INTS, 0}, {"gamma", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Selu-1: X -> Y */
static const om_sig sig_Selu_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Selu_1,
	&sig_Selu_1_v6};
/* Softplus-22: X -> Y */
static const om_sig sig_Softplus_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Softplus-1: X -> Y */
static const om_sig sig_Softplus_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Softplus_1_v22};
/* Softsign-22: input -> output */
static const om_sig sig_Softsign_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Softsign-1: input -> output */
static const om_sig sig_Softsign_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Softsign_1_v22};
static const om_sig_attr attrs_Gelu_20[] = {{"approximate", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* Gelu-20: X -> Y */
static const om_sig sig_Gelu_20 = {20, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, attrs_Gelu_20,
	NULL};
/* Floor-13: X -> Y */
static const om_sig sig_Floor_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Floor-6: X -> Y */
static const om_sig sig_Floor_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Floor_1_v13};
static const om_sig_attr attrs_Floor_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Floor-1: X -> Y */
static const om_sig sig_Floor_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Floor_1,
	&sig_Floor_1_v6};
/* Ceil-13: X -> Y */
static const om_sig sig_Ceil_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Ceil-6: X -> Y */
static const om_sig sig_Ceil_1_v6 = {6, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Ceil_1_v13};
static const om_sig_attr attrs_Ceil_1[] = {{"consumed_inputs", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Ceil-1: X -> Y */
static const om_sig sig_Ceil_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Ceil_1,
	&sig_Ceil_1_v6};
/* Round-22: X -> Y */
static const om_sig sig_Round_11_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Round-11: X -> Y */
static const om_sig sig_Round_11 = {11, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Round_11_v22};
/* Sign-13: input -> output */
static const om_sig sig_Sign_9_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Sign-9: input -> output */
static const om_sig sig_Sign_9 = {9, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Sign_9_v13};
/* Not-1: X -> Y */
static const om_sig sig_Not_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL, NULL};
/* BitwiseNot-18: X -> Y */
static const om_sig sig_BitwiseNot_18 = {18, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL, NULL};
/* IsNaN-13: X -> Y */
static const om_sig sig_IsNaN_9_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x1, 0x0, NULL, NULL};
/* IsNaN-9: X -> Y */
static const om_sig sig_IsNaN_9 = {9, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x0, 0x0, NULL,
	&sig_IsNaN_9_v13};
static const om_sig_attr attrs_IsInf_10_v20[] = {{"detect_negative", OM_ATTR_INT, 0},
	{"detect_positive", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* IsInf-20: X -> Y */
static const om_sig sig_IsInf_10_v20 = {20, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x1, 0x0,
	attrs_IsInf_10_v20, NULL};
static const om_sig_attr attrs_IsInf_10[] = {{"detect_negative", OM_ATTR_INT, 0},
	{"detect_positive", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* IsInf-10: X -> Y */
static const om_sig sig_IsInf_10 = {10, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, attrs_IsInf_10,
	&sig_IsInf_10_v20};
/* Sin-22: input -> output */
static const om_sig sig_Sin_7_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Sin-7: input -> output */
static const om_sig sig_Sin_7 = {7, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL, &sig_Sin_7_v22};
/* Cos-22: input -> output */
static const om_sig sig_Cos_7_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Cos-7: input -> output */
static const om_sig sig_Cos_7 = {7, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL, &sig_Cos_7_v22};
/* Tan-22: input -> output */
static const om_sig sig_Tan_7_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Tan-7: input -> output */
static const om_sig sig_Tan_7 = {7, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL, &sig_Tan_7_v22};
/* Asin-22: input -> output */
static const om_sig sig_Asin_7_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Asin-7: input -> output */
static const om_sig sig_Asin_7 = {7, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Asin_7_v22};
/* Acos-22: input -> output */
static const om_sig sig_Acos_7_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Acos-7: input -> output */
static const om_sig sig_Acos_7 = {7, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Acos_7_v22};
/* Atan-22: input -> output */
static const om_sig sig_Atan_7_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Atan-7: input -> output */
static const om_sig sig_Atan_7 = {7, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Atan_7_v22};
/* Sinh-22: input -> output */
static const om_sig sig_Sinh_9_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Sinh-9: input -> output */
static const om_sig sig_Sinh_9 = {9, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Sinh_9_v22};
/* Cosh-22: input -> output */
static const om_sig sig_Cosh_9_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Cosh-9: input -> output */
static const om_sig sig_Cosh_9 = {9, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Cosh_9_v22};
/* Asinh-22: input -> output */
static const om_sig sig_Asinh_9_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Asinh-9: input -> output */
static const om_sig sig_Asinh_9 = {9, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Asinh_9_v22};
/* Acosh-22: input -> output */
static const om_sig sig_Acosh_9_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Acosh-9: input -> output */
static const om_sig sig_Acosh_9 = {9, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Acosh_9_v22};
/* Atanh-22: input -> output */
static const om_sig sig_Atanh_9_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Atanh-9: input -> output */
static const om_sig sig_Atanh_9 = {9, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Atanh_9_v22};
static const om_sig_attr attrs_ThresholdedRelu_10_v22[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{NULL, 0, 0}};
/* ThresholdedRelu-22: X -> Y */
static const om_sig sig_ThresholdedRelu_10_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ThresholdedRelu_10_v22, NULL};
static const om_sig_attr attrs_ThresholdedRelu_10[] = {{"alpha", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* ThresholdedRelu-10: X -> Y */
static const om_sig sig_ThresholdedRelu_10 = {10, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_ThresholdedRelu_10, &sig_ThresholdedRelu_10_v22};
static const om_sig_attr attrs_Celu_12_v28[] = {{"alpha", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Celu-28: X -> Y */
static const om_sig sig_Celu_12_v28 = {28, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_Celu_12_v28, NULL};
static const om_sig_attr attrs_Celu_12[] = {{"alpha", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Celu-12: X -> Y */
static const om_sig sig_Celu_12 = {12, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, attrs_Celu_12,
	&sig_Celu_12_v28};
static const om_sig_attr attrs_Shrink_9[] = {{"bias", OM_ATTR_FLOAT, 0},
	{"lambd", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Shrink-9: input -> output */
static const om_sig sig_Shrink_9 = {9, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Shrink_9,
	NULL};
/* Mish-22: X -> Y */
static const om_sig sig_Mish_18_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Mish-18: X -> Y */
static const om_sig sig_Mish_18 = {18, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Mish_18_v22};
static const om_sig_attr attrs_Swish_24[] = {{"alpha", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* Swish-24: X -> Y */
static const om_sig sig_Swish_24 = {24, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, attrs_Swish_24,
	NULL};
static const om_sig_attr attrs_SwiGLU_28[] = {{"alpha", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* SwiGLU-28: A B -> Y */
static const om_sig sig_SwiGLU_28 = {28, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1, attrs_SwiGLU_28,
	NULL};
/* StringConcat-20: X Y -> Z */
static const om_sig sig_StringConcat_20 = {20, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL,
	NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	/* binary, broadcasting */
	ROWB(Add, 1, EI | C, OM_OPC_ADD), ROWB(Sub, 1, EI, OM_OPC_SUB),
	ROWB(Mul, 1, EI | C, OM_OPC_MUL),
	{"Div", "", 1, om_ew_infer_Div, om_ew_kernel_Div, EI, &sig_Div_1, OM_OPC_DIV,
	 om_layout_divide, 0, NULL},
	ROWC(Pow, 1, EI, OM_OPC_POW),
	ROW(Mod, 10, EI), ROW(PRelu, 1, EI),
	ROWC(Equal, 1, E | C, OM_OPC_EQUAL), ROW(Less, 1, E), ROW(LessOrEqual, 12, E), ROW(Greater, 1, E),
	ROW(GreaterOrEqual, 12, E),
	ROW(And, 1, EI | C), ROW(Or, 1, EI | C), ROW(Xor, 1, EI | C),
	ROW(BitShift, 11, EI), ROW(BitwiseAnd, 18, EI | C), ROW(BitwiseOr, 18, EI | C),
	ROW(BitwiseXor, 18, EI | C),
	/* variadic, ternary */
	ROW(Min, 1, EI | C), ROW(Max, 1, EI | C), ROW(Sum, 1, EI | C), ROW(Mean, 1, EI | C),
	ROW(Where, 9, E),
	{"Clip", "", 1, om_ew_infer_Clip6, om_ew_kernel_Clip6, EI, &sig_Clip_1, OM_OPC_CLIP,
	 om_layout_elementwise, 0, NULL},
	{"Clip", "", 11, om_ew_infer_Clip11, om_ew_kernel_Clip11, EI, &sig_Clip_11, OM_OPC_CLIP,
	 om_layout_elementwise, 0, NULL},
	/* unary */
	ROW(Neg, 1, EI), ROW(Abs, 1, EI), ROWC(Sqrt, 1, EI, OM_OPC_SQRT),
	ROWC(Reciprocal, 1, EI, OM_OPC_RECIPROCAL), ROW(Exp, 1, EI), ROW(Log, 1, EI),
	ROWC(Erf, 9, EI, OM_OPC_ERF), ROWB(Tanh, 1, EI, OM_OPC_TANH),
	ROWB(Sigmoid, 1, EI, OM_OPC_SIGMOID), ROWB(HardSigmoid, 1, EI, OM_OPC_HARD_SIGMOID),
	ROWB(HardSwish, 14, EI, OM_OPC_HARD_SWISH), ROWB(Relu, 1, EI, OM_OPC_RELU),
	ROWB(LeakyRelu, 1, EI, OM_OPC_LEAKY_RELU), ROW(Elu, 1, EI), ROW(Selu, 1, EI),
	ROW(Softplus, 1, EI), ROW(Softsign, 1, EI), ROWC(Gelu, 20, EI, OM_OPC_GELU),
	ROW(Floor, 1, EI), ROW(Ceil, 1, EI),
	ROW(Round, 11, EI), ROW(Sign, 9, EI), ROWC(Not, 1, EI, OM_OPC_NOT), ROW(BitwiseNot, 18, EI),
	ROW(IsNaN, 9, E), ROW(IsInf, 10, E),
	ROW(Sin, 7, EI), ROW(Cos, 7, EI), ROW(Tan, 7, EI), ROW(Asin, 7, EI), ROW(Acos, 7, EI),
	ROW(Atan, 7, EI), ROW(Sinh, 9, EI), ROW(Cosh, 9, EI), ROW(Asinh, 9, EI),
	ROW(Acosh, 9, EI), ROW(Atanh, 9, EI), ROW(ThresholdedRelu, 10, EI), ROW(Celu, 12, EI),
	ROW(Shrink, 9, EI), ROW(Mish, 18, EI), ROWB(Swish, 24, EI, OM_OPC_SWISH),
	ROW(SwiGLU, 28, OM_OP_EXACT), /* not elementwise: halves the last axis */
	ROW(StringConcat, 20, E),
};

const om_op_table om_ops_elementwise = OM_TABLE(rows);
