/* Errors, fault injection and number parsing: what every part of the
 * library uses (the public side is in ballcl/ballcl.h). */
#ifndef BALLCL_UTIL_H
#define BALLCL_UTIL_H

#include "ballcl/ballcl.h"

/* Attaches a copy of text (e.g. a build log) to an error that is already set. */
void bcl_error_set_detail(bcl_error *e, const char *text);
/* Records the failed OpenCL call (its function name, without any bracketed
 * query) and status name in e (bcl_cl_fail does it). */
void bcl_error_set_cl(bcl_error *e, const char *call, const char *status);

/* Parses a finite float for the option `what`: BCL_OK, or BCL_EXIT_INPUT
 * with a message naming `what`. */
int bcl_parse_float(const char *text, const char *what, float *out, bcl_error *e);

/* OpenCL status names (src/util/status_names.c; a cl_int is an int):
 * "CL_OUT_OF_RESOURCES", or "CL_UNKNOWN_ERROR(-n)" in a per-thread buffer. */
const char *bcl_cl_status_name(int status);
/* "CL_BAR (hint)", or the name alone where there is no hint, per thread. */
const char *bcl_cl_status_text(int status);
/* Parses a status name back to its value; false if unknown. */
bool bcl_cl_status_parse(const char *name, int *out);

/* SHA-256 of data, and of parts concatenated (libmd; it cannot fail). */
int bcl_sha256(const void *data, size_t len, unsigned char out[32], bcl_error *e);
int bcl_sha256_parts(const void *const *parts, const size_t *lens, size_t count,
                     unsigned char out[32], bcl_error *e);

/* Fault injection (src/util/fault.c): the status the call `name` fails
 * with, or 0 to go on. */
int bcl_fault_take(const char *name);
/* The device (its position in the run's list) this thread works for, for
 * "name:n[:STATUS]@D"; -1, the default: none. */
void bcl_fault_device(int index);
/* A run over count devices starts: an "@D" beyond them would never fire
 * (a test passing without its fault), so it aborts, as a bad value does. */
void bcl_fault_devices(size_t count);

/* The smallest memory.max (v2, also under fs/unified) or
 * memory.limit_in_bytes (v1) of the cgroups in proc_cgroup (a
 * /proc/<pid>/cgroup) and their ancestors under fs; 0 when none. */
uint64_t bcl_cgroup_memory_limit(const char *proc_cgroup, const char *fs);

/* The one host-memory check: whether copies states of n balls fit in
 * bcl_host_memory_bytes. BCL_OK, or BCL_EXIT_INPUT starting with what. */
int bcl_host_memory_fit(uint64_t n, unsigned copies, const char *what, bcl_error *e);

/* bcl_read_file's answer for neither a regular file nor a folder. */
#define BCL_READ_NOT_REGULAR (-1)

/* The whole regular file at path into *out (malloc'ed, NUL after the last
 * byte, not in *len): 0 or an errno value. Refused before any read: a
 * folder (EISDIR), another special file (BCL_READ_NOT_REGULAR), a file above
 * limit (EFBIG; also one that proves larger, as /proc files say 0). *opened
 * (optional): whether it opened, to tell "cannot open" from "cannot read".
 * Fault point "read" after the open. */
int bcl_read_file(const char *path, uint64_t limit, char **out, size_t *len, bool *opened);
/* bcl_read_file of a file the caller opened (and checked, e.g. its owner),
 * without the fault point; fd stays open. */
int bcl_read_fd(int fd, uint64_t limit, char **out, size_t *len);
/* strerror, with words for BCL_READ_NOT_REGULAR. */
const char *bcl_read_error(int err);
/* Lists folder dir: take fills a row of row_size bytes per name it accepts
 * (false skips it); *rows, malloc'ed, sorted by cmp. A missing folder is an
 * empty list, an unreadable one BCL_EXIT_INPUT "cannot read <what> '<dir>'". */
typedef bool (*bcl_list_take)(const char *dir, const char *name, void *row);
int bcl_list_dir(const char *dir, const char *what, size_t row_size, bcl_list_take take,
                 int (*cmp)(const void *, const void *), void **rows, size_t *count, bcl_error *e);

/* ---- what tools/ and the tests use beside the installed header ---------- */

/* Sets the error (the first error wins) and returns its code. */
int bcl_fail(bcl_error *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Writes why a check failed into why (size bytes) and returns false. */
bool bcl_why(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* in to out (size bytes, NUL-terminated) for a terminal: control characters
 * (C0, DEL, C1, bidirectional) and bytes that are no UTF-8 as \xNN,
 * printable UTF-8 kept, never half a character. bcl_fail does it to every
 * message. Returns the length written. */
size_t bcl_escape(const char *in, char *out, size_t size);
/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF; p NUL-terminated),
 * or 0 when the byte at p does not start one. */
size_t bcl_utf8_length(const unsigned char *p);

/* Parses a whole decimal number in [min, max] for the option `what`:
 * BCL_OK, or BCL_EXIT_INPUT with a message naming `what`. */
int bcl_parse_u64(const char *text, const char *what, uint64_t min, uint64_t max, uint64_t *out,
                  bcl_error *e);

#endif
