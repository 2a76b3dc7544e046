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

/* "a FIFO", "a character device", ... for a st_mode, for messages. */
const char *bcl_file_type_name(unsigned mode);
/* Opens path for reading only if it is a regular file, without ever
 * blocking (O_NONBLOCK: a FIFO would wait for a writer) and, with
 * nofollow, not through a symbolic link (src/files/open_file.c). Returns
 * the descriptor; -1 with errno set when open or fstat fails; -2 when the
 * file is not a regular file, its type in *mode (optional). */
int bcl_open_regular(const char *path, bool nofollow, unsigned *mode);

/* One-file forms of the output set (include/ballcl/ballcl.h, "outputs"):
 * each writes path atomically (a temporary file in the same folder, fsync,
 * rename) as an output set of one. */
int bcl_npy_write(const char *path, const float *state, size_t n, bcl_error *e);
int bcl_write_file_atomic(const char *path, const void *data, size_t len, bcl_error *e);
int bcl_snapshot_write(const char *path, const float *state, size_t n, const bcl_snapshot_opts *o,
                       bcl_error *e);

#endif
