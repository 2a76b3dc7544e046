/*
 * The C reference of a user model (issue #38): the user's update, in C,
 * compiled at run time with the system compiler and run in a child
 * process, so that a reference that faults, loops or exits cannot take
 * ballcl down with it, and its time can be bounded.
 *
 * The program compiled is a prelude, the user's text and a driver (below).
 * Parent and child speak through pipes: the parent writes a header (n,
 * steps, nparams and the flush flag as three uint64), the parameters and
 * the 4n floats; the child reads it all, steps every ball, and writes the
 * 4n floats back. Because the child writes nothing before it has read
 * everything, the parent reads the answer only once its writes are done,
 * straight into the caller's state; poll with the deadline interleaves the
 * writes with the child's stderr, so no pipe fills up on either side.
 */
#define _GNU_SOURCE /* pipe2, mkdtemp, strsignal */
#include "models/models.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* A model file is text a person wrote: far below this. */
#define MAX_SOURCE_BYTES (16u << 20)
/* What is kept of a child's output for messages. */
#define LOG_KEEP 65536

/* Always given; the optional flags are added where the compiler takes them.
 * -ffp-contract=off: no fused multiply-add the device would not do either. */
static const char *const base_flags[] = {"-std=c11", "-O2", "-ffp-contract=off", "-fno-fast-math"};
#define BASE_FLAGS (sizeof base_flags / sizeof base_flags[0])
/* Bumped when the prelude, the driver or the flags' recipe change. */
#define CREF_RECIPE "ballcl-cref-1"

/* The driver, after the user's text; %s: update's arguments after the
 * ball, %u: nparams (twice). Its names start with bcl_ref_, away from the
 * user's. The user's own prints go to stderr (fd 1 is pointed there), so
 * that only the driver writes the answer. */
static const char driver_fmt[] =
    "\n#line 1 \"<ballcl reference driver>\"\n"
    "#include <stdint.h>\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <unistd.h>\n"
    "#if defined(__x86_64__) || defined(__i386__)\n"
    "#include <xmmintrin.h>\n"
    "#include <pmmintrin.h>\n"
    "#endif\n"
    "static int bcl_ref_io(int fd, void *buf, size_t len, int out)\n"
    "{\n"
    "    char *p = buf;\n"
    "    while (len > 0) {\n"
    "        ssize_t k = out ? write(fd, p, len) : read(fd, p, len);\n"
    "        if (k <= 0)\n"
    "            return -1;\n"
    "        p += k;\n"
    "        len -= (size_t)k;\n"
    "    }\n"
    "    return 0;\n"
    "}\n"
    "/* Flush-to-zero and denormals-are-zero: 0, or -1 where ballcl knows no way. */\n"
    "static int bcl_ref_flush(void)\n"
    "{\n"
    "#if defined(__x86_64__) || defined(__i386__)\n"
    "    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);\n"
    "    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);\n"
    "    return 0;\n"
    "#elif defined(__aarch64__)\n"
    "    uint64_t r;\n"
    "    __asm__ __volatile__(\"mrs %%0, fpcr\" : \"=r\"(r));\n"
    "    r |= (uint64_t)1 << 24;\n"
    "    __asm__ __volatile__(\"msr fpcr, %%0\" : : \"r\"(r));\n"
    "    return 0;\n"
    "#else\n"
    "    return -1;\n"
    "#endif\n"
    "}\n"
    "static int bcl_ref_fail(const char *what)\n"
    "{\n"
    "    fprintf(stderr, \"%%s\\n\", what);\n"
    "    return 4;\n"
    "}\n"
    "int main(void)\n"
    "{\n"
    "    int out = dup(1);\n"
    "    if (out < 0 || dup2(2, 1) < 0)\n"
    "        return bcl_ref_fail(\"cannot set up its output\");\n"
    "    uint64_t head[3];\n"
    "    float prm[%u + 1];\n"
    "    if (bcl_ref_io(0, head, sizeof head, 0))\n"
    "        return bcl_ref_fail(\"its input ended in the header\");\n"
    "    size_t n = (size_t)head[0], np = (size_t)(head[2] & 0xffffffffu);\n"
    "    uint64_t steps = head[1];\n"
    "    int flush = (int)(head[2] >> 32);\n"
    "    if (np != %u || n != head[0] || n > SIZE_MAX / sizeof(float4))\n"
    "        return bcl_ref_fail(\"its input's header is not ballcl's\");\n"
    "    if (bcl_ref_io(0, prm, np * sizeof(float), 0))\n"
    "        return bcl_ref_fail(\"its input ended in the parameters\");\n"
    "    float4 *bcl_ref_b = malloc(n * sizeof(float4) + 1);\n"
    "    if (!bcl_ref_b)\n"
    "        return bcl_ref_fail(\"out of memory for the state\");\n"
    "    if (bcl_ref_io(0, bcl_ref_b, n * sizeof(float4), 0))\n"
    "        return bcl_ref_fail(\"its input ended in the state\");\n"
    "    if (flush && bcl_ref_flush())\n"
    "        return bcl_ref_fail(\"this CPU has no flush-to-zero control ballcl knows\");\n"
    "#pragma omp parallel\n"
    "    {\n"
    "        if (flush)\n"
    "            bcl_ref_flush(); /* the mode is per thread */\n"
    "#pragma omp for schedule(static)\n"
    "        for (size_t i = 0; i < n; i++) {\n"
    "            float4 b = bcl_ref_b[i];\n"
    "            for (uint64_t k = 0; k < steps; k++)\n"
    "                b = update(b%s);\n"
    "            bcl_ref_b[i] = b;\n"
    "        }\n"
    "    }\n"
    "    if (bcl_ref_io(out, bcl_ref_b, n * sizeof(float4), 1))\n"
    "        return bcl_ref_fail(\"cannot write its answer\");\n"
    "    return 0;\n"
    "}\n";

/* The executable is held open, and run through /proc/self/fd: a private
 * build's folder is gone as soon as the executable is open, so no caller
 * that forgets to close, and no signal, can leave it behind, and a cache
 * entry replaced meanwhile changes nothing. */
struct bcl_cref {
    char *path;         /* FILE.c as given, for messages */
    char exe[PATH_MAX]; /* where the executable was built or found, for messages */
    int fd;             /* the executable, open; -1 before */
    unsigned nparams;
};

/* ---- child processes ----------------------------------------------------- */

/* argv spawned with stdin from /dev/null and stdout and stderr into one
 * pipe: its first LOG_KEEP bytes in *log (malloc'ed, NUL-terminated) and
 * its wait status. -1 with errno when it could not start. */
static int run_capture(const char *const *argv, char **log, int *status)
{
    int p[2];
    *log = NULL;
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_adddup2(&fa, p[1], 2);
    pid_t pid;
    int err = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (err != 0) {
        close(p[0]);
        errno = err;
        return -1;
    }
    char *buf = malloc(LOG_KEEP + 1);
    size_t used = 0;
    for (;;) {
        char chunk[4096];
        ssize_t k = read(p[0], chunk, sizeof chunk);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        size_t take = buf && used < LOG_KEEP ? LOG_KEEP - used : 0;
        take = take < (size_t)k ? take : (size_t)k;
        if (take)
            memcpy(buf + used, chunk, take);
        used += take;
    }
    close(p[0]);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    if (buf)
        buf[used] = '\0';
    *log = buf;
    return 0;
}

/* The compiler: $BALLCL_CC (a path, or a name looked up on PATH), else cc
 * on PATH, resolved into out. */
static int find_compiler(char *out, size_t size, bcl_error *e)
{
    const char *env = getenv("BALLCL_CC");
    bool from_env = env && *env;
    const char *name = from_env ? env : "cc";
    const char *what = from_env ? "$BALLCL_CC" : "the C compiler";
    if (strchr(name, '/')) {
        if (access(name, X_OK) == 0 && snprintf(out, size, "%s", name) < (int)size)
            return BCL_OK;
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "no C compiler for the reference: %s '%s' is not an executable file", what,
                        name);
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t len = strcspn(p, ":");
        if (len && snprintf(out, size, "%.*s/%s", (int)len, p, name) < (int)size &&
            access(out, X_OK) == 0)
            return BCL_OK;
        p += len + (p[len] == ':');
    }
    return bcl_fail(e, BCL_EXIT_INPUT, "no C compiler for the reference: %s '%s' is not on PATH%s",
                    what, name, from_env ? "" : " (set $BALLCL_CC to one)");
}

/* What the key knows of the compiler: the first line of `cc --version`, or
 * its path and modification time when it answers nothing. */
static void compiler_identity(const char *cc, char *out, size_t size)
{
    const char *argv[] = {cc, "--version", NULL};
    char *log;
    int status;
    if (run_capture(argv, &log, &status) == 0 && log && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0 && *log) {
        snprintf(out, size, "%.*s", (int)strcspn(log, "\n"), log);
        free(log);
        return;
    }
    free(log);
    struct stat st;
    long long mtime = stat(cc, &st) == 0 ? (long long)st.st_mtime : 0;
    snprintf(out, size, "%.400s %lld", cc, mtime);
}

/* Whether cc builds a small program with flag (-Werror: clang only warns
 * about a flag it ignores). */
static bool compiler_takes(const char *cc, const char *dir, const char *flag, const char *program)
{
    char src[PATH_MAX], exe[PATH_MAX];
    snprintf(src, sizeof src, "%s/probe.c", dir);
    snprintf(exe, sizeof exe, "%s/probe", dir);
    FILE *f = fopen(src, "w");
    if (!f)
        return false;
    bool written = fputs(program, f) >= 0;
    written = fclose(f) == 0 && written;
    const char *argv[] = {cc, "-Werror", flag, "-o", exe, src, NULL};
    char *log = NULL;
    int status;
    bool ok = written && run_capture(argv, &log, &status) == 0 && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0;
    free(log);
    unlink(src);
    unlink(exe);
    return ok;
}

/* ---- building ------------------------------------------------------------ */

/* The prelude, the user's text and the driver, malloc'ed. */
static char *program_text(const char *path, const char *text, size_t len, unsigned nparams)
{
    char quoted[2 * PATH_MAX + 1];
    size_t q = 0;
    for (const char *p = path; *p && q + 4 < sizeof quoted; p++) {
        if (*p == '"' || *p == '\\')
            quoted[q++] = '\\';
        quoted[q++] = *p == '\n' ? ' ' : *p;
    }
    quoted[q] = '\0';
    char args[BCL_MAX_PARAMS * 12 + 1] = "";
    for (unsigned i = 0, used = 0; i < nparams; i++)
        used += (unsigned)snprintf(args + used, sizeof args - used, ", prm[%u]", i);
    /* tgmath: sqrt(x) of a float x is the float sqrt, as in OpenCL C. */
    static const char prelude_fmt[] = "#define _POSIX_C_SOURCE 200809L\n"
                                      "#include <tgmath.h>\n"
                                      "typedef struct { float x, y, z, w; } float4;\n"
                                      "#line 1 \"%s\"\n";
    int pre = snprintf(NULL, 0, prelude_fmt, quoted);
    int drv = snprintf(NULL, 0, driver_fmt, nparams, nparams, args);
    char *out = malloc((size_t)pre + len + 1 + (size_t)drv + 1);
    if (!out)
        return NULL;
    snprintf(out, (size_t)pre + 1, prelude_fmt, quoted);
    memcpy(out + pre, text, len);
    out[pre + len] = '\n';
    snprintf(out + pre + len + 1, (size_t)drv + 1, driver_fmt, nparams, nparams, args);
    return out;
}

/* Whether a compiler's line says what failed (gcc's and clang's "error:",
 * "fatal error:", the linker's "undefined reference"), rather than quoting
 * the source or giving context. */
static bool error_line(const char *line, size_t len)
{
    static const char *const marks[] = {"error:", "undefined reference"};
    for (size_t m = 0; m < sizeof marks / sizeof marks[0]; m++)
        if (memmem(line, len, marks[m], strlen(marks[m])))
            return true;
    return false;
}

/* "reference 'FILE.c' does not compile: " and the compiler's first three
 * error lines (its first three lines when none says error), joined by
 * " | "; the whole log as detail. */
static int compile_failed(const char *path, const char *log, int status, bcl_error *e)
{
    if (!WIFEXITED(status))
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "reference '%s' does not compile: the compiler was killed by signal %d",
                        path, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    log = log ? log : "";
    char shown[640] = "";
    size_t used = 0;
    for (int pass = 0, lines = 0; pass < 2 && lines == 0; pass++)
        for (const char *from = log; *from && lines < 3 && used + 4 < sizeof shown;) {
            size_t len = strcspn(from, "\n");
            const char *line = from;
            from += len + (from[len] == '\n');
            while (len && (*line == ' ' || *line == '\t')) {
                line++;
                len--;
            }
            if (len && (pass == 1 || error_line(line, len)))
                used += (size_t)snprintf(shown + used, sizeof shown - used, "%s%.*s",
                                         lines++ ? " | " : "", (int)len, line);
        }
    bcl_fail(e, BCL_EXIT_INPUT, "reference '%s' does not compile: %s", path,
             *shown ? shown : "the compiler failed and said nothing");
    if (*log)
        bcl_error_set_detail(e, log);
    return BCL_EXIT_INPUT;
}

/* Compiles program (in dir, as reference.c) into exe. */
static int compile(const char *cc, const char *dir, const char *program, const char *exe,
                   const char *path, bcl_error *e)
{
    char src[PATH_MAX];
    snprintf(src, sizeof src, "%s/reference.c", dir);
    FILE *f = fopen(src, "w");
    bool written = f && fputs(program, f) >= 0;
    if (f)
        written = fclose(f) == 0 && written;
    if (!written)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "cannot write the reference's program '%s': %s", src,
                        strerror(errno));
    const char *argv[BASE_FLAGS + 10];
    size_t a = 0;
    argv[a++] = cc;
    for (size_t i = 0; i < BASE_FLAGS; i++)
        argv[a++] = base_flags[i];
    if (compiler_takes(cc, dir, "-fexcess-precision=standard", "int main(void) { return 0; }\n"))
        argv[a++] = "-fexcess-precision=standard";
    if (compiler_takes(cc, dir, "-fopenmp",
                       "#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n"))
        argv[a++] = "-fopenmp";
    argv[a++] = "-o";
    argv[a++] = exe;
    argv[a++] = src;
    argv[a++] = "-lm";
    argv[a] = NULL;
    char *log;
    int status;
    if (run_capture(argv, &log, &status) != 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "reference '%s': cannot run the C compiler '%s': %s",
                        path, cc, strerror(errno));
    int rc = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? BCL_OK
                                                           : compile_failed(path, log, status, e);
    free(log);
    return rc;
}

/* A private folder under $TMPDIR (else /tmp) into out. */
static int make_private(char *out, size_t size, bcl_error *e)
{
    const char *base = getenv("TMPDIR");
    snprintf(out, size, "%s/ballcl-cref.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(out))
        return bcl_fail(e, BCL_EXIT_RUNTIME, "cannot create a folder for the reference in '%s': %s",
                        base && *base ? base : "/tmp", strerror(errno));
    return BCL_OK;
}

/* Removes the private folder's files (ours alone: reference.c, the
 * executable, the probes) and the folder. */
static void remove_private(const char *dir)
{
    static const char *const names[] = {"reference.c", "reference", "probe.c", "probe"};
    char p[PATH_MAX];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (snprintf(p, sizeof p, "%s/%s", dir, names[i]) < (int)sizeof p)
            unlink(p);
    }
    rmdir(dir);
}

/* Whether st is the user's (or root's) and no one else may write it: an
 * executable we would run must not be another user's to replace. */
static bool ours(const struct stat *st)
{
    return (st->st_uid == geteuid() || st->st_uid == 0) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* <cache_dir>/reference into out, each of the two made 0700 if missing (a
 * cache folder named but not made yet: the first run makes it); refused
 * when it is not a folder of the user's that only the user may write. */
static int reference_folder(const char *cache_dir, char *out, size_t size, bcl_error *e)
{
    if (snprintf(out, size, "%s/reference", cache_dir) >= (int)size)
        return bcl_fail(e, BCL_EXIT_INPUT, "cache folder '%s': path too long", cache_dir);
    const char *folders[] = {cache_dir, out};
    for (size_t i = 0; i < 2; i++)
        if (mkdir(folders[i], 0700) != 0 && errno != EEXIST)
            return bcl_fail(e, BCL_EXIT_INPUT, "cannot create the references' folder '%s': %s",
                            folders[i], strerror(errno));
    struct stat st;
    if (lstat(out, &st) != 0 || !S_ISDIR(st.st_mode) || !ours(&st))
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "the references' folder '%s' is not trusted: it must be a folder of "
                        "yours that no one else may write",
                        out);
    return BCL_OK;
}

/* Builds program into the cache entry exe (a temporary beside it renamed
 * over it, so that a reader never runs half an executable). */
static int build_cached(const char *cc, const char *program, const char *exe, const char *path,
                        bcl_error *e)
{
    char dir[PATH_MAX], tmp[PATH_MAX];
    int rc = make_private(dir, sizeof dir, e);
    if (rc)
        return rc;
    int fd = snprintf(tmp, sizeof tmp, "%s.XXXXXX", exe) < (int)sizeof tmp ? mkstemp(tmp) : -1;
    if (fd < 0)
        rc = bcl_fail(e, BCL_EXIT_INPUT, "cannot write the reference's executable '%s': %s", tmp,
                      strerror(errno));
    else
        close(fd);
    if (rc == BCL_OK)
        rc = compile(cc, dir, program, tmp, path, e);
    if (rc == BCL_OK && (chmod(tmp, 0700) != 0 || rename(tmp, exe) != 0))
        rc = bcl_fail(e, BCL_EXIT_INPUT, "cannot write the reference's executable '%s': %s", exe,
                      strerror(errno));
    if (rc != BCL_OK && fd >= 0)
        unlink(tmp);
    remove_private(dir);
    return rc;
}

/* Opens r's executable (r->exe) to run it from then on. */
static int hold(bcl_cref *r, bcl_error *e)
{
    r->fd = open(r->exe, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "cannot open the reference's executable '%s': %s",
                        r->exe, strerror(errno));
    return BCL_OK;
}

/* r's executable from the cache folder: the entry of this program, flags
 * and compiler when there is one of the user's, else built into it. */
static int open_cached(bcl_cref *r, const char *cc, const char *program, const char *cache_dir,
                       bcl_error *e)
{
    char identity[512], folder[PATH_MAX], hex[65];
    compiler_identity(cc, identity, sizeof identity);
    /* The recipe names the optional flags' rule; the identity decides
     * which of them the compiler takes. */
    char flags[256] = CREF_RECIPE;
    for (size_t i = 0; i < BASE_FLAGS; i++)
        snprintf(flags + strlen(flags), sizeof flags - strlen(flags), " %s", base_flags[i]);
    const void *parts[] = {flags, program, identity};
    size_t lens[] = {strlen(flags) + 1, strlen(program) + 1, strlen(identity)};
    unsigned char key[32];
    int rc = bcl_sha256_parts(parts, lens, 3, key, e);
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < 32; i++) {
        hex[2 * i] = digits[key[i] >> 4];
        hex[2 * i + 1] = digits[key[i] & 15];
    }
    hex[64] = '\0';
    if (rc == BCL_OK)
        rc = reference_folder(cache_dir, folder, sizeof folder, e);
    if (rc == BCL_OK && snprintf(r->exe, sizeof r->exe, "%s/%s", folder, hex) >= (int)sizeof r->exe)
        rc = bcl_fail(e, BCL_EXIT_INPUT, "cache folder '%s': path too long", cache_dir);
    struct stat st;
    bool cached = rc == BCL_OK && lstat(r->exe, &st) == 0 && S_ISREG(st.st_mode) &&
                  (st.st_mode & S_IXUSR) && ours(&st);
    if (rc == BCL_OK && !cached)
        rc = build_cached(cc, program, r->exe, r->path, e);
    return rc ? rc : hold(r, e);
}

/* r's executable built in a private folder, removed once it is open. */
static int open_private(bcl_cref *r, const char *cc, const char *program, bcl_error *e)
{
    char dir[PATH_MAX];
    int rc = make_private(dir, sizeof dir, e);
    if (rc)
        return rc;
    if (snprintf(r->exe, sizeof r->exe, "%s/reference", dir) >= (int)sizeof r->exe)
        rc = bcl_fail(e, BCL_EXIT_INPUT, "reference folder '%s': path too long", dir);
    if (rc == BCL_OK)
        rc = compile(cc, dir, program, r->exe, r->path, e);
    if (rc == BCL_OK)
        rc = hold(r, e);
    remove_private(dir);
    return rc;
}

int bcl_cref_open(const char *path, unsigned nparams, const char *const *param_names,
                  const char *cache_dir, bool use_cache, bcl_cref **out, bcl_error *e)
{
    *out = NULL;
    if (nparams > BCL_MAX_PARAMS)
        return bcl_fail(e, BCL_EXIT_INPUT, "reference '%s': %u parameters, at most %d", path,
                        nparams, BCL_MAX_PARAMS);
    char *text;
    size_t len;
    int err = bcl_read_file(path, MAX_SOURCE_BYTES, &text, &len, NULL);
    if (err)
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot read reference '%s': %s", path,
                        bcl_read_error(err));
    int rc = bcl_source_check_literals(text, len, path, e);
    if (rc == BCL_OK)
        rc = bcl_source_check_update(text, len, path, nparams, param_names, NULL, e);
    char cc[PATH_MAX];
    if (rc == BCL_OK)
        rc = find_compiler(cc, sizeof cc, e);
    char *program = rc == BCL_OK ? program_text(path, text, len, nparams) : NULL;
    free(text);
    if (rc == BCL_OK && !program)
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory reading reference '%s'", path);
    bcl_cref *r = rc == BCL_OK ? calloc(1, sizeof *r) : NULL;
    if (r)
        r->fd = -1; /* before anything can fail: close looks at it */
    if (rc == BCL_OK && (!r || !(r->path = strdup(path))))
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory opening reference '%s'", path);
    if (rc == BCL_OK) {
        r->nparams = nparams;
        rc = use_cache && cache_dir ? open_cached(r, cc, program, cache_dir, e)
                                    : open_private(r, cc, program, e);
    }
    free(program);
    if (rc == BCL_OK)
        *out = r;
    else
        bcl_cref_close(r);
    return rc;
}

void bcl_cref_close(bcl_cref *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r->path);
    free(r);
}

/* ---- running ------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits for pid until the deadline (polling: waitpid has no timeout):
 * true with its status, false when it is still running then. */
static bool wait_until(pid_t pid, double deadline, int *status)
{
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            return true;
        if (now_s() >= deadline)
            return false;
        struct timespec nap = {0, 5000000};
        nanosleep(&nap, NULL);
    }
}

/* The child's end of a run: stdin, stdout and stderr pipes and the pid. */
typedef struct child {
    pid_t pid;
    int in, out, err; /* the parent's ends; -1 once closed */
} child;

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Starts exe with pipes on its stdin, stdout and stderr, and mask (the
 * caller's, not this thread's with SIGPIPE blocked) as its signal mask. */
static int child_start(const char *exe, const sigset_t *mask, child *c)
{
    int in[2], out[2], err[2];
    c->in = c->out = c->err = -1;
    if (pipe2(in, O_CLOEXEC) != 0)
        return errno;
    if (pipe2(out, O_CLOEXEC) != 0) {
        int x = errno;
        close(in[0]);
        close(in[1]);
        return x;
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        int x = errno;
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        return x;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setsigmask(&at, mask);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
    char *argv[] = {(char *)exe, NULL};
    int x = posix_spawn(&c->pid, exe, &fa, &at, argv, environ);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    c->in = in[1];
    c->out = out[0];
    c->err = err[0];
    if (x != 0) {
        close_fd(&c->in);
        close_fd(&c->out);
        close_fd(&c->err);
        return x;
    }
    fcntl(c->in, F_SETFL, O_NONBLOCK);
    fcntl(c->out, F_SETFL, O_NONBLOCK);
    fcntl(c->err, F_SETFL, O_NONBLOCK);
    return 0;
}

/* The bytes going to the child: header, parameters, state. */
typedef struct feed {
    const char *part[3];
    size_t len[3];
    size_t at, off; /* the part being written, and how far into it */
} feed;

/* Moves what the pipes take until the answer is whole and the child closed
 * both its outputs, or the deadline: 1 done, 0 timed out. *got: bytes of
 * the answer read; *extra: whether the child wrote more than the answer. */
static int exchange(child *c, feed *f, char *answer, size_t total, size_t *got, bool *extra,
                    char *errlog, size_t errsize, double deadline)
{
    size_t errused = 0;
    while (c->out >= 0 || c->err >= 0) {
        double left = deadline - now_s();
        if (left <= 0)
            return 0;
        struct pollfd p[3] = {{c->in, POLLOUT, 0}, {c->out, POLLIN, 0}, {c->err, POLLIN, 0}};
        /* The answer is read once all was written: the child writes none
         * before, and the state it lands in is still being sent. */
        if (c->in >= 0)
            p[1].fd = -1;
        int ms = left > 1000 ? 1000 : (int)(left * 1000) + 1;
        if (poll(p, 3, ms) < 0 && errno != EINTR)
            return 0;
        if (c->in >= 0 && p[0].revents) {
            while (f->at < 3 && f->off == f->len[f->at]) {
                f->at++;
                f->off = 0;
            }
            ssize_t w = 0;
            if (f->at < 3) {
                size_t chunk = f->len[f->at] - f->off;
                w = write(c->in, f->part[f->at] + f->off, chunk > (1u << 20) ? 1u << 20 : chunk);
            }
            if (w > 0)
                f->off += (size_t)w;
            /* All sent, or the child stopped reading (EPIPE): its exit
             * status says why. */
            if (f->at == 3 || (w < 0 && errno != EAGAIN && errno != EINTR))
                close_fd(&c->in);
        }
        if (c->out >= 0 && p[1].revents) {
            char scratch[4096];
            char *to = *got < total ? answer + *got : scratch;
            size_t room = *got < total ? total - *got : sizeof scratch;
            ssize_t k = read(c->out, to, room);
            if (k > 0 && *got < total)
                *got += (size_t)k;
            else if (k > 0)
                *extra = true;
            if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
                close_fd(&c->out);
        }
        if (c->err >= 0 && p[2].revents) {
            char scratch[4096];
            ssize_t k = read(c->err, scratch, sizeof scratch);
            size_t take = k > 0 && errused + 1 < errsize ? errsize - 1 - errused : 0;
            take = take < (size_t)(k > 0 ? k : 0) ? take : (size_t)k;
            memcpy(errlog + errused, scratch, take);
            errused += take;
            errlog[errused] = '\0';
            if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
                close_fd(&c->err);
        }
    }
    return 1;
}

/* The one line of a failed run, from the child's status and stderr. */
static int run_failed(const bcl_cref *r, int status, const char *errlog, size_t got, size_t total,
                      bool extra, bcl_error *e)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        return bcl_fail(e, BCL_EXIT_INPUT, "reference '%s' was killed by signal %d (%s)", r->path,
                        sig, strsignal(sig));
    }
    int first = (int)strcspn(errlog, "\n");
    if (WEXITSTATUS(status) != 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "reference '%s' exited with status %d%s%.*s", r->path,
                        WEXITSTATUS(status), first ? ": " : "", first, errlog);
    if (extra)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "reference '%s' wrote more than the %zu bytes of the state", r->path,
                        total);
    return bcl_fail(e, BCL_EXIT_INPUT, "reference '%s' wrote %zu of the %zu bytes of the state",
                    r->path, got, total);
}

int bcl_cref_run(bcl_cref *r, float *state, size_t n, uint64_t steps, const float *params,
                 double limit_s, bool flush_denormals, bcl_error *e)
{
#if !defined(__x86_64__) && !defined(__i386__) && !defined(__aarch64__)
    if (flush_denormals)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "reference '%s': cannot flush denormals to zero on this CPU (ballcl "
                        "knows x86's MXCSR and aarch64's FPCR)",
                        r->path);
#endif
    if (n > SIZE_MAX / 16)
        return bcl_fail(e, BCL_EXIT_INPUT, "reference '%s': %zu balls do not fit in memory",
                        r->path, n);
    if (limit_s <= 0)
        limit_s = 60 + (double)n * (double)steps / 1e8;
    uint64_t head[3] = {n, steps, r->nparams | (uint64_t)flush_denormals << 32};
    size_t total = 16 * n;
    feed f = {{(const char *)head, (const char *)params, (const char *)state},
              {sizeof head, r->nparams * sizeof(float), total},
              0,
              0};
    /* A child that stops reading makes write() raise SIGPIPE: blocked in
     * this thread (the process's handlers are the program's business), and
     * one that this run raised taken back before the mask is restored. */
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE);

    child c;
    /* The child's copy of fd (close-on-exec) is still open while the
     * kernel opens this path: the executable held, whatever became of
     * its file. */
    char exe[64];
    snprintf(exe, sizeof exe, "/proc/self/fd/%d", r->fd);
    int x = child_start(exe, &old, &c);
    int rc = BCL_OK;
    if (x != 0)
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "cannot start reference '%s' ('%s'): %s%s", r->path,
                      r->exe, strerror(x),
                      x == EACCES ? " (a folder mounted noexec? set $TMPDIR or the cache folder "
                                    "to another)"
                                  : "");
    if (rc == BCL_OK) {
        double deadline = now_s() + limit_s;
        size_t got = 0;
        bool extra = false;
        char errlog[1024] = "";
        int status = 0;
        bool done =
            exchange(&c, &f, (char *)state, total, &got, &extra, errlog, sizeof errlog, deadline) &&
            wait_until(c.pid, deadline, &status);
        if (!done) {
            kill(c.pid, SIGTERM);
            if (!wait_until(c.pid, now_s() + 1, &status)) {
                kill(c.pid, SIGKILL);
                while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR)
                    ;
            }
            rc = bcl_fail(e, BCL_EXIT_INPUT, "reference '%s' ran past its time limit of %g s",
                          r->path, limit_s);
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != total || extra)
            rc = run_failed(r, status, errlog, got, total, extra, e);
    }
    close_fd(&c.in);
    close_fd(&c.out);
    close_fd(&c.err);
    sigpending(&pending);
    if (!was_pending && sigismember(&pending, SIGPIPE)) {
        struct timespec zero = {0, 0};
        (void)sigtimedwait(&pipe_set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
