"""ballcl against an independent NumPy implementation of docs/MODELS.md.

The NumPy model is written from the specification alone: float32 arrays,
one step for all balls at a time, x = x + z; y = y + w; z = z + w (x uses the
old z). Inputs are made by NumPy's own generator (not by ballcl), with w
never zero and values of mixed sign and magnitude, saved with np.save and
run through 'ballcl run --input ... --output ...'; the final states must
agree bit for bit. ballcl's own --init random and --init seed states are
stepped by NumPy too. Exits 77 when there is no device."""

import os

import numpy as np

import testlib
from bounce_reference import seed_reference as numpy_steps  # docs/MODELS.md in NumPy
from testlib import check, run

dev = testlib.require_device()
tmp = testlib.tempdir()


def numpy_wrong_order(state, steps):
    """The classic slip: x takes the new z. Used only to show that the
    inputs tell the two apart."""
    x, y, z, w = (state[:, c].copy() for c in range(4))
    for _ in range(steps):
        z = z + w
        x = x + z
        y = y + w
    return np.stack([x, y, z, w], axis=1)


def random_state(rng, n):
    """Mixed sign and magnitude (2^-20 to 2^20), w never zero; a few rows of
    edge cases: signed zeros in x, y, z, values at 2^24 where adding 1
    rounds, and z = -w so that z passes through zero."""
    mant = rng.uniform(1.0, 2.0, size=(n, 4))
    expo = rng.integers(-20, 21, size=(n, 4))
    sign = rng.choice([-1.0, 1.0], size=(n, 4))
    s = (sign * np.ldexp(mant, expo)).astype(np.float32)
    if n >= 8:
        s[0, :3] = [0.0, -0.0, -0.0]
        s[1] = [2.0**24, -(2.0**24), 1.0, 1.0]
        s[2, 2] = -s[2, 3] * 3
        s[3] = [1e-3, 1e3, -1e-3, 7.0]
    assert np.all(s[:, 3] != 0)
    return s


def same_bits(a, b):
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


def first_difference(a, b):
    bad = np.nonzero(a.view(np.uint32) != b.view(np.uint32))
    if len(bad[0]) == 0:
        return ""
    i = bad[0][0]
    return f"{len(bad[0])} floats differ; first at ball {i}: want {b[i]!r} got {a[i]!r}"


def ballcl_final(args, out_name):
    """Runs ballcl with args and --output, returns the saved state or None."""
    out = os.path.join(tmp, out_name)
    r = run(["run", "-d", dev, "--output", out] + args)
    if not check(r.rc == 0 and os.path.exists(out), f"ballcl run {' '.join(map(str, args))} exits 0",
                 r.describe()):
        return None
    got = np.load(out)
    check(got.dtype == np.dtype("<f4") and got.ndim == 2 and got.shape[1] == 4
          and got.flags.c_contiguous, f"{out_name} is an (N, 4) <f4 array",
          f"{got.dtype} {got.shape}")
    return got


# ---- NumPy-made inputs --------------------------------------------------------
rng = np.random.default_rng(20261202)
for n, steps in ((1, 1), (8, 100), (1000, 37), (4099, 250), (100003, 20)):
    state = random_state(rng, n)
    path = os.path.join(tmp, f"in{n}.npy")
    np.save(path, state)
    want = numpy_steps(state, steps)
    got = ballcl_final(["--input", path, "-s", steps], f"out{n}.npy")
    if got is not None:
        check(same_bits(got, want),
              f"--input N={n}, {steps} steps: bit-identical to NumPy", first_difference(got, want))
    # The inputs are discriminating: the wrong order and one step too few
    # give other bits, so agreement above means something.
    check(not same_bits(numpy_wrong_order(state, steps), want),
          f"N={n}: the wrong update order would be caught")
    check(not same_bits(numpy_steps(state, steps - 1), want), f"N={n}: a missing step would be caught")
    # The input file is not touched.
    check(same_bits(np.load(path), state), f"N={n}: the input file is unchanged")

# Steps per launch through the same path.
state = random_state(rng, 777)
path = os.path.join(tmp, "in777.npy")
np.save(path, state)
got = ballcl_final(["--input", path, "-s", 61, "--steps-per-launch", 8, "--local", "24"],
                   "out777.npy")
if got is not None:
    want = numpy_steps(state, 61)
    check(same_bits(got, want), "--input N=777, 61 steps, 8 per launch, local 24: as NumPy",
          first_difference(got, want))

# ---- ballcl's own initial states ----------------------------------------------
for init, n, seed, steps in (("random", 1000, 7, 45), ("seed", 500, 3, 33)):
    common = ["-n", n, "--init", init, "--seed", seed]
    start = ballcl_final(common + ["-s", 0], f"{init}-start.npy")
    final = ballcl_final(common + ["-s", steps], f"{init}-final.npy")
    if start is None or final is None:
        continue
    want = numpy_steps(start, steps)
    check(same_bits(final, want), f"--init {init}: {steps} steps bit-identical to NumPy",
          first_difference(final, want))
    if init == "random":
        ok = (np.all(np.isfinite(start)) and np.all(start[:, 3] != 0)
              and np.any(start < 0) and np.any(start > 0)
              and np.ptp(np.log2(np.abs(start))) > 10)
        check(ok, "--init random: finite, w != 0, mixed sign and magnitude")
        check(not same_bits(numpy_wrong_order(start, steps), want),
              "--init random: the wrong update order would be caught")
    else:
        ok = (np.all(start[:, 0] % 800 == 0) and np.all(start[:, 1] % 600 == 0)
              and np.all(start[:, 0] < 80000) and np.all(start[:, 1] < 60000)
              and np.all(start[:, 2] == 1) and np.all(start[:, 3] == 0))
        check(ok, "--init seed: the seed's grid, z = 1, w = 0")

testlib.finish()
