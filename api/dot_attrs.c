/* dot_attrs.c — a node's attributes as a dot tooltip (om_dot_options.attributes), which the
 * HTML viewer of `omopt dot -o FILE.html` shows on click: one "name=value" line each, lists
 * cut after 16 items, strings after 64 bytes, tensors summarized, subgraphs named. (dot.c
 * gives edges their tensor's name as tooltip likewise.) */
#include <inttypes.h>
#include <stdio.h>

#include "dot.h"

enum { MAX_ITEMS = 16, MAX_STR = 64 };

static void put_str(FILE *f, om_str s)
{
	char buf[MAX_STR * 4 + 8];
	size_t k = 0;
	const int64_t n = s.len < MAX_STR ? s.len : MAX_STR;
	for (int64_t i = 0; i < n && s.ptr; i++)
		buf[k++] = s.ptr[i] ? s.ptr[i] : ' ';
	if (s.len > MAX_STR)
		buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
	buf[k] = 0;
	om_dot_escape(f, buf);
}

static void put_tensor(FILE *f, const om_tensor *t)
{
	if (!t) {
		fputs("tensor", f);
		return;
	}
	fprintf(f, "%s[", om_dtype_name(t->dtype));
	for (int32_t i = 0; i < t->rank; i++)
		fprintf(f, i ? ",%" PRId64 : "%" PRId64, t->dims[i]);
	fputc(']', f);
}

static void put_value(FILE *f, const om_attr *a)
{
	const int64_t n = a->n < MAX_ITEMS ? a->n : MAX_ITEMS;
	switch (a->type) {
	case OM_ATTR_FLOAT: fprintf(f, "%g", (double)a->f); return;
	case OM_ATTR_INT: fprintf(f, "%" PRId64, a->i); return;
	case OM_ATTR_STRING: put_str(f, a->s); return;
	case OM_ATTR_TENSOR: put_tensor(f, a->t); return;
	case OM_ATTR_GRAPH: fputs("(a subgraph, drawn as a cluster)", f); return;
	case OM_ATTR_FLOATS:
	case OM_ATTR_INTS:
	case OM_ATTR_STRINGS:
	case OM_ATTR_TENSORS:
		fputc('[', f);
		for (int64_t i = 0; i < n; i++) {
			if (i)
				fputc(',', f);
			if (a->type == OM_ATTR_FLOATS && a->floats)
				fprintf(f, "%g", (double)a->floats[i]);
			else if (a->type == OM_ATTR_INTS && a->ints)
				fprintf(f, "%" PRId64, a->ints[i]);
			else if (a->type == OM_ATTR_STRINGS && a->strings)
				put_str(f, a->strings[i]);
			else if (a->type == OM_ATTR_TENSORS && a->tensors)
				put_tensor(f, a->tensors[i]);
		}
		if (a->n > n)
			fprintf(f, ",... %" PRId64 " items", a->n);
		fputc(']', f);
		return;
	case OM_ATTR_GRAPHS: fprintf(f, "(%" PRId64 " subgraphs)", a->n); return;
	default: fputs("(not shown)", f); return;
	}
}

void om_dot_put_attributes(FILE *f, const om_node *n)
{
	fputs(", tooltip=\"", f);
	if (!n->nattr)
		fputs("(no attributes)", f);
	for (int32_t i = 0; i < n->nattr; i++) {
		if (i)
			fputs("\\n", f);
		om_dot_escape(f, n->attrs[i].name ? n->attrs[i].name : "?");
		fputc('=', f);
		put_value(f, &n->attrs[i]);
	}
	fputc('"', f);
}
