/*
 * Which devices a rank drives, how fast each is, and how the balls are cut
 * (docs/SCALING.md): the rates decide the ranks' ranges, then each rank's
 * range among its devices.
 */
#include "run_ranks.h"

#include "measure/measure.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* Every candidate in order: a list of selectors, or the default types. */
static int candidates(const bcl_device_list *list, const char *text, size_t *cand, size_t *g,
                      bcl_error *e)
{
    int rc = BCL_OK;
    if (!text || !*text) {
        static const char *const order[] = {"gpu", "accelerator", "cpu"};
        static const uint64_t types[] = {BCL_DEVICE_GPU, BCL_DEVICE_ACCELERATOR, BCL_DEVICE_CPU};
        for (size_t t = 0; t < 3 && *g == 0 && rc == BCL_OK; t++) {
            bool any = false;
            for (size_t i = 0; i < list->count; i++)
                any |= (list->dev[i].type & types[t]) != 0;
            if (any)
                rc = add_candidates(list, order[t], cand, g, e);
        }
        if (*g == 0 && rc == BCL_OK)
            rc = add_candidates(list, "", cand, g, e);
        return rc;
    }
    char item[256];
    for (const char *p = text;;) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof item)
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "-d '%s': expected selectors separated by single commas", text);
        memcpy(item, p, len);
        item[len] = '\0';
        if ((rc = add_candidates(list, item, cand, g, e)) || !p[len])
            return rc;
        p += len + 1;
    }
}

int ranks_node_devices(const bcl_device_list *list, const char *text, bool every, size_t *idx,
                       size_t cap, size_t *n, bcl_error *e)
{
    size_t *cand = calloc(list->count + 1, sizeof *cand), g = 0;
    if (!cand)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    int rc = every && (!text || !*text) ? add_candidates(list, "all", cand, &g, e)
                                        : candidates(list, text, cand, &g, e);
    size_t r = (size_t)ranks_node_rank(), l = (size_t)ranks_node_size();
    *n = 0;
    if (rc == BCL_OK && l >= g && !every) {
        idx[(*n)++] = cand[r % g];
    } else if (rc == BCL_OK) {
        /* Fewer ranks than devices on this node (or every device wanted
         * once): each rank takes every l-th. */
        for (size_t i = r; i < g && rc == BCL_OK; i += l) {
            if (*n == cap)
                rc = bcl_fail(e, BCL_EXIT_INPUT,
                              "rank %d would drive more than %zu devices: run more ranks per node",
                              ranks_rank(), cap);
            else
                idx[(*n)++] = cand[i];
        }
    }
    free(cand);
    return rc;
}

int ranks_pick_devices(job *j, bcl_error *e)
{
    const char *text = j->a->o.device ? j->a->o.device : getenv("BALLCL_DEVICE");
    int rc = bcl_devices_enumerate(&j->list, e);
    size_t idx[RANK_MAX_DEVICES];
    if (rc == BCL_OK)
        rc = ranks_node_devices(&j->list, text, false, idx, RANK_MAX_DEVICES, &j->ndev, e);
    for (size_t i = 0; rc == BCL_OK && i < j->ndev; i++)
        j->devs[i] = &j->list.dev[idx[i]];
    return rc;
}

/* The rate of one device for the run's plan: a short timing on up to 1M
 * balls (16M on a GPU), enough to fill the device. By the host's clock:
 * what the split balances is each rank's time between the barriers, launch
 * overheads included (and on a CPU shared by several ranks, PoCL's
 * profiling times can be far shorter than the time the rank takes). */
static int calibrate_one(const job *j, const bcl_device_info *d, double *rate, bcl_error *e)
{
    const run_args *a = j->a;
    size_t cal = (d->type & BCL_DEVICE_CPU) ? (size_t)1 << 20 : (size_t)1 << 24;
    if (cal > j->n)
        cal = j->n;
    uint64_t per_alloc = d->max_alloc / 16;
    if (per_alloc && cal > per_alloc)
        cal = (size_t)per_alloc;
    float *s = malloc(cal * 16);
    if (!s)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu calibration balls", cal);
    bcl_model_fill(a->o.model.model, s, 0, cal, BCL_INIT_RANDOM, 1, a->o.model.params);
    bcl_plan_request req = {
        .params = a->o.model.params,
        .balls = cal,
        .steps = a->o.steps,
        .steps_per_launch = (unsigned)a->steps_per_launch,
        .sync = a->sync,
        .launch = a->o.launch,
        .variant = a->variant,
        .take_tuned = !a->steps_per_launch && !a->variant && !a->o.local_given,
        .launch_budget_ms = a->o.launch_budget_ms,
    };
    bcl_context_opts copts = {.use_cache = a->o.use_cache};
    bcl_build_report br;
    bcl_context *ctx = NULL;
    bcl_plan plan;
    bcl_sim *sim = NULL;
    bcl_timer *t = NULL;
    bcl_measure_opts mo = {.repeats = 3, .repeat_ms = 30, .max_steps = 1000000};
    bcl_measurement m = {0};
    int rc = bcl_context_create(d, a->o.model.model, &copts, &ctx, &br, e);
    if (rc == BCL_OK)
        rc = bcl_plan_resolve(ctx, &req, &plan, e);
    if (rc == BCL_OK)
        rc = bcl_sim_create(ctx, s, cal, &sim, e);
    free(s);
    if (rc == BCL_OK)
        rc = bcl_timer_sim(sim, &plan, &mo, &t, e);
    for (unsigned i = 0; i < mo.repeats && rc == BCL_OK; i++)
        rc = bcl_timer_repeat(t, e);
    if (rc == BCL_OK)
        bcl_timer_result(t, &m);
    bcl_timer_free(t);
    bcl_sim_destroy(sim);
    bcl_context_destroy(ctx);
    *rate = rc == BCL_OK && m.wall_us.median > 0 ? (double)cal / (m.wall_us.median * 1e-6) : 0;
    return rc;
}

int ranks_calibrate(job *j, bcl_error *e)
{
    double t0 = MPI_Wtime();
    int rc = BCL_OK;
    j->me.rate = 0;
    for (size_t i = 0; i < j->ndev && rc == BCL_OK; i++) {
        rc = calibrate_one(j, j->devs[i], &j->rate[i], e);
        j->me.rate += j->rate[i];
    }
    j->me.cal_ms = (MPI_Wtime() - t0) * 1e3;
    return rc;
}

/*
 * Contiguous ranges in proportion to the rates, in whole blocks (the last
 * part with balls also takes the n % block left over), the blocks rounded
 * by largest remainder. A part whose share is under one block gets none.
 */
void ranks_split(size_t n, size_t parts, const double *rate, size_t *first, size_t *count)
{
    double sum = 0;
    for (size_t r = 0; r < parts; r++)
        sum += rate[r] > 0 && isfinite(rate[r]) ? rate[r] : 0;
    size_t blocks = n / RANK_BLOCK, given = 0;
    double *rem = calloc(parts, sizeof *rem);
    for (size_t r = 0; r < parts; r++) {
        double w =
            sum > 0 ? (rate[r] > 0 && isfinite(rate[r]) ? rate[r] / sum : 0) : 1.0 / (double)parts;
        double q = w * (double)blocks;
        count[r] = (size_t)floor(q);
        if (count[r] > blocks - given)
            count[r] = blocks - given;
        given += count[r];
        if (rem)
            rem[r] = q - floor(q);
    }
    while (given < blocks) {
        size_t best = 0;
        for (size_t r = 1; r < parts; r++)
            if (rem && rem[r] > rem[best])
                best = r;
        count[best]++;
        if (rem)
            rem[best] = -1;
        given++;
    }
    free(rem);
    size_t last = 0;
    for (size_t r = 0; r < parts; r++) {
        count[r] *= RANK_BLOCK;
        if (count[r])
            last = r;
    }
    count[last] += n % RANK_BLOCK;
    size_t at = 0;
    for (size_t r = 0; r < parts; r++) {
        first[r] = at;
        at += count[r];
    }
}
