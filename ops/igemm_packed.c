/* igemm_packed.c — a constant int8 B packed once a step (igemm_packed.h). */
#include "igemm_packed.h"

/* Below this many elements of B packing does not pay (gemm_packed.c's GP_MIN_KN) */
enum { IGP_MIN_KN = 16384 };

typedef struct igp_state {
	int64_t key[4]; /* K, N, ldb, tb */
	om_igemm_pk *pk;
} igp_state;

static void igp_release(void *block)
{
	igp_state *s = block;
	om_igemm_pk_free(s->pk);
	s->pk = NULL;
}

om_igemm_pk *om_igemm_packed_get(om_ctx *c, int input, int64_t K, int64_t N, int64_t ldb,
				 bool tb, const int32_t *zb, int64_t nzb)
{
	const om_tensor *b = input < c->nin ? c->in[input] : NULL;
	if (c->exact || input >= 64 || !(c->const_in >> input & 1) || !b ||
	    b->dtype != OM_INT8 || K * N < IGP_MIN_KN)
		return NULL;
	for (int64_t j = 0; zb && j < nzb; j++)
		if (zb[j])
			return NULL;
	const int64_t key[4] = {K, N, ldb, tb};
	bool made;
	igp_state *s = om_ctx_state_keyed(c, igp_release, key, 4, sizeof *s, &made);
	if (s && made)
		s->pk = om_igemm_pack(b->data, K, N, ldb, tb, c->threads);
	return s ? s->pk : NULL;
}
