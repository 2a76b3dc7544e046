/*
 * The program's MPI layer (docs/SCALING.md): one process per rank under
 * mpirun, mpiexec or srun, and nothing at all otherwise: MPI_Init only when
 * a launcher started this process (its start-up costs seconds). Every rank
 * calls a collective, in one order; each is timed into the time in MPI.
 */
#ifndef BALLCL_RANKS_H
#define BALLCL_RANKS_H

/* The MPI layer needs nothing of the commands' helpers (cli.h), which use
 * it: only the library's types and its error helpers. */
#include "ballcl/ballcl.h"
#include "util/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef BALLCL_HAVE_MPI

/* MPI_Init under a launcher, then BALLCL_FAULT_RANK=k (BALLCL_FAULT on rank
 * k only). BCL_OK or an exit class. */
int ranks_start(int *argc, char ***argv);
/* MPI_Finalize when ranks_start initialised MPI; returns rc. */
int ranks_finish(int rc);
/* This process in the run (one rank of one, without a launcher). */
typedef struct ranks_self {
    bool active; /* between ranks_start and ranks_finish under a launcher */
    int rank, size;
    int node_rank, node_size; /* on this node: ranks sharing memory */
    int nodes;                /* of the run */
    char host[257];           /* MPI_Get_processor_name */
    char library[128];        /* "Open MPI v4.1.4": MPI_Get_library_version's first line */
    double init_ms;           /* MPI_Init */
    double mpi_ms;            /* in this layer's collectives so far */
    double io_ms;             /* in MPI-IO so far */
} ranks_self;
const ranks_self *ranks_me(void);
#define ranks_active()    (ranks_me()->active)
#define ranks_rank()      (ranks_me()->rank)
#define ranks_size()      (ranks_me()->size)
#define ranks_node_rank() (ranks_me()->node_rank)
#define ranks_node_size() (ranks_me()->node_size)

/* The one verdict of a phase: every rank gets the worst class of any rank's
 * rc (input 2 < runtime 3; mismatch 1 the least); when it is not BCL_OK,
 * rank 0 has printed each distinct failure once, prefixed with the ranks
 * that had it unless all had it. Collective. */
int ranks_verdict(int rc, const bcl_error *e);

/* For a step only rank 0 takes: its outcome and message become every
 * rank's, so that ranks_verdict prints it as one process would. Collective. */
int ranks_share(int rc, bcl_error *e);

/* Collectives (timed into ranks_me()->mpi_ms). */
void ranks_barrier(void);
/* A barrier of the ranks of this node only. */
void ranks_node_barrier(void);
void ranks_bcast(void *buf, size_t len);
/* all[r] = rank r's len bytes, on every rank: of the whole run, or (node)
 * of the ranks of this node, in node-rank order. */
void ranks_allgather(bool node, const void *mine, size_t len, void *all);
/* Rank 0 gets every rank's len bytes in rank order in all (others: NULL). */
void ranks_gather(const void *mine, size_t len, void *all);
void ranks_max_u64(uint64_t *v, size_t count);
/* Mean time of one MPI_Allreduce of a double, over count after a warm-up
 * (for docs/SCALING.md's model). */
double ranks_allreduce_us(unsigned count);
/* Adds to the I/O time (ranks_io.c). */
void ranks_add_io_ms(double ms);

/* MPI-IO (ranks_io.c): each rank reads balls [first, first + count) of
 * the state file, whose data starts at data_offset, and checks them as one
 * process would (ball numbers of the whole file). Collective; this rank's
 * status: follow with ranks_verdict. */
int ranks_read_state(const char *path, uint64_t data_offset, size_t first, size_t count, float *out,
                     bcl_error *e);
/* Each rank writes its slice of the n balls into a temporary beside path,
 * which rank 0 renames over path once every rank wrote and synced; on any
 * failure path is left as it was. Collective: the verdict. */
int ranks_write_state(const char *path, size_t n, size_t first, size_t count, const float *slice);

/* This rank's devices (ranks_devices.c) by docs/SCALING.md's rule over
 * the candidates text names (NULL or "": the default; every: each device
 * once): *n indices into list in idx (more than cap: an input error). */
int ranks_node_devices(const bcl_device_list *list, const char *text, bool every, size_t *idx,
                       size_t cap, size_t *n, bcl_error *e);
/* The worst exit class over all ranks, printing nothing. Collective. */
int ranks_worst(int rc);
/* Each rank's text to rank 0: all[r] (the caller frees each and all) on
 * rank 0, NULL elsewhere. Collective. */
char **ranks_gather_text(const char *mine);
/* Captures standard output until ranks_capture_end (collective), at which
 * rank 0 prints every rank's, each after a line "== rank R of P (HOST)". */
void ranks_capture_begin(void);
void ranks_capture_end(void);

/* What the ranks must agree on (ranks_agree.c): a job is a list of fields,
 * the command first, then every option that must be the same on every
 * rank, in a fixed order, with paths resolved to absolute ones. */
#define RANKS_JOB_FIELDS 40
typedef struct ranks_job {
    size_t count;
    struct {
        char name[40]; /* "-s", "--output", "the command" */
        char *value;   /* as shown in the message: "5", "'/abs/o.npy'", "not given" */
    } field[RANKS_JOB_FIELDS];
} ranks_job;
void ranks_job_init(ranks_job *j, const char *command);
void ranks_job_add(ranks_job *j, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds a path field: "not given" for NULL, else the absolute path. */
void ranks_job_add_path(ranks_job *j, const char *name, const char *path);
void ranks_job_free(ranks_job *j);
/* The agreement: the first collective of every command, made once. rc is
 * this rank's status so far, with its message e (reported: printed by the
 * rank itself); j NULL: nothing to compare. BCL_OK when all statuses are
 * and the jobs are the same; else the verdict of the failures, or
 * BCL_EXIT_INPUT with rank 0 having printed "ranks disagree on -s: rank 0
 * 5, rank 1 4" for the first field that differs. */
int ranks_agree(const ranks_job *j, int rc, const bcl_error *e, bool reported);
/* Whether this rank can read path as a state file (as one process checks
 * it) or, write, create a file in its folder: its status for ranks_agree. */
int ranks_check_file(const char *name, const char *path, bool write, bcl_error *e);
/* After ranks_agree: whether path holds the same bytes on every rank
 * (node-local files of one name), one rank per node and file reading it for
 * a digest. Else BCL_EXIT_INPUT, rank 0 having printed "ranks disagree on
 * the content of --input: ...". Collective. */
int ranks_agree_content(const char *name, const char *path);
/* Whether ranks_agree was made. */
bool ranks_agreed(void);
/* The agreement of a command other than run: its arguments as written but
 * for those that may differ (ranks_agree.c), and the working folder. */
int ranks_agree_args(const char *command, int argc, char **argv);
/* The agreement of a command that ended before it (--help), with rc. */
int ranks_agree_ended(const char *command, int rc);
/* run's agreement (run_agree.c): the fields of docs/SCALING.md. */
typedef struct run_args run_args;
int run_agree(const run_args *a, int rc, const bcl_error *e);

/* `ballcl run` under MPI (run_ranks.c): the whole run, one verdict. */
int run_ranks(const run_args *a);

#else

/* Without MPI: one process, its own verdicts. */
#define ranks_start(argc, argv) BCL_OK
#define ranks_finish(rc)        (rc)
#define ranks_active()          false
#define ranks_worst(rc)         (rc)
#define ranks_capture_begin()   ((void)0)
#define ranks_capture_end()     ((void)0)

#endif

#endif
