/* ops_move.h — the move operators' pieces that live in files of their own (slice.c, pad.c). */
#ifndef OM_OPS_MOVE_H
#define OM_OPS_MOVE_H

#include "op.h"

/** Checks the data input and output exist and the element type can be moved. */
om_kind om_move_need(om_ctx *c);

om_kind om_slice_infer(om_ctx *c);
/** Slice's move (run through om_move_run). */
om_kind om_slice_move(om_ctx *c);

om_kind om_pad_infer(om_ctx *c);
/** Pad's move (run through om_move_run). */
om_kind om_pad_move(om_ctx *c);

#endif
