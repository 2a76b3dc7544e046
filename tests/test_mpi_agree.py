"""MPI ranks that disagree on the job (docs/SCALING.md, "What the ranks must
agree on"; docs/RELIABILITY.md classes 1 to 3).

Ranks started with different arguments (mpirun's MPMD form `-n 1 ballcl ...
: -n 1 ballcl ...`, different working folders, different environments) must
neither run one job with mixed meanings nor wait for ever in collectives that
do not match: mpirun exits 2, ballcl prints one line naming the option and
the ranks, and no file and no temporary is left. Every mpirun here has a
timeout far below a hang. Options that may differ (-d, --local) still run.
Also: --output through a symbolic link under MPI replaces the target and
keeps the link, and SIGTERM while the ranks write removes the temporary.
Skipped (77) without mpirun, without a device, or without MPI in the build.
"""

import os
import shutil
import signal
import subprocess
import time

import testlib
from testlib import check

MPIRUN = shutil.which("mpirun")
if not MPIRUN:
    testlib.skip("mpirun is not installed")
dev = testlib.require_device()
tmp = testlib.tempdir()

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           POCL_MAX_PTHREAD_COUNT="1", BALLCL_KERNEL_DIR=testlib.KERNEL_DIR)
for k in ("BALLCL_FAULT", "BALLCL_FAULT_RANK", "BALLCL_TEST_WRITE_STALL"):
    ENV.pop(k, None)
if "ASAN_OPTIONS" in ENV:
    # As in test_mpi.py: LeakSanitizer's tracer crashes beside Open MPI.
    ENV["ASAN_OPTIONS"] += ":detect_leaks=0"

# Far below a hang, far above a start of two ranks on a busy machine.
TIMEOUT = 30


class Mpi:
    def __init__(self, rc, out, err, seconds):
        self.rc, self.out, self.err, self.seconds = rc, out, err, seconds

    def lines(self):
        """ballcl's lines on stderr (mpirun adds its own banner)."""
        return [l for l in self.err.splitlines() if l.startswith("ballcl")]

    def describe(self):
        return f"exit {self.rc} after {self.seconds:.1f} s\nstderr: {self.err[-2000:]}"


def mpmd(*ranks, cwd=None):
    """mpirun --oversubscribe -n 1 A : -n 1 B ...: each item the arguments of
    one rank, optionally led by "-wdir", FOLDER (mpirun's working folder of
    that rank) and "env", "VAR=value" (run through env(1))."""
    cmd = [MPIRUN, "--oversubscribe"]
    for i, args in enumerate(ranks):
        args = list(args)
        cmd += [":"] if i else []
        cmd += ["-n", "1"]
        if args[:1] == ["-wdir"]:
            cmd += ["-wdir", args[1]]
            args = args[2:]
        if args[:1] == ["env"]:
            cmd += ["env", args[1]]
            args = args[2:]
        cmd += [testlib.BALLCL] + [str(a) for a in args]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=TIMEOUT,
                           cwd=cwd or tmp)
        return Mpi(p.returncode, p.stdout, p.stderr, time.monotonic() - t0)
    except subprocess.TimeoutExpired as ex:
        return Mpi(None, ex.stdout or "", f"hung: no end within {TIMEOUT} s", TIMEOUT)


def leftovers(folder):
    """Every file in folder and below: a disagreement creates nothing."""
    found = []
    for root, _, files in os.walk(folder):
        found += [os.path.relpath(os.path.join(root, f), folder) for f in files]
    return sorted(found)


def fresh(name):
    d = os.path.join(tmp, name)
    os.makedirs(d)
    return d


# The build may lack MPI: then mpirun runs the plain program on each rank.
probe = mpmd(["run", "-d", dev, "-n", "1000", "-s", "1", "--json"])
if probe.rc == 0 and '"ranks"' not in probe.out:
    testlib.skip("ballcl was built without MPI")
check(probe.rc == 0, "mpirun -n 1 ballcl run", probe.describe())

RUN = ["run", "-d", dev, "-n", "5000", "-s", "5"]


def disagree(what, ranks, want, cwd=None):
    """The ranks disagree: exit 2, one ballcl line on stderr equal to want
    (or starting with it, for a prefix ending in ':'), nothing created."""
    d = cwd or fresh(f"case{len(os.listdir(tmp))}")
    r = mpmd(*ranks, cwd=d)
    lines = r.lines()
    ok_line = len(lines) == 1 and (lines[0] == want or
                                  (want.endswith(":") and lines[0].startswith(want)))
    check(r.rc == 2 and ok_line, f"{what}: mpirun exits 2 with one line '{want}'", r.describe())
    check(leftovers(d) == [], f"{what}: no file and no temporary left", str(leftovers(d)))
    return r


# ---- 1: ranks with different meanings are refused, not believed -------------------------
disagree("--model bounce on one rank (the issue's case)",
         [RUN + ["--model", "bounce", "--output", "mix.npy"], RUN + ["--output", "mix.npy"]],
         "ballcl: ranks disagree on --model: rank 0 bounce, rank 1 seed")
disagree("-s 5 and -s 4", [RUN, ["run", "-d", dev, "-n", "5000", "-s", "4"]],
         "ballcl: ranks disagree on -s: rank 0 5, rank 1 4")
disagree("-n 5000 and -n 4000", [RUN, ["run", "-d", dev, "-n", "4000", "-s", "5"]],
         "ballcl: ranks disagree on -n: rank 0 5000, rank 1 4000")
disagree("--init", [RUN + ["--init", "random"], RUN],
         "ballcl: ranks disagree on --init: rank 0 random, rank 1 seed")
disagree("--seed", [RUN + ["--seed", "7"], RUN],
         "ballcl: ranks disagree on --seed: rank 0 7, rank 1 1")
disagree("a model parameter", [RUN + ["--model", "bounce", "--gravity", "-3"],
                               RUN + ["--model", "bounce"]],
         "ballcl: ranks disagree on --gravity:")
disagree("--tolerance-ulp", [RUN + ["--tolerance-ulp", "2"], RUN],
         "ballcl: ranks disagree on --tolerance-ulp: rank 0 2, rank 1 0")
disagree("--no-validate", [RUN, RUN + ["--no-validate"]],
         "ballcl: ranks disagree on --no-validate: rank 0 not given, rank 1 given")
disagree("--sync", [RUN + ["--sync", "every"], RUN],
         "ballcl: ranks disagree on --sync: rank 0 every, rank 1 end")
disagree("--json", [RUN + ["--json"], RUN],
         "ballcl: ranks disagree on --json: rank 0 given, rank 1 not given")
# Three ranks: the values are grouped by rank.
disagree("three ranks, one different", [RUN, RUN + ["-s", "9"], RUN],
         "ballcl: ranks disagree on -s: ranks 0,2 5, rank 1 9")

# ---- 2: what used to hang -----------------------------------------------------------------
d = fresh("one-output")
disagree("--output on rank 0 only", [RUN + ["--output", "o.npy"], RUN],
         f"ballcl: ranks disagree on --output: rank 0 '{os.path.realpath(d)}/o.npy', "
         "rank 1 not given", cwd=d)
d = fresh("one-output-1")
disagree("--output on rank 1 only", [RUN, RUN + ["--output", "o.npy"]],
         "ballcl: ranks disagree on --output:", cwd=d)
d = fresh("one-input")
r = testlib.run(RUN + ["--output", os.path.join(tmp, "in.npy")])
check(r.rc == 0, "an input file made", r.describe())
disagree("--input on one rank", [["run", "-d", dev, "-s", "5", "--input",
                                  os.path.join(tmp, "in.npy")], RUN],
         "ballcl: ranks disagree on --input:", cwd=d)
disagree("--snapshot on one rank", [RUN + ["--snapshot", "x.png"], RUN],
         "ballcl: ranks disagree on --snapshot:")
disagree("devices and run", [["devices"], RUN],
         "ballcl: ranks disagree on the command: rank 0 devices, rank 1 run")
disagree("run and bench", [RUN, ["bench", "-d", dev, "-n", "5000"]],
         "ballcl: ranks disagree on the command: rank 0 run, rank 1 bench")
disagree("run and tune", [RUN, ["tune", "-d", dev, "-n", "5000"]],
         "ballcl: ranks disagree on the command: rank 0 run, rank 1 tune")
disagree("run and survey", [RUN, ["survey", "--quick"]],
         "ballcl: ranks disagree on the command: rank 0 run, rank 1 survey")
disagree("bench with different -n", [["bench", "-d", dev, "-n", "5000"],
                                     ["bench", "-d", dev, "-n", "6000"]],
         "ballcl: ranks disagree on the arguments:")
disagree("--help on one rank", [["run", "--help"], RUN],
         "ballcl: ranks disagree on the options:")
# Different working folders: the same name is two files.
d = fresh("cwd")
a, b = os.path.join(d, "a"), os.path.join(d, "b")
os.makedirs(a)
os.makedirs(b)
r = mpmd(["-wdir", a] + RUN + ["--output", "o.npy"], ["-wdir", b] + RUN + ["--output", "o.npy"],
         cwd=d)
check(r.rc == 2 and r.lines() == [
    f"ballcl: ranks disagree on --output: rank 0 '{os.path.realpath(a)}/o.npy', "
    f"rank 1 '{os.path.realpath(b)}/o.npy'"],
      "different working folders: exit 2 naming both resolved paths", r.describe())
check(leftovers(d) == [], "different working folders: nothing created", str(leftovers(d)))
# A different kernel folder is a different program.
kdir = os.path.join(tmp, "kernels")
shutil.copytree(testlib.KERNEL_DIR, kdir)
disagree("the kernel folder", [RUN, ["env", f"BALLCL_KERNEL_DIR={kdir}"] + RUN],
         "ballcl: ranks disagree on the kernel folder (BALLCL_KERNEL_DIR):")
# An option one rank refuses: that message once, exit 2, no hang.
r = mpmd(RUN + ["--bogus"], RUN)
check(r.rc == 2 and len(r.lines()) == 1 and "unknown option '--bogus'" in r.lines()[0],
      "an option one rank refuses: exit 2, its message once", r.describe())

# BALLCL_MPI=0 in one rank of several: that rank would run the whole job alone
# and write the whole output; it is refused before anything is written.
for who in (0, 1):
    d = fresh(f"mpi-off-{who}")
    ranks = [RUN + ["--output", "o.npy"], RUN + ["--output", "o.npy"]]
    ranks[who] = ["env", "BALLCL_MPI=0"] + ranks[who]
    r = mpmd(*ranks, cwd=d)
    check(r.rc == 2 and any("BALLCL_MPI=0 in a job the launcher started as 2 ranks" in l
                            for l in r.lines()) and r.seconds < 10,
          f"BALLCL_MPI=0 on rank {who}: exit 2 within 10 s, the rank's line", r.describe())
    check(leftovers(d) == [], f"BALLCL_MPI=0 on rank {who}: nothing written", str(leftovers(d)))

# ---- what may differ still runs -------------------------------------------------------------
d = fresh("may-differ")
r = mpmd(RUN + ["--local", "auto", "--output", "o.npy"],
         ["run", "-d", "cpu", "-n", "5000", "-s", "5", "--local", "driver", "--output",
          os.path.join(d, "o.npy")], cwd=d)
check(r.rc == 0 and "validation  passed" in r.out,
      "-d, --local and a relative or absolute spelling of one path may differ: exit 0",
      r.describe())

# ---- 3: --output through a symbolic link, and SIGTERM during the write ---------------------
d = fresh("link")
single = os.path.join(tmp, "single.npy")
r = testlib.run(RUN + ["--output", single])
check(r.rc == 0, "the single-process output", r.describe())
with open(os.path.join(d, "target.npy"), "wb") as f:
    f.write(b"old")
os.symlink("target.npy", os.path.join(d, "link.npy"))
r = mpmd(RUN + ["--output", "link.npy"], RUN + ["--output", "link.npy"], cwd=d)
check(r.rc == 0, "mpirun -n 2 --output link.npy: exit 0", r.describe())
check(os.path.islink(os.path.join(d, "link.npy"))
      and os.readlink(os.path.join(d, "link.npy")) == "target.npy",
      "--output through a link under MPI: the link is kept")
with open(os.path.join(d, "target.npy"), "rb") as f, open(single, "rb") as g:
    check(f.read() == g.read(), "--output through a link under MPI: the target holds the result")
check(sorted(os.listdir(d)) == ["link.npy", "target.npy"], "no temporary beside the link",
      str(os.listdir(d)))

# SIGTERM while the ranks write: BALLCL_TEST_WRITE_STALL stops them once the
# temporary exists; the signal's clean-up must remove it.
d = fresh("sigterm")
env = dict(ENV, BALLCL_TEST_WRITE_STALL="1")
p = subprocess.Popen([MPIRUN, "--oversubscribe", "-n", "2", testlib.BALLCL] + RUN +
                     ["--output", "o.npy"], env=env, cwd=d, stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE, text=True)
seen = False
deadline = time.monotonic() + TIMEOUT
while time.monotonic() < deadline and p.poll() is None and not seen:
    seen = any(f.startswith(".o.npy.") for f in os.listdir(d))
    time.sleep(0.1)
check(seen, "the temporary of the MPI write exists while the ranks write", str(os.listdir(d)))
p.send_signal(signal.SIGTERM)
try:
    p.wait(timeout=TIMEOUT)
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
    check(False, "mpirun ends after SIGTERM")
time.sleep(0.5)
check(p.returncode != 0 and leftovers(d) == [],
      "SIGTERM during the MPI write: no temporary and no output left",
      f"exit {p.returncode}, left {leftovers(d)}")

testlib.finish()
