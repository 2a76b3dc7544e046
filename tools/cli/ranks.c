/*
 * The MPI layer of the program (ranks.h): start-up, the node a rank is on,
 * the verdict of a phase, and the timed collectives the commands use.
 */
#include "ranks.h"

#include "ocl/program.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
    ranks_self me;
    MPI_Comm node; /* the ranks of this node */
} R = {.me = {.size = 1, .node_size = 1, .nodes = 1}};

/* Whether a launcher started this process (BALLCL_MPI=0 or 1 overrides) and
 * the ranks it says it started (0: not said): Open MPI's mpirun, MPICH's
 * Hydra and Slurm's srun (PMI-1/2), PMIx (Open MPI 5, srun --mpi=pmix). */
static bool launched(long *size)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"};
    bool any = false;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        any = any || v;
        if (i < 2 && v && *v && !*size)
            *size = strtol(v, NULL, 10);
    }
    const char *force = getenv("BALLCL_MPI");
    return force && *force ? strcmp(force, "0") != 0 : any;
}

/* BALLCL_FAULT_RANK=k: BALLCL_FAULT on rank k only, so that a test can fail
 * one rank and see every rank end. */
static int fault_rank(void)
{
    const char *v = getenv("BALLCL_FAULT_RANK");
    if (!v || !*v)
        return BCL_OK;
    char *end;
    unsigned long k = strtoul(v, &end, 10);
    if (*end || end == v || k >= (unsigned long)R.me.size) {
        if (R.me.rank == 0)
            fprintf(stderr, "ballcl: BALLCL_FAULT_RANK='%s': expected a rank number from 0 to %d\n",
                    v, R.me.size - 1);
        return BCL_EXIT_INPUT;
    }
    if ((unsigned long)R.me.rank != k)
        unsetenv("BALLCL_FAULT");
    return BCL_OK;
}

int ranks_start(int *argc, char ***argv)
{
    long size = 0;
    if (!launched(&size)) {
        /* BALLCL_MPI=0 in one of several ranks: that rank alone would run
         * the whole job and write every output while the others wait. */
        if (size > 1) {
            fprintf(stderr,
                    "ballcl: BALLCL_MPI=0 in a job the launcher started as %ld ranks: each would "
                    "run the whole job alone; unset it, or start one process\n",
                    size);
            return BCL_EXIT_INPUT;
        }
        return BCL_OK;
    }
    double t0 = bcl_now_ms();
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "ballcl: MPI_Init failed\n");
        return BCL_EXIT_RUNTIME;
    }
    R.me.init_ms = bcl_now_ms() - t0;
    R.me.active = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &R.me.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &R.me.size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, R.me.rank, MPI_INFO_NULL, &R.node);
    MPI_Comm_rank(R.node, &R.me.node_rank);
    MPI_Comm_size(R.node, &R.me.node_size);
    int first = R.me.node_rank == 0;
    MPI_Allreduce(&first, &R.me.nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int len = 0;
    char host[MPI_MAX_PROCESSOR_NAME + 1];
    MPI_Get_processor_name(host, &len);
    host[len] = '\0';
    snprintf(R.me.host, sizeof R.me.host, "%s", host);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = '\0';
    snprintf(R.me.library, sizeof R.me.library, "%.127s", lib);
    /* Every rank checks the same variable: all agree on the outcome. */
    return fault_rank();
}

int ranks_finish(int rc)
{
    if (R.me.active) {
        R.me.active = false;
        /* mpirun stops the other ranks as soon as one exits non-zero: a
         * report still in rank 0's stdio buffer (a pipe to mpirun) would be
         * lost. Flushed, and the barrier keeps every rank until it is out. */
        fflush(stdout);
        fflush(stderr);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Comm_free(&R.node);
        MPI_Finalize();
    }
    return rc;
}

const ranks_self *ranks_me(void)
{
    return &R.me;
}

double ranks_allreduce_us(unsigned count)
{
    double x = 1, t0 = 0;
    for (unsigned i = 0; i <= count; i++) {
        /* The first one is a warm-up. */
        if (i == 1)
            t0 = MPI_Wtime();
        MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    double us = count ? (MPI_Wtime() - t0) * 1e6 / count : 0;
    R.me.mpi_ms += us * count / 1e3;
    return us;
}

void ranks_add_io_ms(double ms)
{
    R.me.io_ms += ms;
}

/* Times a collective into R.me.mpi_ms. */
#define TIMED(call)                                                                                \
    do {                                                                                           \
        double t0_ = MPI_Wtime();                                                                  \
        call;                                                                                      \
        R.me.mpi_ms += (MPI_Wtime() - t0_) * 1e3;                                                  \
    } while (0)

void ranks_barrier(void)
{
    TIMED(MPI_Barrier(MPI_COMM_WORLD));
}

void ranks_node_barrier(void)
{
    TIMED(MPI_Barrier(R.node));
}

void ranks_bcast(void *buf, size_t len)
{
    TIMED(MPI_Bcast(buf, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD));
}

void ranks_allgather(bool node, const void *mine, size_t len, void *all)
{
    MPI_Comm comm = node ? R.node : MPI_COMM_WORLD;
    TIMED(MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, comm));
}

void ranks_gather(const void *mine, size_t len, void *all)
{
    TIMED(MPI_Gather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD));
}

void ranks_max_u64(uint64_t *v, size_t count)
{
    TIMED(MPI_Allreduce(MPI_IN_PLACE, v, (int)count, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD));
}

int ranks_worst(int rc)
{
    int worst = rc;
    TIMED(MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    return worst;
}

/* What a rank sends rank 0 when a phase failed. */
typedef struct failure {
    int code;
    char msg[sizeof(((bcl_error *)0)->msg)];
} failure;

int ranks_share(int rc, bcl_error *e)
{
    failure f = {.code = rc};
    if (R.me.rank == 0 && rc)
        snprintf(f.msg, sizeof f.msg, "%s", e->msg);
    ranks_bcast(&f, sizeof f);
    if (R.me.rank != 0 && f.code)
        bcl_fail(e, f.code, "%s", f.msg);
    return f.code;
}

/* "rank 2" or "ranks 0, 2, 5" (at most a few listed) into out. */
static void rank_list(const failure *all, int size, int upto, char *out, size_t cap)
{
    int count = 0;
    for (int r = 0; r < size; r++)
        count += all[r].code && strcmp(all[r].msg, all[upto].msg) == 0;
    size_t len = (size_t)snprintf(out, cap, "%s", count > 1 ? "ranks " : "rank ");
    int shown = 0;
    for (int r = 0; r < size && len < cap && shown <= 8; r++) {
        if (!all[r].code || strcmp(all[r].msg, all[upto].msg) != 0)
            continue;
        if (shown++ == 8)
            len += (size_t)snprintf(out + len, cap - len, ", ... (%d in all)", count);
        else
            len += (size_t)snprintf(out + len, cap - len, "%s%d", shown > 1 ? ", " : "", r);
    }
}

int ranks_verdict(int rc, const bcl_error *e)
{
    int worst = ranks_worst(rc);
    if (worst == BCL_OK)
        return BCL_OK;
    failure mine = {.code = rc};
    /* e NULL: the rank printed its failure itself (an empty message). */
    if (rc && e)
        snprintf(mine.msg, sizeof mine.msg, "%s", e->msg[0] ? e->msg : "unknown error");
    failure *all = NULL;
    if (R.me.rank == 0) {
        all = calloc((size_t)R.me.size, sizeof *all);
        if (!all) {
            fprintf(stderr, "ballcl: a rank failed (out of memory for its message)\n");
            MPI_Abort(MPI_COMM_WORLD, BCL_EXIT_RUNTIME);
        }
    }
    ranks_gather(&mine, sizeof mine, all);
    if (R.me.rank != 0)
        return worst;
    /* The same message from every rank (a bad option, a missing file)
     * reads as it does without MPI. */
    bool one = all[0].msg[0];
    for (int r = 0; r < R.me.size; r++)
        one = one && all[r].code && strcmp(all[r].msg, all[0].msg) == 0;
    if (one)
        fprintf(stderr, "ballcl: %s\n", all[0].msg);
    for (int r = 0; r < R.me.size && !one; r++) {
        /* Each message once (an empty one: that rank printed it). */
        bool seen = !all[r].code || !all[r].msg[0];
        for (int q = 0; q < r && !seen; q++)
            seen = all[q].code && strcmp(all[q].msg, all[r].msg) == 0;
        if (seen)
            continue;
        char who[160];
        rank_list(all, R.me.size, r, who, sizeof who);
        fprintf(stderr, "ballcl: %s of %d: %s\n", who, R.me.size, all[r].msg);
    }
    free(all);
    return worst;
}

char **ranks_gather_text(const char *mine)
{
    int len = mine ? (int)strlen(mine) + 1 : 1;
    int *lens = R.me.rank == 0 ? calloc(2 * (size_t)R.me.size, sizeof *lens) : NULL;
    int *at = lens ? lens + R.me.size : NULL;
    TIMED(MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD));
    size_t total = 0;
    for (int r = 0; lens && r < R.me.size; r++) {
        at[r] = (int)total;
        total += (size_t)lens[r];
    }
    char *buf = lens ? malloc(total ? total : 1) : NULL; /* rank 0's */
    TIMED(MPI_Gatherv(mine ? mine : "", len, MPI_CHAR, buf, lens, at, MPI_CHAR, 0, MPI_COMM_WORLD));
    char **all = buf ? calloc((size_t)R.me.size, sizeof *all) : NULL;
    for (int r = 0; all && r < R.me.size; r++)
        all[r] = strdup(buf + at[r]);
    free(buf);
    free(lens);
    return all;
}

static struct {
    int saved_fd;
    FILE *tmp;
} capture = {-1, NULL};

void ranks_capture_begin(void)
{
    fflush(stdout);
    capture.tmp = tmpfile();
    if (!capture.tmp)
        return;
    capture.saved_fd = dup(STDOUT_FILENO);
    dup2(fileno(capture.tmp), STDOUT_FILENO);
}

void ranks_capture_end(void)
{
    char *text = NULL;
    fflush(stdout);
    if (capture.tmp) {
        dup2(capture.saved_fd, STDOUT_FILENO);
        close(capture.saved_fd);
        size_t len;
        rewind(capture.tmp);
        if (bcl_read_fd(fileno(capture.tmp), UINT64_MAX, &text, &len) != 0)
            text = NULL;
        fclose(capture.tmp);
        capture.tmp = NULL;
    }
    char **hosts = ranks_gather_text(R.me.host);
    char **all = ranks_gather_text(text);
    free(text);
    for (int r = 0; all && r < R.me.size; r++) {
        printf("%s== rank %d of %d (%s)\n%s", r ? "\n" : "", r, R.me.size,
               hosts && hosts[r] ? hosts[r] : "?", all[r] ? all[r] : "");
        free(all[r]);
        if (hosts)
            free(hosts[r]);
    }
    free(all);
    free(hosts);
}
