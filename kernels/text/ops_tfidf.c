/* ops_tfidf.c — TfIdfVectorizer (opset 9): counts the n-grams of the pool (pool_int64s or
 * pool_strings; ngram_counts[k] is where the (k + 1)-grams start) of lengths min_gram_length to
 * max_gram_length in each row of X ([C] or [B, C]; int32, int64 or string), n-grams of 2 or
 * more items also with skips of 1 to max_skip_count items between them (unigrams once); the
 * count of the pool's n-gram j goes to column ngram_indexes[j]. Y (float, [max index + 1] or
 * [B, max index + 1]): TF the counts, IDF the n-gram's weight (weights[j], 1 without weights)
 * where the count is not 0, TFIDF the weight times the count. As ONNX's
 * reference and ONNX Runtime: an n-gram is looked for only while its prefix is the prefix of
 * some counted n-gram, and an n-gram listed twice counts for its last listing (ONNX's reference;
 * ONNX Runtime refuses such a pool). */
#include <stdlib.h>
#include <string.h>

#include "text_util.h"

enum { TF = 0, IDF = 1, TFIDF = 2 };

typedef struct gram {
	int64_t first; /* pool index of its first item */
	int64_t n;     /* items */
	int64_t id;    /* index into ngram_indexes */
} gram;

typedef struct tfidf {
	int mode;
	int64_t min_n, max_n, max_skip;
	const int64_t *ints;    /* the pool: ints or strs */
	const om_str *strs;
	gram *grams;            /* loaded n-grams, sorted by items then length */
	int64_t ngrams;
	const int64_t *indexes; /* ngram_indexes */
	int64_t nindexes;
	float *col_w;           /* the weight of each column (its n-gram's), or NULL: none */
	int64_t out_size;
} tfidf;

/* An item sequence: pool items or X's items of one row with a stride. */
typedef struct seq {
	const int64_t *ints;    /* int pool */
	const om_str *strs;     /* string pool or string X */
	const int32_t *i32;     /* int32 X */
	int64_t first, step;
} seq;

static int cmp_item(const seq *a, int64_t i, const seq *b, int64_t j)
{
	const int64_t ia = a->first + i * a->step, jb = b->first + j * b->step;
	if (a->strs) {
		const om_str *x = &a->strs[ia], *y = &b->strs[jb];
		const int64_t m = x->len < y->len ? x->len : y->len;
		const int r = m ? memcmp(x->ptr, y->ptr, (size_t)m) : 0;
		if (r)
			return r;
		return x->len < y->len ? -1 : x->len > y->len;
	}
	const int64_t x = a->i32 ? a->i32[ia] : a->ints[ia];
	const int64_t y = b->i32 ? b->i32[jb] : b->ints[jb];
	return x < y ? -1 : x > y;
}

/* Lexicographic order of n items of a against the gram g (shorter first on a tie). */
static int cmp_seq(const tfidf *t, const seq *a, int64_t n, const gram *g)
{
	const seq b = {t->ints, t->strs, NULL, g->first, 1};
	for (int64_t k = 0; k < n && k < g->n; k++) {
		const int r = cmp_item(a, k, &b, k);
		if (r)
			return r;
	}
	return n < g->n ? -1 : n > g->n;
}

/* Order of grams: by items, then length, then id (the later listing last). */
static int cmp_gram(const tfidf *t, const gram *a, const gram *b)
{
	const seq s = {t->ints, t->strs, NULL, a->first, 1};
	const int r = cmp_seq(t, &s, a->n, b);
	if (r)
		return r;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* Merge sort of g[0, n) by cmp_gram, tmp holding n grams. */
static void sort_grams(const tfidf *t, gram *g, gram *tmp, int64_t n)
{
	if (n < 2)
		return;
	const int64_t h = n / 2;
	sort_grams(t, g, tmp, h);
	sort_grams(t, g + h, tmp, n - h);
	int64_t i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = cmp_gram(t, &g[j], &g[i]) < 0 ? g[j++] : g[i++];
	while (i < h)
		tmp[k++] = g[i++];
	while (j < n)
		tmp[k++] = g[j++];
	memcpy(g, tmp, sizeof *g * (size_t)n);
}

static void tfidf_free(tfidf *t)
{
	free(t->grams);
	free(t->col_w);
	t->grams = NULL;
	t->col_w = NULL;
}

/* Reads and checks the attributes and loads the pool's n-grams of the counted lengths. */
static om_kind tfidf_load(om_ctx *c, tfidf *t)
{
	static const char *const modes[] = {"TF", "IDF", "TFIDF", NULL};
	const om_node *nd = c->node;
	memset(t, 0, sizeof *t);
	t->mode = om_attr_choice(nd, "mode", modes, -1);
	if (t->mode < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, nd, "mode is not TF, IDF or TFIDF");
	t->min_n = om_attr_int(nd, "min_gram_length", 0);
	t->max_n = om_attr_int(nd, "max_gram_length", 0);
	t->max_skip = om_attr_int(nd, "max_skip_count", -1);
	if (t->min_n < 1 || t->max_n < t->min_n || t->max_skip < 0 || t->max_skip > INT32_MAX)
		return om_error(c->st, OM_ERR_INVALID_MODEL, nd, "min_gram_length %lld, "
				"max_gram_length %lld, max_skip_count %lld: need 1 <= min <= max, "
				"0 <= skips", (long long)t->min_n, (long long)t->max_n,
				(long long)t->max_skip);
	int64_t np = 0, nc = 0;
	t->ints = om_attr_ints(nd, "pool_int64s", &np);
	const om_attr *ps = om_node_attr(nd, "pool_strings");
	if (ps && ps->type == OM_ATTR_STRINGS && ps->n > 0) {
		if (np > 0)
			return om_error(c->st, OM_ERR_INVALID_MODEL, nd,
					"both pool_int64s and pool_strings");
		t->ints = NULL;
		t->strs = ps->strings;
		np = ps->n;
		for (int64_t i = 0; i < np; i++)
			if (t->strs[i].len < 0 || (t->strs[i].len && !t->strs[i].ptr))
				return om_error(c->st, OM_ERR_INVALID_MODEL, nd, "malformed pool");
	}
	if (np <= 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, nd, "no pool_int64s nor pool_strings");
	const int64_t *counts = om_attr_ints(nd, "ngram_counts", &nc);
	t->indexes = om_attr_ints(nd, "ngram_indexes", &t->nindexes);
	if (nc <= 0 || t->nindexes <= 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, nd, "no ngram_counts or ngram_indexes");
	int64_t most = -1;
	for (int64_t i = 0; i < t->nindexes; i++) {
		if (t->indexes[i] < 0 || t->indexes[i] >= INT32_MAX)
			return om_error(c->st, OM_ERR_INVALID_MODEL, nd, "ngram_indexes[%lld] is %lld",
					(long long)i, (long long)t->indexes[i]);
		if (t->indexes[i] > most)
			most = t->indexes[i];
	}
	t->out_size = most + 1;
	for (int64_t k = 0; k < nc; k++)
		if (counts[k] < 0 || counts[k] > np || (k && counts[k] < counts[k - 1]))
			return om_error(c->st, OM_ERR_INVALID_MODEL, nd,
					"ngram_counts[%lld] is %lld (pool of %lld)", (long long)k,
					(long long)counts[k], (long long)np);
	t->grams = malloc(sizeof *t->grams * (size_t)np);
	gram *tmp = malloc(sizeof *tmp * (size_t)np);
	if (!t->grams || !tmp) {
		free(tmp);
		return om_error(c->st, OM_ERR_NOMEM, nd, "out of memory");
	}
	int64_t id = 0, ng = 0;
	for (int64_t k = 0; k < nc; k++) {
		const int64_t size = k + 1, start = counts[k];
		const int64_t end = k + 1 < nc ? counts[k + 1] : np;
		const int64_t grams = (end - start) / size;
		if (id + grams > t->nindexes) {
			free(tmp);
			return om_error(c->st, OM_ERR_INVALID_MODEL, nd, "%lld ngram_indexes for "
					"more n-grams", (long long)t->nindexes);
		}
		if (size >= t->min_n && size <= t->max_n)
			for (int64_t j = 0; j < grams; j++)
				t->grams[ng++] = (gram){start + j * size, size, id + j};
		id += grams;
	}
	/* weights[i] is the weight of the pool's i-th n-gram (ONNX's text, ONNX Runtime), which
	 * counts in column ngram_indexes[i] */
	int64_t nw = 0;
	const float *weights = om_attr_floats(nd, "weights", &nw);
	if (nw > 0 && nw < id) {
		free(tmp);
		return om_error(c->st, OM_ERR_INVALID_MODEL, nd, "%lld weights for %lld n-grams",
				(long long)nw, (long long)id);
	}
	if (nw > 0) {
		t->col_w = calloc((size_t)t->out_size, sizeof *t->col_w);
		if (!t->col_w) {
			free(tmp);
			return om_error(c->st, OM_ERR_NOMEM, nd, "out of memory");
		}
		for (int64_t i = 0; i < id; i++)
			t->col_w[t->indexes[i]] = weights[i];
	}
	sort_grams(t, t->grams, tmp, ng);
	free(tmp);
	/* an n-gram listed twice: the last listing (the highest id, sorted last) */
	int64_t w = 0;
	for (int64_t i = 0; i < ng; i++) {
		if (w && cmp_gram(t, &(gram){t->grams[i].first, t->grams[i].n, 0},
				  &(gram){t->grams[w - 1].first, t->grams[w - 1].n, 0}) == 0)
			w--;
		t->grams[w++] = t->grams[i];
	}
	t->ngrams = w;
	return OM_OK;
}

/* Looks the n items of x up: *prefix when some loaded n-gram starts with them, and the id of
 * the one that is them (-1: none). */
static void lookup(const tfidf *t, const seq *x, int64_t n, bool *prefix, int64_t *id)
{
	int64_t lo = 0, hi = t->ngrams;
	while (lo < hi) {
		const int64_t mid = lo + (hi - lo) / 2;
		if (cmp_seq(t, x, n, &t->grams[mid]) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*prefix = false;
	*id = -1;
	if (lo == t->ngrams)
		return;
	const gram *g = &t->grams[lo];
	if (g->n < n)
		return;
	const seq b = {t->ints, t->strs, NULL, g->first, 1};
	for (int64_t k = 0; k < n; k++)
		if (cmp_item(x, k, &b, k))
			return;
	*prefix = true;
	if (g->n == n)
		*id = g->id;
}

static void count_row(const tfidf *t, const seq *row, int64_t C, int64_t *freq)
{
	int64_t start_n = t->min_n;
	for (int64_t skip = 1; skip <= t->max_skip + 1; skip++) {
		for (int64_t s = 0; s < C; s++) {
			if (start_n - 1 > (C - 1 - s) / skip) /* no n-gram of start_n fits */
				break;
			seq x = *row;
			x.first = row->first + s;
			x.step = skip;
			for (int64_t n = 1; n <= t->max_n && (n - 1) <= (C - 1 - s) / skip; n++) {
				bool prefix;
				int64_t id;
				lookup(t, &x, n, &prefix, &id);
				if (!prefix)
					break;
				if (n >= start_n && id >= 0)
					freq[t->indexes[id]]++;
			}
		}
		if (start_n == 1) { /* unigrams once: skips do not change them */
			start_n = 2;
			if (start_n > t->max_n)
				break;
		}
	}
}

/* Rows and items of X: [C] (a rank-0 X is one item) or [B, C]. */
static om_kind shape_of(om_ctx *c, const tfidf *t, const om_tensor *x, int64_t *B, int64_t *C)
{
	const bool str = x->dtype == OM_STRING;
	if (!(str || x->dtype == OM_INT32 || x->dtype == OM_INT64) || str != (t->strs != NULL))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "X of %s for a pool of %s",
				om_dtype_name(x->dtype), t->strs ? "strings" : "integers");
	if (x->rank > 2)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "X is neither [C] nor [B, C]");
	*B = x->rank == 2 ? x->dims[0] : 1;
	*C = x->rank == 0 ? 1 : x->dims[x->rank - 1];
	return OM_OK;
}

static om_kind tfidf_infer(om_ctx *c)
{
	tfidf t;
	int64_t B = 0, C = 0;
	om_kind rc = tfidf_load(c, &t);
	if (!rc)
		rc = shape_of(c, &t, c->in[0], &B, &C);
	tfidf_free(&t);
	if (rc)
		return rc;
	const int64_t dims[2] = {B, t.out_size};
	const bool two = c->in[0]->rank == 2;
	om_set_shape(c->out[0], OM_FLOAT, two ? 2 : 1, dims + !two);
	return OM_OK;
}

static om_kind tfidf_kernel(om_ctx *c)
{
	const om_tensor *x = c->in[0];
	tfidf t;
	int64_t B = 0, C = 0;
	om_kind rc = tfidf_load(c, &t);
	if (!rc)
		rc = shape_of(c, &t, x, &B, &C);
	if (!rc && x->rank == 2 && B < 1)
		rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "X is [0, C]: B must be > 0");
	if (!rc && x->dtype == OM_STRING)
		rc = om_text_check(c, x);
	const int64_t cells = B * t.out_size; /* B * C items exist; out_size < 2^31 */
	if (!rc && om_tensor_numel(c->out[0]) != cells)
		rc = om_error(c->st, OM_ERR_INTERNAL, c->node, "Y's shape does not fit");
	if (!rc)
		rc = om_ctx_reserve(c, sizeof(int64_t) * (size_t)cells, "TfIdfVectorizer counts");
	int64_t *freq = rc ? NULL : calloc((size_t)cells + 1, sizeof *freq);
	if (!rc && !freq)
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	if (rc) {
		tfidf_free(&t);
		return rc;
	}
	for (int64_t b = 0; b < B && C > 0; b++) {
		seq row = {NULL, NULL, NULL, b * C, 1};
		if (x->dtype == OM_STRING)
			row.strs = x->data;
		else if (x->dtype == OM_INT32)
			row.i32 = x->data;
		else
			row.ints = x->data;
		count_row(&t, &row, C, freq + b * t.out_size);
	}
	float *y = c->out[0]->data;
	for (int64_t i = 0; i < cells; i++) {
		const int64_t col = i % t.out_size, f = freq[i];
		const float w = t.col_w ? t.col_w[col] : 1.0f;
		switch (t.mode) {
		case TF: y[i] = (float)f; break;
		case IDF: y[i] = f > 0 ? w : 0.0f; break;
		default: y[i] = w * (float)f; break;
		}
	}
	free(freq);
	tfidf_free(&t);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_TfIdfVectorizer_9[] = {{"max_gram_length", OM_ATTR_INT, 1},
	{"max_skip_count", OM_ATTR_INT, 1}, {"min_gram_length", OM_ATTR_INT, 1},
	{"mode", OM_ATTR_STRING, 1}, {"ngram_counts", OM_ATTR_INTS, 1},
	{"ngram_indexes", OM_ATTR_INTS, 1}, {"pool_int64s", OM_ATTR_INTS, 0},
	{"pool_strings", OM_ATTR_STRINGS, 0}, {"weights", OM_ATTR_FLOATS, 0}, {NULL, 0, 0}};
/* TfIdfVectorizer-9: X -> Y */
static const om_sig sig_TfIdfVectorizer_9 = {9, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_TfIdfVectorizer_9, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"TfIdfVectorizer", "", 9, tfidf_infer, tfidf_kernel, OM_OP_EXACT, &sig_TfIdfVectorizer_9,
	 OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_tfidf = OM_TABLE(rows);
