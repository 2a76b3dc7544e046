/*
 * How much memory this process may use on the host: what every size check
 * that counts host copies of a state compares with (bcl_memory_fit, the
 * bound on a state file read whole). One place, so that a tighter limit
 * (a container's) is learnt once for all of them.
 */
#include "util/util.h"

#include <unistd.h>

uint64_t bcl_host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}
