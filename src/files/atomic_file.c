/*
 * Outputs, written all or none (docs/RELIABILITY.md, "Outputs"): every file
 * ballcl writes goes through an output set.
 *
 *  1. bcl_outputs_add, before any work: the destination must be absent or a
 *     regular file (a symbolic link is followed), and a temporary created
 *     beside it proves the folder writable; it is removed on SIGINT, SIGTERM
 *     and SIGHUP (src/util/cleanup.c).
 *  2. bcl_outputs_write: the data goes to the temporary.
 *  3. bcl_outputs_commit: every temporary is fsynced, then renamed over its
 *     destination with the signals held; an existing destination is swapped
 *     (RENAME_EXCHANGE), so a rename failing part-way is undone by swapping
 *     back. A reader sees the old contents or the whole new ones, even after
 *     a kill or a power loss.
 *
 * A link's target is replaced (the link stays), as an editor saving through
 * it would. A link in a folder everyone may write (1777, like /tmp) is
 * followed only when it is the user's, like fs.protected_symlinks: else
 * another user could point it at a file of ours.
 */
#define _GNU_SOURCE /* mkostemp, renameat2, O_CLOEXEC */
#include "files/files.h"
#include "util/cleanup.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The mode open(O_CREAT, 0644) would give (mkstemp makes 0600). umask is
 * read by setting it: a window of two calls, and ballcl writes its files
 * from the main thread only. */
static mode_t file_mode(void)
{
    mode_t mask = umask(022);
    umask(mask);
    return 0644 & ~mask;
}

/* So that the rename survives a crash. Best effort: some file systems refuse
 * fsync on folders, and the new file is complete on disk either way. */
static void sync_folder(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* All of data, after signals and short writes: 0, or -1 with errno set.
 * Each write() may be failed by the fault hook. */
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
            /* Never for a regular file: a full disk, not a spin forever. */
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
    static const struct {
        unsigned type;
        const char *name;
    } types[] = {
        {S_IFREG, "a regular file"}, {S_IFDIR, "a folder"}, {S_IFCHR, "a character device"},
        {S_IFBLK, "a block device"}, {S_IFIFO, "a FIFO"},   {S_IFSOCK, "a socket"},
        {S_IFLNK, "a symbolic link"}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if ((mode & S_IFMT) == types[i].type)
            return types[i].name;
    return "a special file";
}

/* "[<what>: ]cannot write '<path>': <why>[ (<step> failed)]". */
__attribute__((format(printf, 5, 6))) static int
out_fail(const bcl_output *o, int code, bcl_error *e, const char *step, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
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
    bool absent = lstat(o->path, &st) != 0;
    if (absent && errno != ENOENT)
        return out_fail(o, BCL_EXIT_INPUT, e, NULL, "%s", strerror(errno));
    if (!absent && S_ISDIR(st.st_mode))
        return out_fail(o, BCL_EXIT_INPUT, e, NULL, "%s", strerror(EISDIR));
    if (absent || S_ISREG(st.st_mode)) {
        *target = strdup(o->path);
        return *target ? BCL_OK : out_fail(o, BCL_EXIT_RUNTIME, e, NULL, "out of memory");
    }
    if (!S_ISLNK(st.st_mode))
        return out_fail(o, BCL_EXIT_INPUT, e, NULL,
                        "it is %s, not a regular file: expected a regular file or a new name",
                        bcl_file_type_name(st.st_mode));
    /* A link in a sticky folder that others may write, not the user's. */
    char *dir = folder_of(o->path);
    struct stat ds;
    bool shared = dir && stat(dir, &ds) == 0 && (ds.st_mode & S_ISVTX) && (ds.st_mode & S_IWOTH);
    free(dir);
    if (shared && st.st_uid != geteuid())
        return out_fail(o, BCL_EXIT_INPUT, e, NULL,
                        "it is a symbolic link of another user in a folder everyone may write: "
                        "expected a regular file or a new name");
    char *real = realpath(o->path, NULL);
    if (!real)
        return out_fail(o, BCL_EXIT_INPUT, e, NULL,
                        "it is a symbolic link whose target cannot be used (%s)", strerror(errno));
    if (stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
        free(real);
        return out_fail(o, BCL_EXIT_INPUT, e, NULL,
                        "it is a symbolic link to %s, not to a regular file",
                        bcl_file_type_name(st.st_mode));
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
        return out_fail(o, BCL_EXIT_INPUT, e, NULL, "%s",
                        *path ? strerror(EISDIR) : "empty file name");
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
        return out_fail(o, BCL_EXIT_RUNTIME, e, NULL, "out of memory");
    }
    snprintf(tmp, tmplen, "%s%s.%s.XXXXXX", strchr(target, '/') ? dir : "",
             strchr(target, '/') ? (strcmp(dir, "/") ? "/" : "") : "",
             short_tmp ? "ballcl" : tbase);
    free(dir);
    int f = bcl_fault_take("open");
    if (f != 0) {
        free(tmp);
        free(target);
        return out_fail(o, BCL_EXIT_INPUT, e, "open", "%s", strerror(f));
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
        /* A name the file system refuses is the user's, however long the temporary. */
        return out_fail(o, BCL_EXIT_INPUT, e, "open", "%s", strerror(err));
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
        return out_fail(o, BCL_EXIT_RUNTIME, e, NULL, "the output is not open");
    if (write_all(o->fd, data, len) != 0)
        return out_fail(o, BCL_EXIT_INPUT, e, "write", "%s", strerror(errno));
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

/* Flushes and closes o's temporary: all that can fail before a rename. */
static int finish(bcl_output *o, bcl_error *e)
{
    /* Before fsync, so that the mode reaches the disk with the data. */
    if (fchmod(o->fd, file_mode()) != 0)
        return out_fail(o, BCL_EXIT_INPUT, e, "chmod", "%s", strerror(errno));
    /* Without fsync, a crash soon after the rename can leave the new name on
     * an empty or partial file (ext4 with delalloc, XFS). */
    int f = bcl_fault_take("fsync");
    if (f != 0 || fsync(o->fd) != 0)
        return out_fail(o, BCL_EXIT_INPUT, e, "fsync", "%s", strerror(f ? f : errno));
    /* close() can report a deferred write error (NFS); it counts. */
    int rc = close(o->fd);
    o->fd = -1;
    if (rc != 0 && errno != EINTR)
        return out_fail(o, BCL_EXIT_INPUT, e, "close", "%s", strerror(errno));
    /* Checked before the work, and again: it may have been replaced since. */
    struct stat st;
    if (lstat(o->target, &st) == 0 && !S_ISREG(st.st_mode))
        return out_fail(o, BCL_EXIT_INPUT, e, NULL,
                        "it became %s during the run: expected a regular file",
                        bcl_file_type_name(st.st_mode));
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
            rc = out_fail(&s->out[placed], BCL_EXIT_INPUT, e, "rename", "%s", strerror(errno));
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

/* Contract: data to path as an output set of one, mode 0644 less the umask:
 * BCL_OK, or BCL_EXIT_INPUT "cannot write '<path>': <why> (<step> failed)"
 * (a missing folder, no permission, a full disk: the user's path). */
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
