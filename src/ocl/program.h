/* Building a model's program: from source or from the binary cache. */
#ifndef BALLCL_PROGRAM_H
#define BALLCL_PROGRAM_H

#include "ocl/ocl.h"
#include "cache/cache.h"

/* Builds source for dev in ctx. On a build failure the device's build log
 * is attached to e (detail) and the code is BCL_EXIT_RUNTIME. */
int bcl_program_from_source(cl_context ctx, const bcl_device_info *dev, const char *src, size_t len,
                            const char *options, cl_program *out, bcl_error *e);

/* Contract: model m's built program for src (bcl_model_program_source,
 * wide), through the binary cache (in cache_dir, or bcl_cache_dir's when
 * NULL) when use_cache; rep says how (a cache trouble is a warning, no
 * error). When src does not build and m is a model file, the program
 * without the wide variants is built in its stead (its update does not
 * compile on vectors: rep->note says so) and cached under src's key, so
 * the next run finds it. A miss in a writable folder sets slot->pending
 * for bcl_program_cache_store. Fails only as the build from source fails:
 * a model file's as BCL_EXIT_INPUT, with the compiler's messages. */
int bcl_program_get(cl_context ctx, const bcl_device_info *dev, const bcl_model *m, const char *src,
                    size_t len, bool use_cache, const char *cache_dir, cl_program *out,
                    bcl_build_report *rep, bcl_cache_slot *slot, bcl_error *e);

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
