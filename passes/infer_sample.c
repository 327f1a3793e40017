/*
 * infer_sample.c — one node's types, shapes and plan-time values, from its op row evaluated at
 * sample points of the symbols it sees (docs/passes.md, "Shape inference").
 *
 * The node's inputs are made concrete once per run: every symbol (a dim's, or a plan-time
 * element's) takes a number, constants keep their data and plan-time values become data. The
 * row's infer gives the output types; when every output is a small numeric tensor the row's
 * kernel gives their values. A run where the row fails is a point where the model cannot run
 * and is ignored. An output dim (or element) is a number when equal in every run that
 * succeeded, the symbol s when it equals s's value in every such run (and no other symbol
 * does, counting the runs where no symbol is 0 alone too), else unknown.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "half.h"
#include "index_util.h"
#include "infer.h"
#include "match.h"

enum {
	MAX_IO = 64,
	MAX_OUT = OM_INFER_MAX_OUT,
	MAX_SYMS = 32,
	MAX_CONSTS = 8,    /* numbers c whose neighbours c-1, c, c+1 are sampled */
	MAX_PINNED = 4,    /* symbols pinned one at a time when the distinct runs fail */
	MAX_RUNS = 96,
	MAX_UNRANKED = 4,  /* inputs of unknown rank, sampled at ranks 0..UNRANKED_RANK */
	UNRANKED_RANK = 4,
	CONST_MAX = 1000000,
};

/* What the runs agree on about one dim or element so far. */
typedef struct agree {
	int64_t first;  /* the value in the first run */
	uint32_t syms;  /* bit k: equal to symbol k's value in every run */
	uint32_t syms_nz; /* the same over the runs where no symbol is 0 (all bits: none yet) */
	bool same;      /* equal to first in every run */
	bool unknown;   /* some run did not know it */
} agree;

typedef struct out_agree {
	bool started, elem_bad, rank_bad, pv_ok;
	int32_t elem, rank, npv, pvrank;
	agree d[OM_MAX_RANK];
	agree pv[OM_PV_MAX];
} out_agree;

typedef struct sampler {
	om_pass_ctx *c;
	const om_graph *g;
	const om_node *n;
	const om_op *op;
	int64_t opset;
	bool kernel_ok;  /* the row may be evaluated (not random, not control flow) */
	bool shape_of;   /* the kernel reads only in[0]'s dims */
	/* inputs */
	const om_vinfo *vi[MAX_IO];
	const om_tensor *k[MAX_IO];  /* constants */
	om_tensor t[MAX_IO];         /* the run's tensors for non-constants */
	void *pvbuf[MAX_IO];         /* data of the plan-time values among them */
	int32_t unranked[MAX_UNRANKED]; /* inputs of unknown rank (their dims: local symbols) */
	int32_t usym[MAX_UNRANKED][UNRANKED_RANK];
	int32_t nunranked;
	const om_tensor *in[MAX_IO];
	size_t const_bytes;
	/* symbols */
	const char *sym[MAX_SYMS];
	bool value_sym[MAX_SYMS]; /* only seen as a plan-time element: any int64 */
	uint32_t local;           /* bit k: symbol k is a dim of an input of unknown rank */
	uint64_t untyped;         /* bit i: input i has no known element type */
	bool elem_unsure;         /* the output types depend on the untyped inputs' types */
	int32_t nsym;
	int64_t val[MAX_SYMS];    /* this run's values */
	int64_t consts[MAX_CONSTS];
	int32_t nconst;
	/* results */
	int32_t nok, nruns;
	int64_t ok_first[MAX_SYMS]; /* the symbol values of the first run that succeeded */
	uint64_t varied;            /* bit k: symbol k took another value in a later one */
	bool ran_nonempty;          /* a run succeeded with no input emptied by the symbols */
	bool zero_run;              /* this run has a symbol at 0 */
	bool abort;
	out_agree o[MAX_OUT];
} sampler;

bool om_pv_elem(int32_t elem)
{
	return om_ix_is_int(elem) || om_ix_is_float(elem);
}

bool om_value_symbol(const char *s)
{
	return s && s[0] == '?' && s[1] == 'v';
}

/* Writes the integer x as element i of p (element type dtype). */
static void put_elem(void *p, int32_t dtype, int64_t i, int64_t x)
{
	switch (dtype) {
	case OM_BOOL: ((uint8_t *)p)[i] = x != 0; break;
	case OM_UINT8: case OM_INT8: ((uint8_t *)p)[i] = (uint8_t)x; break;
	case OM_UINT16: case OM_INT16: ((uint16_t *)p)[i] = (uint16_t)x; break;
	case OM_UINT32: case OM_INT32: ((uint32_t *)p)[i] = (uint32_t)x; break;
	case OM_UINT64: case OM_INT64: ((uint64_t *)p)[i] = (uint64_t)x; break;
	case OM_FLOAT: ((float *)p)[i] = (float)x; break;
	case OM_DOUBLE: ((double *)p)[i] = (double)x; break;
	case OM_FLOAT16: ((uint16_t *)p)[i] = om_float_to_half((float)x); break;
	case OM_BFLOAT16: ((uint16_t *)p)[i] = om_float_to_bf16((float)x); break;
	default: break;
	}
}

bool om_exact_int_at(const om_tensor *t, int64_t i, int64_t *x)
{
	if (om_ix_is_int(t->dtype)) {
		*x = om_ix_int_at(t, i);
		return t->dtype != OM_UINT64 || *x != INT64_MAX; /* saturated: not exact */
	}
	if (!om_ix_is_float(t->dtype))
		return false;
	double d = om_ix_float_at(t, i);
	if (!(d >= -9.2e18 && d <= 9.2e18) || d != floor(d))
		return false;
	*x = (int64_t)d;
	return true;
}

static int32_t sym_add(sampler *s, const char *name, bool value)
{
	for (int32_t i = 0; i < s->nsym; i++)
		if (!strcmp(s->sym[i], name)) {
			s->value_sym[i] &= value;
			return i;
		}
	if (s->nsym == MAX_SYMS)
		return -1;
	s->sym[s->nsym] = name;
	s->value_sym[s->nsym] = value;
	return s->nsym++;
}

static void const_add(sampler *s, int64_t c)
{
	if (c < 0 || c > CONST_MAX || s->nconst == MAX_CONSTS)
		return;
	for (int32_t i = 0; i < s->nconst; i++)
		if (s->consts[i] == c)
			return;
	s->consts[s->nconst++] = c;
}

/* Symbols for the dims of the k-th input of unknown rank: local to the node. */
static bool unranked_syms(sampler *s, int32_t k)
{
	static const char *const names[MAX_UNRANKED][UNRANKED_RANK] = {
		{"?u0", "?u1", "?u2", "?u3"}, {"?u4", "?u5", "?u6", "?u7"},
		{"?u8", "?u9", "?u10", "?u11"}, {"?u12", "?u13", "?u14", "?u15"}};
	for (int32_t d = 0; d < UNRANKED_RANK; d++) {
		int32_t j = sym_add(s, names[k][d], false);
		if (j < 0)
			return false;
		s->local |= 1u << j;
		s->usym[k][d] = j;
	}
	return true;
}

/* Prepares the node's inputs: constants as they are, the others with their symbols listed
 * and room for their plan-time values. False when an input cannot be made concrete. */
static bool prepare(sampler *s, om_vinfo *const *vin)
{
	const om_node *n = s->n;
	for (int32_t i = 0; i < n->nin; i++) {
		s->in[i] = NULL;
		s->k[i] = NULL;
		if (!n->in[i])
			continue;
		const om_tensor *k = om_value_const(s->g, n->in[i]);
		if (k) {
			s->k[i] = s->in[i] = k;
			s->const_bytes += k->nbytes;
			int64_t cnt = om_tensor_numel(k), x;
			for (int64_t j = 0; k->data && j < cnt && j < OM_PV_MAX; j++)
				if (om_exact_int_at(k, j, &x))
					const_add(s, x);
			continue;
		}
		const om_vinfo *vi = s->vi[i] = vin[i];
		if (vi && vi->type.kind != OM_TYPE_TENSOR && vi->type.kind != OM_TYPE_UNKNOWN)
			return false; /* sequences, optionals, maps */
		om_tensor *t = &s->t[i];
		memset(t, 0, sizeof *t);
		s->in[i] = t;
		if (!vi || !vi->type.elem)
			s->untyped |= 1ull << i; /* its type is sampled (sample()) */
		else
			t->dtype = vi->type.elem;
		if (!om_vi_ranked(vi)) {
			if (s->nunranked == MAX_UNRANKED || !unranked_syms(s, s->nunranked))
				return false;
			s->unranked[s->nunranked++] = i;
			continue;
		}
		t->rank = vi->type.rank;
		for (int32_t d = 0; d < t->rank; d++) {
			om_dim dim = vi->type.dims[d];
			if (!om_dim_known(dim) && (!dim.param || sym_add(s, dim.param, false) < 0))
				return false;
		}
		int64_t pdims[OM_MAX_RANK];
		if (vi->npv >= 0 && om_pv_elem(vi->type.elem) && om_pv_dims(vi, pdims)) {
			for (int32_t j = 0; j < vi->npv; j++) {
				om_pe e = vi->pv[j];
				if (e.kind == OM_PE_NUM)
					const_add(s, e.num);
				else if (e.kind != OM_PE_SYM ||
					 sym_add(s, e.sym, om_value_symbol(e.sym)) < 0)
					goto no_pv;
			}
			size_t es = (size_t)(om_dtype_bits(t->dtype) + 7) / 8;
			s->pvbuf[i] = om_arena_alloc(s->c->scratch, es * (size_t)(vi->npv + 1));
			if (!s->pvbuf[i])
				return false;
		}
no_pv:
		s->in[i] = t;
	}
	/* the input dims that are numbers come after the constants */
	for (int32_t i = 0; i < n->nin; i++) {
		if (!s->in[i] || s->k[i] || !om_vi_ranked(s->vi[i]))
			continue;
		for (int32_t d = 0; d < s->vi[i]->type.rank; d++)
			if (om_dim_known(s->vi[i]->type.dims[d]))
				const_add(s, s->vi[i]->type.dims[d].value);
	}
	return true;
}

static int32_t sym_find(const sampler *s, const char *name)
{
	for (int32_t i = 0; i < s->nsym; i++)
		if (!strcmp(s->sym[i], name))
			return i;
	return -1; /* not reached: prepare() listed every symbol */
}

static int64_t sym_val(const sampler *s, const char *name)
{
	int32_t k = sym_find(s, name);
	return k >= 0 ? s->val[k] : 0;
}

/* Makes the non-constant inputs concrete at this run's symbol values: dims, and the data of
 * plan-time values (whose extents are numbers). */
static void instantiate(sampler *s)
{
	const om_node *n = s->n;
	for (int32_t i = 0; i < n->nin; i++) {
		if (!s->in[i] || s->k[i])
			continue;
		const om_vinfo *vi = s->vi[i];
		om_tensor *t = &s->t[i];
		if (s->pvbuf[i]) {
			t->data = s->pvbuf[i];
			t->rank = vi->pvrank;
			om_pv_dims(vi, t->dims);
			for (int32_t j = 0; j < vi->npv; j++) {
				om_pe e = vi->pv[j];
				int64_t x = e.kind == OM_PE_NUM ? e.num : sym_val(s, e.sym);
				put_elem(t->data, t->dtype, j, x);
			}
		} else if (om_vi_ranked(vi)) {
			for (int32_t d = 0; d < t->rank; d++) {
				om_dim dim = vi->type.dims[d];
				t->dims[d] = om_dim_known(dim) ? dim.value : sym_val(s, dim.param);
			}
		} else {
			for (int32_t u = 0; u < s->nunranked; u++)
				for (int32_t d = 0; s->unranked[u] == i && d < t->rank; d++)
					t->dims[d] = s->val[s->usym[u][d]];
		}
		t->nbytes = om_tensor_bytes_for(t->dtype, t->rank, t->dims);
	}
}

static uint32_t sym_match(const sampler *s, int64_t x)
{
	uint32_t m = 0;
	for (int32_t k = 0; k < s->nsym; k++)
		if (s->val[k] == x)
			m |= 1u << k;
	return m;
}

/* Symbol k's value may tell it apart from another only in a run where no symbol is 0: at 0 a
 * Reshape target entry copies the input's extent (the symbol then looks like the input's),
 * and empty tensors reshape and broadcast to almost anything. So a dim is symbol k only when
 * the runs without a 0 leave k alone too; runs with a 0 may still refute it. */
static void agree_put(const sampler *s, agree *a, bool first, bool known, int64_t x)
{
	const uint32_t all = s->nsym >= 32 ? ~0u : (1u << s->nsym) - 1;
	if (first) {
		const uint32_t m = known ? sym_match(s, x) : 0;
		*a = (agree){.first = x, .syms = m, .syms_nz = s->zero_run ? all : m,
			     .same = known, .unknown = !known};
		return;
	}
	if (!known) {
		a->unknown = true;
		return;
	}
	a->same &= x == a->first;
	a->syms &= sym_match(s, x);
	if (!s->zero_run)
		a->syms_nz &= sym_match(s, x);
}

/* Folds one successful run's outputs into what the runs agree on. */
static void record(sampler *s, const om_tensor *out, bool partial, bool valued)
{
	const om_node *n = s->n;
	for (int32_t o = 0; o < n->nout && o < MAX_OUT; o++) {
		if (!n->out[o])
			continue;
		const om_tensor *t = &out[o];
		out_agree *a = &s->o[o];
		bool first = !a->started;
		int32_t rank = t->rank >= 0 && t->rank <= OM_MAX_RANK ? t->rank : -1;
		if (first) {
			a->started = true;
			a->elem = t->dtype;
			a->rank = rank;
			a->pv_ok = true;
		}
		a->elem_bad |= !t->dtype || t->dtype != a->elem;
		a->rank_bad |= rank < 0 || rank != a->rank;
		if (a->rank_bad) {
			a->pv_ok = false;
			continue;
		}
		for (int32_t d = 0; d < rank; d++)
			agree_put(s, &a->d[d], first, t->dims[d] >= 0, t->dims[d]);
		int64_t cnt = om_tensor_numel(t);
		if (!valued || partial || !t->data || cnt < 0 || cnt > OM_PV_MAX ||
		    (!first && cnt != a->npv)) {
			a->pv_ok = false;
			continue;
		}
		if (first) {
			a->npv = (int32_t)cnt;
			a->pvrank = rank;
		}
		for (int64_t j = 0; a->pv_ok && j < cnt; j++) {
			int64_t x;
			a->pv_ok = om_exact_int_at(t, j, &x);
			agree_put(s, &a->pv[j], first, true, x);
		}
	}
}

static bool small_outputs(const sampler *s, const om_tensor *out)
{
	for (int32_t o = 0; o < s->n->nout; o++) {
		if (!s->n->out[o])
			continue;
		int64_t cnt = om_tensor_numel(&out[o]);
		if (!om_pv_elem(out[o].dtype) || out[o].rank > OM_MAX_RANK || cnt < 0 ||
		    cnt > OM_PV_MAX)
			return false;
	}
	return true;
}

/* Runs the kernel when every input has data (a shape-of row's in[0] needs only its dims):
 * OM_OK with values in out, an error of the row, or OM_NEED_VALUE when it cannot run. */
static om_kind evaluate(sampler *s, om_tensor *out, om_status *st)
{
	static const unsigned char no_bytes[16];
	for (int32_t i = 0; i < s->n->nin; i++)
		if (s->in[i] && !s->in[i]->data && !(i == 0 && s->shape_of))
			return OM_NEED_VALUE;
	bool dims_only = s->shape_of && s->in[0] && !s->in[0]->data;
	if (dims_only)
		s->t[0].data = (void *)no_bytes;
	om_kind rc = om_eval_node(s->n, s->opset, s->in, out, st);
	if (dims_only)
		s->t[0].data = NULL;
	return rc;
}

/* Whether the symbol values make a sampled input empty (a zero extent no dim declares):
 * an empty tensor reshapes, broadcasts and expands to almost anything. */
static bool emptied(const sampler *s)
{
	for (int32_t i = 0; i < s->n->nin; i++) {
		if (!s->in[i] || s->k[i] || om_tensor_numel(s->in[i]) != 0)
			continue;
		bool declared = false;
		for (int32_t d = 0; om_vi_ranked(s->vi[i]) && d < s->vi[i]->type.rank; d++)
			declared |= s->vi[i]->type.dims[d].value == 0;
		if (!declared)
			return true;
	}
	return false;
}

/* One run at the symbol values in s->val. */
static void run(sampler *s)
{
	const om_node *n = s->n;
	om_tensor out[MAX_OUT];
	instantiate(s);
	s->nruns++;
	om_status st = {0};
	om_kind rc = om_infer_node(n, s->opset, s->in, out, &st);
	if (rc == OM_ERR_INVALID_MODEL || rc == OM_ERR_INVALID_INPUT)
		return; /* the model cannot run at these values */
	if (rc && rc != OM_NEED_VALUE) {
		s->abort = true;
		return;
	}
	bool valued = false;
	if (!rc && s->kernel_ok && s->const_bytes <= s->c->fold_max && small_outputs(s, out)) {
		om_kind ek = evaluate(s, out, &st);
		if (ek == OM_ERR_INVALID_MODEL || ek == OM_ERR_INVALID_INPUT)
			return;
		valued = !ek;
		/* a kernel that cannot run leaves the types (om_eval_node cleared them) */
		if (ek && ek != OM_NEED_VALUE && om_infer_node(n, s->opset, s->in, out, &st))
			return;
	}
	s->nok++;
	s->ran_nonempty |= !emptied(s);
	s->zero_run = false;
	for (int32_t k = 0; k < s->nsym; k++)
		s->zero_run |= s->val[k] == 0;
	for (int32_t k = 0; k < s->nsym; k++) {
		if (s->nok == 1)
			s->ok_first[k] = s->val[k];
		else if (s->val[k] != s->ok_first[k])
			s->varied |= 1ull << k;
	}
	record(s, out, rc == OM_NEED_VALUE, valued);
	if (valued)
		for (int32_t o = 0; o < n->nout; o++)
			om_tensor_free(&out[o]);
}

/* Every symbol at v (value symbols at vv). */
static void run_shared(sampler *s, int64_t v, int64_t vv)
{
	for (int32_t k = 0; k < s->nsym; k++)
		s->val[k] = s->value_sym[k] ? vv : v;
	run(s);
}

/* Probe `which` of symbol group k of n: the first ascends with k, the second descends, so
 * every pair of symbols is sampled in both orders (Greater(Size(a), Size(b))). */
static int64_t probe(int which, int32_t k, int32_t n)
{
	static const int64_t base[] = {2, 41, 80};
	const int32_t rank = which == 1 ? n - 1 - k : k;
	return 5040 * (int64_t)(rank + base[which]); /* 5040 divides by 1..10, 12, 14, 15, 16 */
}

/* Distinct probes: symbol k at probe(which, group[k]); value symbols negative when `neg`;
 * symbol `pin` (when >= 0) at pv. Returns whether the run succeeded. */
static bool run_distinct(sampler *s, const int32_t *group, int which, bool neg, int32_t pin,
			 int64_t pv)
{
	for (int32_t k = 0; k < s->nsym; k++) {
		int64_t p = probe(which, group[k], s->nsym);
		s->val[k] = s->value_sym[k] && neg ? -p : p;
	}
	if (pin >= 0)
		s->val[pin] = pv;
	int32_t before = s->nok;
	run(s);
	return s->nok > before;
}

static int32_t group_root(int32_t *group, int32_t k)
{
	while (group[k] != k)
		k = group[k] = group[group[k]];
	return k;
}

/* Groups the symbols that stand at the same position counted from the last dim in different
 * inputs (what broadcasting makes equal unless one is 1). True when some group has two. */
static bool group_aligned(const sampler *s, int32_t *group)
{
	int32_t at[OM_MAX_RANK];
	bool merged = false;
	for (int32_t k = 0; k < s->nsym; k++)
		group[k] = k;
	for (int32_t p = 0; p < OM_MAX_RANK; p++)
		at[p] = -1;
	for (int32_t i = 0; i < s->n->nin; i++) {
		if (!s->in[i] || s->k[i] || !om_vi_ranked(s->vi[i]))
			continue;
		const om_type *t = &s->vi[i]->type;
		for (int32_t p = 0; p < t->rank; p++) {
			om_dim d = t->dims[t->rank - 1 - p];
			if (om_dim_known(d))
				continue;
			int32_t k = group_root(group, sym_find(s, d.param));
			if (at[p] < 0) {
				at[p] = k;
			} else if (group_root(group, at[p]) != k) {
				group[k] = group_root(group, at[p]);
				merged = true;
			}
		}
	}
	for (int32_t k = 0; k < s->nsym; k++)
		group[k] = group_root(group, k);
	return merged;
}

static void sample_ranked(sampler *s)
{
	s->nruns = 0; /* the budget of the shared runs is per rank and type of untyped inputs */
	if (!s->nsym) {
		run(s);
		return;
	}
	bool any_value = false;
	int32_t group[MAX_SYMS];
	for (int32_t k = 0; k < s->nsym; k++) {
		any_value |= s->value_sym[k];
		group[k] = k;
	}
	bool distinct = run_distinct(s, group, 0, false, -1, 0);
	distinct &= run_distinct(s, group, 1, false, -1, 0);
	if (any_value)
		run_distinct(s, group, 2, true, -1, 0);
	/* symbols that broadcasting makes equal: the groups take distinct probes */
	if (!distinct && group_aligned(s, group)) {
		distinct = run_distinct(s, group, 0, false, -1, 0);
		distinct &= run_distinct(s, group, 1, false, -1, 0);
	}
	/* a symbol that must be 1 or a given number (broadcasting, MatMul's inner dim): the
	 * others still take distinct probes while it is pinned */
	for (int32_t k = 0; !distinct && k < s->nsym && k < MAX_PINNED && !s->abort; k++) {
		if (s->value_sym[k])
			continue;
		for (int32_t c = -1; c < s->nconst && !s->abort; c++) {
			int64_t pv = c < 0 ? 1 : s->consts[c];
			if (run_distinct(s, group, 0, false, k, pv))
				run_distinct(s, group, 1, false, k, pv);
		}
	}
	/* one symbol at 1 beside the others at one shared value, when the distinct probes failed
	 * (the symbols are tied): broadcasting N against a symbol that is 3N agrees with N at
	 * every shared value, and differs only where N is 1 alone */
	static const int64_t beside[] = {2, 3, 7};
	for (int32_t k = 0; !distinct && k < s->nsym && !s->abort; k++) {
		if (s->value_sym[k])
			continue;
		for (size_t i = 0; i < sizeof beside / sizeof beside[0] && s->nruns < MAX_RUNS; i++) {
			for (int32_t j = 0; j < s->nsym; j++)
				s->val[j] = beside[i];
			s->val[k] = 1;
			run(s);
		}
	}
	static const int64_t shared[] = {0, 1, 2, 3, 7};
	int64_t done[sizeof shared / sizeof shared[0] + 3 * MAX_CONSTS];
	int32_t ndone = 0;
	for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++)
		done[ndone++] = shared[i];
	for (int32_t c = 0; c < s->nconst; c++)
		for (int64_t d = -1; d <= 1; d++) {
			int64_t v = s->consts[c] + d, j = 0;
			while (j < ndone && done[j] != v)
				j++;
			if (v >= 0 && j == ndone)
				done[ndone++] = v;
		}
	for (int32_t i = 0; i < ndone && !s->abort && s->nruns < MAX_RUNS; i++)
		run_shared(s, done[i], done[i]);
	/* small values that differ between symbols, each pair in both orders (N=1 with C=0) */
	static const int64_t small[] = {0, 1, 2, 3};
	for (int32_t j = 0; s->nsym > 1 && j < 4 && !s->abort && s->nruns < MAX_RUNS; j++) {
		for (int32_t k = 0; k < s->nsym; k++)
			s->val[k] = small[(k + j) % 4];
		run(s);
	}
	if (any_value) {
		run_shared(s, 7, -1);
		run_shared(s, 7, -2);
	}
}

/* Inputs of unknown rank take ranks 0..UNRANKED_RANK (all the same rank) and local symbols
 * as dims: what holds at every rank (the element type, Size's rank) is kept. */
static void sample_ranks(sampler *s)
{
	if (!s->nunranked) {
		sample_ranked(s);
		return;
	}
	for (int32_t r = 0; r <= UNRANKED_RANK && !s->abort; r++) {
		for (int32_t u = 0; u < s->nunranked; u++) {
			om_tensor *t = &s->t[s->unranked[u]];
			t->rank = r; /* its dims: the local symbols, set by each run */
		}
		sample_ranked(s);
	}
}

/* Inputs without an element type take float, then int64: an output type is kept only when
 * both ran and agree (Cast, Shape, Size), never when one type fits (Relu: float16 too). */
static void sample(sampler *s)
{
	if (!s->untyped) {
		sample_ranks(s);
		return;
	}
	static const int32_t types[] = {OM_FLOAT, OM_INT64};
	int32_t fit = 0;
	for (size_t k = 0; k < sizeof types / sizeof types[0] && !s->abort; k++) {
		for (int32_t i = 0; i < s->n->nin && i < 64; i++)
			if (s->untyped >> i & 1)
				s->t[i].dtype = types[k];
		int32_t before = s->nok;
		sample_ranks(s);
		fit += s->nok > before;
	}
	s->elem_unsure = fit < 2;
}

/* The element the runs agree on: a number, one symbol, or unknown. */
static om_dim agreed_dim(const sampler *s, const agree *a)
{
	if (a->unknown)
		return (om_dim){-1, NULL};
	if (a->same)
		return (om_dim){a->first >= 0 ? a->first : -1, NULL};
	if (a->syms && !(a->syms & (a->syms - 1)) && !(a->syms & s->local) &&
	    a->syms_nz == a->syms)
		return (om_dim){-1, s->sym[__builtin_ctz(a->syms)]};
	return (om_dim){-1, NULL};
}

static om_pe agreed_pe(const sampler *s, const agree *a)
{
	if (a->same)
		return (om_pe){OM_PE_NUM, a->first, NULL};
	if (a->syms && !(a->syms & (a->syms - 1)) && !(a->syms & s->local) &&
	    a->syms_nz == a->syms)
		return (om_pe){OM_PE_SYM, 0, s->sym[__builtin_ctz(a->syms)]};
	return (om_pe){OM_PE_UNK, 0, NULL};
}

/* The row's kernel may compute plan-time values: not random, not control flow. */
static bool row_may_eval(const om_op *op, const om_node *n)
{
	/* a node with subgraphs runs them only through a session */
	if ((op->flags & (OM_OP_CONTROL | OM_OP_RANDOM)) || om_node_has_subgraph(n))
		return false;
	return op->kernel || (op->flags & OM_OP_VIEW);
}

static void combine(const sampler *s, om_ishape *out)
{
	const om_node *n = s->n;
	for (int32_t o = 0; o < n->nout; o++) {
		const out_agree *a = &s->o[o];
		if (!n->out[o] || !a->started)
			continue;
		out[o].elem = a->elem_bad || s->elem_unsure ? OM_UNDEFINED : a->elem;
		if (a->rank_bad)
			continue;
		out[o].rank = a->rank;
		for (int32_t d = 0; d < a->rank; d++)
			out[o].d[d] = agreed_dim(s, &a->d[d]);
		if (!a->pv_ok || a->elem_bad || s->elem_unsure)
			continue;
		out[o].npv = a->npv;
		out[o].pvrank = a->pvrank;
		for (int32_t j = 0; j < a->npv; j++)
			out[o].pv[j] = agreed_pe(s, &a->pv[j]);
	}
}

om_kind om_infer_sample(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
			om_ishape *out)
{
	if (n->nin > MAX_IO || n->nout > MAX_OUT)
		return OM_OK;
	int64_t opset = om_model_opset(c->m, n->domain);
	const om_op *op = om_op_find(n->domain, n->op, opset);
	if (!op || !op->infer)
		return OM_OK;
	sampler *s = calloc(1, sizeof *s);
	if (!s)
		return om_error(c->st, OM_ERR_NOMEM, n, "out of memory in shape inference");
	s->c = c, s->g = g, s->n = n, s->op = op, s->opset = opset;
	s->kernel_ok = row_may_eval(op, n);
	s->shape_of = (op->flags & OM_OP_SHAPE_OF) && n->nin >= 1;
	if (prepare(s, in))
		sample(s);
	/* every symbol must have taken two values where the row ran: a symbol held at one value
	 * (often 0, or the one value a Reshape accepts while others vary) would make what
	 * depends on it look like a number; and the row must have run once on inputs the
	 * symbols did not empty (Reshape([N,C], [N/2, 2, C, -1]) sampled with an independent
	 * N/2 runs only where N*C is 0) */
	const uint64_t all = s->nsym >= 64 ? ~0ull : (1ull << s->nsym) - 1;
	if (!s->abort && s->nok && s->varied == all && (!s->nsym || s->ran_nonempty))
		combine(s, out);
	free(s);
	return OM_OK;
}
