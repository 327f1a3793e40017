/* ops_generate.c — not written yet: the table is empty. */
#include "op.h"

const om_op_table om_ops_generate = {NULL, 0};
