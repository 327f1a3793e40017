/* replay.c — main() for the harnesses when they are not built with libFuzzer: runs
 * LLVMFuzzerTestOneInput once on each file named, and on each file in each folder named
 * (the committed corpus, reproducers included, as a test of the plain and sanitizer builds). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return 1;
	}
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
		n += got;
		if (n == cap) {
			uint8_t *bigger = realloc(buf, cap *= 2);
			if (!bigger)
				free(buf);
			buf = bigger;
		}
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "replay: out of memory reading %s\n", path);
		return 1;
	}
	if (getenv("OMOPT_FUZZ_VERBOSE"))
		fprintf(stderr, "== %s\n", path);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	int files = 0, bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat sb;
		if (stat(argv[i], &sb) != 0) {
			fprintf(stderr, "replay: no such file or folder %s\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(sb.st_mode)) {
			bad += replay_file(argv[i]);
			files++;
			continue;
		}
		struct dirent **list;
		int n = scandir(argv[i], &list, NULL, by_name);
		if (n < 0) {
			fprintf(stderr, "replay: cannot read the folder %s\n", argv[i]);
			return 1;
		}
		for (int j = 0; j < n; j++) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", argv[i], list[j]->d_name);
			if (list[j]->d_name[0] != '.' && !stat(path, &sb) && S_ISREG(sb.st_mode)) {
				bad += replay_file(path);
				files++;
			}
			free(list[j]);
		}
		free(list);
	}
	printf("replayed %d files\n", files);
	return bad || files == 0;
}
