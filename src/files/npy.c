/*
 * State files as NumPy .npy version 1.0 (docs/DESIGN.md): dtype '<f4', C order,
 * shape (N, 4). Users prepare and inspect states with np.save / np.load, so
 * the reader accepts exactly what NumPy writes for such an array and rejects
 * everything else with a one-line message that says what was expected; the
 * writer produces the same bytes np.save would.
 *
 * Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
 *   "\x93NUMPY", major 1, minor 0, uint16 LE header length HLEN,
 *   HLEN bytes of a Python dict literal padded with spaces and ending in '\n',
 *   then the raw array data.
 */
#include "files/files.h"
#include "util/util.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The data is copied byte for byte between the file and float arrays, which is
 * only right where the host's float is IEEE binary32 stored little-endian
 * (x86-64 and ARM as configured by every mainstream OS). A big-endian port
 * would have to byte-swap here; fail the build rather than corrupt states. */
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c copies '<f4' data as-is and needs a little-endian host"
#endif
_Static_assert(sizeof(float) == 4 && FLT_RADIX == 2 && FLT_MANT_DIG == 24 && FLT_MAX_EXP == 128,
               "npy.c needs float to be IEEE 754 binary32");

#define NPY_MAGIC     "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_PREAMBLE  10 /* magic, major, minor, uint16 LE header length */
#define NPY_ALIGN     64 /* np.save aligns the data to this */
/* np.save leaves room to rewrite the shape in place with up to this many
 * digits; copying it makes our files byte-identical to NumPy's. */
#define NPY_GROWTH_DIGITS 21
#define BALL_FLOATS       4
#define BALL_BYTES        (BALL_FLOATS * sizeof(float))
#define EXPECT_DESCR      "expected '<f4' (float32, little-endian)"
#define MAX_DIMS_SHOWN    8

/* ---- reading the file ---------------------------------------------------- */

/* The preamble and the longest header a 1.0 file can have: all that is
 * read before the header has been checked. */
#define NPY_HEAD_MAX (NPY_PREAMBLE + 65535)

/* Opens path for reading if it is a regular file (bcl_open_regular: a FIFO
 * or a device is refused without blocking or reading) and gives its size.
 * The fault point "read" of every file read fails it after the open. */
static int open_state(const char *path, int *fd_out, uint64_t *size, bcl_error *e)
{
    unsigned mode = 0;
    int fd = bcl_open_regular(path, false, &mode);
    if (fd == -2 && S_ISDIR(mode))
        return bcl_fail(e, BCL_EXIT_INPUT, "'%s': is a folder: expected a .npy file", path);
    if (fd == -2)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "'%s': cannot read: it is %s, not a regular file: expected a .npy file",
                        path, bcl_file_type_name(mode));
    if (fd < 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "'%s': cannot open: %s", path, strerror(errno));
    struct stat st;
    int err = fstat(fd, &st) != 0 ? errno : bcl_fault_take("read");
    if (err) {
        close(fd);
        return bcl_fail(e, BCL_EXIT_INPUT, "'%s': cannot read: %s", path, strerror(err));
    }
    /* A size of 0 with bytes behind it: a file whose size the kernel does
     * not know (/proc, /sys). Not a state file, and not an empty one. */
    char probe;
    if (st.st_size == 0 && pread(fd, &probe, 1, 0) == 1) {
        close(fd);
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "'%s': the kernel reports no size for it (a /proc or /sys file), "
                        "not a .npy file: expected a .npy file",
                        path);
    }
    *fd_out = fd;
    *size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
    return BCL_OK;
}

/* Reads up to len bytes at offset; *got is what there was (a file may
 * shrink while it is read). Returns 0 or an errno value. */
static int read_at(int fd, void *buf, size_t len, uint64_t offset, size_t *got)
{
    size_t have = 0;
    while (have < len) {
        ssize_t r = pread(fd, (char *)buf + have, len - have, (off_t)(offset + have));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return errno;
        if (r == 0)
            break;
        have += (size_t)r;
    }
    *got = have;
    return 0;
}

static int check_header(const char *path, const unsigned char *buf, size_t len, size_t file_len,
                        uint64_t *balls_out, size_t *offset_out, bcl_error *e);

/* The header of an open state file, checked against the file's size
 * before any of the body is read: *balls and *offset of the data. */
static int read_head(const char *path, int fd, uint64_t size, uint64_t *balls, size_t *offset,
                     bcl_error *e)
{
    unsigned char *head = malloc(NPY_HEAD_MAX);
    if (!head)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "'%s': out of memory reading the header", path);
    size_t len = 0;
    size_t want = size < NPY_HEAD_MAX ? (size_t)size : NPY_HEAD_MAX;
    int err = read_at(fd, head, want, 0, &len);
    int rc = err ? bcl_fail(e, BCL_EXIT_INPUT, "'%s': cannot read: %s", path, strerror(err))
                 : check_header(path, head, len, size >= SIZE_MAX ? SIZE_MAX - 1 : (size_t)size,
                                balls, offset, e);
    free(head);
    return rc;
}

/* Opens path (open_state) and reads its header (read_head): *n balls at
 * *offset, and the open *fd, for the body, only on success; without fd
 * the file is closed. */
static int open_head(const char *path, int *fd, size_t *n, uint64_t *offset, bcl_error *e)
{
    uint64_t size = 0, balls = 0;
    size_t off = 0;
    int f = -1;
    int rc = open_state(path, &f, &size, e);
    if (rc)
        return rc;
    if ((rc = read_head(path, f, size, &balls, &off, e)) || !fd)
        close(f);
    else
        *fd = f;
    if (rc == BCL_OK) {
        *n = (size_t)balls; /* read_head checked balls * 16 against the file's size */
        *offset = off;
    }
    return rc;
}

/* ---- parsing the header dict --------------------------------------------- */

typedef struct cursor {
    const char *start, *p, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

/* Offset of the cursor in the file, for "at byte N" in messages. */
static size_t file_offset(const cursor *c)
{
    return NPY_PREAMBLE + (size_t)(c->p - c->start);
}

static int malformed(const char *path, const cursor *c, const char *expected, bcl_error *e)
{
    return bcl_fail(e, BCL_EXIT_INPUT, "'%s': malformed .npy header at byte %zu: expected %s", path,
                    file_offset(c), expected);
}

/* Copies s into out for a message: at most out_size - 1 characters, anything
 * but printable ASCII as '?', so the message stays one readable line. */
static void printable(char *out, size_t out_size, const char *s, size_t len)
{
    size_t i = 0;
    for (; i < len && i + 1 < out_size; i++)
        out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    out[i] = '\0';
}

/* Parses a Python string literal in single or double quotes into [*s, *s +
 * *len) (pointing into the header). Escapes never occur in what NumPy writes
 * for a plain dtype, so a backslash is refused rather than interpreted. */
static int parse_string(const char *path, cursor *c, const char **s, size_t *len, bcl_error *e)
{
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return malformed(path, c, "a quoted string", e);
    char quote = *c->p++;
    const char *begin = c->p;
    while (c->p < c->end && *c->p != quote) {
        if (*c->p == '\\' || *c->p == '\n')
            return malformed(path, c, "a plain string without escapes", e);
        c->p++;
    }
    if (c->p >= c->end)
        return malformed(path, c, "a closing quote", e);
    *s = begin;
    *len = (size_t)(c->p - begin);
    c->p++;
    return BCL_OK;
}

static bool str_is(const char *s, size_t len, const char *lit)
{
    return len == strlen(lit) && memcmp(s, lit, len) == 0;
}

/* Parses a Python identifier such as True or False. */
static void parse_word(cursor *c, const char **s, size_t *len)
{
    const char *begin = c->p;
    while (c->p < c->end && ((*c->p >= 'a' && *c->p <= 'z') || (*c->p >= 'A' && *c->p <= 'Z') ||
                             (*c->p >= '0' && *c->p <= '9') || *c->p == '_'))
        c->p++;
    *s = begin;
    *len = (size_t)(c->p - begin);
}

typedef struct shape {
    unsigned ndim;
    uint64_t dim[MAX_DIMS_SHOWN]; /* the first MAX_DIMS_SHOWN dimensions */
} shape;

/* Parses a tuple of non-negative Python ints: "()", "(5,)", "(5, 4)",
 * "(5, 4,)". Lists, negative numbers and leading zeros are refused, as
 * NumPy refuses them. */
static int parse_shape(const char *path, cursor *c, shape *sh, bcl_error *e)
{
    sh->ndim = 0;
    if (c->p >= c->end || *c->p != '(')
        return malformed(path, c, "a tuple of integers for 'shape'", e);
    c->p++;
    for (;;) {
        skip_ws(c);
        if (c->p < c->end && *c->p == ')') { /* "()", or after a trailing comma */
            c->p++;
            return BCL_OK;
        }
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return malformed(path, c, "a non-negative integer in 'shape'", e);
        if (*c->p == '0' && c->p + 1 < c->end && c->p[1] >= '0' && c->p[1] <= '9')
            return malformed(path, c, "an integer without leading zeros in 'shape'", e);
        uint64_t v = 0;
        bool overflow = false;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            unsigned d = (unsigned)(*c->p - '0');
            if (v > (UINT64_MAX - d) / 10)
                overflow = true;
            else
                v = v * 10 + d;
            c->p++;
        }
        if (overflow)
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "'%s': a dimension in 'shape' exceeds 64 bits: expected (N, 4)", path);
        if (sh->ndim < MAX_DIMS_SHOWN)
            sh->dim[sh->ndim] = v;
        sh->ndim++;
        skip_ws(c);
        if (c->p < c->end && *c->p == ')') {
            c->p++;
            /* "(5)" is the int 5 in Python, not a tuple; "(5,)" ends below. */
            if (sh->ndim == 1)
                return malformed(path, c, "a tuple for 'shape' ('(5)' is an int, '(5,)' a tuple)",
                                 e);
            return BCL_OK;
        }
        if (c->p >= c->end || *c->p != ',')
            return malformed(path, c, "',' or ')' in 'shape'", e);
        c->p++;
    }
}

/* Writes a shape the way Python prints the tuple: "(5, 4)", "(5,)", "()". */
static void format_shape(char *out, size_t size, const shape *sh)
{
    size_t at = 0;
    at += (size_t)snprintf(out + at, size - at, "(");
    for (unsigned i = 0; i < sh->ndim && i < MAX_DIMS_SHOWN && at < size; i++)
        at += (size_t)snprintf(out + at, size - at, "%s%" PRIu64, i ? ", " : "", sh->dim[i]);
    if (at < size)
        snprintf(out + at, size - at, "%s)",
                 sh->ndim > MAX_DIMS_SHOWN ? ", ..." : (sh->ndim == 1 ? "," : ""));
}

typedef struct header {
    bool have_descr, have_order, have_shape;
    const char *descr;
    size_t descr_len;
    bool fortran_order;
    shape shape;
} header;

/* Parses the dict literal in h[0, len) (the final '\n' excluded): keys in any
 * order, whitespace anywhere between tokens, an optional trailing comma; each
 * of the three keys exactly once and no other key. Values are checked later,
 * in a fixed order, so that the message names the most basic defect. */
static int parse_dict(const char *path, const char *h, size_t len, header *hd, bcl_error *e)
{
    cursor c = {h, h, h + len};
    memset(hd, 0, sizeof *hd);
    skip_ws(&c);
    if (c.p >= c.end || *c.p != '{')
        return malformed(path, &c, "a dict literal starting with '{'", e);
    c.p++;
    for (;;) {
        skip_ws(&c);
        if (c.p < c.end && *c.p == '}')
            break;
        const char *key;
        size_t key_len;
        int rc = parse_string(path, &c, &key, &key_len, e);
        if (rc)
            return rc;
        skip_ws(&c);
        if (c.p >= c.end || *c.p != ':')
            return malformed(path, &c, "':' after a key", e);
        c.p++;
        skip_ws(&c);

        bool *seen = str_is(key, key_len, "descr")           ? &hd->have_descr
                     : str_is(key, key_len, "fortran_order") ? &hd->have_order
                     : str_is(key, key_len, "shape")         ? &hd->have_shape
                                                             : NULL;
        if (!seen || *seen) {
            char shown[48];
            printable(shown, sizeof shown, key, key_len);
            return bcl_fail(e, BCL_EXIT_INPUT,
                            seen ? "'%s': key '%s' appears twice in the .npy header: expected it "
                                   "once"
                                 : "'%s': unknown key '%s' in the .npy header: expected only "
                                   "'descr', 'fortran_order' and 'shape'",
                            path, shown);
        }
        *seen = true;

        if (seen == &hd->have_descr) {
            /* A list here is a structured dtype: never a float32 array. */
            if (c.p < c.end && *c.p == '[')
                return bcl_fail(e, BCL_EXIT_INPUT,
                                "'%s': structured dtype is not supported: " EXPECT_DESCR, path);
            rc = parse_string(path, &c, &hd->descr, &hd->descr_len, e);
        } else if (seen == &hd->have_order) {
            const char *w;
            size_t wl;
            parse_word(&c, &w, &wl);
            if (str_is(w, wl, "True"))
                hd->fortran_order = true;
            else if (!str_is(w, wl, "False"))
                rc = malformed(path, &c, "True or False for 'fortran_order'", e);
        } else {
            rc = parse_shape(path, &c, &hd->shape, e);
        }
        if (rc)
            return rc;

        skip_ws(&c);
        if (c.p < c.end && *c.p == ',') {
            c.p++;
            continue; /* a trailing comma is fine: the loop head sees '}' */
        }
        if (c.p < c.end && *c.p == '}')
            break;
        return malformed(path, &c, "',' or '}' after a value", e);
    }
    c.p++; /* the '}' */
    skip_ws(&c);
    if (c.p != c.end)
        return malformed(path, &c, "only spaces after the header dict", e);

    const char *missing = !hd->have_descr   ? "descr"
                          : !hd->have_order ? "fortran_order"
                          : !hd->have_shape ? "shape"
                                            : NULL;
    if (missing)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "'%s': .npy header has no '%s' key: expected 'descr', 'fortran_order' "
                        "and 'shape'",
                        path, missing);
    return BCL_OK;
}

/* ---- the public functions -------------------------------------------------- */

static const char *nonfinite_name(float v)
{
    return isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

/*
 * Checks the preamble and header of a .npy file whose first len bytes are
 * in buf and whose whole size is file_len bytes (len == file_len when buf
 * holds the whole file; less when only the header was read). Sets *balls
 * and *offset (where the data starts). Every defect is an input error
 * naming path.
 */
static int check_header(const char *path, const unsigned char *buf, size_t len, size_t file_len,
                        uint64_t *balls_out, size_t *offset_out, bcl_error *e)
{
    if (file_len == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "'%s': file is empty: expected a .npy file", path);
    if (len < NPY_MAGIC_LEN || memcmp(buf, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "'%s': not a .npy file (bad magic string): expected a file starting "
                        "with \"\\x93NUMPY\" as np.save writes",
                        path);
    if (len < NPY_PREAMBLE)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "'%s': file ends inside the .npy preamble (%zu bytes): expected at least "
                        "%d bytes",
                        path, len, NPY_PREAMBLE);
    /* 2.0 and 3.0 differ only in a 4-byte header length and UTF-8 headers,
     * and np.save writes them only when 1.0 cannot hold the header, which
     * never happens for an (N, 4) float32 array. */
    if (buf[6] != 1 || buf[7] != 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "'%s': .npy version %u.%u: expected .npy version 1.0",
                        path, buf[6], buf[7]);
    size_t hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
    if (hlen > len - NPY_PREAMBLE)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "'%s': header length %zu runs past the end of the file (%zu bytes): "
                        "expected a complete header",
                        path, hlen, file_len);
    const char *h = (const char *)buf + NPY_PREAMBLE;
    if (hlen == 0 || h[hlen - 1] != '\n')
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "'%s': .npy header does not end with a newline: expected a dict literal "
                        "padded with spaces and ending in '\\n'",
                        path);
    header hd;
    int rc = parse_dict(path, h, hlen - 1, &hd, e);
    if (rc)
        return rc;

    if (!str_is(hd.descr, hd.descr_len, "<f4")) {
        char shown[48];
        printable(shown, sizeof shown, hd.descr, hd.descr_len);
        return bcl_fail(e, BCL_EXIT_INPUT, "'%s': dtype '%s' is not supported: " EXPECT_DESCR, path,
                        shown);
    }
    if (hd.fortran_order)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "'%s': fortran_order is True (column-major data): expected False (C "
                        "order; np.ascontiguousarray before np.save)",
                        path);
    char shown[160];
    format_shape(shown, sizeof shown, &hd.shape);
    if (hd.shape.ndim != 2 || hd.shape.dim[1] != BALL_FLOATS)
        return bcl_fail(e, BCL_EXIT_INPUT, "'%s': shape %s is not supported: expected (N, 4)", path,
                        shown);
    uint64_t balls = hd.shape.dim[0];
    if (balls == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "'%s': shape %s holds no balls: expected (N, 4), N >= 1",
                        path, shown);

    /* Compare the declared size with the bytes actually there, in a way that
     * cannot overflow: a header may declare (10**19, 4). */
    size_t offset = NPY_PREAMBLE + hlen;
    size_t have = file_len - offset;
    if (balls > have / BALL_BYTES)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "'%s': data is truncated: shape %s needs %" PRIu64
                        " balls of 16 bytes but the file holds %zu bytes of data: expected the "
                        "full array",
                        path, shown, balls, have);
    size_t need = (size_t)balls * BALL_BYTES;
    if (have != need)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "'%s': %zu bytes of extra data after the array of shape %s: expected "
                        "exactly %zu bytes of data",
                        path, have - need, shown, need);
    *balls_out = balls;
    *offset_out = offset;
    return BCL_OK;
}

int bcl_npy_check_finite(const char *path, const float *state, size_t n, size_t first, bcl_error *e)
{
    for (size_t i = 0; i < n * BALL_FLOATS; i++) {
        if (!isfinite(state[i])) {
            /* Named like the float4 components the kernels see; balls count
             * from 0 like the rows of the NumPy array. */
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "'%s': ball %zu has a non-finite value (%s) in component %c: "
                            "expected finite values",
                            path, first + i / BALL_FLOATS, nonfinite_name(state[i]),
                            "xyzw"[i % BALL_FLOATS]);
        }
    }
    return BCL_OK;
}

/*
 * Contract: reads path, a .npy v1.0 file holding an (N, 4) '<f4' C-order
 * array with N >= 1 and only finite values, into a new malloc'ed array of
 * 4*N floats (*state; the caller frees it) and sets *n = N. On failure
 * *state and *n are left untouched and the error is BCL_EXIT_INPUT, one line
 * "'<path>': <what is wrong>: expected <what>" (BCL_EXIT_RUNTIME only when
 * memory for a state that fits runs out). The header is read first (at
 * most 64 KiB) and checked against the file's size; only then is the body
 * read, in one allocation of the size the header declares, refused before
 * it is made when it exceeds the memory this process may use. A special
 * file (a FIFO, /dev/zero) is refused before anything is read.
 */
int bcl_npy_read(const char *path, float **state, size_t *n, bcl_error *e)
{
    int fd = -1;
    size_t balls = 0;
    uint64_t offset = 0;
    int rc = open_head(path, &fd, &balls, &offset, e);
    if (rc)
        return rc;
    /* The header matches the file's size; the body must also fit the
     * memory this process may use before it is allocated. */
    uint64_t need = (uint64_t)balls * BALL_BYTES;
    char what[4096 + 2];
    snprintf(what, sizeof what, "'%s'", path);
    if ((rc = bcl_host_memory_fit(balls, 1, what, e)))
        goto out;
    float *f = malloc((size_t)need);
    if (!f) {
        /* Not the file's fault: the machine lacks memory for a state this big. */
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "'%s': out of memory reading the file", path);
        goto out;
    }
    size_t got = 0;
    int err = read_at(fd, f, (size_t)need, offset, &got);
    if (err)
        rc = bcl_fail(e, BCL_EXIT_INPUT, "'%s': cannot read: %s", path, strerror(err));
    else if (got != need)
        rc = bcl_fail(e, BCL_EXIT_INPUT,
                      "'%s': the file shrank while it was read (%zu of %" PRIu64
                      " bytes of data): expected a file nothing else writes",
                      path, got, need);
    else
        rc = bcl_npy_check_finite(path, f, balls, 0, e);
    if (rc == BCL_OK) {
        *state = f;
        *n = balls;
    } else {
        free(f);
    }
out:
    close(fd);
    return rc;
}

int bcl_npy_read_header(const char *path, size_t *n, uint64_t *data_offset, bcl_error *e)
{
    return open_head(path, NULL, n, data_offset, e);
}

/* The .npy header np.save writes for an (n, 4) float32 array: *len bytes
 * into hdr (room for 256). What NumPy 1.24 writes: keys sorted, repr of
 * values, ", " after each, spare spaces for the shape to grow, then padding
 * to the alignment. */
static size_t npy_header(size_t n, unsigned char *hdr)
{
    char dict[128];
    int dl = snprintf(dict, sizeof dict,
                      "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, 4), }", n);
    int digits = snprintf(NULL, 0, "%zu", n);
    size_t grow = NPY_GROWTH_DIGITS - (size_t)digits;       /* >= 1: size_t has <= 20 digits */
    size_t unpadded = NPY_PREAMBLE + (size_t)dl + grow + 1; /* + 1 for '\n' */
    size_t pad = NPY_ALIGN - unpadded % NPY_ALIGN;          /* NumPy pads a full 64 when aligned */
    size_t hlen = (size_t)dl + grow + pad + 1;
    size_t offset = NPY_PREAMBLE + hlen;
    memcpy(hdr, NPY_MAGIC, NPY_MAGIC_LEN);
    hdr[6] = 1;
    hdr[7] = 0;
    hdr[8] = (unsigned char)(hlen & 0xff);
    hdr[9] = (unsigned char)(hlen >> 8);
    memcpy(hdr + NPY_PREAMBLE, dict, (size_t)dl);
    memset(hdr + NPY_PREAMBLE + dl, ' ', grow + pad);
    hdr[offset - 1] = '\n';
    return offset;
}

/*
 * Contract: writes the n balls of state (4*n floats) as a .npy v1.0 file of
 * shape (n, 4), dtype '<f4', byte-identical to np.save of the same float32
 * array, into output i of s (bcl_outputs_add; bcl_outputs_commit puts it
 * in place). The state is written as it is, never copied. n must be >= 1,
 * as the reader demands. Non-finite values are written as they are.
 */
int bcl_npy_write_to(bcl_outputs *s, size_t i, const float *state, size_t n, bcl_error *e)
{
    if (n == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "'%s': no balls to write: expected N >= 1",
                        s->out[i].path);
    unsigned char hdr[256];
    size_t hl = npy_header(n, hdr);
    int rc = bcl_outputs_write(s, i, hdr, hl, e);
    if (rc == BCL_OK)
        rc = bcl_outputs_write(s, i, state, n * BALL_BYTES, e);
    return rc;
}

/*
 * Contract: bcl_npy_write_to through an output set of one: path holds its
 * old contents or the whole new file (atomic replacement). Returns BCL_OK,
 * BCL_EXIT_INPUT (path cannot be written) or BCL_EXIT_RUNTIME (no memory).
 */
int bcl_npy_write(const char *path, const float *state, size_t n, bcl_error *e)
{
    if (n == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "'%s': no balls to write: expected N >= 1", path);
    bcl_outputs s = {0};
    int rc = bcl_outputs_add(&s, path, NULL, e);
    if (rc == BCL_OK)
        rc = bcl_npy_write_to(&s, 0, state, n, e);
    return bcl_outputs_end(&s, rc, e);
}

size_t bcl_npy_header(size_t n, unsigned char *out, size_t size)
{
    unsigned char hdr[256];
    size_t hl = npy_header(n, hdr);
    if (out && hl <= size)
        memcpy(out, hdr, hl);
    return hl;
}
