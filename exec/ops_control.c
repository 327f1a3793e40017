/* ops_control.c — not written yet: the table is empty. */
#include "op.h"

const om_op_table om_ops_control = {NULL, 0};
