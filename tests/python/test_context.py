"""ballcl.Context: the device, program and state kept between calls; no
rebuild, no re-upload when the state is the one the context holds."""
import numpy as np
import pytest

import ballcl
from conftest import bits, mixed_state, seed_reference


def test_resident_state_bit_exact_and_no_reupload(dev):
    s = mixed_state(np.random.default_rng(11), 5000)
    with ballcl.Context(device=dev) as ctx:
        assert ctx.builds == 1 and ctx.uploads == 0 and ctx.calls == 0 and ctx.state is None
        a, r1 = ctx.run(7, state=s)
        b, r2 = ctx.run(5, state=a) # the array returned last: no upload
        c, r3 = ctx.run(1000)       # None: continue
        assert np.array_equal(bits(c), bits(seed_reference(s, 1012)))
        assert [r.context["uploaded"] for r in (r1, r2, r3)] == [True, False, False]
        assert r3.context == {"uploaded": False, "calls": 3, "builds": 1, "uploads": 1}
        assert ctx.builds == 1 and ctx.uploads == 1 and ctx.calls == 3
        # The program was built (or loaded) once, at creation: every call
        # reports that one build, and only the first launch of a kernel and
        # local size pays a warm-up.
        same = ("hit", "program_ms", "note")
        assert all(r.cache[k] == r1.cache[k] for r in (r2, r3) for k in same)
        assert r2.cache["first_launch_ms"] == 0
        assert ctx.state is c
        assert all(r.validation["passed"] for r in (r1, r2, r3))


def test_returned_arrays_are_frozen(dev):
    with ballcl.Context(device=dev) as ctx:
        a, _ = ctx.run(1, state=np.ones((8, 4), np.float32))
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a[0, 0] = 5
        with pytest.raises(ValueError):
            a.flags.writeable = True
        w = np.array(a)             # a writable copy is another state: uploaded
        w[0, 0] = 5
        b, r = ctx.run(1, state=w)
        assert r.context["uploaded"] and ctx.uploads == 2
        assert b[0, 0] == 5 + a[0, 2] and b[1, 0] == a[1, 0] + a[1, 2]


def test_other_sizes_and_old_arrays(dev):
    with ballcl.Context(device=dev) as ctx:
        a, _ = ctx.run(2, state=np.ones((8, 4), np.float32))
        b, r = ctx.run(2, state=np.ones((100, 4), np.float32))
        assert b.shape == (100, 4) and r.balls == 100 and r.buffers >= 1
        c, r = ctx.run(3, state=a)  # an older returned array: uploaded again
        assert r.context["uploaded"] and c.shape == (8, 4)
        assert np.array_equal(bits(c), bits(seed_reference(np.ones((8, 4), np.float32), 5)))


def test_errors(dev):
    ctx = ballcl.Context(device=dev)
    with pytest.raises(ballcl.InputError, match="no state yet"):
        ctx.run(1)
    with pytest.raises(TypeError):
        ctx.run(1, state=np.ones((8, 4)))
    with pytest.raises(ballcl.InputError):
        ctx.run(-1, state=np.ones((8, 4), np.float32))
    ctx.run(1, state=np.ones((8, 4), np.float32))
    ctx.close()
    assert ctx.closed
    with pytest.raises(ballcl.InputError, match="closed"):
        ctx.run(1)
    ctx.close()  # twice is fine
    with pytest.raises(ballcl.InputError):
        ballcl.Context(device="no-such-device-xyz")
    with pytest.raises(ballcl.InputError):
        ballcl.Context(device=dev, model="bounce", params={"restitution": -1})


def test_bounce_context(dev):
    import bounce_reference as bref
    s = bref.random_state(np.random.default_rng(4), 999, 800.0, 600.0)
    with ballcl.Context(device=dev, model="bounce") as ctx:
        assert ctx.device["selector"] in [d["selector"] for d in ballcl.devices()]
        for _ in range(3):
            out, r = ctx.run(4, state=None if ctx.state is not None else s)
        assert np.array_equal(bits(out), bits(bref.run(s, bref.params(), 12)))


def test_local_and_k_per_call(dev):
    s = mixed_state(np.random.default_rng(12), 300)
    with ballcl.Context(device=dev) as ctx:
        ctx.run(1, state=s, local=8, steps_per_launch=1)
        _, r = ctx.run(10, local=8, steps_per_launch=1)
        assert r.cache["first_launch_ms"] == 0 and r.launch["local"] == 8
        _, r = ctx.run(10, local=16)
        assert r.launch["local"] == 16 and r.cache["first_launch_ms"] > 0
        out, r = ctx.run(10, local=16)
        assert r.cache["first_launch_ms"] == 0
        assert np.array_equal(bits(out), bits(seed_reference(s, 31)))
