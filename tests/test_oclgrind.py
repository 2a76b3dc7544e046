#!/usr/bin/env python3
"""Every kernel under Oclgrind, the OpenCL device simulator that checks each
memory access (Debian package oclgrind).

Every model kernel runs (the measuring kernels of cl/addrate.cl and
cl/peak.cl are checked value by value against the host where they are
used): the kernels of a model are generated from cl/kernels.cl around the
update in its file (<model>.cl), so for each model listed by
`ballcl run --help` whose file is in the kernel folder, and each kernel
cl/kernels.cl declares (BCL_KERNEL(<suffix>): <model>_<suffix>),
<model>_step[_<variant>] with --steps-per-launch 1 and
<model>_steps[_<variant>] with K = 3 over 5 steps (so the last launch does
fewer), chosen with --variant where the program has that option, at N = 37,
which no work-group size used here divides (local 8 and 16: global 40 and 48;
and the driver's choice), with random mixed-magnitude balls. The run goes through the `oclgrind` wrapper with
  --check-api --data-races --uninitialized --log FILE
and must validate bit for bit against the C reference, run on the Oclgrind
platform (not silently on another driver), and leave the log empty: any
report (out-of-bounds access, data race, uninitialised value, API misuse)
fails the test. Models and variants added later are picked up from the help
text and cl/kernels.cl; a kernel that none of these runs can launch fails
the test.

Where Oclgrind itself dies with a signal and reports nothing, the run is
repeated without each check in turn: the host code is the same whatever the
checks, so a clean run without one check means that check's plugin crashed
(Oclgrind 21.10's uninitialised-value plugin does, inside a memcpy, on some
16-wide vector code); that is printed as a NOTE and the other checks stand.

One pattern is an Oclgrind artefact, not a kernel's: a literal
`store <N x float> undef` that its compiler emits before the per-element
stores of a vector built from values that went through memory; reports made
only of that pattern are accepted, as a NOTE, when the run validates bit for
bit (see undef_vector_stores).

Before that, three deliberately broken kernels (an access past N, a
write-write race, an uninitialised value), each put in place of
cl/kernels.cl around the seed's update, must each produce a report, so the
test cannot pass with checks that do not work.

Exit 77 (skipped) when oclgrind is not installed.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

BALLCL = os.environ["BALLCL"]
N = 37
LOCALS = ["8", "16", "driver"]
CHECKS = ["--check-api", "--data-races", "--uninitialized"]

BROKEN = {
    "out-of-bounds": ("Invalid", """
__kernel void seed_step(__global float4 *s, uint n, uint k)
{
    size_t i = get_global_id(0); /* no check against n */
    s[i].x = s[i].x + 1.0f;
}"""),
    "data race": ("data race", """
__kernel void seed_step(__global float4 *s, uint n, uint k)
{
    size_t i = get_global_id(0);
    if (i < n)
        s[0].y = (float)i;
}"""),
    "uninitialised value": ("Uninitialized value", """
__kernel void seed_step(__global float4 *s, uint n, uint k)
{
    size_t i = get_global_id(0);
    float4 t;
    if (i < n && k > 5)
        t = s[i];
    if (i < n)
        s[i] = t;
}"""),
}


def run_help():
    return subprocess.run([BALLCL, "run", "--help"], capture_output=True, text=True,
                          check=True).stdout


def models(help_text):
    for line in help_text.splitlines():
        s = line.strip()
        if s.startswith("--model M"):
            return s.split("model:", 1)[1].replace("(default)", "").split()
    raise SystemExit("cannot find the model list in 'ballcl run --help'")


def under_oclgrind(args, log, env=None, checks=CHECKS):
    cmd = ["oclgrind"] + checks + ["--log", log, BALLCL, "run", "-n", str(N)] + args
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    with open(log) as f:
        report = f.read()
    return p, report


def undef_vector_stores(report):
    """The number of reports if every one is Oclgrind's uninitialised-value
    check flagging a literal `store <N x float> undef` to global memory, else 0.

    Oclgrind 21.10 compiles `s[i] = (float4)(x, y, vx, vy)` from values that
    went through memory (a helper taking pointers) into a
    whole-vector store of undef followed by one store per element to the same
    address (seen with --dump-spir); its plugin flags the first. No lane of it
    survives: the test only accepts this when the run then validates every
    float bit for bit against the C reference.
    """
    blocks = [b for b in report.split("\n\n") if b.strip()]
    for b in blocks:
        lines = b.strip().splitlines()
        if not (lines[0].startswith("Uninitialized value written to global memory") and
                any(re.search(r"store <\d+ x float> undef, ", l) for l in lines)):
            return 0
    return len(blocks)


def main():
    if not shutil.which("oclgrind"):
        print("oclgrind is not installed (Debian package oclgrind): skipped")
        return 77
    work = tempfile.mkdtemp(prefix="ballcl-oclgrind.")
    problems = []
    notes = []
    runs = 0
    try:
        # The checker works: each broken kernel is reported.
        for what, (mark, src) in BROKEN.items():
            # The seed's own update, the broken kernel in place of the
            # generated ones (the host puts kernels.cl after the update).
            kdir = os.path.join(work, what.replace(" ", "-"))
            os.mkdir(kdir)
            shutil.copy(os.path.join(os.environ["BALLCL_KERNEL_DIR"], "seed.cl"), kdir)
            with open(os.path.join(kdir, "kernels.cl"), "w") as f:
                f.write(src)
            env = dict(os.environ, BALLCL_KERNEL_DIR=kdir)
            log = os.path.join(work, "control.log")
            p, report = under_oclgrind(["-s", "2", "--steps-per-launch", "1", "--local", "8",
                                        "--no-validate", "--no-cache"], log, env)
            runs += 1
            if mark not in report:
                problems.append(f"control '{what}': Oclgrind did not report it "
                                f"(exit {p.returncode}):\n{report}{p.stderr}")
            else:
                print(f"control '{what}': reported ({report.count(mark)} reports)")

        # Every kernel of every model, by model and variant:
        # <model>_step[_<variant>] and <model>_steps[_<variant>], the
        # suffixes those cl/kernels.cl declares with BCL_KERNEL. (cl/addrate.cl
        # and cl/peak.cl belong to no model: their kernels are the add-rate
        # bound's (bench, survey) and the survey's other peaks (FMA, int32,
        # fp64, half, read-only bandwidth), whose every value is checked
        # against the host's arithmetic there (tests/test_bench.py,
        # tests/test_survey.py).)
        help_text = run_help()
        has_variant = "--variant" in help_text
        kdir = os.environ.get("BALLCL_KERNEL_DIR", "")
        suffixes = []
        if os.path.isfile(os.path.join(kdir, "kernels.cl")):
            with open(os.path.join(kdir, "kernels.cl")) as f:
                suffixes = re.findall(r"^BCL_KERNEL\((\w+)\)", f.read(), re.M)
        found = set()
        for path in glob.glob(os.path.join(kdir, "*.cl")):
            with open(path) as f:
                if re.search(r"^float4\s+update\s*\(", f.read(), re.M):
                    model = os.path.basename(path)[:-len(".cl")]
                    found |= {f"{model}_{suffix}" for suffix in suffixes}
        if not found:
            problems.append(f"no model kernels found in BALLCL_KERNEL_DIR '{kdir}'")
        plan = []  # (kernel, model, variant, K, steps)
        for model in models(help_text):
            for name in sorted(found):
                m = re.fullmatch(re.escape(model) + r"_(steps?)(?:_(\w+))?", name)
                if not m:
                    continue
                variant = m.group(2) or "base"
                k, steps = ("1", "3") if m.group(1) == "step" else ("3", "5")
                plan.append((name, model, variant, k, steps))
        for model in models(help_text):
            if not any(p[1] == model for p in plan):
                problems.append(f"model {model} has no kernels here: no {model}.cl with an "
                                f"update in '{kdir}'")
        covered = {p[0] for p in plan if p[2] == "base" or has_variant}
        for name in sorted(found - covered):
            problems.append(f"kernel {name} is not run here: it belongs to no model of "
                            f"'ballcl run --help', or its variant cannot be chosen")

        for name, model, variant, k, steps in plan:
            if name not in covered:
                continue
            for local in LOCALS:
                args = ["--model", model, "-s", steps, "--steps-per-launch", k,
                        "--local", local, "--init", "random", "--no-cache"]
                if has_variant:
                    args += ["--variant", variant]
                log = os.path.join(work, "run.log")
                p, report = under_oclgrind(args, log)
                runs += 1
                label = f"{name} (K={k}, local={local})"
                before = len(problems)
                if p.returncode < 0 and not report.strip():
                    # Oclgrind died with a signal and said nothing. The host
                    # code is the same whatever checks run, so if the run
                    # is clean without one check, that check's plugin is what
                    # crashed (Oclgrind 21.10's uninitialised-value plugin
                    # does, in a memcpy, on some 16-wide vector code): say so,
                    # and keep the other checks.
                    for dropped in CHECKS:
                        rest = [c for c in CHECKS if c != dropped]
                        p2, report2 = under_oclgrind(args, log, checks=rest)
                        runs += 1
                        if (p2.returncode == 0 and not report2.strip() and
                                "validation  passed" in p2.stdout):
                            notes.append(f"{label}: Oclgrind crashed (signal {-p.returncode}) "
                                         f"with {dropped}; checked with {' '.join(rest)}")
                            p, report = p2, report2
                            break
                if "(Oclgrind, selector" not in p.stdout:
                    problems.append(f"{label}: did not run on the Oclgrind platform:\n"
                                    f"{p.stdout}{p.stderr}")
                if p.returncode != 0 or "validation  passed" not in p.stdout:
                    problems.append(f"{label}: exit {p.returncode}, no validation:\n"
                                    f"{p.stdout}{p.stderr}")
                benign = undef_vector_stores(report)
                if benign and "validation  passed" in p.stdout:
                    notes.append(f"{label}: {benign} reports of a literal 'store <N x float> "
                                 f"undef' (Oclgrind's IR), every value validated")
                elif report.strip():
                    problems.append(f"{label}: Oclgrind reported:\n{report[:4000]}")
                if len(problems) == before:
                    print(f"{label}: clean, validated")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{runs} runs under Oclgrind")
    for note in notes:
        print("NOTE " + note)
    for pr in problems:
        print("PROBLEM " + pr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
