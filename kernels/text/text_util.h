/* text_util.h — what the string kernels share: UTF-8 code points and owned output strings. */
#ifndef OM_TEXT_UTIL_H
#define OM_TEXT_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "op.h"

/** Decodes the UTF-8 code point at s[*i] (len bytes in all), advancing *i; -1 (and *i past
 *  one byte) for an ill-formed sequence (overlong, surrogate, > U+10FFFF, truncated). */
int32_t om_utf8_next(const char *s, int64_t len, int64_t *i);
/** Writes code point cp (valid) as UTF-8 into out (4 bytes room); returns the byte count. */
int om_utf8_put(int32_t cp, char *out);
/** Sets *dst to a malloc'd copy of len bytes of s (NUL-terminated): false out of memory. */
bool om_text_dup(om_str *dst, const char *s, int64_t len);
/** Frees the first n strings of an output tensor (the ones this kernel made, NULL ones
 *  skipped) and zeroes them: the kernels' cleanup on failure. */
void om_text_free_out(om_tensor *t, int64_t n);
/** The string tensor's elements checked for a non-negative length and a pointer where the
 *  length is not 0: InvalidInput otherwise (what the kernels read may come from anywhere). */
om_kind om_text_check(om_ctx *c, const om_tensor *t);

#endif
