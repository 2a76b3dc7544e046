/*
 * Reading survey files, strict about what it needs and lenient about the
 * rest: JSON, a schema it reads (ballcl-survey/3, what it writes, or /2 and
 * /1, which lack the keys later versions added: `since`), every required
 * key with its type (the tables below; docs/SURVEY.md and
 * docs/survey.schema.json); unknown keys are allowed, for a later writer of
 * the same version. Anything else is an input error naming the file and the
 * first offending key, never a crash: the reader takes any bytes.
 */
#include "survey/survey.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bigger than any survey of a few devices, small enough to read at once. */
#define MAX_FILE ((size_t)64 << 20)

enum {
    T_NULL = 1,
    T_BOOL = 2,
    T_INT = 4,        /* a JSON integer >= 0 */
    T_REAL = 8,       /* a JSON real >= 0 */
    T_STR = 16,       /* any string */
    T_ARR = 32,       /* elements of type `elem` (and `sub` for objects) */
    T_OBJ = 64,       /* the fields of `sub` */
    T_MAP = 128,      /* any keys, each value of type `elem` (and `sub`) */
    T_DRIVER = 256,   /* the string "driver" (a local size the runtime chose) */
    T_OPTIONAL = 512, /* may be missing: added within a version (older files lack it) */
    T_FIGS = 1024,    /* the figures of the table whose key is key + a name (elem 1: a model's) */
    T_NUM = T_INT | T_REAL,
};

typedef struct field {
    const char *key; /* NULL with sub: the fields of sub belong here too */
    unsigned types;
    const struct field *sub;
    unsigned elem;
    unsigned since; /* the schema version that added the key (0: 1) */
} field;

static const field ballstep_fields[] = {
    {"n", T_INT},
    {"us_per_step", T_NUM | T_NULL},
    {"gb_per_s", T_NUM | T_NULL},
    {"ball_steps_per_s", T_NUM | T_NULL},
    {"local", T_INT | T_DRIVER | T_NULL},
    {"validated", T_BOOL | T_NULL},
    {0},
};

static const field point_fields[] = {
    {"local", T_INT | T_DRIVER},
    {"us_per_step", T_NUM | T_NULL},
    {0},
};

static const field sweep_fields[] = {
    {"n", T_INT},
    {"points", T_ARR, point_fields, T_OBJ},
    {0},
};

static const field fused_fields[] = {
    {"n", T_INT},
    {"k", T_INT},
    {"variant", T_STR | T_NULL},
    {"local", T_INT | T_DRIVER | T_NULL},
    {"us_per_step", T_NUM | T_NULL},
    {"validated", T_BOOL | T_NULL},
    {0},
};

static const field model_fields[] = {
    {"small", T_OBJ, ballstep_fields},
    {"large", T_OBJ, ballstep_fields},
    {"local_sweep", T_OBJ, sweep_fields},
    {"fused", T_OBJ, fused_fields},
    {"", T_FIGS, NULL, 1},
    {0},
};

static const field transfer_fields[] = {
    {"bytes", T_INT},
    {"method", T_STR | T_NULL},
    {"transfer.", T_FIGS},
    {0},
};

static const field measured_fields[] = {
    {"model", T_STR},
    {"", T_FIGS},
    {"copy_bytes", T_INT},
    {"transfer", T_OBJ, transfer_fields, 0, 2},
    {NULL, 0, model_fields},
    {"models", T_MAP, model_fields, T_OBJ},
    {0},
};

static const field identity_fields[] = {
    {"platform", T_STR},
    {"platform_version", T_STR},
    {"vendor", T_STR},
    {"name", T_STR},
    {"driver", T_STR},
    {"opencl_version", T_STR},
    {"opencl_c_version", T_STR},
    {"type", T_STR},
    /* Where the device is: added within version 3, and left out where
     * unknown (or --label '' asks for no host). */
    {"host", T_STR | T_OPTIONAL},
    {"uuid", T_STR | T_OPTIONAL},
    {"pci_bus", T_STR | T_OPTIONAL},
    {0},
};

static const field limits_fields[] = {
    {"compute_units", T_INT},
    {"clock_mhz", T_INT},
    {"max_work_group_size", T_INT},
    {"max_work_item_sizes", T_ARR, NULL, T_INT},
    {"preferred_work_group_multiple", T_INT | T_NULL},
    {"local_mem_bytes", T_INT},
    {"global_mem_bytes", T_INT},
    {"max_alloc_bytes", T_INT},
    {"address_bits", T_INT},
    {"fp64", T_BOOL},
    {"fp16", T_BOOL},
    {"extensions", T_ARR, NULL, T_STR},
    {"extensions_total", T_INT},
    {0},
};

/* Version 3: what clinfo shows beyond the limits (src/survey/device_facts.c);
 * a query the driver refused is null. */
static const field fp_bits_fields[] = {
    {"denorm", T_BOOL},
    {"inf_nan", T_BOOL},
    {"round_to_nearest", T_BOOL},
    {"round_to_zero", T_BOOL},
    {"round_to_inf", T_BOOL},
    {"fma", T_BOOL},
    {"correctly_rounded_divide_sqrt", T_BOOL},
    {"soft_float", T_BOOL},
    {0},
};

static const field fp_config_fields[] = {
    {"float", T_OBJ | T_NULL, fp_bits_fields},
    {"double", T_OBJ | T_NULL, fp_bits_fields},
    {"half", T_OBJ | T_NULL, fp_bits_fields},
    {0},
};

static const field svm_fields[] = {
    {"coarse_grain_buffer", T_BOOL},
    {"fine_grain_buffer", T_BOOL},
    {"fine_grain_system", T_BOOL},
    {"atomics", T_BOOL},
    {0},
};

static const field vector_fields[] = {
    {"char", T_INT | T_NULL},  {"short", T_INT | T_NULL},
    {"int", T_INT | T_NULL},   {"long", T_INT | T_NULL},
    {"float", T_INT | T_NULL}, {"double", T_INT | T_NULL},
    {"half", T_INT | T_NULL},  {0},
};

static const field capability_fields[] = {
    {"fp_config", T_OBJ, fp_config_fields},
    {"svm_capabilities", T_OBJ | T_NULL, svm_fields},
    {"host_unified_memory", T_BOOL | T_NULL},
    {"global_mem_cache_type", T_STR | T_NULL},
    {"global_mem_cache_size", T_INT | T_NULL},
    {"global_mem_cacheline_size", T_INT | T_NULL},
    {"max_constant_buffer_size", T_INT | T_NULL},
    {"max_constant_args", T_INT | T_NULL},
    {"profiling_timer_resolution_ns", T_INT | T_NULL},
    {"preferred_vector_width", T_OBJ, vector_fields},
    {"native_vector_width", T_OBJ, vector_fields},
    {"preferred_work_group_size_multiple", T_INT | T_NULL},
    {"max_num_sub_groups", T_INT | T_NULL},
    {"sub_group_independent_forward_progress", T_BOOL | T_NULL},
    {"il_version", T_STR | T_NULL},
    {"image_support", T_BOOL | T_NULL},
    {"max_parameter_size", T_INT | T_NULL},
    {"mem_base_addr_align", T_INT | T_NULL},
    {0},
};

static const field platform_fields[] = {
    {"index", T_INT},  {"name", T_STR},    {"vendor", T_STR},        {"version", T_STR},
    {"status", T_STR}, {"devices", T_INT}, {"hint", T_STR | T_NULL}, {0},
};

static const field flag_fields[] = {
    {"figure", T_STR}, {"value", T_NUM}, {"limit", T_NUM}, {"rule", T_STR}, {0},
};

static const field device_fields[] = {
    {"selector", T_STR},
    {"identity", T_OBJ, identity_fields},
    {"limits", T_OBJ, limits_fields},
    {"capabilities", T_OBJ, capability_fields, 0, 3},
    {"measured", T_OBJ, measured_fields},
    {"errors", T_MAP, NULL, T_STR},
    {"flags", T_ARR, flag_fields, T_OBJ},
    {"profiling_usable", T_BOOL | T_OPTIONAL},
    {"profiling_note", T_STR | T_NULL | T_OPTIONAL},
    /* clinfo's keys under clinfo's names: added within version 3. */
    {"clinfo", T_MAP | T_OPTIONAL, NULL, T_STR | T_INT | T_BOOL},
    {0},
};

static const field settings_fields[] = {
    {"small_n", T_INT},
    {"sweep_n", T_INT},
    {"large_n", T_INT | T_STR},
    {"fused_n", T_INT | T_STR},
    {"fused_k", T_INT},
    {"repeats", T_INT},
    {"repeat_ms", T_NUM},
    {"build_repeats", T_INT},
    {"latency_repeats", T_INT},
    {"init", T_STR},
    {"seed", T_INT},
    {"driver_caches", T_STR},
    {0},
};

static const field document_fields[] = {
    {"schema", T_STR},
    {"ballcl_version", T_STR},
    {"date", T_STR},
    {"command", T_STR},
    {"quick", T_BOOL},
    {"settings", T_OBJ, settings_fields},
    {"platforms", T_ARR, platform_fields, T_OBJ, 3},
    {"devices", T_ARR, device_fields, T_OBJ},
    {0},
};

/* By json_type: the type bits of a value and its name in a message (a
 * negative number has no bits: every number of a survey is >= 0). */
static const struct {
    unsigned bits;
    const char *name, *negative;
} json_types[] = {
    [JSON_OBJECT] = {T_OBJ | T_MAP, "an object"},
    [JSON_ARRAY] = {T_ARR, "an array"},
    [JSON_STRING] = {T_STR, "a string"},
    [JSON_INTEGER] = {T_INT, "an integer", "a negative integer"},
    [JSON_REAL] = {T_REAL, "a number", "a negative number"},
    [JSON_TRUE] = {T_BOOL, "a boolean"},
    [JSON_FALSE] = {T_BOOL, "a boolean"},
    [JSON_NULL] = {T_NULL, "null"},
};

static unsigned type_of(const json_t *v)
{
    if (json_number_value(v) < 0)
        return 0;
    bool driver = json_is_string(v) && strcmp(json_string_value(v), "driver") == 0;
    return json_types[json_typeof(v)].bits | (driver ? T_DRIVER : 0);
}

/* "an integer or null", from the bits that are allowed. */
static void expected_text(unsigned types, char *out, size_t size)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {
        {T_INT, "an integer >= 0"}, {T_REAL, "a number >= 0"}, {T_STR, "a string"},
        {T_DRIVER, "\"driver\""},   {T_BOOL, "true or false"}, {T_ARR, "an array"},
        {T_OBJ, "an object"},       {T_MAP, "an object"},      {T_NULL, "null"},
    };
    if ((types & T_NUM) == T_NUM)
        types &= ~(unsigned)T_INT; /* "a number" says it */
    if (types & T_STR)
        types &= ~(unsigned)T_DRIVER;
    if (types & T_OBJ)
        types &= ~(unsigned)T_MAP;
    const char *want[sizeof names / sizeof names[0]];
    size_t n = 0, used = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (types & names[i].bit)
            want[n++] = names[i].name;
    out[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++) {
        int w = snprintf(out + used, size - used, "%s%s",
                         !i           ? ""
                         : i + 1 == n ? " or "
                                      : ", ",
                         want[i]);
        used += w > 0 ? (size_t)w : size;
    }
}

static const char *found_text(const json_t *v)
{
    return json_number_value(v) < 0 ? json_types[json_typeof(v)].negative
                                    : json_types[json_typeof(v)].name;
}

typedef struct checker {
    const char *name;
    bcl_error *e;
    unsigned version; /* of the file's schema */
} checker;

static int check_fields(checker *c, const json_t *obj, const field *f, const char *path);

/* Checks v (at path) against types, elem and sub. */
static int check_value(checker *c, const json_t *v, unsigned types, const field *sub, unsigned elem,
                       const char *path)
{
    if (!(type_of(v) & types)) {
        char want[160];
        expected_text(types, want, sizeof want);
        return bcl_fail(c->e, BCL_EXIT_INPUT, "'%s': %s: expected %s, found %s", c->name, path,
                        want, found_text(v));
    }
    char sub_path[512];
    if (json_is_array(v) && (types & T_ARR)) {
        size_t i;
        const json_t *x;
        json_array_foreach(v, i, x)
        {
            snprintf(sub_path, sizeof sub_path, "%s[%zu]", path, i);
            int rc = check_value(c, x, elem, sub, 0, sub_path);
            if (rc)
                return rc;
        }
    } else if (json_is_object(v) && (types & T_MAP) && !(types & T_OBJ)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            snprintf(sub_path, sizeof sub_path, "%s.%s", path, k);
            int rc = check_value(c, x, elem, sub, 0, sub_path);
            if (rc)
                return rc;
        }
    } else if (json_is_object(v) && sub) {
        return check_fields(c, v, sub, path);
    }
    return BCL_OK;
}

/* The figures of the table (src/survey/figures.c) whose key is prefix and a
 * name without dots: a number or null (the best local size: a size or null),
 * checked from the version that added each. */
static int check_figures(checker *c, const json_t *obj, const char *prefix, bool model,
                         const char *path)
{
    size_t len = strlen(prefix);
    for (bcl_fig i = 0; i < BCL_FIG_COUNT; i++) {
        const bcl_survey_figure *g = &bcl_survey_figures[i];
        if (!(g->flags & BCL_FIG_MODEL) != !model || strncmp(g->key, prefix, len) != 0 ||
            strchr(g->key + len, '.'))
            continue;
        unsigned types = (i == BCL_FIG_BEST_LOCAL ? T_INT | T_DRIVER : T_NUM) | T_NULL;
        field one[] = {
            {g->key + len, types | (g->flags & BCL_FIG_OPTIONAL ? T_OPTIONAL : 0), NULL, 0,
             g->since},
            {0},
        };
        int rc = check_fields(c, obj, one, path);
        if (rc)
            return rc;
    }
    return BCL_OK;
}

static int check_fields(checker *c, const json_t *obj, const field *f, const char *path)
{
    for (; f->key || f->sub; f++) {
        int rc;
        if ((f->types & T_FIGS) || !f->key) {
            rc = f->types & T_FIGS ? check_figures(c, obj, f->key, f->elem, path)
                                   : check_fields(c, obj, f->sub, path);
            if (rc)
                return rc;
            continue;
        }
        const json_t *v = json_object_get(obj, f->key);
        /* A key that a later version added is checked when present: an
         * older file lacks it, and the table shows it as absent. So is an
         * optional key, which a writer of the same version may add. */
        if (!v && (f->since > c->version || (f->types & T_OPTIONAL)))
            continue;
        if (!v)
            return bcl_fail(c->e, BCL_EXIT_INPUT, "'%s': %s%smissing key '%s'", c->name, path,
                            *path ? ": " : "", f->key);
        char sub_path[512];
        snprintf(sub_path, sizeof sub_path, "%s%s%s", path, *path ? "." : "", f->key);
        if ((rc = check_value(c, v, f->types, f->sub, f->elem, sub_path)))
            return rc;
    }
    return BCL_OK;
}

int bcl_survey_read(const char *buf, size_t len, const char *name, json_t **out, bcl_error *e)
{
    *out = NULL;
    json_error_t je;
    json_t *doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    if (!doc)
        return bcl_fail(e, BCL_EXIT_INPUT, "'%s': not valid JSON: %s (line %d, column %d)", name,
                        je.text, je.line, je.column);
    checker c = {.name = name, .e = e};
    const json_t *schema = json_object_get(doc, "schema");
    int rc = BCL_OK;
    if (!json_is_object(doc) || !json_is_string(schema))
        rc = bcl_fail(e, BCL_EXIT_INPUT,
                      "'%s': not a ballcl survey: expected a JSON object with \"schema\": \"%s\"",
                      name, BCL_SURVEY_SCHEMA);
    else if (strcmp(json_string_value(schema), BCL_SURVEY_SCHEMA) == 0)
        c.version = 3;
    else if (strcmp(json_string_value(schema), BCL_SURVEY_SCHEMA_V2) == 0)
        c.version = 2;
    else if (strcmp(json_string_value(schema), BCL_SURVEY_SCHEMA_V1) == 0)
        c.version = 1;
    else
        rc = bcl_fail(e, BCL_EXIT_INPUT, "'%s': schema '%.64s' is not supported: expected %s", name,
                      json_string_value(schema), BCL_SURVEY_SCHEMAS_READ);
    if (rc == BCL_OK && (rc = check_fields(&c, doc, document_fields, "")) == BCL_OK &&
        json_array_size(json_object_get(doc, "devices")) == 0)
        rc = bcl_fail(e, BCL_EXIT_INPUT, "'%s': devices: expected at least one device", name);
    if (rc)
        json_decref(doc);
    else
        *out = doc;
    return rc;
}

int bcl_survey_load(const char *path, char **json, bcl_error *e)
{
    *json = NULL;
    char *buf;
    size_t len;
    int err = bcl_read_file(path, MAX_FILE, &buf, &len, NULL);
    if (err == EFBIG)
        return bcl_fail(e, BCL_EXIT_INPUT, "'%s': larger than %zu MiB: not a survey", path,
                        (size_t)(MAX_FILE >> 20));
    if (err == ENOMEM)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory reading '%s'", path);
    if (err)
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot read '%s': %s", path, bcl_read_error(err));
    json_t *doc = NULL;
    int rc = bcl_survey_read(buf, len, path, &doc, e);
    json_decref(doc);
    if (rc)
        free(buf);
    else
        *json = buf;
    return rc;
}
