/* run_strings.c — who owns string elements during a run. */
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
	return x < y ? -1 : x > y;
}

/* Inside a session, string elements are borrowed: a kernel that moves strings copies pointers,
 * one that makes strings (Cast to string) mallocs them. Pointers in the outputs that no input
 * holds are new; the runner frees them when the run ends. */
om_kind om_run_adopt_strings(om_runner *r, const om_node *n, const om_tensor *const *in,
			     int32_t nin, om_tensor *const *out, int32_t nout, om_status *st)
{
	int64_t nold = 0, nnew = 0;
	for (int32_t i = 0; i < nin; i++)
		if (in[i] && in[i]->dtype == OM_STRING)
			nold += om_tensor_numel(in[i]);
	for (int32_t i = 0; i < nout; i++)
		if (out[i] && out[i]->dtype == OM_STRING)
			nnew += om_tensor_numel(out[i]);
	if (!nnew)
		return OM_OK;
	void **old = malloc(sizeof *old * (size_t)(nold + 1));
	if (!old)
		return om_error(st, OM_ERR_NOMEM, n, "out of memory for strings");
	if (r->nstrs + nnew > r->capstrs) {
		int64_t cap = r->capstrs ? r->capstrs : 64;
		while (cap < r->nstrs + nnew)
			cap *= 2;
		void **a = realloc(r->strs, sizeof *a * (size_t)cap);
		if (!a) {
			free(old);
			return om_error(st, OM_ERR_NOMEM, n, "out of memory for strings");
		}
		r->strs = a;
		r->capstrs = cap;
	}
	int64_t k = 0;
	for (int32_t i = 0; i < nin; i++)
		if (in[i] && in[i]->dtype == OM_STRING)
			for (int64_t e = 0, m = om_tensor_numel(in[i]); e < m; e++)
				old[k++] = (void *)((const om_str *)in[i]->data)[e].ptr;
	qsort(old, (size_t)k, sizeof *old, cmp_ptr);
	int64_t first = r->nstrs;
	for (int32_t i = 0; i < nout; i++) {
		if (!out[i] || out[i]->dtype != OM_STRING)
			continue;
		const om_str *e = out[i]->data;
		for (int64_t j = 0, m = om_tensor_numel(out[i]); j < m; j++) {
			void *p = (void *)e[j].ptr;
			if (p && !(k && bsearch(&p, old, (size_t)k, sizeof *old, cmp_ptr)))
				r->strs[r->nstrs++] = p;
		}
	}
	free(old);
	/* the same new pointer may appear twice: keep one */
	qsort(r->strs + first, (size_t)(r->nstrs - first), sizeof *r->strs, cmp_ptr);
	int64_t w = first;
	for (int64_t j = first; j < r->nstrs; j++)
		if (j == first || r->strs[j] != r->strs[w - 1])
			r->strs[w++] = r->strs[j];
	r->nstrs = w;
	return OM_OK;
}

void om_run_free_strings(om_runner *r)
{
	for (int64_t i = 0; i < r->nstrs; i++)
		free(r->strs[i]);
	r->nstrs = 0;
}
