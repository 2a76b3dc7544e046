/*
 * ballcl-floor: the floor of a run of single-step launches, measured by a
 * minimal OpenCL program that shares no code with the ballcl library. It
 * builds one kernel of a model's program as ballcl makes it (the prelude
 * `#pragma OPENCL FP_CONTRACT OFF`, the -D defines, then the -f files in
 * order: the model's update, cl/<model>.cl, and the kernels generated around
 * it, cl/kernels.cl; ballcl's build options) and times repeats of S launches
 * over N balls with the given local size, enqueued bare: no events, no
 * checks, one clFinish at the end of each repeat, host clock. `ballcl
 * bench`'s row `floor` does the same through the library; the two agree when
 * the library adds nothing (docs/PERFORMANCE.md, "The host's cost per
 * launch").
 *
 * usage: ballcl-floor -f FILE... -k KERNEL -n N -s S -l LOCAL
 *                     [-D NAME[(ARGS)][=VALUE]]... [-b B] [-r R] [-d P:D]
 *                     [-p PARAM]...   (--help says more)
 *
 * The seed's one-step kernel, BCL_WIDE left undefined (the wide CPU variants
 * are not built):
 *
 *     ballcl-floor -f cl/seed.cl -f cl/kernels.cl -D 'BCL_NAME(s)=seed##s'
 *                  -D BCL_PARAMS= -D BCL_ARGS= -k seed_step -n 100000
 *                  -s 1000 -l 0
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define PROBE_NAME "floor"
#include "probe.h"

/* The most -f files and the most -D defines. */
#define MAX_PARTS 16

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ballcl-floor -f FILE... -k KERNEL -n N -s S -l LOCAL\n"
            "                    [-D NAME[(ARGS)][=VALUE]]... [-b B] [-r R] [-d P:D]\n"
            "                    [-p PARAM]...\n\n"
            "Builds one program as ballcl does: '#pragma OPENCL FP_CONTRACT OFF', a #define\n"
            "for each -D (NAME alone: 1; NAME(ARGS)=VALUE: a function-like macro), then\n"
            "each -f FILE in order (at most %d of each), with ballcl's build options.\n"
            "Times R repeats (default 9, after one untimed) of S launches of KERNEL over\n"
            "N balls, B per work-item (default 1), local size LOCAL (0: the driver's),\n"
            "enqueued with no events and one clFinish per repeat; the kernel takes\n"
            "(state, n, 1, PARAM...). Device P:D (default 0:0). Prints 'name value'\n"
            "lines: global size, and us/step median, min and max of the host clock.\n"
            "A model's kernels: -f cl/seed.cl -f cl/kernels.cl -D 'BCL_NAME(s)=seed##s'\n"
            "-D BCL_PARAMS= -D BCL_ARGS= (bounce: -D 'BCL_PARAMS=, float p0, ...' and\n"
            "-D 'BCL_ARGS=, p0, ...', one per parameter).\n"
            "Exit status: 0 done, 2 usage error, 3 an OpenCL call failed (named).\n",
            MAX_PARTS);
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

/* Appends the n bytes of s to *buf (of length *len). */
static void append(char **buf, size_t *len, const char *s, size_t n)
{
    char *more = realloc(*buf, *len + n + 1);
    if (!more) {
        fprintf(stderr, "floor: out of memory for the program text\n");
        exit(3);
    }
    memcpy(more + *len, s, n);
    *len += n;
    more[*len] = 0;
    *buf = more;
}

/* The program as ballcl makes one (src/ocl/kernel_source.c): contraction
 * off, the defines, then each file under #line so that a compiler's message
 * names it. A define "NAME=VALUE" is "#define NAME VALUE", "NAME" alone
 * "#define NAME 1" (as a C compiler's -D). */
static char *program_text(const char *const *files, unsigned nfiles, const char *const *defs,
                          unsigned ndefs)
{
    char *src = NULL;
    size_t len = 0;
    const char *prelude = "#pragma OPENCL FP_CONTRACT OFF\n";
    append(&src, &len, prelude, strlen(prelude));
    for (unsigned i = 0; i < ndefs; i++) {
        const char *eq = strchr(defs[i], '=');
        size_t name = eq ? (size_t)(eq - defs[i]) : strlen(defs[i]);
        append(&src, &len, "#define ", 8);
        append(&src, &len, defs[i], name);
        append(&src, &len, " ", 1);
        append(&src, &len, eq ? eq + 1 : "1", strlen(eq ? eq + 1 : "1"));
        append(&src, &len, "\n", 1);
    }
    for (unsigned i = 0; i < nfiles; i++) {
        char line[64 + 4096];
        int n = snprintf(line, sizeof line, "#line 1 \"%.4096s\"\n", files[i]);
        append(&src, &len, line, (size_t)n);
        char *text = read_text(files[i]);
        append(&src, &len, text, strlen(text));
        append(&src, &len, "\n", 1);
        free(text);
    }
    return src;
}

/* A define's name: a C identifier, with a parameter list for a
 * function-like macro ("BCL_NAME(s)=seed##s"), before any '='. */
static bool define_ok(const char *d)
{
    size_t name = strcspn(d, "=(");
    if (!name || (d[0] >= '0' && d[0] <= '9'))
        return false;
    for (size_t i = 0; i < name; i++)
        if (!(d[i] == '_' || (d[i] >= 'a' && d[i] <= 'z') || (d[i] >= 'A' && d[i] <= 'Z') ||
              (d[i] >= '0' && d[i] <= '9')))
            return false;
    const char *close = strchr(d, ')');
    if (d[name] == '(' && (!close || close > d + strcspn(d, "=")))
        return false;
    return !strchr(d, '\n');
}

int main(int argc, char **argv)
{
    const char *files[MAX_PARTS], *defs[MAX_PARTS], *kname = NULL;
    unsigned nfiles = 0, ndefs = 0;
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
            if (nfiles == MAX_PARTS) {
                fprintf(stderr, "floor: -f '%s': at most %d files\n", v, MAX_PARTS);
                return 2;
            }
            files[nfiles++] = v;
            break;
        case 'D':
            if (ndefs == MAX_PARTS || !define_ok(v)) {
                fprintf(stderr, "floor: -D '%s': expected NAME or NAME=VALUE (at most %d)\n", v,
                        MAX_PARTS);
                return 2;
            }
            defs[ndefs++] = v;
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
    if (!nfiles || !kname || !n || !steps || !bpi || !repeats) {
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
    char *src = program_text(files, nfiles, defs, ndefs);
    cl_program prog = clCreateProgramWithSource(ctx, 1, (const char **)&src, NULL, &st);
    CHECK(st);
    free(src);
    /* ballcl's build options (src/ocl/kernel_source.c, bcl_build_options):
     * division and square root correctly rounded where the device can. */
    cl_device_fp_config fp = 0;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL));
    const char *options = fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT
                              ? "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt"
                              : "-cl-std=CL1.2";
    st = clBuildProgram(prog, 1, &dev, options, NULL, NULL);
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
