"""What a newcomer meets (docs/RELIABILITY.md, round four, classes 12 to 14):

- tools/setup.sh run installs what a run needs and nothing only the tests use
  (`tools/setup.sh packages run|test` lists them); a build configured without
  the test packages (no cmocka here) builds the program and leaves the tests
  out, with a warning.
- the sanitizer suites that run as nobody read LeakSanitizer's suppressions
  from a copy in their own world-readable folder, so a clone in a 0700 /root
  works (testlib.share_suppressions); checked as root with setpriv.
- `ballcl --help` names --version.

Environment (from tests/meson.build): BALLCL.
"""
import os
import shutil
import subprocess
import tempfile

import testlib
from testlib import check

ROOT = testlib.SOURCE_ROOT
SETUP = os.path.join(ROOT, "tools", "setup.sh")
tmp = testlib.tempdir()


def packages(mode):
    p = subprocess.run(["sh", SETUP, "packages", mode], capture_output=True, text=True)
    check(p.returncode == 0, f"setup.sh packages {mode}: exit 0", p.stderr)
    return p.stdout.split()


# ---- 13: run installs what a run needs ----------------------------------------------------
run, test = packages("run"), packages("test")
need = {"build-essential", "meson", "ninja-build", "pkg-config", "ocl-icd-libopencl1",
        "ocl-icd-opencl-dev", "pocl-opencl-icd", "libjansson-dev", "libmd-dev", "libpng-dev",
        "libsqlite3-dev"}
check(need <= set(run), "run: the compiler, build tools, OpenCL loader and headers, PoCL and "
      "the linked libraries", str(sorted(need - set(run))))
test_only = {"chromium", "chromium-driver", "python3-selenium", "clang", "libclang-rt-dev",
             "oclgrind", "mypy", "libcmocka-dev", "gnuplot-nox", "mesa-opencl-icd",
             "python3-pytest", "python3-build", "python3-venv", "openmpi-bin"}
check(not set(run) & test_only, "run: nothing only the tests use",
      str(sorted(set(run) & test_only)))
check(set(run) <= set(test) and test_only <= set(test), "test: every package of run, and the "
      "tests' own", str(sorted(test_only - set(test))))
p = subprocess.run(["sh", SETUP, "packages", "walk"], capture_output=True, text=True)
check(p.returncode == 2 and p.stdout == "", "setup.sh packages walk: usage, exit 2", p.stderr)

# A configuration without cmocka (what 'run' installs has none): the program
# is built, the tests are left out with a warning.
meson = shutil.which("meson")
pkgconf = subprocess.run(["pkg-config", "--variable", "pc_path", "pkg-config"],
                         capture_output=True, text=True).stdout.strip()
if meson and pkgconf:
    pc = os.path.join(tmp, "pc")
    os.makedirs(pc)
    for d in pkgconf.split(":"):
        for f in os.listdir(d) if os.path.isdir(d) else []:
            if f.endswith(".pc") and f != "cmocka.pc" and not os.path.exists(os.path.join(pc, f)):
                os.symlink(os.path.join(d, f), os.path.join(pc, f))
    b = os.path.join(tmp, "build-run")
    p = subprocess.run([meson, "setup", b, ROOT], capture_output=True, text=True,
                       env=dict(os.environ, PKG_CONFIG_LIBDIR=pc, PKG_CONFIG_PATH=""))
    check(p.returncode == 0 and "no tests: they need cmocka" in p.stdout,
          "meson setup without cmocka: configured, the tests left out with a warning",
          p.stdout[-1500:] + p.stderr[-1500:])
    intro = subprocess.run([meson, "introspect", "--tests", b], capture_output=True, text=True)
    targets = subprocess.run([meson, "introspect", "--targets", b], capture_output=True,
                             text=True)
    check(intro.stdout.strip() in ("[]", "") and '"name": "ballcl"' in targets.stdout,
          "... no test, the program still a target", intro.stdout[:300])
else:
    print("skip (case): meson or pkg-config missing")

# ---- 12: the suppressions where nobody can read them -----------------------------------------
NOBODY = 65534
setpriv = shutil.which("setpriv")
if os.geteuid() == 0 and setpriv:
    private = os.path.join(tmp, "root-like")
    os.makedirs(private)
    os.chmod(private, 0o700)
    supp = os.path.join(private, "lsan.supp")
    shutil.copy(os.path.join(ROOT, "tests", "lsan.supp"), supp)
    shared = tempfile.mkdtemp(prefix="ballcl-test-shared.")
    os.chmod(shared, 0o755)
    nobody = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
    saved = os.environ.get("LSAN_OPTIONS")
    os.environ["LSAN_OPTIONS"] = f"suppressions={supp}:print_suppressions=0"
    before = subprocess.run(nobody + ["cat", supp], capture_output=True)
    testlib.share_suppressions(shared)
    opts = os.environ["LSAN_OPTIONS"]
    after = subprocess.run(nobody + ["cat", opts.split(":")[0][13:]], capture_output=True)
    check(before.returncode != 0 and after.returncode == 0 and
          opts.endswith(":print_suppressions=0") and shared in opts,
          "suppressions in a 0700 folder: nobody reads the copy LSAN_OPTIONS now names", opts)
    if saved is None:
        del os.environ["LSAN_OPTIONS"]
    else:
        os.environ["LSAN_OPTIONS"] = saved
    shutil.rmtree(shared, ignore_errors=True)
else:
    print("skip (case): the suppressions as nobody need root and setpriv")

# ---- 14: --version in --help ---------------------------------------------------------------------
r = testlib.run(["--help"])
check(r.rc == 0 and "--version" in r.out, "ballcl --help names --version", r.describe())
r = testlib.run(["--version"])
check(r.rc == 0 and r.out.startswith("ballcl "), "ballcl --version prints it", r.describe())

testlib.finish()
