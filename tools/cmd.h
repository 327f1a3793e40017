/* cmd.h — the omopt subcommands. Each returns the process exit code:
 * 0 success, 1 model or I/O error (message on stderr names the node), 2 usage error,
 * 3 (CMD_CHECK_FAILED) a check or comparison found values over their tolerance. */
#ifndef OM_CMD_H
#define OM_CMD_H

#include "omopt.h"
#include "status.h"

enum { CMD_CHECK_FAILED = 3 };

int cmd_simplify(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_dot(int argc, char **argv);

/** Prints "omopt: <Kind>: node '<name>' (<Op>): <message>" to stderr and returns 1. */
int cmd_fail(const om_status *st);

/** Prints "omopt <cmd>: <message>" and where the options are described ("omopt <cmd> --help")
 *  to stderr, and returns 2 (a usage error). */
int cmd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** The decimal integer s in [min, max] in *out: 0, or -1 when s is not one. */
int cmd_parse_count(const char *s, int min, int max, int *out);

/** The layout named s (auto, blocked, nhwc, nchw; any case) in *out: 0, or -1 when none. */
int cmd_parse_layout(const char *s, om_layout_choice *out);
/** The file of graph input i (named `name`) in an --input-dir folder: dir/input_<i>.pb
 *  (ONNX's test layout), or dir/NAME.npy when only that one exists. pb and npy (size bytes
 *  each) receive both paths, for messages; the one returned need not exist. */
const char *cmd_dir_input(const char *dir, int i, const char *name, char *pb, char *npy,
			  size_t size);

/** The passes of `level` (om_pass_level_id), one a line: name and what it does, for --help;
 *  returns buf (cut at size bytes). */
const char *cmd_pass_list(char *buf, size_t size, int level);

/** The layout names in order, for messages: "auto, blocked, nhwc or nchw". */
#define CMD_LAYOUTS "auto, blocked, nhwc or nchw"


#endif
