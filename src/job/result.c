/* The result of a run, built once (docs/DESIGN.md, "Report and JSON"): the
 * JSON tree that `ballcl run --json`, Python's Result and the MPI report
 * are views of, from the group, the exec and what it returned. */
#include "job/group_impl.h"
#include "survey/survey.h"

double bcl_us_per_step(double ms, uint64_t steps)
{
    return steps ? ms * 1e3 / (double)steps : 0;
}

double bcl_ball_steps_per_s(size_t balls, double us_per_step)
{
    return us_per_step > 0 ? (double)balls / (us_per_step * 1e-6) : 0;
}

const char *bcl_clock_note(const bcl_device_info *d)
{
    const char *why = bcl_profiling_unusable(d);
    return why ? why : "the profiling of one of the devices failed its check";
}

static const char *str(const char *s)
{
    return s ? s : "";
}

/* The model's parameters by name: a number for a one-float parameter, a
 * list for one of several (--box W,H), in the order the model declares. */
static json_t *params_json(const bcl_model *m, const float *values)
{
    json_t *params = json_object();
    unsigned at = 0;
    for (unsigned i = 0; i < m->nparams; i++) {
        const bcl_param *p = &m->params[i];
        json_t *v = p->count == 1 ? json_real(values[at]) : json_array();
        for (unsigned c = 0; p->count > 1 && c < p->count; c++)
            json_array_append_new(v, json_real(values[at + c]));
        json_object_set_new(params, p->opt, v);
        at += p->count;
    }
    return params;
}

/* A model file's path and the SHA-256 of its source; null for a built-in
 * model. */
static json_t *model_file_json(const bcl_model *m)
{
    return m->digest ? json_pack("{s:o, s:s}", "path", bcl_survey_text(m->kernel_file), "sha256",
                                 m->digest)
                     : json_null();
}

static json_t *validation_json(const bcl_exec *x, const bcl_validation *v)
{
    json_t *mism = json_array();
    for (size_t i = 0; x->validate && i < v->nreported; i++) {
        const bcl_mismatch *mm = &v->first[i];
        json_array_append_new(mism, json_pack("{s:I, s:[f,f,f,f], s:[f,f,f,f]}", "ball",
                                              (json_int_t)mm->ball, "want", mm->want[0],
                                              mm->want[1], mm->want[2], mm->want[3], "got",
                                              mm->got[0], mm->got[1], mm->got[2], mm->got[3]));
    }
    bool done = x->validate;
    /* Why not, when not: the user's choice, or a model file without a
     * reference (docs/MODELS.md). */
    const char *note = done              ? NULL
                       : x->no_reference ? "not validated: no reference"
                                         : "not validated: --no-validate";
    return json_pack("{s:b, s:o, s:b, s:I, s:I, s:o, s:I, s:o}", "performed", done, "note",
                     note ? json_string(note) : json_null(), "passed", done && v->mismatches == 0,
                     "compared", (json_int_t)(done ? v->compared : 0), "mismatches",
                     (json_int_t)(done ? v->mismatches : 0), "max_ulp",
                     !done || v->max_ulp == UINT64_MAX ? json_null()
                                                       : json_integer((json_int_t)v->max_ulp),
                     "tolerance_ulp", (json_int_t)x->tol_ulp, "first_mismatches", mism);
}

json_t *bcl_k_json(const bcl_plan *p)
{
    const bcl_launch_costs *k = &p->costs;
    json_t *costs = k->known
                        ? json_pack("{s:s, s:f, s:f, s:f, s:f, s:I, s:f, s:s}", "source", k->source,
                                    "launch_us", k->launch_us, "io_ns_per_ball", k->io_ns_per_ball,
                                    "step_ns_per_ball", k->step_ns_per_ball, "step_floor_us",
                                    k->step_floor_us, "fill_balls", (json_int_t)k->fill_balls,
                                    "measure_ms", k->measure_ms, "note", k->note)
                        : json_null();
    return json_pack("{s:s, s:o, s:o, s:o}", "k_reason", str(p->k_reason), "launch_budget_ms",
                     p->launch_budget_ms > 0 ? json_real(p->launch_budget_ms) : json_null(),
                     "launch_expect_ms",
                     p->launch_expect_ms > 0 ? json_real(p->launch_expect_ms) : json_null(),
                     "launch_costs", costs);
}

/* The launch object of a plan: its figures, then why this K
 * (docs/PERFORMANCE.md). */
static json_t *launch_json(const bcl_plan *p, json_t *own)
{
    json_t *j = json_pack("{s:I, s:I, s:s, s:s, s:I, s:I, s:s}", "local",
                          (json_int_t)p->launch.local, "global", (json_int_t)p->global, "how",
                          str(p->launch.how), "variant", str(p->variant), "balls_per_item",
                          (json_int_t)p->balls_per_item, "steps_per_launch",
                          (json_int_t)p->steps_per_launch, "steps_per_launch_how", str(p->k_how));
    json_object_update(j, own);
    json_decref(own);
    json_t *why = bcl_k_json(p);
    json_object_update(j, why);
    json_decref(why);
    return j;
}

static json_t *member_json(const bcl_exec *x, const bcl_group_member *m)
{
    const bcl_device_info *d = m->dev;
    double us = bcl_us_per_step(m->timing.device_ms, x->steps);
    json_t *j = json_pack("{s:s, s:o, s:o, s:s, s:I, s:I, s:f, s:s, s:f, s:f, s:f, s:f, s:f, s:f}",
                          "selector", m->selector, "name", bcl_survey_text(d->name), "platform",
                          bcl_survey_text(d->platform_name), "type", bcl_device_type_name(d->type),
                          "first_ball", (json_int_t)m->shard.first, "balls",
                          (json_int_t)m->shard.count, "share", m->share, "rate_how",
                          str(m->rate_how), "split_rate_ball_steps_per_s", m->rate,
                          "launch_overhead_ms", m->launch_ms, "us_per_step", us, "wall_us_per_step",
                          bcl_us_per_step(m->timing.wall_ms, x->steps), "ball_steps_per_s",
                          bcl_ball_steps_per_s(m->shard.count, us), "wait_ms", m->wait_ms);
    if (!m->shard.count) {
        json_object_set_new(j, "excluded", bcl_survey_text(m->excluded));
        json_object_set_new(j, "validation", json_null());
        return j;
    }
    json_object_set_new(
        j, "launch", launch_json(&m->plan, json_pack("{s:I}", "buffers", (json_int_t)m->buffers)));
    json_object_set_new(j, "max_launch_ms", json_real(m->timing.max_launch_ms));
    json_object_set_new(j, "cache",
                        json_pack("{s:b, s:f, s:o}", "hit", m->build.cache_hit, "program_ms",
                                  m->build.program_ms, "note", bcl_survey_text(m->build.note)));
    json_object_set_new(j, "validation", validation_json(x, &m->v));
    return j;
}

/* What a run changes of its tree (set in place where root has the key):
 * the cache of the lead l with the warm-up, the timing (the whole run's;
 * device_ms: the slowest device's, or the wall time on the host clock),
 * the validation, the members' entries and the aggregate. */
static void set_run(json_t *root, const bcl_group_member *l, const bcl_group_member *const *ms,
                    size_t count, double calibrate_ms, const bcl_exec *x, const bcl_exec_result *r,
                    size_t balls)
{
    const bcl_plan *p = &l->plan;
    double us = bcl_us_per_step(r->device_ms, x->steps);
    double rate = bcl_ball_steps_per_s(balls, us);
    json_object_set_new(root, "cache",
                        json_pack("{s:b, s:f, s:o, s:b, s:f, s:f}", "hit", l->build.cache_hit,
                                  "program_ms", l->build.program_ms, "note",
                                  bcl_survey_text(l->build.note), "stored", l->build.cache_stored,
                                  "store_ms", l->build.store_ms, "first_launch_ms",
                                  r->first_launch_ms));
    json_object_set_new(
        root, "timing",
        json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:s, s:o, s:f}", "device_ms", r->device_ms,
                  "wall_ms", r->wall_ms, "us_per_step", us, "wall_us_per_step",
                  bcl_us_per_step(r->wall_ms, x->steps), "ball_steps_per_s", rate, "gb_per_s",
                  p->steps_per_launch ? rate * 32.0 / (double)p->steps_per_launch / 1e9 : 0.0,
                  "launches", (json_int_t)r->launches, "clock", r->host_clock ? "host" : "device",
                  "clock_note",
                  r->host_clock ? bcl_survey_text(bcl_clock_note(l->dev)) : json_null(),
                  "max_launch_ms", r->max_launch_ms));
    json_object_set_new(root, "validation", validation_json(x, &r->v));
    json_t *devices = json_array();
    for (size_t i = 0; i < count; i++)
        json_array_append_new(devices, member_json(x, ms[i]));
    json_object_set_new(root, "devices", devices);
    if (count > 1) {
        double all = bcl_ball_steps_per_s(balls, bcl_us_per_step(r->wall_ms, x->steps));
        json_object_set_new(root, "aggregate",
                            json_pack("{s:I, s:f, s:f, s:f}", "devices", (json_int_t)count,
                                      "wall_ms", r->wall_ms, "ball_steps_per_s", all,
                                      "calibrate_ms", calibrate_ms));
    }
}

json_t *bcl_run_json(const bcl_group *g, const bcl_exec *x, const bcl_exec_result *r, size_t balls)
{
    /* The first member with balls leads: its device, plan and build are
     * the run's. */
    const bcl_group_member *ms[BCL_MAX_DEVICES], *l = &g->m[0].pub;
    size_t count = g->count < BCL_MAX_DEVICES ? g->count : BCL_MAX_DEVICES, buffers = 0;
    for (size_t i = count; i-- > 0;) {
        ms[i] = &g->m[i].pub;
        buffers += ms[i]->buffers;
        if (ms[i]->shard.count)
            l = ms[i];
    }
    const bcl_device_info *d = l->dev;
    const bcl_plan *p = &l->plan;
    json_t *root = json_pack(
        "{s:{s:o, s:o, s:s, s:s, s:o}, s:s, s:o, s:o, s:I, s:I, s:I, s:o, s:{s:b, s:b, s:o}}",
        "device", "name", bcl_survey_text(d->name), "platform", bcl_survey_text(d->platform_name),
        "selector", l->selector, "type", bcl_device_type_name(d->type), "driver",
        bcl_survey_text(d->driver), "model", g->o.model->name, "model_file",
        model_file_json(g->o.model), "params", params_json(g->o.model, g->params), "balls",
        (json_int_t)balls, "steps", (json_int_t)x->steps, "buffers", (json_int_t)buffers, "launch",
        launch_json(p, json_pack("{s:s, s:s}", "why", str(p->launch.why), "sync",
                                 g->o.req.sync == BCL_SYNC_EVERY ? "every" : "end")),
        "tuned", "stored", l->tuned_note[0] != '\0', "used", p->tuned_used, "note",
        bcl_survey_text(l->tuned_note));
    if (root)
        set_run(root, l, ms, count, g->calibrate_ms, x, r, balls);
    return root;
}

json_t *bcl_run_json_again(const json_t *last, const bcl_group_member *m, const bcl_exec *x,
                           const bcl_exec_result *r, size_t balls)
{
    json_t *root = json_copy((json_t *)last);
    if (root)
        set_run(root, m, &m, 1, 0, x, r, balls);
    return root;
}
