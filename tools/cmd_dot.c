/* cmd_dot.c — not written yet. */
#include <stdio.h>

#include "cmd.h"

int cmd_dot(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "omopt dot: not written yet\n");
	return 2;
}
