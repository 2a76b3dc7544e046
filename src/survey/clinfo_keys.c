/*
 * Every device key `clinfo --raw` prints, under clinfo's own CL_... name
 * (the survey's "clinfo" object, docs/SURVEY.md), for whoever reaches for a
 * key by the name the specification gives it: one table of keys and one
 * generic query per type. Numbers for integers and bitfields, booleans for
 * cl_bool, strings for text and for lists (as clinfo --raw writes them, so
 * that the object stays flat). A query the driver refuses is left out,
 * never an error; one of a later OpenCL version than the device's, or of an
 * extension it does not list, is not asked: an old driver may crash on one.
 */
#include "ocl/clcall.h"
#include "ocl/ocl.h"
#include "survey/survey.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum kind {
    K_STR,
    K_UINT,
    K_ULONG,
    K_SIZE,
    K_SIZES,
    K_UINTS,
    K_BITS,
    K_BOOL,
    K_NAMEVER,
    K_BYTES /* a UUID or LUID: hex */
} kind;

typedef struct key {
    const char *name;
    cl_uint param; /* the numbers of the specification: no header needed */
    kind kind;
    int since;       /* OpenCL version times 10 that has the query */
    const char *ext; /* or the extension that must be listed */
} key;

#define NV   "cl_nv_device_attribute_query"
#define USM  "cl_intel_unified_shared_memory"
#define UUID "cl_khr_device_uuid"

/* clinfo 3.0's device keys for the core, the KHR extensions, NVIDIA's
 * attributes and Intel's that PoCL has. */
static const key keys[] = {
    {"CL_DEVICE_NAME", 0x102B, K_STR, 10, NULL},
    {"CL_DEVICE_VENDOR", 0x102C, K_STR, 10, NULL},
    {"CL_DEVICE_VENDOR_ID", 0x1001, K_UINT, 10, NULL},
    {"CL_DEVICE_VERSION", 0x102F, K_STR, 10, NULL},
    {"CL_DRIVER_VERSION", 0x102D, K_STR, 10, NULL},
    {"CL_DEVICE_NUMERIC_VERSION", 0x105E, K_UINT, 30, NULL},
    {"CL_DEVICE_OPENCL_C_VERSION", 0x103D, K_STR, 11, NULL},
    {"CL_DEVICE_OPENCL_C_ALL_VERSIONS", 0x1066, K_NAMEVER, 30, NULL},
    {"CL_DEVICE_OPENCL_C_FEATURES", 0x106F, K_NAMEVER, 30, NULL},
    {"CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED", 0x1072, K_STR, 30, NULL},
    {"CL_DEVICE_TYPE", 0x1000, K_BITS, 10, NULL},
    {"CL_DEVICE_PROFILE", 0x102E, K_STR, 10, NULL},
    {"CL_DEVICE_AVAILABLE", 0x1027, K_BOOL, 10, NULL},
    {"CL_DEVICE_COMPILER_AVAILABLE", 0x1028, K_BOOL, 10, NULL},
    {"CL_DEVICE_LINKER_AVAILABLE", 0x103E, K_BOOL, 12, NULL},
    {"CL_DEVICE_MAX_COMPUTE_UNITS", 0x1002, K_UINT, 10, NULL},
    {"CL_DEVICE_MAX_CLOCK_FREQUENCY", 0x100C, K_UINT, 10, NULL},
    {"CL_DEVICE_PARTITION_MAX_SUB_DEVICES", 0x1043, K_UINT, 12, NULL},
    {"CL_DEVICE_PARTITION_PROPERTIES", 0x1044, K_SIZES, 12, NULL},
    {"CL_DEVICE_PARTITION_AFFINITY_DOMAIN", 0x1045, K_BITS, 12, NULL},
    {"CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS", 0x1003, K_UINT, 10, NULL},
    {"CL_DEVICE_MAX_WORK_ITEM_SIZES", 0x1005, K_SIZES, 10, NULL},
    {"CL_DEVICE_MAX_WORK_GROUP_SIZE", 0x1004, K_SIZE, 10, NULL},
    {"CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE", 0x1067, K_SIZE, 30, NULL},
    {"CL_DEVICE_MAX_NUM_SUB_GROUPS", 0x105C, K_UINT, 21, NULL},
    {"CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS", 0x105D, K_BOOL, 21, NULL},
    {"CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR", 0x1006, K_UINT, 10, NULL},
    {"CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT", 0x1007, K_UINT, 10, NULL},
    {"CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT", 0x1008, K_UINT, 10, NULL},
    {"CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG", 0x1009, K_UINT, 10, NULL},
    {"CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT", 0x100A, K_UINT, 10, NULL},
    {"CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE", 0x100B, K_UINT, 10, NULL},
    {"CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF", 0x1034, K_UINT, 11, NULL},
    {"CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR", 0x1036, K_UINT, 11, NULL},
    {"CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT", 0x1037, K_UINT, 11, NULL},
    {"CL_DEVICE_NATIVE_VECTOR_WIDTH_INT", 0x1038, K_UINT, 11, NULL},
    {"CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG", 0x1039, K_UINT, 11, NULL},
    {"CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT", 0x103A, K_UINT, 11, NULL},
    {"CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE", 0x103B, K_UINT, 11, NULL},
    {"CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF", 0x103C, K_UINT, 11, NULL},
    {"CL_DEVICE_HALF_FP_CONFIG", 0x1033, K_BITS, 10, "cl_khr_fp16"},
    {"CL_DEVICE_SINGLE_FP_CONFIG", 0x101B, K_BITS, 10, NULL},
    {"CL_DEVICE_DOUBLE_FP_CONFIG", 0x1032, K_BITS, 12, NULL},
    {"CL_DEVICE_ADDRESS_BITS", 0x100D, K_UINT, 10, NULL},
    {"CL_DEVICE_ENDIAN_LITTLE", 0x1026, K_BOOL, 10, NULL},
    {"CL_DEVICE_GLOBAL_MEM_SIZE", 0x101F, K_ULONG, 10, NULL},
    {"CL_DEVICE_ERROR_CORRECTION_SUPPORT", 0x1024, K_BOOL, 10, NULL},
    {"CL_DEVICE_MAX_MEM_ALLOC_SIZE", 0x1010, K_ULONG, 10, NULL},
    {"CL_DEVICE_HOST_UNIFIED_MEMORY", 0x1035, K_BOOL, 11, NULL},
    {"CL_DEVICE_SVM_CAPABILITIES", 0x1053, K_BITS, 20, NULL},
    {"CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE", 0x101A, K_UINT, 10, NULL},
    {"CL_DEVICE_MEM_BASE_ADDR_ALIGN", 0x1019, K_UINT, 10, NULL},
    {"CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT", 0x1058, K_UINT, 20, NULL},
    {"CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT", 0x1059, K_UINT, 20, NULL},
    {"CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT", 0x105A, K_UINT, 20, NULL},
    {"CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES", 0x1063, K_BITS, 30, NULL},
    {"CL_DEVICE_ATOMIC_FENCE_CAPABILITIES", 0x1064, K_BITS, 30, NULL},
    {"CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE", 0x104D, K_SIZE, 20, NULL},
    {"CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE", 0x1054, K_SIZE, 20, NULL},
    {"CL_DEVICE_GLOBAL_MEM_CACHE_TYPE", 0x101C, K_UINT, 10, NULL},
    {"CL_DEVICE_GLOBAL_MEM_CACHE_SIZE", 0x101E, K_ULONG, 10, NULL},
    {"CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE", 0x101D, K_UINT, 10, NULL},
    {"CL_DEVICE_IMAGE_SUPPORT", 0x1016, K_BOOL, 10, NULL},
    {"CL_DEVICE_MAX_SAMPLERS", 0x1018, K_UINT, 10, NULL},
    {"CL_DEVICE_IMAGE_MAX_BUFFER_SIZE", 0x1040, K_SIZE, 12, NULL},
    {"CL_DEVICE_IMAGE_MAX_ARRAY_SIZE", 0x1041, K_SIZE, 12, NULL},
    {"CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT", 0x104B, K_UINT, 20, NULL},
    {"CL_DEVICE_IMAGE_PITCH_ALIGNMENT", 0x104A, K_UINT, 20, NULL},
    {"CL_DEVICE_IMAGE2D_MAX_HEIGHT", 0x1012, K_SIZE, 10, NULL},
    {"CL_DEVICE_IMAGE2D_MAX_WIDTH", 0x1011, K_SIZE, 10, NULL},
    {"CL_DEVICE_IMAGE3D_MAX_HEIGHT", 0x1014, K_SIZE, 10, NULL},
    {"CL_DEVICE_IMAGE3D_MAX_WIDTH", 0x1013, K_SIZE, 10, NULL},
    {"CL_DEVICE_IMAGE3D_MAX_DEPTH", 0x1015, K_SIZE, 10, NULL},
    {"CL_DEVICE_MAX_READ_IMAGE_ARGS", 0x100E, K_UINT, 10, NULL},
    {"CL_DEVICE_MAX_WRITE_IMAGE_ARGS", 0x100F, K_UINT, 10, NULL},
    {"CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS", 0x104C, K_UINT, 20, NULL},
    {"CL_DEVICE_PIPE_SUPPORT", 0x1071, K_BOOL, 30, NULL},
    {"CL_DEVICE_MAX_PIPE_ARGS", 0x1055, K_UINT, 20, NULL},
    {"CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS", 0x1056, K_UINT, 20, NULL},
    {"CL_DEVICE_PIPE_MAX_PACKET_SIZE", 0x1057, K_UINT, 20, NULL},
    {"CL_DEVICE_LOCAL_MEM_TYPE", 0x1022, K_UINT, 10, NULL},
    {"CL_DEVICE_LOCAL_MEM_SIZE", 0x1023, K_ULONG, 10, NULL},
    {"CL_DEVICE_MAX_CONSTANT_ARGS", 0x1021, K_UINT, 10, NULL},
    {"CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE", 0x1020, K_ULONG, 10, NULL},
    {"CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT", 0x1069, K_BOOL, 30, NULL},
    {"CL_DEVICE_MAX_PARAMETER_SIZE", 0x1017, K_SIZE, 10, NULL},
    {"CL_DEVICE_QUEUE_ON_HOST_PROPERTIES", 0x102A, K_BITS, 10, NULL},
    {"CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES", 0x1070, K_BITS, 30, NULL},
    {"CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES", 0x104E, K_BITS, 20, NULL},
    {"CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE", 0x104F, K_UINT, 20, NULL},
    {"CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE", 0x1050, K_UINT, 20, NULL},
    {"CL_DEVICE_MAX_ON_DEVICE_QUEUES", 0x1051, K_UINT, 20, NULL},
    {"CL_DEVICE_MAX_ON_DEVICE_EVENTS", 0x1052, K_UINT, 20, NULL},
    {"CL_DEVICE_PREFERRED_INTEROP_USER_SYNC", 0x1048, K_BOOL, 12, NULL},
    {"CL_DEVICE_PROFILING_TIMER_RESOLUTION", 0x1025, K_SIZE, 10, NULL},
    {"CL_DEVICE_EXECUTION_CAPABILITIES", 0x1029, K_BITS, 10, NULL},
    {"CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT", 0x1065, K_BOOL, 30, NULL},
    {"CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT", 0x1068, K_BOOL, 30, NULL},
    {"CL_DEVICE_PRINTF_BUFFER_SIZE", 0x1049, K_SIZE, 12, NULL},
    {"CL_DEVICE_BUILT_IN_KERNELS", 0x103F, K_STR, 12, NULL},
    {"CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION", 0x1062, K_NAMEVER, 30, NULL},
    {"CL_DEVICE_IL_VERSION", 0x105B, K_STR, 21, NULL},
    {"CL_DEVICE_ILS_WITH_VERSION", 0x1061, K_NAMEVER, 30, NULL},
    {"CL_DEVICE_SPIR_VERSIONS", 0x40E0, K_STR, 10, "cl_khr_spir"},
    {"CL_DEVICE_EXTENSIONS", 0x1030, K_STR, 10, NULL},
    {"CL_DEVICE_EXTENSIONS_WITH_VERSION", 0x1060, K_NAMEVER, 30, NULL},
    {"CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR", 0x12A9, K_BITS, 10, "cl_khr_command_buffer"},
    {"CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR", 0x12AA, K_BITS, 10,
     "cl_khr_command_buffer"},
    {"CL_DEVICE_PCI_BUS_INFO_KHR", 0x410F, K_UINTS, 10, "cl_khr_pci_bus_info"},
    {"CL_DEVICE_UUID_KHR", 0x106A, K_BYTES, 10, UUID},
    {"CL_DRIVER_UUID_KHR", 0x106B, K_BYTES, 10, UUID},
    {"CL_DEVICE_LUID_VALID_KHR", 0x106C, K_BOOL, 10, UUID},
    {"CL_DEVICE_LUID_KHR", 0x106D, K_BYTES, 10, UUID},
    {"CL_DEVICE_NODE_MASK_KHR", 0x106E, K_UINT, 10, UUID},
    {"CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR", 0x1073, K_BITS, 10,
     "cl_khr_integer_dot_product"},
    /* NVIDIA's, where its driver lists them (an H200's clinfo shows them). */
    {"CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV", 0x4000, K_UINT, 10, NV},
    {"CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV", 0x4001, K_UINT, 10, NV},
    {"CL_DEVICE_REGISTERS_PER_BLOCK_NV", 0x4002, K_UINT, 10, NV},
    {"CL_DEVICE_WARP_SIZE_NV", 0x4003, K_UINT, 10, NV},
    {"CL_DEVICE_GPU_OVERLAP_NV", 0x4004, K_BOOL, 10, NV},
    {"CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV", 0x4005, K_BOOL, 10, NV},
    {"CL_DEVICE_INTEGRATED_MEMORY_NV", 0x4006, K_BOOL, 10, NV},
    {"CL_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT_NV", 0x4007, K_UINT, 10, NV},
    {"CL_DEVICE_PCI_BUS_ID_NV", 0x4008, K_UINT, 10, NV},
    {"CL_DEVICE_PCI_SLOT_ID_NV", 0x4009, K_UINT, 10, NV},
    {"CL_DEVICE_PCI_DOMAIN_ID_NV", 0x400A, K_UINT, 10, NV},
    /* External memory and semaphores (lists of cl_uint handle types). */
    {"CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR", 0x204F, K_UINTS, 10,
     "cl_khr_external_memory"},
    {"CL_DEVICE_SEMAPHORE_TYPES_KHR", 0x204C, K_UINTS, 10, "cl_khr_semaphore"},
    {"CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR", 0x204D, K_UINTS, 10,
     "cl_khr_external_semaphore"},
    {"CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR", 0x204E, K_UINTS, 10,
     "cl_khr_external_semaphore"},
    /* Intel's unified shared memory and sub-group sizes (newer PoCL has
     * them too). */
    {"CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL", 0x4190, K_BITS, 10, USM},
    {"CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL", 0x4191, K_BITS, 10, USM},
    {"CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL", 0x4192, K_BITS, 10, USM},
    {"CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL", 0x4193, K_BITS, 10, USM},
    {"CL_DEVICE_SHARED_SYSTEM_MEM_CAPABILITIES_INTEL", 0x4194, K_BITS, 10, USM},
    {"CL_DEVICE_SUB_GROUP_SIZES_INTEL", 0x4108, K_SIZES, 10, "cl_intel_required_subgroup_size"},
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* The query's bytes (malloc'ed, NUL-terminated for text), NULL when the
 * driver refuses it or answers with more than 1 MiB. One call when the
 * answer fits 64 bytes (every number does), two otherwise. */
static void *raw(cl_device_id d, cl_uint param, size_t *n)
{
    unsigned char small[64];
    cl_int st = BCL_CL(clGetDeviceInfo, d, param, sizeof small, small, n);
    bool fits = st == CL_SUCCESS && *n <= sizeof small;
    /* Too long for small (or a driver that said so wrongly): its size. */
    if (!fits && ((st != CL_SUCCESS && st != CL_INVALID_VALUE) ||
                  BCL_CL(clGetDeviceInfo, d, param, 0, NULL, n) != CL_SUCCESS))
        return NULL;
    if (*n > (1u << 20))
        return NULL;
    char *b = calloc(1, *n + 1);
    if (b && fits) {
        memcpy(b, small, *n);
    } else if (b && *n && BCL_CL(clGetDeviceInfo, d, param, *n, b, NULL) != CL_SUCCESS) {
        free(b);
        return NULL;
    }
    return b;
}

/* An unsigned integer as JSON: a number, or a string past what a JSON
 * integer of the survey holds (no driver gives one; a broken one might). */
static json_t *unsigned_json(uint64_t v)
{
    if (v <= INT64_MAX)
        return json_integer((json_int_t)v);
    char t[32];
    snprintf(t, sizeof t, "%llu", (unsigned long long)v);
    return json_string(t);
}

static json_t *value(cl_device_id d, const key *k)
{
    size_t n = 0;
    unsigned char *b = raw(d, k->param, &n);
    if (!b)
        return NULL;
    json_t *j = NULL;
    switch (k->kind) {
    case K_STR: {
        /* Drivers pad with spaces and newlines: clinfo shows them without. */
        size_t len = strlen((char *)b);
        while (len && (b[len - 1] == ' ' || b[len - 1] == '\n'))
            b[--len] = '\0';
        j = bcl_survey_text((char *)b);
        break;
    }
    case K_UINT:
    case K_ULONG:
    case K_BITS:
    case K_SIZE:
        /* By the size the driver gave: PoCL answers some cl_bitfield
         * queries (device enqueue capabilities) with a cl_uint. */
        if (n == sizeof(cl_uint) || n == sizeof(cl_ulong)) {
            cl_uint u;
            cl_ulong v;
            memcpy(n == sizeof u ? (void *)&u : (void *)&v, b, n);
            j = unsigned_json(n == sizeof u ? u : v);
        }
        break;
    case K_BOOL:
        if (n >= sizeof(cl_bool)) {
            cl_bool v;
            memcpy(&v, b, sizeof v);
            j = json_boolean(v != CL_FALSE);
        }
        break;
    case K_BYTES: {
        char hex[2 * 64 + 1] = "";
        for (size_t i = 0; i < n && i < 64; i++)
            snprintf(hex + 2 * i, 3, "%02x", b[i]);
        j = json_string(hex);
        break;
    }
    case K_SIZES:
    case K_UINTS:
    case K_NAMEVER: {
        /* Space-separated, as clinfo --raw writes them: size_t[] (and
         * cl_device_partition_property[], the same size), cl_uint[] (the PCI
         * bus info's four, handle types), cl_name_version[] as
         * name:0xversion. No element takes more than 3 characters a byte. */
        size_t each = k->kind == K_UINTS   ? sizeof(cl_uint)
                      : k->kind == K_SIZES ? sizeof(size_t)
                                           : sizeof(cl_name_version);
        char *s = malloc(3 * n + 1), *o = s;
        for (size_t i = 0; s && i + each <= n; i += each) {
            const char *sep = i ? " " : "";
            if (k->kind == K_NAMEVER) {
                cl_name_version nv;
                memcpy(&nv, b + i, sizeof nv);
                nv.name[CL_NAME_VERSION_MAX_NAME_SIZE - 1] = '\0';
                o += sprintf(o, "%s%s:0x%x", sep, nv.name, (unsigned)nv.version);
            } else if (each == sizeof(cl_uint)) {
                cl_uint u;
                memcpy(&u, b + i, sizeof u);
                o += sprintf(o, "%s%u", sep, (unsigned)u);
            } else {
                size_t z;
                memcpy(&z, b + i, sizeof z);
                o += sprintf(o, "%s%zu", sep, z);
            }
        }
        if (s)
            *o = '\0';
        j = s ? bcl_survey_text(s) : NULL;
        free(s);
        break;
    }
    }
    free(b);
    return j;
}

json_t *bcl_survey_clinfo_value(const bcl_device_info *di, const char *name)
{
    for (size_t i = 0; i < NKEYS; i++) {
        if (strcmp(keys[i].name, name) != 0)
            continue;
        json_t *v = NULL;
        if (keys[i].since < 20 || bcl_opencl_version(di) >= keys[i].since)
            v = value(di->device, &keys[i]);
        return v ? v : json_null();
    }
    return json_null();
}

json_t *bcl_survey_clinfo(const bcl_device_info *di, const char *extensions)
{
    json_t *out = json_object();
    int version = bcl_opencl_version(di);
    for (size_t i = 0; out && i < NKEYS; i++) {
        const key *k = &keys[i];
        if (k->ext ? !bcl_survey_listed(extensions, k->ext) : version < k->since)
            continue;
        json_t *v = value(di->device, k);
        if (v)
            json_object_set_new(out, k->name, v);
    }
    return out;
}
