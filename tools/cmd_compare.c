/* cmd_compare.c — `omopt compare A.onnx B.onnx`: runs both models on the same inputs and prints
 * the difference of every value they share by name (om_compare). */
#include <stdio.h>
#include <string.h>

#include "check_cli.h"
#include "cmd.h"
#include "progress.h"

static const char usage_text[] =
	"usage: omopt compare A.onnx B.onnx [--input NAME=FILE]... [--input-dir DIR] [--rtol R]\n"
	"                     [--atol A] [--seed N]\n"
	"\n"
	"Runs both models once with omopt's executor on the same inputs, every value they share\n"
	"by name made a graph output, and prints for each (in A's topological order) its shape,\n"
	"the max absolute and relative difference of B's value from A's and whether it is within\n"
	"the tolerance; the first value over it is marked, with the nodes that compute it in A\n"
	"and in B. A value that B holds as an initializer (a folded constant) is compared too.\n"
	"Example: omopt simplify m.onnx s.onnx && omopt compare m.onnx s.onnx --input x=x.npy\n"
	"\n"
	"%s"
	"\n"
	"Exit status: 0 every shared value within tolerance, 1 model or I/O error, 2 usage\n"
	"error, 3 some value over the tolerance (or B failed to run).\n";

int cmd_compare(int argc, char **argv)
{
	cli_check_args ca = {0};
	const char *paths[2] = {NULL, NULL};
	int npaths = 0, rc = 0;
	for (int i = 1; i < argc && !rc; i++) {
		int used = cli_check_arg(argc, argv, &i, &ca, "omopt compare");
		if (used) {
			rc = used < 0 ? 2 : 0;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf(usage_text, cli_check_help);
			cli_check_free(&ca);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			rc = cmd_usage_error("compare", "unknown option '%s'", argv[i]);
		} else if (npaths < 2) {
			paths[npaths++] = argv[i];
		} else {
			rc = cmd_usage_error("compare", "unexpected argument '%s'", argv[i]);
		}
	}
	if (!rc && npaths != 2)
		rc = cmd_usage_error("compare", "needs A.onnx and B.onnx");
	if (rc) {
		cli_check_free(&ca);
		return rc;
	}
	om_status st = {0};
	om_model *a = NULL, *b = NULL;
	cli_progress prog;
	cli_progress_start(&prog, "omopt compare", false);
	ca.opt.progress = cli_progress_report;
	ca.opt.progress_user = &prog;
	om_compare_report rep = {0};
	if (om_model_load(paths[0], &a, &st) || cli_check_read(&ca, a, &st) ||
	    om_model_load(paths[1], &b, &st) || om_compare(a, b, &ca.opt, &rep, &st)) {
		rc = cmd_fail(&st);
	} else {
		cli_print_compare(stdout, &rep);
		rc = rep.first_over >= 0 || rep.error[0] ? CMD_CHECK_FAILED : 0;
	}
	om_compare_report_free(&rep);
	om_model_free(a);
	om_model_free(b);
	cli_check_free(&ca);
	return rc;
}
