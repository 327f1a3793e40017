/* random.c — om_check's random numbers: splitmix64 (state in the caller, so no global state
 * and the same seed gives the same inputs) and random tensors of any numeric type, made as
 * doubles and converted with the Cast kernel's conversion. */
#include <math.h>
#include <stdlib.h>

#include "cast.h"
#include "check.h"

uint64_t om_rng_next(om_rng *r)
{
	uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

om_rng om_rng_for(uint64_t seed, uint64_t a, uint64_t b)
{
	om_rng r = {seed};
	r.s = om_rng_next(&r) ^ (a * UINT64_C(0xD1B54A32D192ED03));
	r.s = om_rng_next(&r) ^ (b * UINT64_C(0x8CB92BA72F3D8DD7));
	return r;
}

/* uniform in (0, 1]: 53 random bits */
static double uniform(om_rng *r)
{
	return ((double)(om_rng_next(r) >> 11) + 1.0) * 0x1.0p-53;
}

static bool is_float(int32_t dtype)
{
	return dtype == OM_FLOAT || dtype == OM_DOUBLE || dtype == OM_FLOAT16 ||
	       dtype == OM_BFLOAT16;
}

bool om_random_type(int32_t dtype)
{
	return om_cast_supported(OM_DOUBLE, dtype) && dtype != OM_STRING &&
	       dtype != OM_COMPLEX64 && dtype != OM_COMPLEX128;
}

om_kind om_random_fill(om_tensor *t, om_rng *r, int64_t int_hi, const char *name,
		       om_status *st)
{
	if (!om_random_type(t->dtype))
		return om_error(st, OM_ERR_UNSUPPORTED, NULL,
				"input '%s': no random values of type %s (give it)", name,
				om_dtype_name(t->dtype));
	int64_t n = om_tensor_numel(t);
	double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
	if (!v)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory for input '%s'", name);
	const double two_pi = 6.283185307179586;
	for (int64_t i = 0; i < n; i++) {
		if (is_float(t->dtype)) /* Box-Muller */
			v[i] = sqrt(-2 * log(uniform(r))) * cos(two_pi * uniform(r));
		else if (t->dtype == OM_BOOL)
			v[i] = (double)(om_rng_next(r) >> 63);
		else
			v[i] = (double)(om_rng_next(r) % (uint64_t)int_hi);
	}
	static const om_node cast = {.name = "", .op = "Cast", .domain = ""};
	om_ctx c = {.node = &cast, .st = st};
	om_kind k = om_cast_elems(&c, t->data, t->dtype, v, OM_DOUBLE, n, 1);
	free(v);
	return k;
}
