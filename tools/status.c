/* status.c — cmd_error (status.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "status.h"

om_kind cmd_error(om_status *st, om_kind kind, const char *fmt, ...)
{
	memset(st, 0, sizeof *st);
	st->kind = kind;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->msg, sizeof st->msg, fmt, ap);
	va_end(ap);
	return kind;
}
