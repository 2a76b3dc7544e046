/* State files and pictures, internal side. */
#ifndef BALLCL_FILES_H
#define BALLCL_FILES_H

#include "ballcl/ballcl.h"

/* ---- what tools/ and the tests use beside the installed header ---------- */

/* ---- state files and pictures ------------------------------------------- */

/* Reads an (N, 4) little-endian float32 C-order .npy v1.0 file. *state is
 * malloc'ed; the caller frees it. Every header defect and every non-finite
 * value is an input error naming the file. */
int bcl_npy_read(const char *path, float **state, size_t *n, bcl_error *e);
/* The pieces of a state file for those who read and write it in slices
 * (an MPI run, each rank its own balls): the header of path checked as
 * bcl_npy_read checks it (and the file's size against the shape), giving
 * the ball count and the byte offset of the data, ball i at offset + 16 i;
 * the finite-value check of bcl_npy_read for balls [first, first + n)
 * held in state; and the header of a state file of n balls, copied
 * into out when size allows, its length returned either way. */
int bcl_npy_read_header(const char *path, size_t *n, uint64_t *data_offset, bcl_error *e);
int bcl_npy_check_finite(const char *path, const float *state, size_t n, size_t first,
                         bcl_error *e);
size_t bcl_npy_header(size_t n, unsigned char *out, size_t size);

/* The outputs of one command (docs/RELIABILITY.md, "Outputs"): each is
 * checked and gets its temporary file in its folder before any work
 * (bcl_outputs_add), the data goes to the temporaries (bcl_outputs_write,
 * bcl_npy_write_to), and bcl_outputs_commit replaces every destination or
 * none. An existing destination must be a regular file; a symbolic link is
 * followed and its target replaced. The temporaries are removed on any
 * failure, by bcl_outputs_discard, and on SIGINT, SIGTERM and SIGHUP once a
 * program called bcl_cleanup_install. The set, and every path given to it,
 * must outlive the commit or discard. */
#define BCL_OUTPUTS_MAX 4
typedef struct bcl_output {
    const char *path; /* as given */
    const char *what; /* the option, for messages ("--output"); may be NULL */
    char *target;     /* the file replaced: path, or a symbolic link's target */
    char *tmp;        /* the temporary beside target */
    int fd;           /* open on tmp until the commit */
    int slot;         /* in the signal clean-up registry, -1 when none */
} bcl_output;
typedef struct bcl_outputs {
    bcl_output out[BCL_OUTPUTS_MAX];
    size_t count;
} bcl_outputs;

/* Checks path as the next output (index count) and creates its temporary:
 * BCL_EXIT_INPUT naming what and path when it cannot be written. */
int bcl_outputs_add(bcl_outputs *s, const char *path, const char *what, bcl_error *e);
/* Appends len bytes to output i's temporary. */
int bcl_outputs_write(bcl_outputs *s, size_t i, const void *data, size_t len, bcl_error *e);
/* Flushes every temporary, then replaces every destination, or none (a
 * failed rename is undone). The set is empty afterwards, either way. */
int bcl_outputs_commit(bcl_outputs *s, bcl_error *e);
/* Removes every temporary; the destinations are untouched. Idempotent. */
void bcl_outputs_discard(bcl_outputs *s);
/* The end of a set whose writes returned rc: the commit when rc is BCL_OK,
 * else the discard and rc. */
int bcl_outputs_end(bcl_outputs *s, int rc, bcl_error *e);
/* Writes n balls as a .npy file into output i of s. */
int bcl_npy_write_to(bcl_outputs *s, size_t i, const float *state, size_t n, bcl_error *e);

#define BCL_SNAPSHOT_MAX_SIDE 4096

typedef struct bcl_snapshot_opts {
    unsigned width, height; /* pixels; 0 and 0: the longer side 800, the other by aspect */
    bool has_box;           /* box is the model's box; else the balls' bounding box */
    float box[4];           /* x0, y0, x1, y1 */
} bcl_snapshot_opts;

/* A PNG picture of the (x, y) of n balls into output i of an output set
 * (bcl_outputs_add): the box outlined, each ball a dot, darker where more
 * balls share a pixel. */
int bcl_snapshot_write_to(bcl_outputs *s, size_t i, const float *state, size_t n,
                          const bcl_snapshot_opts *o, bcl_error *e);
/* Parses "WxH" (each 16 to BCL_SNAPSHOT_MAX_SIDE) for the option `what`. */
int bcl_snapshot_size_parse(const char *text, const char *what, unsigned *w, unsigned *h,
                            bcl_error *e);

/* ---- internal ------------------------------------------------------------ */

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
