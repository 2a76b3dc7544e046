"""The frame loop (docs/PYTHON.md, "Frame loops"): out=, arrays that stay
valid, the plan reused, device buffers kept at the largest state, and
ballcl.run's process-wide contexts (cached(), close(), threads). Every
state is compared bit for bit with the NumPy reference of the seed model
and with ballcl's own validation against the C reference."""
import threading

import numpy as np
import pytest

import ballcl
from conftest import bits, mixed_state, seed_reference


@pytest.fixture(autouse=True)
def fresh_cache():
    """Each test starts and ends with no cached context."""
    ballcl.close()
    yield
    ballcl.close()


def test_out_reused_bit_exact_no_upload(dev):
    s = mixed_state(np.random.default_rng(1), 3000)
    buf = np.full_like(s, np.nan)
    with ballcl.Context(device=dev) as ctx:
        o, r = ctx.run(100, state=s, out=buf)
        assert o is buf and r.context["uploaded"] and r.validation["passed"]
        for f in range(2, 6):
            o, r = ctx.run(100, out=buf)           # continues on the device
            assert o is buf and not r.context["uploaded"] and r.validation["passed"]
            assert np.array_equal(bits(buf), bits(seed_reference(s, 100 * f)))
        assert ctx.uploads == 1 and buf.flags.writeable
        # out= writable: passing it back as state= is an upload (it may
        # have changed), and gives the same bits.
        o, r = ctx.run(10, state=buf, out=buf)
        assert r.context["uploaded"] and r.validation["passed"]
        assert np.array_equal(bits(buf), bits(seed_reference(s, 510)))


def test_out_errors(dev):
    s = mixed_state(np.random.default_rng(2), 64)
    with ballcl.Context(device=dev) as ctx:
        frozen, _ = ctx.run(1, state=s)
        cases = [
            (TypeError, "numpy.ndarray", [[0.0] * 4] * 64),
            (TypeError, "float32", np.zeros((64, 4), np.float64)),
            (TypeError, "float32", np.zeros((64, 4), np.float32).astype(">f4")),
            (ballcl.InputError, "shape", np.zeros((63, 4), np.float32)),
            (ballcl.InputError, "shape", np.zeros((64, 3), np.float32)),
            (ballcl.InputError, "C-contiguous", np.zeros((4, 64), np.float32).T),
            (ballcl.InputError, "C-contiguous", np.zeros((64, 8), np.float32)[:, ::2]),
            (ballcl.InputError, "read-only", frozen),
        ]
        for exc, words, bad in cases:
            with pytest.raises(exc, match=words):
                ctx.run(1, out=bad)
            with pytest.raises(exc, match=words):
                ballcl.run(s, 1, device=dev, out=bad)
            with pytest.raises(exc, match=words):
                ballcl.run(s, 1, device=dev, out=bad, cache=False)
        # After the refusals the context goes on from its state.
        a, r = ctx.run(1)
        assert np.array_equal(bits(a), bits(seed_reference(s, 2)))


def test_out_aliasing_the_state_is_validated(dev):
    s = mixed_state(np.random.default_rng(3), 500)
    for cache in (True, False):
        a = s.copy()
        o, r = ballcl.run(a, 37, device=dev, out=a, cache=cache)
        assert o is a and r.validation["passed"] and r.validation["compared"] == a.size
        assert np.array_equal(bits(a), bits(seed_reference(s, 37)))


def test_returned_arrays_stay_valid(dev):
    s = mixed_state(np.random.default_rng(4), 2000)
    with ballcl.Context(device=dev) as ctx:
        kept = []
        x = s
        for f in range(6):
            x, r = ctx.run(10, state=x)
            kept.append(x)
        assert r.readback["plan_reused"]
    runs = []
    y = s
    for f in range(6):
        y, _ = ballcl.run(y, 10, device=dev)
        runs.append(y)
    ballcl.close()                      # the context is gone, the arrays are not
    big = mixed_state(np.random.default_rng(5), 9000)
    ballcl.run(big, 3, device=dev)      # other calls reuse no memory of theirs
    for f in range(6):
        want = bits(seed_reference(s, 10 * (f + 1)))
        assert np.array_equal(bits(kept[f]), want)
        assert np.array_equal(bits(runs[f]), want)
        assert not kept[f].flags.writeable and not runs[f].flags.writeable


def test_plan_reuse_same_bits_as_fresh_context(dev):
    s = mixed_state(np.random.default_rng(6), 4099)
    with ballcl.Context(device=dev) as ctx:
        x = s
        for f in range(5):
            x, r = ctx.run(64, state=x, validate=(f == 4))
            assert r.readback["plan_reused"] == (f > 0)
        fields = r.launch
    with ballcl.Context(device=dev) as fresh:
        y, r2 = fresh.run(320, state=s)
    assert np.array_equal(bits(x), bits(y))
    assert np.array_equal(bits(x), bits(seed_reference(s, 320)))
    assert r.validation["passed"]
    with ballcl.Context(device=dev) as one:
        z, r3 = one.run(64, state=s)
    assert {k: fields[k] for k in ("variant", "local", "steps_per_launch")} == \
        {k: r3.launch[k] for k in ("variant", "local", "steps_per_launch")}


def test_buffers_kept_at_largest_state(dev):
    rng = np.random.default_rng(7)
    with ballcl.Context(device=dev) as ctx:
        for n in (1000, 5000, 300, 5000, 1):
            s = mixed_state(rng, n)
            a, r = ctx.run(9, state=s)
            assert r.balls == n and r.validation["passed"]
            assert np.array_equal(bits(a), bits(seed_reference(s, 9)))
    for n in (1000, 5000, 300):
        s = mixed_state(rng, n)
        a, r = ballcl.run(s, 9, device=dev)
        assert np.array_equal(bits(a), bits(seed_reference(s, 9)))
    (c,) = ballcl.cached()
    assert c["balls"] == 5000 and c["device_bytes"] == 5000 * 16


def test_process_wide_cache_reuse_close_and_recreate(dev):
    assert ballcl.cached() == []
    s = mixed_state(np.random.default_rng(8), 1500)
    a, r = ballcl.run(s, 20, device=dev)
    (c,) = ballcl.cached()
    assert (c["calls"], c["builds"], c["uploads"], c["model"]) == (1, 1, 1, "seed")
    assert r.context is None and r.validation["passed"]
    # The array returned last, passed back: the state on the device, no upload.
    b, r = ballcl.run(a, 20, device=dev, validate=False)
    (c,) = ballcl.cached()
    assert (c["calls"], c["builds"], c["uploads"]) == (2, 1, 1)
    assert r.cache["first_launch_ms"] == 0          # no warm-up again
    assert np.array_equal(bits(b), bits(seed_reference(s, 40)))
    # An older returned array, or a writable copy of the last one, is uploaded.
    b2, r = ballcl.run(a, 20, device=dev)
    assert r.validation["passed"] and np.array_equal(bits(b2), bits(b))
    b3, r = ballcl.run(np.array(b2), 0, device=dev)
    assert np.array_equal(bits(b3), bits(b))
    (c,) = ballcl.cached()
    assert (c["calls"], c["uploads"]) == (4, 3)
    # Another model is another context; cache=False touches none.
    ballcl.run(s, 2, device=dev, model="bounce")
    d, _ = ballcl.run(s, 40, device=dev, cache=False)
    assert np.array_equal(bits(d), bits(b))
    assert sorted(x["model"] for x in ballcl.cached()) == ["bounce", "seed"]
    assert all(x["builds"] == 1 for x in ballcl.cached())
    ballcl.close()
    assert ballcl.cached() == []
    e, _ = ballcl.run(s, 40, device=dev)            # a new context
    (c,) = ballcl.cached()
    assert (c["calls"], c["builds"]) == (1, 1)
    assert np.array_equal(bits(e), bits(b))
    # An array of the closed context is uploaded into the new one.
    f, _ = ballcl.run(b, 10, device=dev)
    assert np.array_equal(bits(f), bits(seed_reference(s, 50)))
    assert ballcl.cached()[0]["uploads"] == 2


def test_threads_at_once(dev):
    rng = np.random.default_rng(9)
    states = [mixed_state(rng, 700 + 50 * i) for i in range(6)]
    results, errors = {}, []

    def work(i):
        try:
            x = states[i]
            for f in range(8):
                x, r = ballcl.run(x, 5 + i, device=dev, validate=(f % 3 == 0))
            results[i] = x
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(6):
        assert np.array_equal(bits(results[i]), bits(seed_reference(states[i], 8 * (5 + i))))
    (c,) = ballcl.cached()
    assert c["calls"] == 48 and c["builds"] == 1


def test_close_while_threads_run(dev):
    s = mixed_state(np.random.default_rng(10), 800)
    stop, errors = threading.Event(), []

    def work():
        x = s
        n = 0
        try:
            while not stop.is_set():
                x, _ = ballcl.run(x, 3, device=dev, validate=False)
                n += 3
            assert np.array_equal(bits(x), bits(seed_reference(s, n)))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=work)
    t.start()
    for _ in range(20):
        ballcl.close()
    stop.set()
    t.join()
    assert not errors


def test_repeated_frames_bit_identical(dev):
    s = mixed_state(np.random.default_rng(12), 10000)
    outs = []
    for way in range(3):
        with ballcl.Context(device=dev) as ctx:
            x = s
            for f in range(10):
                x, _ = ctx.run(100, state=x, validate=False)
        outs.append(x)
    y = s
    for f in range(10):
        y, _ = ballcl.run(y, 100, device=dev, validate=False)
    want = bits(seed_reference(s, 1000))
    assert all(np.array_equal(bits(o), want) for o in outs + [y])


def test_mismatch_keeps_validation(dev):
    """validate=True still compares every float: a state the device holds
    is checked against the C reference of the state passed in."""
    s = mixed_state(np.random.default_rng(13), 256)
    with ballcl.Context(device=dev) as ctx:
        x, r = ctx.run(100, state=s)
        assert r.validation["performed"] and r.validation["compared"] == s.size
        x, r = ctx.run(100, state=x, validate=False)
        assert not r.validation["performed"]


def test_nonfinite_state_refused_on_the_cached_path(dev):
    """ballcl.run scans its state for NaN and infinity while the upload runs:
    still an InputError naming the ball, and the context goes on."""
    s = mixed_state(np.random.default_rng(14), 9000)
    a, _ = ballcl.run(s, 5, device=dev)             # the context and its buffers exist
    for bad_value, words in ((np.nan, "ball 8123 holds NaN"), (np.inf, "ball 8123 holds an inf")):
        b = a.copy()
        b[8123, 1] = bad_value
        with pytest.raises(ballcl.InputError, match=words):
            ballcl.run(b, 5, device=dev)
    c, r = ballcl.run(a, 5, device=dev)
    assert r.validation["passed"]
    assert np.array_equal(bits(c), bits(seed_reference(s, 10)))
    (info,) = ballcl.cached()
    assert info["calls"] == 2


def test_nonfinite_state_refused_by_a_context(dev):
    """Context.run with a new state: the device checks it for NaN and
    infinity behind its upload; a refusal names the ball (the host finds it),
    counts no call, and the context continues from the state it returned
    last, also with out= given."""
    s = mixed_state(np.random.default_rng(16), 5000)
    with ballcl.Context(device=dev) as ctx:
        a, _ = ctx.run(5, state=s)
        for where, value, words in ((0, np.nan, "ball 0 holds NaN"),
                                    (4999, -np.inf, "ball 4999 holds an inf"),
                                    (2500, np.inf, "ball 2500 holds an inf")):
            b = s.copy()
            b[where, 3] = value
            with pytest.raises(ballcl.InputError, match=words):
                ctx.run(5, state=b, validate=False)
            with pytest.raises(ballcl.InputError, match=words):
                ctx.run(5, state=b, out=np.empty_like(s))
        assert ctx.calls == 1
        c, r = ctx.run(5)
        assert r.validation["passed"]
        assert np.array_equal(bits(c), bits(seed_reference(s, 10)))


def _shape(d):
    """The keys of a Result's dict, nested, with the types of the leaves."""
    if isinstance(d, dict):
        return {k: _shape(v) for k, v in d.items()}
    if isinstance(d, list):
        return [_shape(v) for v in d]
    return type(d).__name__


def test_result_of_a_reused_plan_is_whole_and_its_own(dev):
    """A frame with the previous call's plan copies the previous Result and
    makes anew what a call changes: the same fields as a fresh Context's,
    the same values but for the timing and the counters, and no dict shared
    with another Result."""
    s = mixed_state(np.random.default_rng(15), 2500)
    with ballcl.Context(device=dev) as ctx:
        a, r1 = ctx.run(40, state=s)
        b, r2 = ctx.run(40, state=a, validate=False)
        c, r3 = ctx.run(40, state=b)
    assert r2.readback["plan_reused"] and r3.readback["plan_reused"]
    with ballcl.Context(device=dev) as fresh:
        fresh.run(40, state=s)
        _, f3 = fresh.run(40, state=b)
    d3, df = r3.as_dict(), f3.as_dict()
    assert _shape(d3)["timing"] == _shape(df)["timing"]
    varying = {"timing", "context", "cache"}
    assert {k: v for k, v in d3.items() if k not in varying | {"devices", "readback"}} == \
        {k: v for k, v in df.items() if k not in varying | {"devices", "readback"}}
    assert set(d3) == set(df) and set(d3["devices"][0]) == set(df["devices"][0])
    assert d3["cache"]["first_launch_ms"] == 0 and set(d3["cache"]) == set(df["cache"])
    assert d3["validation"]["performed"] and d3["validation"]["passed"]
    assert not r2.validation["performed"] and r2.validation["compared"] == 0
    assert r3.devices[0]["validation"] == d3["validation"]
    assert r3.context == {"uploaded": False, "calls": 3, "builds": 1, "uploads": 1}
    assert r3.timing["launches"] >= 1 and r3.devices[0]["us_per_step"] == r3.timing["us_per_step"]
    r2.launch["local"] = -1
    r2.devices[0]["launch"]["local"] = -1
    r2.cache["note"] = "changed"
    assert r3.launch["local"] != -1 and r3.devices[0]["launch"]["local"] != -1
    assert r3.cache["note"] != "changed" and r1.launch["local"] != -1


def test_refused_calls_leave_the_cached_context_usable(dev):
    """A call refused after its upload was queued (a local size beyond the
    kernel's limit, a bad out=) waits for the upload, and the next call on
    the same context gives the right bits."""
    s = mixed_state(np.random.default_rng(16), 3000)
    ballcl.run(s, 1, device=dev)
    for _ in range(3):
        with pytest.raises(ballcl.InputError, match="exceeds the limit"):
            ballcl.run(s.copy(order="F"), 2, device=dev, local=1 << 20)
        with pytest.raises(ballcl.InputError, match="shape"):
            ballcl.run(s[::-1], 2, device=dev, out=np.empty((2, 4), np.float32))
    a, r = ballcl.run(s, 7, device=dev)
    assert r.validation["passed"]
    assert np.array_equal(bits(a), bits(seed_reference(s, 7)))
