/* test_scratch.c — the runner's scratch stack (runtime/scratch.c): buffers 64-byte aligned and
 * apart; one that does not fit gets its own malloc, and the stack is remade as large as the
 * most bytes out at once when none is out; given back in any order, the top falls back; at most
 * OM_SCRATCH_MOST out; give_from takes back a kernel's leftovers. */
#include <stdint.h>
#include <string.h>

#include "scratch.h"
#include "testutil.h"

static bool aligned(const void *p)
{
	return ((uintptr_t)p & 63) == 0;
}

static void grows_then_stays(void **state)
{
	(void)state;
	om_scratch s = {0};
	void *a, *b, *c;
	/* nothing yet: each its own malloc */
	assert_true(om_scratch_take(&s, 1000, &a));
	assert_true(om_scratch_take(&s, 3000, &b));
	assert_true(aligned(a) && aligned(b));
	memset(a, 1, 1000), memset(b, 2, 3000);
	assert_int_equal(s.busy, 1024 + 3008);
	om_scratch_give(&s, a);
	assert_int_equal(s.cap, 0); /* b is out: not remade yet */
	om_scratch_give(&s, b);
	assert_int_equal(s.cap, 1024 + 3008); /* the most out at once */
	assert_int_equal(s.n, 0);
	/* the same bytes again: in the stack, one after the other */
	assert_true(om_scratch_take(&s, 1000, &a));
	assert_true(om_scratch_take(&s, 3000, &b));
	assert_ptr_equal(a, s.base);
	assert_ptr_equal(b, s.base + 1024);
	/* out of order: b's end stays the top while b is out */
	om_scratch_give(&s, a);
	assert_int_equal(s.top, 1024 + 3008);
	assert_true(om_scratch_take(&s, 64, &c)); /* above the top: no room, its own */
	assert_true(c != a && aligned(c));
	om_scratch_give(&s, b);
	assert_int_equal(s.top, 0);
	om_scratch_give(&s, c);
	assert_int_equal(s.cap, 1024 + 3008); /* 4032 + 64 never out at once over 4032 */
	om_scratch_give(&s, (void *)&s); /* not one of its buffers: ignored */
	om_scratch_free(&s);
	assert_null(s.base);
}

static void at_most_and_leftovers(void **state)
{
	(void)state;
	om_scratch s = {0};
	void *p[OM_SCRATCH_MOST + 1];
	for (int i = 0; i < OM_SCRATCH_MOST; i++)
		assert_true(om_scratch_take(&s, 100, &p[i]));
	assert_false(om_scratch_take(&s, 100, &p[OM_SCRATCH_MOST]));
	assert_null(p[OM_SCRATCH_MOST]);
	om_scratch_give_from(&s, 2); /* a kernel's leftovers over two kept */
	assert_int_equal(s.n, 2);
	assert_int_equal(s.busy, 2 * 128);
	om_scratch_give_from(&s, 0);
	assert_int_equal(s.cap, OM_SCRATCH_MOST * 128);
	assert_false(om_scratch_take(&s, (size_t)-1, &p[0])); /* no size overflow */
	assert_true(om_scratch_take(&s, 0, &p[0])); /* 0 bytes: a valid pointer */
	assert_non_null(p[0]);
	om_scratch_free(&s); /* with one out: freed too (ASan sees a leak otherwise) */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(grows_then_stays),
		cmocka_unit_test(at_most_and_leftovers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
