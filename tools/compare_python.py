#!/usr/bin/python3
"""ballcl beside what a Python user would otherwise write (docs/PYTHON.md,
"ballcl, PyOpenCL and CuPy"): the seed update (x += z; y += w; z += w) of N
balls for S steps, handed from NumPy to the device and back.

  NumPy           the update on the host, in float32 (also the reference)
  ballcl.run      one call: context from the binary cache, upload, the steps,
                  read-back (validate=False: the check is timed apart)
  ballcl.Context  the same with the context and program kept: upload, steps,
                  read-back
  PyOpenCL        a competent user's best: context, queue and program kept,
                  one float4 per work-item, K steps per launch in registers;
                  upload, S/K launches, read-back (when pyopencl imports)
  CuPy naive      x += z; y += w; z += w on column views, 3 kernels a step
  CuPy kernel     a RawKernel like the PyOpenCL one, K steps per launch
                  (both when cupy imports and has a GPU)

Every method's final state is compared bit for bit with NumPy's; a method
that differs is reported, never timed as if it were right. Each time is the
median (and range) of R repeats of the whole hand-over, interleaved.

  PYTHONPATH=build/python /usr/bin/python3 tools/compare_python.py [-d DEV] [-n N]
      [-s S] [-k K] [-r R]
"""
import argparse
import statistics
import sys
import time

import numpy as np

import ballcl

OPENCL_SRC = """
__kernel void steps(__global float4 *s, uint k)
{
    size_t i = get_global_id(0);
    float4 b = s[i];
    for (uint j = 0; j < k; j++) {
        b.x = b.x + b.z;
        b.y = b.y + b.w;
        b.z = b.z + b.w;
    }
    s[i] = b;
}
"""
CUDA_SRC = r"""
extern "C" __global__ void steps(float4 *s, unsigned n, unsigned k)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float4 b = s[i];
    for (unsigned j = 0; j < k; j++) {
        b.x = __fadd_rn(b.x, b.z);
        b.y = __fadd_rn(b.y, b.w);
        b.z = __fadd_rn(b.z, b.w);
    }
    s[i] = b;
}
"""


def seed_steps(x, y, z, w, steps):
    """The update in place, on NumPy's or CuPy's arrays."""
    for _ in range(steps):
        x += z
        y += w
        z += w


def numpy_steps(s, steps):
    x, y, z, w = (s[:, c].copy() for c in range(4))
    seed_steps(x, y, z, w, steps)
    return np.stack([x, y, z, w], axis=1)


def launches(steps, k):
    """The steps of each launch, K at most, S in all."""
    return [min(k, steps - done) for done in range(0, steps, k)]


def pyopencl_method(dev, n, steps, k):
    try:
        import pyopencl as cl
    except ImportError as e:
        return None, f"not installed ({e})"
    match = [d for p in cl.get_platforms() for d in p.get_devices()
             if d.name.strip() == dev["name"].strip() and p.name.strip() == dev["platform"].strip()]
    if not match:
        return None, f"PyOpenCL does not list '{dev['name']}'"
    ctx = cl.Context([match[0]])
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, OPENCL_SRC).build()
    kern = prg.steps
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, size=n * 16)

    def run(state):
        out = np.empty_like(state)
        cl.enqueue_copy(queue, buf, state)
        for now in launches(steps, k):
            kern(queue, (n,), None, buf, np.uint32(now))
        cl.enqueue_copy(queue, out, buf)
        queue.finish()
        return out
    return run, f"PyOpenCL {cl.VERSION_TEXT}, K = {k}, local size the driver's"


def cupy_methods(n, steps, k):
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # no CuPy, or no CUDA device
        return [], f"not available ({type(e).__name__}: {e})"
    kern = cp.RawKernel(CUDA_SRC, "steps")

    def naive(state):
        s = cp.asarray(state)
        seed_steps(s[:, 0], s[:, 1], s[:, 2], s[:, 3], steps)
        return cp.asnumpy(s)

    def kernel(state):
        s = cp.asarray(state)
        for now in launches(steps, k):
            kern(((n + 255) // 256,), (256,), (s, np.uint32(n), np.uint32(now)))
        out = cp.asnumpy(s)
        cp.cuda.Stream.null.synchronize()
        return out
    return [("CuPy naive", naive), ("CuPy kernel", kernel)], f"CuPy {cp.__version__}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-d", "--device", default=None)
    ap.add_argument("-n", "--balls", type=int, default=1_000_000)
    ap.add_argument("-s", "--steps", type=int, default=1000)
    ap.add_argument("-k", "--steps-per-launch", type=int, default=100)
    ap.add_argument("-r", "--repeats", type=int, default=7)
    a = ap.parse_args()
    n, steps = a.balls, a.steps
    rng = np.random.default_rng(1)
    state = np.zeros((n, 4), np.float32)
    state[:, 0] = rng.integers(0, 100, n) * 8.0
    state[:, 1] = rng.integers(0, 100, n) * 6.0
    state[:, 2] = rng.uniform(-1, 1, n).astype(np.float32)
    state[:, 3] = rng.uniform(-0.01, 0.01, n).astype(np.float32)

    t0 = time.perf_counter()
    want = numpy_steps(state, steps)
    numpy_ms = (time.perf_counter() - t0) * 1e3
    _, r = ballcl.run(state, steps, device=a.device)  # checked against the C reference
    dev = next(d for d in ballcl.devices() if d["selector"] == r.device["selector"])
    print(f"device {dev['name']} ({dev['platform']}, {dev['selector']}); {n} balls x {steps} "
          f"steps; ballcl {ballcl.__version__}, NumPy {np.__version__}, Python "
          f"{sys.version.split()[0]}; ballcl.run validation against the C reference: "
          f"{r.validation['passed']}")

    ctx = ballcl.Context(device=a.device)
    methods = [("ballcl.run", lambda s: ballcl.run(s, steps, device=a.device, validate=False)[0]),
               ("ballcl.Context", lambda s: np.array(ctx.run(steps, state=s, validate=False)[0]))]
    ocl, ocl_note = pyopencl_method(dev, n, steps, a.steps_per_launch)
    methods += [("PyOpenCL", ocl)] if ocl else []
    cupy, cupy_note = cupy_methods(n, steps, a.steps_per_launch)
    methods += cupy

    laps = {name: [] for name, _ in methods}
    equal = {}
    for name, fn in methods:  # a first call each: builds, caches, allocations
        out = fn(state)
        equal[name] = bool(np.array_equal(out.view(np.uint32), want.view(np.uint32)))
    for _ in range(a.repeats):  # then interleaved repeats
        for name, fn in methods:
            t0 = time.perf_counter()
            fn(state)
            laps[name].append((time.perf_counter() - t0) * 1e3)
    ctx.close()
    print(f"PyOpenCL: {ocl_note}\nCuPy: {cupy_note}")
    print(f"{'method':16} {'median ms':>10} {'range ms':>20} {'us/step':>9} {'vs ballcl.run':>14}  "
          "bits = NumPy")
    base = statistics.median(laps["ballcl.run"])
    print(f"{'NumPy (host)':16} {numpy_ms:10.2f} {'(one run)':>20} {numpy_ms * 1e3 / steps:9.2f} "
          f"{numpy_ms / base:13.2f}x  reference")
    for name, _ in methods:
        med = statistics.median(laps[name])
        rng_txt = f"{min(laps[name]):.2f}..{max(laps[name]):.2f}"
        print(f"{name:16} {med:10.2f} {rng_txt:>20} {med * 1e3 / steps:9.2f} {med / base:13.2f}x  "
              f"{equal[name]}")
    return 0 if all(equal.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
