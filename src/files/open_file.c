/*
 * Opening a file to read without ever blocking or reading a special file
 * (docs/RELIABILITY.md): a FIFO opened for reading waits for a writer, and
 * /dev/zero or /dev/urandom never end. Every reader in ballcl (.npy inputs,
 * kernel sources, survey files, cache entries, the tuned file) opens through
 * here and reads only regular files.
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
    /* O_NONBLOCK makes open() of a FIFO return at once; it has no effect
     * on regular files, which are all we read from the descriptor. */
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
    /* Reads below block as usual (a regular file never makes them wait,
     * but clear the flag so that no read can return EAGAIN). */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}
