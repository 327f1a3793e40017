/* cmd_run.c — not written yet. */
#include <stdio.h>

#include "cmd.h"

int cmd_run(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "omopt run: not written yet\n");
	return 2;
}
