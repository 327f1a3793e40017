/* ops_einsum.c — Einsum (opset 12): explicit or implicit output, repeated labels (diagonals),
 * ellipsis broadcasting; one sum over every label combination, in double. */
#include <stdlib.h>
#include <string.h>

#include "numrun.h"
#include "op.h"

#define ES_LETTERS 52
#define ES_LABELS (ES_LETTERS + OM_MAX_RANK) /* letters, then the ellipsis axes */
#define ES_MAX_IN 16

typedef struct es_plan {
	int32_t nin, nout;                         /* operands; output rank */
	int32_t rank[ES_MAX_IN], lab[ES_MAX_IN][OM_MAX_RANK];
	int32_t out[OM_MAX_RANK];                  /* output labels */
	int64_t ext[ES_LABELS];                    /* extent per label, -1 unused */
	int32_t used[ES_LABELS], nused;            /* labels in loop order */
} es_plan;

static int es_letter(char ch)
{
	return ch >= 'a' && ch <= 'z' ? ch - 'a' : ch >= 'A' && ch <= 'Z' ? ch - 'A' + 26 : -1;
}

static om_kind es_bad(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "equation: %s", what);
}

/* one term (no spaces) into labels; ell: rank the ellipsis covers (-1: none in the term) */
static om_kind es_term(om_ctx *c, const char *t, size_t len, int32_t rank, int32_t ellmax,
		       int32_t *lab, int32_t *n)
{
	int32_t letters = 0;
	bool ell = false;
	for (size_t i = 0; i < len; i++)
		if (t[i] == '.') {
			if (ell || i + 2 >= len || t[i + 1] != '.' || t[i + 2] != '.')
				return es_bad(c, "a broken or second ellipsis");
			ell = true, i += 2;
		} else if (es_letter(t[i]) < 0) {
			return es_bad(c, "a character that is not a letter");
		} else {
			letters++;
		}
	const int32_t e = ell ? (rank < 0 ? ellmax : rank - letters) : 0;
	if (e < 0 || (rank >= 0 && letters + e != rank) || letters + e > OM_MAX_RANK)
		return es_bad(c, "a term does not match its operand's rank");
	*n = 0;
	for (size_t i = 0; i < len; i++)
		if (t[i] == '.') {
			for (int32_t j = 0; j < e; j++)
				lab[(*n)++] = ES_LETTERS + OM_MAX_RANK - e + j;
			i += 2;
		} else {
			lab[(*n)++] = es_letter(t[i]);
		}
	return OM_OK;
}

static om_kind es_plan_make(om_ctx *c, es_plan *p)
{
	memset(p, 0, sizeof *p);
	const char *eq = om_attr_string(c->node, "equation", NULL);
	if (!eq || c->nin < 1 || c->nin > ES_MAX_IN)
		return es_bad(c, "missing, or too many operands");
	char buf[512];
	size_t n = 0;
	for (const char *s = eq; *s; s++)
		if (*s != ' ' && n + 1 < sizeof buf)
			buf[n++] = *s;
	buf[n] = 0;
	char *arrow = strstr(buf, "->");
	const size_t lhs = arrow ? (size_t)(arrow - buf) : n;
	p->nin = c->nin;
	int32_t ellmax = 0;
	for (int i = 0; i < c->nin; i++) {
		const int32_t dt = c->in[i] ? c->in[i]->dtype : 0;
		if (!c->in[i] || (!om_is_float_type(dt) && !om_is_int_type(dt)))
			return es_bad(c, "operands must be numeric");
		p->rank[i] = c->in[i]->rank;
	}
	for (int i = 0; i < ES_LABELS; i++)
		p->ext[i] = -1;
	/* the terms of the left side */
	size_t start = 0;
	int k = 0;
	for (size_t i = 0; i <= lhs; i++) {
		if (i < lhs && buf[i] != ',')
			continue;
		if (k >= c->nin)
			return es_bad(c, "more terms than operands");
		int32_t got;
		om_kind rc = es_term(c, buf + start, i - start, p->rank[k], OM_MAX_RANK,
				     p->lab[k], &got);
		if (rc)
			return rc;
		for (int32_t d = 0; d < got; d++)
			if (p->lab[k][d] >= ES_LETTERS) {
				const int32_t e = ES_LETTERS + OM_MAX_RANK - p->lab[k][d];
				ellmax = e > ellmax ? e : ellmax;
			}
		k++, start = i + 1;
	}
	if (k != c->nin)
		return es_bad(c, "fewer terms than operands");
	/* extents: letters must agree; ellipsis axes broadcast (1 stretches) */
	for (int i = 0; i < c->nin; i++)
		for (int32_t d = 0; d < p->rank[i]; d++) {
			const int32_t l = p->lab[i][d];
			const int64_t e = c->in[i]->dims[d];
			const bool ell = l >= ES_LETTERS;
			if (p->ext[l] < 0 || (ell && p->ext[l] == 1))
				p->ext[l] = e;
			else if (e != p->ext[l] && !(ell && e == 1))
				return es_bad(c, "a label has two extents");
		}
	/* the output */
	if (arrow) {
		int32_t got;
		/* an output ellipsis covers the widest input ellipsis */
		om_kind rc = es_term(c, arrow + 2, strlen(arrow + 2), -1, ellmax, p->out, &got);
		if (rc)
			return rc;
		p->nout = got;
	} else {
		for (int32_t l = ES_LABELS - ellmax; l < ES_LABELS; l++)
			p->out[p->nout++] = l;
		for (int32_t l = 0; l < ES_LETTERS; l++) {
			int cnt = 0;
			for (int i = 0; i < c->nin; i++)
				for (int32_t d = 0; d < p->rank[i]; d++)
					cnt += p->lab[i][d] == l;
			if (cnt == 1 && p->nout < OM_MAX_RANK)
				p->out[p->nout++] = l;
		}
	}
	for (int32_t d = 0; d < p->nout; d++) {
		if (p->ext[p->out[d]] < 0)
			return es_bad(c, "an output label not in the inputs");
		for (int32_t e = 0; e < d; e++)
			if (p->out[e] == p->out[d])
				return es_bad(c, "a repeated output label");
		p->used[p->nused++] = p->out[d];
	}
	int64_t total = 1;
	for (int32_t l = 0; l < ES_LABELS; l++) {
		bool in_out = false;
		for (int32_t d = 0; d < p->nout; d++)
			in_out |= p->out[d] == l;
		if (p->ext[l] >= 0 && !in_out)
			p->used[p->nused++] = l;
		if (p->ext[l] > 0 && total > INT64_MAX / p->ext[l])
			return es_bad(c, "the iteration space overflows");
		total *= p->ext[l] > 0 ? p->ext[l] : 1;
	}
	return OM_OK;
}

static om_kind es_infer(om_ctx *c)
{
	es_plan p;
	om_kind rc = es_plan_make(c, &p);
	if (rc)
		return rc;
	int64_t y[OM_MAX_RANK];
	for (int32_t d = 0; d < p.nout; d++)
		y[d] = p.ext[p.out[d]];
	om_set_shape(c->out[0], c->in[0]->dtype, p.nout, y);
	return OM_OK;
}

static om_kind es_kernel(om_ctx *c)
{
	es_plan p;
	om_kind rc = es_plan_make(c, &p);
	if (rc)
		return rc;
	double *v[ES_MAX_IN] = {0};
	int64_t stride[ES_MAX_IN][ES_LABELS], ny = 1;
	memset(stride, 0, sizeof stride);
	for (int32_t d = 0; d < p.nout; d++)
		ny *= p.ext[p.out[d]];
	double *y = calloc((size_t)ny + 1, sizeof(double));
	for (int i = 0; i < p.nin && y; i++) {
		const int64_t n = om_tensor_numel(c->in[i]);
		if (!(v[i] = malloc(sizeof(double) * (size_t)(n + 1))))
			break;
		om_load_f64(c->in[i]->dtype, c->in[i]->data, 1, n, v[i]);
		int64_t s = 1;
		for (int32_t d = p.rank[i] - 1; d >= 0; d--) {
			if (c->in[i]->dims[d] != 1)
				stride[i][p.lab[i][d]] += s;
			s *= c->in[i]->dims[d];
		}
	}
	bool ok = y != NULL;
	for (int i = 0; i < p.nin; i++)
		ok = ok && v[i];
	int64_t idx[ES_LABELS] = {0};
	bool empty = false;
	for (int32_t u = 0; u < p.nused; u++)
		empty |= p.ext[p.used[u]] == 0;
	while (ok && !empty) {
		double prod = 1;
		int64_t yo = 0;
		for (int i = 0; i < p.nin; i++) {
			int64_t off = 0;
			for (int32_t u = 0; u < p.nused; u++)
				off += idx[p.used[u]] * stride[i][p.used[u]];
			prod *= v[i][off];
		}
		for (int32_t d = 0; d < p.nout; d++)
			yo = yo * p.ext[p.out[d]] + idx[p.out[d]];
		y[yo] += prod;
		int32_t u = p.nused - 1;
		while (u >= 0 && ++idx[p.used[u]] == p.ext[p.used[u]])
			idx[p.used[u--]] = 0;
		if (u < 0)
			break;
	}
	if (ok)
		om_store_f64(c->out[0]->dtype, c->out[0]->data, 1, y, ny);
	for (int i = 0; i < p.nin; i++)
		free(v[i]);
	free(y);
	return ok ? OM_OK : om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_Einsum_12[] = {{"equation", OM_ATTR_STRING, 1}, {NULL, 0, 0}};
/* Einsum-12: Inputs... -> Output */
static const om_sig sig_Einsum_12 = {12, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff, 0x1, 0x0,
	0x0, attrs_Einsum_12, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"Einsum", "", 12, es_infer, es_kernel, OM_OP_EXACT, &sig_Einsum_12, OM_OPC_NONE, NULL, 0,
	 NULL},
};

const om_op_table om_ops_einsum = OM_TABLE(rows);
