/*
 * Atomic file replacement: the data goes to a temporary file in the target's
 * own folder (so rename() stays within one file system and is atomic), is
 * flushed to the disk, and only then renamed over the target. A reader thus
 * sees either the old file or the complete new one, never a half-written
 * checkpoint, even if the program is killed or the machine loses power.
 */
#define _GNU_SOURCE /* mkostemp, O_CLOEXEC */
#include "files/files.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The mode a plain open(O_CREAT, 0644) would give: mkstemp always creates
 * 0600, which would make checkpoints unreadable to other users for no reason.
 * umask() can only be read by setting it; the window in which another thread
 * could create a file with umask 0 is two system calls long, and ballcl writes
 * its files from the main thread only. */
static mode_t file_mode(void)
{
    mode_t mask = umask(022);
    umask(mask);
    return 0644 & ~mask;
}

/* Flushes the folder so that the rename itself survives a crash. Best effort:
 * some file systems refuse fsync on folders, and the new file is complete on
 * disk either way. */
static void sync_folder(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* Writes all of data to fd, retrying after signals and short writes. Returns
 * 0, or -1 with errno set. Each write() call may be failed by the fault hook. */
static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        int f = bcl_fault_take("write");
        if (f != 0) {
            errno = f;
            return -1;
        }
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (w == 0) {
            /* write() never returns 0 for len > 0 on a regular file; treat it
             * like a full disk rather than spinning forever. */
            errno = ENOSPC;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/*
 * Contract: writes len bytes of data to path so that path holds either its
 * previous contents or all of data, never a mixture. The temporary file is
 * ".<base>.XXXXXX" in path's folder and is removed again on any failure.
 * The new file gets mode 0644 less the umask. Returns BCL_OK, or
 * BCL_EXIT_INPUT with "cannot write '<path>': <strerror> (<step> failed)",
 * step being open, write, chmod, fsync, close or rename (a missing folder,
 * no permission and a full disk are all problems with the user's path).
 */
int bcl_write_file_atomic(const char *path, const void *data, size_t len, bcl_error *e)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dirlen = slash ? (size_t)(slash - path) : 0;

    if (*base == '\0') {
        /* "out/" names a folder; mkstemp would happily create ".XXXXXX" in it
         * and rename would then fail with a less helpful message. */
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot write '%s': %s", path, strerror(EISDIR));
    }

    /* "<dir>/.<base>.XXXXXX", or ".<base>.XXXXXX" in the working folder. The
     * leading dot keeps the temporary out of plain `ls` and shell globs. */
    size_t tmplen = dirlen + 1 + 1 + strlen(base) + 8 + 1;
    char *tmp = malloc(tmplen);
    char *dir = malloc(dirlen + 2);
    if (!tmp || !dir) {
        free(tmp);
        free(dir);
        return bcl_fail(e, BCL_EXIT_RUNTIME, "cannot write '%s': out of memory", path);
    }
    if (slash) {
        /* "/x" lives in "/", not in "". */
        size_t keep = dirlen > 0 ? dirlen : 1;
        memcpy(dir, path, keep);
        dir[keep] = '\0';
        snprintf(tmp, tmplen, "%.*s/.%s.XXXXXX", (int)dirlen, path, base);
    } else {
        strcpy(dir, ".");
        snprintf(tmp, tmplen, ".%s.XXXXXX", base);
    }

    int fd = -1;
    bool created = false; /* tmp names a file of ours that must go on failure */
    int err = 0;
    const char *step = "open"; /* named in the message: which system call failed */

    int f = bcl_fault_take("open");
    if (f != 0) {
        err = f;
        goto fail;
    }
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        err = errno;
        goto fail;
    }
    created = true;

    step = "write";
    if (write_all(fd, data, len) != 0) {
        err = errno;
        goto fail;
    }
    /* Before fsync, so that the mode reaches the disk with the data. */
    step = "chmod";
    if (fchmod(fd, file_mode()) != 0) {
        err = errno;
        goto fail;
    }
    /* Without fsync, a crash soon after the rename can leave the new name
     * pointing at an empty or partial file on some file systems (ext4 with
     * delalloc, XFS): exactly the half-written checkpoint we promise away. */
    step = "fsync";
    f = bcl_fault_take("fsync");
    if (f != 0) {
        err = f;
        goto fail;
    }
    if (fsync(fd) != 0) {
        err = errno;
        goto fail;
    }
    /* close() can report a deferred write error (NFS); it counts. */
    step = "close";
    int rc = close(fd);
    fd = -1;
    if (rc != 0 && errno != EINTR) {
        err = errno;
        goto fail;
    }

    step = "rename";
    f = bcl_fault_take("rename");
    if (f != 0) {
        err = f;
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        err = errno;
        goto fail;
    }

    sync_folder(dir);
    free(tmp);
    free(dir);
    return BCL_OK;

fail:
    if (fd >= 0)
        close(fd);
    if (created)
        (void)unlink(tmp);
    free(tmp);
    free(dir);
    return bcl_fail(e, BCL_EXIT_INPUT, "cannot write '%s': %s (%s failed)", path, strerror(err),
                    step);
}
