"""mypy over the package's type stubs (ballcl/_core.pyi, ballcl/__init__.py)
and every example (examples/*.py), against the build tree's package: the
stubs must be consistent, and the examples must type-check as a user's
program would with the package installed. Then mypy's stubtest compares the
stubs with the extension itself: every public name the module has is in the
stubs, with the same arguments (keyword-only ones included), and no more.

Usage (tests/meson.build): test_mypy.py BUILD_PYTHON_DIR SOURCE_ROOT
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

pkg_dir, src = sys.argv[1], sys.argv[2]
mypy = shutil.which("mypy")
if not mypy:
    print("skip: mypy is not installed (tools/setup.sh installs Debian's)")
    sys.exit(77)
examples = sorted(glob.glob(os.path.join(src, "examples", "*.py")))
if not examples:
    print("FAIL no examples/*.py to check")
    sys.exit(1)
env = dict(os.environ, MYPYPATH=pkg_dir)
status = 0
# A user's program: a return inside `with ballcl.Context()` (whose __exit__
# returns None, so mypy knows the with block cannot swallow the exception),
# and Result's fields with their types.
USER = '''import numpy as np
import numpy.typing as npt
import ballcl


def frames(state: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    with ballcl.Context() as c:
        s, r = c.run(10, state=state)
        passed: bool = r.validation["passed"]
        balls: int = r.balls
        model: str = r.model
        assert passed and balls == len(state) and model == "seed"
        return s


def copy_of(r: ballcl.Result) -> ballcl.Result:
    import copy
    return copy.deepcopy(r)
'''
user_dir = tempfile.mkdtemp(prefix="ballcl-mypy-user-")
user = os.path.join(user_dir, "user_program.py")
with open(user, "w", encoding="utf-8") as f:
    f.write(USER)
# mypy takes a package or files, not both: the stubs, then the examples and
# the user's program.
for what in (["-p", "ballcl"], examples + [user]):
    cmd = [mypy, "--strict", "--no-incremental", "--cache-dir", os.devnull,
           "--python-executable", sys.executable] + what
    print("+", " ".join(cmd))
    p = subprocess.run(cmd, env=env, cwd=src, capture_output=True, text=True, timeout=600)
    print(p.stdout + p.stderr)
    status = status or p.returncode
# stubtest imports the module: under AddressSanitizer that needs the runtime
# preloaded into an interpreter that is not instrumented; the main build
# runs it.
if os.environ.get("BALLCL_ASAN_RUNTIME"):
    print("sanitizer build: stubtest left out")
else:
    cmd = [sys.executable, "-m", "mypy.stubtest", "ballcl"]
    print("+", " ".join(cmd))
    with tempfile.TemporaryDirectory(prefix="ballcl-stubtest-") as tmp:
        # Its cache in a folder of its own, not in the source tree.
        p = subprocess.run(cmd, env=dict(env, PYTHONPATH=pkg_dir, MYPY_CACHE_DIR=tmp), cwd=tmp,
                           capture_output=True, text=True, timeout=600)
    print(p.stdout + p.stderr)
    status = status or p.returncode
shutil.rmtree(user_dir, ignore_errors=True)
sys.exit(0 if status == 0 else 1)
