/*
 * Surveying one device (docs/SURVEY.md): identity and limits, then the
 * figures of src/survey/figures.c (build times, latency, copy, the add rate
 * and the peaks, transfers, each model's ball-step figures), all measured
 * by the library that bench and tune use (src/measure/).
 *
 * Every ball-step figure runs from a random initial state (nothing for
 * memory compression to find) and is validated bit for bit against the
 * model's C reference before it is timed. A figure that fails is null, with
 * its error under "errors", and the survey goes on: one failing measurement
 * never takes the other figures, or the other devices, down with it.
 */
#include "measure/timing.h"
#include "models/models.h"
#include "survey/survey.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_BUILD_REPEATS 16
#define MAX_SWEEP         26
#define FIGURE            160

typedef struct surveyor {
    const bcl_device_info *d;
    const bcl_survey_opts *o;
    json_t *dev, *measured, *errors;
    int status; /* worst outcome so far */
    unsigned done, total;
} surveyor;

static json_t *number(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* Records the error of a figure and clears e for the next one. */
static void failed(surveyor *s, const char *figure, bcl_error *e)
{
    int code = e->code ? e->code : BCL_EXIT_RUNTIME;
    json_object_set_new(s->errors, figure, bcl_survey_text(e->msg[0] ? e->msg : "unknown error"));
    if (code != BCL_EXIT_MISMATCH)
        s->status = BCL_EXIT_RUNTIME;
    else if (s->status == BCL_OK)
        s->status = BCL_EXIT_MISMATCH;
    bcl_error_clear(e);
}

/* Records e again under another figure, e itself kept. */
static void failed_too(surveyor *s, const char *figure, const bcl_error *e)
{
    bcl_error copy = *e;
    copy.detail = NULL;
    failed(s, figure, &copy);
}

static void set_fig(surveyor *s, bcl_fig f, json_t *v)
{
    json_object_set_new(s->measured, bcl_survey_key(f), v);
}

/* The error key of figure f: "measured.<key>". */
static const char *fig_path(bcl_fig f, char *path)
{
    snprintf(path, FIGURE, "measured.%s", bcl_survey_key(f));
    return path;
}

static void fig_failed(surveyor *s, bcl_fig f, bcl_error *e)
{
    char path[FIGURE];
    failed(s, fig_path(f, path), e);
}

/* Figure f is the median of st when rc is BCL_OK; else e is its error. */
static void set_median(surveyor *s, bcl_fig f, int rc, const bcl_stats *st, bcl_error *e)
{
    if (rc == BCL_OK)
        set_fig(s, f, number(st->median));
    else
        fig_failed(s, f, e);
}

static void progress(surveyor *s, const char *what)
{
    if (s->o->progress) {
        char line[512];
        snprintf(line, sizeof line, "%s: %s", s->d->name, what);
        s->o->progress(s->o->progress_arg, s->done, s->total, line);
    }
    s->done++;
}

/* ---- build ------------------------------------------------------------------- */

/* Times `repeats` builds of m's program; with a cache folder, every one
 * must come from the binary cache there. */
static int time_builds(surveyor *s, const bcl_model *m, const char *cache_dir, bcl_stats *ms,
                       bcl_error *e)
{
    unsigned r = s->o->build_repeats ? s->o->build_repeats : 1;
    if (r > MAX_BUILD_REPEATS)
        r = MAX_BUILD_REPEATS;
    double x[MAX_BUILD_REPEATS];
    bcl_context_opts co = {.use_cache = cache_dir != NULL, .cache_dir = cache_dir};
    for (unsigned i = 0; i < r; i++) {
        bcl_context *c;
        bcl_build_report rep;
        int rc = bcl_context_create(s->d, m, &co, &c, &rep, e);
        if (rc)
            return rc;
        bcl_context_destroy(c);
        if (cache_dir && !rep.cache_hit)
            return bcl_fail(e, BCL_EXIT_RUNTIME, "the binary cache gave no program (%s%s%s)",
                            rep.note, rep.warning[0] ? "; " : "", rep.warning);
        x[i] = rep.program_ms;
    }
    bcl_stats_compute(x, r, ms);
    return BCL_OK;
}

/* Stores m's program in the cache folder dir as 'ballcl run' does: built
 * from source, then one launch of the one-step kernel (PoCL adds the code
 * it compiles at a first launch to the binary), then the entry. */
static int prime_cache(surveyor *s, const bcl_model *m, const char *dir, bcl_error *e)
{
    bcl_context_opts co = {.use_cache = true, .cache_dir = dir};
    bcl_context *c;
    bcl_build_report rep;
    int rc = bcl_context_create(s->d, m, &co, &c, &rep, e);
    if (rc)
        return rc;
    float p[BCL_MAX_PARAMS], ball[4];
    bcl_model_param_defaults(m, p);
    m->init(ball, 0, 1, BCL_INIT_RANDOM, s->o->seed, p);
    bcl_sim *sim = NULL;
    bcl_plan_request req = {.params = p, .balls = 1, .steps_per_launch = 1, .variant = ""};
    bcl_plan plan;
    rc = bcl_plan_resolve(c, &req, &plan, e);
    if (rc == BCL_OK)
        rc = bcl_sim_create(c, ball, 1, &sim, e);
    if (rc == BCL_OK)
        rc = bcl_sim_warmup(sim, &plan, NULL, e);
    bcl_sim_destroy(sim);
    if (rc == BCL_OK)
        bcl_context_cache_store(c, &rep);
    bcl_context_destroy(c);
    if (rc == BCL_OK && !rep.cache_stored)
        rc = bcl_fail(e, BCL_EXIT_RUNTIME,
                      "the program could not be stored in the binary cache (%s)",
                      rep.warning[0] ? rep.warning : rep.note);
    return rc;
}

/* Cold: from source, the drivers' caches off too. Cached: from an entry of
 * a fresh folder, removed afterwards, so the figure does not depend on the
 * user's cache (an entry many runs added launch shapes to loads slower). */
static void measure_builds(surveyor *s, const bcl_model *m)
{
    bcl_error e = {0};
    bcl_stats st;
    progress(s, "build times");
    set_median(s, BCL_FIG_BUILD_COLD, time_builds(s, m, NULL, &st, &e), &st, &e);
    const char *tmp = getenv("TMPDIR");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/ballcl-survey-cache.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        bcl_fail(&e, BCL_EXIT_RUNTIME, "cannot make a cache folder '%s': %s", dir, strerror(errno));
        fig_failed(s, BCL_FIG_BUILD_CACHED, &e);
        return;
    }
    int rc = prime_cache(s, m, dir, &e);
    set_median(s, BCL_FIG_BUILD_CACHED, rc ? rc : time_builds(s, m, dir, &st, &e), &st, &e);
    bcl_error ignore = {0};
    bcl_cache_clear(dir, NULL, NULL, NULL, &ignore);
    rmdir(dir);
}

/* ---- one model ------------------------------------------------------------------ */

/* What a model's figures share. */
typedef struct model_run {
    surveyor *s;
    const bcl_model *m;
    bcl_context *ctx;
    float params[BCL_MAX_PARAMS];
    float *init, *scratch; /* the largest N of the survey */
    json_t *obj;           /* where the figures go */
    char path[64];         /* of obj, for error keys: "measured" or "measured.models.x" */
} model_run;

/* The one-step base kernel, local size auto, over n balls. */
static bcl_plan_request base_request(const model_run *r, size_t n)
{
    return (bcl_plan_request){.params = r->params,
                              .balls = n,
                              .steps_per_launch = 1,
                              .sync = BCL_SYNC_END,
                              .variant = ""};
}

static json_t *local_json(const bcl_launch *l)
{
    return l->local ? json_integer((json_int_t)l->local) : json_string("driver");
}

/* Validates configuration so on sim bit for bit; a mismatch is an error of
 * class BCL_EXIT_MISMATCH that says how many floats differ. */
static int validate(const model_run *r, bcl_sim *sim, const bcl_plan *so, bool *valid, bcl_error *e)
{
    bcl_validation v;
    int rc = bcl_check_sim(sim, so, r->init, 0, r->scratch, &v, e);
    if (rc)
        return rc;
    *valid = v.mismatches == 0;
    if (!*valid)
        return bcl_fail(e, BCL_EXIT_MISMATCH,
                        "validation failed: %llu of %llu floats differ from the C reference of "
                        "model '%s' (largest distance %llu ULP): not timed",
                        (unsigned long long)v.mismatches, (unsigned long long)v.compared,
                        bcl_model_key(r->m), (unsigned long long)v.max_ulp);
    return BCL_OK;
}

/* "small" or "large": the one-step kernel, local size auto, at n balls;
 * "fused": the k-step kernel, the variant the documented rule picks for
 * this kind of device, local size auto, K = fused_k. */
static void ball_step(model_run *r, const char *key, size_t n)
{
    const bcl_survey_opts *o = r->s->o;
    bool fused = strcmp(key, "fused") == 0;
    const char *fig_key = fused ? bcl_survey_key(BCL_FIG_FUSED) : key;
    char what[FIGURE], figure[FIGURE];
    if (fused)
        snprintf(what, sizeof what, "model %s, fused K = %u, N = %zu", bcl_model_key(r->m),
                 o->fused_k, n);
    else
        snprintf(what, sizeof what, "model %s, %s N = %zu", bcl_model_key(r->m), key, n);
    progress(r->s, what);
    snprintf(figure, sizeof figure, "%s.%s", r->path, fig_key);
    json_t *fig = json_object_get(r->obj, key);
    bcl_plan_request req = base_request(r, n);
    if (fused) {
        req.fused = true;
        req.steps_per_launch = o->fused_k ? o->fused_k : 1;
        req.variant = NULL; /* the rule's */
    }
    /* Planned, validated, then timed; "local" once there is a simulation. */
    bcl_error e = {0};
    bcl_sim *sim = NULL;
    bcl_plan so;
    bcl_measurement m;
    bool valid = false;
    int rc = bcl_plan_resolve(r->ctx, &req, &so, &e);
    if (rc == BCL_OK && fused)
        json_object_set_new(fig, "variant", json_string(so.variant));
    if (rc == BCL_OK && (rc = bcl_sim_create(r->ctx, r->init, n, &sim, &e)) == BCL_OK) {
        json_object_set_new(fig, "local", local_json(&so.launch));
        rc = validate(r, sim, &so, &valid, &e);
        if (rc == BCL_OK || rc == BCL_EXIT_MISMATCH)
            json_object_set_new(fig, "validated", json_boolean(valid));
    }
    if (rc == BCL_OK)
        rc = bcl_measure_sim(sim, &so, &r->s->o->measure, &m, &e);
    bcl_sim_destroy(sim);
    if (rc) {
        failed(r->s, figure, &e);
        return;
    }
    double us = m.device_us.median;
    json_object_set_new(fig, "us_per_step", number(us));
    json_object_set_new(fused ? r->obj : fig, fused ? fig_key : "ball_steps_per_s",
                        number((double)n / (us * 1e-6)));
    if (!fused)
        json_object_set_new(fig, "gb_per_s", number(32.0 * (double)n / (us * 1e3)));
}

/* Why the sweep's derived figures (best local size, local = 1 penalty) are
 * null; not counted again: a sweep that failed validation stays a mismatch. */
static void derived_failed(model_run *r, const char *why)
{
    for (bcl_fig f = BCL_FIG_BEST_LOCAL; f <= BCL_FIG_LOCAL1_PENALTY; f++) {
        char figure[FIGURE];
        snprintf(figure, sizeof figure, "%s.%s", r->path, bcl_survey_key(f));
        json_object_set_new(r->s->errors, figure, json_string(why));
    }
}

/* One point of the local size sweep. */
typedef struct sweep_point {
    bcl_plan so;
    bcl_timer *timer;
    bool ok;
    double us;
    bcl_error e;
} sweep_point;

/* The local sizes to sweep: 1 (the seed's mistake), the tuner's list for
 * the one-step kernel, and the driver's choice (0). */
static int sweep_locals(model_run *r, size_t n, size_t *out, size_t *count, bcl_error *e)
{
    bcl_plan_request req = base_request(r, n);
    bcl_plan so;
    size_t nl;
    int rc = bcl_plan_resolve(r->ctx, &req, &so, e);
    if (rc == BCL_OK)
        rc = bcl_tune_locals(r->ctx, &so, n, out + 1, MAX_SWEEP - 2, &nl, NULL, e);
    if (rc)
        return rc;
    out[0] = 1;
    *count = 1;
    for (size_t i = 0; i < nl; i++)
        if (out[1 + i] != 1)
            out[(*count)++] = out[1 + i];
    out[(*count)++] = 0;
    return BCL_OK;
}

/* The one-step kernel at sweep_n for every local size of sweep_locals, each
 * validated, then timed with the repeats of all points interleaved (as
 * bench does), so a busy moment weighs on every point alike: the penalty
 * of local = 1 is a fair ratio. */
static void local_sweep(model_run *r, size_t n)
{
    surveyor *s = r->s;
    char what[FIGURE], figure[FIGURE];
    snprintf(what, sizeof what, "model %s, local size sweep, N = %zu", bcl_model_key(r->m), n);
    progress(s, what);
    json_t *points = json_object_get(json_object_get(r->obj, "local_sweep"), "points");
    bcl_error e = {0};
    size_t locals[MAX_SWEEP], nl = 0;
    sweep_point pt[MAX_SWEEP];
    memset(pt, 0, sizeof pt);
    bcl_sim *sim = NULL;
    int rc = sweep_locals(r, n, locals, &nl, &e);
    if (rc == BCL_OK)
        rc = bcl_sim_create(r->ctx, r->init, n, &sim, &e);
    if (rc) {
        snprintf(figure, sizeof figure, "%s.local_sweep", r->path);
        failed(s, figure, &e);
        derived_failed(r, "the local size sweep did not run");
        return;
    }
    for (size_t i = 0; i < nl; i++) {
        sweep_point *p = &pt[i];
        bcl_plan_request req = base_request(r, n);
        req.launch = (bcl_launch){.mode = locals[i] ? BCL_LOCAL_FIXED : BCL_LOCAL_DRIVER,
                                  .local = locals[i]};
        bool valid;
        p->ok = bcl_plan_resolve(r->ctx, &req, &p->so, &p->e) == BCL_OK &&
                validate(r, sim, &p->so, &valid, &p->e) == BCL_OK &&
                bcl_timer_sim(sim, &p->so, &s->o->measure, &p->timer, &p->e) == BCL_OK;
    }
    unsigned repeats = s->o->measure.repeats ? s->o->measure.repeats : 1;
    for (unsigned k = 0; k < repeats; k++)
        for (size_t i = 0; i < nl; i++)
            if (pt[i].ok && bcl_timer_repeat(pt[i].timer, &pt[i].e) != BCL_OK)
                pt[i].ok = false;
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < nl; i++) {
        sweep_point *p = &pt[i];
        if (p->ok) {
            bcl_measurement m;
            bcl_timer_result(p->timer, &m);
            p->us = m.device_us.median;
            if (best == SIZE_MAX || p->us < pt[best].us)
                best = i;
        }
        bcl_timer_free(p->timer);
        json_array_append_new(points,
                              json_pack("{s:o, s:o}", "local", local_json(&p->so.launch),
                                        "us_per_step", p->ok ? number(p->us) : json_null()));
        if (!p->ok) {
            char local[24] = "driver";
            if (locals[i])
                snprintf(local, sizeof local, "%zu", locals[i]);
            snprintf(figure, sizeof figure, "%s.local_sweep.%s", r->path, local);
            failed(s, figure, &p->e);
        }
    }
    bcl_sim_destroy(sim);
    if (best == SIZE_MAX) {
        derived_failed(r, "no local size of the sweep was measured");
        return;
    }
    json_object_set_new(r->obj, bcl_survey_key(BCL_FIG_BEST_LOCAL),
                        local_json(&pt[best].so.launch));
    /* Point 0 is local = 1. */
    if (pt[0].ok) {
        json_object_set_new(r->obj, bcl_survey_key(BCL_FIG_LOCAL1_PENALTY),
                            number(pt[0].us / pt[best].us));
    } else {
        snprintf(figure, sizeof figure, "%s.%s", r->path, bcl_survey_key(BCL_FIG_LOCAL1_PENALTY));
        json_object_set_new(s->errors, figure, json_string("local = 1 was not measured"));
    }
}

/* The largest N of the survey on d. */
static size_t largest_n(const bcl_device_info *d, const bcl_survey_opts *o)
{
    size_t n = bcl_survey_large_n(d, o);
    n = o->sweep_n > n ? o->sweep_n : n;
    return o->small_n > n ? o->small_n : n;
}

/* Every figure of one model into obj; an error before any figure (no
 * context, no host memory) fails them all. */
static void survey_model(surveyor *s, const bcl_model *m, json_t *obj, const char *path)
{
    const bcl_survey_opts *o = s->o;
    model_run r = {.s = s, .m = m, .obj = obj};
    snprintf(r.path, sizeof r.path, "%s", path);
    bcl_model_param_defaults(m, r.params);
    size_t large = bcl_survey_large_n(s->d, o), nmax = largest_n(s->d, o);
    /* Every key in documented order, null until measured. */
    for (int i = 0; i < 2; i++)
        json_object_set_new(obj, i ? "large" : "small",
                            json_pack("{s:I, s:n, s:n, s:n, s:n, s:n}", "n",
                                      (json_int_t)(i ? large : o->small_n), "us_per_step",
                                      "gb_per_s", "ball_steps_per_s", "local", "validated"));
    json_object_set_new(obj, bcl_survey_key(BCL_FIG_BEST_LOCAL), json_null());
    json_object_set_new(obj, bcl_survey_key(BCL_FIG_LOCAL1_PENALTY), json_null());
    json_object_set_new(obj, "local_sweep",
                        json_pack("{s:I, s:[]}", "n", (json_int_t)o->sweep_n, "points"));
    json_object_set_new(obj, bcl_survey_key(BCL_FIG_FUSED), json_null());
    json_object_set_new(
        obj, "fused",
        json_pack("{s:I, s:I, s:n, s:n, s:n, s:n}", "n", (json_int_t)bcl_survey_fused_n(s->d, o),
                  "k", (json_int_t)o->fused_k, "variant", "local", "us_per_step", "validated"));
    bcl_error e = {0};
    bcl_context_opts co = {.use_cache = true};
    int rc = bcl_context_create(s->d, m, &co, &r.ctx, NULL, &e);
    if (rc == BCL_OK) {
        r.init = malloc(nmax * 4 * sizeof(float));
        r.scratch = malloc(nmax * 4 * sizeof(float));
        if (!r.init || !r.scratch)
            rc = bcl_fail(&e, BCL_EXIT_RUNTIME, "out of host memory for %zu balls", nmax);
        else
            m->init(r.init, 0, nmax, BCL_INIT_RANDOM, o->seed, r.params);
    }
    if (rc == BCL_OK) {
        ball_step(&r, "small", o->small_n);
        ball_step(&r, "large", large);
        local_sweep(&r, o->sweep_n);
        ball_step(&r, "fused", bcl_survey_fused_n(s->d, o));
    } else {
        s->done += 4;
        /* Each figure null with the error that stopped them all. */
        const char *keys[] = {"small", "large", bcl_survey_key(BCL_FIG_BEST_LOCAL),
                              bcl_survey_key(BCL_FIG_LOCAL1_PENALTY),
                              bcl_survey_key(BCL_FIG_FUSED)};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            char figure[FIGURE];
            snprintf(figure, sizeof figure, "%s.%s", path, keys[i]);
            failed_too(s, figure, &e);
        }
        bcl_error_clear(&e);
    }
    free(r.init);
    free(r.scratch);
    bcl_context_destroy(r.ctx);
}

/* ---- the device ------------------------------------------------------------------ */

/* Host <-> device transfer bandwidth of `bytes`, three ways: from pinned
 * host memory (what the platform offers for the fastest copies), from
 * pageable memory, and by mapping the device buffer. Each is reported;
 * the headline write and read figures are those of the way with the
 * largest write + read, and "method" says which. */
static void measure_transfer(surveyor *s, bcl_context *ctx, size_t bytes)
{
    unsigned r = s->o->measure.repeats;
    bcl_error e = {0};
    char path[FIGURE];
    progress(s, "transfer bandwidth");
    json_t *t = json_object();
    json_object_set_new(s->measured, "transfer", t);
    json_object_set_new(t, "bytes", json_integer((json_int_t)bytes));
    enum { KINDS = 3 };
    bcl_stats w[KINDS], rd[KINDS];
    static const char *const kind[KINDS] = {"pinned", "pageable", "mapped"};
    int best = -1;
    for (int i = 0; i < KINDS; i++) {
        /* kind[i] is bcl_transfer_way i */
        bool ok = bcl_measure_transfer(ctx, bytes, r, i, &w[i], &rd[i], &e) == BCL_OK;
        /* The table's keys are "transfer.<kind>_write_gb_per_s" and _read_. */
        bcl_fig wf = BCL_FIG_TRANSFER + 2 * i, rf = wf + 1;
        json_object_set_new(t, strchr(bcl_survey_key(wf), '.') + 1,
                            ok ? number(w[i].median) : json_null());
        json_object_set_new(t, strchr(bcl_survey_key(rf), '.') + 1,
                            ok ? number(rd[i].median) : json_null());
        if (!ok) {
            json_object_set_new(s->errors, fig_path(rf, path), bcl_survey_text(e.msg));
            fig_failed(s, wf, &e);
        } else if (best < 0 || w[i].median + rd[i].median > w[best].median + rd[best].median) {
            best = i;
        }
    }
    json_object_set_new(t, "method", best >= 0 ? json_string(kind[best]) : json_null());
    set_fig(s, BCL_FIG_WRITE, best >= 0 ? number(w[best].median) : json_null());
    set_fig(s, BCL_FIG_READ, best >= 0 ? number(rd[best].median) : json_null());
    for (bcl_fig f = BCL_FIG_WRITE; best < 0 && f <= BCL_FIG_READ; f++)
        json_object_set_new(s->errors, fig_path(f, path),
                            json_string("no way of transfer (pinned, pageable, mapped) could be "
                                        "measured"));
}

/* Whether the device lacks the type of figure f (fp64, half): then the
 * figure is null, not an error. */
static bool lacks(const surveyor *s, bcl_fig f)
{
    return (f == BCL_FIG_FP64 && !s->d->fp64) || (f == BCL_FIG_HALF && !s->d->fp16);
}

/* The peaks beside the add rate (src/measure/readonly.c, peak.c): read-only bandwidth
 * over `bytes`, then the float FMA and int32 add rates, and the double and
 * half FMA rates where the device has fp64 and cl_khr_fp16 (else null, not
 * an error: the device lacks the type). */
static void measure_peaks(surveyor *s, bcl_context *ctx, size_t bytes)
{
    const bcl_measure_opts *mo = &s->o->measure;
    bcl_error e = {0};
    bcl_stats st;
    progress(s, "read-only bandwidth");
    set_median(s, BCL_FIG_READ_ONLY, bcl_measure_read_only(ctx, bytes, mo->repeats, &st, &e), &st,
               &e);
    static const struct {
        bcl_peak_kind kind;
        bcl_fig fig;
    } rates[] = {
        {BCL_PEAK_FMA32, BCL_FIG_FMA},
        {BCL_PEAK_INT32, BCL_FIG_INT_ADD},
        {BCL_PEAK_FMA64, BCL_FIG_FP64},
        {BCL_PEAK_FMA16, BCL_FIG_HALF},
    };
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        progress(s, bcl_survey_figures[rates[i].fig].label);
        if (!lacks(s, rates[i].fig))
            set_median(s, rates[i].fig, bcl_measure_peak_rate(ctx, rates[i].kind, mo, &st, &e), &st,
                       &e);
    }
}

/* Latency and copy bandwidth, on the default model's program; also the
 * preferred work-group multiple of its one-step kernel for "limits". */
static void measure_device(surveyor *s, const bcl_model *m)
{
    const bcl_survey_opts *o = s->o;
    bcl_error e = {0};
    bcl_context_opts co = {.use_cache = true};
    bcl_context *ctx = NULL;
    bcl_sim *sim = NULL;
    float params[BCL_MAX_PARAMS], ball[4];
    bcl_model_param_defaults(m, params);
    m->init(ball, 0, 1, BCL_INIT_RANDOM, o->seed, params);
    progress(s, "launch latency");
    int rc = bcl_context_create(s->d, m, &co, &ctx, NULL, &e);
    if (rc) {
        /* Everything below needs the context: the same error for each. */
        char path[FIGURE];
        for (bcl_fig f = BCL_FIG_LATENCY; f <= BCL_FIG_READ; f++)
            if (!lacks(s, f))
                failed_too(s, fig_path(f, path), &e);
        bcl_error_clear(&e);
        s->done += 3 + 5;
        return;
    }
    size_t pm = 0;
    bcl_plan_request req = {.params = params, .balls = 1, .steps_per_launch = 1, .variant = ""};
    bcl_plan so;
    bool planned = bcl_plan_resolve(ctx, &req, &so, &e) == BCL_OK;
    bcl_error plan_e = e; /* for the figures below, which need the plan too */
    plan_e.detail = NULL;
    if (planned && bcl_tune_locals(ctx, &so, 1, NULL, 0, &(size_t){0}, &pm, &e) == BCL_OK)
        json_object_set_new(json_object_get(s->dev, "limits"), "preferred_work_group_multiple",
                            json_integer((json_int_t)pm));
    else
        failed(s, "limits.preferred_work_group_multiple", &e);
    bcl_stats st;
    if (planned && bcl_sim_create(ctx, ball, 1, &sim, &e) == BCL_OK) {
        rc = bcl_measure_dispatch(sim, &so, o->latency_repeats, &st, &e);
        /* Not a failure when the device's clock failed its check: the
         * figure needs it. Null, not in "errors": profiling_note says why
         * (docs/SURVEY.md). */
        if (rc && bcl_profiling_unusable(s->d))
            bcl_error_clear(&e);
        else
            set_median(s, BCL_FIG_LATENCY, rc, &st, &e);
        rc = bcl_measure_roundtrip(sim, &so, o->latency_repeats, &st, &e);
        set_median(s, BCL_FIG_ROUNDTRIP, rc, &st, &e);
    } else {
        char path[FIGURE];
        if (!planned)
            e = plan_e;
        failed_too(s, fig_path(BCL_FIG_LATENCY, path), &e);
        fig_failed(s, BCL_FIG_ROUNDTRIP, &e);
    }
    bcl_sim_destroy(sim);

    progress(s, "copy bandwidth");
    size_t bytes = bcl_survey_large_n(s->d, o) * 4 * sizeof(float);
    if (s->d->max_alloc && bytes > s->d->max_alloc)
        bytes = (size_t)s->d->max_alloc;
    bytes = bytes / 16 * 16;
    set_median(s, BCL_FIG_COPY, bcl_measure_copy(ctx, bytes, o->measure.repeats, &st, &e), &st, &e);
    json_object_set_new(s->measured, "copy_bytes", json_integer((json_int_t)bytes));

    progress(s, "add-rate bound");
    bcl_add_rate add;
    rc = bcl_measure_add_rate(ctx, &o->measure, &add, &e);
    set_median(s, BCL_FIG_ADD, rc, &add.gflop_per_s, &e);
    measure_peaks(s, ctx, bytes);
    measure_transfer(s, ctx, bytes);
    bcl_context_destroy(ctx);
}

/* Surveys one device into a new device object (*out), *status the worst
 * outcome of its figures. Non-zero only when out of memory. */
static int survey_device(const bcl_device_info *d, const bcl_survey_opts *o, json_t **out,
                         int *status, bcl_error *e)
{
    *out = NULL;
    *status = BCL_OK;
    bcl_error qe = {0};
    char *ext = bcl_device_extensions(d, &qe);
    surveyor s = {.d = d, .o = o, .total = 10 + 4 * (unsigned)(bcl_model_count + !!o->model_file)};
    s.dev = bcl_survey_device_info(d, ext, 0);
    if (s.dev) {
        bcl_survey_device_place(s.dev, d, ext, o->host);
        json_t *raw = bcl_survey_clinfo(d, ext);
        if (raw)
            json_object_set_new(s.dev, "clinfo", raw);
    }
    free(ext);
    s.measured = json_object();
    s.errors = json_object();
    if (!s.dev || !s.measured || !s.errors) {
        json_decref(s.dev);
        json_decref(s.measured);
        json_decref(s.errors);
        bcl_error_clear(&qe);
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    }
    json_t *caps = bcl_survey_capabilities(d);
    if (caps)
        json_object_set_new(s.dev, "capabilities", caps);
    json_object_set_new(s.dev, "measured", s.measured);
    json_object_set_new(s.dev, "errors", s.errors);
    if (qe.code)
        failed(&s, "limits.extensions", &qe);
    /* The keys in documented order, null until measured. */
    const bcl_model *def = bcl_models[0];
    json_object_set_new(s.measured, "model", json_string(def->name));
    for (bcl_fig f = 0; f < BCL_FIG_WRITE; f++)
        set_fig(&s, f, json_null());
    measure_builds(&s, def);
    measure_device(&s, def);
    survey_model(&s, def, s.measured, "measured");
    json_t *models = json_object();
    json_object_set_new(s.measured, "models", models);
    for (size_t i = 1; i < bcl_model_count; i++) {
        char path[64];
        snprintf(path, sizeof path, "measured.models.%s", bcl_models[i]->name);
        json_t *mo = json_object();
        json_object_set_new(models, bcl_models[i]->name, mo);
        survey_model(&s, bcl_models[i], mo, path);
    }
    /* The user's model apart from the built-ins (never a key of "models",
     * which the survey database and pages take for the fleet's models):
     * named by its key, which holds its text's digest, with the operations
     * count the plausibility rule needs (bcl_survey_flag cannot look a
     * model file up by name). */
    const bcl_model *mf = o->model_file;
    if (mf) {
        json_t *obj =
            json_pack("{s:s, s:s, s:s, s:s, s:i}", "key", bcl_model_key(mf), "name", mf->name,
                      "path", mf->kernel_file, "sha256", mf->digest ? mf->digest : "",
                      "flops_per_step", (int)mf->flops_per_step);
        if (obj) {
            json_object_set_new(s.dev, "model_file", obj);
            survey_model(&s, mf, obj, "model_file");
        }
    }
    /* When the profiling failed a check (docs/SURVEY.md) every time figure
     * came from the host clock; the queued-to-start latency has none, so it
     * is not believed even if measured before the check failed. */
    const char *clock_note = bcl_profiling_unusable(d);
    if (clock_note)
        set_fig(&s, BCL_FIG_LATENCY, json_null());
    json_object_set_new(s.dev, "profiling_usable", json_boolean(clock_note == NULL));
    json_object_set_new(s.dev, "profiling_note",
                        clock_note ? bcl_survey_text(clock_note) : json_null());
    json_object_set_new(s.dev, "flags", json_array());
    bcl_survey_flag(s.dev);
    *out = s.dev;
    *status = s.status;
    return BCL_OK;
}

int bcl_survey_run(const bcl_device_info *devs, size_t n, const bcl_survey_opts *o, char **json,
                   int *status, bcl_error *e)
{
    *json = NULL;
    *status = BCL_OK;
    /* Every N fits each device and the host (state, scratch, a CPU device's
     * buffer), or nothing runs: a figure that cannot fit is no figure. */
    for (size_t i = 0; i < n; i++) {
        int rc = bcl_memory_fit(&devs[i], largest_n(&devs[i], o), 2,
                                o->large_n ? "--large" : "survey", e);
        if (rc)
            return rc;
    }
    json_t *doc = bcl_survey_document(o);
    if (!doc)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    /* Every platform before the devices: one that lists none says why. */
    json_t *platforms, *devices = json_array();
    bcl_error pe = {0};
    if (bcl_survey_platforms(&platforms, &pe) != BCL_OK)
        platforms = json_array();
    bcl_error_clear(&pe);
    json_object_del(doc, "devices");
    json_object_set_new(doc, "platforms", platforms);
    json_object_set_new(doc, "devices", devices);
    int rc = BCL_OK;
    for (size_t i = 0; i < n && rc == BCL_OK; i++) {
        json_t *dev;
        int st;
        if ((rc = survey_device(&devs[i], o, &dev, &st, e)))
            break;
        json_array_append_new(devices, dev);
        if (st == BCL_EXIT_RUNTIME || (st == BCL_EXIT_MISMATCH && *status == BCL_OK))
            *status = st;
    }
    /* Every digit of every figure: the caller rounds when it writes. */
    if (rc == BCL_OK) {
        *json = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
        if (!*json)
            rc = bcl_fail(e, BCL_EXIT_RUNTIME, "cannot encode the survey as JSON");
    }
    json_decref(doc);
    return rc;
}
