/*
 * Program building, through bcl_program_get, where the binary cache slots
 * in. The cache may make a run faster but never wrong and never failed: an
 * entry that cannot be used (for any reason, the driver's refusal included)
 * is a miss that builds from source and later replaces it, and trouble with
 * the folder is a warning.
 */
#define _GNU_SOURCE /* memmem */
#include "files/files.h"
#include "ocl/program.h"
#include "cache/cache.h"
#include "ocl/clcall.h"
#include "util/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

double bcl_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void attach_build_log(cl_program prog, const bcl_device_info *dev, bcl_error *e)
{
    size_t size = 0;
    if (BCL_CL(clGetProgramBuildInfo, prog, dev->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) !=
            CL_SUCCESS ||
        size == 0)
        return;
    char *log = malloc(size + 1);
    if (!log)
        return;
    if (BCL_CL(clGetProgramBuildInfo, prog, dev->device, CL_PROGRAM_BUILD_LOG, size, log, NULL) ==
        CL_SUCCESS) {
        log[size] = '\0';
        bcl_error_set_detail(e, log);
    }
    free(log);
}

int bcl_program_from_source(cl_context ctx, const bcl_device_info *dev, const char *src, size_t len,
                            const char *options, cl_program *out, bcl_error *e)
{
    cl_int st;
    cl_program prog = BCL_CL_CREATE(&st, clCreateProgramWithSource, ctx, 1, &src, &len);
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clCreateProgramWithSource", dev->name);
    st = BCL_CL(clBuildProgram, prog, 1, &(cl_device_id){dev->device}, options, NULL, NULL);
    if (st != CL_SUCCESS) {
        int rc = bcl_cl_fail(e, st, "clBuildProgram", dev->name);
        attach_build_log(prog, dev, e);
        clReleaseProgram(prog);
        return rc;
    }
    *out = prog;
    return BCL_OK;
}

/* snprintf that may cut: report texts are bounded, and a long path is better
 * shortened than lost. */
__attribute__((format(printf, 3, 4))) static void text(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

/*
 * The in-use marker (docs/cache.md): a binary that passes every check may
 * still crash the driver's loader (PoCL), and every later run with it. So
 * while an entry loads, ".<entry>.loading" holds the loader's pid and start
 * time. A marker whose process is gone is a load that never returned: the
 * entry is bad (removed, rebuilt, replaced). A signal removes the marker
 * (src/util/cleanup.c), so Ctrl-C does not condemn a good entry.
 */

/* Process pid's start time (field 22 of /proc/<pid>/stat), or 0: with the
 * pid it names a process uniquely, whatever reuses the pid. */
static unsigned long long start_time(long pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    /* Without the read fault point: a marker's owner is no input of the run's. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char *buf = NULL;
    size_t n = 0;
    int err = bcl_read_fd(fd, 4096, &buf, &n);
    close(fd);
    if (err)
        return 0;
    const char *p = strrchr(buf, ')'); /* the command may hold spaces and ')' */
    /* Fields 3 (state) to 22 (starttime) follow ") ". */
    unsigned long long v = 0;
    for (int field = 3; field <= 22 && p; field++) {
        p = strchr(p + 1, ' ');
        if (p && field == 22)
            v = strtoull(p + 1, NULL, 10);
    }
    free(buf);
    return v;
}

/* Whether the marker's process still runs. One without a pid counts as
 * alive while young (its writer may not have filled it yet). */
static bool marker_alive(const char *path)
{
    int fd = bcl_open_regular(path, true, NULL);
    if (fd < 0)
        return false;
    char buf[64] = "";
    ssize_t n = read(fd, buf, sizeof buf - 1);
    struct stat st;
    bool young = fstat(fd, &st) == 0 && time(NULL) - st.st_mtime < 10;
    close(fd);
    long pid = 0;
    unsigned long long start = 0;
    if (n <= 0 || sscanf(buf, "%ld %llu", &pid, &start) != 2 || pid <= 0)
        return young;
    if (kill((pid_t)pid, 0) != 0 && errno != EPERM)
        return false;
    unsigned long long now = start_time(pid);
    return start == 0 || now == 0 || now == start;
}

typedef struct marker {
    char path[PATH_MAX];
    int slot; /* cleanup registry; -1 when no marker of ours exists */
} marker;

/* Marks the entry in use; false (why filled) when an earlier load never
 * returned, the entry and marker then removed. Under a live marker of
 * another process this load goes unmarked. */
static bool marker_take(const char *entry_path, marker *m, char *why, size_t why_size)
{
    m->slot = -1;
    const char *slash = strrchr(entry_path, '/');
    int w = slash ? snprintf(m->path, sizeof m->path, "%.*s/.%s.loading", (int)(slash - entry_path),
                             entry_path, slash + 1)
                  : snprintf(m->path, sizeof m->path, ".%s.loading", entry_path);
    if (w < 0 || (size_t)w >= sizeof m->path)
        return true; /* no room for a marker: load unmarked */
    sigset_t old;
    bcl_cleanup_block(&old);
    int fd = open(m->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
        m->slot = bcl_cleanup_register(m->path);
    bcl_cleanup_unblock(&old);
    if (fd >= 0) {
        char buf[64];
        int len =
            snprintf(buf, sizeof buf, "%ld %llu\n", (long)getpid(), start_time((long)getpid()));
        (void)!write(fd, buf, (size_t)len);
        close(fd);
        return true;
    }
    if (errno != EEXIST)
        return true; /* an unwritable folder: nothing is stored here either */
    if (marker_alive(m->path))
        return true;
    /* The last loader died inside the driver: this entry is what killed
     * it. Remove both; the rebuilt program replaces the entry. */
    (void)unlink(entry_path);
    (void)unlink(m->path);
    return bcl_why(why, why_size, "its last load did not finish: the process loading it died");
}

static void marker_drop(marker *m)
{
    if (m->slot < 0)
        return;
    (void)unlink(m->path);
    bcl_cleanup_unregister(m->slot);
    m->slot = -1;
}

/* A built program from the entry at path, or false with why (*absent: no entry). */
static bool program_from_entry(cl_context ctx, const bcl_device_info *dev, const char *path,
                               const bcl_cache_key *key, cl_program *out, bool *absent, char *why,
                               size_t why_size)
{
    unsigned char *file = NULL;
    const unsigned char *bin;
    size_t len;
    bcl_cache_lookup r = bcl_cache_entry_read(path, key, &file, &bin, &len, NULL, why, why_size);
    *absent = r == BCL_CACHE_ABSENT;
    if (r != BCL_CACHE_FOUND)
        return false;
    char bad[160];
    if (!bcl_binary_plausible(dev, bin, len, bad, sizeof bad)) {
        free(file);
        return bcl_why(why, why_size, "not a binary of this driver: %.100s", bad);
    }
    marker m;
    if (!marker_take(path, &m, why, why_size)) {
        free(file);
        return false;
    }
    cl_int st, bin_st = CL_SUCCESS;
    cl_program prog = BCL_CL_CREATE(&st, clCreateProgramWithBinary, ctx, 1,
                                    &(cl_device_id){dev->device}, &len, &bin, &bin_st);
    free(file);
    if (st == CL_SUCCESS && bin_st != CL_SUCCESS)
        st = bin_st;
    if (st != CL_SUCCESS) {
        marker_drop(&m);
        if (prog)
            clReleaseProgram(prog);
        return bcl_why(why, why_size, "the driver refused the binary (%s)", bcl_cl_status_name(st));
    }
    /* Options matter for a binary too: they are what the key promised. */
    st = BCL_CL(clBuildProgram, prog, 1, &(cl_device_id){dev->device}, bcl_build_options(dev), NULL,
                NULL);
    marker_drop(&m);
    if (st != CL_SUCCESS) {
        clReleaseProgram(prog);
        return bcl_why(why, why_size, "building from the binary failed (%s)",
                       bcl_cl_status_name(st));
    }
    *out = prog;
    return true;
}

/* A source that includes others would have a key blind to them: never
 * cached. '#', blanks, "include" anywhere, comments too (better a miss than
 * a stale program). */
static bool has_include(const char *src, size_t len)
{
    static const char word[] = "include";
    for (size_t i = 0; i < len; i++) {
        if (src[i] != '#')
            continue;
        size_t j = i + 1;
        while (j < len && (src[j] == ' ' || src[j] == '\t'))
            j++;
        if (len - j >= sizeof word - 1 && memcmp(src + j, word, sizeof word - 1) == 0)
            return true;
    }
    return false;
}

/* BALLCL_CACHE_STORE=build stores right after the build, not after the
 * first launch: a measurement aid (tools/measure_cache.sh). */
static bool store_right_away(bcl_build_report *rep)
{
    const char *when = getenv("BALLCL_CACHE_STORE");
    if (!when || !*when || strcmp(when, "launch") == 0)
        return false;
    if (strcmp(when, "build") == 0)
        return true;
    text(rep->warning, sizeof rep->warning,
         "BALLCL_CACHE_STORE='%s' is neither 'build' nor 'launch': ignored", when);
    return false;
}

/* The folder given, or the user's (created); used only if trusted. */
static int cache_folder(const char *given, char *dir, size_t size, bcl_error *e)
{
    if (given && strlen(given) >= size)
        return bcl_fail(e, BCL_EXIT_INPUT, "cache folder '%.64s...': path too long", given);
    int rc = given ? BCL_OK : bcl_cache_dir_create(dir, size, e);
    if (given)
        strcpy(dir, given);
    char why[PATH_MAX + 160];
    if (rc == BCL_OK && !bcl_cache_folder_ok(dir, why, sizeof why))
        rc = bcl_fail(e, BCL_EXIT_INPUT, "%s", why);
    return rc;
}

/* Said once per process, not once per program (bench, survey). */
static bool warned_folder, warned_entry;

/* A model file's program that failed to build: without the wide
 * variants, when the update alone builds; else the user's error, from the
 * build log's first lines (they name the model's file and line). */
static int build_narrow(cl_context ctx, const bcl_device_info *dev, const bcl_model *m,
                        cl_program *out, bcl_build_report *rep, bcl_error *e)
{
    char *src;
    size_t len;
    bcl_error wide = *e; /* owns the wide build's log now */
    memset(e, 0, sizeof *e);
    int rc = bcl_model_program_source(m, false, &src, &len, e);
    if (rc == BCL_OK) {
        rc = bcl_program_from_source(ctx, dev, src, len, bcl_build_options(dev), out, e);
        free(src);
    }
    bool built = rc == BCL_OK;
    const char *log = (built ? wide.detail : e->detail) ? (built ? wide.detail : e->detail) : "";
    /* Up to four lines that say "error", else the log's first lines. */
    char first[768] = "";
    size_t used = 0;
    unsigned lines = 0;
    for (int pass = 0; pass < 2 && lines == 0; pass++) {
        for (const char *p = log; *p && lines < 4;) {
            size_t l = strcspn(p, "\n");
            if (l && (pass || memmem(p, l, "error", 5)) && used + l + 4 < sizeof first) {
                used += (size_t)snprintf(first + used, sizeof first - used, "%s%.*s",
                                         lines ? " | " : "", (int)l, p);
                lines++;
            }
            p += l + (p[l] == '\n');
        }
    }
    bcl_error_clear(&wide);
    if (built) {
        text(rep->note, sizeof rep->note,
             "no wide variants: the update does not compile on vectors of balls (%.160s)", first);
        return BCL_OK;
    }
    if (!e->detail) /* not a build failure: out of memory, a lost device */
        return rc;
    e->code = BCL_EXIT_INPUT;
    text(e->msg, sizeof e->msg, "model '%s' does not compile on '%s': %s", m->kernel_file,
         dev->name, lines ? first : "the driver gave no build log");
    return BCL_EXIT_INPUT;
}

int bcl_program_get(cl_context ctx, const bcl_device_info *dev, const bcl_model *m, const char *src,
                    size_t len, bool use_cache, const char *cache_dir, cl_program *out,
                    bcl_build_report *rep, bcl_cache_slot *slot, bcl_error *e)
{
    const char *source_name = m->kernel_file;
    memset(rep, 0, sizeof *rep);
    memset(slot, 0, sizeof *slot);
    double t0 = bcl_now_ms();
    char dir[PATH_MAX];
    unsigned char id[32];
    bcl_error ce = {0};
    if (!use_cache) {
        text(rep->note, sizeof rep->note, "built from source, cache not used");
    } else if (has_include(src, len)) {
        text(rep->note, sizeof rep->note,
             "built from source: '%s' has #include, which the cache key cannot see", source_name);
    } else if (cache_folder(cache_dir, dir, sizeof dir, &ce)) {
        if (!warned_folder)
            text(rep->warning, sizeof rep->warning, "%s; running without the binary cache", ce.msg);
        warned_folder = true;
        text(rep->note, sizeof rep->note, "built from source, no usable cache folder");
    } else if (bcl_device_identity(dev, id, &ce) ||
               bcl_cache_key_make(id, src, len, bcl_build_options(dev), &slot->key, &ce) ||
               bcl_cache_entry_path(dir, &slot->key, slot->path, sizeof slot->path, &ce)) {
        text(rep->warning, sizeof rep->warning, "%s; running without the binary cache", ce.msg);
        text(rep->note, sizeof rep->note, "built from source, cache not usable");
    } else {
        char why[160];
        bool absent = false;
        if (program_from_entry(ctx, dev, slot->path, &slot->key, out, &absent, why, sizeof why)) {
            rep->cache_hit = true;
            rep->program_ms = bcl_now_ms() - t0;
            text(rep->note, sizeof rep->note, "from the binary cache");
            return BCL_OK;
        }
        if (!absent && strncmp(why, BCL_CACHE_UNTRUSTED, strlen(BCL_CACHE_UNTRUSTED)) == 0 &&
            !warned_entry) {
            text(rep->warning, sizeof rep->warning,
                 "cache entry '%s' is %s: ignored, the program is built from source", slot->path,
                 why);
            warned_entry = true;
        }
        if (absent)
            text(rep->note, sizeof rep->note, "cache miss: built from source");
        else
            text(rep->note, sizeof rep->note,
                 "cache entry unusable (%s): rebuilt from source, entry replaced", why);
        /* A first answer only (root writes anywhere): the write says the rest. */
        if (access(dir, W_OK | X_OK) != 0) {
            text(rep->warning, sizeof rep->warning,
                 "cache folder '%s' is not writable (%s): the program is not cached", dir,
                 strerror(errno));
            if (!absent)
                text(rep->note, sizeof rep->note, "cache entry unusable (%s): rebuilt from source",
                     why);
        } else {
            slot->pending = true;
            text(slot->labels.device, sizeof slot->labels.device, "%s", dev->name);
            text(slot->labels.platform, sizeof slot->labels.platform, "%s", dev->platform_name);
            text(slot->labels.source, sizeof slot->labels.source, "%s", source_name);
        }
    }
    int rc = bcl_program_from_source(ctx, dev, src, len, bcl_build_options(dev), out, e);
    if (rc && m->file && strcmp(e->cl_call, "clBuildProgram") == 0)
        rc = build_narrow(ctx, dev, m, out, rep, e);
    rep->program_ms = bcl_now_ms() - t0;
    if (rc)
        slot->pending = false;
    else if (slot->pending && store_right_away(rep))
        bcl_program_cache_store(*out, dev, slot, rep);
    return rc;
}

void bcl_program_cache_store(cl_program prog, const bcl_device_info *dev, bcl_cache_slot *slot,
                             bcl_build_report *rep)
{
    if (!slot->pending)
        return;
    slot->pending = false;
    double t0 = bcl_now_ms();
    size_t size = 0;
    cl_int st = BCL_CL(clGetProgramInfo, prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
    unsigned char *bin = NULL;
    bcl_error e = {0};
    if (st == CL_SUCCESS && size > 0 && (bin = malloc(size)) != NULL) {
        unsigned char *bins[1] = {bin};
        st = BCL_CL(clGetProgramInfo, prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL);
    }
    if (st != CL_SUCCESS)
        bcl_cl_fail(&e, st, "clGetProgramInfo(CL_PROGRAM_BINARIES)", dev->name);
    else if (size == 0)
        bcl_fail(&e, BCL_EXIT_RUNTIME, "the driver gave an empty binary");
    else if (!bin)
        bcl_fail(&e, BCL_EXIT_RUNTIME, "out of memory for a %zu-byte binary", size);
    else
        bcl_cache_entry_write(slot->path, &slot->key, &slot->labels, bin, size, &e);
    free(bin);
    if (!rep)
        return;
    rep->store_ms = bcl_now_ms() - t0;
    rep->cache_stored = e.code == 0;
    if (e.code)
        text(rep->warning, sizeof rep->warning, "program not stored in the cache: %s", e.msg);
}
