/* check_cli.h — what `omopt simplify --check/--bisect` and `omopt compare` share: the options
 * --input NAME=FILE, --input-dir DIR, --rtol, --atol, --seed, and the printed reports (public
 * API only). */
#ifndef OM_TOOLS_CHECK_CLI_H
#define OM_TOOLS_CHECK_CLI_H

#include <stdio.h>

#include "omopt.h"

enum { CLI_MAX_INPUTS = 64 };

typedef struct cli_check_args {
	om_check_options opt;
	const char *names[CLI_MAX_INPUTS];
	const char *files[CLI_MAX_INPUTS];
	om_tensor tensors[CLI_MAX_INPUTS];
	int n;
	const char *input_dir; /* --input-dir: the inputs not given by --input, or NULL */
	char *dir_files[CLI_MAX_INPUTS]; /* the paths found there (malloc'd) */
} cli_check_args;

/** Prints "CMD: <fmt with arg> (CMD --help)" to stderr for a bad option; returns -1 (what the
 *  option parsers below return for it). */
int cli_usage_error(const char *cmd, const char *fmt, const char *arg);
/** Consumes argv[*i] (and its value, moving *i) when it is --input, --input-dir, --rtol,
 *  --atol or --seed: 1 when consumed, 0 when not one of them, -1 after printing a usage
 *  error (prefix cmd). */
int cli_check_arg(int argc, char **argv, int *i, cli_check_args *a, const char *cmd);
/** Reads the --input files into a->tensors and sets a->opt's inputs; with --input-dir, each
 *  of m's graph inputs not given by --input from DIR/input_<i>.pb (ONNX's test layout), else
 *  DIR/NAME.npy, as `omopt run` reads it (OM_ERR_INVALID_INPUT naming a missing one). */
om_kind cli_check_read(cli_check_args *a, const om_model *m, om_status *st);
/** Checks the --input tensors against m's graph inputs before any work: each names one, of
 *  its element type and rank, each fixed extent equal (the shape `shapes` gives an input, as
 *  --input-shape, replaces the declared one). OM_ERR_INVALID_INPUT naming the input. */
om_kind cli_check_fits(const cli_check_args *a, const om_model *m, const om_input_shape *shapes,
		       int nshapes, om_status *st);
void cli_check_free(cli_check_args *a);

/** The help text of those options. */
extern const char cli_check_help[];

void cli_print_check(FILE *f, const om_check_report *r);
void cli_print_bisect(FILE *f, const om_bisect_report *r);
/** Every value; `all`: also those within tolerance. */
void cli_print_compare(FILE *f, const om_compare_report *r);

#endif
