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

/* OpenCL status names and hints (src/util/status_names.c; a cl_int is an
 * int). The name of a status ("CL_OUT_OF_RESOURCES"), or
 * "CL_UNKNOWN_ERROR(-n)" written into a static per-thread buffer for
 * unknown codes. */
const char *bcl_cl_status_name(int status);
/* A short hint for a status (may be ""). */
const char *bcl_cl_status_hint(int status);
/* Parses a status name back to its value; false if unknown. */
bool bcl_cl_status_parse(const char *name, int *out);

/* SHA-256 (src/util/sha256.c) of data, and of parts one after the other
 * (the digest of their concatenation), through libmd; it cannot fail. */
int bcl_sha256(const void *data, size_t len, unsigned char out[32], bcl_error *e);
int bcl_sha256_parts(const void *const *parts, const size_t *lens, size_t count,
                     unsigned char out[32], bcl_error *e);

/* Fault injection: BALLCL_FAULT="name:n[:STATUS]" makes the n-th call (from
 * 1) of the OpenCL or I/O function `name` fail with STATUS (default
 * CL_OUT_OF_RESOURCES for OpenCL calls, EIO for I/O). Returns the status
 * to fail with, or 0 to go on. */
int bcl_fault_take(const char *name);
/* "name:n[:STATUS]@D" counts and fails only the calls made for device D
 * (its position, from 0, in a run's device list): a thread working for a
 * device says which with bcl_fault_device (-1, the default: none). */
void bcl_fault_device(int index);
/* A run over count devices starts: a BALLCL_FAULT "@D" naming a device
 * beyond them would never fire, and a fault test would pass without its
 * fault; it aborts, naming the device, as a malformed value does. */
void bcl_fault_devices(size_t count);

/* The smallest memory limit of the cgroups of the process described by
 * proc_cgroup (a /proc/<pid>/cgroup file), and of their ancestors, under
 * the cgroup file system at fs: memory.max (v2, also under fs/unified) and
 * memory/.../memory.limit_in_bytes (v1). 0 when there is none. bcl_host_memory_bytes
 * takes the lower of it and the machine's memory (src/util/host_memory.c). */
uint64_t bcl_cgroup_memory_limit(const char *proc_cgroup, const char *fs);

/* The one host-memory check (src/util/host_memory.c): whether copies
 * states of n balls fit in what this process may use
 * (bcl_host_memory_bytes). BCL_OK, or BCL_EXIT_INPUT with a message that
 * starts with what and names the balls, the MiB, the copies and the limit. */
int bcl_host_memory_fit(uint64_t n, unsigned copies, const char *what, bcl_error *e);

/* What bcl_read_file returns for a path that is neither a regular file
 * nor a folder (a pipe, a device, a socket). */
#define BCL_READ_NOT_REGULAR (-1)

/* Reads the whole regular file at path into *out (malloc'ed, with a NUL
 * after the last byte; *len excludes it). Refused before anything is read:
 * a folder (EISDIR), any other file that is not regular
 * (BCL_READ_NOT_REGULAR), a file larger than limit bytes (EFBIG). Returns 0
 * or an errno value. The file is read to its end, whatever size fstat
 * gave (/proc files say 0), and one that proves larger than limit is EFBIG
 * too. *opened (optional) says whether the path could be
 * opened, for messages that tell "cannot open" from "cannot read". The
 * fault point "read" fails it after the open. */
int bcl_read_file(const char *path, uint64_t limit, char **out, size_t *len, bool *opened);
/* bcl_read_file for a file the caller opened (and checked, e.g. its owner,
 * from fstat of the same fd): the same refusals and bound, no fault point
 * (the callers' own open is theirs). Does not close fd. */
int bcl_read_fd(int fd, uint64_t limit, char **out, size_t *len);
/* strerror, with words for BCL_READ_NOT_REGULAR. */
const char *bcl_read_error(int err);
/* Lists folder dir: take fills a row (row_size bytes) for each name it
 * accepts and returns false to skip one; the rows, sorted by cmp, are a
 * malloc'ed *rows. A missing folder is an empty list; one that cannot be
 * read is BCL_EXIT_INPUT "cannot read <what> '<dir>': <why>". */
typedef bool (*bcl_list_take)(const char *dir, const char *name, void *row);
int bcl_list_dir(const char *dir, const char *what, size_t row_size, bcl_list_take take,
                 int (*cmp)(const void *, const void *), void **rows, size_t *count, bcl_error *e);

/* ---- what tools/ and the tests use beside the installed header ---------- */

/* Sets the error (the first error wins) and returns its code. */
int bcl_fail(bcl_error *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Writes why a check failed into why (size bytes) and returns false. */
bool bcl_why(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Copies in to out (size bytes, NUL-terminated) for a terminal: each
 * control character (C0 below 0x20, DEL 0x7f, and the C1 controls U+0080
 * to U+009F) and each byte that is not part of well-formed UTF-8 is written
 * as \xNN, byte by byte; printable UTF-8 is kept. Text from users, files
 * and drivers shown on a terminal goes through it (bcl_fail does it to
 * every message). Never cuts a character in half. Returns the length
 * written. */
size_t bcl_escape(const char *in, char *out, size_t size);

/* Parses a whole decimal number in [min, max] for the option `what`:
 * BCL_OK, or BCL_EXIT_INPUT with a message naming `what`. */
int bcl_parse_u64(const char *text, const char *what, uint64_t min, uint64_t max, uint64_t *out,
                  bcl_error *e);

/* bcl_host_memory_bytes is public (ballcl/ballcl.h). */

#endif
