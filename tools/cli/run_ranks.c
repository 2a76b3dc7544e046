/*
 * ballcl run under MPI (docs/SCALING.md): every rank runs a contiguous range
 * of the balls on its own device, sized in proportion to the rate it
 * measured, and holds only that range; the state file is read and written
 * in slices with MPI-IO; each phase ends in one verdict for all ranks, and
 * rank 0 prints the one report.
 *
 * The phases, each closed by ranks_verdict so that a failure anywhere ends
 * every rank with the same exit class and the collectives always match:
 *   set-up (options, input header, device, program), calibration and
 *   split, load (slice read or made), run between two barriers, read back
 *   and validation, output.
 */
#include "ranks.h"
#include "run.h"

#include "ballcl/measure.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Balls per rank are whole multiples of this (but the last rank's): a
 * multiple of every kernel variant's width and of common local sizes, so a
 * rank's range starts where a single process's work-item would. */
#define RANK_BLOCK 1024

/* What each rank tells rank 0 for the report. */
typedef struct rank_info {
    int rank;
    char host[64];
    char selector[16];
    char device[96];
    uint64_t first, count;
    double rate;      /* ball-steps/s measured before the split (0: not measured) */
    double cal_ms;    /* what the calibration cost */
    double device_ms; /* the run on the device (profiling events) */
    double run_ms;    /* from the start barrier to this rank's end */
    double wait_ms;   /* from this rank's end to the end barrier */
    double mpi_ms;    /* in collectives, over the whole command */
    double io_ms;     /* in MPI-IO */
    /* The phases, from this rank's clock (the costs of docs/SCALING.md's
     * model): MPI_Init; devices, program and header; the slice read or
     * made and uploaded; read back and validation; the output. */
    double init_ms, setup_ms, load_ms, check_ms, output_ms;
    double allreduce_us; /* one MPI_Allreduce of a double, mean of 20 */
} rank_info;

/* A rank's work. */
typedef struct job {
    const run_args *a;
    bcl_device_list list;
    const bcl_device_info *dev;
    bcl_context *ctx;
    bcl_build_report br;
    bcl_plan plan;
    bcl_sim *sim;
    float *state, *init;
    size_t n; /* all balls */
    uint64_t data_offset;
    size_t first, count; /* this rank's */
    double first_ms;
    bcl_sim_timing t;
    bcl_validation v;
    rank_info me;
} job;

/* Adds to cand (g so far) the devices one selector names: a type word
 * every device of that type, "all" every device, else the one device
 * bcl_device_select picks. A device already there is not added again. */
static int add_candidates(const bcl_device_list *list, const char *sel, size_t *cand, size_t *g,
                          bcl_error *e)
{
    static const struct {
        const char *word;
        uint64_t type;
    } types[] = {{"gpu", BCL_DEVICE_GPU},
                 {"accelerator", BCL_DEVICE_ACCELERATOR},
                 {"cpu", BCL_DEVICE_CPU},
                 {"all", ~(uint64_t)0}};
    size_t found[64], nf = 0;
    for (size_t t = 0; t < 4 && nf == 0; t++) {
        if (strcasecmp(sel, types[t].word) != 0)
            continue;
        for (size_t i = 0; i < list->count && nf < 64; i++)
            if (list->dev[i].type & types[t].type)
                found[nf++] = i;
    }
    if (nf == 0) {
        int rc = bcl_device_select(list, sel, &found[0], e);
        if (rc)
            return rc;
        nf = 1;
    }
    for (size_t k = 0; k < nf; k++) {
        bool dup = false;
        for (size_t i = 0; i < *g; i++)
            dup |= cand[i] == found[k];
        if (!dup)
            cand[(*g)++] = found[k];
    }
    return BCL_OK;
}

/*
 * The devices a rank may take (docs/SCALING.md): those -d (or
 * $BALLCL_DEVICE) names, a comma-separated list where a type or "all"
 * names every device it matches; without a selector the GPUs, else the
 * accelerators, else the CPUs. The rank that is r-th on its node takes
 * candidate r mod G.
 */
static int pick_device(job *j, bcl_error *e)
{
    const char *text = j->a->device ? j->a->device : getenv("BALLCL_DEVICE");
    int rc = bcl_devices_enumerate(&j->list, e);
    if (rc)
        return rc;
    size_t *cand = calloc(j->list.count + 1, sizeof *cand), g = 0;
    if (!cand)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    if (!text || !*text) {
        static const char *const order[] = {"gpu", "accelerator", "cpu"};
        for (size_t t = 0; t < 3 && g == 0 && rc == BCL_OK; t++) {
            bool any = false;
            for (size_t i = 0; i < j->list.count; i++)
                any |= (j->list.dev[i].type & (t == 0   ? BCL_DEVICE_GPU
                                               : t == 1 ? BCL_DEVICE_ACCELERATOR
                                                        : BCL_DEVICE_CPU)) != 0;
            if (any)
                rc = add_candidates(&j->list, order[t], cand, &g, e);
        }
        if (g == 0 && rc == BCL_OK)
            rc = add_candidates(&j->list, "", cand, &g, e);
    } else {
        char item[256];
        for (const char *p = text; rc == BCL_OK;) {
            size_t len = strcspn(p, ",");
            if (len == 0 || len >= sizeof item) {
                rc = bcl_fail(e, BCL_EXIT_INPUT,
                              "-d '%s': expected selectors separated by single commas", text);
                break;
            }
            memcpy(item, p, len);
            item[len] = '\0';
            rc = add_candidates(&j->list, item, cand, &g, e);
            if (!p[len])
                break;
            p += len + 1;
        }
    }
    if (rc == BCL_OK)
        j->dev = &j->list.dev[cand[(size_t)ranks_node_rank() % g]];
    free(cand);
    return rc;
}

/* Rank 0 checks the input's header; every rank learns N and where the data
 * starts. */
static int read_header(job *j, bcl_error *e)
{
    int rc = BCL_OK;
    struct {
        uint64_t n, offset;
    } h = {j->a->balls, 0};
    if (j->a->input && ranks_rank() == 0) {
        size_t n = 0;
        rc = bcl_npy_read_header(j->a->input, &n, &h.offset, e);
        h.n = n;
    }
    if ((rc = ranks_verdict(ranks_share(rc, e), e)))
        return rc;
    ranks_bcast(&h, sizeof h);
    j->n = (size_t)h.n;
    j->data_offset = h.offset;
    return BCL_OK;
}

static void plan_request(const job *j, size_t first, size_t balls, bcl_plan_request *r)
{
    *r = (bcl_plan_request){
        .params = j->a->model.params,
        .first = first,
        .balls = balls,
        .steps = j->a->steps,
        .steps_per_launch = (unsigned)j->a->steps_per_launch,
        .sync = j->a->sync,
        .launch = j->a->launch,
        .variant = j->a->variant,
    };
}

/* The rate of this rank's device for the run's plan: a short timing on up
 * to 1M balls (16M on a GPU), enough to fill the device. By the host's
 * clock: what the split balances is each rank's time between the barriers,
 * launch overheads included (and on a CPU shared by several ranks, PoCL's
 * profiling times can be far shorter than the time the rank takes). */
static int calibrate(job *j, bcl_error *e)
{
    double t0 = MPI_Wtime();
    bool gpu = !(j->dev->type & BCL_DEVICE_CPU);
    size_t cal = gpu ? (size_t)1 << 24 : (size_t)1 << 20;
    if (cal > j->n)
        cal = j->n;
    uint64_t per_alloc = j->dev->max_alloc / 16;
    if (per_alloc && cal > per_alloc)
        cal = (size_t)per_alloc;
    float *s = malloc(cal * 16);
    if (!s)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu calibration balls", cal);
    j->a->model.model->init(s, 0, cal, BCL_INIT_RANDOM, 1, j->a->model.params);
    bcl_plan_request req;
    plan_request(j, 0, cal, &req);
    bcl_plan plan;
    bcl_sim *sim = NULL;
    int rc = bcl_plan_resolve(j->ctx, &req, &plan, e);
    if (rc == BCL_OK)
        rc = bcl_sim_create(j->ctx, s, cal, &sim, e);
    free(s);
    bcl_measure_opts mo = {.repeats = 3, .repeat_ms = 30, .max_steps = 1000000};
    bcl_measurement m = {0};
    bcl_timer *t = NULL;
    if (rc == BCL_OK)
        rc = bcl_timer_sim(sim, &plan, &mo, &t, e);
    for (unsigned i = 0; i < mo.repeats && rc == BCL_OK; i++)
        rc = bcl_timer_repeat(t, e);
    if (rc == BCL_OK)
        bcl_timer_result(t, &m);
    bcl_timer_free(t);
    bcl_sim_destroy(sim);
    if (rc == BCL_OK)
        j->me.rate = m.wall_us.median > 0 ? (double)cal / (m.wall_us.median * 1e-6) : 0;
    j->me.cal_ms = (MPI_Wtime() - t0) * 1e3;
    return rc;
}

/*
 * Contiguous ranges in proportion to the ranks' rates, in whole blocks (the
 * last rank with balls also takes the n % block left over), the blocks
 * rounded by largest remainder. A rank whose share is under one block gets
 * none: it still takes part in every collective.
 */
static void split(size_t n, int size, const double *rate, size_t *first, size_t *count)
{
    double sum = 0;
    for (int r = 0; r < size; r++)
        sum += rate[r] > 0 && isfinite(rate[r]) ? rate[r] : 0;
    size_t blocks = n / RANK_BLOCK, given = 0;
    double *rem = calloc((size_t)size, sizeof *rem);
    for (int r = 0; r < size; r++) {
        double w = sum > 0 ? (rate[r] > 0 && isfinite(rate[r]) ? rate[r] / sum : 0) : 1.0 / size;
        double q = w * (double)blocks;
        count[r] = (size_t)floor(q);
        if (count[r] > blocks - given)
            count[r] = blocks - given;
        given += count[r];
        if (rem)
            rem[r] = q - floor(q);
    }
    while (given < blocks) {
        int best = 0;
        for (int r = 1; r < size; r++)
            if (rem && rem[r] > rem[best])
                best = r;
        count[best]++;
        if (rem)
            rem[best] = -1;
        given++;
    }
    free(rem);
    int last = 0;
    for (int r = 0; r < size; r++) {
        count[r] *= RANK_BLOCK;
        if (count[r])
            last = r;
    }
    count[last] += n % RANK_BLOCK;
    size_t at = 0;
    for (int r = 0; r < size; r++) {
        first[r] = at;
        at += count[r];
    }
}

/* Set-up: header, device, program; then the rates and the split. */
static int set_up(job *j, bcl_error *e)
{
    const run_args *a = j->a;
    int rc = BCL_OK;
    double t0 = MPI_Wtime();
    /* The same options on every rank: the same outcome. */
    if (a->snapshot) {
        rc = bcl_fail(e, BCL_EXIT_INPUT,
                      "--snapshot is not available under MPI: no rank holds the whole state "
                      "(write --output and draw it with a run in one process)");
    } else {
        if (a->output && ranks_rank() == 0)
            rc = run_check_output_path(a->output, "--output", e);
        rc = ranks_share(rc, e);
    }
    if ((rc = ranks_verdict(rc, e)) || (rc = read_header(j, e)))
        return rc;
    rc = pick_device(j, e);
    if (rc == BCL_OK) {
        bcl_context_opts copts = {.use_cache = a->use_cache};
        rc = bcl_context_create(j->dev, a->model.model, &copts, &j->ctx, &j->br, e);
    }
    if (rc == BCL_OK && j->br.warning[0])
        fprintf(stderr, "ballcl: rank %d: warning: %s\n", ranks_rank(), j->br.warning);
    j->br.warning[0] = '\0';
    j->me.setup_ms = (MPI_Wtime() - t0) * 1e3;
    /* One rank has nothing to weigh against. */
    if (rc == BCL_OK && ranks_size() > 1)
        rc = calibrate(j, e);
    if ((rc = ranks_verdict(rc, e)))
        return rc;
    int size = ranks_size();
    double *rates = calloc((size_t)size, sizeof *rates);
    size_t *firsts = calloc((size_t)size, sizeof *firsts);
    size_t *counts = calloc((size_t)size, sizeof *counts);
    if (!rates || !firsts || !counts)
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    else {
        ranks_allgather_double(j->me.rate, rates);
        split(j->n, size, rates, firsts, counts);
        j->first = firsts[ranks_rank()];
        j->count = counts[ranks_rank()];
    }
    free(rates);
    free(firsts);
    free(counts);
    /* The shard must fit this rank's device and host, checked before it is
     * allocated (as a single process checks the whole state). */
    if (rc == BCL_OK && j->count)
        rc = bcl_memory_fit(j->dev, j->count, a->validate ? 2 : 1, a->input ? a->input : "--balls",
                            e);
    return ranks_verdict(rc, e);
}

/* The slice: read with MPI-IO, or made by the model's init from the
 * ball indices (the bits of a single process's fill). Then the device. */
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
        a->model.model->init(j->state, j->first, j->count, a->init, a->seed, a->model.params);
    }
    if (rc == BCL_OK && a->validate && j->count) {
        j->init = malloc(j->count * 16);
        if (!j->init)
            rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for validation");
        else
            memcpy(j->init, j->state, j->count * 16);
    }
    if (rc == BCL_OK && j->count) {
        bcl_plan_request req;
        plan_request(j, j->first, j->count, &req);
        rc = bcl_sim_create(j->ctx, j->state, j->count, &j->sim, e);
        if (rc == BCL_OK)
            rc = bcl_plan_resolve(j->ctx, &req, &j->plan, e);
        if (j->plan.warning[0] && ranks_rank() == 0)
            fprintf(stderr, "ballcl: warning: %s\n", j->plan.warning);
        if (rc == BCL_OK)
            rc = bcl_sim_warmup(j->sim, &j->plan, &j->first_ms, e);
        if (rc == BCL_OK)
            bcl_context_cache_store(j->ctx, &j->br);
    }
    j->me.load_ms = (MPI_Wtime() - t0) * 1e3;
    return ranks_verdict(rc, e);
}

/* The run between two barriers: a rank's own time ends when its device is
 * done; the wait for the slowest is what the second barrier takes. */
static int run(job *j, bcl_error *e)
{
    ranks_barrier();
    double t0 = MPI_Wtime();
    int rc = j->count ? bcl_sim_run(j->sim, &j->plan, j->a->steps, &j->t, e) : BCL_OK;
    double t1 = MPI_Wtime();
    ranks_barrier();
    double t2 = MPI_Wtime();
    j->me.device_ms = j->t.device_ms;
    j->me.run_ms = (t1 - t0) * 1e3;
    j->me.wait_ms = (t2 - t1) * 1e3;
    if ((rc = ranks_verdict(rc, e)))
        return rc;
    j->me.allreduce_us = ranks_allreduce_us(20);
    double t3 = MPI_Wtime();
    if (j->count)
        rc = bcl_sim_read(j->sim, j->state, e);
    if (rc == BCL_OK && j->a->validate && j->count) {
        rc = bcl_validate(j->a->model.model, j->a->model.params, j->init, j->state, j->count,
                          j->a->steps, j->a->tol_ulp, &j->v, e);
        /* Ball numbers of the whole state, as a single process reports them. */
        for (size_t i = 0; i < j->v.nreported; i++)
            j->v.first[i].ball += j->first;
    }
    j->me.check_ms = (MPI_Wtime() - t3) * 1e3;
    return ranks_verdict(rc, e);
}

/* All ranks' validations into one: sums, the largest distance, the first
 * mismatches in ball order (ranks hold ascending ranges). */
static void reduce_validation(job *j, bcl_validation *all)
{
    uint64_t sums[2] = {j->v.compared, j->v.mismatches};
    uint64_t ulp = j->v.max_ulp;
    ranks_sum_u64(sums, 2);
    ranks_max_u64(&ulp, 1);
    bcl_validation *each = ranks_rank() == 0 ? calloc((size_t)ranks_size(), sizeof *each) : NULL;
    ranks_gather(&j->v, sizeof j->v, each);
    *all = (bcl_validation){.compared = sums[0], .mismatches = sums[1], .max_ulp = ulp};
    for (int r = 0; each && r < ranks_size(); r++)
        for (size_t i = 0; i < each[r].nreported && all->nreported < BCL_MAX_REPORTED_MISMATCHES;
             i++)
            all->first[all->nreported++] = each[r].first[i];
    free(each);
}

static void print_report(const job *j, const rank_info *ri, const bcl_validation *v, double run_ms)
{
    const run_args *a = j->a;
    int size = ranks_size();
    double steps = (double)a->steps;
    double slowest = 0, mean = 0, mpi_max = 0, io_max = 0, cal_max = 0;
    for (int r = 0; r < size; r++) {
        if (ri[r].run_ms > slowest)
            slowest = ri[r].run_ms;
        mean += ri[r].run_ms / size;
        mpi_max = ri[r].mpi_ms > mpi_max ? ri[r].mpi_ms : mpi_max;
        io_max = ri[r].io_ms > io_max ? ri[r].io_ms : io_max;
        cal_max = ri[r].cal_ms > cal_max ? ri[r].cal_ms : cal_max;
    }
    double us = steps ? run_ms * 1e3 / steps : 0;
    double rate = us > 0 ? (double)j->n / (us * 1e-6) : 0;
    printf("ranks       %d on %d node%s (%s)\n", size, ranks_nodes(), ranks_nodes() == 1 ? "" : "s",
           ranks_library());
    printf("split       %s\n", size > 1 ? "by each rank's measured rate" : "one rank: all balls");
    printf("model       %s, %s\n", a->model.model->name,
           a->input ? a->input : (a->init == BCL_INIT_SEED ? "init seed" : "init random"));
    printf("balls       %zu\n", j->n);
    if (j->count)
        printf("steps       %llu (%u per launch on rank 0: %s)\n", (unsigned long long)a->steps,
               j->plan.steps_per_launch, j->plan.k_how);
    else
        printf("steps       %llu\n", (unsigned long long)a->steps);
    printf("time        %.3f us/step, between barriers (slowest rank)\n", us);
    printf("rate        %.3g ball-steps/s over all ranks\n", rate);
    printf("imbalance   slowest rank %.1f ms, mean %.1f ms (%.2fx)\n", slowest, mean,
           mean > 0 ? slowest / mean : 1.0);
    printf("mpi         %.1f ms in collectives, %.1f ms in MPI-IO (most of any rank); "
           "allreduce %.1f us\n",
           mpi_max, io_max, ri[0].allreduce_us);
    rank_info worst = {0};
    for (int r = 0; r < size; r++) {
        const rank_info *x = &ri[r];
        worst.init_ms = x->init_ms > worst.init_ms ? x->init_ms : worst.init_ms;
        worst.setup_ms = x->setup_ms > worst.setup_ms ? x->setup_ms : worst.setup_ms;
        worst.load_ms = x->load_ms > worst.load_ms ? x->load_ms : worst.load_ms;
        worst.check_ms = x->check_ms > worst.check_ms ? x->check_ms : worst.check_ms;
        worst.output_ms = x->output_ms > worst.output_ms ? x->output_ms : worst.output_ms;
    }
    printf("phases      MPI_Init %.0f ms, set-up %.0f, calibration %.0f, load %.0f, run %.0f, "
           "check %.0f, output %.0f (slowest rank each)\n",
           worst.init_ms, worst.setup_ms, cal_max, worst.load_ms, slowest, worst.check_ms,
           worst.output_ms);
    printf("\nRANK  HOST              DEVICE                                  FIRST        BALLS  "
           "  SHARE  RATE (CAL)   US/STEP   WAIT MS\n");
    for (int r = 0; r < size; r++) {
        char dev[64];
        snprintf(dev, sizeof dev, "%s %s", ri[r].selector, ri[r].device);
        printf("%-5d %-17.17s %-38.38s %6llu %12llu %6.1f%% %11.3g %9.3f %9.1f\n", r, ri[r].host,
               dev, (unsigned long long)ri[r].first, (unsigned long long)ri[r].count,
               j->n ? 100.0 * (double)ri[r].count / (double)j->n : 0, ri[r].rate,
               steps && ri[r].count ? ri[r].run_ms * 1e3 / steps : 0, ri[r].wait_ms);
    }
    printf("\n");
    if (!a->validate) {
        printf("validation  skipped (--no-validate)\n");
        return;
    }
    if (v->mismatches == 0) {
        printf("validation  passed: %llu floats %s the C reference (max %llu ULP), every rank\n",
               (unsigned long long)v->compared,
               a->tol_ulp ? "within tolerance of" : "bit-identical to",
               (unsigned long long)v->max_ulp);
        return;
    }
    printf("validation  FAILED: %llu of %llu floats differ, max %s%llu ULP\n",
           (unsigned long long)v->mismatches, (unsigned long long)v->compared,
           v->max_ulp == UINT64_MAX ? "NaN " : "",
           (unsigned long long)(v->max_ulp == UINT64_MAX ? 0 : v->max_ulp));
    for (size_t i = 0; i < v->nreported; i++) {
        const bcl_mismatch *mm = &v->first[i];
        printf("  ball %zu: want (%.9g, %.9g, %.9g, %.9g) got (%.9g, %.9g, %.9g, %.9g)\n", mm->ball,
               mm->want[0], mm->want[1], mm->want[2], mm->want[3], mm->got[0], mm->got[1],
               mm->got[2], mm->got[3]);
    }
}

static json_t *report_json(const job *j, const rank_info *ri, const bcl_validation *v,
                           double run_ms)
{
    int size = ranks_size();
    /* The single-process report's fields, with rank 0's device and plan and
     * the run's time between barriers; then the ranks. */
    bcl_sim_timing t = {.device_ms = run_ms, .wall_ms = run_ms, .launches = j->t.launches};
    json_t *root = run_report_json(j->a, j->dev, j->n, &j->br, &j->plan,
                                   j->sim ? bcl_sim_buffers(j->sim) : 0, j->first_ms, &t, v);
    json_t *ranks = json_array();
    double slowest = 0, mean = 0, mpi_max = 0, io_max = 0;
    for (int r = 0; r < size; r++) {
        double steps = (double)j->a->steps;
        slowest = ri[r].run_ms > slowest ? ri[r].run_ms : slowest;
        mean += ri[r].run_ms / size;
        mpi_max = ri[r].mpi_ms > mpi_max ? ri[r].mpi_ms : mpi_max;
        io_max = ri[r].io_ms > io_max ? ri[r].io_ms : io_max;
        json_array_append_new(
            ranks,
            json_pack("{s:i, s:s, s:[{s:s, s:s}], s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
                      "rank", r, "host", ri[r].host, "devices", "selector", ri[r].selector, "name",
                      ri[r].device, "first", (json_int_t)ri[r].first, "balls",
                      (json_int_t)ri[r].count, "rate_calibrated", ri[r].rate, "calibrate_ms",
                      ri[r].cal_ms, "us_per_step",
                      steps && ri[r].count ? ri[r].run_ms * 1e3 / steps : 0.0, "device_ms",
                      ri[r].device_ms, "wait_ms", ri[r].wait_ms, "mpi_ms", ri[r].mpi_ms, "io_ms",
                      ri[r].io_ms));
        json_object_set_new(json_array_get(ranks, (size_t)r), "phases_ms",
                            json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "mpi_init",
                                      ri[r].init_ms, "setup", ri[r].setup_ms, "calibrate",
                                      ri[r].cal_ms, "load", ri[r].load_ms, "run", ri[r].run_ms,
                                      "read_validate", ri[r].check_ms, "output", ri[r].output_ms));
        json_object_set_new(json_array_get(ranks, (size_t)r), "allreduce_us",
                            json_real(ri[r].allreduce_us));
    }
    json_object_set_new(root, "ranks", ranks);
    json_object_set_new(root, "mpi",
                        json_pack("{s:i, s:i, s:s, s:s, s:f, s:f, s:f, s:f}", "size", size, "nodes",
                                  ranks_nodes(), "library", ranks_library(), "split",
                                  size > 1 ? "rate" : "one rank", "slowest_ms", slowest, "mean_ms",
                                  mean, "mpi_ms", mpi_max, "io_ms", io_max));
    return root;
}

/* Rank 0 gathers every rank's figures and prints the one report. */
static void report(job *j, const bcl_validation *v)
{
    j->me.mpi_ms = ranks_mpi_ms();
    j->me.io_ms = ranks_io_ms();
    rank_info *ri = ranks_rank() == 0 ? calloc((size_t)ranks_size(), sizeof *ri) : NULL;
    ranks_gather(&j->me, sizeof j->me, ri);
    if (!ri)
        return;
    double run_ms = 0;
    for (int r = 0; r < ranks_size(); r++)
        run_ms = ri[r].run_ms > run_ms ? ri[r].run_ms : run_ms;
    if (j->a->json) {
        json_t *root = report_json(j, ri, v, run_ms);
        cli_print_json(root);
        json_decref(root);
    } else {
        print_report(j, ri, v, run_ms);
    }
    free(ri);
}

int run_ranks(const run_args *a)
{
    bcl_error e = {0};
    job j = {.a = a};
    j.me.rank = ranks_rank();
    j.me.init_ms = ranks_init_ms();
    snprintf(j.me.host, sizeof j.me.host, "%s", ranks_host());
    int rc = set_up(&j, &e);
    if (rc == BCL_OK) {
        snprintf(j.me.selector, sizeof j.me.selector, "%u:%u", j.dev->platform_index,
                 j.dev->device_index);
        snprintf(j.me.device, sizeof j.me.device, "%.95s", j.dev->name);
        j.me.first = j.first;
        j.me.count = j.count;
        rc = load(&j, &e);
    }
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
    if (rc == BCL_OK)
        report(&j, &v);
    if (rc == BCL_OK && v.mismatches) {
        rc = BCL_EXIT_MISMATCH;
        if (ranks_rank() == 0)
            fprintf(stderr,
                    "ballcl: validation failed: %llu of %llu floats differ from the C "
                    "reference%s\n",
                    (unsigned long long)v.mismatches, (unsigned long long)v.compared,
                    a->output ? "; output not written" : "");
    }
    bcl_sim_destroy(j.sim);
    bcl_context_destroy(j.ctx);
    bcl_devices_free(&j.list);
    free(j.state);
    free(j.init);
    bcl_error_clear(&e);
    return rc;
}
