/* cmd_info.c — not written yet. */
#include <stdio.h>

#include "cmd.h"

int cmd_info(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "omopt info: not written yet\n");
	return 2;
}
