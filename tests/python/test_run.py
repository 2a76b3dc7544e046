"""ballcl.run: results bit for bit against NumPy references of both models,
the Result's fields against `ballcl run --json`, and what it does with every
kind of state array."""
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

import ballcl
import bounce_reference as bref
from conftest import bits, mixed_state, seed_reference

SEED = int(os.environ.get("BALLCL_TEST_SEED", "0")) or int.from_bytes(os.urandom(4), "little")


def test_seed_printed():
    print(f"BALLCL_TEST_SEED={SEED} repeats these states")


@pytest.mark.parametrize("steps,spl,local", [
    (1, None, None), (1000, None, None), (37, 1, None), (37, 5, "driver"), (64, 16, 8),
    (0, None, None)])
def test_seed_bit_exact(dev, steps, spl, local):
    rng = np.random.default_rng(SEED + steps)
    s = mixed_state(rng, 10007)
    before = s.copy()
    new, r = ballcl.run(s, steps, device=dev, steps_per_launch=spl, local=local)
    assert new.dtype == np.float32 and new.shape == s.shape and new.flags.c_contiguous
    # Read-only, and cannot be made writable (passing it back is then a
    # continuation with no upload: test_frames.py).
    assert not new.flags.writeable
    with pytest.raises(ValueError):
        new.flags.writeable = True
    assert np.array_equal(bits(new), bits(seed_reference(s, steps)))
    assert np.array_equal(bits(s), bits(before)), "the input is left unchanged"
    v = r.validation
    assert v["performed"] and v["passed"] and v["compared"] == 4 * len(s) and v["max_ulp"] == 0
    if spl:
        assert r.launch["steps_per_launch"] == min(spl, max(steps, 1)) or steps == 0


@pytest.mark.parametrize("params", [
    None, {"restitution": 1.0}, {"restitution": 0}, {"dt": 0.5, "gravity": -3.5, "box": (2, 3)},
    {"box": [1e-30, 1e38], "dt": 1e10, "gravity": 1e20}])
@pytest.mark.parametrize("spl", [1, None])
def test_bounce_bit_exact(dev, params, spl):
    rng = np.random.default_rng(SEED + 1)
    p = dict(params or {})
    texts = {k: (",".join(repr(float(x)) for x in v) if isinstance(v, (tuple, list))
                 else repr(float(v))) for k, v in p.items()}
    ref_p = bref.params(**texts)
    w, h = float(ref_p[2]), float(ref_p[3])
    s = bref.random_state(rng, 4099, w, h)
    new, r = ballcl.run(s, 23, device=dev, model="bounce", params=params, steps_per_launch=spl)
    assert np.array_equal(bits(new), bits(bref.run(s, ref_p, 23)))
    assert r.model == "bounce" and r.validation["passed"]
    # By name, as `run --json` gives them (the box as a list).
    assert r.params == {"dt": float(ref_p[0]), "gravity": float(ref_p[1]),
                        "box": [float(ref_p[2]), float(ref_p[3])], "restitution": float(ref_p[4])}


def test_result_has_the_cli_fields(dev, tmp_path):
    """The Result holds what `ballcl run --json` prints, with the same keys."""
    exe = os.environ.get("BALLCL")
    if not exe:
        pytest.skip("BALLCL (the CLI) is not set: run through meson test")
    s = mixed_state(np.random.default_rng(5), 1000)
    np.save(tmp_path / "in.npy", s)
    cli = json.loads(subprocess.run([exe, "run", "-d", dev, "--input", str(tmp_path / "in.npy"),
                                     "-s", "10", "--json"], capture_output=True, text=True,
                                    check=True).stdout)
    _, r = ballcl.run(s, 10, device=dev)
    mine = r.as_dict()
    assert set(cli) - {"seed", "init"} <= set(mine)
    for key in ("device", "launch", "cache", "tuned", "timing", "validation"):
        assert set(cli[key]) <= set(mine[key]), key
    for key in ("device", "model", "params", "balls", "steps", "buffers"):
        assert mine[key] == cli[key], key
    for key in ("local", "global", "how", "variant", "steps_per_launch", "sync"):
        assert mine["launch"][key] == cli["launch"][key], key
    assert len(mine["devices"]) == len(cli["devices"]) == 1
    assert set(cli["devices"][0]) <= set(mine["devices"][0])
    for key in ("launch", "cache", "validation"):
        assert set(cli["devices"][0][key]) <= set(mine["devices"][0][key]), key
    assert mine["context"] is None and r.init == "array" and "init" not in mine
    assert r.timing["launches"] == 1 and r.timing["us_per_step"] > 0
    assert "passed" in repr(r)
    with pytest.raises(AttributeError):
        r.no_such_field


def test_no_validation(dev):
    s = mixed_state(np.random.default_rng(2), 100)
    new, r = ballcl.run(s, 3, device=dev, validate=False)
    assert r.validation["performed"] is False and r.validation["compared"] == 0
    assert np.array_equal(bits(new), bits(seed_reference(s, 3)))


def test_strided_readonly_fortran_states_are_read_as_they_are(dev):
    """Any (N, 4) float32 array is taken: a strided or Fortran-ordered one is
    copied once (documented), a read-only one is only read."""
    big = mixed_state(np.random.default_rng(3), 2000)
    want = seed_reference(big[::2], 9)
    strided = big[::2]
    assert not strided.flags.c_contiguous
    assert np.array_equal(bits(ballcl.run(strided, 9, device=dev)[0]), bits(want))
    fortran = np.asfortranarray(big[::2])
    assert np.array_equal(bits(ballcl.run(fortran, 9, device=dev)[0]), bits(want))
    ro = big[::2].copy()
    ro.flags.writeable = False
    assert np.array_equal(bits(ballcl.run(ro, 9, device=dev)[0]), bits(want))
    # Misaligned: a float32 view at an odd byte offset of a buffer.
    raw = np.zeros(ro.nbytes + 1, np.uint8)
    mis = raw[1:].view(np.float32).reshape(-1, 4)
    mis[...] = ro
    assert not mis.flags.aligned
    assert np.array_equal(bits(ballcl.run(mis, 9, device=dev)[0]), bits(want))


@pytest.mark.parametrize("state,exc,words", [
    (np.zeros((10, 4), np.float64), TypeError, ["float32", "float64", "astype"]),
    (np.zeros((10, 4), np.int32), TypeError, ["float32", "int32"]),
    (np.zeros((10, 4), ">f4"), TypeError, ["byte order", "big-endian", "keeps every value"]),
    ([[0.0] * 4] * 3, TypeError, ["numpy.ndarray", "list"]),
    (np.zeros((10, 3), np.float32), ballcl.InputError, ["(N, 4)", "(10, 3)"]),
    (np.zeros(40, np.float32), ballcl.InputError, ["(N, 4)", "(40,)"]),
    (np.zeros((2, 5, 4), np.float32), ballcl.InputError, ["(N, 4)", "(2, 5, 4)"]),
    (np.zeros((0, 4), np.float32), ballcl.InputError, ["no balls"]),
])
def test_bad_states(dev, state, exc, words):
    with pytest.raises(exc) as info:
        ballcl.run(state, 1, device=dev)
    for w in words:
        assert w in str(info.value)
    if exc is ballcl.InputError:
        assert isinstance(info.value, ValueError) and info.value.exit_code == 2


@pytest.mark.parametrize("value,name", [(np.nan, "NaN"), (np.inf, "an infinity")])
def test_non_finite_state(dev, value, name):
    s = np.ones((8, 4), np.float32)
    s[5, 2] = value
    with pytest.raises(ballcl.InputError, match=f"ball 5 holds {name}"):
        ballcl.run(s, 1, device=dev)


def test_progress(dev):
    """progress=: a callable gets increasing steps_done ending at the total;
    True writes on stderr; another type is a TypeError; what it raises is
    raised after the run."""
    s = np.zeros((20000, 4), np.float32)
    seen = []
    new, r = ballcl.run(s, 20000, device=dev, validate=False, steps_per_launch=100,
                        progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (20000, 20000), seen
    assert all(a[0] < b[0] for a, b in zip(seen, seen[1:])) and {t for _, t in seen} == {20000}
    quiet, _ = ballcl.run(s, 20000, device=dev, validate=False, steps_per_launch=100)
    assert np.array_equal(bits(new), bits(quiet)), "progress changes no bits"
    with pytest.raises(TypeError, match="progress: expected False, True"):
        ballcl.run(s, 10, device=dev, progress="yes")

    def bad(done, total):
        raise KeyError("from the callable")

    with pytest.raises(KeyError, match="from the callable"):
        ballcl.run(s, 2000, device=dev, validate=False, progress=bad)
    code = ("import numpy as np, ballcl\n"
            "ballcl.run(np.zeros((100000, 4), np.float32), 300000, device=%r, "
            "validate=False, steps_per_launch=2000, progress=True)\n" % dev)
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, BALLCL_PROGRESS_SECONDS="0"))
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    # A line once 2 s of steps have passed (the program's start and build
    # come before them: at least one in a call of more than 4 s).
    assert lines or time.monotonic() - t0 < 4, p.stderr
    assert all(re.fullmatch(r"run: step \d+ of 300000 \(\d+%\)", l) for l in lines), p.stderr
