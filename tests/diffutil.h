/* diffutil.h — what the differential tests (test_diff_*.c) share: --seed/--count options, the
 * known-failing case lists, case seeds, hand-built models with symbolic dims, and tensor
 * comparison (bit for bit, or within a float tolerance). */
#ifndef OM_DIFFUTIL_H
#define OM_DIFFUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "ir.h"

/* ---- options ------------------------------------------------------------------------------ */

#if defined(__SANITIZE_ADDRESS__)
#define DT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DT_SANITIZED 1
#endif
#endif
#ifndef DT_SANITIZED
#define DT_SANITIZED 0
#endif

typedef struct dt_opts {
	uint64_t seed;
	int64_t count;   /* random cases to run */
	int verbose;     /* -v: one line per case */
	const char *only; /* --case ID: run just that case */
} dt_opts;

/** Reads `--seed N`, `--count N`, `--case ID` and `-v`; `count` defaults to plain_count, or
 *  asan_count in a sanitized build (CI runs both). Unknown arguments: usage on stderr, 2. */
static inline int dt_parse(int argc, char **argv, dt_opts *o, uint64_t seed, int64_t plain_count,
			   int64_t asan_count)
{
	*o = (dt_opts){.seed = seed, .count = DT_SANITIZED ? asan_count : plain_count};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			o->seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--count") && i + 1 < argc)
			o->count = strtoll(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--case") && i + 1 < argc)
			o->only = argv[++i];
		else if (!strcmp(argv[i], "-v"))
			o->verbose = 1;
		else {
			fprintf(stderr, "usage: %s [--seed N] [--count N] [--case ID] [-v]\n",
				argv[0]);
			return 2;
		}
	}
	return 0;
}

/** The seed of case i of a run seeded with `seed` (splitmix64): cases are independent, so a
 *  case id (its seed) reproduces it alone with --case. */
static inline uint64_t dt_case_seed(uint64_t seed, int64_t i)
{
	uint64_t z = seed + 0x9e3779b97f4a7c15u * (uint64_t)(i + 1);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return (z ^ (z >> 31)) | 1; /* never 0: xorshift needs a nonzero state */
}

/* ---- known failures ----------------------------------------------------------------------- */

/** A case that fails on main today for a reason owned by another task: id and a one-line
 *  reason. An id ending in '*' covers every case whose id starts with what precedes it (a
 *  whole op row, say); such an entry hides only findings, its passing cases count as agreeing.
 *  A listed case that passes fails the test (an entry with '*' when none of its cases that ran
 *  failed), so that the list is emptied as fixes land. At most 64 entries. */
typedef struct dt_known {
	const char *id;
	const char *reason;
} dt_known;

/** The index of the entry for id in list (NULL-terminated by a NULL id), or -1. */
static inline int dt_known_find(const dt_known *list, const char *id)
{
	for (int i = 0; list && list[i].id && i < 64; i++) {
		const size_t n = strlen(list[i].id);
		if (n && list[i].id[n - 1] == '*' ? !strncmp(list[i].id, id, n - 1)
						  : !strcmp(list[i].id, id))
			return i;
	}
	return -1;
}

/** Tallies of a differential run. */
typedef struct dt_tally {
	int64_t cases, ok, invalid, known, failed, fixed;
	int64_t runs; /* comparisons made (a case may make several) */
	int64_t seen[64], hits[64]; /* per known entry: cases run, cases failed */
} dt_tally;

/** Records a case's result: `finding` NULL when it passed. Prints findings, known ones (the
 *  first three of an entry) and listed exact ids that now pass. */
static inline void dt_record(dt_tally *t, const dt_known *list, const char *id,
			     const char *finding)
{
	const int k = dt_known_find(list, id);
	const bool wild = k >= 0 && list[k].id[strlen(list[k].id) - 1] == '*';
	t->cases++;
	if (k >= 0)
		t->seen[k]++;
	if (!finding && (k < 0 || wild)) {
		t->ok++;
		return;
	}
	if (!finding) {
		t->fixed++;
		printf("FIXED %s: listed as known (%s) but passes: remove it from the list\n", id,
		       list[k].reason);
	} else if (k >= 0) {
		t->known++;
		if (t->hits[k]++ < 3)
			printf("known %s: %s [%s]\n", id, finding, list[k].reason);
	} else {
		t->failed++;
		printf("FINDING %s: %s\n", id, finding);
	}
}

/** Reports entries with '*' whose cases all passed as fixed. */
static inline void dt_finish(dt_tally *t, const dt_known *list)
{
	for (int i = 0; list && list[i].id && i < 64; i++)
		if (list[i].id[strlen(list[i].id) - 1] == '*' && t->seen[i] && !t->hits[i]) {
			t->fixed++;
			printf("FIXED %s: listed as known (%s) but its %lld cases pass: remove it\n",
			       list[i].id, list[i].reason, (long long)t->seen[i]);
		}
}

/** Listed cases that the run did not reach (a smaller --count, --case) are not checked. */
static inline void dt_summary(const dt_tally *t, const char *what)
{
	printf("%s: %lld cases (%lld comparisons): %lld agree, %lld invalid both ways, "
	       "%lld known failures, %lld findings, %lld known now fixed\n",
	       what, (long long)t->cases, (long long)t->runs, (long long)t->ok, (long long)t->invalid,
	       (long long)t->known, (long long)t->failed, (long long)t->fixed);
}

/** The end of a run: dt_finish, dt_summary, and the test fails on any finding or fixed entry. */
static inline void dt_end(dt_tally *t, const dt_known *list, const char *what)
{
	dt_finish(t, list);
	dt_summary(t, what);
	if (t->failed || t->fixed)
		fail_msg("%lld findings, %lld known failures now fixed (see above)",
			 (long long)t->failed, (long long)t->fixed);
}

/** $OMOPT_FINDINGS (a folder) or NULL: where failing cases are saved as models. */
static inline const char *dt_findings_dir(void)
{
	const char *d = getenv("OMOPT_FINDINGS");
	return d && *d ? d : NULL;
}

/* ---- models ------------------------------------------------------------------------------- */

/** Sets v's tensor type: dims[i] >= 0 a number, else the symbol syms[i]. */
static inline void dt_set_type(om_model *m, om_value *v, int32_t elem, int32_t rank,
			       const int64_t *dims, const char *const *syms)
{
	v->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = elem, .rank = rank};
	v->type.dims = om_arena_alloc(m->arena, sizeof(om_dim) * (size_t)(rank + 1));
	for (int32_t i = 0; i < rank; i++)
		v->type.dims[i] = dims[i] >= 0 ? (om_dim){dims[i], NULL}
					       : (om_dim){-1, om_arena_strdup(m->arena, syms[i])};
}

/** A graph input `name` of that type (see dt_set_type). */
static inline om_value *dt_input(om_model *m, const char *name, int32_t elem, int32_t rank,
				 const int64_t *dims, const char *const *syms)
{
	om_graph *g = m->graph;
	om_value *v = om_graph_value(g, name);
	dt_set_type(m, v, elem, rank, dims, syms);
	v->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, v);
	return v;
}

/** An initializer `name` holding a copy of t. */
static inline om_value *dt_init(om_model *m, const char *name, const om_tensor *t)
{
	om_graph *g = m->graph;
	om_value *v = om_graph_value(g, name);
	v->init = om_model_tensor_copy(m, t);
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(m, &v->type, t);
	tu_push_value(g, &g->inits, &g->ninits, v);
	return v;
}

/** Lists v as a graph output (its type left as it is: unknown unless set). */
static inline void dt_output(om_model *m, om_value *v)
{
	v->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(m->graph, &m->graph->outputs, &m->graph->noutputs, v);
}

/* ---- comparison --------------------------------------------------------------------------- */

/** NULL when a and b have the same dtype, shape and bytes; else what differs, in buf. */
static inline const char *dt_diff_exact(const om_tensor *a, const om_tensor *b, char *buf,
					size_t size)
{
	if (a->dtype != b->dtype) {
		snprintf(buf, size, "dtype %s vs %s", om_dtype_name(a->dtype),
			 om_dtype_name(b->dtype));
		return buf;
	}
	int same = a->rank == b->rank;
	for (int32_t i = 0; same && i < a->rank; i++)
		same = a->dims[i] == b->dims[i];
	if (!same) {
		int k = snprintf(buf, size, "shape [");
		for (int32_t i = 0; i < a->rank && k < (int)size; i++)
			k += snprintf(buf + k, size - (size_t)k, "%s%lld", i ? "," : "",
				      (long long)a->dims[i]);
		if (k < (int)size)
			k += snprintf(buf + k, size - (size_t)k, "] vs [");
		for (int32_t i = 0; i < b->rank && k < (int)size; i++)
			k += snprintf(buf + k, size - (size_t)k, "%s%lld", i ? "," : "",
				      (long long)b->dims[i]);
		if (k < (int)size)
			snprintf(buf + k, size - (size_t)k, "]");
		return buf;
	}
	const size_t n = om_tensor_bytes_for(a->dtype, a->rank, a->dims);
	if (a->dtype == OM_STRING) {
		const om_str *sa = a->data, *sb = b->data;
		for (int64_t i = 0; i < om_tensor_numel(a); i++)
			if (sa[i].len != sb[i].len || memcmp(sa[i].ptr, sb[i].ptr, (size_t)sa[i].len)) {
				snprintf(buf, size, "string element %lld differs", (long long)i);
				return buf;
			}
		return NULL;
	}
	if (n && memcmp(a->data, b->data, n)) {
		const unsigned char *pa = a->data, *pb = b->data;
		size_t i = 0;
		while (pa[i] == pb[i])
			i++;
		snprintf(buf, size, "bytes differ from byte %zu of %zu", i, n);
		return buf;
	}
	return NULL;
}

/** Like dt_diff_exact, but float and double elements may differ by atol + rtol * |b|
 *  (NaN only where the other is NaN). */
static inline const char *dt_diff_close(const om_tensor *a, const om_tensor *b, double rtol,
					double atol, char *buf, size_t size)
{
	if ((a->dtype != OM_FLOAT && a->dtype != OM_DOUBLE) || a->dtype != b->dtype)
		return dt_diff_exact(a, b, buf, size);
	if (a->rank != b->rank || memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank)) {
		om_tensor x = *a, y = *b;
		x.dtype = y.dtype = OM_UINT8; /* shapes differ: dt_diff_exact says how */
		return dt_diff_exact(&x, &y, buf, size);
	}
	const int64_t n = om_tensor_numel(a);
	for (int64_t i = 0; i < n; i++) {
		const double x = a->dtype == OM_FLOAT ? ((const float *)a->data)[i]
						      : ((const double *)a->data)[i];
		const double y = b->dtype == OM_FLOAT ? ((const float *)b->data)[i]
						      : ((const double *)b->data)[i];
		if (isnan(x) || isnan(y) ? isnan(x) == isnan(y)
					 : x == y || fabs(x - y) <= atol + rtol * fabs(y))
			continue;
		snprintf(buf, size, "element %lld: %.9g vs %.9g", (long long)i, x, y);
		return buf;
	}
	return NULL;
}

#endif
