/*
 * The program's MPI layer (docs/SCALING.md): one process per rank under
 * mpirun, mpiexec or srun, and nothing at all otherwise: MPI_Init only when
 * a launcher started this process (its start-up costs seconds), so that a
 * plain `ballcl` is a build without MPI. Every collective here adds its
 * time to ranks_mpi_ms(), the report's time spent in MPI.
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

/* Initialises MPI when launched under an MPI launcher; afterwards applies
 * BALLCL_FAULT_RANK=k (fault injection on rank k only: the others drop
 * BALLCL_FAULT). Returns BCL_OK or an exit class (MPI failed to start). */
int ranks_start(int *argc, char ***argv);
/* MPI_Finalize when ranks_start initialised MPI; returns rc. */
int ranks_finish(int rc);
/* True between ranks_start and ranks_finish under a launcher. */
bool ranks_active(void);

int ranks_rank(void);
int ranks_size(void);
/* The rank on this node (ranks sharing memory: MPI_COMM_TYPE_SHARED), how
 * many ranks the node has, and how many nodes the run has. */
int ranks_node_rank(void);
int ranks_node_size(void);
int ranks_nodes(void);
/* MPI_Get_processor_name. */
const char *ranks_host(void);
/* "Open MPI v4.1.4" or the like (the first line of MPI_Get_library_version). */
const char *ranks_library(void);

/* The one verdict of a phase: every rank passes its own rc and error; all
 * get the worst class of any rank (input 2 < runtime 3; mismatch 1 the
 * least). When it is not BCL_OK, rank 0 prints every distinct failure on
 * stderr (prefixed with the ranks that had it, unless every rank had the
 * same one) and the caller prints nothing more. Collective. */
int ranks_verdict(int rc, const bcl_error *e);

/* For a step only rank 0 takes (checking the input's header): rank 0's
 * outcome, error message included, becomes every rank's, so that a
 * following ranks_verdict prints it as one process would. Collective. */
int ranks_share(int rc, bcl_error *e);

/* Collectives (timed into ranks_mpi_ms). */
void ranks_barrier(void);
/* A barrier of the ranks of this node only. */
void ranks_node_barrier(void);
void ranks_bcast(void *buf, size_t len);
/* all[r] = rank r's len bytes, on every rank: of the whole run, or of the
 * ranks of this node (in node-rank order). */
void ranks_allgather(const void *mine, size_t len, void *all);
void ranks_node_allgather(const void *mine, size_t len, void *all);
/* Rank 0 gets every rank's len bytes in rank order in all (others: NULL). */
void ranks_gather(const void *mine, size_t len, void *all);
void ranks_max_u64(uint64_t *v, size_t count);
/* How long MPI_Init took (ms). */
double ranks_init_ms(void);
/* Mean time of one MPI_Allreduce of one double over every rank, from
 * count of them after a warm-up one (collective; a figure for the scaling
 * model of docs/SCALING.md). */
double ranks_allreduce_us(unsigned count);
/* Milliseconds spent in this layer's collectives and in MPI-IO so far. */
double ranks_mpi_ms(void);
double ranks_io_ms(void);
/* Adds to the I/O time (ranks_io.c). */
void ranks_add_io_ms(double ms);

/* MPI-IO (ranks_io.c). Reads balls [first, first + count) of the state
 * file at path, whose data starts at byte data_offset, into out: every rank
 * reads its own slice, collectively. Then checks them (non-finite values
 * are input errors naming the ball of the whole file). Returns this rank's
 * status: follow with ranks_verdict. */
int ranks_read_state(const char *path, uint64_t data_offset, size_t first, size_t count, float *out,
                     bcl_error *e);
/* Writes the state file path of n balls, each rank its slice [first, first
 * + count), collectively with MPI-IO into a temporary file beside path,
 * which rank 0 renames over path only after every rank wrote and synced its
 * part; on any failure the temporary file is removed and path is left as
 * it was. Returns the verdict (collective; rank 0 has printed failures). */
int ranks_write_state(const char *path, size_t n, size_t first, size_t count, const float *slice);

/* The devices of this rank among list (ranks_devices.c), by the rule of
 * docs/SCALING.md ("What each rank does", 1) over the candidates text
 * names (NULL or "": the default; `every`: every device, each once).
 * Indices into list in idx (at most cap, more is an input error), their
 * count in *n. */
int ranks_node_devices(const bcl_device_list *list, const char *text, bool every, size_t *idx,
                       size_t cap, size_t *n, bcl_error *e);
/* The worst exit class over all ranks, printing nothing (each rank has
 * reported its own failure). Collective. */
int ranks_worst(int rc);
/* Each rank's text to rank 0: all[r] (malloc'ed, NUL-terminated; the
 * caller frees each and all) on rank 0, NULL elsewhere. Collective. */
char **ranks_gather_text(const char *mine);
/* Captures this process's standard output from here on (ranks_capture_end
 * gives it back), so that rank 0 can print every rank's in rank order. */
void ranks_capture_begin(void);
/* Ends the capture: rank 0 prints every rank's output, each after a line
 * "== rank R of P (HOST)". Collective. */
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
/* Starts a job with its command's name. */
void ranks_job_init(ranks_job *j, const char *command);
/* Adds a field (printf-like value). */
void ranks_job_add(ranks_job *j, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds a path field: "not given" for NULL, else the absolute path. */
void ranks_job_add_path(ranks_job *j, const char *name, const char *path);
void ranks_job_free(ranks_job *j);
/* The agreement: the first collective of every command, made exactly once
 * per process. j may be NULL (nothing to compare); rc is this rank's status
 * so far (a refused option), its message e, or reported when the rank
 * printed it itself. Every rank returns BCL_OK when all statuses are BCL_OK
 * and the jobs are the same; the worst status (its messages printed once by
 * rank 0, through ranks_verdict) when a rank failed; else BCL_EXIT_INPUT,
 * rank 0 having printed one line "ranks disagree on -s: rank 0 5, rank 1 4"
 * naming the first field that differs. Collective. */
int ranks_agree(const ranks_job *j, int rc, const bcl_error *e, bool reported);
/* Whether this rank can read path (an option's file, named by name) as a
 * state file, checked as one process checks it (write false), or create a
 * file in its folder (write true):
 * this rank's status into e, for ranks_agree. Not collective. */
int ranks_check_file(const char *name, const char *path, bool write, bcl_error *e);
/* After ranks_agree: whether the file path, the same path on every rank,
 * holds the same bytes on every rank (node-local files of one name). Of the
 * ranks of a node that see one file (device, inode, size, time), one reads
 * it for a digest; then every rank compares all. BCL_OK, or on every rank
 * BCL_EXIT_INPUT with rank 0 having printed one line "ranks disagree on the
 * content of --input: ...". Collective. */
int ranks_agree_content(const char *name, const char *path);
/* Whether ranks_agree was made. */
bool ranks_agreed(void);
/* The agreement of the commands that are not `run`, before they start: the
 * command, its arguments as written but for the options whose values may
 * differ (ranks_agree.c), and the working folder. */
int ranks_agree_args(const char *command, int argc, char **argv);
/* The agreement of a command that ended before making it (--help): its
 * status rc, already reported. */
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
#define ranks_verdict(rc, e)    (rc)
#define ranks_worst(rc)         (rc)
#define ranks_agreed()          true
#define ranks_capture_begin()   ((void)0)
#define ranks_capture_end()     ((void)0)

#endif

#endif
