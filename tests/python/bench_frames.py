#!/usr/bin/env python3
"""The seed's Python frame loop, side by side in one run (docs/PYTHON.md,
"Frame loops"): N balls, 20 frames of 100 steps, the state read back to a
NumPy array after every frame; ms per frame, the median of 5 interleaved
repeats. A script, not a test: it asserts no timing.

Rows (each repeat starts from the same initial state and uploads it):
  cupy single steps    the seed answer's RawKernel (block 256), one launch per
                       step, then cupy.asnumpy            (only with CuPy)
  cupy K-step kernel   a 100-step RawKernel, one launch per frame, then
                       cupy.asnumpy                       (only with CuPy)
  ballcl Context       ctx.run(100, state=s, validate=False), the context made
                       once before the timing (as CuPy's module is compiled
                       once): its creation is reported apart
  ballcl Context out=  ctx.run(100, out=buf, validate=False) into one array
  ballcl.run           ballcl.run(s, 100, device=..., validate=False), from the
                       second call on (the process-wide context exists)

Checks: every final state bit-identical to CuPy's (when present) and to the
C reference: a Context loop with validate=True compares every frame with the
library's C reference, and its final state is the one all rows must give.

Usage: bench_frames.py N [--device SEL] [--frames 20] [--steps 100]
                         [--repeats 5] [--json FILE] [--no-cupy]
Run with the module importable (PYTHONPATH=build/python) and, in the build
tree, BALLCL_KERNEL_DIR set by ballcl itself. Exit 1 when any state differs.
"""
import argparse
import datetime
import json
import platform
import statistics
import sys
import time

import numpy as np

import ballcl

p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
p.add_argument("n", type=int, help="balls")
p.add_argument("--device", default="gpu", help="ballcl device selector (default gpu)")
p.add_argument("--frames", type=int, default=20)
p.add_argument("--steps", type=int, default=100)
p.add_argument("--repeats", type=int, default=5)
p.add_argument("--json", help="write the figures here")
p.add_argument("--no-cupy", action="store_true", help="leave CuPy out even when importable")
args = p.parse_args()
N, FRAMES, STEPS = args.n, args.frames, args.steps

cp = None
if not args.no_cupy:
    try:
        import cupy as cp
    except ImportError:
        cp = None

rng = np.random.default_rng(7)
s0 = np.empty((N, 4), np.float32)
s0[:, 0] = rng.integers(0, 100, N) * 800
s0[:, 1] = rng.integers(0, 100, N) * 600
s0[:, 2] = rng.standard_normal(N)
s0[:, 3] = rng.standard_normal(N) * 1e-3

ways = {}
if cp is not None:
    # The seed update (docs/MODELS.md) in CUDA, rounding each add to nearest
    # as OpenCL's float adds do, without contraction.
    src = r'''extern "C" __global__ void step(float4* b, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x; if (i >= n) return; float4 v = b[i];
  v.x = __fadd_rn(v.x, v.z); v.y = __fadd_rn(v.y, v.w); v.z = __fadd_rn(v.z, v.w); b[i] = v; }
extern "C" __global__ void steps(float4* b, int n, int k) {
  int i = blockDim.x * blockIdx.x + threadIdx.x; if (i >= n) return; float4 v = b[i];
  for (int j = 0; j < k; j++) {
    v.x = __fadd_rn(v.x, v.z); v.y = __fadd_rn(v.y, v.w); v.z = __fadd_rn(v.z, v.w); }
  b[i] = v; }'''
    mod = cp.RawModule(code=src)
    k1, kk = mod.get_function("step"), mod.get_function("steps")
    grid = ((N + 255) // 256,)

    def cupy_single():
        b = cp.asarray(s0)
        out = None
        for _ in range(FRAMES):
            for _ in range(STEPS):
                k1(grid, (256,), (b, np.int32(N)))
            out = cp.asnumpy(b)
        return out

    def cupy_fused():
        b = cp.asarray(s0)
        out = None
        for _ in range(FRAMES):
            kk(grid, (256,), (b, np.int32(N), np.int32(STEPS)))
            out = cp.asnumpy(b)
        return out

    ways["cupy single steps"] = cupy_single
    ways["cupy K-step kernel"] = cupy_fused

t0 = time.perf_counter()
ctx = ballcl.Context(device=args.device)
context_ms = (time.perf_counter() - t0) * 1e3
last = {}


def ballcl_context():
    s, r = ctx.run(STEPS, state=s0, validate=False)
    for _ in range(FRAMES - 1):
        s, r = ctx.run(STEPS, state=s, validate=False)
    last["context"] = r
    return s


ways["ballcl Context"] = ballcl_context

try:  # out= is new: a module without it still gives the other rows
    ctx.run(1, state=s0[:1].copy(), out=np.empty((1, 4), np.float32), validate=False)
    has_out = True
except TypeError:
    has_out = False
if has_out:
    buf = np.empty_like(s0)

    def ballcl_context_out():
        ctx.run(STEPS, state=s0, validate=False, out=buf)
        for _ in range(FRAMES - 1):
            ctx.run(STEPS, validate=False, out=buf)
        return buf  # no other row writes it: compared after the timing

    ways["ballcl Context out="] = ballcl_context_out


def ballcl_run():
    s = s0
    for _ in range(FRAMES):
        s, r = ballcl.run(s, STEPS, device=args.device, validate=False)
    last["run"] = r
    return s


ways["ballcl.run"] = ballcl_run

# The reference: every frame checked against the C reference by the library
# (MismatchError otherwise), on a context of its own.
with ballcl.Context(device=args.device) as vctx:
    ref, vr = vctx.run(STEPS, state=s0)
    for _ in range(FRAMES - 1):
        ref, vr = vctx.run(STEPS, state=ref)
    device_name, device_platform = vr.device["name"], vr.device["platform"]
ref_bits = np.asarray(ref).view(np.uint32)

for w in ways.values():  # warm-up: compiles, first launches, the cached context
    w()
times = {k: [] for k in ways}
outs = {}
for rep in range(args.repeats):
    for k, w in ways.items():
        t = time.perf_counter()
        outs[k] = w()
        times[k].append((time.perf_counter() - t) * 1e3 / FRAMES)

cupy_ref = outs.get("cupy single steps")
ok = True
rows = []
print(f"N = {N}, {FRAMES} frames of {STEPS} steps, state read back after each frame; "
      f"device {device_name!r} ({device_platform}); median of {args.repeats} interleaved repeats")
print(f"{'':22s} {'ms/frame':>9s} {'min':>8s}  same bits as C ref{'  as CuPy' if cp else ''}")
for k in ways:
    b = np.asarray(outs[k]).view(np.uint32)
    same_ref = bool(np.array_equal(b, ref_bits))
    same_cupy = None if cupy_ref is None else bool(np.array_equal(b, cupy_ref.view(np.uint32)))
    ok = ok and same_ref and same_cupy is not False
    med = statistics.median(times[k])
    rows.append({"way": k, "ms_per_frame": med, "min_ms_per_frame": min(times[k]),
                 "all_ms_per_frame": times[k], "same_bits_as_c_reference": same_ref,
                 "same_bits_as_cupy": same_cupy})
    print(f"{k:22s} {med:9.3f} {min(times[k]):8.3f}  {same_ref!s:>17s}"
          + ("" if same_cupy is None else f"  {same_cupy!s:>8s}"))
med = {r["way"]: r["ms_per_frame"] for r in rows}
ratios = {}
if "cupy K-step kernel" in med:
    ratios["context_over_cupy_k_step"] = med["ballcl Context"] / med["cupy K-step kernel"]
ratios["run_over_context"] = med["ballcl.run"] / med["ballcl Context"]
for k, v in ratios.items():
    print(f"{k:30s} {v:.2f}")
rc = last["context"]
print(f"Context creation (once, outside the timing) {context_ms:.1f} ms; a Context frame: "
      f"{rc.timing['device_ms'] * 1e3:.1f} us of device time, read back into "
      f"{rc.as_dict().get('readback', {}).get('memory', 'pageable')} memory")
if hasattr(ballcl, "cached"):
    print(f"ballcl.cached(): {ballcl.cached()}")
if args.json:
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": " ".join([sys.executable] + sys.argv), "n": N, "frames": FRAMES,
           "steps": STEPS, "repeats": args.repeats, "device": device_name,
           "platform": device_platform, "python": platform.python_version(),
           "numpy": np.__version__, "cupy": None if cp is None else cp.__version__,
           "ballcl": ballcl.version, "context_create_ms": context_ms,
           "context_frame_device_us": rc.timing["device_ms"] * 1e3,
           "rows": rows, "ratios": ratios, "all_bits_identical": ok}
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1)
ctx.close()
if not ok:
    print("FAIL: a final state differs", file=sys.stderr)
sys.exit(0 if ok else 1)
