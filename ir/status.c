/* status.c — om_status: kind names, formatting, om_error, om_public_kind (status.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir.h"

const char *om_kind_name(om_kind kind)
{
	if (kind == OM_NEED_VALUE)
		return "NeedValue"; /* internal (status.h): only in the library's own messages */
	switch (kind) {
	case OM_OK: return "Ok";
	case OM_ERR_INVALID_MODEL: return "InvalidModel";
	case OM_ERR_INVALID_INPUT: return "InvalidInput";
	case OM_ERR_UNSUPPORTED: return "Unsupported";
	case OM_ERR_IO: return "Io";
	case OM_ERR_NOMEM: return "NoMemory";
	case OM_ERR_INTERNAL: return "Internal";
	}
	return "Unknown";
}

void om_status_format(const om_status *st, char *buf, size_t size)
{
	if (!size)
		return;
	if (!st) {
		buf[0] = 0;
		return;
	}
	if (st->node[0] || st->op[0])
		snprintf(buf, size, "%s: node '%s' (%s): %s", om_kind_name(st->kind), st->node,
			 st->op, st->msg);
	else
		snprintf(buf, size, "%s: %s", om_kind_name(st->kind), st->msg);
}

om_kind om_error(om_status *st, om_kind kind, const om_node *n, const char *fmt, ...)
{
	if (!st)
		return kind;
	st->kind = kind;
	snprintf(st->node, sizeof st->node, "%s", n && n->name ? n->name : "");
	snprintf(st->op, sizeof st->op, "%s", n && n->op ? n->op : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->msg, sizeof st->msg, fmt, ap);
	va_end(ap);
	return kind;
}

om_kind om_public_kind(om_status *st, om_kind rc)
{
	if (rc != OM_NEED_VALUE)
		return rc;
	char why[sizeof st->msg];
	snprintf(why, sizeof why, "%s", st && st->msg[0] ? st->msg : "no message");
	return om_error(st, OM_ERR_INTERNAL, NULL, "inference asked for a value at run time "
			"and reached the caller: %.400s", why);
}
