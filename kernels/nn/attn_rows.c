/* attn_rows.c — softcap, softmax with a sink and the rotary rotation of attention rows. */
#include <math.h>

#include "attn_rows.h"
#include "detmath.h"

double om_attn_tanh(double x)
{
	if (x > 20)
		return 1;
	if (x < -20)
		return -1;
	const double e = om_det_exp(2 * x);
	return (e - 1) / (e + 1);
}

void om_attn_softmax(double *r, int64_t n, const double *sink)
{
	double m = sink ? *sink : -INFINITY, s = 0;
	for (int64_t j = 0; j < n; j++)
		m = r[j] > m ? r[j] : m;
	if (m == -INFINITY) {
		for (int64_t j = 0; j < n; j++)
			r[j] = 0;
		return;
	}
	for (int64_t j = 0; j < n; j++)
		s += r[j] = om_det_exp(r[j] - m);
	if (sink)
		s += om_det_exp(*sink - m);
	for (int64_t j = 0; j < n; j++)
		r[j] /= s;
}

void om_attn_rotate(double *r, const double *cs, const double *sn, int64_t rd, bool interleaved)
{
	const int64_t half = rd / 2;
	for (int64_t i = 0; i < half; i++) {
		const int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
		const double x1 = r[a], x2 = r[b];
		r[a] = cs[i] * x1 - sn[i] * x2;
		r[b] = sn[i] * x1 + cs[i] * x2;
	}
}

