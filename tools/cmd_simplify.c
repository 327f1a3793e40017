/* cmd_simplify.c — not written yet. */
#include <stdio.h>

#include "cmd.h"

int cmd_simplify(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "omopt simplify: not written yet\n");
	return 2;
}
