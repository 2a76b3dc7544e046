"""Every example of README.md, run: the '$ ' commands of its code blocks
(fenced or indented) with this build's ballcl, each checked for its exit
status and for the lines the README shows after it.

A block runs as one shell session, in a scratch folder that has the paths
the examples use (build/tools/ballcl, docs/surveys) and the input files
their comments describe, with a fresh cache folder. What a README line
shows must appear in the output, in order; figures vary from run to run
and machine to machine, so numbers are compared as numbers-of-any-value,
and the README's device and platform names stand for this machine's. A
line that reports an error must match that way exactly; other lines
(report rows, table rows) must match, or at least begin with the same
label, as a row of a table of measured figures does.

Exit status: a command followed by 'echo $?' must print what the README
shows; any other ballcl command must exit 0, or non-zero when the README
shows it failing (an error line of its own)."""

import json
import os
import re
import shlex
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testlib  # noqa: E402
from testlib import check  # noqa: E402

README = os.path.join(testlib.SOURCE_ROOT, "README.md")


def blocks(text):
    """The code blocks of a Markdown text, each a list of lines."""
    out, cur, fenced = [], None, False
    for line in text.splitlines():
        if line.startswith("```"):
            if fenced:
                out.append(cur)
                cur, fenced = None, False
            else:
                cur, fenced = [], True
            continue
        if fenced:
            cur.append(line)
        elif line.startswith("    ") and line.strip():
            if cur is None:
                cur = []
            cur.append(line[4:])
        elif cur is not None and not line.strip():
            continue  # a blank line inside an indented block
        elif cur is not None:
            out.append(cur)
            cur = None
    if cur:
        out.append(cur)
    return out


def examples(block):
    """(command, expected lines) for every '$ ' line of a block."""
    ex = []
    for line in block:
        if line.startswith("$ "):
            ex.append((line[2:], []))
        elif ex:
            ex[-1][1].append(line)
    return ex


def strip_comment(cmd):
    """'cmd   # a comment' -> 'cmd' (a '#' after spaces, outside quotes)."""
    m = re.search(r"\s{2,}#.*$", cmd)
    return cmd[: m.start()] if m else cmd


NUM = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def norm(line, names):
    for a, b in names:
        line = line.replace(a, b)
    line = re.sub(r"\b[0-9a-f]{16,64}\b", "<KEY>", line)  # cache keys
    return re.sub(r"\s+", " ", NUM.sub("#", line)).strip()


def is_error(line):
    return bool(re.match(r"^(ballcl|ls): ", line)) and not line.startswith("ballcl: program")


def first_label(line):
    """The label a report or table row begins with ('device', '| copy size |')."""
    line = line.strip()
    if line.startswith("|"):
        return "|".join(line.split("|")[:2])
    return line.split(" ")[0] if line else ""


def matches(want, got, names):
    if norm(want, names) == norm(got, names):
        return True
    if is_error(want):
        return False
    return first_label(want) == first_label(got) and first_label(want) != ""


def run_block(cmds, tmp, names):
    """Runs the commands of one block in one shell; returns each one's output
    and exit status."""
    script = ["exec 2>&1"]
    asan = os.environ.get("BALLCL_ASAN_RUNTIME")
    for i, (cmd, _) in enumerate(cmds):
        script.append(f"__rc=$?; echo '@@ {i} begin'; (exit $__rc)")
        cmd = strip_comment(cmd)
        if asan and "/usr/bin/python3" in cmd:
            # The sanitizer build's module in an uninstrumented interpreter
            # (tests/python/run_pytest.py says why).
            cmd = f"LD_PRELOAD='{asan}' ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 {cmd}"
        elif asan and cmd.startswith("mpirun "):
            # As in tests/test_mpi.py: no leak check beside Open MPI.
            cmd = f"ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 {cmd}"
        script.append(cmd)
        script.append(f"__rc=$?; echo \"@@ {i} end $__rc\"; (exit $__rc)")
    p = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp, capture_output=True,
                       text=True, timeout=900, env=dict(os.environ, LC_ALL="C"))
    outs = {}
    cur, lines = None, []
    for line in p.stdout.splitlines():
        m = re.match(r"^@@ (\d+) (begin|end)(?: (\d+))?$", line)
        if m and m.group(2) == "begin":
            cur, lines = int(m.group(1)), []
        elif m:
            outs[int(m.group(1))] = (lines, int(m.group(3)))
            cur = None
        elif cur is not None:
            lines.append(line)
    return outs, p.stdout


def scratch(tmp):
    """The paths and files the examples use."""
    os.makedirs(os.path.join(tmp, "build", "tools"))
    os.symlink(testlib.BALLCL, os.path.join(tmp, "build", "tools", "ballcl"))
    # The Python module of this build and the examples (README's Python section).
    build = os.path.dirname(os.path.dirname(os.path.abspath(testlib.BALLCL)))
    os.symlink(os.path.join(build, "python"), os.path.join(tmp, "build", "python"))
    os.symlink(os.path.join(testlib.SOURCE_ROOT, "examples"), os.path.join(tmp, "examples"))
    os.makedirs(os.path.join(tmp, "docs"))
    os.symlink(os.path.join(testlib.SOURCE_ROOT, "docs", "surveys"),
               os.path.join(tmp, "docs", "surveys"))
    # state.npy, "a (3, 5) array": float32, C order.
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), }"
    header += " " * (63 - len(header) % 64) + "\n"
    with open(os.path.join(tmp, "state.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<15f", *range(15)))
    # v3.json: a survey of a schema version the program does not know.
    text = open(os.path.join(testlib.SOURCE_ROOT, "docs", "surveys", "pocl-amd-epyc.json")).read()
    with open(os.path.join(tmp, "v3.json"), "w") as f:
        f.write(re.sub(r'"ballcl-survey/\d+"', '"ballcl-survey/3"', text, count=1))


def main():
    dev = testlib.require_device()
    r = testlib.run(["devices", "--json"])
    devs = r.json()["devices"]
    here = next((d for d in devs if d["type"] == "cpu"), devs[0])
    text = open(README).read()
    # The README's device is the one of its 'devices' example.
    m = re.search(r"^\* \d+:\d+\s+\w+\s+\d+\s+[\d.]+ GiB\s+(.+?)\s{2,}(.+?)\s{2,}", text, re.M)
    check(m is not None, "README shows a 'devices' table with a default device")
    if not m:
        testlib.finish()
    names = [(m.group(1), "<DEVICE>"), (m.group(2), "<PLATFORM>"),
             (here["name"], "<DEVICE>"), (here["platform"], "<PLATFORM>"),
             ("Portable Computing…", "<PLATFORM>")]
    print(f"device: {dev} ({here['name']}); README's: {m.group(1)}")
    found = 0
    for bi, block in enumerate(blocks(text)):
        cmds = examples(block)
        if not cmds:
            continue
        tmp = testlib.tempdir()
        scratch(tmp)
        os.environ["BALLCL_CACHE_DIR"] = os.path.join(tmp, "cache")
        outs, raw = run_block(cmds, tmp, names)
        for i, (cmd, want) in enumerate(cmds):
            found += 1
            got, rc = outs.get(i, ([], None))
            what = f"README: $ {cmd}"
            if rc is None:
                check(False, what, f"did not run to its end:\n{raw[-800:]}")
                continue
            nxt = cmds[i + 1][0] if i + 1 < len(cmds) else ""
            runs_ballcl = "build/tools/ballcl" in cmd.split("|")[0]
            if runs_ballcl and not nxt.startswith("echo $?"):
                fails = any(is_error(w) for w in want)
                check(rc != 0 if fails else rc == 0,
                      f"{what}: exit {'non-zero' if fails else '0'}",
                      f"exit {rc}\n" + "\n".join(got[-10:]))
            if cmd.startswith("echo $?"):
                check(got[:1] == want[:1], f"{what}: the exit status the README shows",
                      f"got {got[:1]}, README {want[:1]}")
            # Every line the README shows, in order.
            k, missing = 0, None
            for w in want:
                if not w.strip():
                    continue
                while k < len(got) and not matches(w, got[k], names):
                    k += 1
                if k == len(got):
                    missing = w
                    break
                k += 1
            check(missing is None, f"{what}: shows the lines of the README",
                  f"missing: {missing!r}\noutput:\n" + "\n".join(got[:40]))
    check(found >= 10, f"README has examples to run ({found})")
    testlib.finish()


main()
