/*
 * Reading the tuned file (src/measure/tuned.c writes and lists it; format
 * in docs/BENCHMARK.md) for a plan: bcl_plan_resolve takes K, variant and
 * local size from it. Here, below the measuring code, because every run
 * reads it and none measures to do so; the context keeps what was read
 * (bcl_context_tuned_memo) and this file fills it once.
 */
#include "files/files.h"
#include "cache/cache.h"
#include "models/models.h"
#include "run/run.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int bcl_cache_file_path(const char *cache_dir, const char *folder, const char *what,
                        const bcl_device_info *d, const bcl_model *m, char *out, size_t size,
                        bcl_error *e)
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
    int w = snprintf(out, size, "%s/%s/%s-%s.json", dir, folder, bcl_model_key(m), key);
    if (w < 0 || (size_t)w >= size)
        return bcl_fail(e, BCL_EXIT_INPUT, "%s path is too long", what);
    return BCL_OK;
}

/* The operations a compute unit can issue per cycle, with room to spare:
 * twice the widest known today (an H100/H200 SM and an AMD CDNA3 compute
 * unit issue 128 float32 operations per cycle, an AVX-512 core 32). No
 * measured bound (bench's and survey's add-rate and copy bounds): a run
 * reading its tuned file must not pay for one. */
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

int bcl_tuned_entry_parse(json_t *j, const char *what, const char *path, bool fused,
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
    return bcl_cache_file_path(NULL, "tuned", "tuned file", d, m, out, size, e);
}

/* bcl_tuned_load from the cache folder cache_dir (NULL: bcl_cache_dir's),
 * for a context given its own folder. */
static int tuned_load_in(const char *cache_dir, const bcl_device_info *d, const bcl_model *m,
                         bcl_tuned *t, bcl_error *e)
{
    memset(t, 0, sizeof *t);
    char path[4096], key[33];
    int rc = bcl_cache_file_path(cache_dir, "tuned", "tuned file", d, m, path, sizeof path, e);
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
    /* Bounded, as every whole-file read: a tuned file lists a few hundred
     * candidates at most. */
    char *text = NULL;
    size_t len = 0;
    int err = bcl_read_fd(fd, BCL_MAX_TUNED_BYTES, &text, &len);
    close(fd);
    if (err == EFBIG)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "tuned file '%s' is larger than %llu MiB: expected a file 'ballcl tune' "
                        "wrote",
                        path, (unsigned long long)(BCL_MAX_TUNED_BYTES >> 20));
    if (err)
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot read tuned file '%s': %s", path,
                        bcl_read_error(err));
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    free(text);
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
    else if (strcmp(format, BCL_TUNED_FORMAT) != 0)
        rc = bcl_fail(e, BCL_EXIT_INPUT, "tuned file '%s': format '%s', expected '%s'", path,
                      format, BCL_TUNED_FORMAT);
    else if (strcmp(model, bcl_model_key(m)) != 0 || strcmp(dkey, key) != 0)
        rc = bcl_fail(e, BCL_EXIT_INPUT,
                      "tuned file '%s' belongs to model '%s' on device key %s, expected '%s' on %s",
                      path, model, dkey, bcl_model_key(m), key);
    if (rc == BCL_OK)
        rc = bcl_tuned_entry_parse(single, "single", path, false, &t->single, e);
    if (rc == BCL_OK)
        rc = bcl_tuned_entry_parse(fused, "fused", path, true, &t->fused, e);
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

int bcl_tuned_load(const bcl_device_info *d, const bcl_model *m, bcl_tuned *t, bcl_error *e)
{
    return tuned_load_in(NULL, d, m, t, e);
}

/* Forgets every entry of t whose variant the kernels of c's model do not
 * define (a tuned file from other kernels): the default rule then
 * decides. warning gets a line naming the file, or "" when all is well. */
static void tuned_check(bcl_context *c, bcl_tuned *t, char *warning, size_t size)
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

const bcl_tuned *bcl_context_tuned(bcl_context *c, const char **problem)
{
    bcl_tuned_memo *m = bcl_context_tuned_memo(c);
    if (!m->read) {
        bcl_error e = {0};
        /* An unreadable file counts as nothing tuned; the problem is kept
         * for the caller to show. */
        if (tuned_load_in(bcl_context_cache_dir(c), bcl_context_device(c), bcl_context_model(c),
                          &m->tuned, &e) != BCL_OK)
            snprintf(m->problem, sizeof m->problem, "%s", e.msg);
        else /* a variant the kernels lack: the rule decides, and says so */
            tuned_check(c, &m->tuned, m->problem, sizeof m->problem);
        /* A damaged entry (dropped while reading) is said too. */
        if (!m->problem[0] && m->tuned.damaged[0])
            snprintf(m->problem, sizeof m->problem, "%s", m->tuned.damaged);
        bcl_error_clear(&e);
        m->read = true;
    }
    if (problem)
        *problem = m->problem[0] ? m->problem : NULL;
    return &m->tuned;
}
