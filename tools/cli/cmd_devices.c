/* ballcl devices: every platform and device, with the selector to use. */
#include "cli.h"

#include <string.h>

static void help(void)
{
    printf("usage: ballcl devices [--json]\n\n"
           "Lists every OpenCL platform and device. The first column is the selector\n"
           "for -d/--device; a type (gpu, cpu, accelerator) or a part of the device or\n"
           "platform name also selects.\n\n"
           "  --json     one JSON object on stdout\n"
           "  -h, --help this help\n");
}

static json_t *device_json(const bcl_device_info *d)
{
    char sel[32];
    snprintf(sel, sizeof sel, "%u:%u", d->platform_index, d->device_index);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:s, s:s, s:s, s:I}", "selector",
                     sel, "platform", d->platform_name, "name", d->name, "vendor", d->vendor,
                     "type", bcl_device_type_name(d->type), "compute_units",
                     (json_int_t)d->compute_units, "global_mem_bytes", (json_int_t)d->global_mem,
                     "max_alloc_bytes", (json_int_t)d->max_alloc, "version", d->version,
                     "opencl_c_version", d->c_version, "driver", d->driver, "max_work_group",
                     (json_int_t)d->max_work_group);
}

int cmd_devices(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    bool as_json = false;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            as_json = true;
            break;
        case 'h':
            help();
            return 0;
        default:
            return cli_usage_error("devices", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("devices", "unexpected argument '%s'", argv[optind]);
    bcl_error e = {0};
    bcl_device_list list;
    if (cli_enumerate(&list, &e))
        return cli_report(&e);
    if (as_json) {
        json_t *arr = json_array();
        for (size_t i = 0; i < list.count; i++)
            json_array_append_new(arr, device_json(&list.dev[i]));
        json_t *root = json_pack("{s:o}", "devices", arr);
        cli_print_json(root);
        json_decref(root);
    } else {
        printf("%-5s %-4s %4s %10s  %-32s %-26s %-16s %s\n", "SEL", "TYPE", "CUs", "MEMORY",
               "DEVICE", "PLATFORM", "OPENCL", "DRIVER");
        for (size_t i = 0; i < list.count; i++) {
            const bcl_device_info *d = &list.dev[i];
            char sel[32], mem[32];
            snprintf(sel, sizeof sel, "%u:%u", d->platform_index, d->device_index);
            snprintf(mem, sizeof mem, "%.1f GiB", (double)d->global_mem / (1u << 30));
            printf("%-5s %-4s %4u %10s  %-32.32s %-26.26s %-16.16s %s\n", sel,
                   bcl_device_type_name(d->type), d->compute_units, mem, d->name, d->platform_name,
                   d->version, d->driver);
        }
    }
    bcl_devices_free(&list);
    return 0;
}
