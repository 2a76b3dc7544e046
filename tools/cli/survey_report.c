/*
 * Surveys as one Markdown table: one column per device, one row per figure.
 * `ballcl survey` prints the devices it has just surveyed this way, and
 * `ballcl survey compare` the devices of several files, from the same JSON,
 * so the two never disagree. A figure that could not be measured reads
 * "n/a" with a footnote holding its error; a figure above a plausible peak
 * keeps its value, with a footnote holding the rule it broke.
 */
#include "survey_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { F_TEXT, F_INT, F_BYTES, F_NUM, F_BOOL, F_LIST, F_LOCAL, F_RATIO, F_ITEMS } fmt;

typedef struct row {
    const char *label;
    const char *path; /* from the device object, dot-separated */
    fmt f;
} row;

static const row device_rows[] = {
    {"platform", "identity.platform", F_TEXT},
    {"vendor", "identity.vendor", F_TEXT},
    {"type", "identity.type", F_TEXT},
    {"driver", "identity.driver", F_TEXT},
    {"OpenCL", "identity.opencl_version", F_TEXT},
    {"OpenCL C", "identity.opencl_c_version", F_TEXT},
    {"compute units", "limits.compute_units", F_INT},
    {"clock (MHz)", "limits.clock_mhz", F_INT},
    {"max work-group size", "limits.max_work_group_size", F_INT},
    {"max work-item sizes", "limits.max_work_item_sizes", F_ITEMS},
    {"preferred multiple", "limits.preferred_work_group_multiple", F_INT},
    {"local memory", "limits.local_mem_bytes", F_BYTES},
    {"global memory", "limits.global_mem_bytes", F_BYTES},
    {"max allocation", "limits.max_alloc_bytes", F_BYTES},
    {"fp64", "limits.fp64", F_BOOL},
    {"fp16", "limits.fp16", F_BOOL},
    {"extensions (of interest)", "limits.extensions", F_LIST},
    {"float denormals", "capabilities.fp_config.float.denorm", F_BOOL},
    {"float fma", "capabilities.fp_config.float.fma", F_BOOL},
    {"float divide/sqrt correctly rounded",
     "capabilities.fp_config.float.correctly_rounded_divide_sqrt", F_BOOL},
    {"SVM coarse-grain buffers", "capabilities.svm_capabilities.coarse_grain_buffer", F_BOOL},
    {"SVM fine-grain buffers", "capabilities.svm_capabilities.fine_grain_buffer", F_BOOL},
    {"host unified memory", "capabilities.host_unified_memory", F_BOOL},
    {"global memory cache", "capabilities.global_mem_cache_type", F_TEXT},
    {"global memory cache size", "capabilities.global_mem_cache_size", F_BYTES},
    {"constant buffer", "capabilities.max_constant_buffer_size", F_BYTES},
    {"profiling resolution (ns)", "capabilities.profiling_timer_resolution_ns", F_INT},
    {"max sub-groups", "capabilities.max_num_sub_groups", F_INT},
    {"image support", "capabilities.image_support", F_BOOL},
    {"profiling usable", "profiling_usable", F_BOOL},
};

/* After the figures of the table (src/survey/figures.c). */
static const row size_rows[] = {
    {"copy size", "measured.copy_bytes", F_BYTES},
    {"transfer method", "measured.transfer.method", F_TEXT},
    {"transfer size", "measured.transfer.bytes", F_BYTES},
};

/* Per model, relative to the model's object. */
static const row model_rows[] = {
    {"small N", "small.n", F_INT},
    {"small, us/step", "small.us_per_step", F_NUM},
    {"small, GB/s", "small.gb_per_s", F_NUM},
    {"large N", "large.n", F_INT},
    {"large, us/step", "large.us_per_step", F_NUM},
    {"large, GB/s", "large.gb_per_s", F_NUM},
    {"sweep N", "local_sweep.n", F_INT},
    {"fused K", "fused.k", F_INT},
    {"fused variant", "fused.variant", F_TEXT},
};

/* One column: a device of a document. */
typedef struct column {
    const json_t *doc, *dev;
    char head[200];
} column;

/* The footnotes: errors and flags of the devices' figures. */
typedef struct notes {
    char **text;
    size_t count, cap;
} notes;

/* Keys only: model names have no dots. */
const json_t *survey_at(const json_t *obj, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const json_t *v = obj;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
        v = json_object_get(v, k);
    return v;
}

/* Markdown-safe copy of s for a terminal: every control character and
 * byte that is no UTF-8 as \xNN (a survey file is anyone's text: a name
 * holding ESC ] 0 ; ... BEL would set the terminal's title), '|'
 * escaped. */
static void cell_text(const char *raw, char *out, size_t size)
{
    char s[4096];
    bcl_escape(raw, s, sizeof s);
    size_t j = 0;
    for (size_t i = 0; s[i] && j + 2 < size; i++) {
        char c = s[i];
        if (c == '|')
            out[j++] = '\\';
        out[j++] = (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    }
    out[j] = '\0';
}

static void format_bytes(double b, char *out, size_t size)
{
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(out, size, "%.1f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(out, size, "%.1f MiB", b / (1024.0 * 1024));
    else if (b >= 1024.0)
        snprintf(out, size, "%.0f KiB", b / 1024.0);
    else
        snprintf(out, size, "%.0f B", b);
}

static void format_value(const json_t *v, fmt f, char *out, size_t size)
{
    char tmp[512];
    switch (f) {
    case F_TEXT:
        cell_text(json_is_string(v) ? json_string_value(v) : "?", out, size);
        if (json_is_string(v) && !*json_string_value(v))
            snprintf(out, size, "base");
        return;
    case F_BOOL:
        snprintf(out, size, "%s", json_is_true(v) ? "yes" : "no");
        return;
    case F_BYTES:
        format_bytes(json_number_value(v), out, size);
        return;
    case F_INT:
        snprintf(out, size, "%.0f", json_number_value(v));
        return;
    case F_NUM: {
        double x = json_number_value(v);
        /* Four significant digits, without an exponent below a million. */
        if (fabs(x) >= 1e6)
            snprintf(out, size, "%.3e", x);
        else if (fabs(x) >= 1000)
            snprintf(out, size, "%.0f", x);
        else
            snprintf(out, size, "%.4g", x);
        return;
    }
    case F_RATIO:
        snprintf(out, size, "%.2fx", json_number_value(v));
        return;
    case F_LOCAL:
        if (json_is_string(v))
            cell_text(json_string_value(v), out, size);
        else
            snprintf(out, size, "%.0f", json_number_value(v));
        return;
    case F_ITEMS:
    case F_LIST: {
        size_t used = 0, i;
        const json_t *x;
        tmp[0] = '\0';
        json_array_foreach(v, i, x)
        {
            char one[64];
            if (json_is_string(x)) {
                /* cl_khr_fp64 -> fp64: the prefix says nothing in a table. */
                const char *s = json_string_value(x);
                snprintf(one, sizeof one, "%s", strncmp(s, "cl_khr_", 7) == 0 ? s + 7 : s);
            } else {
                snprintf(one, sizeof one, "%.0f", json_number_value(x));
            }
            int w = snprintf(tmp + used, sizeof tmp - used, "%s%s",
                             i ? (f == F_ITEMS ? " x " : ", ") : "", one);
            if (w < 0 || (size_t)w >= sizeof tmp - used)
                break;
            used += (size_t)w;
        }
        cell_text(i || f == F_ITEMS ? tmp : "none", out, size);
        return;
    }
    }
}

/* The error recorded for figure path full or, failing that, for one of its
 * parents ("measured.small" for "measured.small.us_per_step"). */
static const char *error_of(const json_t *dev, const char *full, char *key, size_t size)
{
    const json_t *errors = json_object_get(dev, "errors");
    snprintf(key, size, "%s", full);
    for (;;) {
        const json_t *m = json_object_get(errors, key);
        if (json_is_string(m))
            return json_string_value(m);
        char *dot = strrchr(key, '.');
        if (!dot)
            return NULL;
        *dot = '\0';
    }
}

static const json_t *flag_of(const json_t *dev, const char *full)
{
    size_t i;
    const json_t *f;
    json_array_foreach(json_object_get(dev, "flags"), i, f)
    {
        const char *fig = json_string_value(json_object_get(f, "figure"));
        if (fig && strcmp(fig, full) == 0)
            return f;
    }
    return NULL;
}

/* The number of the footnote holding text (added when new), made safe for
 * a terminal; 0 when out of memory. */
static size_t footnote(notes *n, const char *text)
{
    char esc[1200];
    cell_text(text, esc, sizeof esc);
    for (size_t i = 0; i < n->count; i++)
        if (strcmp(n->text[i], esc) == 0)
            return i + 1;
    if (n->count == n->cap) {
        size_t cap = n->cap ? n->cap * 2 : 16;
        char **grown = realloc(n->text, cap * sizeof *grown);
        if (!grown)
            return 0;
        n->text = grown;
        n->cap = cap;
    }
    n->text[n->count] = strdup(esc);
    return n->text[n->count] ? ++n->count : 0;
}

/* fig: the figure of the table the cell shows, or BCL_FIG_COUNT. A
 * footnote is shared by every cell it explains. */
static void print_cell(const column *c, const char *full, fmt f, bcl_fig fig, notes *n)
{
    char out[600], shown[2400], note[1200] = "", key[256];
    const json_t *v = survey_at(c->dev, full);
    const json_t *why = json_object_get(c->dev, "profiling_note");
    const char *err = json_is_null(v) ? error_of(c->dev, full, key, sizeof key) : NULL;
    const char *mark = "";
    const json_t *flag = flag_of(c->dev, full);
    if (!v) {
        printf(" - |");
        return;
    }
    /* Null by design: the device lacks the number type. */
    if (json_is_null(v) && !err && (fig == BCL_FIG_FP64 || fig == BCL_FIG_HALF)) {
        printf(" none (no %s) |", fig == BCL_FIG_FP64 ? "fp64" : "cl_khr_fp16");
        return;
    }
    if (json_is_null(v)) {
        snprintf(shown, sizeof shown, "n/a");
        if (err)
            snprintf(note, sizeof note, "%s: %s: %s", c->head, key, err);
        else if (fig == BCL_FIG_LATENCY && json_is_string(why))
            /* Null by design: it needs the device's clock. */
            snprintf(note, sizeof note,
                     "%s: %s needs the device's profiling clock, which failed "
                     "its check: %s",
                     c->head, full, json_string_value(why));
    } else {
        format_value(v, f, out, sizeof out);
        cell_text(out, shown, sizeof shown);
        /* Unusable profiling: the reason goes into a footnote, as the time
         * figures of that column came from the host clock. */
        if (strcmp(full, "profiling_usable") == 0 && json_is_false(v) && json_is_string(why))
            snprintf(note, sizeof note,
                     "%s: profiling failed its check (%s): its times are the host "
                     "clock's",
                     c->head, json_string_value(why));
        else if (flag) {
            snprintf(note, sizeof note,
                     "%s: %s = %g is above the plausible %g (%s): flagged, not hidden", c->head,
                     full, json_number_value(json_object_get(flag, "value")),
                     json_number_value(json_object_get(flag, "limit")),
                     json_string_value(json_object_get(flag, "rule")));
            mark = " (!)";
        }
    }
    if (*note)
        printf(" %s%s [%zu] |", shown, mark, footnote(n, note));
    else
        printf(" %s |", shown);
}

/* One row: the figure at path of each column, or with model set, at path
 * in that model's object, the row's label headed by the model's name. */
static void print_row(const column *cols, size_t ncols, const char *label, const char *model,
                      const char *path, fmt f, bcl_fig fig, notes *n)
{
    char full[256], esc[256], head[160];
    snprintf(head, sizeof head, "%s%s%s", model ? model : "", model ? ": " : "", label);
    cell_text(head, esc, sizeof esc);
    printf("| %s |", esc);
    for (size_t i = 0; i < ncols; i++) {
        /* The default model's figures sit at the top of "measured". */
        const char *def =
            model ? json_string_value(survey_at(cols[i].dev, "measured.model")) : NULL;
        if (!model)
            snprintf(full, sizeof full, "%s", path);
        else if (def && strcmp(def, model) == 0)
            snprintf(full, sizeof full, "measured.%s", path);
        else
            snprintf(full, sizeof full, "measured.models.%s.%s", model, path);
        print_cell(&cols[i], full, f, fig, n);
    }
    printf("\n");
}

#define NROWS(a) (sizeof(a) / sizeof(a)[0])

/* The rows of a table, then the figures of the table with flag
 * (BCL_FIG_ROW: the device's, BCL_FIG_MODEL: a model's; 0: none), each
 * labelled "label (unit)". */
static void print_rows(const column *cols, size_t ncols, const row *rows, size_t nrows,
                       unsigned flag, const char *model, notes *n)
{
    for (size_t r = 0; r < nrows; r++)
        print_row(cols, ncols, rows[r].label, model, rows[r].path, rows[r].f, BCL_FIG_COUNT, n);
    for (bcl_fig f = 0; f < BCL_FIG_COUNT; f++) {
        const bcl_survey_figure *g = &bcl_survey_figures[f];
        if (!(g->flags & flag))
            continue;
        char label[160], path[128];
        snprintf(label, sizeof label, "%s%s%s%s", g->label, *g->unit ? " (" : "", g->unit,
                 *g->unit ? ")" : "");
        snprintf(path, sizeof path, "%s%s", model ? "" : "measured.", g->key);
        fmt how = f == BCL_FIG_BEST_LOCAL ? F_LOCAL : f == BCL_FIG_LOCAL1_PENALTY ? F_RATIO : F_NUM;
        print_row(cols, ncols, label, model, path, how, f, n);
    }
}

/* Adds name to the list of models (no duplicates, at most cap). */
static void add_model(const char **names, size_t *count, size_t cap, const char *name)
{
    if (!name)
        return;
    for (size_t i = 0; i < *count; i++)
        if (strcmp(names[i], name) == 0)
            return;
    if (*count < cap)
        names[(*count)++] = name;
}

int survey_print_table(json_t *const *docs, const char *const *labels, size_t ndocs)
{
    size_t ncols = 0;
    for (size_t d = 0; d < ndocs; d++)
        ncols += json_array_size(json_object_get(docs[d], "devices"));
    column *cols = calloc(ncols ? ncols : 1, sizeof *cols);
    if (!cols)
        return -1;
    const char *models[32];
    size_t nmodels = 0;
    size_t k = 0;
    for (size_t d = 0; d < ndocs; d++) {
        size_t i;
        const json_t *dev;
        json_array_foreach(json_object_get(docs[d], "devices"), i, dev)
        {
            column *c = &cols[k++];
            const char *label = labels ? labels[d] : NULL;
            c->doc = docs[d];
            c->dev = dev;
            snprintf(c->head, sizeof c->head, "%s%s%s%s",
                     json_string_value(survey_at(dev, "identity.name")), label ? " (" : "",
                     label ? label : "", label ? ")" : "");
            add_model(models, &nmodels, 32, json_string_value(survey_at(dev, "measured.model")));
            const char *key;
            const json_t *mm;
            json_object_foreach(
                (json_t *)json_object_get(json_object_get(dev, "measured"), "models"), key, mm)
            {
                (void)mm;
                add_model(models, &nmodels, 32, key);
            }
        }
    }
    notes n = {0};
    /* The heads, then where each column comes from. */
    static const char *const heads[] = {"figure", "---", "surveyed"};
    for (int h = 0; h < 3; h++) {
        printf("| %s |", heads[h]);
        for (size_t i = 0; i < ncols; i++) {
            const char *date = json_string_value(json_object_get(cols[i].doc, "date"));
            char esc[400];
            cell_text(h == 0 ? cols[i].head : date ? date : "?", esc, sizeof esc);
            bool quick = h == 2 && json_is_true(json_object_get(cols[i].doc, "quick"));
            printf(" %s%s |", h == 1 ? "---:" : esc, quick ? " (quick)" : "");
        }
        printf("\n");
    }
    print_row(cols, ncols, "selector", NULL, "selector", F_TEXT, BCL_FIG_COUNT, &n);
    print_rows(cols, ncols, device_rows, NROWS(device_rows), BCL_FIG_ROW, NULL, &n);
    print_rows(cols, ncols, size_rows, NROWS(size_rows), 0, NULL, &n);
    for (size_t m = 0; m < nmodels; m++)
        print_rows(cols, ncols, model_rows, NROWS(model_rows), BCL_FIG_MODEL, models[m], &n);
    if (n.count)
        printf("\n");
    for (size_t i = 0; i < n.count; i++) {
        printf("- [%zu] %s\n", i + 1, n.text[i]);
        free(n.text[i]);
    }
    free(n.text);
    free(cols);
    return 0;
}
