/*
 * The one way the library reads a whole file, bounded before it reads: what
 * is not a regular file, or is above the caller's limit, is refused from
 * fstat, so no path can make it block on a pipe or allocate without bound.
 * Messages are the caller's: this returns errno values.
 */
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *bcl_read_error(int err)
{
    return err == BCL_READ_NOT_REGULAR ? "not a regular file" : strerror(err);
}

/* The open fd whole: fstat's checks, the fault point if fault, the bytes. */
static int read_fd(int fd, uint64_t limit, bool fault, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    struct stat st;
    int err = 0;
    if (fstat(fd, &st) != 0)
        err = errno;
    else if (S_ISDIR(st.st_mode))
        err = EISDIR;
    else if (!S_ISREG(st.st_mode))
        err = BCL_READ_NOT_REGULAR;
    else if (st.st_size < 0 || (uint64_t)st.st_size > limit || (uint64_t)st.st_size >= SIZE_MAX)
        err = EFBIG;
    /* The fault point of every file read by path (BALLCL_FAULT=read:n). */
    if (err == 0 && fault)
        err = bcl_fault_take("read");
    /* To the end, whatever the size said (/proc says 0), within limit. */
    size_t cap = err ? 0 : (size_t)st.st_size + 1;
    if (cap < 4096)
        cap = 4096;
    char *buf = err ? NULL : malloc(cap + 1);
    if (err == 0 && !buf)
        err = ENOMEM;
    size_t got = 0;
    while (err == 0) {
        if (got == cap) {
            if ((uint64_t)got > limit) {
                err = EFBIG;
                break;
            }
            size_t more = cap * 2;
            char *bigger = more > cap ? realloc(buf, more + 1) : NULL;
            if (!bigger) {
                err = ENOMEM;
                break;
            }
            buf = bigger;
            cap = more;
        }
        ssize_t r = read(fd, buf + got, cap - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            err = errno;
        else if (r == 0)
            break;
        else
            got += (size_t)r;
    }
    if (err == 0 && (uint64_t)got > limit)
        err = EFBIG;
    if (err) {
        free(buf);
        return err;
    }
    buf[got] = '\0';
    *out = buf;
    *len = got;
    return 0;
}

int bcl_read_file(const char *path, uint64_t limit, char **out, size_t *len, bool *opened)
{
    *out = NULL;
    *len = 0;
    if (opened)
        *opened = false;
    /* O_NONBLOCK: a FIFO must not wait for a writer (read_fd refuses it). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno;
    if (opened)
        *opened = true;
    int err = read_fd(fd, limit, true, out, len);
    close(fd);
    return err;
}

int bcl_read_fd(int fd, uint64_t limit, char **out, size_t *len)
{
    return read_fd(fd, limit, false, out, len);
}

int bcl_list_dir(const char *dir, const char *what, size_t row_size, bcl_list_take take,
                 int (*cmp)(const void *, const void *), void **rows, size_t *count, bcl_error *e)
{
    *rows = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return BCL_OK;
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot read %s '%s': %s", what, dir, strerror(errno));
    }
    size_t n = 0, cap = 0;
    char *list = NULL;
    struct dirent *de;
    int rc = BCL_OK;
    while ((de = readdir(d)) != NULL) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char *grown = realloc(list, cap * row_size);
            if (!grown) {
                rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory listing '%s'", dir);
                break;
            }
            list = grown;
        }
        if (take(dir, de->d_name, list + n * row_size))
            n++;
    }
    closedir(d);
    if (rc || n == 0) {
        free(list);
        return rc;
    }
    qsort(list, n, row_size, cmp);
    *rows = list;
    *count = n;
    return BCL_OK;
}
