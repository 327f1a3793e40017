/* ops_resize.c — not written yet: the table is empty. */
#include "op.h"

const om_op_table om_ops_resize = {NULL, 0};
