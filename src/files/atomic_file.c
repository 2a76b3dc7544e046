/*
 * Outputs, written all or none (docs/RELIABILITY.md, "Outputs").
 *
 * Every file ballcl writes (--output, --snapshot, bench --csv, survey --json,
 * the tuned file, binary-cache entries) goes through an output set:
 *
 *  1. bcl_outputs_add, before any work: the destination is checked (absent,
 *     or a regular file; a symbolic link is followed, see below; anything
 *     else is refused) and a temporary file is created beside it, which
 *     proves that the folder is writable and the names fit. The temporary
 *     is registered for removal on SIGINT/SIGTERM/SIGHUP (src/util/cleanup.c).
 *  2. bcl_outputs_write: the data goes to the temporary.
 *  3. bcl_outputs_commit: every temporary is flushed (fsync) and only then
 *     are they renamed over their destinations, with the signals held. A
 *     destination that exists is swapped with its temporary
 *     (renameat2(RENAME_EXCHANGE)), so a rename that fails part-way is
 *     undone by swapping back: either every output is replaced or none.
 *
 * A reader of any destination sees its old contents or the whole new ones,
 * never a mixture, even if the program is killed or the machine loses power.
 *
 * Symbolic links: a destination that is a symbolic link is followed and its
 * target is replaced atomically (the link stays), as an editor saving through
 * a link would; the target must be a regular file. A link in a folder that
 * everyone may write (mode 1777, like /tmp) is followed only when it belongs
 * to the user, like the kernel's fs.protected_symlinks: else another user
 * could point the link at a file of ours.
 */
#define _GNU_SOURCE /* mkostemp, renameat2, O_CLOEXEC */
#include "files/files.h"
#include "util/cleanup.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
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

const char *bcl_file_type_name(unsigned mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG:
        return "a regular file";
    case S_IFDIR:
        return "a folder";
    case S_IFCHR:
        return "a character device";
    case S_IFBLK:
        return "a block device";
    case S_IFIFO:
        return "a FIFO";
    case S_IFSOCK:
        return "a socket";
    case S_IFLNK:
        return "a symbolic link";
    default:
        return "a special file";
    }
}

/* "<what>: " in front of a message, when the output has an option name. */
static int out_fail(const bcl_output *o, int code, const char *why, const char *step, bcl_error *e)
{
    return bcl_fail(e, code, "%s%scannot write '%s': %s%s%s%s", o->what ? o->what : "",
                    o->what ? ": " : "", o->path, why, step ? " (" : "", step ? step : "",
                    step ? " failed)" : "");
}

/* The folder part of path ("." for a bare name, "/" for "/x"); malloc'ed. */
static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    size_t keep = slash > path ? (size_t)(slash - path) : 1;
    char *d = malloc(keep + 1);
    if (d) {
        memcpy(d, path, keep);
        d[keep] = '\0';
    }
    return d;
}

/* Decides which file is replaced: path itself, or a symbolic link's target.
 * Returns 0 and a malloc'ed *target, or an error already set in e. */
static int resolve_target(bcl_output *o, char **target, bcl_error *e)
{
    struct stat st;
    if (lstat(o->path, &st) != 0) {
        if (errno == ENOENT) {
            *target = strdup(o->path);
            return *target ? BCL_OK : out_fail(o, BCL_EXIT_RUNTIME, "out of memory", NULL, e);
        }
        return out_fail(o, BCL_EXIT_INPUT, strerror(errno), NULL, e);
    }
    if (S_ISDIR(st.st_mode))
        return out_fail(o, BCL_EXIT_INPUT, strerror(EISDIR), NULL, e);
    if (S_ISREG(st.st_mode)) {
        *target = strdup(o->path);
        return *target ? BCL_OK : out_fail(o, BCL_EXIT_RUNTIME, "out of memory", NULL, e);
    }
    if (!S_ISLNK(st.st_mode)) {
        char why[128];
        snprintf(why, sizeof why,
                 "it is %s, not a regular file: expected a regular file or a new "
                 "name",
                 bcl_file_type_name(st.st_mode));
        return out_fail(o, BCL_EXIT_INPUT, why, NULL, e);
    }
    /* A link in a sticky folder that others may write, not the user's. */
    char *dir = folder_of(o->path);
    struct stat ds;
    bool shared = dir && stat(dir, &ds) == 0 && (ds.st_mode & S_ISVTX) && (ds.st_mode & S_IWOTH);
    free(dir);
    if (shared && st.st_uid != geteuid())
        return out_fail(o, BCL_EXIT_INPUT,
                        "it is a symbolic link of another user in a folder everyone may write: "
                        "expected a regular file or a new name",
                        NULL, e);
    char *real = realpath(o->path, NULL);
    if (!real) {
        char why[160];
        snprintf(why, sizeof why, "it is a symbolic link whose target cannot be used (%s)",
                 strerror(errno));
        return out_fail(o, BCL_EXIT_INPUT, why, NULL, e);
    }
    if (stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
        char why[160];
        snprintf(why, sizeof why, "it is a symbolic link to %s, not to a regular file",
                 bcl_file_type_name(st.st_mode));
        free(real);
        return out_fail(o, BCL_EXIT_INPUT, why, NULL, e);
    }
    *target = real;
    return BCL_OK;
}

int bcl_outputs_add(bcl_outputs *s, const char *path, const char *what, bcl_error *e)
{
    if (s->count == BCL_OUTPUTS_MAX)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "too many outputs (at most %d)", BCL_OUTPUTS_MAX);
    bcl_output *o = &s->out[s->count];
    memset(o, 0, sizeof *o);
    o->path = path;
    o->what = what;
    o->fd = -1;
    o->slot = -1;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    /* "-" is standard output to most programs; ballcl writes files only. */
    if (strcmp(path, "-") == 0)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "%s '-': standard output is not written to: give a file name (./- for a "
                        "file of that name)",
                        what);
    /* "out/" names a folder; mkstemp would happily create ".XXXXXX" in it. */
    if (*path == '\0' || *base == '\0')
        return out_fail(o, BCL_EXIT_INPUT, *path ? strerror(EISDIR) : "empty file name", NULL, e);
    char *target = NULL;
    int rc = resolve_target(o, &target, e);
    if (rc)
        return rc;
    char *dir = folder_of(target);
    const char *tbase = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
    /* "<dir>/.<base>.XXXXXX": the leading dot keeps it out of plain `ls` and
     * globs. A name within 8 bytes of the limit gets ".ballcl.XXXXXX", so
     * that every name the file system accepts can be written. */
    long name_max = dir ? pathconf(dir, _PC_NAME_MAX) : -1;
    if (name_max <= 0)
        name_max = NAME_MAX;
    bool short_tmp = strlen(tbase) + 8 > (size_t)name_max;
    size_t tmplen = strlen(dir ? dir : "") + 2 + (short_tmp ? 7 : strlen(tbase) + 1) + 8;
    char *tmp = dir ? malloc(tmplen) : NULL;
    if (!tmp) {
        free(dir);
        free(target);
        return out_fail(o, BCL_EXIT_RUNTIME, "out of memory", NULL, e);
    }
    snprintf(tmp, tmplen, "%s%s.%s.XXXXXX", strchr(target, '/') ? dir : "",
             strchr(target, '/') ? (strcmp(dir, "/") ? "/" : "") : "",
             short_tmp ? "ballcl" : tbase);
    free(dir);
    int f = bcl_fault_take("open");
    if (f != 0) {
        free(tmp);
        free(target);
        return out_fail(o, BCL_EXIT_INPUT, strerror(f), "open", e);
    }
    /* The file and its registration come into being together. */
    sigset_t old;
    bcl_cleanup_block(&old);
    int fd = mkostemp(tmp, O_CLOEXEC);
    int err = errno;
    if (fd >= 0)
        o->slot = bcl_cleanup_register(tmp);
    bcl_cleanup_unblock(&old);
    if (fd < 0) {
        free(tmp);
        free(target);
        /* A name the file system refuses is the user's name, however long
         * the temporary: say so in those words. */
        return out_fail(o, BCL_EXIT_INPUT, strerror(err), "open", e);
    }
    o->fd = fd;
    o->tmp = tmp;
    o->target = target;
    s->count++;
    return BCL_OK;
}

int bcl_outputs_write(bcl_outputs *s, size_t i, const void *data, size_t len, bcl_error *e)
{
    bcl_output *o = &s->out[i];
    if (o->fd < 0)
        return out_fail(o, BCL_EXIT_RUNTIME, "the output is not open", NULL, e);
    if (write_all(o->fd, data, len) != 0)
        return out_fail(o, BCL_EXIT_INPUT, strerror(errno), "write", e);
    return BCL_OK;
}

/* Removes o's temporary, if any, and frees what o holds. */
static void drop(bcl_output *o)
{
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    if (o->tmp)
        (void)unlink(o->tmp);
    bcl_cleanup_unregister(o->slot);
    o->slot = -1;
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
}

void bcl_outputs_discard(bcl_outputs *s)
{
    for (size_t i = 0; i < s->count; i++)
        drop(&s->out[i]);
    s->count = 0;
}

/* Flushes o's temporary and closes it: everything that can fail before a
 * rename. */
static int finish(bcl_output *o, bcl_error *e)
{
    /* Before fsync, so that the mode reaches the disk with the data. */
    if (fchmod(o->fd, file_mode()) != 0)
        return out_fail(o, BCL_EXIT_INPUT, strerror(errno), "chmod", e);
    /* Without fsync, a crash soon after the rename can leave the new name
     * pointing at an empty or partial file on some file systems (ext4 with
     * delalloc, XFS): exactly the half-written checkpoint we promise away. */
    int f = bcl_fault_take("fsync");
    if (f != 0)
        return out_fail(o, BCL_EXIT_INPUT, strerror(f), "fsync", e);
    if (fsync(o->fd) != 0)
        return out_fail(o, BCL_EXIT_INPUT, strerror(errno), "fsync", e);
    /* close() can report a deferred write error (NFS); it counts. */
    int rc = close(o->fd);
    o->fd = -1;
    if (rc != 0 && errno != EINTR)
        return out_fail(o, BCL_EXIT_INPUT, strerror(errno), "close", e);
    /* The destination was checked before the work; check again, as it may
     * have been replaced by something that is not a file since. */
    struct stat st;
    if (lstat(o->target, &st) == 0 && !S_ISREG(st.st_mode)) {
        char why[128];
        snprintf(why, sizeof why, "it became %s during the run: expected a regular file",
                 bcl_file_type_name(st.st_mode));
        return out_fail(o, BCL_EXIT_INPUT, why, NULL, e);
    }
    return BCL_OK;
}

/* Puts o's temporary in place. *swapped says whether the old file now lies
 * at o->tmp (to be removed on success, swapped back on a rollback). */
static int place(bcl_output *o, bool *swapped)
{
    *swapped = false;
    int f = bcl_fault_take("rename");
    if (f != 0) {
        errno = f;
        return -1;
    }
    if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->target, RENAME_EXCHANGE) == 0) {
        *swapped = true;
        return 0;
    }
    /* No destination yet (ENOENT), or a file system without exchange
     * (EINVAL, ENOSYS): a plain rename, which cannot be undone by a swap. */
    return rename(o->tmp, o->target);
}

int bcl_outputs_commit(bcl_outputs *s, bcl_error *e)
{
    int rc = BCL_OK;
    for (size_t i = 0; i < s->count && rc == BCL_OK; i++)
        rc = finish(&s->out[i], e);
    if (rc) {
        bcl_outputs_discard(s);
        return rc;
    }
    bool swapped[BCL_OUTPUTS_MAX] = {false};
    size_t placed = 0;
    bcl_cleanup_commit_begin();
    for (; placed < s->count; placed++) {
        if (place(&s->out[placed], &swapped[placed]) != 0) {
            rc = out_fail(&s->out[placed], BCL_EXIT_INPUT, strerror(errno), "rename", e);
            break;
        }
    }
    if (rc) {
        /* Undo what was placed: swap old files back, remove new ones. */
        for (size_t i = 0; i < placed; i++) {
            bcl_output *o = &s->out[i];
            if (swapped[i])
                (void)renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->target, RENAME_EXCHANGE);
            else
                (void)unlink(o->target);
        }
    }
    for (size_t i = 0; i < s->count; i++) {
        bcl_output *o = &s->out[i];
        /* After a placed swap, tmp holds the old file: gone now. A placed
         * plain rename left nothing at tmp. */
        if (rc == BCL_OK && !swapped[i]) {
            free(o->tmp);
            o->tmp = NULL;
        }
        if (rc == BCL_OK) {
            char *dir = folder_of(o->target);
            if (dir)
                sync_folder(dir);
            free(dir);
        }
        drop(o);
    }
    s->count = 0;
    bcl_cleanup_commit_end();
    return rc;
}

/*
 * Contract: writes len bytes of data to path so that path holds either its
 * previous contents or all of data, never a mixture: an output set of one.
 * The new file gets mode 0644 less the umask. Returns BCL_OK, or
 * BCL_EXIT_INPUT with "cannot write '<path>': <why> (<step> failed)", step
 * being open, write, chmod, fsync, close or rename (a missing folder, no
 * permission and a full disk are all problems with the user's path).
 */
int bcl_write_file_atomic(const char *path, const void *data, size_t len, bcl_error *e)
{
    bcl_outputs s = {0};
    int rc = bcl_outputs_add(&s, path, NULL, e);
    if (rc == BCL_OK)
        rc = bcl_outputs_write(&s, 0, data, len, e);
    return bcl_outputs_end(&s, rc, e);
}

int bcl_outputs_end(bcl_outputs *s, int rc, bcl_error *e)
{
    if (rc == BCL_OK)
        return bcl_outputs_commit(s, e);
    bcl_outputs_discard(s);
    return rc;
}
