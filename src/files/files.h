/* State files and pictures, internal side. */
#ifndef BALLCL_FILES_H
#define BALLCL_FILES_H

#include "ballcl/ballcl.h"

/* Reads an (N, 4) '<f4' C-order .npy 1.0 file into a malloc'ed *state;
 * every defect and non-finite value is an input error naming the file. */
int bcl_npy_read(const char *path, float **state, size_t *n, bcl_error *e);
/* For a state in slices (MPI ranks): path's header checked as bcl_npy_read
 * does (ball i at data_offset + 16 i); its finite check of balls [first,
 * first + n); the header of n balls into out (if it fits), its length. */
int bcl_npy_read_header(const char *path, size_t *n, uint64_t *data_offset, bcl_error *e);
int bcl_npy_check_finite(const char *path, const float *state, size_t n, size_t first,
                         bcl_error *e);
size_t bcl_npy_header(size_t n, unsigned char *out, size_t size);

/* The outputs of one command (src/files/atomic_file.c), all or none. The
 * set, and every path given to it, must outlive the commit or discard. */
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
/* The end of a set whose writes returned rc: the commit, or the discard and rc. */
int bcl_outputs_end(bcl_outputs *s, int rc, bcl_error *e);
/* Writes n balls as a .npy file into output i of s. */
int bcl_npy_write_to(bcl_outputs *s, size_t i, const float *state, size_t n, bcl_error *e);

#define BCL_SNAPSHOT_MIN_SIDE 16
#define BCL_SNAPSHOT_MAX_SIDE 4096

typedef struct bcl_snapshot_opts {
    unsigned width, height; /* pixels; 0 and 0: the longer side 800, the other by aspect */
    bool has_box;           /* box is the model's box; else the balls' bounding box */
    float box[4];           /* x0, y0, x1, y1 */
} bcl_snapshot_opts;

/* bcl_snapshot_encode's PNG into output i of s. */
int bcl_snapshot_write_to(bcl_outputs *s, size_t i, const float *state, size_t n,
                          const bcl_snapshot_opts *o, bcl_error *e);
/* Parses "WxH" (each 16 to BCL_SNAPSHOT_MAX_SIDE) for the option `what`. */
int bcl_snapshot_size_parse(const char *text, const char *what, unsigned *w, unsigned *h,
                            bcl_error *e);

/* The (x, y) of n balls as an RGB PNG in a malloc'ed *png: the box outlined,
 * each ball a dot, darker where more share a pixel; y grows downwards. */
int bcl_snapshot_encode(const float *state, size_t n, const bcl_snapshot_opts *o, void **png,
                        size_t *len, bcl_error *e);

/* "a FIFO", "a character device", ... for a st_mode, for messages. */
const char *bcl_file_type_name(unsigned mode);
/* Opens path to read only if it is a regular file, never blocking, with
 * nofollow not through a link: the fd; -1 with errno; -2 when not a regular
 * file, its type in *mode (optional). */
int bcl_open_regular(const char *path, bool nofollow, unsigned *mode);

/* Each writes path atomically, as an output set of one. */
int bcl_npy_write(const char *path, const float *state, size_t n, bcl_error *e);
int bcl_write_file_atomic(const char *path, const void *data, size_t len, bcl_error *e);
int bcl_snapshot_write(const char *path, const float *state, size_t n, const bcl_snapshot_opts *o,
                       bcl_error *e);

#endif
