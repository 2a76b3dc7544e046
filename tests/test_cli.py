"""Command-line tests that need no OpenCL device (README.md, docs/RELIABILITY.md): help and
version, and every usage or input error that ballcl must catch before it
touches a device: a one-line message on stderr naming the input and what
was expected, exit 2, nothing written. Also: with no OpenCL platform at all
the exit is 3 with a message naming how to install one, and every test
that needs a device skips (exit 77) instead of passing."""

import os
import re
import subprocess
import sys

import numpy as np

import testlib
from testlib import check, expect_error, run

tmp = testlib.tempdir()

# ---- help and version ----------------------------------------------------------
r = run(["--version"])
check(r.rc == 0 and re.fullmatch(r"ballcl \d+\.\d+\.\d+\n", r.out) and r.err == "",
      "--version prints 'ballcl X.Y.Z' and exits 0", r.describe())

commands = []
for flag in ("--help", "-h", "help"):
    r = run([flag])
    check(r.rc == 0 and r.out.startswith("usage: ballcl <command>") and r.err == "",
          f"ballcl {flag} exits 0 with the usage on stdout", r.describe())
    if flag == "--help":
        # The command table as the program prints it, so that every command
        # added later is held to the same rules.
        body = r.out.split("commands:\n", 1)[1].split("\n\n", 1)[0]
        commands = [line.split()[0] for line in body.splitlines() if line.strip()]
check("devices" in commands and "run" in commands, "--help lists devices and run", str(commands))
for cmd in commands:
    for flag in ("--help", "-h"):
        r = run([cmd, flag])
        check(r.rc == 0 and r.out.startswith(f"usage: ballcl {cmd}") and r.err == "",
              f"ballcl {cmd} {flag} exits 0 with its usage on stdout", r.describe())

r = run([])
check(r.rc == 2 and r.out == "" and r.err.startswith("usage: ballcl"),
      "ballcl with no command: usage on stderr, exit 2", r.describe())
expect_error(["frob"], 2, "unknown command 'frob': expected one of", "devices", "run")
expect_error(["devices", "--bogus"], 2, "unknown option '--bogus'", "ballcl devices --help")
expect_error(["devices", "extra"], 2, "unexpected argument 'extra'")

# ---- counts ------------------------------------------------------------------
for opt, name in (("-n", "--balls"), ("--balls", "--balls"), ("-s", "--steps"),
                  ("--seed", "--seed"), ("--steps-per-launch", "--steps-per-launch"),
                  ("--tolerance-ulp", "--tolerance-ulp")):
    for bad, says in (("abc", "is not a non-negative integer"),
                      ("10x", "is not a non-negative integer"),
                      ("-3", "is not a non-negative integer"),
                      (" 5", "is not a non-negative integer"),
                      ("1e3", "is not a non-negative integer"),
                      ("99999999999999999999", "is out of range: expected")):
        expect_error(["run", opt, bad], 2, f"{name}: '{bad}' {says}")
    expect_error(["run", opt, ""], 2, f"{name}: empty value: expected an integer")
expect_error(["run", "-n", "0"], 2, "--balls: '0' is out of range: expected 1 to")
expect_error(["run", "--steps-per-launch", "0"], 2,
             "--steps-per-launch: '0' is out of range: expected 1 to")
expect_error(["run", "--seed", "18446744073709551616"], 2,
             "--seed: '18446744073709551616' is out of range: expected 0 to 18446744073709551615")

# ---- options -------------------------------------------------------------------
expect_error(["run", "--bogus"], 2, "unknown option '--bogus'", "ballcl run --help")
expect_error(["run", "-x"], 2, "unknown option '-x'")
for opt in ("-n", "--steps", "-d", "--local", "--input", "--model"):
    expect_error(["run", opt], 2, f"option '{opt}' needs a value")
expect_error(["run", "extra"], 2, "unexpected argument 'extra'")
for bad in ("0", "abc", "-4", "24x", "1048577"):
    expect_error(["run", "--local", bad], 2, f"--local: '{bad}' is not valid",
                 "expected auto, driver, tuned or a work-group size")
expect_error(["run", "--init", "bogus"], 2, "--init: unknown 'bogus': expected seed or random")
expect_error(["run", "--model", "bogus"], 2, "--model: unknown model 'bogus': expected one of",
             "seed")
expect_error(["run", "--sync", "sometimes"], 2, "--sync: 'sometimes': expected every or end")
expect_error(["run", "-d", "1:"], 2, "device selector '1:': expected P:D with two indices")

# ---- state files -----------------------------------------------------------------
f64 = os.path.join(tmp, "f64.npy")
np.save(f64, np.ones((3, 4)))
expect_error(["run", "--input", f64], 2, "f64.npy': dtype '<f8' is not supported",
             "expected '<f4'")
expect_error(["run", "--input", f64, "-n", "5"], 2,
             "--input gives the balls: it cannot be combined with --balls or --init")
shape = os.path.join(tmp, "shape.npy")
np.save(shape, np.ones((3, 3), np.float32))
expect_error(["run", "--input", shape], 2, "shape (3, 3) is not supported: expected (N, 4)")
fortran = os.path.join(tmp, "fortran.npy")
np.save(fortran, np.asfortranarray(np.ones((3, 4), np.float32)))
expect_error(["run", "--input", fortran], 2, "fortran_order is True")
nan = os.path.join(tmp, "nan.npy")
a = np.ones((5, 4), np.float32)
a[3, 1] = np.inf
np.save(nan, a)
expect_error(["run", "--input", nan], 2, "ball 3 has a non-finite value (inf) in component y")
garbage = os.path.join(tmp, "garbage.npy")
with open(garbage, "wb") as f:
    f.write(os.urandom(1000))
expect_error(["run", "--input", garbage], 2, "garbage.npy': not a .npy file")
truncated = os.path.join(tmp, "truncated.npy")
np.save(truncated, np.ones((100, 4), np.float32))
with open(truncated, "r+b") as f:
    f.truncate(os.path.getsize(truncated) - 3)
expect_error(["run", "--input", truncated], 2, "data is truncated")
empty = os.path.join(tmp, "empty.npy")
open(empty, "wb").close()
expect_error(["run", "--input", empty], 2, "empty.npy': file is empty")
expect_error(["run", "--input", os.path.join(tmp, "missing.npy")], 2,
             "missing.npy': cannot open: No such file or directory")
expect_error(["run", "--input", tmp], 2, "is a folder")

out = os.path.join(tmp, "no-such-folder", "out.npy")
expect_error(["run", "-n", "10", "-s", "1", "--output", out], 2,
             f"cannot write '{out}': No such file or directory")
check(not os.path.exists(os.path.dirname(out)), "--output into a missing folder creates nothing")

# ---- no OpenCL platform -----------------------------------------------------------
noicd = testlib.empty_icd_env(tmp)
for args in (["devices"], ["devices", "--json"], ["run", "-n", "10", "-s", "1"]):
    r = expect_error(args, 3, "no OpenCL platform found", "pocl-opencl-icd", env=noicd,
                     what=f"no platform: ballcl {' '.join(args)}")
    check(r.out == "", f"no platform: ballcl {' '.join(args)} prints nothing on stdout",
          r.describe())
# Input errors are still input errors without a device.
expect_error(["run", "--input", f64], 2, "dtype '<f8'", env=noicd,
             what="no platform: bad --input is still exit 2")

# ---- device tests skip without a device ----------------------------------------------
env = dict(os.environ)
env.update({k: v for k, v in noicd.items() if v is not None})
env.pop("OCL_ICD_FILENAMES", None)
for script in ("test_device.py", "test_numpy.py", "test_cli_device.py"):
    p = subprocess.run([sys.executable, os.path.join(testlib.HERE, script)], env=env,
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == testlib.SKIP and "skip: no OpenCL device" in p.stdout,
          f"{script} skips (exit 77) when there is no OpenCL platform",
          f"exit {p.returncode}: {p.stdout[-400:]!r} {p.stderr[-400:]!r}")

testlib.finish()
