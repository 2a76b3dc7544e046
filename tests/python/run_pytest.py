"""Runs the Python module's tests with pytest, under the interpreter meson
builds the module for (Debian's python3). Exits 77 (meson's "skipped") when
there is no OpenCL device, like every device test of ballcl.

Usage (tests/meson.build does this): run_pytest.py BUILD_PYTHON_DIR [pytest args]
       run_pytest.py --installed [pytest args]
With --installed the tests run against the ballcl the interpreter imports
(a package installed with pip, tests/test_package.py), not the build tree's.
"""
import os
import sys

# In the sanitizer build the module needs the ASan runtime loaded before
# anything else; the interpreter's own allocations at exit are no leak of
# ours, so LeakSanitizer is off here (memory errors still end the run).
asan = os.environ.get("BALLCL_ASAN_RUNTIME")
if asan and asan not in os.environ.get("LD_PRELOAD", ""):
    env = dict(os.environ, LD_PRELOAD=asan,
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

if sys.argv[1] != "--installed":
    sys.path.insert(0, sys.argv[1])
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [sys.argv[1]] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])

import ballcl  # noqa: E402
import pytest  # noqa: E402

print(f"ballcl {ballcl.__version__} from {os.path.dirname(ballcl.__file__)}")

try:
    found = ballcl.devices()
except ballcl.DeviceError as e:
    print(f"skip: no OpenCL device: {e}")
    sys.exit(77)
if not found:
    print("skip: no OpenCL device")
    sys.exit(77)
here = os.path.dirname(os.path.abspath(__file__))
extra = []
if asan:
    # Under ASan the stress tests measure nothing: its quarantine keeps freed
    # memory (RSS bounds), and 10000 calls outlast the test's time. The main
    # build runs them; here every other test checks the module's C paths.
    print("sanitizer build: test_stress.py left out")
    extra = ["--ignore", os.path.join(here, "test_stress.py")]
sys.exit(pytest.main(["-p", "no:cacheprovider", "-q", "-rs", here] + extra + sys.argv[2:]))
