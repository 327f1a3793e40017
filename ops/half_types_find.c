/* half_types_find.c — the lookup of an op's half-precision slots at an opset (half_types.h). */
#include <string.h>

#include "half_types.h"

const om_half_types *om_half_types_find(const char *op, int64_t opset)
{
	size_t n;
	const om_half_types *rows = om_half_types_rows(&n);
	size_t lo = 0, hi = n;
	while (lo < hi) { /* the first row of op */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(rows[mid].op, op) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	const om_half_types *best = NULL;
	for (size_t i = lo; i < n && !strcmp(rows[i].op, op); i++)
		if (rows[i].since <= opset)
			best = &rows[i];
	return best;
}
