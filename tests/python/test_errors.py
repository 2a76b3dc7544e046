"""Every error class: InputError for bad arguments, DeviceError with the
OpenCL call and status (injected faults, a kernel that does not build),
MismatchError with the result and the wrong state; never a crash."""
import os
import pickle
import shutil
import textwrap

import numpy as np
import pytest

import ballcl
from conftest import mixed_state, python_c

S = np.ones((16, 4), np.float32)


def test_hierarchy():
    for cls in (ballcl.DeviceError, ballcl.InputError, ballcl.MismatchError):
        assert issubclass(cls, ballcl.Error)
    assert issubclass(ballcl.InputError, ValueError)
    assert issubclass(ballcl.Error, Exception)


@pytest.mark.parametrize("kwargs,exc,words", [
    ({"steps": -1}, ballcl.InputError, ["steps", "-1", "0 to"]),
    ({"steps": 1 << 41}, ballcl.InputError, ["steps"]),
    ({"steps": 1.5}, TypeError, ["steps", "int", "float"]),
    ({"steps": True}, TypeError, ["steps"]),
    ({"steps": 1, "steps_per_launch": 0}, ballcl.InputError, ["steps_per_launch", "1 to"]),
    ({"steps": 1, "local": "fast"}, ballcl.InputError, ["local", "'fast'", "driver"]),
    ({"steps": 1, "local": 0}, ballcl.InputError, ["local"]),
    ({"steps": 1, "local": 1 << 21}, ballcl.InputError, ["local"]),
    ({"steps": 1, "device": "no-such-device-xyz"}, ballcl.InputError, ["no-such-device-xyz"]),
    ({"steps": 1, "device": 0}, TypeError, ["device", "str"]),
    ({"steps": 1, "model": "nope"}, ballcl.InputError, ["nope", "seed", "bounce"]),
    ({"steps": 1, "model": "seed", "params": {"dt": 1}}, ballcl.InputError,
     ["'seed' has no parameter 'dt'", "none"]),
    ({"steps": 1, "model": "bounce", "params": {"gravty": 1}}, ballcl.InputError,
     ["gravty", "gravity", "restitution"]),
    ({"steps": 1, "model": "bounce", "params": {"box": 3}}, ballcl.InputError,
     ["params['box']", "2 numbers"]),
    ({"steps": 1, "model": "bounce", "params": {"box": (1, 2, 3)}}, ballcl.InputError, ["box"]),
    ({"steps": 1, "model": "bounce", "params": {"dt": "x"}}, TypeError, ["params['dt']"]),
    ({"steps": 1, "model": "bounce", "params": {"dt": 1e39}}, ballcl.InputError,
     ["params['dt']", "finite float32"]),
    ({"steps": 1, "model": "bounce", "params": {"restitution": 2}}, ballcl.InputError,
     ["restitution"]),
    ({"steps": 1, "model": "bounce", "params": [1, 2]}, TypeError, ["params", "dict"]),
])
def test_bad_arguments(dev, kwargs, exc, words):
    kwargs.setdefault("device", dev)
    with pytest.raises(exc) as info:
        ballcl.run(S, **kwargs)
    for w in words:
        assert w in str(info.value), str(info.value)


def test_keyword_only_and_required():
    with pytest.raises(TypeError):
        ballcl.run(S)
    with pytest.raises(TypeError):
        ballcl.run(S, 1, "cpu")  # device is keyword-only


def kernel_dir(tmp_path, old, new):
    """A copy of the kernel folder with one text of seed.cl replaced: the
    build tree's (BALLCL_KERNEL_DIR), else the installed package's own."""
    src = (os.environ.get("BALLCL_KERNEL_DIR")
           or os.path.join(os.path.dirname(os.path.abspath(ballcl._core.__file__)), "cl"))
    d = tmp_path / "cl"
    shutil.copytree(src, d)
    text = (d / "seed.cl").read_text()
    assert old in text
    (d / "seed.cl").write_text(text.replace(old, new))
    return str(d)


def test_build_failure_is_a_device_error(dev, tmp_path, monkeypatch):
    monkeypatch.setenv("BALLCL_KERNEL_DIR",
                       kernel_dir(tmp_path, "b.y = b.y + b.w;", "b.y = b.y + ;"))
    with pytest.raises(ballcl.DeviceError) as info:
        ballcl.run(S, 1, device=dev)
    e = info.value
    assert e.call == "clBuildProgram" and e.status == "CL_BUILD_PROGRAM_FAILURE", str(e)
    assert e.exit_code == 3 and e.detail and "error" in e.detail.lower()
    with pytest.raises(ballcl.DeviceError):
        ballcl.Context(device=dev)


def test_mismatch_error_carries_result_and_state(dev, tmp_path, monkeypatch):
    """A kernel that gives other bits (x takes the new z) fails validation."""
    d = kernel_dir(tmp_path, "    b.x = b.x + b.z;\n    b.y = b.y + b.w;\n    b.z = b.z + b.w;\n",
                   "    b.z = b.z + b.w;\n    b.x = b.x + b.z;\n    b.y = b.y + b.w;\n")
    monkeypatch.setenv("BALLCL_KERNEL_DIR", d)
    s = mixed_state(np.random.default_rng(9), 1000)
    for spl in (1, 4):
        with pytest.raises(ballcl.MismatchError) as info:
            ballcl.run(s, 10, device=dev, steps_per_launch=spl)
        e = info.value
        assert "1000 of 4000 floats differ" in str(e) and e.exit_code == 1
        v = e.result.validation
        assert not v["passed"] and v["mismatches"] == 1000
        assert [m["ball"] for m in v["first_mismatches"]] == [0, 1, 2, 3, 4]
        assert e.state.shape == s.shape
        # A worker's MismatchError comes back whole (multiprocessing pickles it).
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is ballcl.MismatchError and str(back) == str(e)
        assert back.result == e.result and np.array_equal(back.state, e.state)
    with ballcl.Context(device=dev) as ctx:
        with pytest.raises(ballcl.MismatchError):
            ctx.run(10, state=s)
        assert ctx.state is None


FAULT_SCRIPT = textwrap.dedent("""
    import sys, numpy as np, ballcl
    try:
        ballcl.run(np.ones((1000, 4), np.float32), 10, device=sys.argv[1])
    except ballcl.DeviceError as e:
        print("DeviceError", e.call, e.status, e.exit_code, "|", e)
    except ballcl.Error as e:
        print(type(e).__name__, "|", e)
    else:
        print("no error")
    # The module stays usable after the failure.
    print("after", ballcl.run(np.ones((4, 4), np.float32), 1, device=sys.argv[1])[1]
          .validation["passed"] if "clGetPlatformIDs" not in sys.argv[2] else True)
""")


@pytest.mark.parametrize("fault,status", [
    # The first buffer is the pinned block the new state is read into: its
    # failure is no error (the array falls back to ordinary memory, as
    # test_pinned_fallback checks); the second holds the state.
    ("clCreateBuffer:2", "CL_OUT_OF_RESOURCES"),
    ("clEnqueueNDRangeKernel:2", "CL_OUT_OF_RESOURCES"),
    ("clEnqueueReadBuffer:1:CL_MEM_OBJECT_ALLOCATION_FAILURE", "CL_MEM_OBJECT_ALLOCATION_FAILURE"),
    ("clFinish:1:CL_OUT_OF_HOST_MEMORY", "CL_OUT_OF_HOST_MEMORY"),
    ("clCreateCommandQueueWithProperties:1", "CL_OUT_OF_RESOURCES"),
])
def test_injected_opencl_failures(dev, fault, status):
    """BALLCL_FAULT makes the n-th call of an OpenCL function fail
    (docs/RELIABILITY.md); it is read once per process, hence a subprocess."""
    env = dict(os.environ, BALLCL_FAULT=fault)
    p = python_c(FAULT_SCRIPT, dev, fault, env=env)
    assert p.returncode == 0, p.stderr
    call = fault.split(":")[0]
    first = p.stdout.splitlines()[0]
    assert first.startswith(f"DeviceError {call} {status} 3 |"), p.stdout
    assert "after True" in p.stdout


def test_pinned_fallback(dev):
    """A runtime that refuses the pinned block of the returned array costs
    its speed, not the result: the state is read into ordinary memory."""
    code = ("import sys, numpy as np, ballcl\n"
            "s, r = ballcl.run(np.ones((1000, 4), np.float32), 10, device=sys.argv[1])\n"
            "print(r.validation['passed'], r.as_dict()['readback']['memory'], float(s[0, 0]))\n")
    env = dict(os.environ, BALLCL_FAULT="clCreateBuffer:1")
    p = python_c(code, dev, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["True", "pageable", "56.0"], p.stdout


def test_no_platform_is_a_device_error(tmp_path):
    env = dict(os.environ, OCL_ICD_VENDORS=str(tmp_path))
    env.pop("OCL_ICD_FILENAMES", None)
    code = ("import ballcl\ntry:\n    ballcl.devices()\nexcept ballcl.DeviceError as e:\n"
            "    print('DeviceError', e.call, '|', e)\n")
    p = python_c(code, env=env, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("DeviceError"), p.stdout + p.stderr
