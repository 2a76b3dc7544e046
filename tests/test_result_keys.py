"""The result of a run is one tree (docs/DESIGN.md, "Report and JSON"):
`ballcl run --json`, Python's `ballcl.run(...)[1].as_dict()` and the MPI
report (`mpirun -n 2 ballcl run --json`) have the same FULL key trees, but
for the keys only one of them can have:

  - the CLI's `seed` and `init` (a Python state comes from the caller);
  - Python's `context` (a Context's counters) and `readback` (the memory
    the new state was read into);
  - the MPI report's `ranks` and `mpi` (every rank's row and the run's MPI
    figures; its `devices` are rank 0's).

Usage (tests/meson.build): test_result_keys.py BUILD_PYTHON_DIR. Skipped
(77) without a device; the MPI part is left out without mpirun or MPI.
"""
import os
import shutil
import subprocess
import sys

# In the sanitizer build the module needs the ASan runtime loaded first
# (as tests/python/run_pytest.py does).
asan = os.environ.get("BALLCL_ASAN_RUNTIME")
if asan and asan not in os.environ.get("LD_PRELOAD", ""):
    env = dict(os.environ, LD_PRELOAD=asan,
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import testlib  # noqa: E402
from testlib import check  # noqa: E402

CLI_ONLY = {"seed", "init"}
PYTHON_ONLY = {"context", "readback"}
MPI_ONLY = {"ranks", "mpi"}

sys.path.insert(0, sys.argv[1])
import numpy as np  # noqa: E402

import ballcl  # noqa: E402


def tree(v, at="", nulls=None):
    """Every key path of v: "timing.us_per_step", "devices[].launch.local";
    the paths whose value is None are added to nulls."""
    out = set()
    if isinstance(v, dict):
        for k, x in v.items():
            if x is None and nulls is not None:
                nulls.add(at + k)
            out |= {at + k} | tree(x, at + k + ".", nulls)
    elif isinstance(v, list):
        for x in v:
            out |= tree(x, at[:-1] + "[].", nulls)
    return out


def trees(a, b):
    """The key trees of a and b, but for what lies under a key that is None
    on one side (launch_costs before the costs are measured: a value, not
    a key, differs)."""
    nulls = set()
    ta, tb = tree(a, nulls=nulls), tree(b, nulls=nulls)

    def under_null(p):
        return any(p.startswith(n + ".") for n in nulls)
    return ({p for p in ta if not under_null(p)}, {p for p in tb if not under_null(p)})


def top_less(v, keys):
    return {k: x for k, x in v.items() if k not in keys}


dev = testlib.require_device()
N, S = 1000, 10
state = np.random.default_rng(3).random((N, 4), dtype=np.float32)
tmp = testlib.tempdir()
np.save(os.path.join(tmp, "in.npy"), state)

r = testlib.run(["run", "-d", dev, "--input", os.path.join(tmp, "in.npy"), "-s", str(S),
                 "--json"])
check(r.rc == 0, "ballcl run --json", r.describe())
cli = r.json()
check(CLI_ONLY <= set(cli), "run --json has its own keys seed and init", sorted(cli))

_, res = ballcl.run(state, S, device=dev)
py = res.as_dict()
check(PYTHON_ONLY <= set(py), "as_dict() has its own keys context and readback", sorted(py))

a, b = trees(top_less(cli, CLI_ONLY), top_less(py, PYTHON_ONLY))
check(a == b, "the key trees of run --json and as_dict() are equal but for the listed keys",
      f"CLI only: {sorted(a - b)}; Python only: {sorted(b - a)}")
# The Result's attributes are the same fields.
check(all(getattr(res, k) == py[k] for k in py), "every field of as_dict() is an attribute")
# The same run on the same device: the values that do not vary agree.
for k in ("device", "model", "params", "balls", "steps", "buffers"):
    check(cli[k] == py[k], f"run --json and as_dict() agree on {k}", f"{cli[k]} != {py[k]}")

# ---- the MPI report ------------------------------------------------------------------
MPIRUN = shutil.which("mpirun")
if MPIRUN:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               POCL_MAX_PTHREAD_COUNT="1", OMPI_MCA_orte_abort_on_non_zero_status="0")
    for k in ("BALLCL_FAULT", "BALLCL_FAULT_RANK"):
        env.pop(k, None)
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":detect_leaks=0"  # as tests/test_mpi.py
    p = subprocess.run([MPIRUN, "--oversubscribe", "-n", "2", testlib.BALLCL, "run", "-d", dev,
                        "--input", os.path.join(tmp, "in.npy"), "-s", str(S), "--json"],
                       env=env, capture_output=True, text=True, timeout=300)
    m = testlib.Result(["mpirun", "-n", "2", "run", "--json"], p)
    check(m.rc == 0, "mpirun -n 2 ballcl run --json", m.describe())
    mpi = m.json()
    if "ranks" in mpi:  # else built without MPI: the plain program ran
        check(MPI_ONLY <= set(mpi), "the MPI report has its own keys ranks and mpi")
        c, d = trees(top_less(mpi, MPI_ONLY), cli)
        check(c == d, "the MPI report's keys are run --json's but ranks and mpi",
              f"MPI only: {sorted(c - d)}; run only: {sorted(d - c)}")

testlib.finish()
