/*
 * The tuned file (docs/BENCHMARK.md), <cache>/tuned/<model>-<device key>.json:
 * what 'ballcl tune' found best for one device and model, written and listed
 * here, read for a plan by src/run/tuned_read.c. The key hashes the device's
 * identity, driver version included (a new driver starts untuned rather than
 * trusting figures it never made), and the compute units and clock it
 * offers. The file also carries the identity in clear, the date and every
 * candidate measured, so a reader can see why the winner won.
 */
#include "files/files.h"
#include "measure/timing.h"
#include "models/models.h"
#include "cache/cache.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A configuration's kernel, variant, local size and K, as the entries and
 * the candidates begin. */
static json_t *config_json(const bcl_model *m, bool fused, const char *variant, size_t local,
                           unsigned k)
{
    char suffix[64], name[128];
    bcl_kernel_suffix(fused, variant, suffix, sizeof suffix);
    snprintf(name, sizeof name, "%s_%s", m->name, suffix);
    return json_pack("{s:s, s:s, s:o, s:i}", "kernel", name, "variant", variant, "local",
                     local ? json_integer((json_int_t)local) : json_string("driver"),
                     "steps_per_launch", (int)k);
}

static json_t *entry_json(const bcl_model *m, bool fused, const bcl_tuned_entry *t)
{
    if (!t->found)
        return json_null();
    json_t *j = config_json(m, fused, t->variant, t->local, t->steps_per_launch);
    json_object_set_new(j, "us_per_step", json_real(t->us_per_step));
    return j;
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
        json_t *j = config_json(m, c->fused, c->variant, c->local, c->steps_per_launch);
        json_object_set_new(j, "validated", json_boolean(c->validated));
        json_object_set_new(j, "us_per_step",
                            c->validated ? stats_json(&c->m.device_us) : json_null());
        json_object_set_new(j, "clock", json_string(c->m.host_clock ? "host" : "device"));
        json_array_append_new(cands, j);
    }
    /* Which clock timed the candidates (docs/BENCHMARK.md, "Clocks"). */
    const char *clock_note = bcl_profiling_unusable(d);
    /* "default": the untuned default timed beside the K sweep
     * (docs/PERFORMANCE.md). */
    json_t *root = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i}, s:s, s:I, s:o, s:o, s:f, s:o,"
        " s:s, s:s?, s:o}",
        "format", BCL_TUNED_FORMAT, "model", bcl_model_key(m), "device", "key", key, "type",
        bcl_device_type_name(d->type), "platform", d->platform_name, "platform_version",
        d->platform_version, "name", d->name, "vendor", d->vendor, "version", d->version, "driver",
        d->driver, "address_bits", (int)d->address_bits, "date", r->best.date, "balls",
        (json_int_t)r->best.balls, "single", entry_json(m, false, &r->best.single), "fused",
        entry_json(m, true, &r->best.fused), "auto_us_per_step", r->auto_us, "candidates", cands,
        "clock", clock_note ? "host" : "device", "clock_note", clock_note, "default",
        r->default_us > 0
            ? json_pack("{s:f, s:f, s:b}", "us_per_step", r->default_us, "within_percent",
                        r->default_within * 100, "kept", r->default_kept)
            : json_null());
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
    char *text = NULL;
    size_t len = 0;
    int err = bcl_read_fd(fd, BCL_MAX_TUNED_BYTES, &text, &len);
    close(fd);
    if (err) {
        snprintf(x->problem, sizeof x->problem, "cannot read: %s",
                 err == EFBIG ? "larger than 16 MiB" : bcl_read_error(err));
        return;
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    free(text);
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
    else if (strcmp(format, BCL_TUNED_FORMAT) != 0)
        snprintf(x->problem, sizeof x->problem, "format '%.40s', expected '%s'", format,
                 BCL_TUNED_FORMAT);
    else if (bcl_tuned_entry_parse(single, "single", name, false, &x->tuned.single, &e) != BCL_OK ||
             bcl_tuned_entry_parse(fused, "fused", name, true, &x->tuned.fused, &e) != BCL_OK)
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

static bool take_tuned(const char *dir, const char *name, void *row)
{
    size_t len = strlen(name);
    /* <model>-<key>.json; temporaries of an interrupted write are not. */
    if (len < 6 || strcmp(name + len - 5, ".json") != 0 || name[0] == '.')
        return false;
    describe_tuned(dir, name, row);
    return true;
}

int bcl_tuned_list(const char *cache_dir, bcl_tuned_file_info **files, size_t *count, bcl_error *e)
{
    *files = NULL;
    *count = 0;
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s/tuned", cache_dir) >= (int)sizeof dir)
        return bcl_fail(e, BCL_EXIT_INPUT, "cache folder path is too long");
    void *rows;
    int rc =
        bcl_list_dir(dir, "folder", sizeof **files, take_tuned, by_tuned_file, &rows, count, e);
    *files = rows;
    return rc;
}
