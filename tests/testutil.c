#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

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
