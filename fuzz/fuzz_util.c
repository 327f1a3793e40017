/* fuzz_util.c — the harnesses' scratch folder, file writes, PRNG and finding reports. */
#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

static char scratch[256];

static void remove_scratch(void)
{
	DIR *d = opendir(scratch);
	if (d) {
		char path[512];
		for (struct dirent *e; (e = readdir(d));) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(path, sizeof path, "%s/%s", scratch, e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(scratch);
}

const char *fz_dir(void)
{
	if (scratch[0])
		return scratch;
	/* /dev/shm when there is one: every input is written to a file by some harnesses */
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(scratch, sizeof scratch, "%s/omopt-fuzz-XXXXXX", base);
	if (!mkdtemp(scratch))
		fz_fail("cannot make a scratch folder under %s", base);
	atexit(remove_scratch);
	uint8_t w[FZ_WEIGHTS_BYTES];
	for (size_t i = 0; i < sizeof w; i++)
		w[i] = (uint8_t)(i * 7 + 3);
	if (!fz_write(FZ_WEIGHTS_NAME, w, sizeof w))
		fz_fail("cannot write %s/%s", scratch, FZ_WEIGHTS_NAME);
	return scratch;
}

const char *fz_write(const char *name, const uint8_t *data, size_t size)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s", fz_dir(), name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return NULL;
	bool ok = fwrite(data, 1, size, f) == size;
	return fclose(f) == 0 && ok ? path : NULL;
}

uint64_t fz_hash(const uint8_t *data, size_t size)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 0x100000001b3u;
	return h;
}

uint64_t fz_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

void fz_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("omopt fuzz finding: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

om_model *fz_load(const uint8_t *data, size_t size)
{
	om_model *m = NULL;
	om_status st = {0};
	om_kind k = om_model_load_memory(data, size, fz_dir(), &m, &st);
	fz_check_kind(k, &st, "om_model_load_memory");
	if ((k == OM_OK) != (m != NULL))
		fz_fail("om_model_load_memory returned %s with model %p", om_kind_name(k),
			(void *)m);
	return m;
}

void fz_check_kind(om_kind k, const om_status *st, const char *what)
{
	if (k != OM_ERR_INTERNAL && !getenv("OMOPT_FUZZ_VERBOSE"))
		return;
	char buf[1024] = "Ok";
	if (k)
		om_status_format(st, buf, sizeof buf);
	if (k == OM_ERR_INTERNAL)
		fz_fail("%s: %s", what, buf);
	fprintf(stderr, "%s: %s\n", what, buf);
}
