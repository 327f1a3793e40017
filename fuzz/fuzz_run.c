/* fuzz_run.c — libFuzzer harness: bytes -> load -> (om_optimize for half the inputs) ->
 * om_session_create -> runs on inputs of the declared types and small shapes. Symbolic and
 * unknown dims take small values (0 to 4) chosen from a hash of the input; a model declaring an
 * input over FZ_MAX_ELEMS elements is not run. A model with symbolic dims runs twice with
 * different values (the second run re-plans its dynamic steps). A model with overridable
 * initializers (IR >= 4 inputs that have an initializer) gets, in half the inputs, each of them
 * fed or left at its default (a zeroed entry) as the input's bytes choose. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ir.h"
#include "numrun.h"
#include "onnx_io.h"
#include "value.h"

enum { FZ_MAX_ELEMS = 1 << 12, FZ_MAX_INPUTS = 64 };

/* the value of a symbolic (or unknown, name "") dim in run `round` */
static int64_t sym_value(uint64_t seed, int round, const char *name)
{
	static const int64_t pick[8] = {1, 2, 3, 1, 2, 4, 0, 1};
	uint64_t h = fz_hash((const uint8_t *)name, strlen(name)) ^ seed;
	h = fz_next(&h) + (uint64_t)round * 0x9e3779b97f4a7c15u;
	return pick[fz_next(&h) % 8];
}

/* Fills t's elements: small integers (-3..3; 0..3 unsigned) in every numeric type, for a
 * quarter of the floating-point inputs raw random bytes (NaN, Inf, huge), and raw bytes for
 * the types om_store_f64 does not write. Integers stay small: a random int64 is an index out
 * of range (one error path) or a Loop trip count that runs for years. */
static void fill(om_tensor *t, uint64_t *prng)
{
	const int64_t n = om_tensor_numel(t);
	if (t->dtype == OM_STRING) {
		static const char *const words[] = {"", "a", "omopt", "ONNX", " x y "};
		om_str *s = t->data;
		for (int64_t i = 0; i < n; i++) {
			const char *w = words[fz_next(prng) % 5];
			char *dup = strdup(w);
			s[i] = (om_str){dup, dup ? (int64_t)strlen(w) : 0};
		}
		return;
	}
	const bool raw = om_is_float_type(t->dtype) && fz_next(prng) % 4 == 0;
	if (!raw && n > 0) {
		double *v = malloc(sizeof *v * (size_t)n);
		const bool sgn = !om_is_unsigned_type(t->dtype);
		for (int64_t i = 0; v && i < n; i++)
			v[i] = (double)(int64_t)(fz_next(prng) % 7) - (sgn ? 3 : 0);
		const bool done = v && om_store_f64(t->dtype, t->data, 1, v, n);
		free(v);
		if (done)
			return;
	}
	uint8_t *b = t->data;
	for (size_t i = 0; i < t->nbytes; i++)
		b[i] = (uint8_t)fz_next(prng);
}

/* A tensor of declared type ty (elem `elem`, dims from ty when it is a tensor type, else [2]);
 * false when it cannot or should not be made (unknown type, too large). */
static bool make_tensor(const om_type *ty, int32_t elem, uint64_t seed, int round,
			uint64_t *prng, om_tensor *t)
{
	int64_t dims[OM_MAX_RANK] = {2};
	int32_t rank = 1;
	if (ty->kind == OM_TYPE_TENSOR && ty->rank >= 0) {
		if (ty->rank > OM_MAX_RANK)
			return false;
		rank = ty->rank;
		for (int32_t d = 0; d < rank; d++) {
			const om_dim dim = ty->dims[d];
			const char *sym = dim.param ? dim.param : "";
			dims[d] = om_dim_known(dim) ? dim.value : sym_value(seed, round, sym);
			if (dims[d] > FZ_MAX_ELEMS)
				return false;
		}
	}
	const int64_t n = om_shape_numel(rank, dims);
	if (n < 0 || n > FZ_MAX_ELEMS || !om_dtype_bits(elem))
		return false;
	if (om_tensor_alloc(t, elem, rank, dims, NULL))
		return false;
	fill(t, prng);
	return true;
}

/* An input of declared type ty: a tensor, or a sequence of 0 to 2 tensors, or an optional
 * (empty for some inputs). false when it cannot be made. */
static bool make_input(const om_type *ty, uint64_t seed, int round, uint64_t *prng,
		       om_tensor *t)
{
	const int32_t box = om_type_box_kind(ty);
	if (!box)
		return make_tensor(ty, ty->elem, seed, round, prng, t);
	const int32_t elem = om_type_box_elem(ty) ? om_type_box_elem(ty) : OM_FLOAT;
	if (om_box_new(box, elem, t, NULL))
		return false;
	const int64_t count = box == OM_SEQ_DTYPE ? (int64_t)(fz_next(prng) % 3)
						  : (int64_t)(fz_next(prng) % 4 != 0);
	const om_type any = {.kind = OM_TYPE_UNKNOWN, .rank = -1};
	for (int64_t i = 0; i < count; i++) {
		om_tensor item;
		if (!make_tensor(&any, elem, seed, round, prng, &item) ||
		    om_box_adopt(om_box(t), i, &item, NULL)) {
			om_value_free(t);
			return false;
		}
	}
	return true;
}

/* One run on fresh inputs; returns whether the model has symbolic or unknown input dims.
 * With `overrides`, the overridable initializers are passed too, each fed or at its default. */
static bool run_once(const om_model *m, om_session *s, uint64_t seed, int round, bool overrides)
{
	const int nreq = om_session_input_count(s), nout = om_session_output_count(s);
	const int nin = nreq + (overrides ? om_session_overridable_count(s) : 0);
	if (nin > FZ_MAX_INPUTS || nout > FZ_MAX_INPUTS)
		return false;
	om_tensor in[FZ_MAX_INPUTS], out[FZ_MAX_INPUTS];
	memset(in, 0, sizeof in);
	memset(out, 0, sizeof out);
	uint64_t prng = seed ^ (uint64_t)round;
	bool dynamic = false, ok = true;
	for (int i = 0; ok && i < nin; i++) {
		const om_value *v = om_graph_find(m->graph, om_session_input_name(s, i));
		if (!v) {
			fz_fail("session input '%s' is not a value of the main graph",
				om_session_input_name(s, i));
		}
		if (i >= nreq) { /* fed, or at its default when not (or when it cannot be made) */
			if (fz_next(&prng) % 3 && !make_input(&v->type, seed, round, &prng, &in[i]))
				in[i] = (om_tensor){0};
			continue;
		}
		for (int32_t d = 0; v->type.kind == OM_TYPE_TENSOR && d < v->type.rank; d++)
			dynamic |= !om_dim_known(v->type.dims[d]);
		ok = make_input(&v->type, seed, round, &prng, &in[i]);
	}
	if (ok) {
		om_status st = {0};
		om_kind k = om_session_run_values(s, in, nin, out, nout, &st);
		fz_check_kind(k, &st, "om_session_run");
		for (int i = 0; i < nout; i++)
			om_value_free(&out[i]);
	}
	for (int i = 0; i < nin; i++)
		om_value_free(&in[i]);
	return dynamic;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	om_model *m = fz_load(data, size);
	if (!m)
		return 0;
	om_status st = {0};
	om_kind k;
	const uint64_t seed = fz_hash(data, size);
	if (seed & 1) {
		/* as `omopt run` does: optimize, and run the model as loaded when that fails */
		k = om_optimize(m, NULL, &st);
		fz_check_kind(k, &st, "om_optimize");
		if (k) {
			om_model_free(m);
			if (om_model_load_memory(data, size, fz_dir(), &m, &st))
				fz_fail("the model loaded once and not twice");
		}
	}
	om_session *s = NULL;
	/* a model may ask for 10^15 Loop iterations: the time limit turns that into an error;
	 * and for a 2 GB output, which the default memory limit (8 GiB, or half the machine's)
	 * allows but libFuzzer's RSS limit (2048 MB in scripts/fuzz.sh) reports as a finding:
	 * a limit under it turns that into an error too */
	const om_session_options so = {.max_run_ms = 2000, .max_memory = (size_t)1 << 30};
	k = om_session_create(m, &so, &s, &st);
	fz_check_kind(k, &st, "om_session_create");
	const bool overrides = seed & 2;
	if (!k && run_once(m, s, seed, 0, overrides))
		run_once(m, s, seed, 1, overrides);
	om_session_free(s);
	om_model_free(m);
	return 0;
}
