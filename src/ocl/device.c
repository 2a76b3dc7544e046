/*
 * Platform and device enumeration, and the device selector of docs/DESIGN.md:
 * "P:D" indices, a device type, or a case-insensitive name substring.
 */
#include "ocl/ocl.h"
#include "ocl/clcall.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void get_string(cl_device_id d, cl_device_info what, char *out, size_t size)
{
    out[0] = '\0';
    size_t got = 0;
    if (BCL_CL(clGetDeviceInfo, d, what, size - 1, out, &got) != CL_SUCCESS)
        strcpy(out, "?");
    out[size - 1] = '\0';
    /* Some drivers pad names with spaces. */
    for (size_t n = strlen(out); n > 0 && isspace((unsigned char)out[n - 1]); n--)
        out[n - 1] = '\0';
}

/* Queries that fail leave the field zero: enumeration must not die on a
 * driver that lacks one query. */
static void get_value(cl_device_id d, cl_device_info what, void *out, size_t size)
{
    if (BCL_CL(clGetDeviceInfo, d, what, size, out, NULL) != CL_SUCCESS)
        memset(out, 0, size);
}

static void fill_info(bcl_device_info *di)
{
    cl_device_id d = di->device;
    BCL_CL(clGetPlatformInfo, di->platform, CL_PLATFORM_NAME, sizeof di->platform_name - 1,
           di->platform_name, NULL);
    BCL_CL(clGetPlatformInfo, di->platform, CL_PLATFORM_VERSION, sizeof di->platform_version - 1,
           di->platform_version, NULL);
    get_string(d, CL_DEVICE_NAME, di->name, sizeof di->name);
    get_string(d, CL_DEVICE_VENDOR, di->vendor, sizeof di->vendor);
    get_string(d, CL_DEVICE_VERSION, di->version, sizeof di->version);
    get_string(d, CL_DRIVER_VERSION, di->driver, sizeof di->driver);
    get_string(d, CL_DEVICE_OPENCL_C_VERSION, di->c_version, sizeof di->c_version);
    get_value(d, CL_DEVICE_TYPE, &di->type, sizeof di->type);
    get_value(d, CL_DEVICE_MAX_COMPUTE_UNITS, &di->compute_units, sizeof di->compute_units);
    get_value(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, &di->clock_mhz, sizeof di->clock_mhz);
    get_value(d, CL_DEVICE_ADDRESS_BITS, &di->address_bits, sizeof di->address_bits);
    get_value(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, &di->max_work_group, sizeof di->max_work_group);
    get_value(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, di->max_item_sizes, sizeof di->max_item_sizes);
    get_value(d, CL_DEVICE_GLOBAL_MEM_SIZE, &di->global_mem, sizeof di->global_mem);
    get_value(d, CL_DEVICE_LOCAL_MEM_SIZE, &di->local_mem, sizeof di->local_mem);
    get_value(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, &di->max_alloc, sizeof di->max_alloc);
    get_value(d, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, &di->native_vector_width_float,
              sizeof di->native_vector_width_float);
    /* An OpenCL 3.0 query, asked of 3.0 platforms only (docs/IMPLEMENTATIONS.md);
     * the 1.2 path leaves it 0 and the kernel's own multiple is used. */
    if (bcl_opencl_version(di) >= 30)
        get_value(d, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, &di->preferred_multiple,
                  sizeof di->preferred_multiple);
    cl_device_fp_config fp = 0;
    get_value(d, CL_DEVICE_DOUBLE_FP_CONFIG, &fp, sizeof fp);
    di->fp64 = fp != 0;
    get_value(d, CL_DEVICE_SINGLE_FP_CONFIG, &di->single_fp_config, sizeof di->single_fp_config);
    char ext[8192];
    get_string(d, CL_DEVICE_EXTENSIONS, ext, sizeof ext);
    di->fp16 = strstr(ext, "cl_khr_fp16") != NULL;
}

/* A warning for a platform whose clGetDeviceIDs failed with st; the first
 * such failure (*failed, failed_name) is the error when no device is found. */
static void platform_warning(bcl_device_list *list, cl_platform_id p, cl_int st, cl_int *failed,
                             char failed_name[128])
{
    char name[128] = "";
    if (BCL_CL(clGetPlatformInfo, p, CL_PLATFORM_NAME, 127, name, NULL) != CL_SUCCESS)
        strcpy(name, "?");
    size_t used = strlen(list->warnings);
    snprintf(list->warnings + used, sizeof list->warnings - used,
             "%sclGetDeviceIDs failed on platform '%s': %s; its devices are left out",
             used ? "\n" : "", name, bcl_cl_status_text(st));
    if (*failed == CL_SUCCESS) {
        *failed = st;
        snprintf(failed_name, 128, "%s", name);
    }
}

int bcl_devices_enumerate(bcl_device_list *list, bcl_error *e)
{
    memset(list, 0, sizeof *list);
    cl_uint np = 0;
    cl_int st = BCL_CL(clGetPlatformIDs, 0, NULL, &np);
    /* Only "none found" means no platform; other statuses are what they are. */
    if (st == -1001 /* CL_PLATFORM_NOT_FOUND_KHR, from the ICD loader */ ||
        (st == CL_SUCCESS && np == 0))
        return bcl_fail(e, BCL_EXIT_RUNTIME,
                        "no OpenCL platform found: install a driver, e.g. Debian's "
                        "pocl-opencl-icd for CPUs, or your GPU vendor's OpenCL driver");
    if (st != CL_SUCCESS)
        return bcl_cl_fail(e, st, "clGetPlatformIDs", NULL);
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    st = BCL_CL(clGetPlatformIDs, np, plats, NULL);
    if (st != CL_SUCCESS) {
        free(plats);
        return bcl_cl_fail(e, st, "clGetPlatformIDs", NULL);
    }
    int rc = BCL_OK;
    cl_int query_failed = CL_SUCCESS;
    char failed_platform[128] = "";
    for (cl_uint p = 0; p < np && rc == BCL_OK; p++) {
        cl_uint nd = 0;
        st = BCL_CL(clGetDeviceIDs, plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
        if (st == CL_DEVICE_NOT_FOUND || (st == CL_SUCCESS && nd == 0))
            continue; /* a platform without devices is listed by nobody */
        if (st != CL_SUCCESS) {
            /* One broken platform must not hide the others' devices. */
            platform_warning(list, plats[p], st, &query_failed, failed_platform);
            continue;
        }
        cl_device_id *ids = calloc(nd, sizeof *ids);
        bcl_device_info *grown = realloc(list->dev, (list->count + nd) * sizeof *grown);
        if (grown)
            list->dev = grown;
        if (!ids || !grown) {
            free(ids);
            rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
            break;
        }
        st = BCL_CL(clGetDeviceIDs, plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL);
        if (st != CL_SUCCESS) {
            free(ids);
            platform_warning(list, plats[p], st, &query_failed, failed_platform);
            continue;
        }
        for (cl_uint d = 0; d < nd; d++) {
            bcl_device_info *di = &list->dev[list->count++];
            memset(di, 0, sizeof *di);
            di->platform = plats[p];
            di->device = ids[d];
            di->platform_index = p;
            di->device_index = d;
            fill_info(di);
        }
        free(ids);
    }
    free(plats);
    if (rc == BCL_OK && list->count == 0 && query_failed != CL_SUCCESS)
        rc = bcl_cl_fail(e, query_failed, "clGetDeviceIDs", failed_platform);
    if (rc == BCL_OK && list->count == 0)
        rc = bcl_fail(e, BCL_EXIT_RUNTIME,
                      "no OpenCL device found: the installed platforms have no devices");
    if (rc != BCL_OK)
        bcl_devices_free(list);
    return rc;
}

char *bcl_device_extensions(const bcl_device_info *d, bcl_error *e)
{
    size_t size = 0;
    cl_int st = BCL_CL(clGetDeviceInfo, d->device, CL_DEVICE_EXTENSIONS, 0, NULL, &size);
    char *ext = st == CL_SUCCESS ? malloc(size + 1) : NULL;
    if (st == CL_SUCCESS && !ext) {
        bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
        return NULL;
    }
    if (st == CL_SUCCESS)
        st = BCL_CL(clGetDeviceInfo, d->device, CL_DEVICE_EXTENSIONS, size, ext, NULL);
    if (st != CL_SUCCESS) {
        free(ext);
        bcl_cl_fail(e, st, "clGetDeviceInfo(CL_DEVICE_EXTENSIONS)", d->name);
        return NULL;
    }
    ext[size] = '\0';
    return ext;
}

void bcl_devices_free(bcl_device_list *list)
{
    free(list->dev);
    list->dev = NULL;
    list->count = 0;
}

/* The device types by name, in the default's order (docs/DESIGN.md: the
 * first GPU, else accelerator, else CPU); the first three are selectors. */
static const struct {
    const char *word;
    cl_device_type type;
} kinds[] = {{"gpu", CL_DEVICE_TYPE_GPU},
             {"accelerator", CL_DEVICE_TYPE_ACCELERATOR},
             {"cpu", CL_DEVICE_TYPE_CPU},
             {"custom", CL_DEVICE_TYPE_CUSTOM}};
#define SELECTOR_KINDS 3

const char *bcl_device_type_name(uint64_t t)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (t & kinds[i].type)
            return kinds[i].word;
    return "other";
}

static bool all_digits(const char *s, size_t len)
{
    if (len == 0 || len > 6)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

int bcl_selector_parse(const char *text, bcl_selector *sel, bcl_error *e)
{
    memset(sel, 0, sizeof *sel);
    if (!text) {
        sel->kind = BCL_SEL_DEFAULT;
        return BCL_OK;
    }
    /* -d '' is a mistake (an unset shell variable), not the default, which
     * would also override BALLCL_DEVICE silently. */
    if (!*text)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "device selector '' is empty: expected P:D, gpu, cpu, accelerator or part "
                        "of a device name (leave -d out for the default)");
    for (size_t i = 0; i < SELECTOR_KINDS; i++) {
        if (strcasecmp(text, kinds[i].word) == 0) {
            sel->kind = BCL_SEL_TYPE;
            sel->type = kinds[i].type;
            return BCL_OK;
        }
    }
    const char *colon = strchr(text, ':');
    if (colon && all_digits(text, (size_t)(colon - text)) &&
        all_digits(colon + 1, strlen(colon + 1))) {
        sel->kind = BCL_SEL_INDEX;
        sel->platform = (unsigned)strtoul(text, NULL, 10);
        sel->device = (unsigned)strtoul(colon + 1, NULL, 10);
        return BCL_OK;
    }
    if (colon && all_digits(text, (size_t)(colon - text)))
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "device selector '%s': expected P:D with two indices, as 'ballcl "
                        "devices' prints them",
                        text);
    if (strlen(text) >= sizeof sel->name)
        return bcl_fail(e, BCL_EXIT_INPUT, "device selector '%.40s...': too long", text);
    sel->kind = BCL_SEL_NAME;
    strcpy(sel->name, text);
    return BCL_OK;
}

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return true;
    return n == 0;
}

static bool matches(const bcl_selector *sel, const bcl_device_info *d)
{
    switch (sel->kind) {
    case BCL_SEL_INDEX:
        return d->platform_index == sel->platform && d->device_index == sel->device;
    case BCL_SEL_TYPE:
        return (d->type & sel->type) != 0;
    case BCL_SEL_NAME:
        /* The versions carry the short name ("PoCL") a long name may not. */
        return contains_nocase(d->name, sel->name) ||
               contains_nocase(d->platform_name, sel->name) ||
               contains_nocase(d->vendor, sel->name) ||
               contains_nocase(d->platform_version, sel->name) ||
               contains_nocase(d->version, sel->name);
    default:
        return true;
    }
}

static void list_candidates(char *out, size_t size, const bcl_device_list *list,
                            const bcl_selector *sel, bool only_matching)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < list->count && used + 1 < size; i++) {
        const bcl_device_info *d = &list->dev[i];
        if (only_matching && !matches(sel, d))
            continue;
        int w = snprintf(out + used, size - used, "%s%u:%u %s", used ? ", " : "", d->platform_index,
                         d->device_index, d->name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

int bcl_selector_match(const bcl_selector *sel, const bcl_device_list *list, size_t *index,
                       bcl_error *e)
{
    if (sel->kind == BCL_SEL_DEFAULT) {
        for (size_t o = 0; o < SELECTOR_KINDS; o++) {
            for (size_t i = 0; i < list->count; i++) {
                if (list->dev[i].type & kinds[o].type) {
                    *index = i;
                    return BCL_OK;
                }
            }
        }
        if (list->count) {
            *index = 0;
            return BCL_OK;
        }
        return bcl_fail(e, BCL_EXIT_RUNTIME, "no OpenCL device found");
    }
    size_t found = 0, first = 0;
    for (size_t i = 0; i < list->count; i++) {
        if (matches(sel, &list->dev[i])) {
            if (found++ == 0)
                first = i;
        }
    }
    char cands[700];
    char given[300];
    if (sel->kind == BCL_SEL_INDEX)
        snprintf(given, sizeof given, "%u:%u", sel->platform, sel->device);
    else if (sel->kind == BCL_SEL_TYPE)
        snprintf(given, sizeof given, "%s", bcl_device_type_name(sel->type));
    else
        snprintf(given, sizeof given, "%s", sel->name);
    if (found == 0) {
        list_candidates(cands, sizeof cands, list, sel, false);
        return bcl_fail(e, BCL_EXIT_INPUT, "no device matches '%s': candidates are %s", given,
                        cands);
    }
    /* A type selects the first device of that type, as "gpu" means "a GPU";
     * a name that matches several devices is ambiguous. */
    if (found > 1 && sel->kind == BCL_SEL_NAME) {
        list_candidates(cands, sizeof cands, list, sel, true);
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "device selector '%s' is ambiguous: it matches %s; use P:D", given, cands);
    }
    *index = first;
    return BCL_OK;
}

int bcl_device_select(const bcl_device_list *list, const char *selector, size_t *index,
                      bcl_error *e)
{
    bcl_selector sel;
    int rc = bcl_selector_parse(selector, &sel, e);
    return rc || !list ? rc : bcl_selector_match(&sel, list, index, e);
}
