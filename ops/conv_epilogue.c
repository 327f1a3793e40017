/* conv_epilogue.c — FusedConv's activation attributes and the per-row epilogue of the Conv
 * kernels (bias, Z, activation), in the order Conv -> Add -> activation computes them. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "conv_epilogue.h"
#include "fastmath.h"

om_kind om_conv_epi_keep_z(om_ctx *c, om_conv_epi *e, const float *y, size_t bytes,
			   float **copy)
{
	*copy = NULL;
	if (!e->z || e->z != y)
		return OM_OK;
	om_kind rc = om_ctx_scratch(c, bytes, "a copy of Z (Y is placed over it)", (void **)copy);
	if (rc)
		return rc;
	memcpy(*copy, e->z, bytes);
	e->z = *copy;
	return OM_OK;
}

om_kind om_conv_epi_activation(om_ctx *c, om_conv_epi *e)
{
	e->act = OM_ACT_NONE;
	e->alpha = e->beta = 0;
	e->fast = !c->exact;
	const char *name = om_attr_string(c->node, "activation", NULL);
	if (!name) {
		if (c->post) {
			e->act = c->post->kind;
			e->alpha = c->post->alpha;
			e->beta = c->post->beta;
		}
		return OM_OK;
	}
	int32_t np = 0;
	const int32_t kind = om_act_from_fused_name(name, &np);
	if (kind == OM_ACT_NONE)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "unknown activation '%s'",
				name);
	if (c->post)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"a second activation after '%s'", name);
	int64_t n = 0;
	const float *p = om_attr_floats(c->node, "activation_params", &n);
	if (np && (!p || n != np))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"activation %s takes %d activation_params, %lld given", name, np,
				(long long)(p ? n : 0));
	e->act = kind;
	if (np)
		e->alpha = p[0];
	if (np > 1)
		e->beta = p[1];
	return OM_OK;
}

/* y = act((y + b) + z) in one pass; hb, hz and act are constants in every instance */
static inline __attribute__((always_inline)) void epi_loop(float *restrict y,
							      const float *restrict z, float b,
							      int64_t n, bool hb, bool hz, int act,
							      float al, float be)
{
	for (int64_t p = 0; p < n; p++) {
		float v = y[p];
		if (hb)
			v = v + b;
		if (hz)
			v = v + z[p];
		if (act == OM_ACT_RELU) {
			v = v < 0 ? 0.0f : v;
		} else if (act == OM_ACT_LEAKY_RELU) {
			v = v < 0 ? al * v : v;
		} else if (act == OM_ACT_CLIP) {
			v = v != v || v > al ? v : al;
			v = v != v || v < be ? v : be;
		} else if (act == OM_ACT_HARD_SIGMOID) {
			v = al * v + be;
			v = v < 0 ? 0.0f : v > 1 ? 1.0f : v;
		} else if (act == OM_ACT_HARD_SWISH) {
			float g = al * v + be;
			g = g < 0 ? 0.0f : g > 1 ? 1.0f : g;
			v = v * g;
		}
		y[p] = v;
	}
}

#define EPI_ACTS(HB, HZ)                                                                        \
	switch (act) {                                                                          \
	case OM_ACT_RELU:                                                                       \
		epi_loop(y, z, b, n, HB, HZ, OM_ACT_RELU, al, be);                              \
		return;                                                                         \
	case OM_ACT_LEAKY_RELU:                                                                 \
		epi_loop(y, z, b, n, HB, HZ, OM_ACT_LEAKY_RELU, al, be);                        \
		return;                                                                         \
	case OM_ACT_CLIP:                                                                       \
		epi_loop(y, z, b, n, HB, HZ, OM_ACT_CLIP, al, be);                              \
		return;                                                                         \
	case OM_ACT_HARD_SIGMOID:                                                               \
		epi_loop(y, z, b, n, HB, HZ, OM_ACT_HARD_SIGMOID, al, be);                      \
		return;                                                                         \
	case OM_ACT_HARD_SWISH:                                                                 \
		epi_loop(y, z, b, n, HB, HZ, OM_ACT_HARD_SWISH, al, be);                        \
		return;                                                                         \
	default: /* none; Tanh, Sigmoid and Swish run their own pass afterwards */              \
		epi_loop(y, z, b, n, HB, HZ, OM_ACT_NONE, al, be);                              \
		return;                                                                         \
	}

OM_CLONES_AVX2 static void epi_pass(float *y, const float *z, float b, int64_t n, bool hb, int act, float al,
		     float be)
{
	if (hb && z)
		EPI_ACTS(true, true)
	if (hb)
		EPI_ACTS(true, false)
	if (z)
		EPI_ACTS(false, true)
	EPI_ACTS(false, false)
}

void om_conv_epi_row(const om_conv_epi *e, int64_t m, int64_t off, float *y, int64_t n)
{
	if (!om_conv_epi_any(e))
		return;
	/* Tanh, Sigmoid and Swish run a pass of their own after the bias and Z */
	const bool own_pass = e->act == OM_ACT_TANH || e->act == OM_ACT_SIGMOID ||
			      e->act == OM_ACT_SWISH;
	if (e->bias || e->z || !own_pass)
		epi_pass(y, e->z ? e->z + off : NULL, e->bias ? e->bias[m] : 0.0f, n,
			 e->bias != NULL, e->act, e->alpha, e->beta);
	if (!own_pass)
		return;
	if (e->fast && e->act == OM_ACT_SIGMOID)
		om_fast_sigmoid_f32(n, y, y);
	else if (e->fast && e->act == OM_ACT_SWISH)
		om_fast_swish_f32(n, y, y, e->alpha);
	else
		for (int64_t p = 0; p < n; p++)
			y[p] = om_conv_act(e, y[p]);
}
