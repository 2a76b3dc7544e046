/* The library's version (bcl_version, include/ballcl/ballcl.h). */
#include "ballcl/ballcl.h"

const char *bcl_version(void)
{
    return BALLCL_VERSION;
}
