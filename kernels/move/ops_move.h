/* ops_move.h — the move operators' pieces that live in files of their own (slice.c, pad.c). */
#ifndef OM_OPS_MOVE_H
#define OM_OPS_MOVE_H

#include "op.h"

/** Checks the data input and output exist and the element type can be moved. */
om_kind om_move_need(om_ctx *c);

/* the param of a Slice row: where starts, ends and axes are */
enum om_slice_form {
	OM_SLICE_ATTRS,  /* Slice-1: attributes (no steps) */
	OM_SLICE_INPUTS  /* Slice-10: inputs 1 to 4 (steps input 4) */
};

om_kind om_slice_infer(om_ctx *c);
/** Slice's move (run through om_move_run). */
om_kind om_slice_move(om_ctx *c);

/* the param of a Pad row: where the pads and the constant are (Pad-18's axes input is only a
 * wider signature: no earlier node has an input 3) */
enum om_pad_form {
	OM_PAD_PADDINGS, /* Pad-1: attributes `paddings` and `value` */
	OM_PAD_ATTRS,    /* Pad-2: attributes `pads` and `value` */
	OM_PAD_INPUTS    /* Pad-11: inputs pads, [constant_value], [axes] (18) */
};

om_kind om_pad_infer(om_ctx *c);
/** Pad's move (run through om_move_run). */
om_kind om_pad_move(om_ctx *c);

#endif
