/*
 * The tuned file (docs/BENCHMARK.md): what 'ballcl tune' found best for one device and
 * model, stored in the cache folder as JSON (format in docs/BENCHMARK.md):
 *
 *   <cache>/tuned/<model>-<device key>.json
 *
 * The device key hashes the device's identity, driver version included, so
 * a new driver starts untuned rather than trusting figures it never made,
 * and the compute units and clock it offers this process.
 * The file also carries the identity in clear, the date and every candidate
 * measured, so a reader can see why the winner won.
 */
#include "files/files.h"
#include "measure/timing.h"
#include "cache/cache.h"
#include "ocl/clcall.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TUNED_FORMAT "ballcl-tuned/1"
/* A tuned file lists a few hundred candidates at most. */
#define MAX_TUNED_BYTES ((uint64_t)16 << 20)

/* The tuned file of (d, m) under cache_dir (NULL: bcl_cache_dir's). */
static int tuned_path_in(const char *cache_dir, const bcl_device_info *d, const bcl_model *m,
                         char *out, size_t size, bcl_error *e)
{
    char dir[4096], key[33];
    int rc = BCL_OK;
    if (cache_dir)
        snprintf(dir, sizeof dir, "%s", cache_dir);
    else
        rc = bcl_cache_dir(dir, sizeof dir, e);
    if (rc == BCL_OK)
        rc = bcl_device_key(d, key, e);
    if (rc)
        return rc;
    int w = snprintf(out, size, "%s/tuned/%s-%s.json", dir, m->name, key);
    if (w < 0 || (size_t)w >= size)
        return bcl_fail(e, BCL_EXIT_INPUT, "tuned file path is too long");
    return BCL_OK;
}

static void kernel_name(const bcl_model *m, bool fused, const char *variant, char *out, size_t size)
{
    char suffix[64];
    bcl_kernel_suffix(fused, variant, suffix, sizeof suffix);
    snprintf(out, size, "%s_%s", m->name, suffix);
}

static json_t *local_json(size_t local)
{
    return local ? json_integer((json_int_t)local) : json_string("driver");
}

static json_t *entry_json(const bcl_model *m, bool fused, const bcl_tuned_entry *t)
{
    if (!t->found)
        return json_null();
    char name[128];
    kernel_name(m, fused, t->variant, name, sizeof name);
    return json_pack("{s:s, s:s, s:o, s:i, s:f}", "kernel", name, "variant", t->variant, "local",
                     local_json(t->local), "steps_per_launch", (int)t->steps_per_launch,
                     "us_per_step", t->us_per_step);
}

static json_t *stats_json(const bcl_stats *s)
{
    return json_pack("{s:f, s:f, s:f}", "median", s->median, "min", s->min, "max", s->max);
}

int bcl_tuned_open(const bcl_device_info *d, const bcl_model *m, bcl_outputs *o, char *path_out,
                   size_t path_size, bcl_error *e)
{
    char path[4096];
    int rc = bcl_tuned_path(d, m, path, sizeof path, e);
    if (rc)
        return rc;
    char *slash = strrchr(path, '/');
    *slash = '\0';
    rc = bcl_make_folders(path, e);
    char why[4096 + 160];
    /* The tuned folder and the cache folder above it must be the user's,
     * as for the binary cache. */
    if (rc == BCL_OK && !bcl_cache_folder_ok(path, why, sizeof why))
        rc = bcl_fail(e, BCL_EXIT_INPUT, "%s", why);
    char *up = strrchr(path, '/');
    if (rc == BCL_OK && up) {
        *up = '\0';
        if (!bcl_cache_folder_ok(path, why, sizeof why))
            rc = bcl_fail(e, BCL_EXIT_INPUT, "%s", why);
        *up = '/';
    }
    *slash = '/';
    if (rc)
        return rc;
    snprintf(path_out, path_size, "%s", path);
    /* The output set keeps a pointer to the path: the caller's copy. */
    return bcl_outputs_add(o, path_out, "tuned file", e);
}

int bcl_tuned_save(const bcl_device_info *d, const bcl_model *m, const bcl_tune_result *r,
                   bcl_outputs *o, bcl_error *e)
{
    char key[33];
    int rc = bcl_device_key(d, key, e);
    if (rc)
        return rc;
    json_t *cands = json_array();
    for (size_t i = 0; i < r->count; i++) {
        const bcl_tune_candidate *c = &r->cand[i];
        char name[128];
        kernel_name(m, c->fused, c->variant, name, sizeof name);
        json_array_append_new(
            cands, json_pack("{s:s, s:s, s:o, s:i, s:b, s:o, s:s}", "kernel", name, "variant",
                             c->variant, "local", local_json(c->local), "steps_per_launch",
                             (int)c->steps_per_launch, "validated", c->validated, "us_per_step",
                             c->validated ? stats_json(&c->m.device_us) : json_null(), "clock",
                             c->m.host_clock ? "host" : "device"));
    }
    /* Which clock timed the candidates (docs/BENCHMARK.md, "Clocks"). */
    const char *clock_note = bcl_profiling_unusable(d);
    json_t *root = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i}, s:s, s:I, s:o, s:o, s:f, s:o}",
        "format", TUNED_FORMAT, "model", m->name, "device", "key", key, "type",
        bcl_device_type_name(d->type), "platform", d->platform_name, "platform_version",
        d->platform_version, "name", d->name, "vendor", d->vendor, "version", d->version, "driver",
        d->driver, "address_bits", (int)d->address_bits, "date", r->best.date, "balls",
        (json_int_t)r->best.balls, "single", entry_json(m, false, &r->best.single), "fused",
        entry_json(m, true, &r->best.fused), "auto_us_per_step", r->auto_us, "candidates", cands);
    if (root) {
        json_object_set_new(root, "clock", json_string(clock_note ? "host" : "device"));
        json_object_set_new(root, "clock_note", clock_note ? json_string(clock_note) : json_null());
        /* The untuned default timed beside the K sweep (docs/PERFORMANCE.md). */
        json_object_set_new(root, "default",
                            r->default_us > 0
                                ? json_pack("{s:f, s:f, s:b}", "us_per_step", r->default_us,
                                            "within_percent", r->default_within * 100, "kept",
                                            r->default_kept)
                                : json_null());
    }
    char *text =
        root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6))
             : NULL;
    json_decref(root);
    if (!text)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "cannot encode the tuned file");
    size_t len = strlen(text);
    text[len] = '\n'; /* json_dumps leaves room for the NUL we overwrite */
    rc = bcl_outputs_write(o, 0, text, len + 1, e);
    if (rc == BCL_OK)
        rc = bcl_outputs_commit(o, e);
    free(text);
    return rc;
}

/* The operations a compute unit can issue per cycle, with room to spare:
 * twice the widest known today (an NVIDIA H100/H200 SM and an AMD CDNA3
 * compute unit issue 128 float32 operations per cycle, an AVX-512 core 32).
 * A rate is judged without measuring anything: the add-rate and copy bounds
 * of bench and survey take a measurement each, which a run reading its
 * tuned file must not pay. */
#define OPS_PER_CU_CYCLE 256.0

/* The most ball-steps/s the device could reach for the model: compute
 * units x clock x OPS_PER_CU_CYCLE / the model's operations per ball-step;
 * 0 when the device does not report its clock or units (no check). */
static double rate_bound(const bcl_device_info *d, const bcl_model *m)
{
    unsigned ops = m->ops_per_step ? m->ops_per_step : 1;
    if (!d->compute_units || !d->clock_mhz)
        return 0;
    return (double)d->compute_units * d->clock_mhz * 1e6 * OPS_PER_CU_CYCLE / ops;
}

/* A parsed entry whose figures cannot be a measurement: dropped (not
 * found), with the reason appended to t->damaged. */
static void check_damaged(bcl_tuned *t, bcl_tuned_entry *en, const char *what, const char *path,
                          json_int_t balls, const bcl_device_info *d, const bcl_model *m)
{
    if (!en->found)
        return;
    char why[320];
    double bound = rate_bound(d, m);
    double rate = balls > 0 && en->us_per_step > 0 ? (double)balls / (en->us_per_step * 1e-6) : 0;
    if (!isfinite(en->us_per_step) || !(en->us_per_step > 0))
        snprintf(why, sizeof why, "us_per_step is %s: expected a positive number",
                 isnan(en->us_per_step) ? "missing" : "not a positive finite number");
    else if (balls <= 0)
        snprintf(why, sizeof why, "balls (the N it was tuned at) is %s: expected a positive count",
                 balls == 0 ? "missing or 0" : "negative");
    else if (!isfinite(rate) || (bound > 0 && rate > 2 * bound))
        snprintf(why, sizeof why,
                 "us_per_step %.3g at N = %lld is %.3g ball-steps/s, more than twice the "
                 "device's bound of %.3g (%u compute units at %u MHz, %.0f operations per cycle "
                 "each, %u per ball-step)",
                 en->us_per_step, (long long)balls, rate, bound, d->compute_units, d->clock_mhz,
                 OPS_PER_CU_CYCLE, m->ops_per_step);
    else
        return;
    size_t used = strlen(t->damaged);
    snprintf(t->damaged + used, sizeof t->damaged - used,
             "%stuned file '%s': its '%s' entry is damaged (%s): not used, the "
             "rate calibrated instead",
             used ? "; " : "", path, what, why);
    memset(en, 0, sizeof *en);
}

/* Reads one entry; a missing or null entry is "not found". */
static int entry_parse(json_t *j, const char *what, const char *path, bool fused,
                       bcl_tuned_entry *t, bcl_error *e)
{
    memset(t, 0, sizeof *t);
    if (!j || json_is_null(j))
        return BCL_OK;
    const char *variant = NULL;
    json_t *local = NULL;
    json_int_t k = 0;
    double us = NAN; /* missing: a damaged entry (check_damaged) */
    if (json_unpack(j, "{s:s, s:o, s:I, s?F}", "variant", &variant, "local", &local,
                    "steps_per_launch", &k, "us_per_step", &us) != 0 ||
        strlen(variant) >= BCL_VARIANT_NAME || k < 1 || k > (1 << 24) || (!fused && k != 1))
        return bcl_fail(e, BCL_EXIT_INPUT, "tuned file '%s': entry '%s' is malformed", path, what);
    if (json_is_integer(local) && json_integer_value(local) >= 1 &&
        json_integer_value(local) <= (1 << 20))
        t->local = (size_t)json_integer_value(local);
    else if (!(json_is_string(local) && strcmp(json_string_value(local), "driver") == 0))
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "tuned file '%s': entry '%s' has local that is not a size or \"driver\"",
                        path, what);
    strcpy(t->variant, variant);
    t->steps_per_launch = (unsigned)k;
    t->us_per_step = us;
    t->found = true;
    return BCL_OK;
}

int bcl_tuned_path(const bcl_device_info *d, const bcl_model *m, char *out, size_t size,
                   bcl_error *e)
{
    return tuned_path_in(NULL, d, m, out, size, e);
}

int bcl_tuned_load(const bcl_device_info *d, const bcl_model *m, bcl_tuned *t, bcl_error *e)
{
    return bcl_tuned_load_in(NULL, d, m, t, e);
}

int bcl_tuned_load_in(const char *cache_dir, const bcl_device_info *d, const bcl_model *m,
                      bcl_tuned *t, bcl_error *e)
{
    memset(t, 0, sizeof *t);
    char path[4096], key[33];
    int rc = tuned_path_in(cache_dir, d, m, path, sizeof path, e);
    if (rc == BCL_OK)
        rc = bcl_device_key(d, key, e);
    if (rc)
        return rc;
    /* Only a regular file of the user's, in folders of the user's: a FIFO
     * would block, and another user's file would steer our launches. */
    unsigned mode = 0;
    int fd = bcl_open_regular(path, true, &mode);
    if (fd == -1 && (errno == ENOENT || errno == ENOTDIR))
        return BCL_OK; /* nothing tuned yet (or no cache folder, said elsewhere) */
    if (fd == -1 && errno == ELOOP)
        return bcl_fail(e, BCL_EXIT_INPUT, "tuned file '%s' is a symbolic link: expected a file",
                        path);
    if (fd == -2)
        return bcl_fail(e, BCL_EXIT_INPUT, "tuned file '%s' is %s, not a regular file", path,
                        bcl_file_type_name(mode));
    if (fd < 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot read tuned file '%s': %s", path,
                        strerror(errno));
    struct stat st;
    char why[4096 + 160];
    bool trusted = fstat(fd, &st) == 0 && bcl_cache_owner_ok(&st, why, sizeof why);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    trusted = trusted && bcl_cache_folder_ok(path, why, sizeof why);
    *slash = '/';
    if (!trusted) {
        close(fd);
        return bcl_fail(e, BCL_EXIT_INPUT, "tuned file '%s': %s", path, why);
    }
    json_error_t jerr;
    json_t *root = json_loadfd(fd, 0, &jerr);
    close(fd);
    if (!root && jerr.line > 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "tuned file '%s' is not valid JSON: %s (line %d)", path,
                        jerr.text, jerr.line);
    if (!root)
        return bcl_fail(e, BCL_EXIT_INPUT, "tuned file '%s' is not valid JSON: %s", path,
                        jerr.text);
    const char *format = NULL, *model = NULL, *dkey = NULL, *date = "";
    json_int_t balls = 0;
    json_t *single = NULL, *fused = NULL;
    rc = BCL_OK;
    if (json_unpack(root, "{s:s, s:s, s:{s:s}, s?s, s?I, s?o, s?o}", "format", &format, "model",
                    &model, "device", "key", &dkey, "date", &date, "balls", &balls, "single",
                    &single, "fused", &fused) != 0)
        rc = bcl_fail(e, BCL_EXIT_INPUT,
                      "tuned file '%s': expected format, model and device.key fields", path);
    else if (strcmp(format, TUNED_FORMAT) != 0)
        rc = bcl_fail(e, BCL_EXIT_INPUT, "tuned file '%s': format '%s', expected '%s'", path,
                      format, TUNED_FORMAT);
    else if (strcmp(model, m->name) != 0 || strcmp(dkey, key) != 0)
        rc = bcl_fail(e, BCL_EXIT_INPUT,
                      "tuned file '%s' belongs to model '%s' on device key %s, expected '%s' on %s",
                      path, model, dkey, m->name, key);
    if (rc == BCL_OK)
        rc = entry_parse(single, "single", path, false, &t->single, e);
    if (rc == BCL_OK)
        rc = entry_parse(fused, "fused", path, true, &t->fused, e);
    if (rc == BCL_OK) {
        check_damaged(t, &t->single, "single", path, balls, d, m);
        check_damaged(t, &t->fused, "fused", path, balls, d, m);
        t->balls = balls > 0 ? (uint64_t)balls : 0;
        snprintf(t->date, sizeof t->date, "%s", date);
    } else {
        memset(t, 0, sizeof *t);
    }
    json_decref(root);
    return rc;
}
void bcl_tuned_check(bcl_context *c, bcl_tuned *t, char *warning, size_t size)
{
    if (size)
        warning[0] = '\0';
    bcl_tuned_entry *entries[2] = {&t->single, &t->fused};
    for (int i = 0; i < 2; i++) {
        bcl_tuned_entry *te = entries[i];
        if (!te->found)
            continue;
        bcl_variant vars[BCL_MAX_VARIANTS];
        size_t nv = 0;
        bcl_error e = {0};
        bool known = false;
        if (bcl_variants_list(c, i == 1, vars, BCL_MAX_VARIANTS, &nv, &e) == BCL_OK)
            for (size_t v = 0; v < nv; v++)
                known = known || strcmp(vars[v].name, te->variant) == 0;
        bcl_error_clear(&e);
        if (known)
            continue;
        /* A file from another version of the kernels, or edited: its
         * launch cannot be made, so the documented rule decides. */
        char path[4096] = "";
        bcl_tuned_path(bcl_context_device(c), bcl_context_model(c), path, sizeof path, &e);
        bcl_error_clear(&e);
        snprintf(warning, size,
                 "tuned file '%s' names the %s variant '%s', which the kernels of model '%s' do "
                 "not have (the default rule decides)",
                 path, i == 1 ? "k-step" : "one-step", te->variant, bcl_context_model(c)->name);
        memset(te, 0, sizeof *te);
    }
}

static int by_tuned_file(const void *a, const void *b)
{
    return strcmp(((const bcl_tuned_file_info *)a)->file, ((const bcl_tuned_file_info *)b)->file);
}

/* Reads one tuned file for the listing: its labels and entries, or why it
 * cannot be used. Nothing here is trusted for a run (bcl_tuned_load checks
 * the device key); it is what `ballcl cache list` shows. */
static void describe_tuned(const char *dir, const char *name, bcl_tuned_file_info *x)
{
    memset(x, 0, sizeof *x);
    snprintf(x->file, sizeof x->file, "%s", name);
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    if (lstat(path, &st) == 0) {
        x->bytes = (uint64_t)st.st_size;
        x->mtime = (int64_t)st.st_mtime;
    }
    /* Only a regular file: a FIFO would block the listing for ever. */
    unsigned mode = 0;
    int fd = bcl_open_regular(path, true, &mode);
    if (fd == -2 || (fd == -1 && errno == ELOOP)) {
        snprintf(x->problem, sizeof x->problem, "%s, not a regular file",
                 fd == -2 ? bcl_file_type_name(mode) : "a symbolic link");
        return;
    }
    if (fd < 0) {
        snprintf(x->problem, sizeof x->problem, "cannot read: %s", strerror(errno));
        return;
    }
    json_error_t jerr;
    json_t *root = json_loadfd(fd, 0, &jerr);
    close(fd);
    if (!root) {
        snprintf(x->problem, sizeof x->problem, "not valid JSON (line %d)", jerr.line);
        return;
    }
    const char *format = NULL, *model = NULL, *dev = "", *plat = "", *date = "";
    json_int_t balls = 0;
    json_t *single = NULL, *fused = NULL;
    bcl_error e = {0};
    if (json_unpack(root, "{s:s, s:s, s:{s?s, s?s}, s?s, s?I, s?o, s?o}", "format", &format,
                    "model", &model, "device", "name", &dev, "platform", &plat, "date", &date,
                    "balls", &balls, "single", &single, "fused", &fused) != 0)
        snprintf(x->problem, sizeof x->problem, "expected format, model and device fields");
    else if (strcmp(format, TUNED_FORMAT) != 0)
        snprintf(x->problem, sizeof x->problem, "format '%.40s', expected '%s'", format,
                 TUNED_FORMAT);
    else if (entry_parse(single, "single", name, false, &x->tuned.single, &e) != BCL_OK ||
             entry_parse(fused, "fused", name, true, &x->tuned.fused, &e) != BCL_OK)
        snprintf(x->problem, sizeof x->problem, "an entry is malformed");
    else
        x->valid = true;
    bcl_error_clear(&e);
    if (x->valid) {
        snprintf(x->model, sizeof x->model, "%s", model);
        snprintf(x->device, sizeof x->device, "%s", dev);
        snprintf(x->platform, sizeof x->platform, "%s", plat);
        snprintf(x->tuned.date, sizeof x->tuned.date, "%s", date);
        x->tuned.balls = balls > 0 ? (uint64_t)balls : 0;
    }
    json_decref(root);
}

int bcl_tuned_list(const char *cache_dir, bcl_tuned_file_info **files, size_t *count, bcl_error *e)
{
    *files = NULL;
    *count = 0;
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s/tuned", cache_dir) >= (int)sizeof dir)
        return bcl_fail(e, BCL_EXIT_INPUT, "cache folder path is too long");
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return BCL_OK;
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot read folder '%s': %s", dir, strerror(errno));
    }
    size_t n = 0, cap = 0;
    bcl_tuned_file_info *list = NULL;
    struct dirent *de;
    int rc = BCL_OK;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        /* <model>-<key>.json; temporaries of an interrupted write are not. */
        if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0 || de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            bcl_tuned_file_info *grown = realloc(list, cap * sizeof *list);
            if (!grown) {
                rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory listing '%s'", dir);
                break;
            }
            list = grown;
        }
        describe_tuned(dir, de->d_name, &list[n++]);
    }
    closedir(d);
    if (rc) {
        free(list);
        return rc;
    }
    if (n)
        qsort(list, n, sizeof *list, by_tuned_file);
    *files = list;
    *count = n;
    return BCL_OK;
}
