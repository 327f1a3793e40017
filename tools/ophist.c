/* ophist.c — op-type histograms and type formatting for the commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ophist.h"

static om_ophist_row *row(om_ophist *h, const om_node *n)
{
	char key[128];
	if (n->domain[0] && strcmp(n->domain, "ai.onnx"))
		snprintf(key, sizeof key, "%s.%s", n->domain, n->op);
	else
		snprintf(key, sizeof key, "%s", n->op);
	for (int32_t i = 0; i < h->n; i++)
		if (!strcmp(h->rows[i].op, key))
			return &h->rows[i];
	if (h->n == h->cap) {
		int32_t cap = h->cap ? 2 * h->cap : 32;
		om_ophist_row *r = realloc(h->rows, sizeof *r * (size_t)cap);
		if (!r)
			return NULL;
		h->rows = r;
		h->cap = cap;
	}
	om_ophist_row *r = &h->rows[h->n++];
	memset(r, 0, sizeof *r);
	snprintf(r->op, sizeof r->op, "%s", key);
	return r;
}

int om_ophist_add(om_ophist *h, const om_graph *g, int col)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		om_ophist_row *r = row(h, n);
		if (!r)
			return -1;
		r->count[col]++;
		h->total[col]++;
		for (int32_t a = 0; a < n->nattr; a++) {
			if (n->attrs[a].g && om_ophist_add(h, n->attrs[a].g, col))
				return -1;
			for (int64_t k = 0; n->attrs[a].graphs && k < n->attrs[a].n; k++)
				if (om_ophist_add(h, n->attrs[a].graphs[k], col))
					return -1;
		}
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const om_ophist_row *)a)->op, ((const om_ophist_row *)b)->op);
}

void om_ophist_sort(om_ophist *h)
{
	if (h->n)
		qsort(h->rows, (size_t)h->n, sizeof *h->rows, by_name);
}

void om_ophist_free(om_ophist *h)
{
	free(h->rows);
	memset(h, 0, sizeof *h);
}

void om_type_format(const om_type *t, char *buf, size_t size)
{
	if (!size)
		return;
	if (t->kind != OM_TYPE_TENSOR) {
		snprintf(buf, size, "%s", t->kind == OM_TYPE_OTHER ? "(non-tensor)" : "?");
		return;
	}
	size_t k = (size_t)snprintf(buf, size, "%s", om_dtype_name(t->elem));
	if (t->rank < 0) {
		if (k < size)
			snprintf(buf + k, size - k, "[?]");
		return;
	}
	for (int32_t i = 0; i < t->rank && k < size; i++) {
		const om_dim d = t->dims[i];
		const char *sep = i ? "," : "[";
		if (d.value >= 0)
			k += (size_t)snprintf(buf + k, size - k, "%s%lld", sep, (long long)d.value);
		else
			k += (size_t)snprintf(buf + k, size - k, "%s%s", sep,
					      d.param ? d.param : "?");
	}
	if (k < size)
		snprintf(buf + k, size - k, "%s", t->rank ? "]" : "[]");
}
