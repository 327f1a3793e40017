/* pass_ctx.c — the pass context: opened over a model, closed with what it holds (pass.h). */
#include <stdlib.h>

#include "pass.h"
#include "uses.h"

om_kind om_pass_ctx_open(om_pass_ctx *c, om_model *m, const om_simplify_options *opt,
			 om_status *st)
{
	*c = (om_pass_ctx){.m = m, .scratch = om_arena_new(), .st = st};
	if (opt) {
		c->verbose = opt->verbose;
		c->fold_max = opt->fold_max_bytes;
		c->fold_cap = opt->fold_max_bytes;
		c->fold_qdq = opt->fold_qdq;
	}
	if (!c->fold_max)
		c->fold_max = (size_t)1 << 20;
	return c->scratch ? OM_OK : om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
}

void om_pass_ctx_close(om_pass_ctx *c)
{
	om_uses_close(c);
	om_outer_refs_reset(c);
	HASH_CLEAR(hh, c->info);
	HASH_CLEAR(hh, c->hashes); /* the entries are in scratch */
	om_arena_free(c->scratch);
	free(c->caps);
	c->info = NULL, c->hashes = NULL, c->scratch = NULL, c->caps = NULL;
}
