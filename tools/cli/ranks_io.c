/*
 * State files under MPI (docs/SCALING.md): every rank reads and writes only
 * its own balls, with MPI-IO, so no rank ever holds the whole state. The
 * file is the same .npy a single process reads and writes, byte for byte.
 */
#include "ranks.h"

#include "files/files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BALL_BYTES 16
/* Balls per MPI-IO call: the counts are ints, and some MPI-IO layers
 * mishandle single transfers above 2 GiB. */
#define ROUND_BALLS ((size_t)1 << 26)

/* rc, or when it is BCL_OK and the MPI call returned status, a failure of
 * class code naming path and call. */
static int mpi_check(int rc, int status, bcl_error *e, int code, const char *path, const char *call)
{
    if (rc || status == MPI_SUCCESS)
        return rc;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(status, text, &len) != MPI_SUCCESS)
        len = snprintf(text, sizeof text, "MPI error %d", status);
    text[len] = '\0';
    return bcl_fail(e, code, "'%s': %s failed: %s", path, call, text);
}

/* The atomic writer's fault point "write" (BALLCL_FAULT="write:n", docs/
 * RELIABILITY.md): the n-th slice this rank writes fails with EIO. The test
 * hook BALLCL_TEST_WRITE_STALL=1 stops every rank before its first slice
 * until a signal ends it (SIGTERM while the temporary file exists). */
static int write_fault(void)
{
    static unsigned long seen;
    const char *stall = getenv("BALLCL_TEST_WRITE_STALL");
    if (stall && strcmp(stall, "1") == 0)
        for (;;)
            pause();
    const char *spec = getenv("BALLCL_FAULT");
    if (!spec || strncmp(spec, "write:", 6) != 0)
        return 0;
    return strtoul(spec + 6, NULL, 10) == ++seen ? EIO : 0;
}

/* Reads into buf (or writes from it) count balls from ball first of the
 * data at byte offset, after rc (nothing moves once it fails). Collective
 * calls must match on every rank: each makes as many rounds as the rank
 * with the most balls, with nothing to move once it is done. */
static int move_balls(MPI_File f, bool write, const char *path, uint64_t offset, size_t first,
                      size_t count, float *buf, int rc, bcl_error *e)
{
    uint64_t rounds = (count + ROUND_BALLS - 1) / ROUND_BALLS;
    ranks_max_u64(&rounds, 1);
    for (uint64_t i = 0; i < rounds; i++) {
        size_t done = (size_t)i * ROUND_BALLS;
        size_t now = rc || done >= count          ? 0
                     : count - done < ROUND_BALLS ? count - done
                                                  : ROUND_BALLS;
        int fault = write && now ? write_fault() : 0;
        if (fault && rc == BCL_OK) {
            rc = bcl_fail(e, BCL_EXIT_RUNTIME, "'%s': cannot write balls %zu to %zu: %s", path,
                          first + done, first + done + now - 1, strerror(fault));
            now = 0;
        }
        MPI_Offset at = (MPI_Offset)(offset + (uint64_t)(first + done) * BALL_BYTES);
        MPI_Status status;
        int st, got = 0, bytes = (int)(now * BALL_BYTES);
        if (write) {
            st = MPI_File_write_at_all(f, at, buf + 4 * done, bytes, MPI_BYTE, &status);
            rc = mpi_check(rc, st, e, BCL_EXIT_RUNTIME, path, "MPI_File_write_at_all");
            continue;
        }
        st = MPI_File_read_at_all(f, at, buf + 4 * done, bytes, MPI_BYTE, &status);
        rc = mpi_check(rc, st, e, BCL_EXIT_INPUT, path, "MPI_File_read_at_all");
        MPI_Get_count(&status, MPI_BYTE, &got);
        if (st == MPI_SUCCESS && now && got != bytes && rc == BCL_OK)
            rc = bcl_fail(e, BCL_EXIT_INPUT,
                          "'%s': read %d of %zu balls from ball %zu: expected the whole slice "
                          "(did the file change?)",
                          path, got / BALL_BYTES, now, first + done);
    }
    return rc;
}

int ranks_read_state(const char *path, uint64_t data_offset, size_t first, size_t count, float *out,
                     bcl_error *e)
{
    double t0 = MPI_Wtime();
    /* MPI_File_open failing on some ranks only leaves the others waiting
     * in it: every rank first opens the file itself, and all agree. */
    int rc = ranks_verdict(ranks_check_file("--input", path, false, e), e);
    if (rc)
        return rc;
    MPI_File f;
    int st = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &f);
    /* Rank 0 has checked the header: a failure here is a race with the file
     * changing, or a file system without MPI-IO support. */
    if (st != MPI_SUCCESS)
        return mpi_check(rc, st, e, BCL_EXIT_INPUT, path, "MPI_File_open");
    rc = move_balls(f, false, path, data_offset, first, count, out, rc, e);
    MPI_File_close(&f);
    ranks_add_io_ms((MPI_Wtime() - t0) * 1e3);
    if (rc == BCL_OK)
        rc = bcl_npy_check_finite(path, out, count, first, e);
    return rc;
}

/* Every rank's part: rank 0 the header, each its slice, then sync and close. */
static int write_parts(MPI_File f, const char *path, size_t n, size_t first, size_t count,
                       const float *slice, bcl_error *e)
{
    int rc = BCL_OK, st;
    size_t hlen = bcl_npy_header(n, NULL, 0);
    if (ranks_rank() == 0) {
        unsigned char header[512];
        bcl_npy_header(n, header, sizeof header);
        MPI_Status status;
        st = MPI_File_write_at(f, 0, header, (int)hlen, MPI_BYTE, &status);
        rc = mpi_check(rc, st, e, BCL_EXIT_RUNTIME, path, "MPI_File_write_at");
    }
    rc = move_balls(f, true, path, hlen, first, count, (float *)slice, rc, e);
    /* On disk before the rename, as the atomic writer's fsync. */
    rc = mpi_check(rc, MPI_File_sync(f), e, BCL_EXIT_RUNTIME, path, "MPI_File_sync");
    return mpi_check(rc, MPI_File_close(&f), e, BCL_EXIT_RUNTIME, path, "MPI_File_close");
}

int ranks_write_state(const char *path, size_t n, size_t first, size_t count, const float *slice)
{
    double t0 = MPI_Wtime();
    bcl_error e = {0};
    /* Rank 0 makes the temporary as one process does (bcl_outputs_add: a
     * link followed, the temporary in the registry that signals clean up). */
    bcl_outputs outs = {0};
    char tmp[PATH_MAX + 16] = "";
    int rc = BCL_OK;
    if (ranks_rank() == 0) {
        rc = bcl_outputs_add(&outs, path, "--output", &e);
        if (rc == BCL_OK && strlen(outs.out[0].tmp) >= sizeof tmp)
            rc = bcl_fail(&e, BCL_EXIT_INPUT, "'%s': path too long", path);
        if (rc == BCL_OK)
            strcpy(tmp, outs.out[0].tmp);
    }
    rc = ranks_verdict(ranks_share(rc, &e), &e);
    if (rc) {
        bcl_outputs_discard(&outs);
        return rc;
    }
    ranks_bcast(tmp, sizeof tmp);
    /* The temporary rank 0 made must be the one every rank sees: in a
     * node-local folder it is missing elsewhere, and MPI_File_open failing
     * on some ranks only would leave the others waiting in it. */
    int fd = open(tmp, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        rc = bcl_fail(&e, BCL_EXIT_INPUT,
                      "cannot write --output '%s': the temporary file rank 0 made in its folder "
                      "is not there (%s): is the folder node-local?",
                      path, strerror(errno));
    else
        close(fd);
    if ((rc = ranks_verdict(rc, &e))) {
        bcl_outputs_discard(&outs); /* rank 0's; empty on the others */
        return rc;
    }
    MPI_File f;
    int st = MPI_File_open(MPI_COMM_WORLD, tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &f);
    /* MPI_File_open is collective and agrees on its outcome. */
    rc = mpi_check(BCL_OK, st, &e, BCL_EXIT_RUNTIME, path, "MPI_File_open");
    if (rc == BCL_OK)
        rc = write_parts(f, path, n, first, count, slice, &e);
    int written = ranks_verdict(rc, &e);
    int renamed = BCL_OK;
    if (ranks_rank() == 0) {
        /* The mode, fsync and rename as for one process; on failure the
         * temporary goes. */
        if (written == BCL_OK)
            renamed = bcl_outputs_commit(&outs, &e);
        bcl_outputs_discard(&outs);
    }
    /* The rename is rank 0's alone; every rank exits with its outcome. */
    rc = written ? written : ranks_verdict(renamed, &e);
    ranks_add_io_ms((MPI_Wtime() - t0) * 1e3);
    return rc;
}
