/* arena.h — bump allocator: a model's (or session's) small objects live and die together. */
#ifndef OM_ARENA_H
#define OM_ARENA_H

#include <stddef.h>

typedef struct om_arena om_arena;

om_arena *om_arena_new(void);
/** Zeroed memory aligned to 16 bytes; NULL when out of memory. Large requests get a block of
 *  their own. */
void *om_arena_alloc(om_arena *a, size_t size);
/** Copies n bytes and a terminating NUL. */
char *om_arena_strndup(om_arena *a, const char *s, size_t n);
char *om_arena_strdup(om_arena *a, const char *s);
void *om_arena_memdup(om_arena *a, const void *p, size_t n);
/** Bytes handed out so far. */
size_t om_arena_used(const om_arena *a);
void om_arena_free(om_arena *a);

#endif
