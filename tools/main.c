/* main.c — `omopt COMMAND ...`: dispatch to the subcommands. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cmd.h"
#include "signals.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} cmds[] = {
	{"simplify", cmd_simplify, "fold shape chains and constants, drop dead nodes"},
	{"info", cmd_info, "inputs, outputs, opsets and op histogram of a model"},
	{"run", cmd_run, "run a model on inputs (.npy or TensorProto .pb)"},
	{"dot", cmd_dot, "draw a model or its plan with Graphviz"},
	{"compare", cmd_compare, "differences of every value two models share by name"},
};

int cmd_fail(const om_status *st)
{
	char buf[1024];
	om_status_format(st, buf, sizeof buf);
	fprintf(stderr, "omopt: %s\n", buf);
	return 1;
}

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "omopt %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n(omopt %s --help lists the options)\n", cmd);
	va_end(ap);
	return 2;
}

int cmd_parse_count(const char *s, int min, int max, int *out)
{
	char *end;
	errno = 0;
	const long v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

int cmd_parse_layout(const char *s, om_layout_choice *out)
{
	static const char *const names[] = {"auto", "blocked", "nhwc", "nchw"};
	for (int k = 0; k < 4; k++)
		if (!strcasecmp(s, names[k])) {
			*out = (om_layout_choice)k;
			return 0;
		}
	return -1;
}

const char *cmd_dir_input(const char *dir, int i, const char *name, char *pb, char *npy,
			  size_t size)
{
	struct stat sb;
	snprintf(pb, size, "%s/input_%d.pb", dir, i);
	snprintf(npy, size, "%s/%s.npy", dir, name);
	return stat(pb, &sb) && !stat(npy, &sb) ? npy : pb;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: omopt COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n`omopt COMMAND --help` describes each command.\n");
}

/* argv with every "--name=value" (before a lone "--") split into "--name" "value", as
 * getopt_long and Python's argparse take it: the '=' becomes the name's end (argv's strings
 * are the program's to modify). NULL when out of memory. */
static char **split_values(int argc, char **argv, int *n)
{
	char **v = calloc((size_t)argc * 2 + 1, sizeof *v);
	if (!v)
		return NULL;
	*n = 0;
	bool options = true;
	for (int i = 0; i < argc; i++) {
		char *a = argv[i], *eq = strchr(a, '=');
		if (!strcmp(a, "--"))
			options = false;
		v[(*n)++] = a;
		if (options && i > 0 && !strncmp(a, "--", 2) && eq && eq > a + 2) {
			*eq = 0;
			v[(*n)++] = eq + 1;
		}
	}
	return v;
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("omopt 0.1.0\n");
		return 0;
	}
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "omopt: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	cli_signals_install();
	int n;
	char **split = split_values(argc, argv, &n);
	if (!split) {
		fprintf(stderr, "omopt: out of memory\n");
		return 1;
	}
	const int rc = dispatch(n, split);
	free(split);
	return rc;
}
