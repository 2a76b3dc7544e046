/*
 * OpenCL statuses' names and hints, for "clFoo failed: CL_BAR (hint)". Below
 * src/ocl/, as fault injection (fault.c) parses a status name too.
 */
#include "util/util.h"

#include <stdio.h>
#include <string.h>

/* Numbers: this folder includes no OpenCL header (cl_int is an int). */
typedef struct status_entry {
    int value;
    const char *name;
    const char *hint;
} status_entry;

static const status_entry statuses[] = {
    {-1, "CL_DEVICE_NOT_FOUND", "no device of that kind"},
    {-2, "CL_DEVICE_NOT_AVAILABLE", "device busy or disabled"},
    {-3, "CL_COMPILER_NOT_AVAILABLE", "the driver has no compiler"},
    {-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE", "device memory exhausted"},
    {-5, "CL_OUT_OF_RESOURCES", "the device ran out of resources, or a kernel faulted"},
    {-6, "CL_OUT_OF_HOST_MEMORY", "host memory exhausted"},
    {-7, "CL_PROFILING_INFO_NOT_AVAILABLE", ""},
    {-8, "CL_MEM_COPY_OVERLAP", ""},
    {-9, "CL_IMAGE_FORMAT_MISMATCH", ""},
    {-10, "CL_IMAGE_FORMAT_NOT_SUPPORTED", ""},
    {-11, "CL_BUILD_PROGRAM_FAILURE", "the kernel did not compile; see the build log"},
    {-12, "CL_MAP_FAILURE", ""},
    {-13, "CL_MISALIGNED_SUB_BUFFER_OFFSET", ""},
    {-14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST", ""},
    {-15, "CL_COMPILE_PROGRAM_FAILURE", ""},
    {-16, "CL_LINKER_NOT_AVAILABLE", ""},
    {-17, "CL_LINK_PROGRAM_FAILURE", ""},
    {-18, "CL_DEVICE_PARTITION_FAILED", ""},
    {-19, "CL_KERNEL_ARG_INFO_NOT_AVAILABLE", ""},
    {-30, "CL_INVALID_VALUE", ""},
    {-31, "CL_INVALID_DEVICE_TYPE", ""},
    {-32, "CL_INVALID_PLATFORM", ""},
    {-33, "CL_INVALID_DEVICE", ""},
    {-34, "CL_INVALID_CONTEXT", ""},
    {-35, "CL_INVALID_QUEUE_PROPERTIES", ""},
    {-36, "CL_INVALID_COMMAND_QUEUE", ""},
    {-37, "CL_INVALID_HOST_PTR", ""},
    {-38, "CL_INVALID_MEM_OBJECT", ""},
    {-39, "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR", ""},
    {-40, "CL_INVALID_IMAGE_SIZE", ""},
    {-41, "CL_INVALID_SAMPLER", ""},
    {-42, "CL_INVALID_BINARY", "the driver refused the program binary"},
    {-43, "CL_INVALID_BUILD_OPTIONS", "the driver refused the build options"},
    {-44, "CL_INVALID_PROGRAM", ""},
    {-45, "CL_INVALID_PROGRAM_EXECUTABLE", ""},
    {-46, "CL_INVALID_KERNEL_NAME", "kernel function missing from the source"},
    {-47, "CL_INVALID_KERNEL_DEFINITION", ""},
    {-48, "CL_INVALID_KERNEL", ""},
    {-49, "CL_INVALID_ARG_INDEX", ""},
    {-50, "CL_INVALID_ARG_VALUE", ""},
    {-51, "CL_INVALID_ARG_SIZE", ""},
    {-52, "CL_INVALID_KERNEL_ARGS", ""},
    {-53, "CL_INVALID_WORK_DIMENSION", ""},
    {-54, "CL_INVALID_WORK_GROUP_SIZE", "local size not accepted for this kernel and global size"},
    {-55, "CL_INVALID_WORK_ITEM_SIZE", ""},
    {-56, "CL_INVALID_GLOBAL_OFFSET", ""},
    {-57, "CL_INVALID_EVENT_WAIT_LIST", ""},
    {-58, "CL_INVALID_EVENT", ""},
    {-59, "CL_INVALID_OPERATION", ""},
    {-60, "CL_INVALID_GL_OBJECT", ""},
    {-61, "CL_INVALID_BUFFER_SIZE", "buffer larger than the device allows"},
    {-62, "CL_INVALID_MIP_LEVEL", ""},
    {-63, "CL_INVALID_GLOBAL_WORK_SIZE", ""},
    {-64, "CL_INVALID_PROPERTY", ""},
    {-65, "CL_INVALID_IMAGE_DESCRIPTOR", ""},
    {-66, "CL_INVALID_COMPILER_OPTIONS", ""},
    {-67, "CL_INVALID_LINKER_OPTIONS", ""},
    {-68, "CL_INVALID_DEVICE_PARTITION_COUNT", ""},
    {-69, "CL_INVALID_PIPE_SIZE", ""},
    {-70, "CL_INVALID_DEVICE_QUEUE", ""},
    {-71, "CL_INVALID_SPEC_ID", ""},
    {-72, "CL_MAX_SIZE_RESTRICTION_EXCEEDED", ""},
    {-1001, "CL_PLATFORM_NOT_FOUND_KHR", "no OpenCL platform is installed"},
    {-1121, "CL_CONTEXT_TERMINATED_KHR", "the device was lost"},
    {0, "CL_SUCCESS", ""},
};

static const status_entry *find_value(int status)
{
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
        if (statuses[i].value == status)
            return &statuses[i];
    return NULL;
}

const char *bcl_cl_status_name(int status)
{
    static _Thread_local char unknown[48];
    const status_entry *s = find_value(status);
    if (s)
        return s->name;
    snprintf(unknown, sizeof unknown, "CL_UNKNOWN_ERROR(%d)", (int)status);
    return unknown;
}

const char *bcl_cl_status_text(int status)
{
    static _Thread_local char text[160];
    const status_entry *s = find_value(status);
    const char *hint = s ? s->hint : "";
    snprintf(text, sizeof text, "%s%s%s%s", bcl_cl_status_name(status), *hint ? " (" : "", hint,
             *hint ? ")" : "");
    return text;
}

bool bcl_cl_status_parse(const char *name, int *out)
{
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        if (strcmp(statuses[i].name, name) == 0) {
            *out = statuses[i].value;
            return true;
        }
    }
    return false;
}
