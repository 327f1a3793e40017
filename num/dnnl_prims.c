/* dnnl_prims.c — a small ring of oneDNN matmul primitives keyed by the shape of A
 * (dnnl_prims.h). */
#include <string.h>

#include "dnnl_prims.h"

#ifdef OM_HAVE_DNNL

om_dnnl_prim *om_dnnl_prims_find(om_dnnl_prims *r, const int64_t *key, int nkey)
{
	for (int i = 0; i < r->n; i++)
		if (!memcmp(r->prim[i].key, key, sizeof *key * (size_t)nkey))
			return &r->prim[i];
	return NULL;
}

bool om_dnnl_prim_make(om_dnnl_prim *q, const int64_t *key, int nkey, dnnl_engine_t eng,
		       const_dnnl_primitive_desc_t pd, const dnnl_memory_desc_t *wmd,
		       const dnnl_memory_desc_t *amd, const dnnl_memory_desc_t *cmd)
{
	memset(q, 0, sizeof *q);
	memcpy(q->key, key, sizeof *key * (size_t)nkey);
	bool ok = dnnl_memory_desc_equal(wmd, dnnl_primitive_desc_query_md(
							   pd, dnnl_query_weights_md, 0)) &&
		  !dnnl_primitive_create(&q->prim, pd) &&
		  !dnnl_memory_create(&q->a, amd, eng, DNNL_MEMORY_NONE) &&
		  !dnnl_memory_create(&q->c, cmd, eng, DNNL_MEMORY_NONE);
	const dnnl_memory_desc_t *smd =
		ok ? dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0) : NULL;
	if (smd && dnnl_memory_desc_get_size(smd))
		ok = !dnnl_memory_create(&q->scratch, smd, eng, DNNL_MEMORY_ALLOCATE);
	if (!ok)
		om_dnnl_prim_release(q);
	return ok;
}

om_dnnl_prim *om_dnnl_prims_put(om_dnnl_prims *r, int cap, const om_dnnl_prim *q)
{
	int slot = r->n;
	if (r->n < cap) {
		r->n++;
	} else {
		slot = r->next;
		r->next = (slot + 1) % cap;
		om_dnnl_prim_release(&r->prim[slot]);
	}
	r->prim[slot] = *q;
	return &r->prim[slot];
}

void om_dnnl_prim_release(om_dnnl_prim *q)
{
	if (q->prim)
		dnnl_primitive_destroy(q->prim);
	dnnl_memory_t m[] = {q->a, q->c, q->zp, q->scratch};
	for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
		if (m[i])
			dnnl_memory_destroy(m[i]);
	memset(q, 0, sizeof *q);
}

void om_dnnl_prims_release(om_dnnl_prims *r)
{
	for (int i = 0; i < r->n; i++)
		om_dnnl_prim_release(&r->prim[i]);
	r->n = r->next = 0;
}

#endif
