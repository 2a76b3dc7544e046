"""What the module refuses as `ballcl run` does (docs/RELIABILITY.md, the
second outside test): a state that overflows float32 on the way, a device
selector with a NUL inside, a validate that is not a bool, and a broadcast
state larger than the host's memory, refused before any copy."""
import numpy as np
import pytest

import ballcl

S = np.ones((16, 4), np.float32)


def test_overflow_is_an_input_error_naming_ball_and_step(dev):
    """3e38 + 3e38 is inf in float32 at the first step: the device and the
    reference agree, validation passes, but the state is no result."""
    s = np.ones((10, 4), np.float32)
    s[7] = 3e38
    with pytest.raises(ballcl.InputError) as info:
        ballcl.run(s, 5, device=dev)
    e = info.value
    assert e.exit_code == 2
    assert "ball 7 overflowed at step 1: its x became inf" in str(e), str(e)
    assert "finite for 5 steps" in str(e)
    # validate=False: the overflow is still no result.
    with pytest.raises(ballcl.InputError, match="ball 7 overflowed"):
        ballcl.run(s, 5, device=dev, validate=False)
    # The step is the first at which the ball leaves float32.
    t = np.zeros((4, 4), np.float32)
    t[2] = [0, 0, 1e38, 1e38]  # z doubles each step: 2e38, 3e38, then inf at step 3
    with pytest.raises(ballcl.InputError, match="ball 2 overflowed at step 3"):
        ballcl.run(t, 3, device=dev)
    ballcl.run(t, 2, device=dev)


def test_context_overflow_and_recovery(dev):
    s = np.full((10, 4), 3e38, np.float32)
    with ballcl.Context(device=dev) as ctx:
        with pytest.raises(ballcl.InputError, match="ball 0 overflowed at step 1"):
            ctx.run(5, state=s)
        assert ctx.state is None
        good, _ = ctx.run(2, state=S)
        with pytest.raises(ballcl.InputError, match="overflowed"):
            ctx.run(5, state=s)
        # The next call starts again from the last good state.
        out, r = ctx.run(1)
        assert r.context["uploaded"]
        assert np.array_equal(out[:, 0], good[:, 0] + good[:, 2])


def test_overflow_over_several_devices(dev):
    s = np.ones((100, 4), np.float32)
    s[99] = -3e38
    with pytest.raises(ballcl.InputError, match="ball 99 overflowed at step 1: its x became -inf"):
        ballcl.run(s, 2, device="all")  # the several-devices path, even for one device


@pytest.mark.parametrize("device", ["0:0\x00junk", "\x00", "cpu\x00"])
def test_nul_in_the_selector_is_refused(device):
    with pytest.raises(ballcl.InputError, match="NUL"):
        ballcl.run(S, 1, device=device)
    with pytest.raises(ballcl.InputError, match="NUL"):
        ballcl.Context(device=device)
    with pytest.raises(ballcl.InputError, match="NUL"):
        ballcl.survey(device=device, quick=True)


@pytest.mark.parametrize("value", ["no", "", 0, 1, 1.0, None, [], np.int32(1)])
def test_validate_takes_only_a_bool(dev, value):
    with pytest.raises(TypeError, match="validate: expected a bool"):
        ballcl.run(S, 1, device=dev, validate=value)
    with ballcl.Context(device=dev) as ctx:
        with pytest.raises(TypeError, match="validate: expected a bool"):
            ctx.run(1, state=S, validate=value)


def test_validate_bools(dev):
    _, r = ballcl.run(S, 1, device=dev, validate=False)
    assert not r.validation["performed"]
    _, r = ballcl.run(S, 1, device=dev, validate=np.bool_(True))
    assert r.validation["performed"] and r.validation["passed"]


def test_huge_broadcast_state_is_refused_before_any_copy(dev):
    """A (2**34, 4) float32 view of one row: 256 GiB that NumPy would copy
    (malloc succeeds under overcommit, and filling it gets the interpreter
    killed). The refusal comes first, as InputError, in no time."""
    big = np.broadcast_to(np.ones((1, 4), np.float32), (1 << 34, 4))
    with pytest.raises(ballcl.InputError, match="host memory") as info:
        ballcl.run(big, 1, device=dev)
    assert "17179869184 balls" in str(info.value)
    with ballcl.Context(device=dev) as ctx:
        with pytest.raises(ballcl.InputError, match="host memory"):
            ctx.run(1, state=big)
    # A broadcast state that fits is copied once and runs.
    small = np.broadcast_to(np.arange(4, dtype=np.float32), (1000, 4))
    out, r = ballcl.run(small, 2, device=dev)
    assert r.validation["passed"] and np.array_equal(out[5], [7, 7, 8, 3])
