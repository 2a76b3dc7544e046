/* State files and pictures, internal side. */
#ifndef BALLCL_FILES_H
#define BALLCL_FILES_H

#include "ballcl/ballcl.h"

/* Renders the (x, y) of n balls as an RGB PNG in memory: the box outlined,
 * each ball a dot, colour darker where more balls share a pixel (log scale);
 * non-finite balls are left out. y grows downwards, as on a screen. *png is
 * malloc'ed; the caller frees it. */
int bcl_snapshot_encode(const float *state, size_t n, const bcl_snapshot_opts *o, void **png,
                        size_t *len, bcl_error *e);

#endif
