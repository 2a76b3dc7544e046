/*
 * The ranks agree on what the job is (docs/SCALING.md, "What the ranks must
 * agree on") before any collective that depends on it. Whatever a rank does
 * (its options parsed, refused, or --help), its first collective is one
 * allgather of a fixed record, so the call always matches and never hangs.
 */
#include "ranks.h"

#include "files/files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool agreed;

/* What each rank sends: its status and its fields' hashes (0: none). */
typedef struct agree_record {
    int32_t rc;
    int32_t reported; /* the rank printed its failure itself */
    uint64_t hash[RANKS_JOB_FIELDS];
} agree_record;

/* a, sep and b in one malloc'ed text (NULL when out of memory). */
static char *joined(const char *a, const char *sep, const char *b)
{
    size_t len = strlen(a) + strlen(sep) + strlen(b) + 1;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%s%s%s", a, sep, b);
    return s;
}

/* path made absolute (malloc'ed): resolved when it exists; else its folder
 * resolved and the name appended; else joined to the working folder. */
static char *absolute_path(const char *path)
{
    char *real = realpath(path, NULL);
    if (real)
        return real;
    const char *slash = strrchr(path, '/');
    /* Its folder: "/" of "/name", "." of "name". */
    char folder[PATH_MAX];
    int len = slash && slash > path ? (int)(slash - path) : 1;
    snprintf(folder, sizeof folder, "%.*s", len, slash ? path : ".");
    const char *base = slash ? slash + 1 : path;
    char *dir = realpath(folder, NULL);
    char cwd[PATH_MAX];
    if (!dir && path[0] != '/' && getcwd(cwd, sizeof cwd))
        return joined(cwd, "/", path);
    if (!dir)
        return strdup(path);
    char *abs = joined(dir, strcmp(dir, "/") ? "/" : "", base);
    free(dir);
    return abs;
}

void ranks_job_init(ranks_job *j, const char *command)
{
    memset(j, 0, sizeof *j);
    ranks_job_add(j, "the command", "%s", command);
}

void ranks_job_add(ranks_job *j, const char *name, const char *fmt, ...)
{
    /* More fields than the record holds fold into its last one: still
     * compared, named by the last. */
    size_t i = j->count < RANKS_JOB_FIELDS ? j->count++ : RANKS_JOB_FIELDS - 1;
    char value[PATH_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    snprintf(j->field[i].name, sizeof j->field[i].name, "%s", name);
    char *old = j->field[i].value;
    j->field[i].value = old ? joined(old, " ", value) : strdup(value);
    free(old);
}

void ranks_job_add_path(ranks_job *j, const char *name, const char *path)
{
    if (!path) {
        ranks_job_add(j, name, "not given");
        return;
    }
    char *abs = absolute_path(path);
    ranks_job_add(j, name, "'%s'", abs ? abs : path);
    free(abs);
}

void ranks_job_free(ranks_job *j)
{
    for (size_t i = 0; i < j->count; i++)
        free(j->field[i].value);
}

/* FNV-1a over the field's name and value. */
static uint64_t field_hash(const char *name, const char *value)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *s = name; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    h = (h ^ 0xff) * 0x100000001b3ull; /* a separator no text holds */
    for (const char *s = value ? value : ""; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h | 1; /* 0 means "no such field" */
}

/* Rank 0: "ranks disagree on -s: rank 0 5, rank 1 4", ranks with the same
 * value grouped ("ranks 0,2 5"), from texts[r] "name\1value" (freed). */
static void print_disagreement(char **texts, int size)
{
    size_t name_len = strcspn(texts[0], "\1");
    bool same_name = true;
    for (int r = 1; r < size; r++) /* the name and its \1 */
        same_name = same_name && strncmp(texts[r], texts[0], name_len + 1) == 0;
    char line[4096], escaped[4 * sizeof line + 1];
    size_t cap = sizeof line;
    bool *done = calloc((size_t)size, sizeof *done);
    if (!done) {
        fprintf(stderr, "ballcl: the ranks disagree on the job\n");
        goto out;
    }
    size_t len =
        (size_t)snprintf(line, cap, "ranks disagree on %.*s:", same_name ? (int)name_len : 11,
                         same_name ? texts[0] : "the options");
    int groups = 0;
    for (int r = 0; r < size && len < cap; r++) {
        if (done[r])
            continue;
        if (groups++ == 8) {
            len += (size_t)snprintf(line + len, cap - len, ", ...");
            break;
        }
        int members = 0;
        for (int q = r; q < size; q++)
            members += strcmp(texts[q], texts[r]) == 0;
        len += (size_t)snprintf(line + len, cap - len, "%s %s", groups > 1 ? "," : "",
                                members > 1 ? "ranks" : "rank");
        int shown = 0;
        for (int q = r; q < size && len < cap; q++) {
            if (strcmp(texts[q], texts[r]) != 0)
                continue;
            done[q] = true;
            if (shown++ < 8)
                len += (size_t)snprintf(line + len, cap - len, "%s%d", shown > 1 ? "," : " ", q);
            else if (shown == 9)
                len += (size_t)snprintf(line + len, cap - len, ",...");
        }
        /* The value, after the name when the ranks differ in names. */
        int nl = (int)strcspn(texts[r], "\1");
        if (len < cap)
            len +=
                (size_t)snprintf(line + len, cap - len, " %.*s%s%s", same_name ? 0 : nl, texts[r],
                                 same_name ? "" : " ", texts[r][nl] ? texts[r] + nl + 1 : "");
    }
    /* Paths and values are the user's text: no control characters raw. */
    bcl_escape(line, escaped, sizeof escaped);
    fprintf(stderr, "ballcl: %s\n", escaped);
out:
    free(done);
    for (int r = 0; r < size; r++)
        free(texts[r]);
    free(texts);
}

int ranks_agree(const ranks_job *j, int rc, const bcl_error *e, bool reported)
{
    if (!ranks_active() || agreed)
        return rc;
    agreed = true;
    int size = ranks_size();
    agree_record mine = {.rc = rc, .reported = reported};
    for (size_t i = 0; j && i < j->count; i++)
        mine.hash[i] = field_hash(j->field[i].name, j->field[i].value);
    agree_record *all = calloc((size_t)size, sizeof *all);
    if (!all) {
        fprintf(stderr, "ballcl: out of memory for the ranks' agreement\n");
        MPI_Abort(MPI_COMM_WORLD, BCL_EXIT_RUNTIME);
    }
    ranks_allgather(false, &mine, sizeof mine, all);
    int worst = BCL_OK;
    for (int r = 0; r < size; r++)
        worst = all[r].rc > worst ? all[r].rc : worst;
    if (worst != BCL_OK) {
        /* A rank that could not even say what its job is (an option it
         * refused): that failure is the verdict, printed once. */
        free(all);
        return ranks_verdict(rc, reported ? NULL : e);
    }
    /* The first field in which any rank differs from rank 0, the same on
     * every rank (they all hold every record). */
    size_t differ = RANKS_JOB_FIELDS;
    for (size_t i = 0; i < RANKS_JOB_FIELDS && differ == RANKS_JOB_FIELDS; i++)
        for (int r = 1; r < size; r++)
            if (all[r].hash[i] != all[0].hash[i])
                differ = i;
    free(all);
    if (differ == RANKS_JOB_FIELDS)
        return BCL_OK;
    char *text =
        j && differ < j->count ? joined(j->field[differ].name, "\1", j->field[differ].value) : NULL;
    char **texts = ranks_gather_text(text ? text : "nothing\1");
    free(text);
    if (texts)
        print_disagreement(texts, size);
    return BCL_EXIT_INPUT;
}

int ranks_check_file(const char *name, const char *path, bool write, bcl_error *e)
{
    if (!path)
        return BCL_OK;
    if (!write) {
        /* As one process checks it: the same message on every rank. */
        size_t n;
        uint64_t offset;
        return bcl_npy_read_header(path, &n, &offset, e);
    }
    /* The folder the temporary is made in (a link is followed). */
    char *abs = absolute_path(path);
    char *slash = abs ? strrchr(abs, '/') : NULL;
    if (slash)
        *(slash == abs ? slash + 1 : slash) = '\0';
    int ok = abs && access(slash ? abs : ".", W_OK | X_OK) == 0;
    int err = errno;
    free(abs);
    if (!ok)
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot write %s '%s': its folder: %s", name, path,
                        strerror(err));
    return BCL_OK;
}

/* A digest of the file's bytes (64-bit words mixed in; not cryptographic:
 * it tells node-local copies apart, it does not resist forgery). */
static int file_digest(const char *path, uint64_t *digest, bcl_error *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot read '%s': %s", path, strerror(errno));
    enum { CHUNK = 1 << 20 };
    unsigned char *buf = malloc(CHUNK);
    uint64_t h = 0x9e3779b97f4a7c15ull, total = 0;
    ssize_t got = 0;
    while (buf && (got = read(fd, buf, CHUNK)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            break;
        for (ssize_t i = 0; i < got; i += 8) {
            uint64_t w = 0;
            memcpy(&w, buf + i, got - i < 8 ? (size_t)(got - i) : 8);
            h = (h ^ w) * 0xff51afd7ed558ccdull;
            h ^= h >> 32;
        }
        total += (uint64_t)got;
    }
    int err = errno;
    close(fd);
    free(buf);
    if (!buf)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory for the digest of '%s'", path);
    if (got < 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot read '%s': %s", path, strerror(err));
    *digest = (h ^ total) | 1;
    return BCL_OK;
}

int ranks_agree_content(const char *name, const char *path)
{
    int size = ranks_size();
    struct stat st;
    bcl_error e = {0};
    int rc = stat(path, &st) == 0
                 ? BCL_OK
                 : bcl_fail(&e, BCL_EXIT_INPUT, "cannot read '%s': %s", path, strerror(errno));
    /* Which rank of this node reads the file this rank sees. */
    struct id {
        uint64_t dev, ino, size, mtime_ns;
        int64_t rank;
    } me = {(uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
            (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec,
            ranks_rank()};
    if (rc)
        me = (struct id){.rank = ranks_rank()};
    struct id *node = calloc((size_t)ranks_node_size(), sizeof *node);
    struct got {
        uint64_t digest;
        int64_t from;
    } mine = {0, ranks_rank()}, *all = calloc((size_t)size, sizeof *all);
    if (!node || !all) {
        fprintf(stderr, "ballcl: out of memory for the ranks' agreement\n");
        MPI_Abort(MPI_COMM_WORLD, BCL_EXIT_RUNTIME);
    }
    ranks_allgather(true, &me, sizeof me, node);
    for (int r = ranks_node_size(); !rc && r-- > 0;) /* the first that sees it */
        if (memcmp(&node[r], &me, offsetof(struct id, rank)) == 0)
            mine.from = node[r].rank;
    if (rc == BCL_OK && mine.from == ranks_rank())
        rc = file_digest(path, &mine.digest, &e);
    free(node);
    if ((rc = ranks_verdict(rc, &e))) {
        free(all);
        return rc;
    }
    ranks_allgather(false, &mine, sizeof mine, all);
    bool same = true;
    for (int r = 0; r < size; r++) {
        all[r].digest = all[all[r].from].digest;
        same = same && all[r].digest == all[0].digest;
    }
    char **texts = !same && ranks_rank() == 0 ? calloc((size_t)size, sizeof *texts) : NULL;
    for (int r = 0; texts && r < size; r++) {
        char text[96];
        snprintf(text, sizeof text, "the content of %s\1digest %016llx", name,
                 (unsigned long long)all[r].digest);
        texts[r] = strdup(text);
    }
    if (texts)
        print_disagreement(texts, size);
    free(all);
    return same ? BCL_OK : BCL_EXIT_INPUT;
}

bool ranks_agreed(void)
{
    return agreed;
}

/* Options whose values may differ between ranks: each rank's own devices
 * and launch (docs/SCALING.md). */
static const char *const may_differ[] = {"-d", "--device", "--local", "--variant",
                                         "--steps-per-launch"};

int ranks_agree_args(const char *command, int argc, char **argv)
{
    ranks_job j;
    ranks_job_init(&j, command);
    size_t cap = 1, len = 0;
    for (int i = 0; i < argc; i++)
        cap += strlen(argv[i]) + 3;
    char *args = calloc(cap, 1);
    for (int i = 0; args && i < argc; i++) {
        const char *a = argv[i];
        bool skip = strcmp(a, "--no-cache") == 0 || (strncmp(a, "-d", 2) == 0 && a[2]);
        for (size_t k = 0; !skip && k < sizeof may_differ / sizeof may_differ[0]; k++) {
            size_t n = strlen(may_differ[k]);
            if (strncmp(a, may_differ[k], n) == 0 && (a[n] == '\0' || a[n] == '=')) {
                skip = true;
                i += a[n] == '\0'; /* and its value */
            }
        }
        if (!skip)
            len += (size_t)snprintf(args + len, cap - len, "%s%s", len ? " " : "", a);
    }
    ranks_job_add(&j, "the arguments", "'%s'", args ? args : "?");
    /* Relative paths in them mean the same only from the same folder. */
    char *cwd = absolute_path(".");
    ranks_job_add(&j, "the working folder", "'%s'", cwd ? cwd : "?");
    free(cwd);
    free(args);
    int rc = ranks_agree(&j, BCL_OK, NULL, false);
    ranks_job_free(&j);
    return rc;
}

int ranks_agree_ended(const char *command, int rc)
{
    ranks_job j;
    ranks_job_init(&j, command);
    ranks_job_add(&j, "--help", "given");
    int out = ranks_agree(&j, rc, NULL, true);
    ranks_job_free(&j);
    return out;
}
