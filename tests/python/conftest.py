"""Shared fixtures of the module's tests: the device to test on and NumPy
references of the models."""
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/: bounce_reference.py

import ballcl  # noqa: E402
from bounce_reference import seed_reference  # noqa: E402,F401 (for the tests)


@pytest.fixture(scope="session")
def dev():
    """BALLCL_TEST_DEVICE, else the first CPU (PoCL in CI), else the first device."""
    sel = os.environ.get("BALLCL_TEST_DEVICE")
    if sel:
        return sel
    devs = ballcl.devices()
    cpus = [d for d in devs if d["type"] == "cpu"]
    return cpus[0]["selector"] if cpus else devs[0]["selector"]


def python_c(code, *args, env=None, timeout=120, cwd=None):
    """`python -c CODE ARGS...` in a fresh process, its output captured as
    text: for what only a new process shows (BALLCL_FAULT is read once per
    process, the environment at import)."""
    return subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


# The start of a two_pocl_devices script: sels, the PoCL devices' selectors.
TWO_PREFIX = """
import sys
import numpy as np
import ballcl
sys.path.insert(0, sys.argv[1])
sels = [d["selector"] for d in ballcl.devices() if d["platform"].startswith("Portable")]
if len(sels) < 2:
    print("skip: fewer than two PoCL devices")
    sys.exit(0)
"""


def two_pocl_devices(script):
    """Runs TWO_PREFIX + script (dedented) in a new process with two PoCL
    devices (POCL_DEVICES="pthread pthread" is read when PoCL starts); skips
    with fewer; its last line must be "ok"."""
    env = dict(os.environ, POCL_DEVICES="pthread pthread")
    env.pop("BALLCL_TEST_DEVICE", None)
    p = python_c(TWO_PREFIX + textwrap.dedent(script), HERE, env=env, timeout=600)
    if p.stdout.startswith("skip:"):
        pytest.skip(p.stdout.strip())
    assert p.returncode == 0 and p.stdout.splitlines()[-1] == "ok", p.stdout + p.stderr


def in_threads(work, count):
    """work(i) for i in range(count), each in a thread of its own, all at
    once; returns the exceptions they raised."""
    errors = []

    def one(i):
        try:
            work(i)
        except Exception as e:  # noqa: BLE001 - returned
            errors.append(e)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def mixed_state(rng, n):
    """Finite float32 values of mixed sign and magnitude, w never zero, so a
    kernel that drops a term or reorders the update gives other bits."""
    sign = rng.choice(np.array([-1, 1], np.float32), size=(n, 4))
    mag = np.exp2(rng.integers(-6, 15, size=(n, 4))).astype(np.float32)
    frac = rng.uniform(1, 2, size=(n, 4)).astype(np.float32)
    return (sign * mag * frac).astype(np.float32)


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
