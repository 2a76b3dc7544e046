/*
 * The result of a run: the fields of `ballcl run --json` (docs: PYTHON.md
 * lists them), held by a ballcl.Result, the class __init__.py registers.
 */
#include "core.h"

PyObject *bpy_result_type;

/* The model's parameters by name, as `run --json` gives them: a float for a
 * one-float parameter, a list for one of several (box). */
static PyObject *params_dict(const bcl_model *m, const float *p)
{
    PyObject *d = PyDict_New();
    unsigned at = 0;
    for (unsigned i = 0; d && i < m->nparams; i++) {
        const bcl_param *par = &m->params[i];
        PyObject *v;
        if (par->count == 1) {
            v = PyFloat_FromDouble(p[at]);
        } else {
            v = PyList_New(par->count);
            for (unsigned c = 0; v && c < par->count; c++) {
                PyObject *f = PyFloat_FromDouble(p[at + c]);
                if (!f) {
                    Py_CLEAR(v);
                    break;
                }
                PyList_SET_ITEM(v, c, f);
            }
        }
        if (!v || PyDict_SetItemString(d, par->opt, v) < 0)
            Py_CLEAR(d);
        Py_XDECREF(v);
        at += par->count;
    }
    return d;
}

PyObject *bpy_validation_dict(const bcl_validation *v, bool done)
{
    PyObject *first = PyList_New(0);
    for (size_t i = 0; done && first && i < v->nreported; i++) {
        const bcl_mismatch *mm = &v->first[i];
        PyObject *one = Py_BuildValue("{s:n, s:(dddd), s:(dddd)}", "ball", (Py_ssize_t)mm->ball,
                                      "want", mm->want[0], mm->want[1], mm->want[2], mm->want[3],
                                      "got", mm->got[0], mm->got[1], mm->got[2], mm->got[3]);
        if (!one || PyList_Append(first, one) < 0) {
            Py_XDECREF(one);
            Py_CLEAR(first);
        }
        Py_XDECREF(one);
    }
    PyObject *max_ulp = !done || v->max_ulp == UINT64_MAX ? Py_NewRef(Py_None)
                                                          : PyLong_FromUnsignedLongLong(v->max_ulp);
    return Py_BuildValue(
        "{s:O, s:O, s:K, s:K, s:N, s:i, s:N}", "performed", done ? Py_True : Py_False, "passed",
        done && v->mismatches == 0 ? Py_True : Py_False, "compared",
        (unsigned long long)v->compared, "mismatches", (unsigned long long)v->mismatches, "max_ulp",
        max_ulp, "tolerance_ulp", 0, "first_mismatches", first);
}

/* The K rule's fields of `ballcl run --json`'s launch object
 * (docs/PERFORMANCE.md): why K, the budget, the expected launch, the
 * launch costs. */
static int add_k_fields(PyObject *launch, const bcl_plan *p)
{
    const bcl_launch_costs *k = &p->costs;
    PyObject *costs =
        k->known ? Py_BuildValue("{s:s, s:d, s:d, s:d, s:d, s:n, s:d, s:s}", "source", k->source,
                                 "launch_us", k->launch_us, "io_ns_per_ball", k->io_ns_per_ball,
                                 "step_ns_per_ball", k->step_ns_per_ball, "step_floor_us",
                                 k->step_floor_us, "fill_balls", (Py_ssize_t)k->fill_balls,
                                 "measure_ms", k->measure_ms, "note", k->note)
                 : Py_NewRef(Py_None);
    PyObject *budget =
        p->launch_budget_ms > 0 ? PyFloat_FromDouble(p->launch_budget_ms) : Py_NewRef(Py_None);
    PyObject *expect =
        p->launch_expect_ms > 0 ? PyFloat_FromDouble(p->launch_expect_ms) : Py_NewRef(Py_None);
    PyObject *extra = costs && budget && expect
                          ? Py_BuildValue("{s:s, s:N, s:N, s:N}", "k_reason",
                                          p->k_reason ? p->k_reason : "", "launch_budget_ms",
                                          budget, "launch_expect_ms", expect, "launch_costs", costs)
                          : NULL;
    if (!extra) {
        Py_XDECREF(costs);
        Py_XDECREF(budget);
        Py_XDECREF(expect);
        return -1;
    }
    int rc = PyDict_Update(launch, extra);
    Py_DECREF(extra);
    return rc;
}

PyObject *bpy_member_dict(const bpy_member *m)
{
    const bcl_device_info *d = m->dev;
    double steps = (double)m->steps;
    double us = steps ? m->device_ms * 1e3 / steps : 0;
    double us_wall = steps ? m->wall_ms * 1e3 / steps : 0;
    double rate = us > 0 ? (double)m->balls / (us * 1e-6) : 0;
    PyObject *dict = Py_BuildValue(
        "{s:s, s:N, s:N, s:s, s:n, s:n, s:d, s:s, s:d, s:d, s:d, s:d, s:d, s:d}", "selector",
        m->selector, "name", bpy_text(d->name), "platform", bpy_text(d->platform_name), "type",
        bcl_device_type_name(d->type), "first_ball", (Py_ssize_t)m->first, "balls",
        (Py_ssize_t)m->balls, "share", m->share, "rate_how", m->rate_how,
        "split_rate_ball_steps_per_s", m->rate, "launch_overhead_ms", m->launch_ms, "us_per_step",
        us, "wall_us_per_step", us_wall, "ball_steps_per_s", rate, "wait_ms", m->wait_ms);
    if (!dict)
        return NULL;
    int rc = 0;
    if (m->plan) {
        const bcl_plan *p = m->plan;
        PyObject *launch = Py_BuildValue(
            "{s:s, s:I, s:I, s:s, s:n, s:s, s:n, s:n}", "variant", p->variant, "balls_per_item",
            p->balls_per_item, "steps_per_launch", p->steps_per_launch, "steps_per_launch_how",
            p->k_how, "local", (Py_ssize_t)p->launch.local, "how", p->launch.how, "global",
            (Py_ssize_t)p->global, "buffers", (Py_ssize_t)m->buffers);
        PyObject *cache =
            Py_BuildValue("{s:O, s:d, s:N}", "hit", m->build->cache_hit ? Py_True : Py_False,
                          "program_ms", m->build->program_ms, "note", bpy_text(m->build->note));
        PyObject *valid = bpy_validation_dict(m->v, m->validate);
        PyObject *longest = PyFloat_FromDouble(m->max_launch_ms);
        rc = launch && cache && valid && longest && add_k_fields(launch, p) == 0 &&
                     PyDict_SetItemString(dict, "max_launch_ms", longest) == 0 &&
                     PyDict_SetItemString(dict, "launch", launch) == 0 &&
                     PyDict_SetItemString(dict, "cache", cache) == 0 &&
                     PyDict_SetItemString(dict, "validation", valid) == 0
                 ? 0
                 : -1;
        Py_XDECREF(longest);
        Py_XDECREF(launch);
        Py_XDECREF(cache);
        Py_XDECREF(valid);
    } else {
        PyObject *why = bpy_text(m->excluded);
        rc = why && PyDict_SetItemString(dict, "excluded", why) == 0 &&
                     PyDict_SetItemString(dict, "validation", Py_None) == 0
                 ? 0
                 : -1;
        Py_XDECREF(why);
    }
    if (rc < 0)
        Py_CLEAR(dict);
    return dict;
}

PyObject *bpy_result_wrap(PyObject *dict)
{
    if (!dict)
        return NULL;
    PyObject *r = PyObject_CallOneArg(bpy_result_type, dict);
    Py_DECREF(dict);
    return r;
}

PyObject *bpy_result(const bpy_exec *x, const bcl_device_info *d, const bcl_build_report *br,
                     const bpy_ctx_report *cr)
{
    return bpy_result_wrap(bpy_result_dict(x, d, br, cr));
}

/* Copies of the dicts and lists in o down to `depth` levels; what lies
 * below, and every other value (str, int, float, bool, None, tuple), is
 * shared: none can be changed. */
static PyObject *copy_tree(PyObject *o, int depth)
{
    if (depth > 0 && PyDict_CheckExact(o)) {
        PyObject *d = PyDict_Copy(o), *k, *v;
        Py_ssize_t pos = 0;
        while (d && PyDict_Next(o, &pos, &k, &v)) {
            if (!PyDict_CheckExact(v) && !PyList_CheckExact(v))
                continue;
            PyObject *c = copy_tree(v, depth - 1);
            if (!c || PyDict_SetItem(d, k, c) < 0)
                Py_CLEAR(d);
            Py_XDECREF(c);
        }
        return d;
    }
    if (depth > 0 && PyList_CheckExact(o)) {
        Py_ssize_t n = PyList_GET_SIZE(o);
        PyObject *l = PyList_New(n);
        for (Py_ssize_t i = 0; l && i < n; i++) {
            PyObject *c = copy_tree(PyList_GET_ITEM(o, i), depth - 1);
            if (!c)
                Py_CLEAR(l);
            else
                PyList_SET_ITEM(l, i, c);
        }
        return l;
    }
    return Py_NewRef(o);
}

/* The levels of a Result's dict: the top, "devices", its entry, the
 * entry's "launch". */
#define RESULT_DEPTH 4

/* The keys from_template sets, made once (interned) rather than per call. */
enum {
    K_TIMING,
    K_CONTEXT,
    K_READBACK,
    K_VALIDATION,
    K_STORED,
    K_STORE_MS,
    K_FIRST_LAUNCH_MS,
    K_US_PER_STEP,
    K_WALL_US_PER_STEP,
    K_BALL_STEPS_PER_S,
    K_CACHE,
    K_DEVICES,
    K_COUNT
};
static const char *const key_names[K_COUNT] = {
    "timing",          "context",     "readback",         "validation",       "stored", "store_ms",
    "first_launch_ms", "us_per_step", "wall_us_per_step", "ball_steps_per_s", "cache",  "devices"};
static PyObject *keys[K_COUNT];

static int set_new(PyObject *dict, int key, PyObject *value)
{
    if (!keys[key] && !(keys[key] = PyUnicode_InternFromString(key_names[key]))) {
        Py_XDECREF(value);
        return -1;
    }
    int rc = value ? PyDict_SetItem(dict, keys[key], value) : -1;
    Py_XDECREF(value);
    return rc;
}

static PyObject *full_dict(const bpy_exec *x, const bcl_device_info *d, const bcl_build_report *br,
                           const bpy_ctx_report *cr);

/* A frame whose plan is the previous call's: the previous Result copied,
 * with what a call changes made anew (timing, validation, the warm-up and
 * store of "cache", "context", "readback", the entry's rates). Building
 * the whole dict was most of a frame's host instructions. */
static PyObject *from_template(const bpy_exec *x, const bcl_device_info *d,
                               const bcl_build_report *br, const bpy_ctx_report *cr)
{
    PyObject *dict = copy_tree(*x->result_tmpl, RESULT_DEPTH);
    if (!dict)
        return NULL;
    double steps = (double)x->args->steps;
    double us_dev = steps ? x->t.device_ms * 1e3 / steps : 0;
    double us_wall = steps ? x->t.wall_ms * 1e3 / steps : 0;
    double rate = us_dev > 0 ? (double)x->balls / (us_dev * 1e-6) : 0;
    const char *why = x->t.host_clock ? bcl_profiling_unusable(d) : NULL;
    PyObject *clock_note =
        !x->t.host_clock
            ? Py_NewRef(Py_None)
            : bpy_text(why ? why : "the profiling of one of the devices failed its check");
    PyObject *timing = Py_BuildValue(
        "{s:d, s:d, s:d, s:d, s:d, s:d, s:K, s:s, s:N}", "device_ms", x->t.device_ms, "wall_ms",
        x->t.wall_ms, "us_per_step", us_dev, "wall_us_per_step", us_wall, "ball_steps_per_s", rate,
        "gb_per_s", rate * 32.0 / (double)x->plan.steps_per_launch / 1e9, "launches",
        (unsigned long long)x->t.launches, "clock", x->t.host_clock ? "host" : "device",
        "clock_note", clock_note);
    PyObject *context =
        cr ? Py_BuildValue("{s:O, s:K, s:K, s:K}", "uploaded", cr->uploaded ? Py_True : Py_False,
                           "calls", cr->calls, "builds", cr->builds, "uploads", cr->uploads)
           : Py_NewRef(Py_None);
    PyObject *readback =
        Py_BuildValue("{s:s, s:O}", "memory", x->readback ? x->readback : "pageable", "plan_reused",
                      x->plan_reused ? Py_True : Py_False);
    PyObject *cache = PyDict_GetItemString(dict, "cache"); /* borrowed: a copy */
    PyObject *devices = PyDict_GetItemString(dict, "devices");
    PyObject *member = devices && PyList_Check(devices) && PyList_GET_SIZE(devices) == 1
                           ? PyList_GET_ITEM(devices, 0)
                           : NULL;
    PyObject *valid = bpy_validation_dict(&x->v, x->args->validate);
    PyObject *valid2 = valid ? copy_tree(valid, 2) : NULL; /* the entry's own */
    int rc = set_new(dict, K_TIMING, timing) | set_new(dict, K_CONTEXT, context) |
             set_new(dict, K_READBACK, readback) | set_new(dict, K_VALIDATION, valid);
    if (cache)
        rc |= set_new(cache, K_STORED, Py_NewRef(br->cache_stored ? Py_True : Py_False)) |
              set_new(cache, K_STORE_MS, PyFloat_FromDouble(br->store_ms)) |
              set_new(cache, K_FIRST_LAUNCH_MS, PyFloat_FromDouble(x->first_ms));
    /* The entry of "devices" (bpy_member_dict's rates and validation). */
    if (member)
        rc |= set_new(member, K_US_PER_STEP, PyFloat_FromDouble(us_dev)) |
              set_new(member, K_WALL_US_PER_STEP, PyFloat_FromDouble(us_wall)) |
              set_new(member, K_BALL_STEPS_PER_S, PyFloat_FromDouble(rate)) |
              set_new(member, K_VALIDATION, Py_XNewRef(valid2));
    Py_XDECREF(valid2);
    if (rc || !cache || !member)
        Py_CLEAR(dict);
    return dict;
}

PyObject *bpy_result_dict(const bpy_exec *x, const bcl_device_info *d, const bcl_build_report *br,
                          const bpy_ctx_report *cr)
{
    bool reuse =
        x->result_tmpl && *x->result_tmpl && x->plan_reused && *x->result_tmpl_gen == x->plan_gen;
    if (reuse)
        return from_template(x, d, br, cr);
    PyObject *dict = full_dict(x, d, br, cr);
    if (dict && x->result_tmpl) {
        PyObject *t = copy_tree(dict, RESULT_DEPTH);
        if (!t) {
            Py_DECREF(dict);
            return NULL;
        }
        Py_XSETREF(*x->result_tmpl, t);
        *x->result_tmpl_gen = x->plan_gen;
    }
    return dict;
}

static PyObject *full_dict(const bpy_exec *x, const bcl_device_info *d, const bcl_build_report *br,
                           const bpy_ctx_report *cr)
{
    const bcl_plan *p = &x->plan;
    const bcl_launch *l = &p->launch;
    double steps = (double)x->args->steps;
    double us_dev = steps ? x->t.device_ms * 1e3 / steps : 0;
    double us_wall = steps ? x->t.wall_ms * 1e3 / steps : 0;
    double rate = us_dev > 0 ? (double)x->balls / (us_dev * 1e-6) : 0;
    char sel[32];
    snprintf(sel, sizeof sel, "%u:%u", d->platform_index, d->device_index);
    /* As `ballcl run`: why the host's clock stands in for the device's. */
    const char *why = x->t.host_clock ? bcl_profiling_unusable(d) : NULL;
    PyObject *clock_note =
        !x->t.host_clock
            ? Py_NewRef(Py_None)
            : bpy_text(why ? why : "the profiling of one of the devices failed its check");
    PyObject *context =
        cr ? Py_BuildValue("{s:O, s:K, s:K, s:K}", "uploaded", cr->uploaded ? Py_True : Py_False,
                           "calls", cr->calls, "builds", cr->builds, "uploads", cr->uploads)
           : Py_NewRef(Py_None);
    PyObject *dict = Py_BuildValue(
        "{s:{s:N, s:N, s:s, s:s, s:N}, s:s, s:N, s:s, s:n, s:K, s:n,"
        " s:{s:n, s:n, s:s, s:s, s:s, s:I, s:I, s:s, s:s},"
        " s:{s:O, s:d, s:N, s:O, s:d, s:d}, s:{s:O, s:O, s:s},"
        " s:{s:d, s:d, s:d, s:d, s:d, s:d, s:K, s:s, s:N}, s:N, s:N}",
        "device", "name", bpy_text(d->name), "platform", bpy_text(d->platform_name), "selector",
        sel, "type", bcl_device_type_name(d->type), "driver", bpy_text(d->driver), "model",
        x->args->model->name, "params", params_dict(x->args->model, x->args->params), "init",
        "array", "balls", (Py_ssize_t)x->balls, "steps", (unsigned long long)x->args->steps,
        "buffers", (Py_ssize_t)x->buffers, "launch", "local", (Py_ssize_t)l->local, "global",
        (Py_ssize_t)p->global, "how", l->how, "why", l->why, "variant", p->variant,
        "balls_per_item", p->balls_per_item, "steps_per_launch", p->steps_per_launch,
        "steps_per_launch_how", p->k_how, "sync", "end", "cache", "hit",
        br->cache_hit ? Py_True : Py_False, "program_ms", br->program_ms, "note",
        bpy_text(br->note), "stored", br->cache_stored ? Py_True : Py_False, "store_ms",
        br->store_ms, "first_launch_ms", x->first_ms, "tuned", "stored",
        x->tuned_note[0] ? Py_True : Py_False, "used", x->plan.tuned_used ? Py_True : Py_False,
        "note", x->tuned_note, "timing", "device_ms", x->t.device_ms, "wall_ms", x->t.wall_ms,
        "us_per_step", us_dev, "wall_us_per_step", us_wall, "ball_steps_per_s", rate, "gb_per_s",
        rate * 32.0 / (double)p->steps_per_launch / 1e9, "launches",
        (unsigned long long)x->t.launches, "clock", x->t.host_clock ? "host" : "device",
        "clock_note", clock_note, "validation", bpy_validation_dict(&x->v, x->args->validate),
        "context", context);
    /* Where the state was read into, and whether the plan was reused. */
    if (dict) {
        PyObject *rb = Py_BuildValue("{s:s, s:O}", "memory", x->readback ? x->readback : "pageable",
                                     "plan_reused", x->plan_reused ? Py_True : Py_False);
        if (!rb || PyDict_SetItemString(dict, "readback", rb) < 0)
            Py_CLEAR(dict);
        Py_XDECREF(rb);
    }
    /* One device: "devices" holds it alone, as `ballcl run --json` does. */
    bpy_member m = {
        .dev = d,
        .selector = sel,
        .balls = x->balls,
        .share = 1.0,
        .rate_how = "only device",
        .device_ms = x->t.device_ms,
        .wall_ms = x->t.wall_ms,
        .max_launch_ms = x->t.max_launch_ms,
        .steps = x->args->steps,
        .plan = p,
        .buffers = x->buffers,
        .build = br,
        .v = &x->v,
        .validate = x->args->validate,
    };
    /* Why K, and the longest launch, as `ballcl run --json` has them. */
    PyObject *longest = dict ? PyFloat_FromDouble(x->t.max_launch_ms) : NULL;
    if (dict &&
        (!longest || add_k_fields(PyDict_GetItemString(dict, "launch"), p) < 0 ||
         PyDict_SetItemString(PyDict_GetItemString(dict, "timing"), "max_launch_ms", longest) < 0))
        Py_CLEAR(dict);
    Py_XDECREF(longest);
    PyObject *one = dict ? bpy_member_dict(&m) : NULL;
    PyObject *devices = one ? PyList_New(1) : NULL;
    if (devices)
        PyList_SET_ITEM(devices, 0, Py_NewRef(one));
    if (dict && (!devices || PyDict_SetItemString(dict, "devices", devices) < 0))
        Py_CLEAR(dict);
    Py_XDECREF(one);
    Py_XDECREF(devices);
    return dict;
}

PyObject *bpy_raise_mismatch(PyObject *result, PyObject *state, const bpy_exec *x)
{
    char msg[256];
    snprintf(msg, sizeof msg, "validation failed: %llu of %llu floats differ from the C reference",
             (unsigned long long)x->v.mismatches, (unsigned long long)x->v.compared);
    PyObject *exc = PyObject_CallFunction(bpy_MismatchError, "s", msg);
    if (!exc)
        return NULL;
    PyObject *code = PyLong_FromLong(BCL_EXIT_MISMATCH);
    if (code && PyObject_SetAttrString(exc, "exit_code", code) == 0 &&
        PyObject_SetAttrString(exc, "result", result) == 0 &&
        PyObject_SetAttrString(exc, "state", state) == 0 &&
        PyObject_SetAttrString(exc, "detail", Py_None) == 0)
        PyErr_SetObject(bpy_MismatchError, exc);
    Py_XDECREF(code);
    Py_DECREF(exc);
    return NULL;
}

int bpy_warn(const bpy_exec *x, const bcl_build_report *build)
{
    if (build && build->warning[0] &&
        PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "ballcl: %s", build->warning) < 0)
        return -1;
    if (x->plan_ok && x->plan.warning[0] &&
        PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "ballcl: %s", x->plan.warning) < 0)
        return -1;
    return 0;
}
