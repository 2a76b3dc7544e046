#!/usr/bin/python3
"""The seed's program, done right with ballcl.

The seed moved its ball update (x += z; y += w; z += w over 100000 balls) to
the GPU and got slower: one work-item per work-group, a hand-written launch,
and a wait and a print after every step. Here the program keeps its NumPy
state and hands the update to ballcl: the state stays on the device for all
the steps of a call, the launch is sized from the device, each call is
checked bit for bit against the C reference, and a Context keeps the device,
program and state between the frames of a loop.

    PYTHONPATH=build/python /usr/bin/python3 examples/seed_done_right.py [device]
"""
import sys
import time

import numpy as np
import numpy.typing as npt

import ballcl

N, STEPS, FRAMES = 100000, 1000, 10
device = sys.argv[1] if len(sys.argv) > 1 else None

# The seed's data: balls on a grid of an 800x600 window, moving right.
rng = np.random.default_rng(1)
state = np.zeros((N, 4), np.float32)
state[:, 0] = rng.integers(0, 100, N) * 800.0
state[:, 1] = rng.integers(0, 100, N) * 600.0
state[:, 2] = 1.0


def numpy_steps(s: npt.NDArray[np.float32], steps: int) -> npt.NDArray[np.float32]:
    """The update in NumPy on the host: the baseline, and the check."""
    x, y, z, w = (s[:, c].copy() for c in range(4))
    for _ in range(steps):
        x += z
        y += w
        z += w
    return np.stack([x, y, z, w], axis=1)


t0 = time.perf_counter()
want = numpy_steps(state, STEPS)
numpy_s = time.perf_counter() - t0

# One call: every step on the device, one wait at the end, and the result
# checked bit for bit against the C reference (on the host: most of the
# call's time). A second call, unchecked, shows what the device work costs.
t0 = time.perf_counter()
new, r = ballcl.run(state, STEPS, device=device)
checked_s = time.perf_counter() - t0
t0 = time.perf_counter()
again, r2 = ballcl.run(state, STEPS, device=device, validate=False)
call_s = time.perf_counter() - t0
print(f"device      {r.device['name']} ({r.device['platform']}, {r.device['selector']})")
launches = r.timing["launches"]
print(f"launch      {r.launch['steps_per_launch']} steps per launch, {launches} "
      f"launch{'' if launches == 1 else 'es'}, kernel variant '{r.launch['variant'] or 'base'}', "
      f"local {r.launch['local']}")
print(f"ballcl.run  {N} balls x {STEPS} steps: {r2.timing['us_per_step']:.2f} us/step on the "
      f"device; the call {call_s * 1e3:.0f} ms, {checked_s * 1e3:.0f} ms with the check")
print(f"NumPy       the same steps on the host: {numpy_s * 1e6 / STEPS:.2f} us/step")
print(f"validation  {r.validation['compared']} floats bit-identical to the C reference; "
      f"NumPy agrees: {np.array_equal(new.view(np.uint32), want.view(np.uint32))}")

# A loop that wants the state now and then (to draw it): the program is
# built once and the state stays on the device between frames.
with ballcl.Context(device=device) as ctx:
    s = state
    t0 = time.perf_counter()
    for frame in range(FRAMES):
        s, r = ctx.run(STEPS // FRAMES, state=s, validate=(frame == FRAMES - 1))
        if frame % 3 == 0:
            assert r.context is not None  # a Context call's Result has it
            print(f"frame {frame}     mean x {s[:, 0].mean():10.1f}  "
                  f"(uploaded: {r.context['uploaded']})")
    loop_s = time.perf_counter() - t0
    print(f"Context     {FRAMES} frames of {STEPS // FRAMES} steps in {loop_s * 1e3:.0f} ms: "
          f"{ctx.builds} program build, {ctx.uploads} upload, last frame checked: "
          f"{r.validation['passed']}")
print(f"same state as one call: {np.array_equal(s.view(np.uint32), new.view(np.uint32))}")
