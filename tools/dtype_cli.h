/* dtype_cli.h — `omopt simplify --dtype fp16|bf16 [--keep-fp32 NODE]...`: the options, the
 * conversion after the passes (om_convert_dtype) and what it prints (public API only). */
#ifndef OM_TOOLS_DTYPE_CLI_H
#define OM_TOOLS_DTYPE_CLI_H

#include "check_cli.h"
#include "progress.h"

enum { CLI_MAX_KEEP = 256 };

typedef struct cli_dtype_args {
	int32_t dtype;                        /* 0: no conversion */
	const char *keep[CLI_MAX_KEEP + 1];   /* NULL-terminated */
	int nkeep;
	int no_measure;
} cli_dtype_args;

/** Consumes argv[*i] (and its value) when it is --dtype, --keep-fp32 or --no-keep-measure: 1
 *  when consumed, 0 when not one of them, -1 after printing a usage error (prefix cmd). */
int cli_dtype_arg(int argc, char **argv, int *i, cli_dtype_args *a, const char *cmd);

/** The help text of those options. */
extern const char cli_dtype_help[];

/** Converts m (om_convert_dtype) with the check's inputs, runs and tolerances; prints each
 *  node kept float32 and why on stderr, and the outputs' differences on stdout. 0: done and
 *  the outputs within tolerance, 3: over it (the model is converted anyway), 1: an error. */
int cli_dtype_convert(om_model *m, const cli_dtype_args *a, const cli_check_args *c,
		      cli_progress *prog);

#endif
