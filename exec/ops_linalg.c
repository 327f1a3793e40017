/* ops_linalg.c — not written yet: the table is empty. */
#include "op.h"

const om_op_table om_ops_linalg = {NULL, 0};
