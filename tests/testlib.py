"""Helpers shared by the Python tests of ballcl (device, NumPy and CLI tests).

Each test script is a plain program run by meson: it prints one line per
check, exits 0 when every check passed, 1 when any failed, and 77 (meson's
"skipped") when it needs an OpenCL device and there is none, so that a
machine without a device never reports a device test as passed.

The environment comes from tests/meson.build: BALLCL (the executable),
BALLCL_KERNEL_DIR and BALLCL_CACHE_DIR. BALLCL_TEST_DEVICE picks the device
(default: the first CPU, else the first device) for the device tests.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
BALLCL = os.environ.get("BALLCL", "")
HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(HERE)
KERNEL_DIR = os.environ.get("BALLCL_KERNEL_DIR") or os.path.join(SOURCE_ROOT, "cl")

_failures = []
_checks = 0


def check(ok, what, detail=""):
    """Records one check; a failure is printed with its detail and counted."""
    global _checks
    _checks += 1
    if ok:
        print(f"ok   {what}")
    else:
        print(f"FAIL {what}" + (f"\n     {detail}" if detail else ""))
        _failures.append(what)
    return ok


def finish():
    """Exits 1 if any check failed, else 0."""
    if _failures:
        print(f"{len(_failures)} of {_checks} checks failed:")
        for f in _failures:
            print(f"  {f}")
        sys.exit(1)
    print(f"all {_checks} checks passed")
    sys.exit(0)


def skip(why):
    print(f"skip: {why}")
    sys.exit(SKIP)


def skip_when_variant_forced(what):
    """Exits 77 under BALLCL_FORCE_BALLS_PER_ITEM (docs/testing.md): `what`
    checks the variant or tuned-configuration rules themselves, which the
    setting overrides on purpose."""
    if os.environ.get("BALLCL_FORCE_BALLS_PER_ITEM"):
        skip(f"{what} checks the variant rules, which BALLCL_FORCE_BALLS_PER_ITEM overrides")


class Result:
    def __init__(self, args, proc):
        self.args = args
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def err_lines(self):
        return self.err.splitlines()

    def json(self):
        return json.loads(self.out)

    def describe(self):
        return (f"ballcl {' '.join(self.args)}: exit {self.rc}\n"
                f"     stdout: {self.out[-600:]!r}\n     stderr: {self.err[-600:]!r}")


def run(args, env=None, timeout=120):
    """Runs ballcl with args (a list of strings) and extra environment
    variables (None removes one); returns a Result. A signal (a crash) is
    always a failure."""
    if not BALLCL:
        print("BALLCL is not set: run this through 'meson test'")
        sys.exit(1)
    e = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    p = subprocess.run([BALLCL] + [str(a) for a in args], env=e, capture_output=True,
                       text=True, timeout=timeout)
    r = Result([str(a) for a in args], p)
    if r.rc < 0:
        check(False, f"ballcl {' '.join(r.args)} is not killed by a signal", r.describe())
    # In a sanitizer build a report may exit 1, the code of a mismatch, so
    # look for the report itself.
    for mark in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
        if mark in r.err:
            check(False, f"ballcl {' '.join(r.args)}: no sanitizer report", r.describe())
            break
    return r


def expect_error(args, code, *substrings, env=None, what=None):
    """Checks that ballcl fails with exit `code` and exactly one line on
    stderr holding every substring; returns the Result."""
    r = run(args, env=env)
    label = what or f"ballcl {' '.join(r.args)}"
    lines = r.err_lines()
    ok = (r.rc == code and len(lines) == 1 and lines[0].startswith("ballcl")
          and all(s in lines[0] for s in substrings))
    check(ok, f"{label} -> exit {code}, one line with {list(substrings)}", r.describe())
    return r


def empty_icd_env(tmp):
    """Environment in which the ICD loader finds no platform at all."""
    d = os.path.join(tmp, "no-vendors")
    os.makedirs(d, exist_ok=True)
    return {"OCL_ICD_VENDORS": d, "OCL_ICD_FILENAMES": None}


_device = None


def require_device():
    """Returns the selector of the device to test on, or exits 77 when
    'ballcl devices' finds none (exit 3). Any other failure is a failure."""
    global _device
    if _device:
        return _device
    r = run(["devices", "--json"])
    if r.rc == 3:
        skip(f"no OpenCL device: {r.err.strip()}")
    if r.rc != 0:
        print(f"'ballcl devices --json' failed: {r.describe()}")
        sys.exit(1)
    devs = r.json()["devices"]
    if not devs:
        print("'ballcl devices' exited 0 with no device")
        sys.exit(1)
    sel = os.environ.get("BALLCL_TEST_DEVICE")
    if not sel:
        cpus = [d for d in devs if d["type"] == "cpu"]
        sel = "cpu" if cpus else devs[0]["selector"]
    print(f"device: {sel}")
    _device = sel
    return sel


# PoCL shows two CPU devices with this; the rest keeps a test's own choice
# of device and split out of the way.
TWO_POCL = {"POCL_DEVICES": "pthread pthread", "POCL_MAX_PTHREAD_COUNT": "1",
            "BALLCL_DEVICE": None, "BALLCL_TEST_SPLIT": None}


def two_pocl_devices(env):
    """The selectors of the first two PoCL devices under env (TWO_POCL and
    more), or exit 77 when there are not two."""
    r = run(["devices", "--json"], env=env)
    devs = [d for d in r.json()["devices"]
            if "Portable Computing Language" in d["platform"]] if r.rc == 0 else []
    if len(devs) < 2:
        skip("POCL_DEVICES='pthread pthread' gives no two PoCL devices")
    return devs[0]["selector"], devs[1]["selector"]


def share_suppressions(folder):
    """For runs as another user (nobody): LeakSanitizer's suppressions file
    (LSAN_OPTIONS=suppressions=PATH, tools/sanitize.sh) copied into folder,
    which that user can read, and LSAN_OPTIONS pointed at the copy. The
    checkout may be where no other user can read (a clone in /root, mode
    0700), and a sanitizer that cannot read its suppressions ends the run."""
    opts = os.environ.get("LSAN_OPTIONS", "")
    parts = opts.split(":")
    for i, part in enumerate(parts):
        if part.startswith("suppressions=") and os.path.exists(part[13:]):
            copy = os.path.join(folder, "lsan.supp")
            shutil.copy(part[13:], copy)
            os.chmod(copy, 0o644)
            parts[i] = "suppressions=" + copy
    os.environ["LSAN_OPTIONS"] = ":".join(parts)


def tempdir():
    """A fresh folder, removed at exit."""
    d = tempfile.mkdtemp(prefix="ballcl-test.")
    import atexit
    atexit.register(shutil.rmtree, d, True)
    return d
