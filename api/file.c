/* file.c — om_file_write and om_free (include/omopt.h): the library's atomic output
 * (onnx/files.c) and its allocator, for callers of the public API. */
#include <stdlib.h>

#include "files.h"

om_kind om_file_write(const char *path, const void *data, size_t len, om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	om_out_file o = {0};
	om_kind k = om_out_open_stream(&o, path, st);
	if (!k && len && fwrite(data, 1, len, o.f) != len)
		k = om_error(st, OM_ERR_IO, NULL, "cannot write '%s'", path);
	if (!k)
		k = om_out_commit(&o, st);
	om_out_discard(&o);
	return k;
}

void om_free(void *p)
{
	free(p);
}
