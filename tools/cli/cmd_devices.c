/* ballcl devices: every platform and device, with the selector to use and
 * the one a run takes by default; -v and --json give what a user reaches for
 * before choosing (clock, memories, work-group limits, extensions, the
 * floating-point configuration, vector widths, SVM, caches, sub-groups...),
 * the facts a survey records under the same keys (bcl_survey_describe,
 * docs/SURVEY.md), and every platform, those without devices included. */
#include "options.h"

#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("usage: ballcl devices [-v] [--json]\n\n"
           "Lists every OpenCL platform and device. The first column marks with '*' the\n"
           "device a run takes without -d ($BALLCL_DEVICE, else the first GPU,\n"
           "accelerator, CPU); SEL is the selector for -d/--device; a type (gpu, cpu,\n"
           "accelerator) or a part of the device or platform name also selects. Long\n"
           "names are cut at a word with an ellipsis: -v prints them whole.\n\n"
           "  -v, --verbose  every device's properties: clock, memories, work-group and\n"
           "                 work-item limits, preferred work-group multiple, vector\n"
           "                 widths, fp64/fp16 and the floating-point configuration, SVM,\n"
           "                 caches, sub-groups, IL, versions and the extensions; and every\n"
           "                 platform, with the status of one that lists no device\n"
           "  --json         one JSON object on stdout, with all of the above per device\n"
           "                 (\"identity\", \"limits\", \"capabilities\": a survey's keys) and\n"
           "                 \"platforms\"\n"
           "  -h, --help     this help\n");
}

/* Every platform (bcl_survey_platforms), or null when they cannot be
 * listed. */
static json_t *platforms_json(void)
{
    bcl_error e = {0};
    json_t *p = NULL;
    bcl_survey_platforms(&p, &e);
    bcl_error_clear(&e);
    return p ? p : json_null();
}

static const char *yes_no(json_t *v)
{
    return json_is_true(v) ? "yes" : json_is_false(v) ? "no" : "not reported";
}

/* An object of named bits (an fp_config, the SVM capabilities) as
 * "denorm inf_nan round_to_nearest ...", the bits that are set; missing
 * when it is no object, empty when no bit is set. */
static void print_bits(const char *label, json_t *bits, const char *missing, const char *empty)
{
    if (!json_is_object(bits)) {
        printf("  %-22s %s\n", label, missing);
        return;
    }
    printf("  %-22s", label);
    const char *k;
    json_t *v;
    bool any = false;
    json_object_foreach(bits, k, v)
    {
        if (json_is_true(v)) {
            printf(" %s", k);
            any = true;
        }
    }
    printf("%s\n", any ? "" : empty);
}

static void print_widths(const char *label, json_t *w)
{
    printf("  %-22s", label);
    const char *k;
    json_t *v;
    json_object_foreach(w, k, v)
    {
        if (json_is_integer(v))
            printf(" %s %lld", k, (long long)json_integer_value(v));
        else
            printf(" %s ?", k);
    }
    printf("\n");
}

static void print_int(const char *label, json_t *v, const char *unit)
{
    if (json_is_integer(v))
        printf("  %-22s %lld%s\n", label, (long long)json_integer_value(v), unit);
    else
        printf("  %-22s not reported\n", label);
}

/* -v: the capabilities of bcl_survey_describe, one line each. */
static void print_capabilities(const bcl_device_info *d)
{
    json_t *facts = bcl_survey_describe(d);
    if (!facts) {
        printf("  %-22s could not be queried: out of memory\n", "capabilities");
        return;
    }
    json_t *c = json_object_get(facts, "capabilities");
    json_t *fp = json_object_get(c, "fp_config");
    static const char *const types[] = {"float", "double", "half"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        char label[32];
        snprintf(label, sizeof label, "%s config", types[i]);
        print_bits(label, json_object_get(fp, types[i]), "none", " (no bits set)");
    }
    print_widths("preferred vectors", json_object_get(c, "preferred_vector_width"));
    print_widths("native vectors", json_object_get(c, "native_vector_width"));
    print_bits("SVM", json_object_get(c, "svm_capabilities"), "not reported (an OpenCL 2.0 query)",
               " none");
    printf("  %-22s %s\n", "host unified memory",
           yes_no(json_object_get(c, "host_unified_memory")));
    json_t *ct = json_object_get(c, "global_mem_cache_type");
    printf("  %-22s %s, ", "global memory cache",
           json_is_string(ct) ? cli_shown(json_string_value(ct)) : "?");
    json_t *cs = json_object_get(c, "global_mem_cache_size");
    json_t *cl = json_object_get(c, "global_mem_cacheline_size");
    printf("%lld KiB, lines of %lld bytes\n", (long long)json_integer_value(cs) / 1024,
           (long long)json_integer_value(cl));
    print_int("constant buffer", json_object_get(c, "max_constant_buffer_size"), " bytes");
    print_int("profiling resolution", json_object_get(c, "profiling_timer_resolution_ns"), " ns");
    print_int("max sub-groups", json_object_get(c, "max_num_sub_groups"), "");
    json_t *il = json_object_get(c, "il_version");
    printf("  %-22s %s\n", "IL version",
           json_is_string(il) && *json_string_value(il) ? cli_shown(json_string_value(il))
                                                        : "none");
    printf("  %-22s %s\n", "image support", yes_no(json_object_get(c, "image_support")));
    printf("  %-22s %u\n", "address bits", d->address_bits);
    json_decref(facts);
}

/* -v: every platform, with the status and hint of one without devices. */
static void print_platforms(void)
{
    json_t *p = platforms_json();
    size_t i;
    json_t *x;
    printf("\nplatforms:\n");
    json_array_foreach(p, i, x)
    {
        printf("  %lld  %s (%s): %lld device%s",
               (long long)json_integer_value(json_object_get(x, "index")),
               json_string_value(json_object_get(x, "name")),
               json_string_value(json_object_get(x, "version")),
               (long long)json_integer_value(json_object_get(x, "devices")),
               json_integer_value(json_object_get(x, "devices")) == 1 ? "" : "s");
        const char *st = json_string_value(json_object_get(x, "status"));
        if (st && strcmp(st, "CL_SUCCESS") != 0)
            printf(", %s", st);
        json_t *hint = json_object_get(x, "hint");
        if (json_is_string(hint))
            printf(" (%s)", json_string_value(hint));
        printf("\n");
    }
    json_decref(p);
}

static void print_size(const char *label, double bytes)
{
    if (bytes >= (1u << 30))
        printf("  %-22s %.1f GiB\n", label, bytes / (1u << 30));
    else if (bytes >= (1u << 20))
        printf("  %-22s %.1f MiB\n", label, bytes / (1u << 20));
    else
        printf("  %-22s %.1f KiB\n", label, bytes / 1024);
}

/* -v: one block per device, names whole, extensions wrapped. */
static void print_verbose(const bcl_device_info *d, bool is_default, const char *ext)
{
    printf("%s%u:%u  %s\n", is_default ? "* " : "", d->platform_index, d->device_index,
           cli_shown(d->name));
    printf("  %-22s %s (%s)\n", "platform", cli_shown(d->platform_name),
           cli_shown(d->platform_version));
    printf("  %-22s %s\n", "vendor", cli_shown(d->vendor));
    printf("  %-22s %s%s\n", "type", bcl_device_type_name(d->type),
           is_default ? " (the default device)" : "");
    printf("  %-22s %u\n", "compute units", d->compute_units);
    if (d->clock_mhz)
        printf("  %-22s %u MHz\n", "clock", d->clock_mhz);
    else
        printf("  %-22s not reported\n", "clock");
    print_size("global memory", (double)d->global_mem);
    print_size("max allocation", (double)d->max_alloc);
    print_size("local memory", (double)d->local_mem);
    printf("  %-22s %zu\n", "max work-group size", d->max_work_group);
    printf("  %-22s %zu x %zu x %zu\n", "max work-item sizes", d->max_item_sizes[0],
           d->max_item_sizes[1], d->max_item_sizes[2]);
    if (d->preferred_multiple)
        printf("  %-22s %zu\n", "preferred multiple", d->preferred_multiple);
    else
        printf("  %-22s not reported (an OpenCL 3.0 query)\n", "preferred multiple");
    printf("  %-22s %u\n", "native float vector", d->native_vector_width_float);
    printf("  %-22s %s / %s\n", "fp64 / fp16", d->fp64 ? "yes" : "no", d->fp16 ? "yes" : "no");
    printf("  %-22s %s; %s\n", "OpenCL", cli_shown(d->version), cli_shown(d->c_version));
    printf("  %-22s %s\n", "driver", cli_shown(d->driver));
    print_capabilities(d);
    if (!ext) {
        printf("  %-22s could not be queried\n", "extensions");
        return;
    }
    /* The names counted, then wrapped at 100 columns, continuation lines
     * under the first name. */
    const char *ws = " \t\n";
    size_t count = 0, col = 0;
    char label[32], name[1024];
    for (const char *t = ext + strspn(ext, ws); *t; t += strcspn(t, ws), t += strspn(t, ws))
        count++;
    snprintf(label, sizeof label, "extensions (%zu)", count);
    printf("  %-22s", label);
    for (const char *t = ext + strspn(ext, ws); *t; t += strcspn(t, ws), t += strspn(t, ws)) {
        size_t len = strcspn(t, ws);
        if (col && col + 1 + len > 100 - 25) {
            printf("\n  %-22s", "");
            col = 0;
        }
        snprintf(name, sizeof name, "%.*s", (int)len, t);
        printf(" %s", cli_shown(name));
        col += 1 + len;
    }
    printf("\n");
}

/* Whether a run without -d takes a device, *index: BALLCL_DEVICE, else the
 * default rule. False (with a warning) when BALLCL_DEVICE selects nothing:
 * a run would then fail, so no device is marked. */
static bool default_device(const bcl_device_list *list, size_t *index)
{
    bcl_error e = {0};
    bool has = bcl_device_select(list, cli_selector(NULL), index, &e) == BCL_OK;
    if (!has)
        fprintf(stderr, "ballcl: warning: BALLCL_DEVICE: %s\n", e.msg);
    bcl_error_clear(&e);
    return has;
}

int cmd_devices(int argc, char **argv)
{
    static const struct option own[] = {
        {"verbose", no_argument, NULL, 'v'},
        {0},
    };
    bcl_error e = {0};
    cli_options o;
    cli_options_init(&o, "devices", help, CLI_JSON, own, "v");
    bool verbose = false;
    int c, rc = BCL_OK;
    while (rc == BCL_OK && (c = cli_options_next(&o, argc, argv, &rc, &e)) != -1)
        verbose = verbose || c == 'v';
    if (rc || (rc = cli_options_finish(&o, argc, argv, &e)))
        return rc < 0 ? 0 : cli_report(&e);
    bool as_json = o.json;
    bcl_device_list list;
    if (cli_enumerate(&list, &e))
        return cli_report(&e);
    size_t def = 0;
    bool has_def = default_device(&list, &def);
    if (as_json) {
        /* The library's JSON of each device (src/survey/device_json.c), which
         * the Python module's devices() gives too. */
        json_t *arr = json_array();
        for (size_t i = 0; i < list.count; i++) {
            char *text = bcl_device_json(&list.dev[i], has_def && i == def, &e);
            json_t *dev = text ? json_loads(text, 0, NULL) : NULL;
            free(text);
            if (!dev) {
                json_decref(arr);
                bcl_devices_free(&list);
                if (!e.code)
                    bcl_fail(&e, BCL_EXIT_RUNTIME, "out of memory");
                return cli_report(&e);
            }
            json_array_append_new(arr, dev);
        }
        json_t *root = json_pack("{s:o, s:o}", "devices", arr, "platforms", platforms_json());
        cli_print_json(root);
        json_decref(root);
    } else if (verbose) {
        for (size_t i = 0; i < list.count; i++) {
            bcl_error xe = {0};
            char *ext = bcl_device_extensions(&list.dev[i], &xe);
            if (i)
                printf("\n");
            print_verbose(&list.dev[i], has_def && i == def, ext);
            free(ext);
            bcl_error_clear(&xe);
        }
        print_platforms();
    } else {
        printf("  %-5s %-4s %4s %10s  %-32s  %-28s  %-20s  %s\n", "SEL", "TYPE", "CUs", "MEMORY",
               "DEVICE", "PLATFORM", "OPENCL", "DRIVER");
        for (size_t i = 0; i < list.count; i++) {
            const bcl_device_info *d = &list.dev[i];
            char sel[32], mem[32], name[160], plat[160], ver[96];
            snprintf(sel, sizeof sel, "%u:%u", d->platform_index, d->device_index);
            snprintf(mem, sizeof mem, "%.1f GiB", (double)d->global_mem / (1u << 30));
            cli_field(d->name, 32, name, sizeof name);
            cli_field(d->platform_name, 28, plat, sizeof plat);
            cli_field(d->version, 20, ver, sizeof ver);
            printf("%c %-5s %-4s %4u %10s  %s  %s  %s  %s\n", has_def && i == def ? '*' : ' ', sel,
                   bcl_device_type_name(d->type), d->compute_units, mem, name, plat, ver,
                   cli_shown(d->driver));
        }
        if (has_def)
            printf("* the default device: %s\n",
                   cli_selector(NULL)
                       ? "selected by $BALLCL_DEVICE"
                       : "the first GPU, else accelerator, else CPU; -d SEL picks another");
    }
    bcl_devices_free(&list);
    return 0;
}
