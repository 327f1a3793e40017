/* text_util.c — UTF-8 code points and owned output strings for the string kernels. */
#include <stdlib.h>
#include <string.h>

#include "text_util.h"

int32_t om_utf8_next(const char *s, int64_t len, int64_t *i)
{
	const unsigned char *p = (const unsigned char *)s;
	const int64_t at = *i;
	const unsigned b = p[at];
	int n;
	int32_t cp, min;
	if (b < 0x80) {
		*i = at + 1;
		return (int32_t)b;
	} else if (b >= 0xc2 && b < 0xe0) {
		n = 1, cp = (int32_t)(b & 0x1f), min = 0x80;
	} else if (b >= 0xe0 && b < 0xf0) {
		n = 2, cp = (int32_t)(b & 0x0f), min = 0x800;
	} else if (b >= 0xf0 && b < 0xf5) {
		n = 3, cp = (int32_t)(b & 0x07), min = 0x10000;
	} else {
		*i = at + 1;
		return -1;
	}
	if (len - at - 1 < n) {
		*i = at + 1;
		return -1;
	}
	for (int k = 1; k <= n; k++) {
		const unsigned cb = p[at + k];
		if ((cb & 0xc0) != 0x80) {
			*i = at + 1;
			return -1;
		}
		cp = (cp << 6) | (int32_t)(cb & 0x3f);
	}
	*i = at + 1 + n;
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
		return -1;
	return cp;
}

int om_utf8_put(int32_t cp, char *out)
{
	unsigned char *o = (unsigned char *)out;
	const uint32_t u = (uint32_t)cp;
	if (u < 0x80) {
		o[0] = (unsigned char)u;
		return 1;
	}
	if (u < 0x800) {
		o[0] = (unsigned char)(0xc0 | (u >> 6));
		o[1] = (unsigned char)(0x80 | (u & 0x3f));
		return 2;
	}
	if (u < 0x10000) {
		o[0] = (unsigned char)(0xe0 | (u >> 12));
		o[1] = (unsigned char)(0x80 | ((u >> 6) & 0x3f));
		o[2] = (unsigned char)(0x80 | (u & 0x3f));
		return 3;
	}
	o[0] = (unsigned char)(0xf0 | (u >> 18));
	o[1] = (unsigned char)(0x80 | ((u >> 12) & 0x3f));
	o[2] = (unsigned char)(0x80 | ((u >> 6) & 0x3f));
	o[3] = (unsigned char)(0x80 | (u & 0x3f));
	return 4;
}

bool om_text_dup(om_str *dst, const char *s, int64_t len)
{
	if (len < 0)
		len = 0;
	char *p = malloc((size_t)len + 1);
	if (!p)
		return false;
	if (len)
		memcpy(p, s, (size_t)len);
	p[len] = 0;
	*dst = (om_str){p, len};
	return true;
}

void om_text_free_out(om_tensor *t, int64_t n)
{
	if (!t || t->dtype != OM_STRING || !t->data)
		return;
	om_str *s = t->data;
	if (n > om_tensor_numel(t))
		n = om_tensor_numel(t);
	for (int64_t i = 0; i < n; i++) {
		free((void *)s[i].ptr);
		s[i] = (om_str){NULL, 0};
	}
}

om_kind om_text_check(om_ctx *c, const om_tensor *t)
{
	if (t->dtype != OM_STRING)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "takes strings, not %s",
				om_dtype_name(t->dtype));
	const om_str *s = t->data;
	const int64_t n = om_tensor_numel(t);
	for (int64_t i = 0; s && i < n; i++)
		if (s[i].len < 0 || (s[i].len > 0 && !s[i].ptr))
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"string element %lld is malformed", (long long)i);
	return OM_OK;
}
