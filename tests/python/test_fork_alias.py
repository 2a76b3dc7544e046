"""Round four of the outside test (docs/RELIABILITY.md): a process forked
after OpenCL was used gets a clear DeviceError at once, never a hang
(multiprocessing's default start method, os.fork, every entry point, the
inherited objects freed at exit); and a returned array changed through a
writable alias NumPy does not see is taken as a changed state, never
continued from the device's old one."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ballcl
from conftest import seed_reference

LIMIT = 30


def script(body, dev):
    """Runs body in a fresh interpreter (a hang ends at LIMIT s); returns it."""
    code = "import os, sys, numpy as np, ballcl\nDEV = %r\n" % dev + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=LIMIT, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))


def test_pool_with_fork_after_devices_raises_at_once(dev):
    """The issue's case: ballcl.devices(), then a fork Pool whose workers run."""
    p = script("""
        import multiprocessing as mp
        ballcl.devices()
        def work(i):
            s, r = ballcl.run(np.ones((64, 4), np.float32), 2, device=DEV)
            return float(s[0, 0])
        with mp.get_context("fork").Pool(2) as pool:
            try:
                pool.map_async(work, range(4)).get(timeout=20)
                print("no error")
            except ballcl.DeviceError as e:
                print("DeviceError:", e)
        s, r = ballcl.run(np.ones((64, 4), np.float32), 2, device=DEV)
        print("parent still runs:", s[0, 0])
        """, dev)
    assert p.returncode == 0, p.stderr
    assert "DeviceError: this process was forked after ballcl used OpenCL" in p.stdout, p.stdout
    assert "'spawn'" in p.stdout
    assert "parent still runs: 4.0" in p.stdout, p.stdout


@pytest.mark.parametrize("call", [
    "ballcl.devices()",
    "ballcl.run(np.ones((8, 4), np.float32), 1, device=DEV)",
    "ballcl.run(np.ones((8, 4), np.float32), 1, device=DEV, cache=False)",
    "ballcl.Context(device=DEV)",
    "ctx.run(1)",
    "ballcl.survey(DEV, quick=True)",
])
def test_every_entry_point_in_a_forked_child(dev, call):
    """os.fork after a run: each entry point raises DeviceError at once; the
    inherited context, arrays and cached contexts are dropped at the child's
    normal exit without touching OpenCL."""
    p = script("""
        s, r = ballcl.run(np.ones((8, 4), np.float32), 1, device=DEV)
        ctx = ballcl.Context(device=DEV)
        t, _ = ctx.run(1, state=s)
        pid = os.fork()
        if pid == 0:
            try:
                %s
                print("child: no error", flush=True)
            except ballcl.DeviceError as e:
                print("child: DeviceError", e.exit_code, flush=True)
            del s, t, ctx
            sys.exit(0)
        _, status = os.waitpid(pid, 0)
        print("child exit", os.waitstatus_to_exitcode(status))
        """ % call, dev)
    assert p.returncode == 0, p.stderr
    assert "child: DeviceError 3" in p.stdout, p.stdout + p.stderr
    assert "child exit 0" in p.stdout, p.stdout


def test_fork_before_any_opencl_use_runs(dev):
    """A child forked before the parent used OpenCL may use it: the rule is
    about the runtime the child inherits, not about forks."""
    p = script("""
        pid = os.fork()
        if pid == 0:
            s, r = ballcl.run(np.ones((8, 4), np.float32), 2, device=DEV)
            os._exit(0 if s[0, 0] == 4.0 else 1)
        _, status = os.waitpid(pid, 0)
        print("child exit", os.waitstatus_to_exitcode(status))
        """, dev)
    assert "child exit 0" in p.stdout, p.stdout + p.stderr


class Alias:
    """A writable view of a's memory that NumPy takes through
    __array_interface__ (the read-only flag dropped)."""

    def __init__(self, a):
        i = dict(a.__array_interface__)
        i["data"] = (i["data"][0], False)
        self.__array_interface__ = i


def writable_alias(a):
    w = np.asarray(Alias(a))
    assert w.flags.writeable and w.__array_interface__["data"][0] == \
        a.__array_interface__["data"][0]
    return w


def start():
    rng = np.random.default_rng(5)
    return rng.uniform(-4, 4, size=(256, 4)).astype(np.float32)


def test_run_alias_changed_then_passed_back(dev):
    """The issue's case with ballcl.run: the changed array is the state."""
    s, _ = ballcl.run(start(), 3, device=dev)
    w = writable_alias(s)
    w[10] = [100, 200, 300, 400]
    w[255, 3] = -7
    want = seed_reference(np.array(s), 4)
    t, _ = ballcl.run(s, 4, device=dev)
    assert np.array_equal(t, want)


def test_context_alias_changed_state_given_or_none(dev):
    with ballcl.Context(device=dev) as ctx:
        s, _ = ctx.run(2, state=start())
        s, _ = ctx.run(2, state=s)
        w = writable_alias(s)
        w[0, 0] += 1000
        want = seed_reference(np.array(s), 3)
        t, _ = ctx.run(3, state=s)
        assert np.array_equal(t, want)
        # state=None continues the array returned last, changed too.
        w = writable_alias(t)
        w[:, 2] = 0.5
        want = seed_reference(np.array(t), 1)
        u, _ = ctx.run(1)
        assert np.array_equal(u, want)


def test_alias_with_nan_is_refused(dev):
    s, _ = ballcl.run(start(), 1, device=dev)
    writable_alias(s)[3, 1] = np.nan
    with pytest.raises(ballcl.InputError, match="ball 3"):
        ballcl.run(s, 1, device=dev)


def test_unchanged_array_still_continues_without_upload(dev):
    s, _ = ballcl.run(start(), 1, device=dev)
    up = [c["uploads"] for c in ballcl.cached()]
    s, _ = ballcl.run(s, 1, device=dev)
    assert [c["uploads"] for c in ballcl.cached()] == up
    writable_alias(s)[0, 0] = 1
    s, _ = ballcl.run(s, 1, device=dev)
    assert sum(c["uploads"] for c in ballcl.cached()) == sum(up) + 1
