/* version.c — om_version (include/omopt.h). */
#include "omopt.h"

#define OM_STR2(x) #x
#define OM_STR(x) OM_STR2(x)

const char *om_version(void)
{
	return OM_STR(OMOPT_VERSION_MAJOR) "." OM_STR(OMOPT_VERSION_MINOR) "." OM_STR(
		OMOPT_VERSION_PATCH);
}
