/* Building a model's program: from source or from the binary cache. */
#ifndef BALLCL_PROGRAM_H
#define BALLCL_PROGRAM_H

#include "ocl/ocl.h"
#include "cache/cache.h"

/* Builds source for dev in ctx. On a build failure the device's build log
 * is attached to e (detail) and the code is BCL_EXIT_RUNTIME. */
int bcl_program_from_source(cl_context ctx, const bcl_device_info *dev, const char *src, size_t len,
                            const char *options, cl_program *out, bcl_error *e);

/* Contract: returns a built program for source, through the binary cache
 * (in cache_dir, an existing folder, or bcl_cache_dir's when NULL) when
 * use_cache is set, and fills rep (hit, time, note; warning when the
 * cache folder is unusable, which is no error). On a miss with a writable
 * folder, slot->pending is set: bcl_program_cache_store writes the entry
 * later. Fails only when building from source fails (the build log is then
 * attached to e). source_name labels the entry ("seed.cl"). */
int bcl_program_get(cl_context ctx, const bcl_device_info *dev, const char *source_name,
                    const char *src, size_t len, bool use_cache, const char *cache_dir,
                    cl_program *out, bcl_build_report *rep, bcl_cache_slot *slot, bcl_error *e);

/* Contract: writes prog's binary as the entry slot describes, if
 * slot->pending (then clears it). Never fails the caller: trouble goes into
 * rep->warning when rep is non-NULL; rep->store_ms and rep->cache_stored
 * are set. */
void bcl_program_cache_store(cl_program prog, const bcl_device_info *dev, bcl_cache_slot *slot,
                             bcl_build_report *rep);

/* False, with the reason in why, when bin cannot be a program binary of
 * dev's driver, for drivers that crash on a foreign one instead of
 * refusing it (rusticl 22.3; src/ocl/binary_format.c). True otherwise. */
bool bcl_binary_plausible(const bcl_device_info *dev, const unsigned char *bin, size_t len,
                          char *why, size_t size);

/* Monotonic clock in milliseconds. */
double bcl_now_ms(void);

#endif
