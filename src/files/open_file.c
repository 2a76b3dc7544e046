/*
 * Opening a file to read, never blocking or reading a special file
 * (docs/RELIABILITY.md): a FIFO waits for a writer, /dev/zero never ends.
 */
#define _GNU_SOURCE
#include "files/files.h"
#include "ballcl/ballcl.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int bcl_open_regular(const char *path, bool nofollow, unsigned *mode)
{
    /* O_NONBLOCK: open() of a FIFO returns at once. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        if (mode)
            *mode = (unsigned)st.st_mode;
        return -2;
    }
    /* Cleared, so that no read can return EAGAIN. */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}
