"""MPI ranks whose files are node-local (docs/SCALING.md, "What the ranks must
agree on"; docs/RELIABILITY.md, round four, classes 1 and 2).

Nodes that do not share a file system may hold files of one path with
different bytes, or one may hold a file or folder the others lack. Ranks
compare each input's content (a digest, one read per node) and agree on
whether every rank could open every file before any collective that could
hang: mpirun exits 2 within 10 s with one line, and nothing is written.

Each rank runs in its own mount namespace (unshare -m, or -mr without root)
in which a folder of its own is bound on `local/`, as on nodes that do not
share it. Skipped (77) without mpirun, unshare, a device or MPI in the build.
"""

import os
import shutil
import subprocess
import time

import testlib
from testlib import check

MPIRUN = shutil.which("mpirun")
UNSHARE = shutil.which("unshare")
if not MPIRUN or not UNSHARE:
    testlib.skip("mpirun or unshare is not installed")
dev = testlib.require_device()
tmp = testlib.tempdir()
NS = [UNSHARE, "-m"] if os.geteuid() == 0 else [UNSHARE, "-mr"]
if subprocess.run(NS + ["true"], capture_output=True).returncode != 0:
    testlib.skip("mount namespaces are not available here")

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           POCL_MAX_PTHREAD_COUNT="1", BALLCL_KERNEL_DIR=testlib.KERNEL_DIR)
for k in ("BALLCL_FAULT", "BALLCL_FAULT_RANK", "BALLCL_TEST_WRITE_STALL"):
    ENV.pop(k, None)
if "ASAN_OPTIONS" in ENV:
    ENV["ASAN_OPTIONS"] += ":detect_leaks=0"
LIMIT = 10  # the bound for an MPI refusal
TIMEOUT = 60  # far above a start of ranks on a busy machine, far below a hang

# Each rank: "mount --bind ITS_FOLDER local [ro]" in a namespace of its own,
# then ballcl with the arguments.
WRAP = ('set -e; mount --bind "$1" "$2"; '
        'if [ "$3" = ro ]; then mount -o remount,ro,bind "$2"; fi; '
        'shift 3; exec "$@"')


def mpi(work, folders, args, ro=()):
    """mpirun, rank r with folders[r] bound on work/local (read-only when r
    is in ro); every rank the same arguments."""
    cmd = [MPIRUN, "--oversubscribe"]
    for r, f in enumerate(folders):
        cmd += ([":"] if r else []) + ["-n", "1"]
        cmd += NS + ["sh", "-c", WRAP, "sh", f, os.path.join(work, "local"),
                     "ro" if r in ro else "rw", testlib.BALLCL] + args
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=TIMEOUT,
                           cwd=work)
        return testlib.Result(args, p), time.monotonic() - t0
    except subprocess.TimeoutExpired:
        hung = subprocess.CompletedProcess(cmd, None, "", f"hung: no end within {TIMEOUT} s")
        return testlib.Result(args, hung), TIMEOUT


def lines(r):
    return [l for l in r.err.splitlines() if l.startswith("ballcl")]


def files(*folders):
    found = []
    for d in folders:
        for root, _, names in os.walk(d):
            found += [os.path.join(root, n) for n in names]
    return sorted(found)


n = 0


def case(what, nodes, args, want, ro=(), rc=2):
    """nodes: for each rank, a dict name -> bytes (None: a folder) of its
    local/ folder. Expects exit rc with one ballcl line containing want
    (rc 2, within LIMIT s) and no file made in any folder; returns the run."""
    global n
    n += 1
    work = os.path.join(tmp, f"case{n}")
    os.makedirs(os.path.join(work, "local"))
    folders = []
    for r, content in enumerate(nodes):
        f = os.path.join(work, f"node{r}")
        os.makedirs(f)
        for name, data in content.items():
            if data is None:
                os.makedirs(os.path.join(f, name))
            else:
                with open(os.path.join(f, name), "wb") as fh:
                    fh.write(data)
        folders.append(f)
    before = files(work)
    r, secs = mpi(work, folders, args, ro)
    desc = f"exit {r.rc} after {secs:.1f} s\nstderr: {r.err[-1500:]}"
    if rc == 2:
        ok = (r.rc == 2 and len(lines(r)) == 1 and want in lines(r)[0] and secs < LIMIT)
        check(ok, f"{what}: exit 2 within {LIMIT} s, one line with '{want}'", desc)
        check(files(work) == before, f"{what}: nothing written",
              str(sorted(set(files(work)) - set(before))))
    else:
        check(r.rc == rc and want in r.out, f"{what}: exit {rc}", desc)
    return r, work


# Two states of the same size and header, different balls.
state = os.path.join(tmp, "a.npy")
r = testlib.run(["run", "-d", dev, "-n", "5000", "-s", "0", "--output", state])
check(r.rc == 0, "an input made", r.describe())
A = open(state, "rb").read()
r = testlib.run(["run", "-d", dev, "-n", "5000", "-s", "0", "--seed", "9", "--output", state])
B = open(state, "rb").read()
check(len(A) == len(B) and A != B, "two inputs of one size, different content")

# The build may lack MPI: then each rank runs alone.
probe, _ = mpi(tmp, [tmp], ["run", "-d", dev, "-n", "1000", "-s", "1", "--json"])
if probe.rc == 0 and '"ranks"' not in probe.out:
    testlib.skip("ballcl was built without MPI")

RUN = ["run", "-d", dev, "-s", "5"]
IN = ["--input", "local/in.npy"]

# ---- 1: one path, different bytes --------------------------------------------------------
case("node-local inputs of different content (the issue's case)",
     [{"in.npy": A}, {"in.npy": B}], RUN + IN + ["--output", "out.npy"],
     "ranks disagree on the content of --input: rank 0 digest")
one = bytearray(A)
one[-1] ^= 1
case("inputs differing in one byte of the last ball",
     [{"in.npy": A}, {"in.npy": bytes(one)}], RUN + IN + ["--output", "out.npy"],
     "ranks disagree on the content of --input:")
r, _ = case("three ranks, rank 1's input different",
            [{"in.npy": A}, {"in.npy": B}, {"in.npy": A}], RUN + IN,
            "ranks disagree on the content of --input: ranks 0,2 digest")
# A shorter copy on one node: that rank's own check of the file says so.
case("an input shorter on one node",
     [{"in.npy": A}, {"in.npy": A[:-16]}], RUN + IN, "rank 1 of 2: 'local/in.npy': data is truncated")
# Equal bytes in two files: one job, and the run is right.
r, work = case("node-local copies of the same bytes", [{"in.npy": A}, {"in.npy": A}],
               RUN + IN + ["--output", "o.npy"], "validation  passed", rc=0)
single = os.path.join(tmp, "single.npy")
with open(os.path.join(tmp, "in.npy"), "wb") as fh:
    fh.write(A)
s = testlib.run(RUN + ["--input", os.path.join(tmp, "in.npy"), "--output", single])
check(s.rc == 0 and os.path.exists(os.path.join(work, "o.npy")) and
      open(os.path.join(work, "o.npy"), "rb").read() == open(single, "rb").read(),
      "node-local copies: the output equals one process's")

# ---- 2: a file some ranks cannot open ----------------------------------------------------
case("--input on rank 0's node only (the issue's case)", [{"in.npy": A}, {}], RUN + IN,
     "'local/in.npy': cannot open: No such file or directory")
case("--input on rank 1's node only", [{}, {"in.npy": A}], RUN + IN,
     "'local/in.npy': cannot open: No such file or directory")
case("--input a folder on one node", [{"in.npy": A}, {"in.npy": None}], RUN + IN,
     "rank 1 of 2: 'local/in.npy': is a folder")
case("--output into a folder on rank 0's node only (the issue's case)",
     [{"out": None}, {}], RUN + ["-n", "5000", "--output", "local/out/o.npy"],
     "cannot write --output 'local/out/o.npy'")
case("--output into a folder read-only on one node", [{}, {}],
     RUN + ["-n", "5000", "--output", "local/o.npy"], "Read-only file system", ro=(1,))
# The folder exists on every node, but each node has its own: the temporary
# rank 0 made is not where the others look.
case("--output into node-local folders of one name", [{}, {}],
     RUN + ["-n", "5000", "--output", "local/o.npy"], "is the folder node-local?")

testlib.finish()
