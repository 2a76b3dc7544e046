/*
 * ballcl cache [list|clear|path]: inspect the binary cache (docs/cache.md). The
 * folder is shared with the tuner's files (tuned/<model>-<key>.json): list
 * shows both, clear removes program entries only, and says so.
 */
#include "options.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void help(void)
{
    printf("usage: ballcl cache [list|clear|path] [--json]\n\n"
           "The binary cache keeps each kernel program built for a device, so later runs\n"
           "skip the compiler. Its folder is $BALLCL_CACHE_DIR, else $XDG_CACHE_HOME/ballcl,\n"
           "else ~/.cache/ballcl.\n\n"
           "  list       every program entry: key, device, size, age, and whether it checks\n"
           "             out; then every tuned configuration 'ballcl tune' stored (tuned/):\n"
           "             model, device, date and its best k-step launch (default)\n"
           "  clear      remove the program entries (and temporaries that interrupted\n"
           "             writes left); tuned configurations (tuned/) are kept\n"
           "  path       print the folder\n"
           "  --json     list as one JSON object\n"
           "  -h, --help this help\n");
}

static void format_size(uint64_t bytes, char *out, size_t size)
{
    if (bytes < 1024)
        snprintf(out, size, "%llu B", (unsigned long long)bytes);
    else if (bytes < 1024 * 1024)
        snprintf(out, size, "%.1f KiB", (double)bytes / 1024);
    else
        snprintf(out, size, "%.1f MiB", (double)bytes / (1024 * 1024));
}

static void format_age(int64_t seconds, char *out, size_t size)
{
    if (seconds < 0)
        seconds = 0;
    if (seconds < 120)
        snprintf(out, size, "%lld s", (long long)seconds);
    else if (seconds < 2 * 3600)
        snprintf(out, size, "%lld min", (long long)(seconds / 60));
    else if (seconds < 2 * 86400)
        snprintf(out, size, "%lld h", (long long)(seconds / 3600));
    else
        snprintf(out, size, "%lld d", (long long)(seconds / 86400));
}

static const char *best_text(const bcl_tuned_file_info *x, char *out, size_t size)
{
    const bcl_tuned_entry *t = x->tuned.fused.found ? &x->tuned.fused : &x->tuned.single;
    return x->valid && t->found ? cli_tuned_text(t, out, size) : "-";
}

static json_t *tuned_entry_json(const bcl_tuned_entry *t)
{
    if (!t->found)
        return json_null();
    return json_pack("{s:s, s:o, s:I, s:f}", "variant", t->variant, "local",
                     cli_local_json(t->local), "steps_per_launch", (json_int_t)t->steps_per_launch,
                     "us_per_step", t->us_per_step);
}

static json_t *tuned_json(const bcl_tuned_file_info *tf, size_t n, int64_t now)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const bcl_tuned_file_info *x = &tf[i];
        json_array_append_new(
            arr, json_pack("{s:s, s:s?, s:s?, s:s?, s:s?, s:I, s:o, s:o, s:I, s:I, s:b, s:s?}",
                           "file", x->file, "model", x->valid ? x->model : NULL, "device",
                           x->valid ? x->device : NULL, "platform", x->valid ? x->platform : NULL,
                           "date", x->valid ? x->tuned.date : NULL, "balls",
                           (json_int_t)x->tuned.balls, "single", tuned_entry_json(&x->tuned.single),
                           "fused", tuned_entry_json(&x->tuned.fused), "bytes",
                           (json_int_t)x->bytes, "age_s", (json_int_t)(now - x->mtime), "valid",
                           x->valid, "problem", x->valid ? NULL : x->problem));
    }
    return arr;
}

static void print_tuned(const char *dir, const bcl_tuned_file_info *tf, size_t n, int64_t now)
{
    if (n == 0) {
        printf("no tuned configurations in %s/tuned ('ballcl tune' stores them)\n", dir);
        return;
    }
    printf("%-7s %-32s  %-28s  %-20s  %-26s %7s  %s\n", "TUNED", "DEVICE", "PLATFORM", "DATE",
           "BEST (K-STEP)", "AGE", "STATE");
    for (size_t i = 0; i < n; i++) {
        const bcl_tuned_file_info *x = &tf[i];
        char dev[40], plat[40], best[64], age[32];
        cli_field(x->valid ? x->device : "?", 32, dev, sizeof dev);
        cli_field(x->valid ? x->platform : "?", 28, plat, sizeof plat);
        format_age(now - x->mtime, age, sizeof age);
        /* What the files say reaches the terminal escaped. */
        printf("%-7s %s  %s  %-20s  %-26s %7s  %s%s\n", cli_shown(x->valid ? x->model : "?"), dev,
               plat, cli_shown(x->valid ? x->tuned.date : "?"),
               cli_shown(best_text(x, best, sizeof best)), age,
               x->valid ? "ok" : "bad: ", cli_shown(x->problem));
    }
    printf("%zu tuned configuration%s in %s/tuned ('ballcl tune --show -d SEL' prints one)\n", n,
           n == 1 ? "" : "s", dir);
}

static void print_entries(const char *dir, const bcl_cache_entry_info *ent, size_t n,
                          uint64_t total, int64_t now)
{
    printf("%-16s  %-32s  %-28s  %-10s %9s %7s  %s\n", "KEY", "DEVICE", "PLATFORM", "SOURCE",
           "SIZE", "AGE", "STATE");
    for (size_t i = 0; i < n; i++) {
        const bcl_cache_entry_info *x = &ent[i];
        char sz[32], age[32];
        format_size(x->bytes, sz, sizeof sz);
        format_age(now - x->mtime, age, sizeof age);
        char dev[40], plat[40];
        cli_field(x->valid ? x->device : "?", 32, dev, sizeof dev);
        cli_field(x->valid ? x->platform : "?", 28, plat, sizeof plat);
        printf("%-16.16s  %s  %s  %-10.10s %9s %7s  %s%s\n", cli_shown(x->key), dev, plat,
               cli_shown(x->valid ? x->source : "?"), sz, age,
               x->valid ? "ok" : "bad: ", cli_shown(x->problem));
    }
    char sz[32];
    format_size(total, sz, sizeof sz);
    printf("%zu entr%s, %s, in %s\n", n, n == 1 ? "y" : "ies", sz, dir);
}

static int list(const char *dir, bool as_json)
{
    bcl_error e = {0};
    bcl_cache_entry_info *ent;
    bcl_tuned_file_info *tf;
    size_t n, ntf;
    if (bcl_cache_list(dir, &ent, &n, &e))
        return cli_report(&e);
    if (bcl_tuned_list(dir, &tf, &ntf, &e)) {
        free(ent);
        return cli_report(&e);
    }
    int64_t now = (int64_t)time(NULL);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += ent[i].bytes;
    if (as_json) {
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++) {
            const bcl_cache_entry_info *x = &ent[i];
            json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:b, s:s?}",
                                                 "key", x->key, "file", x->file, "device",
                                                 x->device, "platform", x->platform, "source",
                                                 x->source, "bytes", (json_int_t)x->bytes, "age_s",
                                                 (json_int_t)(now - x->mtime), "valid", x->valid,
                                                 "problem", x->valid ? NULL : x->problem));
        }
        json_t *root =
            json_pack("{s:s, s:I, s:I, s:o, s:o}", "folder", dir, "count", (json_int_t)n, "bytes",
                      (json_int_t)total, "entries", arr, "tuned", tuned_json(tf, ntf, now));
        cli_print_json(root);
        json_decref(root);
    } else {
        if (n == 0)
            printf("no cache entries in %s\n", dir);
        else
            print_entries(dir, ent, n, total, now);
        printf("\n");
        print_tuned(dir, tf, ntf, now);
    }
    free(ent);
    free(tf);
    return 0;
}

static int clear(const char *dir)
{
    bcl_error e = {0};
    size_t entries = 0, temps = 0;
    uint64_t bytes = 0;
    if (bcl_cache_clear(dir, &entries, &bytes, &temps, &e))
        return cli_report(&e);
    char sz[32];
    format_size(bytes, sz, sizeof sz);
    printf("removed %zu cache entr%s (%s) from %s", entries, entries == 1 ? "y" : "ies", sz, dir);
    if (temps)
        printf(", and %zu temporar%s left by interrupted writes", temps, temps == 1 ? "y" : "ies");
    printf("; other files there (tuned configurations, tuned/) are kept\n");
    return 0;
}

int cmd_cache(int argc, char **argv)
{
    bcl_error e = {0};
    cli_options o;
    int rc = cli_options_only(&o, "cache", help, CLI_JSON, argc, argv, &e);
    if (rc)
        return cli_report(&e);
    const char *action = optind < argc && !o.help ? argv[optind++] : "list";
    if ((rc = cli_options_finish(&o, argc, argv, &e)))
        return rc < 0 ? 0 : cli_report(&e);
    bool as_json = o.json;
    if (strcmp(action, "list") != 0 && strcmp(action, "clear") != 0 && strcmp(action, "path") != 0)
        return cli_usage_error("cache", "unknown action '%s': expected list, clear or path",
                               action);
    if (as_json && strcmp(action, "list") != 0)
        return cli_usage_error("cache", "--json goes with list only");
    char dir[4096];
    if (bcl_cache_dir(dir, sizeof dir, &e))
        return cli_report(&e);
    if (strcmp(action, "path") == 0) {
        printf("%s\n", dir);
        return 0;
    }
    return strcmp(action, "list") == 0 ? list(dir, as_json) : clear(dir);
}
