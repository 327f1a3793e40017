#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

const char *tu_shared_dir(void)
{
	const char *d = getenv("OMOPT_SHARED");
	struct stat sb;
	if (!d || stat(d, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return NULL;
	return d;
}

const char *tu_source_path(const char *rel)
{
	static char buf[4096];
	const char *src = getenv("OMOPT_SOURCE");
	snprintf(buf, sizeof buf, "%s/%s", src ? src : ".", rel);
	return buf;
}

int tu_tmpdir_make(char *buf, size_t size, const char *prefix)
{
	snprintf(buf, size, "/tmp/%sXXXXXX", prefix);
	return mkdtemp(buf) ? 0 : -1;
}

int tu_tmpdir_remove(const char *dir)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void read_back(const char *dir, const char *name, char *buf, size_t size)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	fclose(f);
}

int tu_run_omopt(const char *dir, const char *args, char *out, size_t nout, char *err,
		 size_t nerr)
{
	const char *b = getenv("OMOPT_BUILD");
	char cmd[16384];
	snprintf(cmd, sizeof cmd, "cd '%s' && '%s/tools/omopt' %s >.omopt_out 2>.omopt_err", dir,
		 b ? b : ".", args);
	int st = system(cmd);
	assert_true(st != -1 && WIFEXITED(st));
	read_back(dir, ".omopt_out", out, nout);
	read_back(dir, ".omopt_err", err, nerr);
	return WEXITSTATUS(st);
}

void tu_push_value(om_graph *g, om_value ***list, int32_t *n, om_value *v)
{
	om_value **na = om_arena_alloc(g->model->arena, sizeof *na * (size_t)(*n + 1));
	assert_non_null(na);
	if (*n)
		memcpy(na, *list, sizeof *na * (size_t)*n);
	na[(*n)++] = v;
	*list = na;
}
