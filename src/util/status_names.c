/*
 * One list of OpenCL status codes gives both their names and short hints, so
 * every error message in ballcl reads "clFoo failed: CL_BAR (hint)". It is
 * here, below the OpenCL plumbing (src/ocl/), because fault injection
 * (fault.c) parses a status name too, and every folder uses fault points.
 */
#include "util/util.h"

#include <stdio.h>
#include <string.h>

/* Every value is written as a number: this folder is below OpenCL and
 * includes none of its headers (cl_int is a 32-bit int). */
#define BCL_CL_STATUS_LIST(X)                                                                      \
    X(CL_DEVICE_NOT_FOUND, -1, "no device of that kind")                                           \
    X(CL_DEVICE_NOT_AVAILABLE, -2, "device busy or disabled")                                      \
    X(CL_COMPILER_NOT_AVAILABLE, -3, "the driver has no compiler")                                 \
    X(CL_MEM_OBJECT_ALLOCATION_FAILURE, -4, "device memory exhausted")                             \
    X(CL_OUT_OF_RESOURCES, -5, "the device ran out of resources, or a kernel faulted")             \
    X(CL_OUT_OF_HOST_MEMORY, -6, "host memory exhausted")                                          \
    X(CL_PROFILING_INFO_NOT_AVAILABLE, -7, "")                                                     \
    X(CL_MEM_COPY_OVERLAP, -8, "")                                                                 \
    X(CL_IMAGE_FORMAT_MISMATCH, -9, "")                                                            \
    X(CL_IMAGE_FORMAT_NOT_SUPPORTED, -10, "")                                                      \
    X(CL_BUILD_PROGRAM_FAILURE, -11, "the kernel did not compile; see the build log")              \
    X(CL_MAP_FAILURE, -12, "")                                                                     \
    X(CL_MISALIGNED_SUB_BUFFER_OFFSET, -13, "")                                                    \
    X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, -14, "")                                       \
    X(CL_COMPILE_PROGRAM_FAILURE, -15, "")                                                         \
    X(CL_LINKER_NOT_AVAILABLE, -16, "")                                                            \
    X(CL_LINK_PROGRAM_FAILURE, -17, "")                                                            \
    X(CL_DEVICE_PARTITION_FAILED, -18, "")                                                         \
    X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE, -19, "")                                                   \
    X(CL_INVALID_VALUE, -30, "")                                                                   \
    X(CL_INVALID_DEVICE_TYPE, -31, "")                                                             \
    X(CL_INVALID_PLATFORM, -32, "")                                                                \
    X(CL_INVALID_DEVICE, -33, "")                                                                  \
    X(CL_INVALID_CONTEXT, -34, "")                                                                 \
    X(CL_INVALID_QUEUE_PROPERTIES, -35, "")                                                        \
    X(CL_INVALID_COMMAND_QUEUE, -36, "")                                                           \
    X(CL_INVALID_HOST_PTR, -37, "")                                                                \
    X(CL_INVALID_MEM_OBJECT, -38, "")                                                              \
    X(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, -39, "")                                                 \
    X(CL_INVALID_IMAGE_SIZE, -40, "")                                                              \
    X(CL_INVALID_SAMPLER, -41, "")                                                                 \
    X(CL_INVALID_BINARY, -42, "the driver refused the program binary")                             \
    X(CL_INVALID_BUILD_OPTIONS, -43, "the driver refused the build options")                       \
    X(CL_INVALID_PROGRAM, -44, "")                                                                 \
    X(CL_INVALID_PROGRAM_EXECUTABLE, -45, "")                                                      \
    X(CL_INVALID_KERNEL_NAME, -46, "kernel function missing from the source")                      \
    X(CL_INVALID_KERNEL_DEFINITION, -47, "")                                                       \
    X(CL_INVALID_KERNEL, -48, "")                                                                  \
    X(CL_INVALID_ARG_INDEX, -49, "")                                                               \
    X(CL_INVALID_ARG_VALUE, -50, "")                                                               \
    X(CL_INVALID_ARG_SIZE, -51, "")                                                                \
    X(CL_INVALID_KERNEL_ARGS, -52, "")                                                             \
    X(CL_INVALID_WORK_DIMENSION, -53, "")                                                          \
    X(CL_INVALID_WORK_GROUP_SIZE, -54, "local size not accepted for this kernel and global size")  \
    X(CL_INVALID_WORK_ITEM_SIZE, -55, "")                                                          \
    X(CL_INVALID_GLOBAL_OFFSET, -56, "")                                                           \
    X(CL_INVALID_EVENT_WAIT_LIST, -57, "")                                                         \
    X(CL_INVALID_EVENT, -58, "")                                                                   \
    X(CL_INVALID_OPERATION, -59, "")                                                               \
    X(CL_INVALID_GL_OBJECT, -60, "")                                                               \
    X(CL_INVALID_BUFFER_SIZE, -61, "buffer larger than the device allows")                         \
    X(CL_INVALID_MIP_LEVEL, -62, "")                                                               \
    X(CL_INVALID_GLOBAL_WORK_SIZE, -63, "")                                                        \
    X(CL_INVALID_PROPERTY, -64, "")                                                                \
    X(CL_INVALID_IMAGE_DESCRIPTOR, -65, "")                                                        \
    X(CL_INVALID_COMPILER_OPTIONS, -66, "")                                                        \
    X(CL_INVALID_LINKER_OPTIONS, -67, "")                                                          \
    X(CL_INVALID_DEVICE_PARTITION_COUNT, -68, "")                                                  \
    X(CL_INVALID_PIPE_SIZE, -69, "")                                                               \
    X(CL_INVALID_DEVICE_QUEUE, -70, "")                                                            \
    X(CL_INVALID_SPEC_ID, -71, "")                                                                 \
    X(CL_MAX_SIZE_RESTRICTION_EXCEEDED, -72, "")                                                   \
    X(CL_PLATFORM_NOT_FOUND_KHR, -1001, "no OpenCL platform is installed")                         \
    X(CL_CONTEXT_TERMINATED_KHR, -1121, "the device was lost")

typedef struct status_entry {
    int value;
    const char *name;
    const char *hint;
} status_entry;

static const status_entry statuses[] = {
#define X(name, value, hint) {value, #name, hint},
    BCL_CL_STATUS_LIST(X)
#undef X
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

const char *bcl_cl_status_hint(int status)
{
    const status_entry *s = find_value(status);
    return s ? s->hint : "";
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
