"""Device test: `ballcl run --model bounce --input/--output` agrees bit for bit
with an independent NumPy implementation of docs/MODELS.md (bounce_reference.py),
on fresh random states (positions inside and outside the box, velocities of
every sign and magnitude) for parameters at and near every limit, with one
step per launch and with fused launches; and every ball ends inside the box
with finite velocities.

The states are drawn anew on every run from a printed seed (set
BALLCL_TEST_SEED to repeat one). Exits 77 (skipped) when there is no OpenCL
device.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

import bounce_reference as ref

BALLCL = os.environ["BALLCL"]

# Parameter sets, as command-line texts: the defaults, restitution 0 and 1, a
# huge time step, |g*dt| at its limit both ways, tiny and huge boxes.
CASES = [
    {},
    {"restitution": "0"},
    {"restitution": "1"},
    {"dt": "1e30", "gravity": "1"},
    {"dt": "1e10", "gravity": "-1e20", "box": "1e38,1e-30"},
    {"dt": "0.5", "gravity": "0", "box": "1,1", "restitution": "0.5"},
    {"dt": "1e-30", "gravity": "3.3333333", "box": "3.3333333,7.7", "restitution": "1"},
    {"dt": "0.016666668", "gravity": "5.9e31", "box": "800,600", "restitution": "0.25"},
    {"dt": "0.25", "gravity": "-0", "box": "2,3", "restitution": "0"},
]


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


def ballcl_run(args):
    r = subprocess.run([BALLCL, "run", "--model", "bounce"] + args, capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: ballcl run {' '.join(args)} exited {r.returncode}\n{r.stdout}{r.stderr}")
    return r.stdout


def main():
    if subprocess.run([BALLCL, "devices"], capture_output=True).returncode == 3:
        print("no OpenCL device: skipped")
        return 77
    seed = int(os.environ.get("BALLCL_TEST_SEED", "0")) or int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed} (BALLCL_TEST_SEED={seed} repeats this run)")
    rng = np.random.default_rng(seed)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = os.path.join(tmp, "in.npy"), os.path.join(tmp, "out.npy")
        for case in CASES:
            p = ref.params(**case)
            dt, g, w, h, e = p
            opts = [f"--{k}={v}" for k, v in case.items()]
            s0 = ref.random_state(rng, 1500, w, h)
            np.save(inp, s0)
            for steps in (1, 23):
                want = ref.run(s0, p, steps)
                for k in (1, 5):
                    args = opts + ["--input", inp, "--output", out, "-s", str(steps),
                                   "--steps-per-launch", str(k)]
                    stdout = ballcl_run(args)
                    assert "bit-identical" in stdout, stdout
                    got = np.load(out)
                    assert got.dtype == np.float32 and got.shape == s0.shape
                    bad = np.nonzero((bits(got) != bits(want)).any(axis=1))[0]
                    label = f"{' '.join(opts) or 'defaults'}, {steps} steps, K={k}"
                    if bad.size:
                        failures += 1
                        i = bad[0]
                        print(f"FAIL {label}: {bad.size} balls differ from NumPy; ball {i}: "
                              f"from {s0[i].tolist()} want {want[i].tolist()} "
                              f"got {got[i].tolist()}")
                        continue
                    # Inside the box whatever the parameters, velocities finite.
                    inside = ((got[:, 0] >= 0) & (got[:, 0] <= w) & (got[:, 1] >= 0)
                              & (got[:, 1] <= h) & np.isfinite(got[:, 2:]).all(axis=1))
                    if not inside.all():
                        failures += 1
                        i = np.nonzero(~inside)[0][0]
                        print(f"FAIL {label}: ball {i} left the box: {got[i].tolist()}")
                        continue
                    print(f"ok   {label}: {len(got)} balls bit-identical to NumPy, all in the box")
    if failures:
        print(f"{failures} failures (seed {seed})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
