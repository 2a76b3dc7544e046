"""Command-line tests that need an OpenCL device (README.md, docs/DESIGN.md, docs/RELIABILITY.md): the
exit codes 0 (validated), 1 (validation mismatch), 2 (unknown device, bad
local size, missing kernel file) and 3 (kernel build failure, OpenCL call
failure), each with a one-line message on stderr (plus the build log for a
failed build), never a crash, never a half-written output. Exits 77 when
there is no device."""

import os
import shutil

import testlib
from testlib import check, expect_error, run

dev = testlib.require_device()
tmp = testlib.tempdir()
SMALL = ["-n", "300", "-s", "5"]

with open(os.path.join(testlib.KERNEL_DIR, "seed.cl")) as f:
    SEED_CL = f.read()


def kernel_dir(name, seed_cl=None):
    """A kernel folder holding a copy of cl/ with seed.cl replaced by
    seed_cl (or left out when seed_cl is None)."""
    d = os.path.join(tmp, name)
    shutil.copytree(testlib.KERNEL_DIR, d)
    os.remove(os.path.join(d, "seed.cl"))
    if seed_cl is not None:
        with open(os.path.join(d, "seed.cl"), "w") as f:
            f.write(seed_cl)
    return d


def replaced(text, old, new):
    """text with old replaced by new; old must occur (if cl/seed.cl or
    cl/kernels.cl changes shape, this test must be updated, not silently pass)."""
    if old not in text:
        check(False, f"the kernel file (cl/seed.cl or cl/kernels.cl) contains {old!r}")
        return text
    return text.replace(old, new)


# ---- exit 0 ------------------------------------------------------------------------
r = run(["run", "-d", dev] + SMALL)
lines = r.out.splitlines()
check(r.rc == 0 and r.err == "" and any(l.startswith("validation  passed: 1200 floats "
                                                     "bit-identical") for l in lines),
      "a valid run exits 0, reports validation passed, prints nothing on stderr", r.describe())
r = run(["run", "-d", dev, "--no-validate"] + SMALL)
check(r.rc == 0 and "validation  skipped (--no-validate)" in r.out, "--no-validate exits 0",
      r.describe())

# ---- exit 2: devices ------------------------------------------------------------
devs = run(["devices", "--json"]).json()["devices"]
first = f"{devs[0]['selector']} {devs[0]['name']}"
expect_error(["run", "-d", "no-such-device-xyz"] + SMALL, 2,
             "no device matches 'no-such-device-xyz': candidates are", first)
expect_error(["run", "-d", "9:9"] + SMALL, 2, "no device matches '9:9': candidates are", first)
expect_error(["run"] + SMALL, 2, "no device matches 'nowhere'", env={"BALLCL_DEVICE": "nowhere"},
             what="BALLCL_DEVICE=nowhere")
r = run(["run"] + SMALL, env={"BALLCL_DEVICE": dev})
check(r.rc == 0, f"BALLCL_DEVICE={dev} selects the device", r.describe())

# ---- exit 2: more balls than the device holds (2^40 balls are 16 TiB) --------------------
expect_error(["run", "-d", dev, "-n", str(1 << 40), "-s", "1"], 2,
             f"{1 << 40} balls need 16777216.0 MiB, more than the", "MiB of memory of '")

# ---- exit 2: an output path that is a folder (found when writing, after the run) ------
expect_error(["run", "-d", dev] + SMALL + ["--output", tmp], 2, f"cannot write '{tmp}'",
             "Is a directory")

# ---- exit 2: local size beyond the kernel's limit --------------------------------------
expect_error(["run", "-d", dev, "--local", "1048576"] + SMALL, 2,
             "--local 1048576: exceeds the limit of", "work-items for this kernel")

# ---- exit 2: kernel files ------------------------------------------------------------
empty_dir = os.path.join(tmp, "empty-kernels")
os.makedirs(empty_dir)
expect_error(["run", "-d", dev] + SMALL, 2, f"cannot read kernel '{empty_dir}/seed.cl'",
             "No such file or directory", env={"BALLCL_KERNEL_DIR": empty_dir},
             what="BALLCL_KERNEL_DIR at an empty folder")
missing_dir = os.path.join(tmp, "no-such-folder")
expect_error(["run", "-d", dev] + SMALL, 2, f"BALLCL_KERNEL_DIR '{missing_dir}' is not a folder",
             env={"BALLCL_KERNEL_DIR": missing_dir}, what="BALLCL_KERNEL_DIR at a missing folder")
expect_error(["run", "-d", dev] + SMALL, 2, "seed.cl' is empty",
             env={"BALLCL_KERNEL_DIR": kernel_dir("empty-seed", "")},
             what="an empty seed.cl")

# ---- exit 3: a kernel that does not build ------------------------------------------
broken = kernel_dir("syntax", replaced(SEED_CL, "b.y = b.y + b.w;", "b.y = b.y + ;"))
r = run(["run", "-d", dev, "--no-cache"] + SMALL, env={"BALLCL_KERNEL_DIR": broken})
# The driver may print its compiler's own diagnostics first (PoCL: "1 error
# generated."); ballcl's message is one line, then the log.
mine = [l for l in r.err_lines() if l.startswith("ballcl")]
check(r.rc == 3 and len(mine) == 1 and mine[0].startswith("ballcl: clBuildProgram failed on '")
      and "CL_BUILD_PROGRAM_FAILURE" in mine[0], "a syntax error: exit 3, clBuildProgram named",
      r.describe())
log = r.err.split("---- build log ----\n", 1)
check(len(log) == 2 and "error" in log[1].lower() and len(log[1].splitlines()) >= 2
      and r.err_lines()[-1].startswith("----"), "a syntax error: the build log follows on stderr",
      r.describe())
check("validation" not in r.out, "a syntax error: no report", r.describe())

# A kernel that builds but lacks the entry point: kernels.cl, which makes
# every model's kernels around its update, names the one-step one otherwise.
renamed = kernel_dir("renamed", SEED_CL)
with open(os.path.join(renamed, "kernels.cl")) as f:
    KERNELS_CL = f.read()
with open(os.path.join(renamed, "kernels.cl"), "w") as f:
    f.write(replaced(KERNELS_CL, "\nBCL_KERNEL(step)\n", "\nBCL_KERNEL(stop)\n"))
expect_error(["run", "-d", dev, "--no-cache", "--steps-per-launch", "1"] + SMALL, 3,
             "clCreateKernel failed on '",
             "CL_INVALID_KERNEL_NAME", env={"BALLCL_KERNEL_DIR": renamed},
             what="a kernel file without seed_step")

# ---- exit 3: OpenCL call failures (fault injection) ------------------------------------
out = os.path.join(tmp, "faulted.npy")
r = expect_error(["run", "-d", dev, "-s", "5", "-n", "300", "--steps-per-launch", "1",
                  "--output", out], 3,
                 "clEnqueueNDRangeKernel failed on '", "CL_OUT_OF_RESOURCES",
                 env={"BALLCL_FAULT": "clEnqueueNDRangeKernel:3"},
                 what="BALLCL_FAULT=clEnqueueNDRangeKernel:3")
check("passed" not in r.out and "validation" not in r.out and not os.path.exists(out),
      "a failed launch reports no validation and writes no output", r.describe())

# Each OpenCL call of a run, failing the first or second time it is made: exit
# 3 with the call named, or (where the run makes no such call) exit 0 with a
# validated result; never a crash, never a result from a failed run.
calls = ("clGetPlatformIDs", "clGetDeviceIDs", "clCreateContext", "clCreateCommandQueue",
         "clCreateCommandQueueWithProperties", "clCreateProgramWithSource", "clBuildProgram",
         "clCreateKernel", "clGetKernelWorkGroupInfo", "clCreateBuffer", "clEnqueueWriteBuffer",
         "clSetKernelArg", "clEnqueueNDRangeKernel", "clFinish", "clEnqueueReadBuffer",
         "clGetEventProfilingInfo")
failed_somewhere = set()
for call in calls:
    for nth in (1, 2):
        spec = f"{call}:{nth}"
        if os.path.exists(out):
            os.remove(out)
        r = run(["run", "-d", dev, "--no-cache", "-n", "300", "-s", "3", "--output", out],
                env={"BALLCL_FAULT": spec})
        lines = r.err_lines()
        if r.rc == 3:
            failed_somewhere.add(call)
            ok = (len(lines) == 1 and lines[0].startswith(f"ballcl: {call} failed")
                  and "CL_OUT_OF_RESOURCES" in lines[0]
                  and "passed" not in r.out and not os.path.exists(out))
            check(ok, f"BALLCL_FAULT={spec}: exit 3, one line naming the call, no output",
                  r.describe())
        elif lines:
            # A platform whose devices cannot be listed (not the device's
            # own) is a warning naming it and the status; the run goes on.
            failed_somewhere.add(call)
            ok = (r.rc == 0 and "validation  passed" in r.out and os.path.exists(out)
                  and call == "clGetDeviceIDs" and len(lines) == 1
                  and lines[0].startswith("ballcl: warning: clGetDeviceIDs failed on platform '")
                  and "CL_OUT_OF_RESOURCES" in lines[0])
            check(ok, f"BALLCL_FAULT={spec}: another platform's failure is one warning line, "
                  "and the run validates", r.describe())
        else:
            ok = (r.rc == 0 and "validation  passed" in r.out and os.path.exists(out))
            check(ok, f"BALLCL_FAULT={spec}: not reached, so the run validates", r.describe())
for call in ("clGetDeviceIDs", "clCreateContext", "clCreateProgramWithSource", "clBuildProgram", "clCreateKernel",
             "clCreateBuffer", "clEnqueueWriteBuffer", "clSetKernelArg", "clEnqueueNDRangeKernel",
             "clFinish", "clEnqueueReadBuffer", "clGetPlatformIDs"):
    check(call in failed_somewhere, f"an injected {call} failure is reached and reported")

# ---- exit 1: a kernel that gives other bits ---------------------------------------------
# x takes the new z: the classic slip that --init random exists to catch.
swapped_cl = replaced(SEED_CL, "    b.x = b.x + b.z;\n    b.y = b.y + b.w;\n    b.z = b.z + b.w;\n",
                      "    b.z = b.z + b.w;\n    b.x = b.x + b.z;\n    b.y = b.y + b.w;\n")
swapped = kernel_dir("swapped", swapped_cl)
env = {"BALLCL_KERNEL_DIR": swapped}
out = os.path.join(tmp, "mismatch.npy")
for extra in (["--steps-per-launch", "1"], ["--steps-per-launch", "4"]):
    args = ["run", "-d", dev, "--no-cache", "-n", "1000", "-s", "10", "--init", "random",
            "--output", out] + extra
    r = expect_error(args, 1, "validation failed: 1000 of 4000 floats differ from the C reference",
                     "output not written", env=env,
                     what=f"new z used for x {' '.join(extra)}")
    check("validation  FAILED: 1000 of 4000 floats differ" in r.out
          and "  ball 0: want (" in r.out and "passed" not in r.out,
          f"new z used for x {' '.join(extra)}: FAILED report with the first balls", r.describe())
    check(not os.path.exists(out), "a mismatching state is not written")
r = run(["run", "-d", dev, "--no-cache", "-n", "1000", "-s", "10", "--init", "random", "--json"],
        env=env)
v = r.json()["validation"] if r.rc == 1 else {}
check(r.rc == 1 and v.get("passed") is False and v.get("mismatches") == 1000
      and [m["ball"] for m in v.get("first_mismatches", [])] == [0, 1, 2, 3, 4],
      "--json with a mismatch: exit 1, passed false, first mismatching balls 0..4", r.describe())

testlib.finish()
