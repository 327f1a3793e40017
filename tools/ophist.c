/* ophist.c — op-type histograms and type formatting for the commands (ophist.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "ophist.h"

static om_ophist_row *row(om_ophist *h, const char *op)
{
	for (int i = 0; i < h->n; i++)
		if (!strcmp(h->rows[i].op, op))
			return &h->rows[i];
	if (h->n == h->cap) {
		int cap = h->cap ? 2 * h->cap : 32;
		om_ophist_row *r = realloc(h->rows, sizeof *r * (size_t)cap);
		if (!r)
			return NULL;
		h->rows = r;
		h->cap = cap;
	}
	om_ophist_row *r = &h->rows[h->n++];
	memset(r, 0, sizeof *r);
	snprintf(r->op, sizeof r->op, "%s", op);
	return r;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const om_ophist_row *)a)->op, ((const om_ophist_row *)b)->op);
}

om_kind om_ophist_add(om_ophist *h, const om_model *m, int col, om_status *st)
{
	om_op_count *counts;
	int n;
	om_kind k = om_model_op_counts(m, &counts, &n, st);
	for (int i = 0; !k && i < n; i++) {
		om_ophist_row *r = row(h, counts[i].op);
		if (!r) {
			k = cmd_error(st, OM_ERR_NOMEM, "out of memory");
			break;
		}
		r->count[col] += counts[i].count;
		h->total[col] += counts[i].count;
	}
	om_free(counts);
	if (!k && h->n)
		qsort(h->rows, (size_t)h->n, sizeof *h->rows, by_name);
	return k;
}

void om_ophist_free(om_ophist *h)
{
	free(h->rows);
	memset(h, 0, sizeof *h);
}

void om_io_format(const om_io_info *io, char *buf, size_t size)
{
	if (!size)
		return;
	if (!io->kind && !io->elem && io->rank < 0) {
		snprintf(buf, size, "?");
		return;
	}
	const char *elem = io->elem ? om_dtype_name(io->elem) : "?";
	if (io->kind == OM_SEQUENCE || io->kind == OM_OPTIONAL || io->kind < 0) {
		snprintf(buf, size, io->kind == OM_SEQUENCE ? "seq(%s)"
				    : io->kind == OM_OPTIONAL ? "optional(%s)" : "(non-tensor)",
			 elem);
		return;
	}
	size_t k = (size_t)snprintf(buf, size, "%s", elem);
	if (io->rank < 0) {
		if (k < size)
			snprintf(buf + k, size - k, "[?]");
		return;
	}
	for (int i = 0; i < io->rank && k < size; i++) {
		const char *sep = i ? "," : "[";
		if (io->dims[i] >= 0)
			k += (size_t)snprintf(buf + k, size - k, "%s%lld", sep,
					      (long long)io->dims[i]);
		else
			k += (size_t)snprintf(buf + k, size - k, "%s%s", sep,
					      io->dim_params[i] ? io->dim_params[i] : "?");
	}
	if (k < size)
		snprintf(buf + k, size - k, "%s", io->rank ? "]" : "[]");
}
