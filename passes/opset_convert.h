/* opset_convert.h — om_opset_convert's driver (opset_convert.c), its graph edits
 * (opset_edit.c) and the per-op adapters (opset_adapters.c). */
#ifndef OM_OPSET_CONVERT_H
#define OM_OPSET_CONVERT_H

#include "pass.h"
#include "registry.h"

/* One node on its way from opset `src` to `dst` of the default domain. */
typedef struct om_adapt {
	om_pass_ctx *c;
	om_graph *g;
	om_node *n;
	const om_op *from, *to;    /* n's row at src and at dst (to NULL: no row there) */
	const om_sig *sfrom, *sto; /* their signatures there (sto NULL: the op is not at dst) */
	int64_t src, dst;
	bool toposort;             /* the adapter added nodes: the graph is sorted again */
} om_adapt;

/* An adapter rewrites a->n (attributes, inputs, added nodes) so that it means at a->dst what
 * it meant at a->src; the driver then holds the node to the target's signature. */
typedef om_kind (*om_adapt_fn)(om_adapt *a);

/** The adapter of a->from (the row the node resolves to at src), or NULL when the op has
 *  none: its row and signature decide alone. */
om_adapt_fn om_adapter_of(const om_adapt *a);
/** OM_ERR_UNSUPPORTED naming the node and its op, with the opsets and the reason. */
om_kind om_adapt_fail(om_adapt *a, const char *why);

/* ---- edits (opset_edit.c) ---------------------------------------------------------------- */
/** Whether signature s knows attribute `name` (s NULL: no). */
bool om_sig_knows(const om_sig *s, const char *name);
/** The constant data of v (an initializer, a folded value or a Constant node's `value`), or
 *  NULL when v is not a constant. */
const om_tensor *om_adapt_const(const om_graph *g, const om_value *v);
/** Sets n->in[slot] = v, growing the input list (new slots omitted, NULL). */
om_kind om_adapt_set_input(om_adapt *a, int32_t slot, om_value *v);
/** Drops trailing omitted inputs. */
void om_adapt_trim_inputs(om_node *n);
/** Removes attribute `name` from n (nothing when absent). */
void om_adapt_drop_attr(om_node *n, const char *name);
/** Sets an INTS attribute. */
om_kind om_adapt_set_ints(om_adapt *a, om_node *n, const char *name, const int64_t *v,
			  int64_t count);
/** Sets an INT attribute. */
om_kind om_adapt_set_int(om_adapt *a, om_node *n, const char *name, int64_t v);
/** Sets a STRING attribute. */
om_kind om_adapt_set_string(om_adapt *a, om_node *n, const char *name,
			    const char *s);
/** A new initializer: an int64 tensor of `count` elements (1-D, or a scalar when rank 0). */
om_value *om_adapt_int64s(om_adapt *a, const char *hint, const int64_t *v, int64_t count,
			  int32_t rank);
/** A new initializer: a scalar (rank 0) or [0]-shaped (count 0) tensor of dtype (a float
 *  type) holding x. NULL when out of memory or dtype is not float, double or float16. */
om_value *om_adapt_float(om_adapt *a, const char *hint, int32_t dtype, double x, int64_t count);
/** A new node of the default domain added to a->g (the graph is sorted before it is saved),
 *  with fresh outputs when `outs` is NULL. */
om_node *om_adapt_node(om_adapt *a, const char *op, int32_t nin, om_value *const *in,
		       int32_t nout);
/** v's rank, the extent of its dim `axis` and its element type, from its declaration or
 *  else the inference the driver ran before converting: -1, -1 and 0 when not known. */
int32_t om_adapt_rank(const om_adapt *a, const om_value *v);
int64_t om_adapt_dim(const om_adapt *a, const om_value *v, int32_t axis);
int32_t om_adapt_elem(const om_adapt *a, const om_value *v);

/* ---- generic adapters (opset_adapters.c), used by the per-op ones ------------------------ */
/* An attribute that ONNX made an input (or back): ints <-> int64 1-D, int <-> int64 [1],
 * float <-> a scalar of input 0's element type, float <-> a float scalar. */
enum om_attr_form { OM_AF_INTS, OM_AF_INT1, OM_AF_SCALAR_OF_X, OM_AF_FLOAT };
/** Moves attribute `name` to input `slot` or back, whichever the target's signature takes
 *  (the source's and the target's signature say which form each has). */
om_kind om_adapt_attr_input(om_adapt *a, const char *name, int32_t slot, enum om_attr_form f);

#endif
