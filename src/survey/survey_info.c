/*
 * The parts of a survey that need no device: the settings and their
 * defaults, the document's header, a device's identity and limits as JSON,
 * and the plausibility rules that flag a figure above a possible peak.
 * docs/SURVEY.md documents every key written here.
 */
#include "survey/survey.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Defaults: about a minute for both models on two busy CPU cores; --quick
 * is for tests (seconds). */
void bcl_survey_opts_default(bcl_survey_opts *o, bool quick)
{
    memset(o, 0, sizeof *o);
    o->quick = quick;
    o->small_n = quick ? 256 : 1024;
    o->sweep_n = quick ? 4096 : 100000;
    o->fused_k = BCL_DEFAULT_K;
    o->build_repeats = quick ? 1 : 3;
    o->latency_repeats = quick ? 20 : 200;
    o->measure.repeats = quick ? 3 : 7;
    o->measure.repeat_ms = quick ? 5 : 100;
    o->seed = 1;
}

size_t bcl_survey_large_n(const bcl_device_info *d, const bcl_survey_opts *o)
{
    if (o->large_n)
        return o->large_n;
    uint64_t n = o->quick                         ? (uint64_t)1 << 16
                 : (d->type & CL_DEVICE_TYPE_CPU) ? (uint64_t)1 << 22
                                                  : (uint64_t)1 << 24;
    if (d->max_alloc && n > d->max_alloc / 16)
        n = d->max_alloc / 16;
    if (d->global_mem && n > d->global_mem / 4 / 16)
        n = d->global_mem / 4 / 16;
    if (n < o->small_n)
        n = o->small_n;
    return (size_t)n;
}

size_t bcl_survey_fused_n(const bcl_device_info *d, const bcl_survey_opts *o)
{
    size_t large = bcl_survey_large_n(d, o);
    size_t fill = (size_t)(d->compute_units ? d->compute_units : 1) << 16;
    size_t n = fill > o->sweep_n ? fill : o->sweep_n;
    return n < large ? n : large;
}

void bcl_survey_driver_caches_off(char *note, size_t size)
{
    static const struct {
        const char *var, *off, *driver;
    } caches[] = {
        {"POCL_KERNEL_CACHE", "0", "PoCL's kernel cache"},
        {"CUDA_CACHE_DISABLE", "1", "NVIDIA's compute cache"},
    };
    size_t used = 0;
    note[0] = '\0';
    for (size_t i = 0; i < sizeof caches / sizeof caches[0]; i++) {
        const char *was = getenv(caches[i].var);
        bool user = was && *was;
        if (!user)
            setenv(caches[i].var, caches[i].off, 1);
        const char *now = getenv(caches[i].var);
        int w = snprintf(note + used, size - used, "%s%s=%s (%s%s)", i ? ", " : "", caches[i].var,
                         now, caches[i].driver,
                         user && strcmp(now, caches[i].off) != 0 ? ", left on by the user" : "");
        if (w < 0 || (size_t)w >= size - used)
            break;
        used += (size_t)w;
    }
}

json_t *bcl_survey_document(const bcl_survey_opts *o)
{
    char date[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    typedef json_int_t I;
    return json_pack(
        "{s:s, s:s, s:s, s:o, s:b, s:{s:I, s:I, s:o, s:s, s:I, s:I, s:f, s:I, s:I, s:s, s:I, s:o},"
        " s:[]}",
        "schema", BCL_SURVEY_SCHEMA, "ballcl_version", BALLCL_VERSION, "date", date, "command",
        bcl_survey_text(o->command ? o->command : ""), "quick", o->quick, "settings", "small_n",
        (I)o->small_n, "sweep_n", (I)o->sweep_n, "large_n",
        o->large_n ? json_integer((I)o->large_n) : json_string("by device type"), "fused_n",
        "by compute units", "fused_k", (I)o->fused_k, "repeats", (I)o->measure.repeats, "repeat_ms",
        o->measure.repeat_ms, "build_repeats", (I)o->build_repeats, "latency_repeats",
        (I)o->latency_repeats, "init", "random", "seed", (I)o->seed, "driver_caches",
        bcl_survey_text(o->driver_caches ? o->driver_caches : "not changed"), "devices");
}

/* ---- strings that are always valid JSON ------------------------------------ */

/* Whether word stands in the space-separated list (an extension list). */
bool bcl_survey_listed(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list ? strstr(list, word) : NULL; p; p = strstr(p + n, word))
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
            return true;
    return false;
}

json_t *bcl_survey_text(const char *s)
{
    size_t n = strlen(s);
    char *copy = malloc(n + 1);
    if (!copy)
        return NULL;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t len = bcl_utf8_length(u + i);
        if (len == 0) {
            copy[i++] = '?';
            continue;
        }
        memcpy(copy + i, s + i, len);
        i += len;
    }
    copy[n] = '\0';
    json_t *j = json_string(copy);
    free(copy);
    return j;
}

/* ---- identity and limits ------------------------------------------------------ */

/* Extensions worth a column when devices are compared: number formats,
 * atomics, sub-groups, SPIR-V, command replay, vendor queries. */
static const char *const interesting[] = {
    "cl_khr_fp64",
    "cl_khr_fp16",
    "cl_khr_int64_base_atomics",
    "cl_khr_global_int32_base_atomics",
    "cl_khr_subgroups",
    "cl_intel_subgroups",
    "cl_khr_il_program",
    "cl_khr_spir",
    "cl_khr_command_buffer",
    "cl_khr_integer_dot_product",
    "cl_nv_device_attribute_query",
    "cl_amd_device_attribute_query",
};

static json_t *extensions_json(const char *ext, json_int_t *total)
{
    json_t *a = json_array();
    *total = 0;
    if (!ext)
        return a;
    for (size_t i = 0; i < sizeof interesting / sizeof interesting[0]; i++)
        if (bcl_survey_listed(ext, interesting[i]))
            json_array_append_new(a, json_string(interesting[i]));
    for (const char *p = ext; *p; p++)
        *total += *p != ' ' && (p == ext || p[-1] == ' '); /* a name starts */
    return a;
}

json_t *bcl_survey_device_info(const bcl_device_info *d, const char *extensions, size_t pm)
{
    char sel[32];
    snprintf(sel, sizeof sel, "%u:%u", d->platform_index, d->device_index);
    typedef json_int_t I;
    json_int_t total;
    json_t *ext = extensions_json(extensions, &total);
    return json_pack(
        "{s:s, s:{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s}, s:{s:I, s:I, s:I, s:[I, I, I], s:o, "
        "s:I, s:I, s:I, s:I, s:b, s:b, s:o, s:I}}",
        "selector", sel, "identity", "platform", bcl_survey_text(d->platform_name),
        "platform_version", bcl_survey_text(d->platform_version), "vendor",
        bcl_survey_text(d->vendor), "name", bcl_survey_text(d->name), "driver",
        bcl_survey_text(d->driver), "opencl_version", bcl_survey_text(d->version),
        "opencl_c_version", bcl_survey_text(d->c_version), "type", bcl_device_type_name(d->type),
        "limits", "compute_units", (I)d->compute_units, "clock_mhz", (I)d->clock_mhz,
        "max_work_group_size", (I)d->max_work_group, "max_work_item_sizes", (I)d->max_item_sizes[0],
        (I)d->max_item_sizes[1], (I)d->max_item_sizes[2], "preferred_work_group_multiple",
        pm ? json_integer((I)pm) : json_null(), "local_mem_bytes", (I)d->local_mem,
        "global_mem_bytes", (I)d->global_mem, "max_alloc_bytes", (I)d->max_alloc, "address_bits",
        (I)d->address_bits, "fp64", d->fp64, "fp16", d->fp16, "extensions", ext, "extensions_total",
        total);
}

/* ---- plausibility ---------------------------------------------------------------- */

/* No memory system of 2026 moves this much (an H200 has 4.8 TB/s, a B200 8). */
#define MAX_PLAUSIBLE_GB_PER_S 10000.0
/* float32 operations per clock per compute unit: twice an NVIDIA SM's 128
 * FP32 lanes, eight times the 32 additions per clock of a CPU core with two
 * 512-bit units. No device does more, so no honest rate goes above. */
#define MAX_FLOPS_PER_CLOCK_PER_CU 256.0

/* Flags obj[key] (a number, or skipped when null) above limit. */
static void check_max(json_t *flags, json_t *obj, const char *key, const char *path, double limit,
                      const char *rule)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_number(v) || limit <= 0)
        return;
    double x = json_number_value(v);
    if (x > limit) {
        char figure[160];
        snprintf(figure, sizeof figure, "%s.%s", path, key);
        json_array_append_new(flags, json_pack("{s:s, s:f, s:f, s:s}", "figure", figure, "value", x,
                                               "limit", limit, "rule", rule));
    }
}

static const char *const gb_rule = "GB/s above 10000, more than any memory system moves";
static const char *const peak_rule =
    "operations/s above compute_units x clock x 256 per clock, more than any device does";
static const char *const half_rule =
    "half operations/s above compute_units x clock x 512 per clock (two per float32 lane)";
static const char *const rate_rule =
    "ball-steps/s above compute_units x clock x 256 float32 operations per clock / the model's "
    "operations per ball-step";

/* A built-in model's float operations per ball-step (0: no such model). */
static unsigned built_in_flops(const char *name)
{
    const bcl_model *m = name ? bcl_model_find(name) : NULL;
    return m ? m->flops_per_step : 0;
}

/* The rules for one model's figures in obj (at path), from the model's
 * float operations per ball-step (0: unknown, no rate rule). */
static void flag_model(json_t *flags, json_t *obj, const char *path, unsigned flops_per_step,
                       double flops_per_s)
{
    double max_rate = flops_per_step ? flops_per_s / flops_per_step : 0;
    char sub[128];
    for (int i = 0; i < 2; i++) {
        const char *size = i ? "large" : "small";
        snprintf(sub, sizeof sub, "%s.%s", path, size);
        json_t *fig = json_object_get(obj, size);
        check_max(flags, fig, "gb_per_s", sub, MAX_PLAUSIBLE_GB_PER_S, gb_rule);
        check_max(flags, fig, "ball_steps_per_s", sub, max_rate, rate_rule);
    }
    for (bcl_fig f = 0; f < BCL_FIG_COUNT; f++)
        if (bcl_survey_figures[f].flags & BCL_FIG_RATE)
            check_max(flags, obj, bcl_survey_key(f), path, max_rate, rate_rule);
}

size_t bcl_survey_flag(json_t *dev)
{
    json_t *flags = json_object_get(dev, "flags");
    if (!json_is_array(flags)) {
        flags = json_array();
        json_object_set_new(dev, "flags", flags);
    }
    json_t *lim = json_object_get(dev, "limits");
    json_t *m = json_object_get(dev, "measured");
    double cu = (double)json_integer_value(json_object_get(lim, "compute_units"));
    double mhz = (double)json_integer_value(json_object_get(lim, "clock_mhz"));
    double flops_per_s = cu * mhz * 1e6 * MAX_FLOPS_PER_CLOCK_PER_CU;
    /* The device's figures by their rule. The peaks: no device does more
     * operations per clock and unit (an FMA counted as 2); packed half may
     * do two per float32 lane. */
    for (bcl_fig f = 0; f < BCL_FIG_COUNT; f++) {
        unsigned rule = bcl_survey_figures[f].flags;
        const char *key = bcl_survey_key(f), *dot = strchr(key, '.');
        if (rule & BCL_FIG_MODEL)
            continue;
        /* "transfer.x": x of the object "transfer" */
        char obj[64] = "", path[96] = "measured";
        if (dot) {
            snprintf(obj, sizeof obj, "%.*s", (int)(dot - key), key);
            snprintf(path, sizeof path, "measured.%s", obj);
            key = dot + 1;
        }
        json_t *o = *obj ? json_object_get(m, obj) : m;
        if (rule & BCL_FIG_GB)
            check_max(flags, o, key, path, MAX_PLAUSIBLE_GB_PER_S, gb_rule);
        else if (rule & BCL_FIG_PEAK)
            check_max(flags, o, key, path, flops_per_s / 1e9, peak_rule);
        else if (rule & BCL_FIG_PEAK2)
            check_max(flags, o, key, path, 2 * flops_per_s / 1e9, half_rule);
    }
    /* The default model's figures at the top of "measured", then every
     * model's under "models". */
    flag_model(flags, m, "measured", built_in_flops(json_string_value(json_object_get(m, "model"))),
               flops_per_s);
    const char *key;
    json_t *mm;
    json_object_foreach(json_object_get(m, "models"), key, mm)
    {
        char path[96];
        snprintf(path, sizeof path, "measured.models.%s", key);
        flag_model(flags, mm, path, built_in_flops(key), flops_per_s);
    }
    /* A model file's figures, by the count it was surveyed with (its
     * name may be any built-in's: it is never looked up). */
    json_t *mf = json_object_get(dev, "model_file");
    if (json_is_object(mf))
        flag_model(flags, mf, "model_file",
                   (unsigned)json_integer_value(json_object_get(mf, "flops_per_step")),
                   flops_per_s);
    return json_array_size(flags);
}
