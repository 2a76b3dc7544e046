#!/usr/bin/env python3
"""Device loss and CL_OUT_OF_RESOURCES in the middle of a run.

The fault hook (BALLCL_FAULT) makes the calls that report a dying device
fail as a real driver does: clFinish after the launches (at the warm-up, at
the end, or after any launch with --sync every), a later
clEnqueueNDRangeKernel, and the final clEnqueueReadBuffer, with
CL_CONTEXT_TERMINATED_KHR (-1121, a lost device) or CL_OUT_OF_RESOURCES (a
kernel that faulted). Each run must exit 3 with one line naming the call,
the status and its hint, print no validation verdict (neither in the text
report nor in --json), and write no output file.

Exit 77 (skipped) when no OpenCL device is present.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BALLCL = os.environ["BALLCL"]
HINT = {"CL_CONTEXT_TERMINATED_KHR": "the device was lost",
        "CL_OUT_OF_RESOURCES": "the device ran out of resources"}
# (fault, extra run options): every place a dying device shows itself.
# K is given: the counts assume one launch per step (or per 2 steps).
ONE = ["--steps-per-launch", "1"]
CASES = [
    ("clFinish:1", ONE),                          # the warm-up's wait
    ("clFinish:2", ONE),                          # the wait after all launches
    ("clFinish:4", ONE + ["--sync", "every"]),    # after the 3rd of 6 launches
    ("clEnqueueNDRangeKernel:4", ONE),            # the 3rd step's launch
    ("clEnqueueNDRangeKernel:3", ["--steps-per-launch", "2"]),  # the 2nd of 3
    ("clEnqueueReadBuffer:1", ONE),               # reading the final state back
    ("clGetEventInfo:1", ONE),                    # the launch's own status
]


def main():
    p = subprocess.run([BALLCL, "devices"], capture_output=True)
    if p.returncode == 3:
        print("no OpenCL device: skipped")
        return 77
    work = tempfile.mkdtemp(prefix="ballcl-device-loss.")
    problems = []
    runs = 0
    try:
        for status in ("CL_CONTEXT_TERMINATED_KHR", "CL_OUT_OF_RESOURCES"):
            for fault, opts in CASES:
                for as_json in (False, True):
                    out = os.path.join(work, "b.npy")
                    for f in os.listdir(work):
                        os.unlink(os.path.join(work, f))
                    args = [BALLCL, "run", "-n", "37", "-s", "6", "--output", out] + opts
                    if as_json:
                        args.append("--json")
                    env = dict(os.environ, BALLCL_FAULT=f"{fault}:{status}")
                    p = subprocess.run(args, env=env, capture_output=True, text=True,
                                       timeout=120)
                    runs += 1
                    label = f"{fault}:{status}{' --json' if as_json else ''} {' '.join(opts)}"
                    call = fault.split(":")[0]
                    err = p.stderr.strip().splitlines()
                    if p.returncode != 3:
                        problems.append(f"{label}: exit {p.returncode}, expected 3\n{p.stderr}")
                    if not err or not err[-1].startswith("ballcl: "):
                        problems.append(f"{label}: no one-line error on stderr: {p.stderr!r}")
                        continue
                    line = err[-1]
                    if f"{call} failed" not in line or status not in line or HINT[status] not in line:
                        problems.append(f"{label}: the error does not name call, status and "
                                        f"hint: {line}")
                    if "validation" in p.stdout or "passed" in p.stdout:
                        problems.append(f"{label}: a verdict was printed:\n{p.stdout}")
                    if as_json and p.stdout.strip():
                        try:
                            j = json.loads(p.stdout)
                            if j.get("validation", {}).get("passed"):
                                problems.append(f"{label}: JSON says passed")
                        except ValueError:
                            problems.append(f"{label}: partial JSON on stdout: {p.stdout!r}")
                    if os.path.exists(out):
                        problems.append(f"{label}: the output file was written")
                        os.unlink(out)
                    if os.listdir(work):
                        problems.append(f"{label}: files left behind: {os.listdir(work)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{runs} runs with a device lost or out of resources mid-run")
    for pr in problems:
        print("  " + pr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
