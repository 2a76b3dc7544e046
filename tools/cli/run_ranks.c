/*
 * ballcl run under MPI (docs/SCALING.md, "What each rank does"): each phase
 * ends in one verdict (ranks_verdict), so that a failure anywhere ends every
 * rank with the same exit class and the collectives always match. A rank
 * drives its devices through the library's one run path (bcl_group_exec).
 */
#include "run_ranks.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

/* Rank 0 checks the options as one process checks them (ranks_write_state
 * makes the temporary that all ranks write) and the input's header; every
 * rank learns N and where the data starts. */
static int read_header(job *j, bcl_error *e)
{
    const run_args *a = j->a;
    int rc = BCL_OK;
    struct {
        uint64_t n, offset;
    } h = {a->o.balls[0], 0};
    if (ranks_rank() == 0) {
        bcl_outputs outs = {0};
        size_t n = 0;
        if (a->snapshot)
            rc = bcl_fail(e, BCL_EXIT_INPUT,
                          "--snapshot is not available under MPI: no rank holds the whole state "
                          "(write --output and draw it with a run in one process)");
        if (rc == BCL_OK && a->output)
            rc = bcl_outputs_add(&outs, a->output, "--output", e);
        bcl_outputs_discard(&outs);
        if (rc == BCL_OK && a->input) {
            rc = bcl_npy_read_header(a->input, &n, &h.offset, e);
            h.n = n;
        }
    }
    if ((rc = ranks_verdict(ranks_share(rc, e), e)))
        return rc;
    ranks_bcast(&h, sizeof h);
    j->n = (size_t)h.n;
    j->data_offset = h.offset;
    return BCL_OK;
}

/* The rank's devices as one group, opened for all balls and weighed (one
 * device of one rank has nothing to weigh against): its rate for the split. */
static int open_group(job *j, bcl_error *e)
{
    const run_args *a = j->a;
    double t0 = MPI_Wtime();
    bcl_group_opts o = run_group_opts(a, j->n);
    int rc = bcl_group_open(j->devs, j->ndev, &o, &j->g, e);
    for (size_t i = 0; rc == BCL_OK && i < j->ndev; i++) {
        const bcl_group_member *m = bcl_group_member_at(j->g, i);
        if (m->build.warning[0])
            fprintf(stderr, "ballcl: warning: rank %d, device %s: %s\n", ranks_rank(), m->selector,
                    m->build.warning);
        /* A tuned file shared by devices of one make: said once. */
        bool said = false;
        for (size_t k = 0; k < i && !said; k++)
            said = strcmp(bcl_group_member_at(j->g, k)->plan.warning, m->plan.warning) == 0;
        if (m->plan.warning[0] && ranks_rank() == 0 && !said)
            cli_warn("device %s: %s", m->selector, m->plan.warning);
    }
    if (rc == BCL_OK)
        rc = bcl_group_weigh(j->g, NULL, ranks_size() > 1, e);
    j->me.rate = rc == BCL_OK ? bcl_group_rate(j->g) : 0;
    j->me.cal_ms = (MPI_Wtime() - t0) * 1e3;
    return rc;
}

/* Set-up: header, devices, their rates; then the ranks' ranges. */
static int set_up(job *j, bcl_error *e)
{
    const run_args *a = j->a;
    double t0 = MPI_Wtime();
    int rc = read_header(j, e);
    if (rc)
        return rc;
    /* This rank's devices. */
    rc = bcl_devices_enumerate(&j->list, e);
    size_t idx[RANK_MAX_DEVICES];
    if (rc == BCL_OK)
        rc = ranks_node_devices(&j->list, cli_selector(a->o.device), false, idx, RANK_MAX_DEVICES,
                                &j->ndev, e);
    for (size_t i = 0; rc == BCL_OK && i < j->ndev; i++)
        j->devs[i] = &j->list.dev[idx[i]];
    j->me.setup_ms = (MPI_Wtime() - t0) * 1e3;
    if (rc == BCL_OK)
        rc = open_group(j, e);
    if ((rc = ranks_verdict(rc, e)))
        return rc;
    /* The ranks' ranges by their rates: the library's one split, with no
     * least share (docs/SCALING.md: a rank someone started takes part). */
    size_t size = (size_t)ranks_size();
    double *rates = calloc(2 * size, sizeof *rates); /* and the fixed costs: none */
    bcl_shard *sh = calloc(size, sizeof *sh);
    bcl_split_why *why = calloc(size, sizeof *why);
    if (!rates || !sh || !why) {
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    } else {
        ranks_allgather(false, &j->me.rate, sizeof j->me.rate, rates);
        bcl_split(j->n, size, rates, rates + size, (double)(a->o.steps ? a->o.steps : 1),
                  RANK_BLOCK, 0, sh, why);
        j->first = j->me.first = sh[ranks_rank()].first;
        j->count = j->me.count = sh[ranks_rank()].count;
    }
    free(rates);
    free(sh);
    free(why);
    /* The range must fit this rank's devices and host before it is allocated;
     * its devices then cut it as one process cuts its balls. */
    if (rc == BCL_OK && j->count)
        rc = bcl_group_memory_fit(j->devs, j->ndev, j->count, a->validate ? 2 : 1,
                                  a->input ? a->input : "--balls", e);
    if (rc == BCL_OK && j->count)
        rc = bcl_group_cut(j->g, j->first, j->count, e);
    return ranks_verdict(rc, e);
}

/* The slice: read with MPI-IO, or made by the model's fill from the ball
 * indices (the bits of a single process's fill). Then the devices. */
static int load(job *j, bcl_error *e)
{
    const run_args *a = j->a;
    int rc = BCL_OK;
    double t0 = MPI_Wtime();
    j->state = malloc((j->count ? j->count : 1) * 16);
    if (!j->state)
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu balls", j->count);
    if (a->input) {
        /* Collective: every rank reads, even one without balls or memory. */
        int rrc =
            ranks_read_state(a->input, j->data_offset, j->first, rc ? 0 : j->count, j->state, e);
        rc = rc ? rc : rrc;
    } else if (rc == BCL_OK && j->count) {
        bcl_model_fill(a->o.model.model, j->state, j->first, j->count, a->o.init, a->o.seed,
                       a->o.model.params);
    }
    if (rc == BCL_OK && a->validate && j->count) {
        j->init = malloc(j->count * 16);
        if (!j->init)
            rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for validation");
        else
            memcpy(j->init, j->state, j->count * 16);
    }
    if (rc == BCL_OK && j->count)
        rc = bcl_group_load(j->g, j->state, e);
    j->me.load_ms = (MPI_Wtime() - t0) * 1e3;
    return ranks_verdict(rc, e);
}

/* After the steps (bcl_exec.ran): the rank's own time ends here, its wait
 * for the slowest is the barrier's; then one verdict on the steps. */
static int ran(void *arg, int rc, bcl_error *e)
{
    job *j = arg;
    double t1 = MPI_Wtime();
    ranks_barrier();
    double t2 = MPI_Wtime();
    j->me.run_ms = (t1 - j->t0) * 1e3;
    j->me.wait_ms = (t2 - t1) * 1e3;
    if ((rc = ranks_verdict(rc, e)))
        return rc;
    j->me.allreduce_us = ranks_allreduce_us(20);
    j->t3 = MPI_Wtime();
    return BCL_OK;
}

/* The run between two barriers (a rank without balls takes part in the
 * collectives alone), then the read back and checks of the rank's balls. */
static int run(job *j, bcl_error *e)
{
    ranks_barrier();
    j->t0 = MPI_Wtime();
    int rc;
    if (j->count) {
        bcl_exec x = {
            .steps = j->a->o.steps,
            .out = j->state,
            .init = j->init,
            .validate = j->a->validate,
            .tol_ulp = j->a->tol_ulp,
            .check_overflow = true,
            .overflow_note = j->a->output ? "; output not written" : "",
            .ran = ran,
            .arg = j,
        };
        rc = bcl_group_exec(j->g, &x, &j->r, e);
        /* A failure of the steps had its verdict in ran(). */
        if (j->t3 == 0)
            return rc;
    } else if ((rc = ran(j, BCL_OK, e))) {
        return rc;
    }
    j->me.check_ms = (MPI_Wtime() - j->t3) * 1e3;
    return ranks_verdict(rc, e);
}

/* All ranks' validations (of ascending ranges) merged into one, on every
 * rank. */
static void reduce_validation(job *j, bcl_validation *all)
{
    bcl_validation *each = ranks_rank() == 0 ? calloc((size_t)ranks_size(), sizeof *each) : NULL;
    ranks_gather(&j->r.v, sizeof j->r.v, each);
    for (int r = 0; each && r < ranks_size(); r++)
        bcl_validation_merge(all, &each[r]);
    free(each);
    ranks_bcast(all, sizeof *all);
}

/* This rank's devices for the report. */
static void describe_devices(job *j)
{
    j->me.ndev = (int)j->ndev;
    for (size_t i = 0; i < j->ndev; i++) {
        rank_device *d = &j->me.dev[i];
        const bcl_group_member *m = bcl_group_member_at(j->g, i);
        snprintf(d->selector, sizeof d->selector, "%.15s", m->selector);
        snprintf(d->name, sizeof d->name, "%.79s", j->devs[i]->name);
        d->rate = strcmp(m->rate_how, "only device") == 0 ? 0 : m->rate;
        d->first = j->count ? m->shard.first : 0;
        d->count = j->count ? m->shard.count : 0;
        d->us_per_step = m->shard.count ? bcl_us_per_step(m->timing.wall_ms, j->a->o.steps) : 0;
        d->wait_ms = m->wait_ms;
    }
}

int run_ranks(const run_args *a)
{
    bcl_error e = {0};
    job j = {.a = a};
    j.me.init_ms = ranks_me()->init_ms;
    snprintf(j.me.host, sizeof j.me.host, "%.63s", ranks_me()->host);
    int rc = set_up(&j, &e);
    if (rc == BCL_OK)
        rc = load(&j, &e);
    if (rc == BCL_OK)
        rc = run(&j, &e);
    bcl_validation v = {0};
    if (rc == BCL_OK)
        reduce_validation(&j, &v);
    /* A wrong state is never saved as if it were a result. */
    double t0 = MPI_Wtime();
    if (rc == BCL_OK && v.mismatches == 0 && a->output)
        rc = ranks_write_state(a->output, j.n, j.first, j.count, j.state);
    j.me.output_ms = (MPI_Wtime() - t0) * 1e3;
    if (rc == BCL_OK) {
        describe_devices(&j);
        ranks_report(&j, &v);
    }
    if (rc == BCL_OK && v.mismatches) {
        rc = BCL_EXIT_MISMATCH;
        if (ranks_rank() == 0)
            fprintf(stderr,
                    "ballcl: validation failed: %llu of %llu floats differ from the C "
                    "reference%s\n",
                    (unsigned long long)v.mismatches, (unsigned long long)v.compared,
                    a->output ? "; output not written" : "");
    }
    bcl_group_close(j.g);
    bcl_devices_free(&j.list);
    free(j.state);
    free(j.init);
    bcl_error_clear(&e);
    return rc;
}
