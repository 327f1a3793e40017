/* testutil.h — shared helpers for the cmocka tests. */
#ifndef OM_TESTUTIL_H
#define OM_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"

/** $OMOPT_SHARED (../shared) when it exists, else NULL: tests needing it call skip(). */
const char *tu_shared_dir(void);
/** Joins a path under the source tree ($OMOPT_SOURCE) into a static buffer. */
const char *tu_source_path(const char *rel);

#endif
