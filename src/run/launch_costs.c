/*
 * What the K rule (k_rule.c) needs to know of a device for one model: the
 * fixed cost of a launch, of loading and storing a ball, and of a step,
 * underfilled and full (docs/PERFORMANCE.md, "Steps per launch"). Measured
 * once by plan.c (which resolves the plans the measurement runs: a call back
 * into the plan from here would make a circle) and kept here, in
 * <cache>/launch/<model>-<device key>.json under the tuned files' device
 * key, so that repeated runs get the same plan.
 */
#include "files/files.h"
#include "cache/cache.h"
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
/* Whether the cache folder above <cache>/launch may be used: refused
 * (docs/cache.md), nothing is read from or written under it, and nothing
 * more is said (the binary cache says it once). */
static bool cache_folder_usable(const char *path)
{
    char dir[4096 + 64], why[4096 + 160];
    snprintf(dir, sizeof dir, "%s", path);
    for (int up = 0; up < 2; up++) { /* <cache>/launch, then <cache> */
        char *slash = strrchr(dir, '/');
        if (!slash)
            return false;
        *slash = '\0';
    }
    struct stat st;
    if (stat(dir, &st) != 0)
        return true; /* not there yet: made with the right mode when kept */
    return bcl_cache_folder_ok(dir, why, sizeof why);
}

/* <cache>/launch/<model>-<key>.json */
static int costs_path(bcl_context *c, char *out, size_t size, bcl_error *e)
{
    return bcl_cache_file_path(bcl_context_cache_dir(c), "launch", "launch costs",
                               bcl_context_device(c), bcl_context_model(c), out, size, e);
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
    json_int_t fill = 0;
    bool ok = root &&
              json_unpack(root, "{s:s, s:s, s:F, s:F, s:F, s:F, s:I}", "format", &format, "model",
                          &model, "launch_us", &k->launch_us, "io_ns_per_ball", &k->io_ns_per_ball,
                          "step_ns_per_ball", &k->step_ns_per_ball, "step_floor_us",
                          &k->step_floor_us, "fill_balls", &fill) == 0 &&
              strcmp(format, COSTS_FORMAT) == 0 && strcmp(model, bcl_context_model(c)->name) == 0 &&
              figure_ok(k->launch_us) && figure_ok(k->io_ns_per_ball) &&
              figure_ok(k->step_ns_per_ball) && k->step_ns_per_ball > 0 &&
              figure_ok(k->step_floor_us) && fill > 0;
    json_decref(root);
    k->fill_balls = ok ? (size_t)fill : 0;
    if (!ok)
        snprintf(why, size, "'%.150s' is not a launch costs file of this model", path);
    return ok;
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

bool bcl_launch_costs_read(bcl_context *c, bcl_launch_costs *k, bool *keep)
{
    memset(k, 0, sizeof *k);
    char path[4096 + 64];
    bcl_error pe = {0};
    bool have_path = bcl_context_uses_cache(c) && costs_path(c, path, sizeof path, &pe) == BCL_OK;
    if (!bcl_context_uses_cache(c))
        snprintf(k->note, sizeof k->note, "not kept: the cache is off");
    else if (!have_path)
        snprintf(k->note, sizeof k->note, "%.190s", pe.msg);
    else if (!cache_folder_usable(path)) {
        have_path = false;
        snprintf(k->note, sizeof k->note, "not kept: the cache folder is not used");
    }
    bcl_error_clear(&pe);
    bool loaded = have_path && costs_load(c, path, k, k->note, sizeof k->note);
    /* A file that is there but cannot be used is said (and replaced). */
    k->warn = have_path && k->note[0];
    if (loaded) {
        k->known = true;
        k->source = "stored";
    }
    *keep = have_path;
    return loaded;
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
