"""Every example of the documentation, run and checked (docs/testing.md,
"The examples"): the '$ ' commands of every code block of README.md, and of
every code block in docs/*.md that follows a line '<!-- example -->'.

A block runs as one bash session in a scratch folder that holds only what a
user's checkout holds (build/tools/ballcl, build/python, examples/,
docs/surveys/), with a fresh cache folder and without the Open MPI root
variables the other tests get: an example makes what it needs itself.

Each command is checked for its exit status (what a following 'echo $?'
shows; else non-zero exactly when the example shows an error line of
ballcl's) and for the lines the example shows after it: each must appear in
the output, in order, and match token for token once the fields that depend
on the machine are set aside. Those fields are the ones the documentation
names: device and platform names (the program cuts long ones in tables,
with an ellipsis; any cut of this machine's names stands for them), measured
figures (every number with a decimal point or exponent, times in ms), dates,
cache keys, temporary paths, and the launch plan: steps per launch and how
it was chosen, the number of launches, the kernel variant and its balls per
work-item, the local and global size, and how a run was split. Those launch
fields are not wildcards: a 'run' example is run again with --json in the
same session, and what its report printed must be what the program reports
there (never a copy of the rules that chose them). Everything else -- every
other word and every other count -- must be the same.

Exit 77 (skipped) without a device."""

import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testlib  # noqa: E402
from testlib import check  # noqa: E402

ROOT = testlib.SOURCE_ROOT
MARK = "<!-- example -->"


def blocks(text, marked_only):
    """The code blocks of a Markdown text (fenced or indented), each a list
    of lines; with marked_only, only those after a MARK line."""
    out, cur, fenced, marked = [], None, False, False
    for line in text.splitlines():
        if line.startswith("```"):
            if fenced:
                if marked or not marked_only:
                    out.append(cur)
                cur, fenced, marked = None, False, False
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
        else:
            if cur is not None:
                if marked or not marked_only:
                    out.append(cur)
                cur, marked = None, False
            if line.strip() == MARK:
                marked = True
            elif line.strip():
                marked = False
    if cur and (marked or not marked_only):
        out.append(cur)
    return out


def examples(block):
    """(command, shown lines) for every '$ ' line of a block."""
    ex = []
    for line in block:
        if line.startswith("$ "):
            ex.append((line[2:], []))
        elif ex:
            ex[-1][1].append(line)
    return ex


def strip_comment(cmd):
    """'cmd   # a comment' -> 'cmd' (a '#' after two spaces)."""
    m = re.search(r"\s{2,}#.*$", cmd)
    return cmd[: m.start()] if m else cmd


# ---- what depends on the machine -------------------------------------------------------

class Names:
    """Device and platform names: the documentation's and this machine's,
    whole or cut with an ellipsis as the program prints them in tables."""

    def __init__(self, pairs):
        subs = []
        for name, tag in pairs:
            subs.append((name, tag))
            for k in range(3, len(name)):
                subs.append((name[:k].rstrip() + "…", tag))
        # Longest first, so that a whole name wins over its cuts.
        self.subs = sorted(set(subs), key=lambda s: -len(s[0]))

    def apply(self, line):
        for a, tag in self.subs:
            if a in line:
                line = line.replace(a, tag)
        return line


BENCH_ROWS = ("reference", "openmp", "local=1", "local=driver", "local=auto", "local=tuned",
              "sync-every-step", "batched", "floor", "fused")

# (a line that matches, what it becomes): the fields of the launch plan and
# of a split, in the shapes the program prints them. Applied to both sides.
LINE_RULES = [
    # 'ballcl devices': a row is all this machine's.
    (re.compile(r"^([* ]) \d+:\d+ .*$"), r"\1 <DEVICE ROW>"),
    # run: the steps line, the kernel and the launch.
    (re.compile(r"^steps (\d+) \(\d+ per launch: [^;]+; \d+ launch(?:es)?, (.*)\)$"),
     r"steps \1 (<K> per launch: <HOW>; <LAUNCHES>, \2)"),
    (re.compile(r"^steps (\d+) \(\d+ per launch on rank 0: (.*)\)$"),
     r"steps \1 (<K> per launch on rank 0: <HOW>)"),
    (re.compile(r"^kernel (\w+?)_steps?\w* \(\d+ balls? per work-item\)$"),
     r"kernel \1_<KERNEL> (<B> per work-item)"),
    (re.compile(r"^launch local .*$"), "launch <LOCAL>"),
    # the K rule's reason and figures follow the device's launch costs
    # (docs/PERFORMANCE.md): the reason is checked against --json below.
    (re.compile(r"^K rule \w+: .*$"), "K rule <K RULE>"),
    # several devices: each device's share, kernel and launch.
    (re.compile(r"^balls \d+ from ball \d+ \(.*\)$"), "balls <SHARE>"),
    (re.compile(r"^kernel (\w+?)_steps?\w*, \d+ per launch, local .*$"),
     r"kernel \1_<KERNEL>, <K> per launch, <LOCAL>"),
    # a device's validation counts its share's floats (the aggregate's stays).
    (re.compile(r"^validation passed: \d+ floats bit-identical$"),
     "validation passed: <SHARE> floats bit-identical"),
    # the Python example's plan.
    (re.compile(r"^launch \d+ steps per launch, .*$"), "launch <PLAN>"),
    # mpirun: a rank's row and its phases.
    (re.compile(r"^(\d+) \S+ \d+:\d+ .*$"), r"\1 <RANK ROW>"),
    (re.compile(r"^phases .*$"), "phases <PHASES>"),
    # bench: a row's configuration and figures; its validation stays.
    (re.compile(r"^(" + "|".join(re.escape(r) for r in BENCH_ROWS) + r") .* (\S+)$"),
     r"\1 <ROW> \2"),
    # bench: the add-rate probe's shape follows the device's vector width.
    (re.compile(r"^add-rate bound (\S+) GFLOP/s \(.*?\), "), r"add-rate bound \1 GFLOP/s (<PROBE>), "),
    # a cache entry: its key, device, size and age.
    (re.compile(r"^<KEY> .*? (\S+\.cl) .* (\S+)$"), r"<KEY> \1 <ENTRY> \2"),
]


def norm(line, names, own_cache):
    line = names.apply(line)
    line = re.sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d)?Z?", "<DATE>", line)
    line = re.sub(r"/tmp/[^\s')]+", "<TMP>", line)
    line = re.sub(r"\b[0-9a-f]{16,64}\b", "<KEY>", line)
    line = re.sub(r"\s+", " ", line).strip()
    if not own_cache:
        # Whether a program came from the cache depends on what ran before
        # on this machine, unless the example has a cache folder of its own.
        line = re.sub(r"^program (\S+) ms \(.*?\)", r"program \1 ms (<CACHE>)", line)
        line = re.sub(r"\(launch costs (?:measured|stored)\)", "(launch costs <CACHE>)", line)
    for rule, to in LINE_RULES:
        line = rule.sub(to, line)
    # Measured figures: decimals, exponents, versions; times in whole ms.
    line = re.sub(r"[-+]?\d+(?:\.\d+)+(?:e[-+]?\d+)?|[-+]?\d+e[-+]?\d+", "#", line)
    line = re.sub(r"\b\d+ ms\b", "# ms", line)
    return line


# ---- the launch plan against --json ---------------------------------------------------

def plan_from_report(lines):
    """The launch fields a 'run' report printed: one dict for a single
    device, one per device with balls for several."""
    single, per = {}, []
    for raw in lines:
        line = re.sub(r"\s+", " ", raw).strip()
        m = re.match(r"^steps (\d+) \((\d+) per launch: ([^;]+); (\d+) launch", line)
        if m:
            single.update(steps=int(m[1]), k=int(m[2]), how=m[3], launches=int(m[4]))
        m = re.match(r"^kernel \w+?_steps?(?:_(\w+))? \((\d+) balls? per work-item\)$", line)
        if m:
            single.update(variant=m[1] or "", b=int(m[2]))
        m = re.match(r"^K rule (\w+): ", line)
        if m:
            single.update(k_reason=m[1])
        m = re.match(r"^launch local (\d+|driver), global (\d+)", line)
        if m:
            single.update(local=m[1], glob=int(m[2]))
        m = re.match(r"^kernel \w+?_steps?(?:_(\w+))?, (\d+) per launch, local (\d+|driver)", line)
        if m:
            per.append(dict(variant=m[1] or "", k=int(m[2]), local=m[3]))
    return single, per


def plan_problems(lines, doc):
    """What the report printed against the same command's --json: whether
    it printed a plan, and every field that differs."""
    single, per = plan_from_report(lines)
    problems = []
    if single:
        lj = doc.get("launch", {})
        k = lj.get("steps_per_launch")
        want = {"k": k, "how": lj.get("steps_per_launch_how"),
                "launches": math.ceil(doc["steps"] / k) if k else None,
                "variant": lj.get("variant"), "b": lj.get("balls_per_item"),
                "local": "driver" if lj.get("how") == "driver" else str(lj.get("local")),
                "glob": lj.get("global"), "k_reason": lj.get("k_reason")}
        for key, value in single.items():
            if key in want and want[key] != value:
                problems.append(f"{key}: report {value!r}, --json {want[key]!r}")
    devs = [d for d in doc.get("devices", []) if d.get("balls")]
    if per:
        if len(per) != len(devs):
            problems.append(f"{len(per)} kernel lines, {len(devs)} devices with balls in --json")
        for p, d in zip(per, devs):
            lj = d["launch"]
            want = {"variant": lj["variant"], "k": lj["steps_per_launch"],
                    "local": "driver" if lj["how"] == "driver" else str(lj["local"])}
            for key, value in p.items():
                if want[key] != value:
                    problems.append(f"device {d['selector']} {key}: report {value!r}, "
                                    f"--json {want[key]!r}")
    return bool(single or per), problems


def twin(cmd):
    """The same 'run' command with --json, or None when the example is not
    a plain run (a pipe, a redirection, mpirun, --json already)."""
    if re.search(r"[|<>;&]", cmd) or "--json" in cmd or "mpirun" in cmd:
        return None
    if not re.match(r"^(?:\w+=(?:\"[^\"]*\"|\S+) )*build/tools/ballcl run\b", cmd):
        return None
    return cmd + " --json"


# ---- running a block -------------------------------------------------------------------

def run_block(cmds, tmp):
    """Runs one block's commands in one shell; returns each one's output,
    exit status and --json twin."""
    script = ["exec 2>&1"]
    asan = os.environ.get("BALLCL_ASAN_RUNTIME")
    for i, (cmd, _) in enumerate(cmds):
        cmd = strip_comment(cmd)
        if asan and "/usr/bin/python3" in cmd:
            # The sanitizer build's module in an uninstrumented interpreter
            # (tests/python/run_pytest.py says why).
            cmd = f"LD_PRELOAD='{asan}' ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 {cmd}"
        elif asan and cmd.startswith("mpirun "):
            # As in tests/test_mpi.py: no leak check beside Open MPI.
            cmd = f"ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 {cmd}"
        script.append(f"__rc=$?; echo '@@ {i} begin'; (exit $__rc)")
        script.append(cmd)
        script.append(f"__rc=$?; echo \"@@ {i} end $__rc\"")
        nxt = cmds[i + 1][0] if i + 1 < len(cmds) else ""
        t = twin(cmd)
        if t and not any(is_error(w) for w in cmds[i][1]) and not nxt.startswith("echo $?"):
            script.append(f"{t} > .twin-{i}.json 2>/dev/null")
        script.append("(exit $__rc)")
    env = dict(os.environ, LC_ALL="C")
    for v in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
        env.pop(v, None)  # the example must say what root needs
    p = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp, capture_output=True,
                       text=True, timeout=900, env=env)
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
    twins = {}
    for i in outs:
        path = os.path.join(tmp, f".twin-{i}.json")
        if os.path.exists(path):
            try:
                twins[i] = json.load(open(path))
            except ValueError:
                twins[i] = None
    return outs, twins, p.stdout


def scratch(tmp):
    """What a user's checkout holds after 'tools/setup.sh run'."""
    os.makedirs(os.path.join(tmp, "build", "tools"))
    os.symlink(testlib.BALLCL, os.path.join(tmp, "build", "tools", "ballcl"))
    build = os.path.dirname(os.path.dirname(os.path.abspath(testlib.BALLCL)))
    os.symlink(os.path.join(build, "python"), os.path.join(tmp, "build", "python"))
    os.symlink(os.path.join(ROOT, "examples"), os.path.join(tmp, "examples"))
    os.makedirs(os.path.join(tmp, "docs"))
    os.symlink(os.path.join(ROOT, "docs", "surveys"), os.path.join(tmp, "docs", "surveys"))


def is_error(line):
    return bool(re.match(r"^(ballcl|ls|cmp): ", line)) and not line.startswith("ballcl: program")


def first_missing(want, got, names, own_cache):
    """The first shown line with no match in the output, in order."""
    k = 0
    for w in want:
        if not w.strip():
            continue
        nw = norm(w, names, own_cache)
        while k < len(got) and norm(got[k], names, own_cache) != nw:
            k += 1
        if k == len(got):
            return w
        k += 1
    return None


def self_check(names, sample):
    """The checker itself fails where it must: a changed count, a changed
    word, a launch plan that differs from --json."""
    want, got, doc = sample
    for i, w in enumerate(want):
        n = norm(w, names, False)
        m = re.search(r"\b(\d+)\b", n)
        if w.startswith("balls") and m:
            bad = want[:i] + [w.replace(m.group(1), str(int(m.group(1)) + 1))] + want[i + 1:]
            check(first_missing(bad, got, names, False) is not None,
                  "self-check: a changed ball count is found", w)
        if w.startswith("validation"):
            bad = want[:i] + [w.replace("passed", "failed")] + want[i + 1:]
            check(first_missing(bad, got, names, False) is not None,
                  "self-check: a changed word is found", w)
    lied = [re.sub(r"\((\d+) per launch", lambda m: f"({int(m.group(1)) + 1} per launch", g)
            for g in got]
    check(plan_problems(lied, doc)[1] != [],
          "self-check: a report whose steps per launch differ from --json is found")


def main():
    testlib.require_device()
    r = testlib.run(["devices", "--json"])
    devs = r.json()["devices"]
    readme = open(os.path.join(ROOT, "README.md")).read()
    # The documentation's device: the one of the README's 'devices' example.
    m = re.search(r"^\* \d+:\d+\s+\w+\s+\d+\s+[\d.]+ GiB\s+(.+?)\s{2,}(.+?)\s{2,}", readme, re.M)
    check(m is not None, "README shows a 'devices' table with a default device")
    if not m:
        testlib.finish()
    pairs = [(m.group(1), "<DEVICE>"), (m.group(2), "<PLATFORM>")]
    for d in devs:
        pairs += [(d["name"], "<DEVICE>"), (d["platform"], "<PLATFORM>")]
    names = Names(pairs)
    docs = [("README.md", readme, False)]
    for f in sorted(os.listdir(os.path.join(ROOT, "docs"))):
        if f.endswith(".md"):
            text = open(os.path.join(ROOT, "docs", f)).read()
            if MARK in text:
                docs.append((f"docs/{f}", text, True))
    found, sample = 0, None
    for fname, text, marked_only in docs:
        for block in blocks(text, marked_only):
            cmds = examples(block)
            if not cmds:
                continue
            tmp = testlib.tempdir()
            scratch(tmp)
            os.environ["BALLCL_CACHE_DIR"] = os.path.join(tmp, "cache")
            own_cache = any("BALLCL_CACHE_DIR" in c for c, _ in cmds)
            outs, twins, raw = run_block(cmds, tmp)
            for i, (cmd, want) in enumerate(cmds):
                found += 1
                got, rc = outs.get(i, ([], None))
                what = f"{fname}: $ {cmd}"
                if rc is None:
                    check(False, what, f"did not run to its end:\n{raw[-800:]}")
                    continue
                nxt = cmds[i + 1][0] if i + 1 < len(cmds) else ""
                if not nxt.startswith("echo $?") and not cmd.startswith("echo $?"):
                    fails = any(is_error(w) for w in want)
                    check(rc != 0 if fails else rc == 0,
                          f"{what}: exit {'non-zero' if fails else '0'}",
                          f"exit {rc}\n" + "\n".join(got[-10:]))
                if cmd.startswith("echo $?"):
                    check(got[:1] == want[:1], f"{what}: the exit status shown",
                          f"got {got[:1]}, shown {want[:1]}")
                missing = first_missing(want, got, names, own_cache)
                check(missing is None, f"{what}: shows the lines of the example",
                      f"missing: {missing!r}\n  as {norm(missing or '', names, own_cache)!r}"
                      "\noutput:\n" + "\n".join(got[:40]))
                if i in twins:
                    doc = twins[i]
                    check(doc is not None, f"{what}: the same run with --json gives JSON")
                    if doc:
                        had, problems = plan_problems(got, doc)
                        check(not problems, f"{what}: the launch plan is what --json reports",
                              "; ".join(problems))
                        if had and sample is None and want:
                            sample = (want, got, doc)
    check(found >= 10, f"the documentation has examples to run ({found})")
    check(sample is not None, "a 'run' example's plan was checked against --json")
    if sample:
        self_check(names, sample)
    testlib.finish()


main()
