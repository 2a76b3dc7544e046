/*
 * State files as NumPy .npy 1.0 (docs/DESIGN.md): '<f4', C order, shape
 * (N, 4). The reader accepts exactly what np.save writes for such an array
 * and refuses the rest in one line saying what was expected; the writer
 * writes np.save's bytes. Format (numpy.lib.format): "\x93NUMPY", 1, 0,
 * uint16 LE HLEN, HLEN bytes of a dict literal padded with spaces ending
 * in '\n', the data.
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

/* The data is copied byte for byte: right only where float is IEEE binary32,
 * little-endian. A big-endian port would byte-swap; fail the build instead. */
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c copies '<f4' data as-is and needs a little-endian host"
#endif
_Static_assert(sizeof(float) == 4 && FLT_RADIX == 2 && FLT_MANT_DIG == 24 && FLT_MAX_EXP == 128,
               "npy.c needs float to be IEEE 754 binary32");

#define NPY_MAGIC     "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_PREAMBLE  10 /* magic, major, minor, uint16 LE header length */
#define NPY_ALIGN     64 /* np.save aligns the data to this */
/* np.save's room to rewrite the shape in place; ours too, for its bytes. */
#define NPY_GROWTH_DIGITS 21
#define BALL_FLOATS       4
#define BALL_BYTES        (BALL_FLOATS * sizeof(float))
#define EXPECT_DESCR      "expected '<f4' (float32, little-endian)"
#define MAX_DIMS_SHOWN    8

/* The preamble and the longest 1.0 header: all read before it is checked. */
#define NPY_HEAD_MAX (NPY_PREAMBLE + 65535)

/* Opens path if it is a regular file (bcl_open_regular: a FIFO is refused
 * without blocking) and gives its size; fault point "read" after the open. */
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
    /* Size 0 with bytes behind it (/proc, /sys): not a state file. */
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

/* Reads up to len bytes at offset into *got (a file may shrink); 0 or errno. */
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

typedef struct cursor {
    const char *start, *p, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int malformed(const char *path, const cursor *c, const char *expected, bcl_error *e)
{
    return bcl_fail(e, BCL_EXIT_INPUT, "'%s': malformed .npy header at byte %zu: expected %s", path,
                    NPY_PREAMBLE + (size_t)(c->p - c->start), expected);
}

/* s for a message, cut to out_size - 1, anything but printable ASCII as '?'. */
static void printable(char *out, size_t out_size, const char *s, size_t len)
{
    size_t i = 0;
    for (; i < len && i + 1 < out_size; i++)
        out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    out[i] = '\0';
}

/* A Python string literal in either quotes, as [*s, *s + *len) in the header.
 * NumPy writes no escapes for a plain dtype: a backslash is refused. */
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

/* A tuple of non-negative ints: "()", "(5,)", "(5, 4)", "(5, 4,)"; lists,
 * negative numbers and leading zeros are refused, as NumPy refuses them. */
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

/* The dict literal in h[0, len) ('\n' excluded): the three keys once each in
 * any order, blanks between tokens, an optional trailing comma. Values are
 * checked later, in a fixed order, so the message names the basic defect. */
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

/* Checks the preamble and header in buf[0, len) of a file of file_len bytes:
 * *balls and the data's *offset, or an input error naming path. */
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
    /* np.save writes 2.0 and 3.0 only for headers 1.0 cannot hold: never ours. */
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

    /* Without overflow: a header may declare (10**19, 4). */
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

/* open_state, then the header checked against the file's size: *n balls at
 * *offset, and on success the open *fd for the body (without fd, closed). */
static int open_head(const char *path, int *fd, size_t *n, uint64_t *offset, bcl_error *e)
{
    uint64_t size = 0, balls = 0;
    size_t off = 0, len = 0;
    int f = -1;
    int rc = open_state(path, &f, &size, e);
    if (rc)
        return rc;
    unsigned char *head = malloc(NPY_HEAD_MAX);
    int err =
        head ? read_at(f, head, size < NPY_HEAD_MAX ? (size_t)size : NPY_HEAD_MAX, 0, &len) : 0;
    if (!head)
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "'%s': out of memory reading the header", path);
    else if (err)
        rc = bcl_fail(e, BCL_EXIT_INPUT, "'%s': cannot read: %s", path, strerror(err));
    else
        rc = check_header(path, head, len, size >= SIZE_MAX ? SIZE_MAX - 1 : (size_t)size, &balls,
                          &off, e);
    free(head);
    if (rc || !fd)
        close(f);
    else
        *fd = f;
    if (rc == BCL_OK) {
        *n = (size_t)balls; /* checked against the file's size */
        *offset = off;
    }
    return rc;
}

int bcl_npy_check_finite(const char *path, const float *state, size_t n, size_t first, bcl_error *e)
{
    for (size_t i = 0; i < n * BALL_FLOATS; i++) {
        if (!isfinite(state[i])) {
            /* Components as the kernels' float4; balls from 0 as NumPy's rows. */
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "'%s': ball %zu has a non-finite value (%s) in component %c: "
                            "expected finite values",
                            path, first + i / BALL_FLOATS,
                            isnan(state[i]) ? "nan" : (state[i] > 0 ? "inf" : "-inf"),
                            "xyzw"[i % BALL_FLOATS]);
        }
    }
    return BCL_OK;
}

/*
 * Contract: *state (malloc'ed, 4*N floats) and *n = N from a .npy 1.0 file
 * of an (N, 4) '<f4' C-order array, N >= 1, finite values; on failure both
 * untouched and BCL_EXIT_INPUT "'<path>': <what is wrong>: expected <what>"
 * (BCL_EXIT_RUNTIME when memory for a state that fits runs out). The header
 * (at most 64 KiB) is checked against the file's size before the body is
 * read, in one allocation refused first when it exceeds this process's
 * memory. A special file (a FIFO, /dev/zero) is refused before any read.
 */
int bcl_npy_read(const char *path, float **state, size_t *n, bcl_error *e)
{
    int fd = -1;
    size_t balls = 0;
    uint64_t offset = 0;
    int rc = open_head(path, &fd, &balls, &offset, e);
    if (rc)
        return rc;
    uint64_t need = (uint64_t)balls * BALL_BYTES;
    char what[4096 + 2];
    snprintf(what, sizeof what, "'%s'", path);
    if ((rc = bcl_host_memory_fit(balls, 1, what, e)))
        goto out;
    float *f = malloc((size_t)need);
    if (!f) {
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

/* np.save's (NumPy 1.24) header of an (n, 4) float32 array: keys sorted,
 * repr of values, ", " after each, room for the shape to grow, padding. */
size_t bcl_npy_header(size_t n, unsigned char *out, size_t size)
{
    unsigned char hdr[256];
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
    if (out && offset <= size)
        memcpy(out, hdr, offset);
    return offset;
}

/* Contract: the n >= 1 balls of state as np.save writes them, into output i
 * of s, never copied; non-finite values are written as they are. */
int bcl_npy_write_to(bcl_outputs *s, size_t i, const float *state, size_t n, bcl_error *e)
{
    if (n == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "'%s': no balls to write: expected N >= 1",
                        s->out[i].path);
    unsigned char hdr[256];
    size_t hl = bcl_npy_header(n, hdr, sizeof hdr);
    int rc = bcl_outputs_write(s, i, hdr, hl, e);
    if (rc == BCL_OK)
        rc = bcl_outputs_write(s, i, state, n * BALL_BYTES, e);
    return rc;
}

/* Contract: bcl_npy_write_to through an output set of one (atomic):
 * BCL_OK, BCL_EXIT_INPUT (path cannot be written) or BCL_EXIT_RUNTIME. */
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
