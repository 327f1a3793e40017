/* dtype_cli.c — see dtype_cli.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dtype_cli.h"

const char cli_dtype_help[] =
	"  --dtype fp16|bf16|fp32\n"
	"                      after the passes, compute in float16 (bfloat16) with the\n"
	"                      inputs and outputs still float32 (Casts at the boundary):\n"
	"                      float weights become half. Nodes stay float32 where ONNX's\n"
	"                      types admit no half at the model's opset, around subgraphs\n"
	"                      and quantized parts, and where measured: the float32 model\n"
	"                      is run on 2 input sets (--input; random otherwise; the same\n"
	"                      with and without --check N, which then checks the result on\n"
	"                      N sets) and each node alone in half on its\n"
	"                      values; one that overflows or is off by more than 1e-2\n"
	"                      relative stays float32, then more while the outputs are over\n"
	"                      the tolerance (--rtol, default 1e-2; --atol). Kept nodes\n"
	"                      read their weights stored in half where the outputs pass\n"
	"                      with it. Each kept node and why is printed on stderr, then\n"
	"                      how many converted models were checked (\"N rounds\") and\n"
	"                      the check of the final one. Example: --dtype fp16\n"
	"                      fp32: a float16 or bfloat16 model back to float32 compute\n"
	"                      (half weights and Casts to half inside become float; inputs\n"
	"                      and outputs keep their types, as fp16 keeps them float32),\n"
	"                      then checked against the model as given (--rtol, --atol)\n"
	"  --keep-fp32 NODE    keep node NODE float32 too (repeatable)\n"
	"  --no-keep-measure   convert every node the types admit, without measuring\n";

int cli_dtype_arg(int argc, char **argv, int *i, cli_dtype_args *a, const char *cmd)
{
	const char *arg = argv[*i];
	if (!strcmp(arg, "--no-keep-measure")) {
		a->no_measure = 1;
		return 1;
	}
	if (strcmp(arg, "--dtype") && strcmp(arg, "--keep-fp32"))
		return 0;
	if (*i + 1 >= argc)
		return cli_usage_error(cmd, "%s needs a value", arg);
	const char *val = argv[++*i];
	if (!strcmp(arg, "--keep-fp32")) {
		if (a->nkeep == CLI_MAX_KEEP)
			return cli_usage_error(cmd, "too many --keep-fp32 options%s", "");
		a->keep[a->nkeep++] = val;
		return 1;
	}
	if (!strcmp(val, "fp16") || !strcmp(val, "float16"))
		a->dtype = OM_FLOAT16;
	else if (!strcmp(val, "bf16") || !strcmp(val, "bfloat16"))
		a->dtype = OM_BFLOAT16;
	else if (!strcmp(val, "fp32") || !strcmp(val, "float32") || !strcmp(val, "float"))
		a->dtype = OM_FLOAT;
	else
		return cli_usage_error(cmd, "--dtype wants fp16, bf16 or fp32, got '%s'", val);
	return 1;
}

static const char *reason_text(int32_t r, bool widen)
{
	switch (r) {
	case OM_KEEP_ASKED: return widen ? "asked (--keep-fp32 keeps a node's half type)"
					 : "asked (--keep-fp32)";
	case OM_KEEP_TYPE:
		return widen ? "not an ai.onnx op" : "no half type for it at the model's opset";
	case OM_KEEP_SUBGRAPH: return "runs subgraphs";
	case OM_KEEP_QDQ: return "quantize/dequantize";
	case OM_KEEP_UNTYPED: return "a value of unknown element type";
	case OM_KEEP_INFER: return "its op infers another output type in half";
	case OM_KEEP_OVERFLOW: return "overflow";
	case OM_KEEP_INPUT_RANGE: return "an input beyond the half type's range";
	case OM_KEEP_ERROR: return "over the node tolerance";
	case OM_KEEP_RUN: return "omopt cannot run it in half";
	case OM_KEEP_OUTPUTS: return "kept so that the outputs pass";
	case OM_KEEP_WEIGHTS: return "its weights in half alone move the outputs too far";
	default: return "?";
	}
}

int cli_dtype_convert(om_model *m, const cli_dtype_args *a, const cli_check_args *c,
		      cli_progress *prog)
{
	om_dtype_options o = {.dtype = a->dtype, .check = c->opt, .no_measure = a->no_measure,
			      .keep = a->nkeep ? a->keep : NULL};
	/* The keep-list is measured, and the rounds checked, on om_convert_dtype's default input
	 * sets whatever --check N says: more sets (with other dims each) found more nodes over
	 * the node tolerance, so --check used to change which nodes stay float32. --check N
	 * checks the converted model on its N sets afterwards (cmd_simplify's check). */
	o.check.runs = 0;
	o.check.progress = cli_progress_report;
	o.check.progress_user = prog;
	om_dtype_report rep;
	om_status st = {0};
	om_kind k = om_convert_dtype(m, &o, &rep, &st);
	cli_progress_end(prog);
	if (k) {
		om_dtype_report_free(&rep);
		return cmd_fail(&st);
	}
	const bool widen = a->dtype == OM_FLOAT;
	const char *name = widen ? "float32" : a->dtype == OM_FLOAT16 ? "float16" : "bfloat16";
	const char *kept = widen ? "its half type" : "float32";
	int stored = 0;
	for (int i = 0; i < rep.nkept; i++) {
		const om_dtype_kept *kp = &rep.kept[i];
		fprintf(stderr, "kept in %s: %s (%s): %s", kept,
			kp->node[0] ? kp->node : "(unnamed)", kp->op,
			reason_text(kp->reason, widen));
		if (kp->reason == OM_KEEP_OVERFLOW || kp->reason == OM_KEEP_INPUT_RANGE)
			fprintf(stderr, " (%s)", kp->detail);
		else if (kp->reason == OM_KEEP_RUN)
			fprintf(stderr, ": %s", kp->detail);
		if ((kp->reason == OM_KEEP_ERROR || kp->reason == OM_KEEP_OUTPUTS) &&
		    isfinite(kp->max_rel))
			fprintf(stderr, " (max rel diff %.3g)", kp->max_rel);
		if (kp->weights_half)
			fprintf(stderr, "; weights stored in %s", name);
		fprintf(stderr, "\n");
		stored += kp->weights_half;
	}
	if (rep.unchanged)
		printf("dtype: the %s model would be larger than the float32 one: not converted\n",
		       name);
	printf("dtype: %d nodes in %s, %d kept in %s", rep.converted, name, rep.nkept, kept);
	if (stored)
		printf(" (%d of them on weights stored in %s)", stored, name);
	if (rep.clamped)
		printf(", %lld weight elements clamped to its range", (long long)rep.clamped);
	printf("\n");
	int rc = 0;
	if (rep.check.runs) {
		if (widen)
			printf("dtype: float32 against the model as given, on %d input set%s:\n",
			       rep.check.runs, rep.check.runs == 1 ? "" : "s");
		else
			printf("dtype: %s against the float32 model, %d round%s (the keep-list "
			       "measured on %d input set%s%s):\n", name, rep.rounds,
			       rep.rounds == 1 ? "" : "s", rep.check.runs,
			       rep.check.runs == 1 ? "" : "s",
			       c->opt.runs && c->opt.runs != rep.check.runs ? "; --check runs after"
									      : "");
		cli_print_check(stdout, &rep.check);
		rc = rep.check.passed ? 0 : CMD_CHECK_FAILED;
	}
	om_dtype_report_free(&rep);
	return rc;
}
