/*
 * The one way the library reads a whole file (a state, a cache entry, a
 * kernel source, a survey): bounded before it reads. A path that is not a
 * regular file (a folder, a pipe, a device) or a file above the caller's
 * limit is refused from fstat alone, so nothing a path points at can make
 * the library block on a pipe or allocate without bound. Messages are the
 * caller's: this returns errno values.
 */
#include "util/util.h"

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

int bcl_read_file(const char *path, uint64_t limit, char **out, size_t *len, bool *opened)
{
    *out = NULL;
    *len = 0;
    if (opened)
        *opened = false;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused
     * below anyway. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno;
    if (opened)
        *opened = true;
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
    /* The fault point of every file read (BALLCL_FAULT=read:n). */
    if (err == 0)
        err = bcl_fault_take("read");
    size_t want = err ? 0 : (size_t)st.st_size;
    char *buf = err ? NULL : malloc(want + 1);
    if (err == 0 && !buf)
        err = ENOMEM;
    size_t got = 0;
    while (err == 0 && got < want) {
        ssize_t r = read(fd, buf + got, want - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            err = errno;
        else if (r == 0)
            break; /* shrank while read: the caller sees the bytes there were */
        else
            got += (size_t)r;
    }
    close(fd);
    if (err) {
        free(buf);
        return err;
    }
    buf[got] = '\0';
    *out = buf;
    *len = got;
    return 0;
}
