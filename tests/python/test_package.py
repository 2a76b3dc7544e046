"""The package's surface (docs/PYTHON.md): __version__, devices() with every
field of `ballcl devices --json`, survey() with the survey document,
Context.run's keyword-only state, errors whose call and status come from the
library, and an import that leaves os.environ alone."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import ballcl
from conftest import python_c

S = np.ones((16, 4), np.float32)


def test_version():
    assert ballcl.__version__ == ballcl.version
    assert ballcl.__version__.count(".") == 2 and ballcl.__version__[0].isdigit()
    for name in ballcl.__all__:
        assert hasattr(ballcl, name), name


def test_import_leaves_the_environment_alone():
    code = ("import os, json; before = dict(os.environ); import ballcl; ballcl.devices(); "
            "print(json.dumps(dict(os.environ) == before))")
    env = {k: v for k, v in os.environ.items() if k != "BALLCL_KERNEL_DIR"}
    p = python_c(code, env=env)
    assert p.returncode == 0 and p.stdout.strip() == "true", p.stdout + p.stderr


def test_kernels_found_beside_the_module(dev):
    """No BALLCL_KERNEL_DIR: the kernels in ballcl/cl beside the extension."""
    here = os.path.dirname(os.path.abspath(ballcl._core.__file__))
    # The models' updates and the kernels generated around them.
    for f in ("seed.cl", "bounce.cl", "kernels.cl"):
        assert os.path.isfile(os.path.join(here, "cl", f)), f
    env = {k: v for k, v in os.environ.items() if k != "BALLCL_KERNEL_DIR"}
    code = ("import sys, numpy as np, ballcl; "
            "print(ballcl.run(np.ones((64, 4), np.float32), 3, device=sys.argv[1])[1]"
            ".validation['passed'])")
    p = python_c(code, dev, env=env, cwd="/", timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "True", p.stdout + p.stderr


def test_devices_has_every_field_of_the_cli():
    devs = ballcl.devices()
    assert devs and all(isinstance(d, dict) for d in devs)
    for key in ("selector", "default", "name", "platform", "type", "compute_units",
                "global_mem_bytes", "extensions", "max_work_item_sizes", "fp64"):
        assert key in devs[0], key
    assert sum(d["default"] for d in devs) <= 1
    cli = os.environ.get("BALLCL")
    if not cli or not os.path.exists(cli):
        pytest.skip("no ballcl program to compare with (an installed package has none)")
    out = subprocess.run([cli, "devices", "--json"], capture_output=True, text=True, timeout=120,
                         check=True).stdout
    cli_devs = json.loads(out)["devices"]
    # The same fields in the same order; the same values but for the memory
    # sizes, which PoCL derives from the memory free when it starts.
    assert [list(d) for d in cli_devs] == [list(d) for d in devs]
    varies = ("global_mem_bytes", "max_alloc_bytes")
    assert ([{k: v for k, v in d.items() if k not in varies} for d in cli_devs]
            == [{k: v for k, v in d.items() if k not in varies} for d in devs])


def test_context_device_is_a_devices_entry(dev):
    with ballcl.Context(device=dev) as ctx:
        entry = next(d for d in ballcl.devices() if d["selector"] == ctx.device["selector"])
        assert ctx.device == entry


def test_context_state_is_keyword_only(dev):
    with ballcl.Context(device=dev) as ctx:
        with pytest.raises(TypeError):
            ctx.run(1, S)
        out, r = ctx.run(2, state=S)
        assert r.context["uploaded"] and np.array_equal(out[:, 0], np.full(16, 4, np.float32))


def test_device_error_fields_come_from_the_library(dev):
    """The call is the function alone, even where the message names a query
    in brackets (which text parsing never found)."""
    code = ("import sys, ballcl\n"
            "try:\n    ballcl.Context(device=sys.argv[1])\n"
            "except ballcl.DeviceError as e:\n    print(e.call, e.status, e.exit_code)\n")
    env = dict(os.environ, BALLCL_FAULT="clCreateContext:1:CL_INVALID_DEVICE")
    p = python_c(code, dev, env=env)
    assert p.stdout.split() == ["clCreateContext", "CL_INVALID_DEVICE", "3"], p.stdout + p.stderr
    with pytest.raises(ballcl.InputError) as info:
        ballcl.run(S, 1, device="no-such-device-xyz")
    assert not hasattr(info.value, "call") or info.value.call is None


def test_survey_is_the_survey_document(dev):
    doc = ballcl.survey(device=dev, quick=True)
    assert doc["schema"].startswith("ballcl-survey/") and doc["quick"] is True
    assert doc["ballcl_version"] == ballcl.__version__
    assert len(doc["devices"]) == 1
    d = doc["devices"][0]
    assert d["identity"]["name"] == next(x["name"] for x in ballcl.devices()
                                         if x["selector"] == d["selector"])
    assert "build_ms_cold" in d["measured"] and isinstance(d["errors"], dict)
    assert "not changed" in doc["settings"]["driver_caches"]
    with pytest.raises(TypeError):
        ballcl.survey(device=dev, quick="yes")
    with pytest.raises(ballcl.InputError):
        ballcl.survey(device="no-such-device-xyz", quick=True)


def test_help_names_every_parameter_and_the_exceptions():
    """help(ballcl.run) and the rest: parameters, return value, exceptions."""
    import inspect
    for fn in (ballcl.run, ballcl.survey, ballcl.Context, ballcl.Context.run):
        doc = fn.__doc__ or ""
        for name in inspect.signature(fn).parameters:
            if name != "self":
                assert f"    {name}: " in doc, (fn, name)
        assert "Raises:" in doc and "InputError" in doc and "DeviceError" in doc, fn
    for fn in (ballcl.run, ballcl.Context.run):
        assert "Returns:" in fn.__doc__ and "MismatchError" in fn.__doc__ and "TypeError" in fn.__doc__
    for fn in (ballcl.devices, ballcl.cached, ballcl.close, ballcl.Result, ballcl.Result.as_dict,
               ballcl.Context.close, ballcl.Context.__exit__):
        assert fn.__doc__ and ("Returns:" in fn.__doc__ or "Raises:" in fn.__doc__), fn


def test_another_interpreter_is_named(tmp_path):
    """A build tree's package loaded by an interpreter it was not built for
    says which one it was built for (here: a copy whose extension cannot
    load, and whose build record names another interpreter)."""
    import shutil
    pkg = tmp_path / "ballcl"
    shutil.copytree(os.path.dirname(ballcl.__file__), pkg,
                    ignore=shutil.ignore_patterns("_core.*.so", "__pycache__"))
    (pkg / "build-python.txt").write_text("cpython 3.99 (/opt/python3.99/bin/python3)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tmp_path)
    p = subprocess.run([sys.executable, "-c", "import ballcl"], env=env, capture_output=True,
                       text=True, timeout=60)
    last = p.stderr.strip().splitlines()[-1]
    assert p.returncode == 1 and "built for cpython 3.99 (/opt/python3.99/bin/python3)" in last, last
    assert f"this is {sys.implementation.name} {sys.version_info.major}." in last, last
