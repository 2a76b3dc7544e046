/* Building a model's program: from source, or (when it lands) the cache. */
#ifndef BALLCL_PROGRAM_H
#define BALLCL_PROGRAM_H

#include "ballcl/ballcl.h"

/* Builds source for dev in ctx. On a build failure the device's build log
 * is attached to e (detail) and the code is BCL_EXIT_RUNTIME. */
int bcl_program_from_source(cl_context ctx, const bcl_device_info *dev, const char *src,
                            size_t len, const char *options, cl_program *out, bcl_error *e);

/* Returns a built program for source, through the binary cache when
 * use_cache is set; fills rep (hit, time, note). */
int bcl_program_get(cl_context ctx, const bcl_device_info *dev, const char *src, size_t len,
                    bool use_cache, cl_program *out, bcl_build_report *rep, bcl_error *e);

/* Monotonic clock in milliseconds. */
double bcl_now_ms(void);

#endif
