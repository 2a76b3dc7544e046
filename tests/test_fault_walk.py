#!/usr/bin/env python3
"""Fault walk: every OpenCL and file call of a whole `ballcl run` fails in turn.

A first run with BALLCL_FAULT_TRACE=1 lists the fault points of
`run --input a.npy --output out/b.npy` (with a cache folder) in the order they
are reached; then, for every point NAME and every n up to its count, the run is
repeated with BALLCL_FAULT=NAME:n. Each faulted run must either

  * fail cleanly: exit 3 for an OpenCL call, 2 for a file call; stderr names
    the call and the status; no "validation  passed"; the output file absent
    (or unchanged where it existed before); no temporary file left in the
    output or cache folder; no sanitizer report (under tools/sanitize.sh the
    same test runs on the ASan/UBSan build, so a leak on an error path fails
    it), or
  * succeed with the very bytes of the fault-free run, and then only where
    the failure is harmless by design: a device-information query (a driver
    lacking one query must not stop ballcl) or a step that reports the status
    as a warning (e.g. a cache entry that could not be written).

Never a crash, never a wrong result reported as correct. A second walk repeats
the file points with an output file that already exists, which must be left
as it was. Then the cache folder is filled by a fault-free run, and if a
run with that warm cache reaches other calls (loading a cached binary), the
whole walk is repeated on that path. The names are not hard-coded: new OpenCL calls and new files
(the binary cache) are walked as soon as the program makes them.

Exit 77 (skipped) when no OpenCL device is present.
"""
import collections
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

BALLCL = os.environ["BALLCL"]
# Queries whose failure leaves a field unknown rather than stopping the run.
TOLERATED = {"clGetDeviceInfo", "clGetPlatformInfo", "clGetProgramBuildInfo"}
FILE_CALLS = {"read": "cannot read", "open": "(open failed)", "write": "(write failed)",
              "fsync": "(fsync failed)", "rename": "(rename failed)"}
RUN_ARGS = ["run", "-v", "--input", "a.npy", "--output", "out/b.npy", "-s", "3"]
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")

failures = []


def run(args, env_extra, cwd):
    env = dict(os.environ)
    env.pop("BALLCL_FAULT", None)
    env.pop("BALLCL_FAULT_TRACE", None)
    env.update(env_extra)
    p = subprocess.run([BALLCL] + args, cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


def leftovers(folder, keep):
    """Files in folder (recursively) other than those in keep: temporaries."""
    found = []
    for root, _, files in os.walk(folder):
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), folder)
            if rel not in keep:
                found.append(rel)
    return sorted(found)


def check(label, ok, detail):
    if not ok:
        failures.append(f"{label}: {detail}")


def status_text(name, status):
    if name.startswith("cl"):
        return status or "CL_OUT_OF_RESOURCES"
    return {"ENOSPC": "No space left on device", "EACCES": "Permission denied",
            "EROFS": "Read-only file system", None: "Input/output error"}[status]


def reset(work, warm_cache):
    """Empty output folder; the cache folder empty or a copy of warm_cache."""
    out_dir = os.path.join(work, "out")
    cache_dir = os.path.join(work, "cache")
    for d in (out_dir, cache_dir):
        shutil.rmtree(d, ignore_errors=True)
    os.mkdir(out_dir)
    if warm_cache:
        shutil.copytree(warm_cache, cache_dir)
    else:
        os.mkdir(cache_dir)
    return out_dir, cache_dir


def trace(work, warm_cache):
    """The fault points of one fault-free run, in order, and its output."""
    _, cache_dir = reset(work, warm_cache)
    rc, so, se = run(RUN_ARGS, {"BALLCL_FAULT_TRACE": "1", "BALLCL_CACHE_DIR": cache_dir}, work)
    if rc != 0 or "validation  passed" not in so:
        raise SystemExit(f"fault-free run failed (exit {rc}):\n{so}{se}")
    points = [l.split("fault point ", 1)[1] for l in se.splitlines()
              if l.startswith("ballcl: fault point ")]
    with open(os.path.join(work, "out", "b.npy"), "rb") as f:
        return points, f.read()


def faulted_run(work, name, n, status, baseline, old_output, warm_cache):
    """One run with NAME:n[:STATUS] failing; checks everything listed above."""
    label = f"{name}:{n}" + (f":{status}" if status else "") + (" (warm cache)" if warm_cache
                                                                 else "")
    out_dir, cache_dir = reset(work, warm_cache)
    out = os.path.join(out_dir, "b.npy")
    if old_output is not None:
        with open(out, "wb") as f:
            f.write(old_output)
    spec = f"{name}:{n}" + (f":{status}" if status else "")
    # Traced too: the launch-cost measurement of an empty cache stops after a
    # time, so a run may make fewer calls than the trace run did; a fault
    # whose call number was never reached did not fire, and says nothing.
    rc, so, se = run(RUN_ARGS, {"BALLCL_FAULT": spec, "BALLCL_FAULT_TRACE": "1",
                                "BALLCL_CACHE_DIR": cache_dir}, work)
    reached = se.count(f"ballcl: fault point {name}\n") >= n
    se = "".join(l for l in se.splitlines(True) if not l.startswith("ballcl: fault point "))
    if rc == 0 and not reached:
        return "not reached"
    text = status_text(name, status)
    for mark in SANITIZER_MARKS:
        check(label, mark not in se, f"sanitizer report:\n{se}")
    check(label, rc in (0, 2, 3), f"exit {rc} (a crash or a wrong class)\n{se}")
    cache_temps = [f for f in leftovers(cache_dir, set()) if os.path.basename(f).startswith(".")]
    check(label, not cache_temps, f"temporary files left in the cache folder: {cache_temps}")
    keep = {"b.npy"} if (rc == 0 or old_output is not None) else set()
    extra = leftovers(out_dir, keep)
    check(label, not extra, f"files left in the output folder: {extra}")
    if rc == 0:
        harmless = name in TOLERATED or text in se
        check(label, harmless, f"succeeded without a word about the failure\n{se}")
        check(label, "validation  passed" in so, f"exit 0 without a validation:\n{so}")
        with open(out, "rb") as f:
            check(label, f.read() == baseline, "exit 0 but the output differs from the "
                  "fault-free run")
        return "tolerated"
    want_rc = 3 if name.startswith("cl") else 2
    check(label, rc == want_rc, f"exit {rc}, expected {want_rc}\n{se}")
    check(label, "validation  passed" not in so, f"a failed run reported a validation:\n{so}")
    lines = [l for l in se.splitlines() if l.startswith("ballcl: ") and text in l]
    call_named = f"{name} failed" in se if name.startswith("cl") else FILE_CALLS[name] in se
    check(label, call_named, f"stderr does not name the call:\n{se}")
    check(label, text in se, f"stderr does not name the status {text}:\n{se}")
    check(label, lines, f"no one-line error 'ballcl: ...' naming the status:\n{se}")
    if old_output is None:
        check(label, not os.path.exists(out), "a failed run left an output file")
    else:
        with open(out, "rb") as f:
            check(label, f.read() == old_output, "a failed run changed the existing output")
    return "failed"


def walk(work, points, baseline, warm_cache, outcomes):
    """Fails every call of points in turn, then the extra statuses, then the
    file calls again with an existing output."""
    counts = collections.Counter(points)
    order = list(dict.fromkeys(points))  # first-seen order
    for name in order:
        for n in range(1, counts[name] + 1):
            outcomes[faulted_run(work, name, n, None, baseline, None, warm_cache)] += 1
    # Other statuses: each must be named as given.
    extra = [("clCreateBuffer", 1, "CL_MEM_OBJECT_ALLOCATION_FAILURE"),
             ("clEnqueueNDRangeKernel", 2, "CL_INVALID_WORK_GROUP_SIZE"),
             ("clBuildProgram", 1, "CL_BUILD_PROGRAM_FAILURE"),
             ("write", 1, "ENOSPC"), ("open", 1, "EACCES"), ("rename", 1, "EROFS")]
    for name, n, status in extra:
        if name in counts:
            outcomes[faulted_run(work, name, n, status, baseline, None, warm_cache)] += 1
    # An existing output survives every failed file call untouched.
    old = b"an older checkpoint that must survive\n"
    for name in order:
        if name in FILE_CALLS:
            for n in range(1, counts[name] + 1):
                outcomes[faulted_run(work, name, n, None, baseline, old, warm_cache)] += 1
    print(f"{'warm' if warm_cache else 'empty'} cache: {len(order)} fault points, "
          f"{len(points)} calls: " + ", ".join(f"{k} x{counts[k]}" for k in order))


def main():
    rc, _, _ = run(["devices"], {}, None)
    if rc == 3:
        print("no OpenCL device: skipped")
        return 77
    work = tempfile.mkdtemp(prefix="ballcl-fault-walk.")
    try:
        rng = np.random.default_rng(7)
        # 37 balls: no work-group size divides it, so the bounds checks run too.
        np.save(os.path.join(work, "a.npy"), rng.uniform(-1e3, 1e3, (37, 4)).astype("<f4"))
        points, baseline = trace(work, None)
        counts = collections.Counter(points)
        for call in ("clBuildProgram", "clEnqueueNDRangeKernel", "clFinish",
                     "clEnqueueReadBuffer", "read", "write", "rename"):
            check("trace", call in counts, f"{call} is not among the fault points {dict(counts)}")
        # What a fault-free run left in the cache folder makes the warm cache.
        warm = os.path.join(work, "warm-cache")
        shutil.copytree(os.path.join(work, "cache"), warm)

        outcomes = collections.Counter()
        walk(work, points, baseline, None, outcomes)
        # With the cache filled, a run takes another path (a cached binary):
        # walk that too, whenever it differs.
        warm_points, warm_baseline = trace(work, warm)
        check("warm trace", warm_baseline == baseline, "a cached program gave other results")
        if warm_points != points:
            walk(work, warm_points, baseline, warm, outcomes)
        else:
            print("warm cache: the same calls as with an empty cache (nothing cached)")
        total = sum(outcomes.values())
        print(f"{total} faulted runs: {outcomes['failed']} failed cleanly, "
              f"{outcomes['tolerated']} tolerated, {outcomes['not reached']} not reached "
              "(the run made fewer calls of that kind than the trace run)")
        # Only the time-bound measurement's calls may go unreached: a walk
        # that mostly did not fire would prove nothing.
        check("walk", outcomes["not reached"] * 4 <= total,
              f"{outcomes['not reached']} of {total} faults never fired")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} problems:")
        for f in failures:
            print("  " + f.replace("\n", "\n    "))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
