/*
 * ballcl-clprobe: a minimal OpenCL program, independent of the ballcl
 * library, that measures the limits ballcl's figures are held against:
 *   - back-to-back launch rate of the one-step kernel (N = 100000), with a
 *     profiling queue and without one, host clock over many launches;
 *   - the fused seed kernel at N = 16M with several unroll factors (device
 *     time from profiling events);
 *   - clEnqueueCopyBuffer bandwidth against the one-step kernel at N = 64M.
 * It exists so that a target a driver cannot reach can be shown to be a
 * driver or hardware limit rather than a flaw of ballcl.
 *
 * usage: ballcl-clprobe [DEVICE [BIG-N]]   (--help says more)
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <string.h>
#include <strings.h>

#define PROBE_NAME "clprobe"
#include "probe.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: ballcl-clprobe [DEVICE [BIG-N]]\n\n"
               "A minimal OpenCL program, independent of the ballcl library, that measures\n"
               "the limits ballcl's figures are held against (docs/PERFORMANCE.md): the\n"
               "launch rate of a one-step kernel at N = 100000 with and without profiling and\n"
               "against the local size, the host cost of an enqueue, the same steps replayed\n"
               "from a command buffer (cl_khr_command_buffer, where the device has it), fused\n"
               "kernels at N = 16000000, and copy bandwidth against the one-step kernel at\n"
               "N = BIG-N (default 64000000: two buffers of 1 GiB).\n\n"
               "  DEVICE   a case-insensitive part of the device name or platform version\n"
               "           (default: the first device)\n"
               "  BIG-N    balls of the copy figure, 1024 to 1000000000\n\n"
               "Prints one 'name value' line per figure. Exit status: 0 done, 2 usage error\n"
               "or no such device, 3 an OpenCL call failed (named, with its status).\n");
}

static const char *src =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void one_step(__global float4 *s, uint n) {\n"
    "  size_t i = get_global_id(0); if (i >= n) return;\n"
    "  float4 b = s[i]; b.x = b.x + b.z; b.y = b.y + b.w; b.z = b.z + b.w; s[i] = b; }\n"
    "#define FUSED(NAME, UNROLL) __kernel void NAME(__global float4 *s, uint n, uint k) {\\\n"
    "  size_t i = get_global_id(0); if (i >= n) return;\\\n"
    "  float x = s[i].x, y = s[i].y, z = s[i].z, w = s[i].w;\\\n"
    "  UNROLL for (uint j = 0; j < k; j++) { x = x + z; y = y + w; z = z + w; }\\\n"
    "  s[i] = (float4)(x, y, z, w); }\n"
    "FUSED(fused_plain, )\n"
    "FUSED(fused_u8, __attribute__((opencl_unroll_hint(8))))\n"
    "FUSED(fused_u32, __attribute__((opencl_unroll_hint(32))))\n";

/* Host microseconds per launch of 2000 back-to-back launches, the median
 * of `repeats` (at most 8); with strict 0 a failed enqueue (a local size the
 * kernel cannot take) ends its repeat instead of the program. */
static double launches_us(cl_command_queue q, cl_kernel k, size_t global, size_t local, int repeats,
                          int strict)
{
    double v[8];
    for (int rep = 0; rep < repeats; rep++) {
        CHECK(clFinish(q));
        double t0 = now_us();
        for (int i = 0; i < 2000; i++) {
            cl_int st = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL);
            if (st && !strict)
                break;
            check(st, "clEnqueueNDRangeKernel", __LINE__);
        }
        CHECK(clFinish(q));
        v[rep] = (now_us() - t0) / 2000;
    }
    return median(v, (size_t)repeats);
}

static double event_ms(cl_event a, cl_event b)
{
    cl_ulong t0, t1;
    CHECK(clGetEventProfilingInfo(a, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
    CHECK(clGetEventProfilingInfo(b, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
    return (double)(t1 - t0) / 1e6;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {
        fprintf(stderr, "clprobe: unexpected argument '%s'\n", argv[argc > 3 ? 3 : 1]);
        usage(stderr);
        return 2;
    }
    const char *want = argc > 1 ? argv[1] : "";
    size_t big = 64000000;
    if (argc > 2) {
        char *end;
        unsigned long long v = strtoull(argv[2], &end, 10);
        if (end == argv[2] || *end || argv[2][0] == '-' || v < 1024 || v > 1000000000ULL) {
            fprintf(stderr,
                    "clprobe: BIG-N '%s': expected a number of balls from 1024 to "
                    "1000000000\n",
                    argv[2]);
            return 2;
        }
        big = (size_t)v;
    }
    cl_platform_id plats[16];
    cl_uint np = 0;
    cl_int pst = clGetPlatformIDs(16, plats, &np);
    if (pst == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (pst == CL_SUCCESS && np == 0)) {
        fprintf(stderr, "clprobe: no OpenCL platform found\n");
        return 3;
    }
    CHECK(pst);
    if (np > 16)
        np = 16;
    cl_device_id dev = NULL;
    char name[256] = "";
    for (cl_uint p = 0; p < np && !dev; p++) {
        cl_device_id ids[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, ids, &nd) != CL_SUCCESS)
            continue;
        for (cl_uint d = 0; d < nd && !dev; d++) {
            char pn[256];
            clGetDeviceInfo(ids[d], CL_DEVICE_NAME, sizeof name, name, NULL);
            clGetPlatformInfo(plats[p], CL_PLATFORM_VERSION, sizeof pn, pn, NULL);
            if (strcasestr(name, want) || strcasestr(pn, want))
                dev = ids[d];
        }
    }
    if (!dev) {
        fprintf(stderr, "clprobe: no device matches '%s'\n", want);
        return 2;
    }
    printf("device %s\n", name);
    cl_int st;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &st);
    CHECK(st);
    cl_queue_properties prof[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue qp = clCreateCommandQueueWithProperties(ctx, dev, prof, &st);
    CHECK(st);
    cl_command_queue qn = clCreateCommandQueueWithProperties(ctx, dev, NULL, &st);
    CHECK(st);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &st);
    CHECK(st);
    CHECK(clBuildProgram(prog, 1, &dev, "-cl-std=CL1.2", NULL, NULL));
    cl_kernel kstep = clCreateKernel(prog, "one_step", &st);
    CHECK(st);

    /* Launch rate at the seed's N. */
    size_t n = 100000, local = 256, global = (n + local - 1) / local * local;
    cl_uint n32 = (cl_uint)n;
    cl_mem small = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 16, NULL, &st);
    CHECK(st);
    float zero[4] = {0};
    CHECK(clEnqueueFillBuffer(qp, small, zero, 16, 0, n * 16, 0, NULL, NULL));
    CHECK(clSetKernelArg(kstep, 0, sizeof small, &small));
    CHECK(clSetKernelArg(kstep, 1, sizeof n32, &n32));
    for (int q = 0; q < 2; q++)
        printf("launch_us_per_step_n100000_%s %.3f\n", q ? "noprofiling" : "profiling",
               launches_us(q ? qn : qp, kstep, global, local, 7, 1));

    /* Launch rate against the local size (profiling queue). */
    size_t locals[] = {64, 128, 512, 1024};
    for (int li = 0; li < 4; li++) {
        size_t l = locals[li], g = (n + l - 1) / l * l;
        printf("launch_us_per_step_n100000_local%zu %.3f\n", l, launches_us(qp, kstep, g, l, 5, 0));
    }
    /* Host cost of an enqueue alone (the queue may still be busy). */
    {
        CHECK(clFinish(qn));
        double t0 = now_us();
        for (int i = 0; i < 2000; i++)
            CHECK(clEnqueueNDRangeKernel(qn, kstep, 1, NULL, &global, &local, 0, NULL, NULL));
        double t1 = now_us();
        CHECK(clFinish(qn));
        printf("enqueue_only_us %.3f\n", (t1 - t0) / 2000);
    }
    /* The same steps recorded once into a command buffer and replayed.
     * A command buffer made without CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR
     * may not be enqueued while an earlier enqueue of it is still pending:
     * clEnqueueCommandBufferKHR then fails with CL_INVALID_OPERATION (-59),
     * which is what enqueueing one buffer of 100 steps 20 times back to back
     * did on PoCL. So one buffer holds all 2000 steps, replayed once per
     * repeat, and the queue is drained before the next replay. */
    char ext[16384] = "";
    clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
    printf("has_cl_khr_command_buffer %d\n", strstr(ext, "cl_khr_command_buffer") != NULL);
    if (strstr(ext, "cl_khr_command_buffer")) {
        cl_platform_id plat;
        CHECK(clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL));
#define EXT(name) (name##_fn) clGetExtensionFunctionAddressForPlatform(plat, #name)
        clCreateCommandBufferKHR_fn create = EXT(clCreateCommandBufferKHR);
        clCommandNDRangeKernelKHR_fn record = EXT(clCommandNDRangeKernelKHR);
        clFinalizeCommandBufferKHR_fn finalize = EXT(clFinalizeCommandBufferKHR);
        clEnqueueCommandBufferKHR_fn enqueue = EXT(clEnqueueCommandBufferKHR);
#undef EXT
        if (create && record && finalize && enqueue) {
            cl_command_buffer_khr cb = create(1, &qp, NULL, &st);
            CHECK(st);
            cl_sync_point_khr prev = 0, sp;
            for (int i = 0; i < 2000; i++) {
                CHECK(record(cb, NULL, NULL, kstep, 1, NULL, &global, &local, i ? 1 : 0,
                             i ? &prev : NULL, &sp, NULL));
                prev = sp;
            }
            CHECK(finalize(cb));
            double v[5];
            for (int rep = 0; rep < 6; rep++) {
                CHECK(clFinish(qp));
                double t0 = now_us();
                CHECK(enqueue(0, NULL, cb, 0, NULL, NULL));
                CHECK(clFinish(qp));
                if (rep)
                    v[rep - 1] = (now_us() - t0) / 2000;
            }
            printf("command_buffer_us_per_step_n100000 %.3f\n", median(v, 5));
        }
    }

    /* Fused kernels at 16M balls. */
    size_t nf = 16000000, gf = (nf + local - 1) / local * local;
    cl_uint nf32 = (cl_uint)nf;
    cl_mem fb = clCreateBuffer(ctx, CL_MEM_READ_WRITE, nf * 16, NULL, &st);
    CHECK(st);
    float init[4] = {1.0f, 2.0f, 1e-3f, 1e-7f};
    CHECK(clEnqueueFillBuffer(qp, fb, init, 16, 0, nf * 16, 0, NULL, NULL));
    const char *variants[] = {"fused_plain", "fused_u8", "fused_u32"};
    for (int vi = 0; vi < 3; vi++) {
        cl_kernel kf = clCreateKernel(prog, variants[vi], &st);
        CHECK(st);
        cl_uint k = 1000;
        CHECK(clSetKernelArg(kf, 0, sizeof fb, &fb));
        CHECK(clSetKernelArg(kf, 1, sizeof nf32, &nf32));
        CHECK(clSetKernelArg(kf, 2, sizeof k, &k));
        double v[5];
        for (int rep = 0; rep < 6; rep++) {
            cl_event ev;
            CHECK(clEnqueueNDRangeKernel(qp, kf, 1, NULL, &gf, &local, 0, NULL, &ev));
            CHECK(clWaitForEvents(1, &ev));
            if (rep > 0)
                v[rep - 1] = event_ms(ev, ev);
            clReleaseEvent(ev);
        }
        printf("%s_k1000_ball_steps_per_s %.4e\n", variants[vi],
               (double)nf * k / (median(v, 5) * 1e-3));
        clReleaseKernel(kf);
    }
    clReleaseMemObject(fb);

    /* Copy bandwidth against the one-step kernel on the same bytes. */
    cl_uint big32 = (cl_uint)big;
    size_t gb = (big + local - 1) / local * local;
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, big * 16, NULL, &st);
    CHECK(st);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, big * 16, NULL, &st);
    CHECK(st);
    CHECK(clEnqueueFillBuffer(qp, a, init, 16, 0, big * 16, 0, NULL, NULL));
    CHECK(clSetKernelArg(kstep, 0, sizeof a, &a));
    CHECK(clSetKernelArg(kstep, 1, sizeof big32, &big32));
    double vc[9], vs[9];
    for (int rep = 0; rep < 10; rep++) {
        cl_event e1, e2;
        CHECK(clEnqueueCopyBuffer(qp, a, b, 0, 0, big * 16, 0, NULL, &e1));
        CHECK(clEnqueueNDRangeKernel(qp, kstep, 1, NULL, &gb, &local, 0, NULL, &e2));
        CHECK(clFinish(qp));
        if (rep > 0) {
            vc[rep - 1] = event_ms(e1, e1);
            vs[rep - 1] = event_ms(e2, e2);
        }
        clReleaseEvent(e1);
        clReleaseEvent(e2);
    }
    double bytes = 2.0 * (double)big * 16;
    double copy = bytes / (median(vc, 9) * 1e-3) / 1e9, step = bytes / (median(vs, 9) * 1e-3) / 1e9;
    printf("copy_gb_per_s_n%zu %.1f\nstep_gb_per_s_n%zu %.1f\nstep_over_copy %.3f\n", big, copy,
           big, step, step / copy);
    return 0;
}
