/* status.h — setting an om_status in the tools (status.c): the library's own om_error is
 * internal; the tools see only include/omopt.h. */
#ifndef OM_TOOLS_STATUS_H
#define OM_TOOLS_STATUS_H

#include "omopt.h"

/** Sets *st to kind with the message (no node); returns kind. */
om_kind cmd_error(om_status *st, om_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
