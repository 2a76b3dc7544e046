/*
 * What the probes (clprobe.c, floor.c) share: the OpenCL check that names
 * the failed call and its status, the host clock and the median. They link
 * no ballcl code, so this is kept apart from the library's own.
 * PROBE_NAME, defined before including, prefixes the messages.
 */
#ifndef BALLCL_PROBE_H
#define BALLCL_PROBE_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The statuses the probes can meet, by name (the library's table, which has
 * them all, is not linked). */
static const char *status_name(cl_int st)
{
    switch (st) {
    case CL_DEVICE_NOT_FOUND:
        return "CL_DEVICE_NOT_FOUND";
    case CL_OUT_OF_RESOURCES:
        return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY:
        return "CL_OUT_OF_HOST_MEMORY";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
        return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_BUILD_PROGRAM_FAILURE:
        return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE:
        return "CL_INVALID_VALUE";
    case CL_INVALID_BUFFER_SIZE:
        return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_WORK_GROUP_SIZE:
        return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_OPERATION:
        return "CL_INVALID_OPERATION";
    case CL_INVALID_COMMAND_QUEUE:
        return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_KERNEL_ARGS:
        return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_EVENT:
        return "CL_INVALID_EVENT";
    case CL_PROFILING_INFO_NOT_AVAILABLE:
        return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case -1001:
        return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
        return "an OpenCL error";
    }
}

/* A failed call ends the program with exit status 3. */
static void check(cl_int st, const char *call, int line)
{
    if (st != CL_SUCCESS) {
        fprintf(stderr, PROBE_NAME ": %s failed: %s (%d, line %d)\n", call, status_name(st), st,
                line);
        exit(3);
    }
}

#define CHECK(x) check((x), #x, __LINE__)

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v. */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

#endif
