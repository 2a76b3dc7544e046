#!/usr/bin/env python3
"""OpenCL 1.2 platforms keep working (docs/IMPLEMENTATIONS.md): every call
newer than 1.2 that ballcl makes has its 1.2 path, taken by version.

The only such call is clCreateCommandQueueWithProperties (2.0), whose 1.2
path is clCreateCommandQueue. On the device under test (BALLCL_TEST_DEVICE;
tests/with_impl.py runs this on Oclgrind, a real OpenCL 1.2 platform):

  * the call chosen follows the device's version: the 2.0 call on 2.0 and
    later, the 1.2 one on 1.x (the fault trace names each call made);
  * with BALLCL_TEST_OPENCL_VERSION=1.2 (the platform pretended to be 1.2)
    run, bench and a quick survey take the 1.2 path, validate, and never
    make a call newer than 1.2 (on a real 1.x platform, the run alone);
  * a failure of the 1.2 call is reported by its name, exit 3.

Exit 77 (skipped) without an OpenCL device.
"""
import testlib
from testlib import check

NEWER_THAN_12 = {"clCreateCommandQueueWithProperties"}

dev = testlib.require_device()
tmp = testlib.tempdir()
devices = testlib.run(["devices", "--json"]).json()["devices"]
version = None
for d in devices:
    if dev in (d["selector"], d["name"]) or dev.lower() in d["platform"].lower():
        version = d["version"]
        break
print(f"device version: {version}")


def calls(args, env):
    r = testlib.run(args, env={"BALLCL_FAULT_TRACE": "1", "BALLCL_CACHE_DIR": tmp, **env},
                    timeout=600)
    made = {l.split("fault point ", 1)[1] for l in r.err_lines()
            if l.startswith("ballcl: fault point ")}
    return r, made


run_args = ["run", "-d", dev, "-n", "301", "-s", "7"]
r, made = calls(run_args, {})
check(r.rc == 0 and "validation  passed" in r.out, "run validates", r.describe())
if version and version.startswith("OpenCL 1."):
    check("clCreateCommandQueue" in made and not made & NEWER_THAN_12,
          f"{version}: the 1.2 queue call, nothing newer", str(sorted(made)))
else:
    check("clCreateCommandQueueWithProperties" in made and "clCreateCommandQueue" not in made,
          f"{version}: the 2.0 queue call", str(sorted(made)))

pretend = {"BALLCL_TEST_OPENCL_VERSION": "1.2"}
# A real 1.x platform (Oclgrind, a simulator too slow for bench and survey)
# needs no pretending: the run above took its 1.2 path.
real_12 = bool(version and version.startswith("OpenCL 1."))
for what, args in () if real_12 else (("run", run_args + ["--steps-per-launch", "1"]),
                   ("run --json", run_args + ["--json"]),
                   ("bench", ["bench", "-d", dev, "-n", "301", "-r", "1", "-s", "4"]),
                   ("survey", ["survey", "-d", dev, "--quick", "--json", f"{tmp}/s.json"])):
    r, made = calls(args, pretend)
    check(r.rc == 0 and ("FAILED" not in r.out), f"pretended 1.2: {what} exits 0, validated",
          r.describe())
    check("clCreateCommandQueue" in made and not made & NEWER_THAN_12,
          f"pretended 1.2: {what} makes no call newer than 1.2", str(sorted(made)))

testlib.expect_error(run_args, 3, "clCreateCommandQueue failed on '", "CL_OUT_OF_RESOURCES",
                     env={**pretend, "BALLCL_FAULT": "clCreateCommandQueue:1"},
                     what="a failing clCreateCommandQueue on 1.2")
testlib.finish()
