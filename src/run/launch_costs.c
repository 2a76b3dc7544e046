/*
 * What the K rule (src/run/k_rule.c) needs to know of a device, for one
 * model: the fixed cost of a launch, the cost of loading and storing a
 * ball, and the cost of a step, underfilled and full (docs/PERFORMANCE.md,
 * "Steps per launch"): the fixed cost from single-step launches at two
 * sizes, the steps from the slope of longer launches. Measured once, in at
 * most about 50 ms, with the model's default variant and local size, and
 * kept beside the binary cache
 *
 *   <cache>/launch/<model>-<device key>.json
 *
 * under the tuned files' device key (identity, driver, compute units and
 * clock), so that repeated runs get the same plan. Times are the host's
 * clock around enqueue and wait: what a run waits for, and the same on
 * every device whether or not its profiling passes its check. Each figure
 * is the least of its repeats: on a shared machine a busy moment only ever
 * adds time.
 */
#include "files/files.h"
#include "cache/cache.h"
#include "ocl/program.h"
#include "run/run.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define COSTS_FORMAT "ballcl-launch-costs/1"
/* A launch costs file is a few hundred bytes. */
#define MAX_COSTS_BYTES ((uint64_t)1 << 20)
/* The measurement stops adding launches after this much time. */
#define MEASURE_MS 40.0
/* A timed launch long enough for its slope to stand out of the noise. */
#define LONG_LAUNCH_MS 2.0

/* Whether the cache folder above <cache>/launch may be used: refused
 * (docs/cache.md), nothing is read from or written under it, and nothing
 * more is said (the binary cache says it once). */
static bool cache_folder_usable(const char *path)
{
    char dir[4096 + 64], why[4096 + 160];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return false;
    *slash = '\0'; /* <cache>/launch */
    slash = strrchr(dir, '/');
    if (!slash)
        return false;
    *slash = '\0'; /* <cache> */
    struct stat st;
    if (stat(dir, &st) != 0)
        return true; /* not there yet: made with the right mode when kept */
    return bcl_cache_folder_ok(dir, why, sizeof why);
}

/* <cache>/launch/<model>-<key>.json */
static int costs_path(bcl_context *c, char *out, size_t size, bcl_error *e)
{
    char dir[4096], key[33];
    const char *cd = bcl_context_cache_dir(c);
    int rc = BCL_OK;
    if (cd)
        snprintf(dir, sizeof dir, "%s", cd);
    else
        rc = bcl_cache_dir(dir, sizeof dir, e);
    if (rc == BCL_OK)
        rc = bcl_device_key(bcl_context_device(c), key, e);
    if (rc)
        return rc;
    int w = snprintf(out, size, "%s/launch/%s-%s.json", dir, bcl_context_model(c)->name, key);
    if (w < 0 || (size_t)w >= size)
        return bcl_fail(e, BCL_EXIT_INPUT, "launch costs path is too long");
    return BCL_OK;
}

static bool figure_ok(double v)
{
    return isfinite(v) && v >= 0 && v < 1e12;
}

/* Reads the kept figures; false (why says so, or is empty when there is
 * no file) when they cannot be used. */
static bool costs_load(bcl_context *c, const char *path, bcl_launch_costs *k, char *why,
                       size_t size)
{
    why[0] = '\0';
    unsigned mode = 0;
    int fd = bcl_open_regular(path, true, &mode);
    if (fd == -1 && (errno == ENOENT || errno == ENOTDIR))
        return false;
    if (fd < 0) {
        snprintf(why, size, "cannot open '%.120s': %s", path,
                 fd == -2 ? "not a regular file" : strerror(errno));
        return false;
    }
    struct stat st;
    char trust[4096 + 160] = "cannot stat the launch costs file";
    /* Only a file of the user's in a folder of the user's, as for the
     * binary cache (docs/cache.md): another user's figures would steer K. */
    char dir[4096 + 64];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    if (fstat(fd, &st) != 0 || !bcl_cache_owner_ok(&st, trust, sizeof trust) ||
        !bcl_cache_folder_ok(dir, trust, sizeof trust)) {
        close(fd);
        snprintf(why, size, "%.190s", trust);
        return false;
    }
    char *text = NULL;
    size_t len = 0;
    int err = bcl_read_fd(fd, MAX_COSTS_BYTES, &text, &len);
    close(fd);
    if (err) {
        snprintf(why, size, "cannot read '%.120s': %s", path,
                 err == EFBIG ? "larger than 1 MiB" : bcl_read_error(err));
        return false;
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    free(text);
    const char *format = NULL, *model = NULL;
    double lu = -1, io = -1, st_ns = -1, fl = -1;
    json_int_t fill = 0;
    bool ok = root &&
              json_unpack(root, "{s:s, s:s, s:F, s:F, s:F, s:F, s:I}", "format", &format, "model",
                          &model, "launch_us", &lu, "io_ns_per_ball", &io, "step_ns_per_ball",
                          &st_ns, "step_floor_us", &fl, "fill_balls", &fill) == 0 &&
              strcmp(format, COSTS_FORMAT) == 0 && strcmp(model, bcl_context_model(c)->name) == 0 &&
              figure_ok(lu) && figure_ok(io) && figure_ok(st_ns) && st_ns > 0 && figure_ok(fl) &&
              fill > 0;
    json_decref(root);
    if (!ok) {
        snprintf(why, size, "'%.150s' is not a launch costs file of this model", path);
        return false;
    }
    k->launch_us = lu;
    k->io_ns_per_ball = io;
    k->step_ns_per_ball = st_ns;
    k->step_floor_us = fl;
    k->fill_balls = (size_t)fill;
    return true;
}

static int costs_save(bcl_context *c, const char *path, const bcl_launch_costs *k, bcl_error *e)
{
    char dir[4096 + 64];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    int rc = bcl_make_folders(dir, e);
    char why[4096 + 160];
    if (rc == BCL_OK && !bcl_cache_folder_ok(dir, why, sizeof why))
        rc = bcl_fail(e, BCL_EXIT_INPUT, "%s", why);
    if (rc)
        return rc;
    const bcl_device_info *d = bcl_context_device(c);
    time_t now = time(NULL);
    struct tm tm;
    char date[32];
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *j =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:s, s:f, s:f, s:f, s:f, s:I, s:f}", "format",
                  COSTS_FORMAT, "model", bcl_context_model(c)->name, "device", "name", d->name,
                  "platform", d->platform_name, "driver", d->driver, "date", date, "launch_us",
                  k->launch_us, "io_ns_per_ball", k->io_ns_per_ball, "step_ns_per_ball",
                  k->step_ns_per_ball, "step_floor_us", k->step_floor_us, "fill_balls",
                  (json_int_t)k->fill_balls, "measure_ms", k->measure_ms);
    char *text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
    json_decref(j);
    if (!text)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    rc = bcl_write_file_atomic(path, text, strlen(text), e);
    free(text);
    return rc;
}

/* Host time of `launches` launches of K steps each, queued back to back
 * with one wait at the end: the least of `repeats`. */
static int time_launches(bcl_sim *s, const bcl_plan *base, unsigned k, unsigned launches,
                         unsigned repeats, double *ms, bcl_error *e)
{
    bcl_plan p = *base;
    p.steps_per_launch = k;
    p.untimed_launches = true; /* the host clock is the figure here */
    *ms = INFINITY;
    for (unsigned r = 0; r < repeats; r++) {
        bcl_sim_timing t;
        int rc = bcl_sim_run(s, &p, (uint64_t)k * launches, &t, e);
        if (rc)
            return rc;
        if (t.wall_ms < *ms)
            *ms = t.wall_ms;
    }
    return BCL_OK;
}

/* Grows K from k0 until one launch takes LONG_LAUNCH_MS or the time is
 * spent (few launches, few calls): by 8, or by what the last launch says
 * is enough when that is less (2 at least), so that the last launch stays
 * near LONG_LAUNCH_MS rather than up to 8 times it. The last two points
 * give the time per step (*slope_ms). */
static int fit_steps(bcl_sim *s, const bcl_plan *p, unsigned k0, double t0, double *slope_ms,
                     bcl_error *e)
{
    unsigned k = k0, kprev = k0;
    double prev = 0, now = 0;
    int rc = time_launches(s, p, k, 1, 2, &prev, e);
    while (rc == BCL_OK) {
        double grow = prev > 0 ? ceil(LONG_LAUNCH_MS / prev) : 8;
        grow = grow > 8 ? 8 : grow < 2 ? 2 : grow;
        kprev = k;
        k = (unsigned)(k * grow);
        rc = time_launches(s, p, k, 1, 2, &now, e);
        if (rc)
            break;
        if (now >= LONG_LAUNCH_MS || bcl_now_ms() - t0 > MEASURE_MS || k >= (1u << 21))
            break;
        prev = now;
    }
    if (rc)
        return rc;
    double slope = (now - prev) / (double)(k - kprev);
    if (!(slope > 0))
        slope = now / k; /* noise: the whole launch as steps, an upper bound */
    *slope_ms = slope;
    return BCL_OK;
}

/* Balls that fill the device: some 32768 work-items per compute unit —
 * more than a GPU's multiprocessors hold at once, and a state beyond its
 * last-level cache (on the H200 2048 a unit made 4 MB, which sat in its
 * L2 and showed a tenth of the loading and storing of a large state) — at
 * least 64 Ki balls so that loading and storing stand out, at most 16 Mi
 * (256 MB), and within one allocation and a sixty-fourth of the device's
 * memory. */
static size_t fill_balls(const bcl_device_info *d)
{
    size_t n = (size_t)(d->compute_units ? d->compute_units : 1) * 32768;
    if (n < ((size_t)1 << 16))
        n = (size_t)1 << 16;
    if (n > ((size_t)1 << 24))
        n = (size_t)1 << 24;
    if (d->max_alloc && n > d->max_alloc / 16)
        n = (size_t)(d->max_alloc / 16);
    if (d->global_mem && n > d->global_mem / 64 / 16)
        n = (size_t)(d->global_mem / 64 / 16);
    return n ? n : 1;
}

/* Random balls of the model, drawn for the first FILL_DRAWN and repeated
 * after (on the device: bcl_sim_create_tiled): drawing, holding and sending
 * millions would cost more than the whole measurement, and the timing
 * depends on the mix of balls, not on which. */
#define FILL_DRAWN ((size_t)1 << 16)

static int costs_measure(bcl_context *c, const float *params, bcl_launch_costs *k, bcl_error *e)
{
    double t0 = bcl_now_ms();
    const bcl_device_info *d = bcl_context_device(c);
    const bcl_model *m = bcl_context_model(c);
    size_t nfill = fill_balls(d);
    /* The default variant and local size at the fill; K set per launch. */
    float defaults[BCL_MAX_PARAMS];
    if (!params) {
        bcl_model_param_defaults(m, defaults);
        params = defaults;
    }
    bcl_plan_request req = {.params = params,
                            .balls = nfill,
                            .steps_per_launch = 2,
                            .fused = true,
                            .launch = {.mode = BCL_LOCAL_AUTO}};
    bcl_plan full, tiny;
    int rc = bcl_plan_resolve(c, &req, &full, e);
    if (rc)
        return rc;
    /* One work-item's balls per compute unit: the latency of a step when
     * nothing overlaps, and the cost of a launch that wakes every compute
     * unit (on a CPU each is a thread a launch wakes: a launch of one
     * work-item would wake one, and miss that cost). */
    size_t units = d->compute_units ? d->compute_units : 1;
    req.balls = full.balls_per_item * units < nfill ? full.balls_per_item * units : nfill;
    if ((rc = bcl_plan_resolve(c, &req, &tiny, e)))
        return rc;
    size_t drawn = nfill < FILL_DRAWN ? nfill : FILL_DRAWN;
    float *state = malloc(drawn * 4 * sizeof(float));
    if (!state)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of host memory for %zu balls", drawn);
    bcl_model_fill(m, state, 0, drawn, BCL_INIT_RANDOM, 1, params);
    bcl_sim *sf = NULL, *st = NULL;
    rc = bcl_sim_create_tiled(c, state, drawn, nfill, &sf, e);
    if (rc == BCL_OK)
        rc = bcl_sim_create_tiled(c, state, drawn, tiny.balls, &st, e);
    free(state);
    if (rc == BCL_OK)
        rc = bcl_sim_warmup(sf, &full, NULL, e);
    if (rc == BCL_OK)
        rc = bcl_sim_warmup(st, &tiny, NULL, e);
    /* The fixed cost at two sizes: 16 single-step launches back to back,
     * the way a run queues them, of the few balls and of the full device.
     * Less one step each, the rest is the launch and the loading and
     * storing of every ball once: a line in N (launch, io). Measured
     * directly rather than as the intercept of the step fits below, which
     * extrapolate from long launches and carry their noise. */
    double small16 = 0, full16 = 0, floor_ms = 0, slope = 0;
    if (rc == BCL_OK)
        rc = time_launches(st, &tiny, 1, 16, 2, &small16, e);
    if (rc == BCL_OK)
        rc = time_launches(sf, &full, 1, 16, 2, &full16, e);
    if (rc == BCL_OK)
        rc = fit_steps(st, &tiny, 512, t0, &floor_ms, e);
    if (rc == BCL_OK)
        rc = fit_steps(sf, &full, 16, t0, &slope, e);
    bcl_sim_destroy(sf);
    bcl_sim_destroy(st);
    if (rc)
        return rc;
    k->step_floor_us = floor_ms * 1e3;
    k->step_ns_per_ball = slope * 1e6 / (double)nfill;
    double small_us = small16 * 1e3 / 16 - k->step_floor_us;
    double full_us = full16 * 1e3 / 16 - slope * 1e3;
    k->launch_us = small_us > 0 ? small_us : 0;
    double io =
        nfill > tiny.balls ? (full_us - k->launch_us) * 1e3 / (double)(nfill - tiny.balls) : 0;
    k->io_ns_per_ball = io > 0 ? io : 0;
    k->fill_balls = nfill;
    k->measure_ms = bcl_now_ms() - t0;
    return BCL_OK;
}

int bcl_launch_costs_get(bcl_context *c, const float *params, bcl_launch_costs *out, bcl_error *e)
{
    bcl_launch_costs *k = bcl_context_costs(c);
    if (k->known) {
        *out = *k;
        return BCL_OK;
    }
    memset(k, 0, sizeof *k);
    char path[4096 + 64], why[sizeof k->note] = "";
    bcl_error pe = {0};
    bool have_path = bcl_context_uses_cache(c) && costs_path(c, path, sizeof path, &pe) == BCL_OK;
    if (!bcl_context_uses_cache(c))
        snprintf(why, sizeof why, "not kept: the cache is off");
    else if (!have_path)
        snprintf(why, sizeof why, "%.190s", pe.msg);
    else if (!cache_folder_usable(path)) {
        have_path = false;
        snprintf(why, sizeof why, "not kept: the cache folder is not used");
    }
    bcl_error_clear(&pe);
    bool loaded = have_path && costs_load(c, path, k, why, sizeof why);
    /* A file that is there but cannot be used is said (and replaced). */
    k->warn = have_path && why[0];
    if (loaded) {
        k->known = true;
        k->source = "stored";
        *out = *k;
        return BCL_OK;
    }
    bool warn = k->warn;
    int rc = costs_measure(c, params, k, e);
    if (rc) {
        memset(k, 0, sizeof *k);
        return rc;
    }
    k->warn = warn;
    k->known = true;
    k->source = "measured";
    /* Kept later, by bcl_launch_costs_keep when the context is destroyed,
     * once the run's own files are written: a file of ours must not come
     * between a run and its outputs. */
    k->unsaved = have_path;
    if (have_path)
        bcl_context_on_destroy(c, bcl_launch_costs_keep);
    snprintf(k->note, sizeof k->note, "%s", why);
    *out = *k;
    return BCL_OK;
}

int bcl_context_keep_launch_costs(bcl_context *c, bcl_error *e)
{
    bcl_launch_costs *k = bcl_context_costs(c);
    if (!k->known || !k->unsaved)
        return BCL_OK;
    k->unsaved = false;
    char path[4096 + 64];
    int rc = costs_path(c, path, sizeof path, e);
    if (rc == BCL_OK && !cache_folder_usable(path))
        return BCL_OK; /* refused: the binary cache has said so */
    if (rc == BCL_OK)
        rc = costs_save(c, path, k, e);
    return rc;
}

void bcl_launch_costs_keep(bcl_context *c)
{
    bcl_error e = {0};
    /* Not kept is no error: the next process measures again. */
    (void)bcl_context_keep_launch_costs(c, &e);
    bcl_error_clear(&e);
}

void bcl_launch_costs_estimate(const bcl_launch_costs *k, size_t balls, double *fixed_us,
                               double *step_us)
{
    double full = (double)balls * k->step_ns_per_ball / 1e3;
    *step_us = full > k->step_floor_us ? full : k->step_floor_us;
    *fixed_us = k->launch_us + (double)balls * k->io_ns_per_ball / 1e3;
}
