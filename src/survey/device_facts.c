/*
 * The facts of a device that clinfo shows and a survey user reaches for,
 * beyond its identity and limits (survey_info.c): floating-point
 * configuration (it decides whether results can be bit-exact), SVM, the
 * global memory cache, constant buffers, the profiling timer, every vector
 * width, sub-groups, the IL version and image support; and every platform,
 * those without devices included, with the status OpenCL gave and a hint
 * for drivers known to need a setting. `ballcl devices -v`, `devices --json`
 * and the survey show the same facts under the same keys (docs/SURVEY.md,
 * "capabilities" and "platforms").
 *
 * A query the driver refuses or lacks leaves its key null: one missing
 * query never hides the others. Queries of a later OpenCL version than the
 * device's are not asked (an OpenCL 1.2 driver may crash on them), and are
 * null too.
 */
#include "ocl/clcall.h"
#include "ocl/ocl.h"
#include "survey/survey.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CL_DEVICE_HOST_UNIFIED_MEMORY
#define CL_DEVICE_HOST_UNIFIED_MEMORY 0x1035
#endif
#ifndef CL_DEVICE_HALF_FP_CONFIG
#define CL_DEVICE_HALF_FP_CONFIG 0x1033
#endif

static json_t *ulong_query(cl_device_id d, cl_device_info what)
{
    cl_ulong v = 0;
    return BCL_CL(clGetDeviceInfo, d, what, sizeof v, &v, NULL) == CL_SUCCESS
               ? json_integer((json_int_t)v)
               : json_null();
}

static json_t *uint_query(cl_device_id d, cl_device_info what)
{
    cl_uint v = 0;
    return BCL_CL(clGetDeviceInfo, d, what, sizeof v, &v, NULL) == CL_SUCCESS
               ? json_integer((json_int_t)v)
               : json_null();
}

static json_t *size_query(cl_device_id d, cl_device_info what)
{
    size_t v = 0;
    return BCL_CL(clGetDeviceInfo, d, what, sizeof v, &v, NULL) == CL_SUCCESS
               ? json_integer((json_int_t)v)
               : json_null();
}

static json_t *bool_query(cl_device_id d, cl_device_info what)
{
    cl_bool v = CL_FALSE;
    return BCL_CL(clGetDeviceInfo, d, what, sizeof v, &v, NULL) == CL_SUCCESS
               ? json_boolean(v != CL_FALSE)
               : json_null();
}

static json_t *string_query(cl_device_id d, cl_device_info what)
{
    size_t n = 0;
    if (BCL_CL(clGetDeviceInfo, d, what, 0, NULL, &n) != CL_SUCCESS || n == 0 || n > 65536)
        return json_null();
    char *s = calloc(1, n + 1);
    if (!s)
        return json_null();
    json_t *j = json_null();
    if (BCL_CL(clGetDeviceInfo, d, what, n, s, NULL) == CL_SUCCESS) {
        /* Drivers pad with spaces; an empty IL list means none. */
        size_t len = strlen(s);
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\n'))
            s[--len] = '\0';
        j = bcl_survey_text(s);
    }
    free(s);
    return j;
}

/* A cl_device_fp_config as an object of named bits, or null when the
 * query fails or the device has no such type (0). */
static json_t *fp_config(cl_device_id d, cl_device_info what)
{
    cl_device_fp_config c = 0;
    if (BCL_CL(clGetDeviceInfo, d, what, sizeof c, &c, NULL) != CL_SUCCESS || c == 0)
        return json_null();
    return json_pack(
        "{s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b}", "denorm", (c & CL_FP_DENORM) != 0, "inf_nan",
        (c & CL_FP_INF_NAN) != 0, "round_to_nearest", (c & CL_FP_ROUND_TO_NEAREST) != 0,
        "round_to_zero", (c & CL_FP_ROUND_TO_ZERO) != 0, "round_to_inf",
        (c & CL_FP_ROUND_TO_INF) != 0, "fma", (c & CL_FP_FMA) != 0, "correctly_rounded_divide_sqrt",
        (c & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0, "soft_float", (c & CL_FP_SOFT_FLOAT) != 0);
}

static const char *const vector_types[] = {"char",  "short",  "int", "long",
                                           "float", "double", "half"};

static json_t *vector_widths(cl_device_id d, bool native)
{
    static const cl_device_info preferred_q[] = {
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR,  CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT,   CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF,
    };
    static const cl_device_info native_q[] = {
        CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR,  CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_INT,   CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF,
    };
    json_t *o = json_object();
    for (size_t i = 0; i < sizeof vector_types / sizeof vector_types[0]; i++)
        json_object_set_new(o, vector_types[i],
                            uint_query(d, native ? native_q[i] : preferred_q[i]));
    return o;
}

static json_t *svm(cl_device_id d)
{
    cl_device_svm_capabilities c = 0;
    if (BCL_CL(clGetDeviceInfo, d, CL_DEVICE_SVM_CAPABILITIES, sizeof c, &c, NULL) != CL_SUCCESS)
        return json_null();
    return json_pack(
        "{s:b, s:b, s:b, s:b}", "coarse_grain_buffer", (c & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) != 0,
        "fine_grain_buffer", (c & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) != 0, "fine_grain_system",
        (c & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM) != 0, "atomics", (c & CL_DEVICE_SVM_ATOMICS) != 0);
}

static json_t *cache_type(cl_device_id d)
{
    cl_device_mem_cache_type t = CL_NONE;
    if (BCL_CL(clGetDeviceInfo, d, CL_DEVICE_GLOBAL_MEM_CACHE_TYPE, sizeof t, &t, NULL) !=
        CL_SUCCESS)
        return json_null();
    return json_string(t == CL_READ_ONLY_CACHE    ? "read_only"
                       : t == CL_READ_WRITE_CACHE ? "read_write"
                                                  : "none");
}

json_t *bcl_survey_capabilities(const bcl_device_info *di)
{
    cl_device_id d = di->device;
    int v = bcl_opencl_version(di);
    json_t *c = json_object();
    if (!c)
        return NULL;
    json_t *fp = json_object();
    json_object_set_new(fp, "float", fp_config(d, CL_DEVICE_SINGLE_FP_CONFIG));
    json_object_set_new(fp, "double", fp_config(d, CL_DEVICE_DOUBLE_FP_CONFIG));
    json_object_set_new(fp, "half",
                        di->fp16 ? fp_config(d, CL_DEVICE_HALF_FP_CONFIG) : json_null());
    json_object_set_new(c, "fp_config", fp);
    json_object_set_new(c, "svm_capabilities", v >= 20 ? svm(d) : json_null());
    /* Deprecated in OpenCL 2.0, still answered by the drivers that have it. */
    json_object_set_new(c, "host_unified_memory", bool_query(d, CL_DEVICE_HOST_UNIFIED_MEMORY));
    json_object_set_new(c, "global_mem_cache_type", cache_type(d));
    json_object_set_new(c, "global_mem_cache_size",
                        ulong_query(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE));
    json_object_set_new(c, "global_mem_cacheline_size",
                        uint_query(d, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE));
    json_object_set_new(c, "max_constant_buffer_size",
                        ulong_query(d, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE));
    json_object_set_new(c, "max_constant_args", uint_query(d, CL_DEVICE_MAX_CONSTANT_ARGS));
    json_object_set_new(c, "profiling_timer_resolution_ns",
                        size_query(d, CL_DEVICE_PROFILING_TIMER_RESOLUTION));
    json_object_set_new(c, "preferred_vector_width", vector_widths(d, false));
    json_object_set_new(c, "native_vector_width", vector_widths(d, true));
    json_object_set_new(c, "preferred_work_group_size_multiple",
                        di->preferred_multiple ? json_integer((json_int_t)di->preferred_multiple)
                                               : json_null());
    json_object_set_new(c, "max_num_sub_groups",
                        v >= 21 ? uint_query(d, CL_DEVICE_MAX_NUM_SUB_GROUPS) : json_null());
    json_object_set_new(c, "sub_group_independent_forward_progress",
                        v >= 21 ? bool_query(d, CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS)
                                : json_null());
    json_object_set_new(c, "il_version",
                        v >= 21 ? string_query(d, CL_DEVICE_IL_VERSION) : json_null());
    json_object_set_new(c, "image_support", bool_query(d, CL_DEVICE_IMAGE_SUPPORT));
    json_object_set_new(c, "max_parameter_size", size_query(d, CL_DEVICE_MAX_PARAMETER_SIZE));
    json_object_set_new(c, "mem_base_addr_align", uint_query(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN));
    return c;
}

/* ---- where the device is ---------------------------------------------------- */

#ifndef CL_DEVICE_UUID_KHR
#define CL_DEVICE_UUID_KHR 0x106A
#endif
#ifndef CL_DEVICE_PCI_BUS_INFO_KHR
#define CL_DEVICE_PCI_BUS_INFO_KHR 0x410F
#endif

bool bcl_survey_listed(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list ? strstr(list, word) : NULL; p; p = strstr(p + n, word))
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
            return true;
    return false;
}

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
    if (st != CL_SUCCESS) {
        json_decref(arr);
        return bcl_cl_fail(e, st, "clGetPlatformIDs", NULL);
    }
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats) {
        json_decref(arr);
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    }
    st = BCL_CL(clGetPlatformIDs, np, plats, NULL);
    if (st != CL_SUCCESS) {
        free(plats);
        json_decref(arr);
        return bcl_cl_fail(e, st, "clGetPlatformIDs", NULL);
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
        json_t *p = json_object();
        json_object_set_new(p, "index", json_integer(i));
        json_object_set_new(p, "name", bcl_survey_text(name));
        json_object_set_new(p, "vendor", bcl_survey_text(vendor));
        json_object_set_new(p, "version", bcl_survey_text(version));
        json_object_set_new(p, "status", json_string(bcl_cl_status_name(ds)));
        json_object_set_new(p, "devices", json_integer(nd));
        json_object_set_new(p, "hint", hint ? json_string(hint) : json_null());
        json_array_append_new(arr, p);
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
