/* test_ops_move.c — placeholder: the module is not written yet, so its test skips. */
#include "testutil.h"

static void not_written(void **state)
{
	(void)state;
	skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(not_written)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
