/*
 * ballcl-floor: the floor of a run of single-step launches, measured by a
 * minimal OpenCL program that shares no code with the ballcl library. It
 * builds one kernel of a model's file (cl/<model>.cl, with ballcl's build
 * options) and times repeats of S launches over N balls with the given local
 * size, enqueued bare: no events, no checks, one clFinish at the end of each
 * repeat, host clock. `ballcl bench`'s row `floor` does the same through the
 * library; the two agree when the library adds nothing (docs/PERFORMANCE.md,
 * "The host's cost per launch").
 *
 * usage: ballcl-floor -f FILE -k KERNEL -n N -s S -l LOCAL [-b B] [-r R] [-d P:D]
 *                     [-p PARAM]...   (--help says more)
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <errno.h>
#include <string.h>

#define PROBE_NAME "floor"
#include "probe.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: ballcl-floor -f FILE -k KERNEL -n N -s S -l LOCAL [-b B] [-r R] [-d P:D] "
               "[-p PARAM]...\n\n"
               "Times R repeats (default 9, after one untimed) of S launches of KERNEL from\n"
               "FILE over N balls, B per work-item (default 1), local size LOCAL (0: the\n"
               "driver's), enqueued with no events and one clFinish per repeat; the kernel\n"
               "takes (state, n, 1, PARAM...). Device P:D (default 0:0). Prints 'name value'\n"
               "lines: global size, and us/step median, min and max of the host clock.\n"
               "Exit status: 0 done, 2 usage error, 3 an OpenCL call failed (named).\n");
}

static unsigned long long number(const char *s, const char *what, unsigned long long max)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || s[0] == '-' || errno || v > max) {
        fprintf(stderr, "floor: %s '%s': expected a whole number up to %llu\n", what, s, max);
        exit(2);
    }
    return v;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "floor: cannot read '%s': %s\n", path, strerror(errno));
        exit(2);
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *more = realloc(buf, 2 * cap + 1);
            if (!more)
                free(buf);
            buf = more;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "floor: out of memory reading '%s'\n", path);
        exit(3);
    }
    buf[len] = 0;
    return buf;
}

int main(int argc, char **argv)
{
    const char *file = NULL, *kname = NULL;
    unsigned long long n = 0, steps = 0, local = 0, bpi = 1, repeats = 9, plat = 0, devi = 0;
    float params[8];
    unsigned nparams = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (a[0] != '-' || !a[1] || a[2] || i + 1 == argc) {
            fprintf(stderr, "floor: unexpected argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
        const char *v = argv[++i];
        switch (a[1]) {
        case 'f':
            file = v;
            break;
        case 'k':
            kname = v;
            break;
        case 'n':
            n = number(v, "-n", 1ULL << 32);
            break;
        case 's':
            steps = number(v, "-s", 1ULL << 30);
            break;
        case 'l':
            local = number(v, "-l", 1 << 20);
            break;
        case 'b':
            bpi = number(v, "-b", 1024);
            break;
        case 'r':
            repeats = number(v, "-r", 1000);
            break;
        case 'd': {
            char *colon = strchr(v, ':');
            if (!colon) {
                fprintf(stderr, "floor: -d '%s': expected P:D\n", v);
                return 2;
            }
            *colon = 0;
            plat = number(v, "-d platform", 63);
            devi = number(colon + 1, "-d device", 63);
            break;
        }
        case 'p': {
            char *end;
            errno = 0;
            float x = strtof(v, &end);
            if (!*v || *end || errno || nparams == 8) {
                fprintf(stderr, "floor: -p '%s': expected a number (at most 8)\n", v);
                return 2;
            }
            params[nparams++] = x;
            break;
        }
        default:
            fprintf(stderr, "floor: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!file || !kname || !n || !steps || !bpi || !repeats) {
        fprintf(stderr, "floor: -f, -k, -n and -s are needed (-n, -s, -b, -r above 0)\n");
        usage(stderr);
        return 2;
    }
    cl_platform_id plats[64];
    cl_uint np = 0;
    cl_int st = clGetPlatformIDs(64, plats, &np);
    if (st != CL_SUCCESS || plat >= np) {
        fprintf(stderr, "floor: no platform %llu (clGetPlatformIDs: status %d, %u platforms)\n",
                plat, st, np);
        return 2;
    }
    cl_device_id devs[64];
    cl_uint nd = 0;
    st = clGetDeviceIDs(plats[plat], CL_DEVICE_TYPE_ALL, 64, devs, &nd);
    if (st != CL_SUCCESS || devi >= nd) {
        fprintf(stderr, "floor: no device %llu:%llu\n", plat, devi);
        return 2;
    }
    cl_device_id dev = devs[devi];
    char name[256] = "";
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name - 1, name, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &st);
    CHECK(st);
    /* A profiling queue, as ballcl's: the figure is the host clock's, but
     * the queue is the same kind. */
    cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &st);
    CHECK(st);
    char *src = read_text(file);
    cl_program prog = clCreateProgramWithSource(ctx, 1, (const char **)&src, NULL, &st);
    CHECK(st);
    free(src);
    /* ballcl's build options (src/ocl/kernel_source.c). */
    st = clBuildProgram(prog, 1, &dev, "-cl-std=CL1.2", NULL, NULL);
    if (st != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "floor: clBuildProgram failed: status %d\n%s\n", st, log);
        return 3;
    }
    cl_kernel k = clCreateKernel(prog, kname, &st);
    CHECK(st);
    /* A state of finite, varied values (the update's cost does not depend
     * on them). */
    float *host = malloc(n * 16);
    if (!host) {
        fprintf(stderr, "floor: out of host memory for %llu balls\n", n);
        return 3;
    }
    for (unsigned long long i = 0; i < 4 * n; i++)
        host[i] = (float)(i % 1000) * 1e-3f;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 16, host, &st);
    CHECK(st);
    free(host);
    cl_uint n32 = (cl_uint)n, one = 1;
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    CHECK(clSetKernelArg(k, 1, sizeof n32, &n32));
    CHECK(clSetKernelArg(k, 2, sizeof one, &one));
    for (unsigned i = 0; i < nparams; i++)
        CHECK(clSetKernelArg(k, 3 + i, sizeof(float), &params[i]));
    size_t items = (size_t)((n + bpi - 1) / bpi);
    size_t l = (size_t)local, global = l ? (items + l - 1) / l * l : items;
    double *v = malloc(repeats * sizeof *v);
    if (!v)
        return 3;
    for (unsigned long long r = 0; r <= repeats; r++) {
        CHECK(clFinish(q));
        double t0 = now_us();
        for (unsigned long long i = 0; i < steps; i++)
            CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, l ? &l : NULL, 0, NULL, NULL));
        CHECK(clFinish(q));
        if (r) /* the first repeat is the warm-up */
            v[r - 1] = (now_us() - t0) / (double)steps;
    }
    double med = median(v, repeats); /* sorts v */
    printf("device %s\nkernel %s\nglobal %zu\nlocal %zu\nus_per_step_median %.4f\n"
           "us_per_step_min %.4f\nus_per_step_max %.4f\n",
           name, kname, global, l, med, v[0], v[repeats - 1]);
    free(v);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
