/* infer_cache.c — a dynamic step's run-time inference, remembered by what it read: a run whose
 * inputs have the shapes (and, for inference that reads values, the bytes) of the last miss
 * takes the output shapes from the cache and infers nothing. */
#include <stdlib.h>
#include <string.h>

#include "plan.h"

/* values a cached inference may depend on: at most this many bytes per non-constant input */
#define OM_ICACHE_VALUE_BYTES 4096

struct om_infer_cache {
	unsigned char *key, *scratch; /* the key of the cached result; the key being built */
	size_t nkey, capkey, capscratch;
	bool valid, by_value;         /* by_value: the key holds input bytes too */
	int32_t nout;
	om_tensor *out;               /* the cached output shapes */
};

static bool put(om_infer_cache *ic, size_t *n, const void *b, size_t len)
{
	if (*n + len > ic->capscratch) {
		size_t cap = (*n + len) * 2 + 256;
		unsigned char *q = realloc(ic->scratch, cap);
		if (!q)
			return false;
		ic->scratch = q;
		ic->capscratch = cap;
	}
	memcpy(ic->scratch + *n, b, len);
	*n += len;
	return true;
}

/* The key of this step's inputs into ic->scratch; false when it cannot be made (memory, or
 * values too large or not comparable as bytes: then the step is not cached). */
static bool build_key(const om_plan *p, const om_step *sp, const om_ctx *c, om_infer_cache *ic,
		      bool by_value, size_t *n)
{
	*n = 0;
	for (int32_t i = 0; i < c->nin; i++) {
		const om_tensor *t = c->in[i];
		int32_t head[2] = {t ? t->dtype : -1, t ? t->rank : -1};
		if (!put(ic, n, head, sizeof head))
			return false;
		if (!t)
			continue;
		if (t->rank > 0 && !put(ic, n, t->dims, sizeof *t->dims * (size_t)t->rank))
			return false;
		if (!by_value || p->slots[sp->in[i]].kind == OM_SLOT_CONST)
			continue;
		if (t->dtype == OM_STRING || t->nbytes > OM_ICACHE_VALUE_BYTES)
			return false;
		if (!put(ic, n, &t->nbytes, sizeof t->nbytes) || !put(ic, n, t->data, t->nbytes))
			return false;
	}
	return true;
}

/* Inference with the values of non-constant inputs hidden, as at plan time: OK means the
 * result depends on shapes (and constants) only. */
static om_kind probe(const om_plan *p, const om_step *sp, const om_ctx *c)
{
	const om_tensor *fixed[16];
	om_tensor tfixed[16];
	const om_tensor **in = c->nin <= 16 ? fixed : malloc(sizeof *in * (size_t)c->nin);
	om_tensor *t = c->nin <= 16 ? tfixed : malloc(sizeof *t * (size_t)c->nin);
	om_kind rc = OM_NEED_VALUE;
	if (in && t) {
		for (int32_t i = 0; i < c->nin; i++) {
			in[i] = c->in[i];
			if (!in[i] || p->slots[sp->in[i]].kind == OM_SLOT_CONST)
				continue;
			t[i] = *in[i];
			t[i].data = NULL;
			in[i] = &t[i];
		}
		om_status st = {0};
		om_ctx pc = *c;
		pc.in = (const om_tensor *const *)in;
		pc.st = &st;
		rc = sp->op->infer(&pc);
	}
	if (in != fixed)
		free((void *)in);
	if (t != tfixed)
		free(t);
	return rc;
}

static void clear_outputs(const om_ctx *c)
{
	for (int32_t i = 0; i < c->nout; i++)
		if (c->out[i])
			memset(c->out[i], 0, sizeof *c->out[i]);
}

om_kind om_infer_step(const om_plan *p, const om_step *sp, om_infer_cache **cache, om_ctx *c)
{
	om_infer_cache *ic = *cache;
	if (!ic && (ic = *cache = calloc(1, sizeof *ic)) == NULL)
		return sp->op->infer(c);
	size_t n = 0;
	if (ic->valid && ic->nout == c->nout && build_key(p, sp, c, ic, ic->by_value, &n) &&
	    n == ic->nkey && !memcmp(ic->scratch, ic->key, n)) {
		for (int32_t i = 0; i < c->nout; i++)
			if (c->out[i])
				*c->out[i] = ic->out[i];
		return OM_OK;
	}
	ic->valid = false;
	om_kind rc = probe(p, sp, c);
	bool by_value = rc != OM_OK;
	if (by_value) {
		clear_outputs(c);
		rc = sp->op->infer(c);
	}
	if (rc || !build_key(p, sp, c, ic, by_value, &n))
		return rc;
	if (ic->nout < c->nout) {
		om_tensor *q = realloc(ic->out, sizeof *q * (size_t)c->nout);
		if (!q)
			return rc;
		ic->out = q;
	}
	ic->nout = c->nout;
	for (int32_t i = 0; i < c->nout; i++) {
		if (c->out[i]) {
			ic->out[i] = *c->out[i];
			ic->out[i].data = NULL;
		}
	}
	/* the cached key takes the scratch buffer; the old key becomes the scratch */
	unsigned char *k = ic->key;
	size_t cap = ic->capkey;
	ic->key = ic->scratch;
	ic->capkey = ic->capscratch;
	ic->scratch = k;
	ic->capscratch = cap;
	ic->nkey = n;
	ic->by_value = by_value;
	ic->valid = true;
	return rc;
}

void om_infer_cache_free(om_infer_cache *ic)
{
	if (!ic)
		return;
	free(ic->key);
	free(ic->scratch);
	free(ic->out);
	free(ic);
}
