"""The host's own cost per launch, counted in OpenCL calls (docs/PERFORMANCE.md,
"The host's cost per launch").

A run's loop may do per launch what a minimal program does, an enqueue (and,
with --sync every, the wait after it); everything else it does, events,
profiling reads, waits, costs a bounded amount per run. tests/clcount/clcount.c,
preloaded in front of the ICD loader, counts every call per device. Each
configuration runs at two step counts; the difference is what the extra
launches cost, and what is left is the run's own. Both are held against the
budget declared below: one device with K = 1 and K > 1, --sync end and every,
two devices, an MPI rank, and a Python Context frame.

A profiling run of the same command (CLCOUNT_PROFILE=1: an event on every
launch) gives the longest launch, which the run's own figure must not
exceed, and must equal where the run times every launch.

The self-check first: with one extra call per launch injected
(CLCOUNT_INJECT), the budget check must fail. Skipped (77) without a
device, or when the interposer was not built (CLCOUNT unset).
"""

import json
import os
import shutil
import subprocess
import sys

import testlib
from testlib import check

CLCOUNT = os.environ.get("CLCOUNT")
if not CLCOUNT or not os.path.exists(CLCOUNT):
    testlib.skip("the call counter (tests/clcount) is not built")
PYTHON_DIR = sys.argv[1] if len(sys.argv) > 1 else None
dev = testlib.require_device()
tmp = testlib.tempdir()

# The budget. Per launch, on each device: the enqueue of its kernel, and with
# --sync every the clFinish after it; of every other call, at most the queue
# window's one event, wait and release per 1024 launches (src/run/sim.c) and
# no more: 0.01 a launch. Per run, on each device: 20 kernel enqueues besides
# the run's launches (the warm-up and the state check), and of event, wait,
# profiling and callback calls each at most 64. A device weighed
# against others (two devices, an MPI rank) adds its calibration: at most 5
# queue windows of launches (src/job/group.c caps each timed run at one
# window; the timer's doubling and its 3 repeats), timed by the host clock.
WINDOW_SHARE = 0.01
PER_RUN_ENQUEUES = 20
PER_RUN_EVENTS = 64
CALIBRATION_ENQUEUES = 5 * 1024
EVENT_CALLS = ("clReleaseEvent", "clRetainEvent", "clWaitForEvents", "clGetEventProfilingInfo",
               "clGetEventInfo", "clSetEventCallback")


def per_launch_allowed(call, sync):
    if call == "clEnqueueNDRangeKernel":
        return 1.0
    if call == "clFinish" and sync == "every":
        return 1.0
    return 0.0


def counted(cmd, env=None, mpi=False):
    """Runs cmd with the counter preloaded; returns (the process's result,
    [per process: [per device: {call: count}]])."""
    out = os.path.join(tmp, f"count-{len(os.listdir(tmp))}.jsonl")
    e = dict(os.environ, CLCOUNT_OUT=out, **(env or {}))
    if not mpi:
        e["LD_PRELOAD"] = CLCOUNT
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=600)
    procs = []
    if os.path.exists(out):
        with open(out) as f:
            for line in f:
                rec = json.loads(line)
                if rec["devices"]:
                    procs.append(rec)
    return p, procs


def ballcl_run(args, steps, env=None, extra_env=None):
    """ballcl run with the counter: (exit status, its JSON, process records)."""
    cmd = [testlib.BALLCL, "run", "-d", dev, "--json", "-s", str(steps)] + args
    p, procs = counted(cmd, dict(extra_env or {}, **(env or {})))
    try:
        j = json.loads(p.stdout)
    except ValueError:
        j = None
    check(p.returncode == 0 and j is not None,
          f"run {' '.join(args)} -s {steps} under the counter: exit 0, validated",
          f"exit {p.returncode}: {p.stderr[-800:]}")
    return j, procs


def judge(label, low, high, launches_low, launches_high, sync, steps_high, quiet=False,
          weighed=False, chunked=False):
    """Holds two runs' counts (one process, per device) against the budget;
    returns the list of what broke it. weighed: the devices were calibrated,
    whose launches depend on the host's speed, not on S. chunked: a Python
    frame, whose steps run in chunks of at least 50 ms with a wait after
    each (src/job/group_exec.c): the run's budget is then each chunk's."""
    broke = []
    extra = PER_RUN_ENQUEUES + (CALIBRATION_ENQUEUES if weighed else 0)
    for d, (a, b) in enumerate(zip(low, high)):
        calls = set(a) | set(b)
        span = launches_high - launches_low
        chunks = max(1, b.get("clFinish", 0)) if chunked else 1
        for c in sorted(calls):
            if chunked and c != "clEnqueueNDRangeKernel":
                continue
            slope = (b.get(c, 0) - a.get(c, 0)) / span
            allowed = per_launch_allowed(c, sync) + WINDOW_SHARE
            if weighed and c == "clEnqueueNDRangeKernel":
                # The calibration's launches differ between the two runs
                # by up to its own budget.
                allowed += CALIBRATION_ENQUEUES / span
            if slope > allowed:
                broke.append(f"device {d}: {c} {slope:.3f} a launch (budget {allowed:.2f})")
        for c in EVENT_CALLS:
            if b.get(c, 0) > PER_RUN_EVENTS * chunks:
                broke.append(f"device {d}: {c} {b.get(c, 0)} in a run of {chunks} chunk(s) "
                             f"(budget {PER_RUN_EVENTS} each)")
        enq = b.get("clEnqueueNDRangeKernel", 0)
        if enq > launches_high + extra:
            broke.append(f"device {d}: {enq} kernel enqueues for {launches_high} launches "
                         f"(budget + {extra})")
        if sync == "every" and b.get("clFinish", 0) > launches_high + PER_RUN_ENQUEUES:
            broke.append(f"device {d}: {b['clFinish']} clFinish for {launches_high} launches")
    if not quiet:
        print(f"     {label}: " + "; ".join(
            f"device {d}: " + ", ".join(f"{c} {x.get(c, 0)}" for c in sorted(x))
            for d, x in enumerate(high)))
    return broke


def devices_of(procs):
    """Per device {call: count}, over every process record."""
    out = []
    for rec in procs:
        for d in rec["devices"]:
            out.append(d["calls"])
    return out


LOW, HIGH = 2000, 20000
BASE = ["-n", "10000"]


def one_config(label, args, sync, env=None, inject=None):
    extra = {"CLCOUNT_INJECT": inject} if inject else None
    ja, pa = ballcl_run(BASE + args + ["--sync", sync], LOW, env, extra)
    jb, pb = ballcl_run(BASE + args + ["--sync", sync], HIGH, env, extra)
    if not (ja and jb and pa and pb):
        return ["no counts"]
    k = ja["launch"]["steps_per_launch"]
    la, lb = -(-LOW // k), -(-HIGH // k)
    da, db = devices_of(pa), devices_of(pb)
    if len(da) != len(db):
        return [f"{len(da)} devices against {len(db)}"]
    # Each device runs every step of its share.
    return judge(label, da, db, la, lb, sync, HIGH, quiet=bool(inject))


# ---- the self-check: an extra call per launch breaks the budget ----------
for call in ("clFlush", "clGetEventInfo"):
    broke = one_config("injected", ["--steps-per-launch", "1"], "end", inject=call)
    check(any(call in b for b in broke),
          f"self-check: one injected {call} per launch breaks the budget",
          f"the check found: {broke}")

# ---- one device -----------------------------------------------------------
for label, args, sync in (
        ("K=1, --sync end", ["--steps-per-launch", "1"], "end"),
        ("K=1, --sync every", ["--steps-per-launch", "1"], "every"),
        ("K=10, --sync end", ["--steps-per-launch", "10"], "end"),
        ("K=10, --sync every", ["--steps-per-launch", "10"], "every")):
    broke = one_config(label, args, sync)
    check(not broke, f"one device, {label}: within the budget", "; ".join(broke))

# ---- two devices (PoCL's two devices sharing one pool) -------------------
two = subprocess.run([testlib.BALLCL, "devices", "--json"], capture_output=True, text=True,
                     env=dict(os.environ, POCL_DEVICES="pthread pthread"))
pocl2 = False
try:
    pocl2 = sum(1 for d in json.loads(two.stdout)["devices"]
                if "Portable" in d.get("platform", "")) >= 2
except (ValueError, KeyError):
    pass
if pocl2:
    env2 = {"POCL_DEVICES": "pthread pthread"}
    j1, p1 = ballcl_run(BASE + ["-d", "all", "--steps-per-launch", "1"], LOW, env2)
    j2, p2 = ballcl_run(BASE + ["-d", "all", "--steps-per-launch", "1"], HIGH, env2)
    if j1 and j2:
        d1, d2 = devices_of(p1), devices_of(p2)
        check(len(d1) == 2 and len(d2) == 2, "two devices: both counted", f"{d1} {d2}")
        if len(d1) == 2 and len(d2) == 2:
            broke = judge("two devices", d1, d2, LOW, HIGH, "end", HIGH, weighed=True)
            check(not broke, "two devices, K=1: within the budget", "; ".join(broke))
else:
    print("     two devices: PoCL does not offer two here, left out")

# ---- an MPI rank -----------------------------------------------------------
MPIRUN = shutil.which("mpirun")
if MPIRUN:
    envm = dict(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                POCL_MAX_PTHREAD_COUNT="1")
    res = []
    for steps in (LOW, HIGH):
        cmd = [MPIRUN, "--oversubscribe", "-n", "2", "-x", f"LD_PRELOAD={CLCOUNT}",
               "-x", "CLCOUNT_OUT", testlib.BALLCL, "run", "-d", dev, "-n", "20000", "-s",
               str(steps), "--steps-per-launch", "1"]
        p, procs = counted(cmd, envm, mpi=True)
        check(p.returncode == 0, f"mpirun -n 2 run -s {steps} under the counter: exit 0",
              p.stderr[-800:])
        res.append(procs)
    if all(len(r) == 2 for r in res):
        by_pid = [sorted(r, key=lambda x: x["pid"]) for r in res]
        for rank in range(2):
            broke = judge(f"MPI rank {rank}", devices_of([by_pid[0][rank]]),
                          devices_of([by_pid[1][rank]]), LOW, HIGH, "end", HIGH, weighed=True)
            check(not broke, f"MPI rank {rank}, K=1: within the budget", "; ".join(broke))
    else:
        check(False, "MPI: a record from each of the 2 ranks", f"{[len(r) for r in res]}")
else:
    print("     MPI: mpirun is not installed, left out")

# ---- a Python Context frame ----------------------------------------------
if PYTHON_DIR and os.path.isdir(os.path.join(PYTHON_DIR, "ballcl")):
    script = r"""
import ctypes, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import ballcl
write = ctypes.CDLL(None).clcount_write
write.argtypes = [ctypes.c_char_p]
state = np.random.default_rng(1).random((10000, 4), dtype=np.float32)
with ballcl.Context(device=sys.argv[2]) as c:
    for steps in (200, 2000, 200, 2000, 200, 2000):
        write(b"before")
        s, r = c.run(steps, state=state, steps_per_launch=1)
        write(b"after %d %.3f" % (steps, r.timing["wall_ms"]))
        state = s
"""
    p, procs = counted([sys.executable, "-c", script, PYTHON_DIR, dev])
    check(p.returncode == 0, "Python frames under the counter: exit 0", p.stderr[-800:])
    pairs = {}
    for a, b in zip(procs, procs[1:]):
        if a["tag"] == "before" and b["tag"].startswith("after"):
            steps, wall = int(b["tag"].split()[1]), float(b["tag"].split()[2])
            diff = [{c: y["calls"].get(c, 0) - x["calls"].get(c, 0)
                     for c in set(x["calls"]) | set(y["calls"])}
                    for x, y in zip(a["devices"], b["devices"])]
            pairs.setdefault(steps, []).append((diff, wall))
    if 200 in pairs and 2000 in pairs:
        # The last frame of each size: the context is warm by then.
        (low, _), (high, wall) = pairs[200][-1], pairs[2000][-1]
        broke = judge("Python frame", low, high, 200, 2000, "end", 2000, chunked=True)
        check(not broke, "Python Context frame, K=1: within the budget", "; ".join(broke))
        # A warm frame starts at the chunk length it learnt: a chunk for
        # each 50 ms of the frame, and one for the rest.
        chunks = high[0].get("clFinish", 0)
        check(1 <= chunks <= 2 + wall / 50.0,
              f"Python frame: {chunks} chunk(s) for {wall:.1f} ms, not one per doubling",
              f"{chunks} waits in a frame of {wall:.1f} ms")
    else:
        check(False, "Python frames: counts before and after each frame", str(procs)[:800])
else:
    print("     Python: the module is not built, left out")

# ---- the longest launch against a profiling run ---------------------------
for args in (["-n", "10000", "-s", "2000", "--steps-per-launch", "1"],
             ["-n", "200000", "-s", "60", "--steps-per-launch", "10"]):
    cmd = [testlib.BALLCL, "run", "-d", dev, "--json"] + args
    # Once before, so that the binary and the launch costs come from the
    # cache and the profiling run's launches are the run's own.
    subprocess.run(cmd, capture_output=True, timeout=300)
    p, procs = counted(cmd, {"CLCOUNT_PROFILE": "1"})
    try:
        j = json.loads(p.stdout)
    except ValueError:
        j = None
    if p.returncode != 0 or not j or not procs:
        check(False, f"profiling run {' '.join(args)}: exit 0", p.stderr[-600:])
        continue
    # The model's kernels (the state check's is the library's own).
    true_max = max((k["max_ms"] for name, k in procs[-1]["kernels"].items()
                    if name.startswith(j["model"] + "_")), default=0)
    own = j["timing"]["max_launch_ms"]
    launches = -(-int(args[3]) // int(args[-1]))
    print(f"     {' '.join(args)}: longest launch {own:.4f} ms, the profiling run's "
          f"{true_max:.4f} ms over {launches} launches")
    ok = 0 < own <= true_max * 1.0001 + 1e-6
    if launches <= 8:
        ok = ok and own >= true_max * 0.9999 - 1e-6
    check(ok, f"{' '.join(args)}: the longest launch is the profiling run's"
              + (" (every launch timed)" if launches <= 8 else " or under it (sampled)"),
          f"own {own}, profiling run {true_max}")

testlib.finish()
