/* broadcast.c — the shared broadcast iterator (see broadcast.h). */
#include <string.h>

#include "broadcast.h"
#include "ew.h"
#include "parallel.h"

om_kind om_bcast_infer(om_ctx *c, int32_t n, const om_tensor *const *in, int32_t dtype,
		       om_tensor *out)
{
	int32_t rank = 0;
	int64_t dims[OM_MAX_RANK];
	for (int32_t i = 0; i < n; i++) {
		if (!in[i])
			continue;
		int64_t d[OM_MAX_RANK];
		int32_t r;
		om_kind rc = om_broadcast_shape(c, rank, dims, in[i]->rank, in[i]->dims, &r, d);
		if (rc)
			return rc;
		rank = r;
		for (int32_t k = 0; k < r; k++)
			dims[k] = d[k];
	}
	om_set_shape(out, dtype, rank, dims);
	return OM_OK;
}

om_kind om_bcast_init(om_ctx *c, om_bcast *b, const om_tensor *out, int32_t nin,
		      const om_tensor *const *in)
{
	if (nin > OM_BCAST_MAX_IN || out->rank > OM_MAX_RANK)
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "broadcast of %d inputs", nin);
	const int32_t nops = nin + 1, r = out->rank;
	int64_t st[OM_BCAST_MAX_IN + 1][OM_MAX_RANK];
	b->nin = nin;
	b->numel = om_tensor_numel(out);
	b->threads = c->threads;
	for (int32_t k = 0; k < nops; k++) {
		const om_tensor *t = k ? in[k - 1] : out;
		b->size[k] = om_dtype_size(t->dtype);
		const size_t need = om_tensor_bytes_for(t->dtype, t->rank, t->dims);
		if (t->nbytes < need || (need && !t->data) || !b->size[k])
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"%s %d holds %zu bytes, its shape needs %zu",
					k ? "input" : "output", k ? k - 1 : 0, t->nbytes, need);
		if (t->rank > r)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"input %d has rank %d above the output's %d", k - 1,
					t->rank, r);
		int64_t s = 1;
		for (int32_t i = r - 1; i >= 0; i--) {
			int32_t j = i - (r - t->rank);
			int64_t d = j >= 0 ? t->dims[j] : 1;
			if (d != out->dims[i] && d != 1)
				return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
						"input %d (dim %lld) does not broadcast to %lld "
						"at axis %d", k - 1, (long long)d,
						(long long)out->dims[i], i);
			st[k][i] = d == 1 ? 0 : s;
			s *= d;
		}
	}
	/* drop size-1 axes, merge an axis into the previous one when every operand allows */
	int32_t n = 0;
	for (int32_t i = 0; i < r; i++) {
		if (out->dims[i] == 1)
			continue;
		bool merge = n > 0;
		for (int32_t k = 0; k < nops && merge; k++)
			merge = b->stride[k][n - 1] == st[k][i] * out->dims[i];
		if (merge) {
			b->dims[n - 1] *= out->dims[i];
			for (int32_t k = 0; k < nops; k++)
				b->stride[k][n - 1] = st[k][i];
			continue;
		}
		b->dims[n] = out->dims[i];
		for (int32_t k = 0; k < nops; k++)
			b->stride[k][n] = st[k][i];
		n++;
	}
	if (n == 0) { /* a single element */
		b->dims[0] = 1;
		for (int32_t k = 0; k < nops; k++)
			b->stride[k][0] = 0;
		n = 1;
	}
	b->rank = n;
	return OM_OK;
}

/* One part of a run: output elements [lo, hi) in order, the operands' offsets found from lo */
typedef struct bcast_job {
	const om_bcast *b;
	void *out;
	const void *const *in;
	om_bcast_fn fn;
	const void *arg;
} bcast_job;

static void bcast_piece(void *arg, int64_t lo, int64_t hi)
{
	const bcast_job *j = arg;
	const om_bcast *b = j->b;
	const int32_t nops = b->nin + 1, inner = b->rank - 1;
	const int64_t D = b->dims[inner];
	int64_t idx[OM_MAX_RANK] = {0}, off[OM_BCAST_MAX_IN + 1] = {0}, step[OM_BCAST_MAX_IN + 1];
	/* the outer index of lo's run (odometer digits), and lo's place in it */
	int64_t r = lo / D, at = lo % D;
	for (int32_t i = inner - 1; i >= 0; i--) {
		idx[i] = r % b->dims[i];
		r /= b->dims[i];
	}
	for (int32_t k = 0; k < nops; k++) {
		step[k] = b->stride[k][inner];
		off[k] = at * step[k];
		for (int32_t i = 0; i < inner; i++)
			off[k] += idx[i] * b->stride[k][i];
	}
	while (lo < hi) {
		const int64_t n = D - at < hi - lo ? D - at : hi - lo;
		const void *ip[OM_BCAST_MAX_IN];
		for (int32_t k = 0; k < b->nin; k++)
			ip[k] = (const unsigned char *)j->in[k] + (size_t)off[k + 1] * b->size[k + 1];
		j->fn(n, (unsigned char *)j->out + (size_t)off[0] * b->size[0], ip, step, j->arg);
		lo += n;
		for (int32_t k = 0; k < nops; k++)
			off[k] -= at * step[k];
		at = 0;
		/* odometer over the outer axes */
		for (int32_t i = inner - 1; i >= 0; i--) {
			for (int32_t k = 0; k < nops; k++)
				off[k] += b->stride[k][i];
			if (++idx[i] < b->dims[i])
				break;
			for (int32_t k = 0; k < nops; k++)
				off[k] -= b->stride[k][i] * b->dims[i];
			idx[i] = 0;
		}
	}
}

/* Short innermost runs (a channel-blocked tensor times one vector per block: runs of 16)
 * cost a call each. When every operand is contiguous along the innermost axis and along the
 * one before either contiguous too or repeating (stride 0), consecutive rows go to fn
 * together, each repeating operand's vector copied TILE_BYTES' worth of times. */
enum { SHORT_RUN = 64, TILE_BYTES = 1024 };

static bool tileable(const om_bcast *b)
{
	const int32_t inner = b->rank - 1;
	const int64_t D = b->dims[inner > 0 ? inner : 0];
	if (inner < 1 || D >= SHORT_RUN)
		return false;
	for (int32_t k = 0; k <= b->nin; k++)
		if (b->stride[k][inner] != 1 || b->size[k] * (size_t)D > TILE_BYTES ||
		    (b->stride[k][inner - 1] != D && b->stride[k][inner - 1] != 0))
			return false;
	return true;
}

/* rows [lo, hi) of D elements (row u: index u % K on axis inner - 1, the outer axes' u / K) */
static void tiled_piece(void *arg, int64_t lo, int64_t hi)
{
	const bcast_job *j = arg;
	const om_bcast *b = j->b;
	const int32_t nops = b->nin + 1, inner = b->rank - 1;
	const int64_t D = b->dims[inner], K = b->dims[inner - 1];
	size_t widest = 0;
	for (int32_t k = 0; k < nops; k++)
		widest = b->size[k] > widest ? b->size[k] : widest;
	const int64_t R = (int64_t)(TILE_BYTES / (widest * (size_t)D));
	unsigned char tile[OM_BCAST_MAX_IN][TILE_BYTES];
	int64_t ones[OM_BCAST_MAX_IN + 1];
	for (int32_t k = 0; k < nops; k++)
		ones[k] = 1; /* every operand contiguous, the repeating ones as their tiles */
	for (int64_t u = lo; u < hi;) {
		const int64_t kk = u % K, rows = K - kk < hi - u ? K - kk : hi - u;
		int64_t off[OM_BCAST_MAX_IN + 1] = {0};
		for (int64_t o = u / K, i = inner - 2; i >= 0; i--) {
			for (int32_t k = 0; k < nops; k++)
				off[k] += o % b->dims[i] * b->stride[k][i];
			o /= b->dims[i];
		}
		const void *ip[OM_BCAST_MAX_IN];
		for (int32_t k = 1; k < nops; k++) {
			const unsigned char *v = (const unsigned char *)j->in[k - 1] +
						 (size_t)off[k] * b->size[k];
			const size_t row = b->size[k] * (size_t)D;
			if (b->stride[k][inner - 1]) {
				ip[k - 1] = v + (size_t)kk * row;
				continue;
			}
			for (int64_t r = 0; r < R && r < rows; r++)
				memcpy(tile[k - 1] + (size_t)r * row, v, row);
			ip[k - 1] = tile[k - 1];
		}
		unsigned char *op = (unsigned char *)j->out + (size_t)(off[0] + kk * D) * b->size[0];
		for (int64_t done = 0; done < rows;) {
			const int64_t m = rows - done < R ? rows - done : R;
			j->fn(m * D, op + (size_t)(done * D) * b->size[0], ip, ones, j->arg);
			done += m;
			for (int32_t k = 1; k < nops; k++)
				if (b->stride[k][inner - 1])
					ip[k - 1] = (const unsigned char *)ip[k - 1] +
						    (size_t)(m * D) * b->size[k];
		}
		u += rows;
	}
}

void om_bcast_run(const om_bcast *b, void *out, const void *const *in, om_bcast_fn fn,
		  const void *arg)
{
	if (b->numel <= 0)
		return;
	bcast_job j = {b, out, in, fn, arg};
	if (tileable(b)) {
		const int64_t D = b->dims[b->rank - 1];
		om_par_for(b->threads, b->numel / D, OM_EW_GRAIN / D, tiled_piece, &j);
		return;
	}
	om_par_for(b->threads, b->numel, OM_EW_GRAIN, bcast_piece, &j);
}
