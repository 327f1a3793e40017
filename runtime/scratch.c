/* scratch.c — a run's work buffers for kernels (scratch.h). */
#include <stdlib.h>
#include <string.h>

#include "bigbuf.h"
#include "scratch.h"

enum { ALIGN = 64 };

static size_t round_up(size_t n)
{
	return (n + ALIGN - 1) / ALIGN * ALIGN;
}

/* with no buffer out: the stack remade as large as the most bytes out at once */
static void regrow(om_scratch *s)
{
	if (s->n || s->most <= s->cap)
		return;
	free(s->base);
	s->cap = 0;
	if ((s->base = om_aligned_touched(ALIGN, s->most)))
		s->cap = s->most;
}

bool om_scratch_take(om_scratch *s, size_t bytes, void **p)
{
	*p = NULL;
	if (s->n >= OM_SCRATCH_MOST || bytes > (size_t)-1 / 2)
		return false;
	const size_t size = round_up(bytes ? bytes : 1);
	om_scratch_buf *b = &s->out[s->n];
	if (s->base && s->cap - s->top >= size) {
		*b = (om_scratch_buf){s->base + s->top, s->top, size, false};
		s->top += size;
	} else {
		void *q = om_aligned_touched(ALIGN, size);
		if (!q)
			return false;
		*b = (om_scratch_buf){q, 0, size, true};
	}
	s->n++;
	s->busy += size;
	if (s->busy > s->most)
		s->most = s->busy;
	*p = b->p;
	return true;
}

static void give(om_scratch *s, int i)
{
	om_scratch_buf b = s->out[i];
	memmove(&s->out[i], &s->out[i + 1], sizeof *s->out * (size_t)(s->n - i - 1));
	s->n--;
	s->busy -= b.size;
	if (b.own)
		free(b.p);
	/* the top falls to the end of the highest buffer still out in the stack */
	s->top = 0;
	for (int k = 0; k < s->n; k++)
		if (!s->out[k].own && s->out[k].off + s->out[k].size > s->top)
			s->top = s->out[k].off + s->out[k].size;
	regrow(s);
}

void om_scratch_give(om_scratch *s, void *p)
{
	for (int i = s->n - 1; p && i >= 0; i--)
		if (s->out[i].p == p) {
			give(s, i);
			return;
		}
}

void om_scratch_give_from(om_scratch *s, int keep)
{
	while (s->n > keep && s->n > 0)
		give(s, s->n - 1);
}

void om_scratch_free(om_scratch *s)
{
	om_scratch_give_from(s, 0);
	free(s->base);
	memset(s, 0, sizeof *s);
}
