/*
 * The one report of a run under MPI (docs/SCALING.md): rank 0 gathers a
 * fixed record from every rank and prints the run, its imbalance, the time
 * in MPI and the phases, then a row per device of every rank.
 */
#include "run_ranks.h"

#include <stdlib.h>
#include <string.h>

/* The figures over all ranks: the slowest and the mean run, the most time
 * in MPI, in MPI-IO, and in each phase. */
typedef struct summary {
    double slowest, mean, mpi, io, cal;
    double init, setup, load, check, output;
} summary;

#define MAX_OF(field, x) (s->field = (x) > s->field ? (x) : s->field)

static void summarise(const rank_info *ri, int size, summary *s)
{
    memset(s, 0, sizeof *s);
    for (int r = 0; r < size; r++) {
        const rank_info *x = &ri[r];
        MAX_OF(slowest, x->run_ms);
        s->mean += x->run_ms / size;
        MAX_OF(mpi, x->mpi_ms);
        MAX_OF(io, x->io_ms);
        MAX_OF(cal, x->cal_ms);
        MAX_OF(init, x->init_ms);
        MAX_OF(setup, x->setup_ms);
        MAX_OF(load, x->load_ms);
        MAX_OF(check, x->check_ms);
        MAX_OF(output, x->output_ms);
    }
}

static void print_report(const job *j, const rank_info *ri, const summary *s,
                         const bcl_validation *v)
{
    const run_args *a = j->a;
    const ranks_self *me = ranks_me();
    int size = ranks_size();
    double us = bcl_us_per_step(s->slowest, a->o.steps);
    double rate = bcl_ball_steps_per_s(j->n, us);
    printf("ranks       %d on %d node%s (%s)\n", size, me->nodes, me->nodes == 1 ? "" : "s",
           me->library);
    printf("split       %s\n", size > 1 ? "by each rank's measured rate" : "one rank: all balls");
    run_print_model(a);
    printf("balls       %zu\n", j->n);
    /* The launch plan rank 0 reports: its first device with balls. */
    const bcl_group_member *l = NULL;
    for (size_t i = 0; j->g && i < bcl_group_size(j->g) && !l; i++)
        if (bcl_group_member_at(j->g, i)->shard.count)
            l = bcl_group_member_at(j->g, i);
    if (l)
        printf("steps       %llu (%u per launch on rank 0: %s)\n", (unsigned long long)a->o.steps,
               l->plan.steps_per_launch, l->plan.k_how);
    else
        printf("steps       %llu\n", (unsigned long long)a->o.steps);
    printf("time        %.3f us/step, between barriers (slowest rank)\n", us);
    printf("rate        %.3g ball-steps/s over all ranks\n", rate);
    printf("imbalance   slowest rank %.1f ms, mean %.1f ms (%.2fx)\n", s->slowest, s->mean,
           s->mean > 0 ? s->slowest / s->mean : 1.0);
    printf("mpi         %.1f ms in collectives, %.1f ms in MPI-IO (most of any rank); "
           "allreduce %.1f us\n",
           s->mpi, s->io, ri[0].allreduce_us);
    printf("phases      MPI_Init %.0f ms, set-up %.0f, calibration %.0f, load %.0f, run %.0f, "
           "check %.0f, output %.0f (slowest rank each)\n",
           s->init, s->setup, s->cal, s->load, s->slowest, s->check, s->output);
    printf("\nRANK  HOST              DEVICE                                  FIRST        BALLS  "
           "  SHARE  RATE (CAL)   US/STEP   WAIT MS\n");
    for (int r = 0; r < size; r++) {
        /* The rank's row; then a row per device when it drives several. */
        const rank_info *x = &ri[r];
        char dev[64];
        if (x->ndev == 1)
            snprintf(dev, sizeof dev, "%s %s", x->dev[0].selector, cli_shown(x->dev[0].name));
        else
            snprintf(dev, sizeof dev, "%d devices", x->ndev);
        /* Long host and device names are cut at a word, with an ellipsis. */
        char host_col[96], dev_col[160];
        cli_field(x->host, 17, host_col, sizeof host_col);
        cli_field(dev, 38, dev_col, sizeof dev_col);
        printf("%-5d %s %s %6llu %12llu %6.1f%% %11.3g %9.3f %9.1f\n", r, host_col, dev_col,
               (unsigned long long)x->first, (unsigned long long)x->count,
               j->n ? 100.0 * (double)x->count / (double)j->n : 0, x->rate,
               x->count ? bcl_us_per_step(x->run_ms, a->o.steps) : 0, x->wait_ms);
        for (int i = 0; x->ndev > 1 && i < x->ndev; i++) {
            const rank_device *d = &x->dev[i];
            snprintf(dev, sizeof dev, "%s %s", d->selector, d->name);
            cli_field(dev, 38, dev_col, sizeof dev_col);
            printf("        %s %6llu %12llu %6.1f%% %11.3g %9.3f %9.1f\n", dev_col,
                   (unsigned long long)d->first, (unsigned long long)d->count,
                   j->n ? 100.0 * (double)d->count / (double)j->n : 0, d->rate, d->us_per_step,
                   d->wait_ms);
        }
    }
    printf("\n");
    run_print_validation(a, v, ", every rank");
}

static json_t *report_json(const job *j, const rank_info *ri, const summary *s,
                           const bcl_validation *v)
{
    const ranks_self *me = ranks_me();
    int size = ranks_size();
    /* The report of one process (bcl_run_json), with rank 0's devices and
     * the run's time between barriers (the slowest rank's); then the ranks
     * and MPI, the keys of this report alone. */
    bcl_exec_result all = j->r;
    all.device_ms = all.wall_ms = s->slowest;
    all.v = *v;
    json_t *root = run_group_json(j->a, j->g, j->n, &all);
    json_t *ranks = json_array();
    for (int r = 0; r < size; r++) {
        const rank_info *x = &ri[r];
        json_t *devs = json_array();
        for (int i = 0; i < x->ndev; i++)
            json_array_append_new(
                devs,
                json_pack("{s:s, s:s, s:I, s:I, s:f, s:f, s:f}", "selector", x->dev[i].selector,
                          "name", x->dev[i].name, "first", (json_int_t)x->dev[i].first, "balls",
                          (json_int_t)x->dev[i].count, "rate_calibrated", x->dev[i].rate,
                          "us_per_step", x->dev[i].us_per_step, "wait_ms", x->dev[i].wait_ms));
        json_t *o = json_pack(
            "{s:i, s:s, s:o, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "rank", r, "host",
            x->host, "devices", devs, "first", (json_int_t)x->first, "balls", (json_int_t)x->count,
            "rate_calibrated", x->rate, "calibrate_ms", x->cal_ms, "us_per_step",
            x->count ? bcl_us_per_step(x->run_ms, j->a->o.steps) : 0.0, "run_ms", x->run_ms,
            "wait_ms", x->wait_ms, "mpi_ms", x->mpi_ms, "io_ms", x->io_ms);
        json_object_set_new(o, "phases_ms",
                            json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "mpi_init", x->init_ms,
                                      "setup", x->setup_ms, "calibrate", x->cal_ms, "load",
                                      x->load_ms, "run", x->run_ms, "read_validate", x->check_ms,
                                      "output", x->output_ms));
        json_object_set_new(o, "allreduce_us", json_real(x->allreduce_us));
        json_array_append_new(ranks, o);
    }
    json_object_set_new(root, "ranks", ranks);
    json_object_set_new(root, "mpi",
                        json_pack("{s:i, s:i, s:s, s:s, s:f, s:f, s:f, s:f}", "size", size, "nodes",
                                  me->nodes, "library", me->library, "split",
                                  size > 1 ? "rate" : "one rank", "slowest_ms", s->slowest,
                                  "mean_ms", s->mean, "mpi_ms", s->mpi, "io_ms", s->io));
    return root;
}

void ranks_report(job *j, const bcl_validation *v)
{
    j->me.mpi_ms = ranks_me()->mpi_ms;
    j->me.io_ms = ranks_me()->io_ms;
    rank_info *ri = ranks_rank() == 0 ? calloc((size_t)ranks_size(), sizeof *ri) : NULL;
    ranks_gather(&j->me, sizeof j->me, ri);
    if (!ri)
        return;
    summary s;
    summarise(ri, ranks_size(), &s);
    if (j->a->o.json) {
        json_t *root = report_json(j, ri, &s, v);
        cli_print_json(root);
        json_decref(root);
    } else {
        print_report(j, ri, &s, v);
    }
    free(ri);
}
