/* re2_wrap.h — RE2 (C++) behind three C functions: the only C++ in omopt (re2_wrap.cc). */
#ifndef OM_RE2_WRAP_H
#define OM_RE2_WRAP_H

#include <stddef.h>

typedef struct om_re2 om_re2;

/** Compiles a UTF-8 RE2 pattern of len bytes; NULL when it does not compile (err gets RE2's
 *  reason, NUL-terminated within errsize bytes) or out of memory (err says so). */
om_re2 *om_re2_new(const char *pattern, size_t len, char *err, size_t errsize);
/** 1 when the len bytes at s match the whole pattern, 0 when not. */
int om_re2_full_match(const om_re2 *re, const char *s, size_t len);
void om_re2_free(om_re2 *re);

#endif
