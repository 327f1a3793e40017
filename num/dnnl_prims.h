/* dnnl_prims.h — a small ring of oneDNN matmul primitives over one packed B, keyed by the shape
 * of A: found, or made and put in a slot (the oldest replaced once all are taken). */
#ifndef OM_DNNL_PRIMS_H
#define OM_DNNL_PRIMS_H

#ifdef OM_HAVE_DNNL

#include <dnnl.h>
#include <stdbool.h>
#include <stdint.h>

enum { OM_DNNL_PKEY = 8, OM_DNNL_PRIMS = 8 };

/* One primitive and the memories whose data handles each execution sets */
typedef struct om_dnnl_prim {
	int64_t key[OM_DNNL_PKEY]; /* the caller's (its first nkey), zero after */
	dnnl_primitive_t prim;
	dnnl_memory_t a, c;
	dnnl_memory_t zp;      /* A's zero point, or NULL: the caller's (int8) */
	dnnl_memory_t scratch; /* the primitive's own scratchpad, or NULL: none needed */
} om_dnnl_prim;

/* Up to OM_DNNL_PRIMS of them (all zero: empty) */
typedef struct om_dnnl_prims {
	om_dnnl_prim prim[OM_DNNL_PRIMS];
	int n, next; /* primitives made; the slot the next one replaces once cap are */
} om_dnnl_prims;

/** The primitive of key (nkey <= OM_DNNL_PKEY values), or NULL. */
om_dnnl_prim *om_dnnl_prims_find(om_dnnl_prims *r, const int64_t *key, int nkey);
/** q for key: pd's primitive, with a (amd), c (cmd) and pd's scratchpad; false (q released)
 *  when oneDNN refuses, or when pd wants B in another layout than wmd. */
bool om_dnnl_prim_make(om_dnnl_prim *q, const int64_t *key, int nkey, dnnl_engine_t eng,
		       const_dnnl_primitive_desc_t pd, const dnnl_memory_desc_t *wmd,
		       const dnnl_memory_desc_t *amd, const dnnl_memory_desc_t *cmd);
/** Puts q in r's next slot of cap (<= OM_DNNL_PRIMS), releasing the oldest once all are
 *  taken; the slot it is in. */
om_dnnl_prim *om_dnnl_prims_put(om_dnnl_prims *r, int cap, const om_dnnl_prim *q);
void om_dnnl_prim_release(om_dnnl_prim *q);
void om_dnnl_prims_release(om_dnnl_prims *r);

#endif

#endif
