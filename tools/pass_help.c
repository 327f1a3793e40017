/* pass_help.c — the pass lists of `omopt simplify --help` and `omopt run --help`, written from
 * the library's pass registry (om_pass_rows). */
#include <stdio.h>

#include "cmd.h"

enum { MAX_PASSES = 64 };

const char *cmd_pass_list(char *buf, size_t size, int level)
{
	om_pass_info rows[MAX_PASSES];
	const int n = om_pass_rows(rows, MAX_PASSES);
	size_t k = 0;
	buf[0] = '\0';
	for (int i = 0; i < n && i < MAX_PASSES && k < size; i++)
		if (rows[i].level == level)
			k += (size_t)snprintf(buf + k, size - k, "    %-21s %s\n", rows[i].name,
					      rows[i].what);
	return buf;
}
