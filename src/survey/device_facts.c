/*
 * A device's facts beyond its identity and limits (survey_info.c): the
 * floating-point configuration (it decides whether results can be
 * bit-exact), SVM, caches, vector widths, sub-groups...; where it is; and
 * every platform, with a hint for drivers known to need a setting. `ballcl
 * devices` and the survey show them under the same keys (docs/SURVEY.md).
 * A query the driver refuses, lacks or is too old for (an OpenCL 1.2 driver
 * may crash on a later one) leaves its key null, never hiding the others.
 */
#include "ocl/clcall.h"
#include "ocl/ocl.h"
#include "survey/survey.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bits of a bitfield (a clinfo number) as an object of names (bit[i]
 * the bit of name[i]); null when the query failed, or gave 0 and zero is
 * none (an fp_config: the device has no such type). */
static json_t *named_bits(json_t *v, const char *const *name, const unsigned *bit, size_t n,
                          bool zero_is_none)
{
    json_int_t x = json_integer_value(v);
    json_t *o = json_is_integer(v) && (x || !zero_is_none) ? json_object() : NULL;
    for (size_t i = 0; o && i < n; i++)
        json_object_set_new(o, name[i], json_boolean((x >> bit[i]) & 1));
    json_decref(v);
    return o ? o : json_null();
}

static json_t *fp_config(const bcl_device_info *di, const char *query)
{
    static const char *const name[] = {"denorm",
                                       "inf_nan",
                                       "round_to_nearest",
                                       "round_to_zero",
                                       "round_to_inf",
                                       "fma",
                                       "correctly_rounded_divide_sqrt",
                                       "soft_float"};
    static const unsigned bit[] = {0, 1, 2, 3, 4, 5, 7, 6}; /* CL_FP_... */
    return named_bits(bcl_survey_clinfo_value(di, query), name, bit, 8, true);
}

/* CL_DEVICE_<kind>_VECTOR_WIDTH_<type> of every type. */
static json_t *vector_widths(const bcl_device_info *di, const char *kind)
{
    static const char *const types[] = {"char", "short", "int", "long", "float", "double", "half"};
    json_t *o = json_object();
    for (size_t i = 0; o && i < sizeof types / sizeof types[0]; i++) {
        char name[64];
        int n = snprintf(name, sizeof name, "CL_DEVICE_%s_VECTOR_WIDTH_", kind);
        for (const char *t = types[i]; *t && n < (int)sizeof name - 1; t++)
            name[n++] = (char)(*t - 'a' + 'A');
        name[n] = '\0';
        json_object_set_new(o, types[i], bcl_survey_clinfo_value(di, name));
    }
    return o;
}

json_t *bcl_survey_capabilities(const bcl_device_info *di)
{
    /* In order; those of a clinfo key are its value as clinfo's table
     * queries it, the others are set below. */
    static const char *const keys[][2] = {
        {"fp_config", NULL},
        {"svm_capabilities", NULL},
        /* Deprecated in OpenCL 2.0, still answered by the drivers that have it. */
        {"host_unified_memory", "CL_DEVICE_HOST_UNIFIED_MEMORY"},
        {"global_mem_cache_type", NULL},
        {"global_mem_cache_size", "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE"},
        {"global_mem_cacheline_size", "CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE"},
        {"max_constant_buffer_size", "CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE"},
        {"max_constant_args", "CL_DEVICE_MAX_CONSTANT_ARGS"},
        {"profiling_timer_resolution_ns", "CL_DEVICE_PROFILING_TIMER_RESOLUTION"},
        {"preferred_vector_width", NULL},
        {"native_vector_width", NULL},
        {"preferred_work_group_size_multiple", NULL},
        {"max_num_sub_groups", "CL_DEVICE_MAX_NUM_SUB_GROUPS"},
        {"sub_group_independent_forward_progress",
         "CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS"},
        {"il_version", "CL_DEVICE_IL_VERSION"},
        {"image_support", "CL_DEVICE_IMAGE_SUPPORT"},
        {"max_parameter_size", "CL_DEVICE_MAX_PARAMETER_SIZE"},
        {"mem_base_addr_align", "CL_DEVICE_MEM_BASE_ADDR_ALIGN"},
    };
    json_t *c = json_object();
    for (size_t i = 0; c && i < sizeof keys / sizeof keys[0]; i++)
        json_object_set_new(c, keys[i][0],
                            keys[i][1] ? bcl_survey_clinfo_value(di, keys[i][1]) : json_null());
    if (!c)
        return NULL;
    json_object_set_new(
        c, "fp_config",
        json_pack("{s:o, s:o, s:o}", "float", fp_config(di, "CL_DEVICE_SINGLE_FP_CONFIG"), "double",
                  fp_config(di, "CL_DEVICE_DOUBLE_FP_CONFIG"), "half",
                  di->fp16 ? fp_config(di, "CL_DEVICE_HALF_FP_CONFIG") : json_null()));
    static const char *const svm[] = {"coarse_grain_buffer", "fine_grain_buffer",
                                      "fine_grain_system", "atomics"};
    static const unsigned svm_bit[] = {0, 1, 2, 3}; /* CL_DEVICE_SVM_... */
    json_object_set_new(c, "svm_capabilities",
                        named_bits(bcl_survey_clinfo_value(di, "CL_DEVICE_SVM_CAPABILITIES"), svm,
                                   svm_bit, 4, false));
    json_t *t = bcl_survey_clinfo_value(di, "CL_DEVICE_GLOBAL_MEM_CACHE_TYPE");
    json_int_t type = json_integer_value(t);
    json_object_set_new(c, "global_mem_cache_type",
                        !json_is_integer(t)           ? json_null()
                        : type == CL_READ_ONLY_CACHE  ? json_string("read_only")
                        : type == CL_READ_WRITE_CACHE ? json_string("read_write")
                                                      : json_string("none"));
    json_decref(t);
    json_object_set_new(c, "preferred_vector_width", vector_widths(di, "PREFERRED"));
    json_object_set_new(c, "native_vector_width", vector_widths(di, "NATIVE"));
    json_object_set_new(c, "preferred_work_group_size_multiple",
                        di->preferred_multiple ? json_integer((json_int_t)di->preferred_multiple)
                                               : json_null());
    return c;
}

/* ---- where the device is ---------------------------------------------------- */

#ifndef CL_DEVICE_UUID_KHR
#define CL_DEVICE_UUID_KHR 0x106A
#endif
#ifndef CL_DEVICE_PCI_BUS_INFO_KHR
#define CL_DEVICE_PCI_BUS_INFO_KHR 0x410F
#endif

void bcl_survey_device_place(json_t *dev, const bcl_device_info *d, const char *extensions,
                             const char *host)
{
    json_t *id = json_object_get(dev, "identity");
    cl_device_id cd = (cl_device_id)d->device;
    if (host && *host)
        json_object_set_new(id, "host", bcl_survey_text(host));
    /* Asked only where listed: a driver without the extension may answer
     * with garbage rather than an error. A refused query leaves it out. */
    unsigned char uuid[16];
    if (bcl_survey_listed(extensions, "cl_khr_device_uuid") &&
        BCL_CL(clGetDeviceInfo, cd, CL_DEVICE_UUID_KHR, sizeof uuid, uuid, NULL) == CL_SUCCESS) {
        char hex[40];
        size_t o = 0;
        for (int i = 0; i < 16; i++)
            o += (size_t)snprintf(hex + o, sizeof hex - o, "%s%02x",
                                  i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", uuid[i]);
        json_object_set_new(id, "uuid", json_string(hex));
    }
    cl_uint pci[4]; /* cl_device_pci_bus_info_khr: domain, bus, device, function */
    if (bcl_survey_listed(extensions, "cl_khr_pci_bus_info") &&
        BCL_CL(clGetDeviceInfo, cd, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof pci, pci, NULL) ==
            CL_SUCCESS) {
        char bus[64];
        snprintf(bus, sizeof bus, "%04x:%02x:%02x.%x", pci[0], pci[1], pci[2], pci[3]);
        json_object_set_new(id, "pci_bus", json_string(bus));
    }
}

/* ---- platforms ----------------------------------------------------------- */

/* A platform known to list no device until a setting names its drivers. */
static const char *platform_hint(const char *name, cl_int st, cl_uint devices)
{
    if (devices > 0)
        return NULL;
    if (strstr(name, "rusticl"))
        return "rusticl lists no device unless RUSTICL_ENABLE names its drivers: "
               "RUSTICL_ENABLE=llvmpipe for the CPU, or a GPU driver's name (radeonsi, iris, "
               "...)";
    if (strstr(name, "Clover"))
        return "Clover (Mesa's older OpenCL) drives only AMD GPUs through r600/radeonsi; it has "
               "no CPU device";
    if (st == CL_DEVICE_NOT_FOUND)
        return "the platform's driver found no device it can drive";
    return NULL;
}

static void platform_string(cl_platform_id p, cl_platform_info what, char *out, size_t size)
{
    out[0] = '\0';
    if (BCL_CL(clGetPlatformInfo, p, what, size - 1, out, NULL) != CL_SUCCESS)
        snprintf(out, size, "?");
    out[size - 1] = '\0';
}

int bcl_survey_platforms(json_t **out, bcl_error *e)
{
    *out = NULL;
    cl_uint np = 0;
    cl_int st = BCL_CL(clGetPlatformIDs, 0, NULL, &np);
    json_t *arr = json_array();
    if (!arr)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    if (st == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (st == CL_SUCCESS && np == 0)) {
        *out = arr;
        return BCL_OK;
    }
    cl_platform_id *plats = st == CL_SUCCESS ? calloc(np, sizeof *plats) : NULL;
    if (plats)
        st = BCL_CL(clGetPlatformIDs, np, plats, NULL);
    if (!plats || st != CL_SUCCESS) {
        free(plats);
        json_decref(arr);
        return st != CL_SUCCESS ? bcl_cl_fail(e, st, "clGetPlatformIDs", NULL)
                                : bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    }
    for (cl_uint i = 0; i < np; i++) {
        char name[256], vendor[256], version[256];
        platform_string(plats[i], CL_PLATFORM_NAME, name, sizeof name);
        platform_string(plats[i], CL_PLATFORM_VENDOR, vendor, sizeof vendor);
        platform_string(plats[i], CL_PLATFORM_VERSION, version, sizeof version);
        cl_uint nd = 0;
        cl_int ds = BCL_CL(clGetDeviceIDs, plats[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
        if (ds != CL_SUCCESS)
            nd = 0;
        const char *hint = platform_hint(name, ds, nd);
        json_array_append_new(
            arr, json_pack("{s:I, s:o, s:o, s:o, s:s, s:I, s:s?}", "index", (json_int_t)i, "name",
                           bcl_survey_text(name), "vendor", bcl_survey_text(vendor), "version",
                           bcl_survey_text(version), "status", bcl_cl_status_name(ds), "devices",
                           (json_int_t)nd, "hint", hint));
    }
    free(plats);
    *out = arr;
    return BCL_OK;
}

/* ---- the public side ----------------------------------------------------- */

json_t *bcl_survey_describe(const bcl_device_info *d)
{
    bcl_error xe = {0};
    char *ext = bcl_device_extensions(d, &xe);
    bcl_error_clear(&xe);
    json_t *dev = bcl_survey_device_info(d, ext, 0);
    free(ext);
    /* The survey's preferred multiple is its kernel's, measured; the
     * device's own is capabilities.preferred_work_group_size_multiple. */
    json_object_del(json_object_get(dev, "limits"), "preferred_work_group_multiple");
    json_t *caps = dev ? bcl_survey_capabilities(d) : NULL;
    if (!caps) {
        json_decref(dev);
        return NULL;
    }
    json_object_set_new(dev, "capabilities", caps);
    return dev;
}
