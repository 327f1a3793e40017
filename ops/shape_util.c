/* shape_util.c — argument readers, axis checks, strided copies and the move-kernel wrapper. */
#include <stdlib.h>
#include <string.h>

#include "move.h"
#include "op.h"
#include "shape_util.h"
#include "subbyte.h"

om_kind om_arg_ints(om_ctx *c, int input, const char *attr, int64_t *buf, int64_t cap,
		    int64_t *count, bool *given)
{
	*count = 0;
	*given = false;
	if (input >= 0 && input < c->nin && c->in[input]) {
		const om_tensor *t = c->in[input];
		if (t->rank > 1)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"input %d must be a 1-D tensor, has rank %d", input,
					t->rank);
		*given = true;
		return om_read_ints(c, t, buf, cap, count);
	}
	if (!attr)
		return OM_OK;
	const om_attr *a = om_node_attr(c->node, attr);
	if (!a)
		return OM_OK;
	if (a->type != OM_ATTR_INTS && a->type != OM_ATTR_INT)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"attribute '%s' must be a list of ints", attr);
	int64_t n = a->type == OM_ATTR_INT ? 1 : a->n;
	if (n > cap || n < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"attribute '%s' has %lld entries, at most %lld allowed", attr,
				(long long)n, (long long)cap);
	if (a->type == OM_ATTR_INT)
		buf[0] = a->i;
	else if (n)
		memcpy(buf, a->ints, sizeof(int64_t) * (size_t)n);
	*count = n;
	*given = true;
	return OM_OK;
}

om_kind om_norm_axes(om_ctx *c, const int64_t *axes, int64_t n, int32_t rank, int32_t *out)
{
	bool seen[2 * OM_MAX_RANK + 1] = {0};
	if (rank > 2 * OM_MAX_RANK || n > rank)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%lld axes for rank %d", (long long)n, rank);
	for (int64_t i = 0; i < n; i++) {
		om_kind rc = om_norm_axis(c, axes[i], rank, &out[i]);
		if (rc)
			return rc;
		if (seen[out[i]])
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"axis %lld is listed twice", (long long)axes[i]);
		seen[out[i]] = true;
	}
	return OM_OK;
}

om_kind om_read_scalar_int(om_ctx *c, const om_tensor *t, int64_t *v)
{
	if (!om_has_value(t))
		return OM_NEED_VALUE;
	if (om_tensor_numel(t) != 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"expected a single value, got %lld", (long long)om_tensor_numel(t));
	if (t->dtype == OM_BOOL) {
		*v = *(const uint8_t *)t->data != 0;
		return OM_OK;
	}
	int64_t cnt;
	return om_read_ints(c, t, v, 1, &cnt);
}

bool om_scalar_is_float_zero(const om_tensor *t)
{
	if (!om_has_value(t) || om_tensor_numel(t) != 1)
		return false;
	if (t->dtype == OM_FLOAT) {
		float v;
		memcpy(&v, t->data, sizeof v);
		return v == 0;
	}
	if (t->dtype == OM_DOUBLE) {
		double v;
		memcpy(&v, t->data, sizeof v);
		return v == 0;
	}
	if (t->dtype == OM_FLOAT16 || t->dtype == OM_BFLOAT16) {
		uint16_t h;
		memcpy(&h, t->data, sizeof h);
		return (h & 0x7fff) == 0; /* +0 or -0 in both */
	}
	return false;
}

size_t om_move_size(int32_t dtype)
{
	const int bits = om_dtype_bits(dtype);
	return bits > 0 && bits < 8 ? 1 : om_dtype_size(dtype);
}

void om_dense_strides(int32_t rank, const int64_t *dims, int64_t *strides)
{
	int64_t s = 1;
	for (int32_t i = rank - 1; i >= 0; i--) {
		strides[i] = s;
		s *= dims[i] > 0 ? dims[i] : 1;
	}
}

#define RUN(SZ)                                                                                 \
	for (int64_t i = 0; i < n; i++)                                                         \
		memcpy(d + i * (SZ), s + i * stride * (SZ), (SZ))

/* n elements at src + i*stride (elements, any sign) to dense dst */
static void run(unsigned char *d, const unsigned char *s, size_t size, int64_t n, int64_t stride)
{
	if (stride == 1) {
		om_move_n(d, s, size, n);
		return;
	}
	switch (size) {
	case 1: RUN(1); break;
	case 2: RUN(2); break;
	case 4: RUN(4); break;
	case 8: RUN(8); break;
	case 16: RUN(16); break;
	default: RUN((int64_t)size); break;
	}
}

#undef RUN

/* The axes of a strided copy with extent-1 axes dropped and neighbours merged where the source
 * runs on across them (strides[a] == strides[a + 1] * dims[a + 1]; the destination is dense,
 * so it always does): a channel Slice of (N, C, H, W) copies N runs of C' * H * W elements
 * instead of N * C' * H runs of W (shufflenet's (1, 58, 28, 28) halves: 1624 runs of 28). */
static int32_t coalesce(int32_t rank, const int64_t *dims, const int64_t *strides, int64_t *cd,
			int64_t *cs)
{
	int32_t r = 0;
	for (int32_t a = 0; a < rank; a++) {
		if (dims[a] == 1)
			continue;
		if (r > 0 && cs[r - 1] == strides[a] * dims[a]) {
			cd[r - 1] *= dims[a];
			cs[r - 1] = strides[a];
			continue;
		}
		cd[r] = dims[a], cs[r] = strides[a], r++;
	}
	return r;
}

void om_strided_copy(void *dst, const void *src, size_t size, int32_t rank, const int64_t *dims,
		     const int64_t *strides)
{
	int64_t numel = 1;
	for (int32_t i = 0; i < rank; i++)
		numel *= dims[i];
	if (numel <= 0)
		return;
	int64_t cd[2 * OM_MAX_RANK], cs[2 * OM_MAX_RANK];
	rank = coalesce(rank, dims, strides, cd, cs);
	if (rank == 0) {
		om_move1(dst, src, size);
		return;
	}
	unsigned char *d = dst;
	const unsigned char *s = src;
	int64_t idx[2 * OM_MAX_RANK] = {0}, off = 0;
	const int64_t inner = cd[rank - 1], istride = cs[rank - 1];
	for (int64_t done = 0; done < numel; done += inner) {
		run(d + done * (int64_t)size, s + off * (int64_t)size, size, inner, istride);
		for (int32_t a = rank - 2; a >= 0; a--) {
			off += cs[a];
			if (++idx[a] < cd[a])
				break;
			off -= cs[a] * cd[a];
			idx[a] = 0;
		}
	}
}

/* ---- the move-kernel wrapper ------------------------------------------------------------- */

static void unpack_sub(uint8_t *dst, const uint8_t *src, int64_t n, int bits)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = om_sub_get(src, i, bits);
}

/* the padding bits of the last byte end up zero */
static void pack_sub(uint8_t *dst, const uint8_t *src, int64_t n, int bits)
{
	memset(dst, 0, (size_t)((n * bits + 7) / 8));
	for (int64_t i = 0; i < n; i++)
		om_sub_set(dst, i, bits, src[i]);
}

static om_kind own_strings(om_ctx *c, om_tensor *t)
{
	om_str *s = t->data;
	const int64_t n = om_tensor_numel(t);
	for (int64_t i = 0; i < n; i++) {
		char *p = malloc((size_t)(s[i].len > 0 ? s[i].len : 0) + 1);
		if (!p) {
			for (int64_t j = i; j < n; j++)
				s[j].ptr = NULL, s[j].len = 0;
			return om_error(c->st, OM_ERR_NOMEM, c->node,
					"out of memory copying strings");
		}
		if (s[i].len > 0)
			memcpy(p, s[i].ptr, (size_t)s[i].len);
		else
			s[i].len = 0;
		p[s[i].len] = 0;
		s[i].ptr = p;
	}
	return OM_OK;
}

static bool is_sub(const om_tensor *t)
{
	return t && om_dtype_bits(t->dtype) > 0 && om_dtype_bits(t->dtype) < 8;
}

om_kind om_move_run(om_ctx *c, om_kernel_fn kernel)
{
	bool anysub = false;
	for (int32_t i = 0; i < c->nin; i++)
		anysub |= is_sub(c->in[i]);
	for (int32_t i = 0; i < c->nout; i++)
		anysub |= is_sub(c->out[i]);
	om_kind rc = OM_OK;
	if (!anysub) {
		rc = kernel(c);
	} else {
		/* one element per byte: temporary copies of the sub-byte tensors */
		const int32_t nt = c->nin + c->nout;
		om_tensor *tmp = calloc((size_t)nt, sizeof *tmp);
		const om_tensor **in = calloc((size_t)c->nin + 1, sizeof *in);
		om_tensor **out = calloc((size_t)c->nout + 1, sizeof *out);
		if (!tmp || !in || !out) {
			rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
			goto done;
		}
		for (int32_t i = 0; i < nt && !rc; i++) {
			const om_tensor *t = i < c->nin ? c->in[i] : c->out[i - c->nin];
			if (i < c->nin)
				in[i] = t;
			else
				out[i - c->nin] = (om_tensor *)t;
			if (!is_sub(t))
				continue;
			const int64_t n = om_tensor_numel(t);
			tmp[i] = *t;
			tmp[i].nbytes = (size_t)n;
			if ((rc = om_ctx_reserve(c, (size_t)n, "an unpacked sub-byte copy")))
				break;
			tmp[i].data = malloc((size_t)n + 1);
			if (!tmp[i].data) {
				rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
				break;
			}
			if (i < c->nin) {
				unpack_sub(tmp[i].data, t->data, n, om_dtype_bits(t->dtype));
				in[i] = &tmp[i];
			} else {
				out[i - c->nin] = &tmp[i];
			}
		}
		if (!rc) {
			om_ctx u = *c;
			u.in = in;
			u.out = out;
			rc = kernel(&u);
		}
		for (int32_t i = c->nin; i < nt && !rc; i++)
			if (tmp[i].data)
				pack_sub(c->out[i - c->nin]->data, tmp[i].data,
					 om_tensor_numel(&tmp[i]), om_dtype_bits(tmp[i].dtype));
	done:
		if (tmp)
			for (int32_t i = 0; i < nt; i++)
				free(tmp[i].data);
		free(tmp);
		free(in);
		free(out);
	}
	if (c->run)
		return rc;
	for (int32_t i = 0; i < c->nout; i++) {
		om_tensor *t = c->out[i];
		if (!t || t->dtype != OM_STRING || !t->data)
			continue;
		if (rc) /* a failed kernel may have left borrowed pointers */
			memset(t->data, 0, t->nbytes);
		else
			rc = own_strings(c, t);
	}
	return rc;
}
