/* ops_elementwise.c — the rows of the elementwise ops (kernels in ew_binary.c, ew_unary.c). */
#include "ew.h"

#define E (OM_OP_EXACT | OM_OP_ELEMENTWISE)
#define EI (E | OM_OP_INPLACE)
#define C OM_OP_COMMUTATIVE
#define ROW(Name, since, flags) {#Name, "", since, om_ew_infer_##Name, om_ew_kernel_##Name, flags}

static const om_op rows[] = {
	/* binary, broadcasting */
	ROW(Add, 1, EI | C), ROW(Sub, 1, EI), ROW(Mul, 1, EI | C), ROW(Div, 1, EI), ROW(Pow, 1, EI),
	ROW(Mod, 10, EI), ROW(PRelu, 1, EI),
	ROW(Equal, 1, E | C), ROW(Less, 1, E), ROW(LessOrEqual, 12, E), ROW(Greater, 1, E),
	ROW(GreaterOrEqual, 12, E),
	ROW(And, 1, EI | C), ROW(Or, 1, EI | C), ROW(Xor, 1, EI | C),
	ROW(BitShift, 11, EI), ROW(BitwiseAnd, 18, EI | C), ROW(BitwiseOr, 18, EI | C),
	ROW(BitwiseXor, 18, EI | C),
	/* variadic, ternary */
	ROW(Min, 1, EI | C), ROW(Max, 1, EI | C), ROW(Sum, 1, EI | C), ROW(Mean, 1, EI | C),
	ROW(Where, 9, E),
	{"Clip", "", 1, om_ew_infer_Clip6, om_ew_kernel_Clip6, EI},
	{"Clip", "", 11, om_ew_infer_Clip11, om_ew_kernel_Clip11, EI},
	/* unary */
	ROW(Neg, 1, EI), ROW(Abs, 1, EI), ROW(Sqrt, 1, EI), ROW(Reciprocal, 1, EI),
	ROW(Exp, 1, EI), ROW(Log, 1, EI), ROW(Erf, 9, EI), ROW(Tanh, 1, EI),
	ROW(Sigmoid, 1, EI), ROW(HardSigmoid, 1, EI), ROW(HardSwish, 14, EI), ROW(Relu, 1, EI),
	ROW(LeakyRelu, 1, EI), ROW(Elu, 1, EI), ROW(Selu, 1, EI), ROW(Softplus, 1, EI),
	ROW(Softsign, 1, EI), ROW(Gelu, 20, EI), ROW(Floor, 1, EI), ROW(Ceil, 1, EI),
	ROW(Round, 11, EI), ROW(Sign, 9, EI), ROW(Not, 1, EI), ROW(BitwiseNot, 18, EI),
	ROW(IsNaN, 9, E), ROW(IsInf, 10, E),
	ROW(Sin, 7, EI), ROW(Cos, 7, EI), ROW(Tan, 7, EI), ROW(Asin, 7, EI), ROW(Acos, 7, EI),
	ROW(Atan, 7, EI), ROW(Sinh, 9, EI), ROW(Cosh, 9, EI), ROW(Asinh, 9, EI),
	ROW(Acosh, 9, EI), ROW(Atanh, 9, EI), ROW(ThresholdedRelu, 10, EI), ROW(Celu, 12, EI),
	ROW(Shrink, 9, EI), ROW(Mish, 18, EI), ROW(Swish, 24, EI),
	ROW(SwiGLU, 28, OM_OP_EXACT), /* not elementwise: halves the last axis */
	ROW(StringConcat, 20, E),
};

const om_op_table om_ops_elementwise = OM_TABLE(rows);
