#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNK = 64 * 1024, ALIGN = 16 };

typedef struct block {
	struct block *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
} block;

struct om_arena {
	block *head;
	size_t total;
};

om_arena *om_arena_new(void)
{
	return calloc(1, sizeof(om_arena));
}

static block *block_new(size_t size)
{
	if (size > SIZE_MAX - sizeof(block))
		return NULL;
	block *b = calloc(1, sizeof(block) + size);
	if (b)
		b->size = size;
	return b;
}

void *om_arena_alloc(om_arena *a, size_t size)
{
	size_t need = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	if (need < size)
		return NULL;
	if (need == 0)
		need = ALIGN;
	block *b = a->head;
	if (!b || b->size - b->used < need) {
		if (need > CHUNK / 4) {
			/* big request: own block, linked behind the current one */
			block *big = block_new(need);
			if (!big)
				return NULL;
			big->used = need;
			if (b) {
				big->next = b->next;
				b->next = big;
			} else {
				a->head = big;
			}
			a->total += need;
			return big->data;
		}
		b = block_new(CHUNK);
		if (!b)
			return NULL;
		b->next = a->head;
		a->head = b;
	}
	void *p = b->data + b->used;
	b->used += need;
	a->total += need;
	return p;
}

char *om_arena_strndup(om_arena *a, const char *s, size_t n)
{
	char *p = om_arena_alloc(a, n + 1);
	if (p && n)
		memcpy(p, s, n);
	return p;
}

char *om_arena_strdup(om_arena *a, const char *s)
{
	return s ? om_arena_strndup(a, s, strlen(s)) : NULL;
}

void *om_arena_memdup(om_arena *a, const void *p, size_t n)
{
	void *q = om_arena_alloc(a, n);
	if (q && n)
		memcpy(q, p, n);
	return q;
}

size_t om_arena_used(const om_arena *a)
{
	return a->total;
}

void om_arena_free(om_arena *a)
{
	if (!a)
		return;
	for (block *b = a->head, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	free(a);
}
