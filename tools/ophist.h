/* ophist.h — op-type histograms of models for the commands (ophist.c), from the public
 * om_model_op_counts, and type formatting of graph inputs and outputs. */
#ifndef OM_OPHIST_H
#define OM_OPHIST_H

#include "omopt.h"

typedef struct om_ophist_row {
	char op[128]; /* "Conv", or "domain.Op" outside the default domain */
	int64_t count[2];
} om_ophist_row;

/** Counts in columns: 0 before, 1 after (simplify); info fills column 0 only. */
typedef struct om_ophist {
	om_ophist_row *rows;
	int n, cap;
	int64_t total[2];
} om_ophist;

/** Adds m's op counts (every graph) into column col; sorted by op. */
om_kind om_ophist_add(om_ophist *h, const om_model *m, int col, om_status *st);
void om_ophist_free(om_ophist *h);

/** "float[N,3,224,224]", "seq(float)", "?" ... of a declared input or output. */
void om_io_format(const om_io_info *io, char *buf, size_t size);

#endif
