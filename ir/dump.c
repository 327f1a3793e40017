/* dump.c — canonical text dump of a model's IR: what round-trip tests compare. */
#include <stdio.h>
#include <string.h>

#include "ir.h"

static void quoted(FILE *f, const char *s, int64_t len)
{
	if (!s)
		s = "", len = 0;
	if (len < 0)
		len = (int64_t)strlen(s);
	fputc('"', f);
	for (int64_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 32 || ch >= 127)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void indent(FILE *f, int n)
{
	fprintf(f, "%*s", 2 * n, "");
}

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static void dump_type(FILE *f, const om_type *t)
{
	if (t->kind == OM_TYPE_UNKNOWN) {
		fputs("?", f);
		return;
	}
	if (t->kind != OM_TYPE_TENSOR) {
		fputs("other", f);
		return;
	}
	fputs(om_dtype_name(t->elem), f);
	if (t->rank < 0)
		return;
	fputc('[', f);
	for (int32_t i = 0; i < t->rank; i++) {
		if (i)
			fputc(',', f);
		if (t->dims[i].value >= 0)
			fprintf(f, "%lld", (long long)t->dims[i].value);
		else if (t->dims[i].param)
			fputs(t->dims[i].param, f);
		else
			fputc('?', f);
	}
	fputc(']', f);
}

static void dump_tensor(FILE *f, const om_tensor *t)
{
	if (!t) {
		fputs("(kept as proto)", f);
		return;
	}
	fprintf(f, "%s[", om_dtype_name(t->dtype));
	for (int32_t i = 0; i < t->rank; i++)
		fprintf(f, "%s%lld", i ? "," : "", (long long)t->dims[i]);
	uint64_t h = 0xcbf29ce484222325ull;
	if (t->dtype == OM_STRING) {
		const om_str *s = t->data;
		for (int64_t i = 0, n = om_tensor_numel(t); i < n; i++) {
			h = fnv(&s[i].len, sizeof s[i].len, h);
			h = fnv(s[i].ptr, (size_t)s[i].len, h);
		}
	} else {
		h = fnv(t->data, t->nbytes, h);
	}
	fprintf(f, "] %zuB #%016llx", t->nbytes, (unsigned long long)h);
}

static void dump_kvs(FILE *f, const om_kv *kv, int32_t n, int ind)
{
	for (int32_t i = 0; i < n; i++) {
		indent(f, ind);
		fputs("meta ", f);
		quoted(f, kv[i].key, -1);
		fputs(" = ", f);
		quoted(f, kv[i].value, -1);
		fputc('\n', f);
	}
}

static void dump_value_ref(FILE *f, const om_value *v)
{
	if (!v)
		fputc('-', f);
	else
		fprintf(f, "%s%s", v->flags & OM_VALUE_OUTER ? "^" : "", v->name);
}

static void dump_graph(FILE *f, const om_graph *g, int ind);

static void dump_attr(FILE *f, const om_attr *a, int ind)
{
	indent(f, ind);
	fprintf(f, "attr %s type=%d", a->name, a->type);
	if (a->ref_attr_name)
		fprintf(f, " ref=%s", a->ref_attr_name);
	if (a->doc && *a->doc) {
		fputs(" doc=", f);
		quoted(f, a->doc, -1);
	}
	fputs(" = ", f);
	switch (a->type) {
	case OM_ATTR_FLOAT: fprintf(f, "%.9g", a->f); break;
	case OM_ATTR_INT: fprintf(f, "%lld", (long long)a->i); break;
	case OM_ATTR_STRING: quoted(f, a->s.ptr, a->s.len); break;
	case OM_ATTR_TENSOR: dump_tensor(f, a->t); break;
	case OM_ATTR_FLOATS:
	case OM_ATTR_INTS:
	case OM_ATTR_STRINGS:
		fputc('[', f);
		for (int64_t i = 0; i < a->n; i++) {
			if (i)
				fputc(',', f);
			if (a->type == OM_ATTR_FLOATS)
				fprintf(f, "%.9g", a->floats[i]);
			else if (a->type == OM_ATTR_INTS)
				fprintf(f, "%lld", (long long)a->ints[i]);
			else
				quoted(f, a->strings[i].ptr, a->strings[i].len);
		}
		fputc(']', f);
		break;
	case OM_ATTR_TENSORS:
		fputc('[', f);
		for (int64_t i = 0; i < a->n; i++) {
			fputs(i ? ", " : "", f);
			dump_tensor(f, a->tensors[i]);
		}
		fputc(']', f);
		break;
	case OM_ATTR_GRAPH:
		fputc('\n', f);
		if (a->g)
			dump_graph(f, a->g, ind + 1);
		return;
	case OM_ATTR_GRAPHS:
		fputc('\n', f);
		for (int64_t i = 0; i < a->n; i++)
			if (a->graphs[i])
				dump_graph(f, a->graphs[i], ind + 1);
		return;
	default: fprintf(f, "(kept as proto, %lld items)", (long long)a->n); break;
	}
	fputc('\n', f);
}

static void dump_node(FILE *f, const om_node *n, int ind)
{
	indent(f, ind);
	fprintf(f, "node %s%s%s ", n->domain, *n->domain ? "." : "", n->op);
	quoted(f, n->name, -1);
	fputs(" (", f);
	for (int32_t i = 0; i < n->nin; i++) {
		fputs(i ? ", " : "", f);
		dump_value_ref(f, n->in[i]);
	}
	fputs(") -> (", f);
	for (int32_t i = 0; i < n->nout; i++) {
		fputs(i ? ", " : "", f);
		dump_value_ref(f, n->out[i]);
	}
	fputc(')', f);
	if (n->overload && *n->overload)
		fprintf(f, " overload=%s", n->overload);
	if (n->doc && *n->doc) {
		fputs(" doc=", f);
		quoted(f, n->doc, -1);
	}
	fputc('\n', f);
	dump_kvs(f, n->meta, n->nmeta, ind + 1);
	for (int32_t i = 0; i < n->nattr; i++)
		dump_attr(f, &n->attrs[i], ind + 1);
}

static void dump_values(FILE *f, const char *what, om_value *const *vs, int32_t n, int ind)
{
	for (int32_t i = 0; i < n; i++) {
		const om_value *v = vs[i];
		indent(f, ind);
		fprintf(f, "%s ", what);
		dump_value_ref(f, v);
		fputs(": ", f);
		if (!strcmp(what, "init"))
			dump_tensor(f, v->init);
		else
			dump_type(f, &v->type);
		if (v->doc && *v->doc) {
			fputs(" doc=", f);
			quoted(f, v->doc, -1);
		}
		fputc('\n', f);
	}
}

static void dump_graph(FILE *f, const om_graph *g, int ind)
{
	indent(f, ind);
	fputs("graph ", f);
	quoted(f, g->name, -1);
	if (g->doc && *g->doc) {
		fputs(" doc=", f);
		quoted(f, g->doc, -1);
	}
	fputs(" {\n", f);
	dump_kvs(f, g->meta, g->nmeta, ind + 1);
	dump_values(f, "input", g->inputs, g->ninputs, ind + 1);
	dump_values(f, "init", g->inits, g->ninits, ind + 1);
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!(g->nodes[i]->flags & OM_NODE_DEAD))
			dump_node(f, g->nodes[i], ind + 1);
	dump_values(f, "output", g->outputs, g->noutputs, ind + 1);
	dump_values(f, "info", g->infos, g->ninfos, ind + 1);
	indent(f, ind);
	fputs("}\n", f);
}

void om_model_dump(const om_model *m, FILE *f)
{
	fprintf(f, "model ir=%lld version=%lld producer=", (long long)m->ir_version,
		(long long)m->model_version);
	quoted(f, m->producer_name, -1);
	fputc(' ', f);
	quoted(f, m->producer_version, -1);
	fputs(" domain=", f);
	quoted(f, m->domain, -1);
	if (m->doc && *m->doc) {
		fputs(" doc=", f);
		quoted(f, m->doc, -1);
	}
	fputc('\n', f);
	for (int32_t i = 0; i < m->nopsets; i++)
		fprintf(f, "opset \"%s\" %lld\n", m->opsets[i].domain ? m->opsets[i].domain : "",
			(long long)m->opsets[i].version);
	dump_kvs(f, m->meta, m->nmeta, 0);
	if (m->graph)
		dump_graph(f, m->graph, 0);
}
