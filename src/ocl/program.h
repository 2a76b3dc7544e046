/* Building a model's program: from source or from the binary cache. */
#ifndef BALLCL_PROGRAM_H
#define BALLCL_PROGRAM_H

#include "ocl/ocl.h"
#include "cache/cache.h"

/* Builds source for dev in ctx. On a build failure the device's build log
 * is attached to e (detail) and the code is BCL_EXIT_RUNTIME. */
int bcl_program_from_source(cl_context ctx, const bcl_device_info *dev, const char *src, size_t len,
                            const char *options, cl_program *out, bcl_error *e);

/* Contract: a built program for source, through the binary cache (in
 * cache_dir, or bcl_cache_dir's when NULL) when use_cache; rep says how (a
 * cache trouble is a warning, no error). A miss in a writable folder sets
 * slot->pending for bcl_program_cache_store. Fails only as the build from
 * source fails. source_name labels the entry ("seed.cl"). */
int bcl_program_get(cl_context ctx, const bcl_device_info *dev, const char *source_name,
                    const char *src, size_t len, bool use_cache, const char *cache_dir,
                    cl_program *out, bcl_build_report *rep, bcl_cache_slot *slot, bcl_error *e);

/* Contract: writes prog's binary as slot's entry if slot->pending (then
 * cleared). Never fails: trouble is rep->warning (rep may be NULL). */
void bcl_program_cache_store(cl_program prog, const bcl_device_info *dev, bcl_cache_slot *slot,
                             bcl_build_report *rep);

/* False, with why, when bin cannot be dev's driver's binary, for drivers
 * that crash on a foreign one (src/ocl/binary_format.c). */
bool bcl_binary_plausible(const bcl_device_info *dev, const unsigned char *bin, size_t len,
                          char *why, size_t size);

/* Monotonic clock in milliseconds. */
double bcl_now_ms(void);

#endif
