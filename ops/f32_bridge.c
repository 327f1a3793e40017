/* f32_bridge.c — float32 kernels on float16/bfloat16/int8/uint8 tensors through conversion. */
#include <stdint.h>

#include "f32_array.h"
#include "f32_bridge.h"
#include "parallel.h"

bool om_f32_bridged(int32_t dtype, bool ints)
{
	return dtype == OM_FLOAT16 || dtype == OM_BFLOAT16 ||
	       (ints && (dtype == OM_INT8 || dtype == OM_UINT8));
}

enum { MAX_IO = 16, GRAIN = 1 << 15 }; /* GRAIN: elements a piece of a conversion */

/* n elements converted on up to `threads` threads: to float32 (src typed dt, dst float) or
 * from it (src float, dst typed dt) */
typedef struct conv_job {
	bool to_f32;
	int32_t dt;
	const void *src;
	void *dst;
} conv_job;

static void conv_piece(void *arg, int64_t lo, int64_t hi)
{
	const conv_job *j = arg;
	const size_t es = om_dtype_size(j->dt);
	if (j->to_f32)
		om_to_f32(j->dt, (const char *)j->src + (size_t)lo * es, hi - lo,
			  (float *)j->dst + lo);
	else
		om_from_f32(j->dt, (const float *)j->src + lo, hi - lo,
			    (char *)j->dst + (size_t)lo * es);
}

static void convert(int threads, bool to_f32, int32_t dt, const void *src, int64_t n, void *dst)
{
	conv_job j = {to_f32, dt, src, dst};
	om_par_for(threads, n, GRAIN, conv_piece, &j);
}

/* t's float32 copy's bytes rounded up to 64 (0 when not bridged), -1 when they overflow */
static int64_t copy_bytes(const om_tensor *t, bool ints)
{
	if (!t || !om_f32_bridged(t->dtype, ints))
		return 0;
	const int64_t b = om_shape_bytes(OM_FLOAT, t->rank, t->dims);
	return b < 0 || b > INT64_MAX - 63 ? -1 : (b + 63) / 64 * 64;
}

/* The float32 copies lie in one scratch buffer (om_ctx_scratch: a session keeps it run after
 * run; a malloc and free of each copy at every run faulted its pages in again, and a decoder's
 * first runs at a prompt took 1.5 times the later ones). */
/* om_run_as_f32, the outputs too when outs (else they reach fn as they are) */
static om_kind bridge(om_ctx *c, om_kernel_fn fn, bool ints, bool outs)
{
	if (c->nin > MAX_IO || c->nout > MAX_IO)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "too many inputs or outputs");
	int64_t total = 0;
	for (int32_t i = 0; i < c->nin + c->nout; i++) {
		const int64_t b = i < c->nin || outs
					  ? copy_bytes(i < c->nin ? c->in[i] : c->out[i - c->nin], ints)
					  : 0;
		if (b < 0 || total > INT64_MAX - b)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"the float32 copies' bytes overflow");
		total += b;
	}
	char *buf = NULL;
	om_kind rc = om_ctx_scratch(c, (size_t)total, "float32 copies", (void **)&buf);
	if (rc)
		return rc;
	om_tensor tin[MAX_IO], tout[MAX_IO];
	const om_tensor *pin[MAX_IO];
	om_tensor *pout[MAX_IO];
	char *at = buf;
	for (int32_t i = 0; i < c->nin + c->nout; i++) {
		const bool in = i < c->nin;
		om_tensor *t = in ? (om_tensor *)c->in[i] : c->out[i - c->nin];
		om_tensor *f = in ? &tin[i] : &tout[i - c->nin];
		if (in)
			pin[i] = t;
		else
			pout[i - c->nin] = t;
		if (!t || !om_f32_bridged(t->dtype, ints) || (!in && !outs))
			continue;
		const int64_t b = copy_bytes(t, ints);
		*f = *t;
		f->dtype = OM_FLOAT, f->data = at;
		f->nbytes = (size_t)om_shape_bytes(OM_FLOAT, t->rank, t->dims);
		at += b;
		if (in) {
			convert(c->threads, true, t->dtype, t->data, om_tensor_numel(t), f->data);
			pin[i] = f;
		} else {
			pout[i - c->nin] = f;
		}
	}
	om_ctx c2 = *c;
	c2.in = pin;
	c2.out = pout;
	if (!(rc = fn(&c2)))
		for (int32_t i = 0; i < c->nout; i++)
			if (pout[i] != c->out[i])
				convert(c->threads, false, c->out[i]->dtype, pout[i]->data,
					om_tensor_numel(pout[i]), c->out[i]->data);
	om_ctx_scratch_done(c, buf);
	return rc;
}

om_kind om_run_as_f32(om_ctx *c, om_kernel_fn fn, bool ints)
{
	return bridge(c, fn, ints, true);
}

om_kind om_run_as_f32_inputs(om_ctx *c, om_kernel_fn fn, bool ints)
{
	return bridge(c, fn, ints, false);
}
