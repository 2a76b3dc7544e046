"""ballcl.Model: a model file from Python (docs/PYTHON.md, "Model files"),
validated bit for bit against a NumPy step run in a child process; the
reference's failures (raising, crashing, looping, a wrong array) as one-line
InputErrors; a Context over a Model."""
import gc
import hashlib
import importlib.util
import os
import textwrap
import time

import numpy as np
import pytest

import ballcl
from conftest import bits, in_threads, mixed_state, python_c, two_pocl_devices

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRAG = os.path.join(ROOT, "examples", "drag.cl")
SEED = os.path.join(ROOT, "examples", "seed.cl")


def drag_step(s, dt, gravity, drag):
    """examples/drag.cl's update as a user writes it in NumPy."""
    s[:, 2] = s[:, 2] - drag * s[:, 2] * dt
    s[:, 3] = s[:, 3] + (gravity - drag * s[:, 3]) * dt
    s[:, 0] = s[:, 0] + s[:, 2] * dt
    s[:, 1] = s[:, 1] + s[:, 3] * dt
    return s


def seed_step(s):
    s[:, 0] = s[:, 0] + s[:, 2]
    s[:, 1] = s[:, 1] + s[:, 3]
    s[:, 2] = s[:, 2] + s[:, 3]
    return s


def box_state(n, seed=7):
    """Balls in an 800 x 600 box with velocities in [-200, 200), as --init seed."""
    rng = np.random.default_rng(seed)
    s = np.empty((n, 4), np.float32)
    s[:, 0] = rng.uniform(0, 800, n)
    s[:, 1] = rng.uniform(0, 600, n)
    s[:, 2:] = rng.uniform(-200, 200, (n, 2))
    return s


def numpy_steps(step, state, steps, *params):
    s = state.copy()
    p = [np.float32(v) for v in params]
    for _ in range(steps):
        s = step(s, *p)
    return s


def test_model_attributes():
    m = ballcl.Model(DRAG, reference=drag_step)
    assert m.name == "drag" and m.path == DRAG and m.reference is drag_step
    assert list(m.params) == ["dt", "gravity", "drag"]
    assert m.params["gravity"] == 980.0 and m.params["dt"] == float(np.float32(0.016666668))
    with open(DRAG, "rb") as f:
        text = f.read()
    assert m.sha256 == hashlib.sha256(text).hexdigest() and m.source == text.decode()
    t = ballcl.Model(text.decode(), name="mydrag")
    assert t.name == "mydrag" and t.path is None and t.reference is None
    assert t.sha256 == m.sha256 and ballcl.Model(text.decode()).name == "model"
    assert "drag" in repr(m) and "NumPy reference" in repr(m)


def test_drag_validates_bit_for_bit(dev):
    m = ballcl.Model(DRAG, reference=drag_step)
    state = box_state(3000)
    new, r = ballcl.run(state, 200, model=m, device=dev)
    v = r.validation
    assert v["performed"] and v["passed"] and v["note"] is None
    assert v["compared"] == 4 * 3000 and v["mismatches"] == 0 and v["max_ulp"] == 0
    assert r.devices[0]["validation"] == v
    assert r.model == "drag" and r.model_file["path"] == DRAG
    assert r.model_file["sha256"] == m.sha256
    # The same bits as the step run here, in this process.
    assert np.array_equal(bits(new), bits(numpy_steps(drag_step, state, 200, *m.params.values())))
    assert np.array_equal(state, box_state(3000))  # the input is left alone


def test_examples_drag_py_as_reference(dev):
    spec = importlib.util.spec_from_file_location("drag_example",
                                                  os.path.join(ROOT, "examples", "drag.py"))
    drag_py = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(drag_py)
    m = ballcl.Model(DRAG, reference=drag_py.step)
    _, r = ballcl.run(box_state(1000), 100, model=m, device=dev, params={"drag": 0.25})
    assert r.validation["passed"] and r.validation["compared"] == 4000


def test_params_by_name(dev):
    m = ballcl.Model(DRAG, reference=drag_step)
    state = box_state(500)
    new, r = ballcl.run(state, 50, model=m, device=dev, params={"gravity": 9.8, "drag": 0.125})
    assert r.validation["passed"] and r.params["gravity"] == pytest.approx(9.8)
    want = numpy_steps(drag_step, state, 50, m.params["dt"], 9.8, 0.125)
    assert np.array_equal(bits(new), bits(want))
    with pytest.raises(ballcl.InputError, match="has no parameter 'gravty'.*dt, gravity, drag"):
        ballcl.run(state, 1, model=m, device=dev, params={"gravty": 1})


def test_seed_model_file_equals_builtin(dev):
    with open(SEED) as f:
        m = ballcl.Model(f.read(), reference=seed_step, name="seedfile")
    state = mixed_state(np.random.default_rng(3), 4096)
    got, r = ballcl.run(state, 300, model=m, device=dev)
    want, rb = ballcl.run(state, 300, model="seed", device=dev)
    assert r.validation["passed"] and rb.validation["passed"]
    assert np.array_equal(bits(got), bits(want))
    assert r.model == "seedfile" and r.model_file["path"] is None


def test_without_reference_not_validated(dev):
    m = ballcl.Model(DRAG)
    _, r = ballcl.run(box_state(100), 10, model=m, device=dev)
    assert not r.validation["performed"]
    assert r.validation["note"] == "not validated: no reference"
    m2 = ballcl.Model(DRAG, reference=drag_step)
    _, r = ballcl.run(box_state(100), 10, model=m2, device=dev, validate=False)
    assert not r.validation["performed"] and r.validation["note"] == "not validated: --no-validate"


def test_wrong_step_fails_validation(dev):
    def wrong(s, dt, gravity, drag):
        s = drag_step(s, dt, gravity, drag)
        s[5:, 3] += np.float32(1)  # balls 5 and on drift
        return s

    m = ballcl.Model(DRAG, reference=wrong)
    with pytest.raises(ballcl.MismatchError) as ei:
        ballcl.run(box_state(64), 3, model=m, device=dev, cache=False)
    e = ei.value
    assert e.exit_code == 1 and "NumPy reference" in str(e)
    v = e.result.validation
    assert v["performed"] and not v["passed"] and v["mismatches"] == 59 * 2  # w and y (from w)
    assert [x["ball"] for x in v["first_mismatches"]] == [5, 6, 7, 8, 9]
    assert e.result.devices[0]["validation"] == v
    assert e.state.shape == (64, 4)


@pytest.mark.parametrize("step,words", [
    (lambda s, *p: s[10**9], ["raised at step 1 of 4", "IndexError", "test_model_file.py:"]),
    (lambda s, *p: (_ for _ in ()).throw(RuntimeError("bad\nthing")),
     ["raised at step 1 of 4", "RuntimeError: bad thing"]),
    (lambda s, *p: os.abort(), ["crashed (SIGABRT)"]),
    (lambda s, *p: s.astype(np.float64), ["step 1 returned", "float64",
                                          "expected an (N, 4) float32 array, N = 32"]),
    (lambda s, *p: s[:, :3], ["shape (32, 3)", "expected an (N, 4) float32"]),
    (lambda s, *p: None, ["returned a NoneType", "expected an (N, 4) float32"]),
])
def test_reference_failures(dev, step, words):
    m = ballcl.Model(DRAG, reference=step)
    with pytest.raises(ballcl.InputError) as ei:
        ballcl.run(box_state(32), 4, model=m, device=dev)
    msg = str(ei.value)
    assert "\n" not in msg and msg.startswith("model 'drag': the NumPy reference")
    for w in words:
        assert w in msg, (w, msg)
    assert ei.value.exit_code == 2


def test_reference_time_limit(dev):
    def loop(s, *p):
        while True:
            pass

    m = ballcl.Model(DRAG, reference=loop, reference_limit_s=1)
    t = time.monotonic()
    with pytest.raises(ballcl.InputError, match="ran past its time limit of 1 s") as ei:
        ballcl.run(box_state(16), 2, model=m, device=dev)
    assert time.monotonic() - t < 30 and ei.value.exit_code == 2


def test_context_runs_frames(dev):
    m = ballcl.Model(DRAG, reference=drag_step)
    state = box_state(2000)
    with ballcl.Context(device=dev, model=m, params={"drag": 0.25}) as ctx:
        del m
        gc.collect()  # the context keeps its Model
        s, r = ctx.run(10, state=state)
        for _ in range(4):
            s, r = ctx.run(10)
            assert r.validation["passed"] and not r.context["uploaded"]
            assert r.devices[0]["validation"]["passed"]
        assert ctx.uploads == 1 and ctx.calls == 5
    want = numpy_steps(drag_step, state, 50, np.float32(0.016666668), 980, 0.25)
    assert np.array_equal(bits(s), bits(want))


def test_context_frame_mismatch(dev):
    def off(s, *p):
        s = seed_step(s)
        s[0, 0] = np.float32(-1)
        return s

    with open(SEED) as f:
        m = ballcl.Model(f.read(), reference=off)
    with ballcl.Context(device=dev, model=m) as ctx:
        with pytest.raises(ballcl.MismatchError) as ei:
            ctx.run(2, state=mixed_state(np.random.default_rng(5), 8))
        assert [x["ball"] for x in ei.value.result.validation["first_mismatches"]] == [0]
        assert ei.value.result.context["calls"] == 1


@pytest.mark.parametrize("source,exc,words", [
    (os.path.join(ROOT, "no-such-model.cl"), ballcl.InputError, ["no-such-model.cl"]),
    ("#pragma ballcl param 1x 0\nfloat4 update(float4 b, float a) { return b; }\n",
     ballcl.InputError, ["model.cl:1", "parameter name '1x'"]),
    ("#pragma ballcl frobs 3\nfloat4 update(float4 b) { return b; }\n", ballcl.InputError,
     ["model.cl:1", "frobs"]),
    ("#pragma ballcl param a 1\nfloat4 update(float4 b, float a)\n{\n    b.x = b.x * 0.5;\n"
     "    return b;\n}\n", ballcl.InputError, ["model.cl:4:17", "'0.5'", "0.5f"]),
    ("#pragma ballcl param a 1\nfloat4 update(float4 b)\n{\n    return b;\n}\n",
     ballcl.InputError, ["model.cl:2", "update takes 0 parameters"]),
    (3, TypeError, ["source", "int"]),
])
def test_load_errors(source, exc, words):
    with pytest.raises(exc) as ei:
        ballcl.Model(source)
    for w in words:
        assert w in str(ei.value), (w, str(ei.value))


def test_update_that_does_not_compile(dev):
    m = ballcl.Model("float4 update(float4 b)\n{\n    return b +;\n}\n", name="broken")
    with pytest.raises(ballcl.InputError, match="'broken.cl' does not compile") as ei:
        ballcl.Context(device=dev, model=m)
    assert "broken.cl:3" in str(ei.value) + (ei.value.detail or "")


def test_argument_errors():
    with pytest.raises(TypeError, match="reference: expected a callable"):
        ballcl.Model(DRAG, reference=3)
    with pytest.raises(ballcl.InputError, match="named after its file"):
        ballcl.Model(DRAG, name="x")
    with pytest.raises(ballcl.InputError, match="reference_limit_s"):
        ballcl.Model(DRAG, reference_limit_s=0)
    with pytest.raises(TypeError, match="ballcl.Model"):
        ballcl.run(box_state(4), 1, model=3)


TWO_DEVICES = """
    from test_model_file import DRAG, box_state, drag_step
    s = box_state(20000)
    new, r = ballcl.run(s, 20, device="all", model=ballcl.Model(DRAG, reference=drag_step))
    used = [d for d in r.devices if d["balls"]]
    assert len(used) >= 2 and all(d["validation"]["passed"] for d in used), r.devices
    assert r.validation["passed"] and r.validation["compared"] == 4 * len(s)
    last = used[-1]["first_ball"]

    def wrong(st, *p):  # the last device's shard only
        st = drag_step(st, *p)
        st[last:, 0] += np.float32(1)
        return st

    try:
        ballcl.run(s, 2, device="all", model=ballcl.Model(DRAG, reference=wrong))
    except ballcl.MismatchError as e:
        v = [d["validation"] for d in e.result.devices if d["balls"]]
        assert all(x["passed"] for x in v[:-1]) and not v[-1]["passed"], v
        assert v[-1]["first_mismatches"][0]["ball"] == last, v
        assert e.result.validation["mismatches"] == v[-1]["mismatches"] == len(s) - last
    else:
        raise AssertionError("no MismatchError")
    print("ok")
"""


def test_two_devices_each_shard_validated():
    two_pocl_devices(TWO_DEVICES)


INTERRUPT = textwrap.dedent("""
    import multiprocessing, os, signal, sys, time
    import ballcl
    sys.path.insert(0, sys.argv[1])
    from test_model_file import DRAG, box_state

    def slow(s, *p):  # Ctrl-C reaches the caller while the reference runs
        # Not at once: a KeyboardInterrupt raised in the parent's at-fork
        # hooks (logging's) is ignored by Python, a race of the test alone.
        time.sleep(0.5)
        os.kill(os.getppid(), signal.SIGINT)
        time.sleep(600)

    t = time.monotonic()
    try:
        m = ballcl.Model(DRAG, reference=slow, reference_limit_s=20)
        ballcl.run(box_state(16), 2, model=m, device=sys.argv[2])
    except KeyboardInterrupt:
        print("interrupted", len(multiprocessing.active_children()), time.monotonic() - t < 15)
""")


def test_interrupt_during_reference(dev):
    p = python_c(INTERRUPT, os.path.dirname(os.path.abspath(__file__)), dev)
    assert p.stdout.split() == ["interrupted", "0", "True"], p.stdout + p.stderr


def test_threads_share_a_model(dev):
    m = ballcl.Model(DRAG, reference=drag_step)
    states = {}

    def worker(i):
        with ballcl.Context(device=dev, model=m) as ctx:
            s, r = ctx.run(5, state=box_state(700, i))
            s, r = ctx.run(5)
            assert r.validation["passed"]
            states[i] = s

    assert in_threads(worker, 3) == [] and len(states) == 3
    for i, s in states.items():
        want = numpy_steps(drag_step, box_state(700, i), 10, *m.params.values())
        assert np.array_equal(bits(s), bits(want))
