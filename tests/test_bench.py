#!/usr/bin/env python3
"""CLI tests of bench, tune, run's choice of steps per launch and kernel
variant, and the plot script (docs/BENCHMARK.md), on whatever OpenCL device is
present (PoCL in CI). Structure and correctness only, never timings. Exits
77 (skipped) when there is no OpenCL device.

Environment (from tests/meson.build): BALLCL, BALLCL_KERNEL_DIR.
"""
import json
import os
import pathlib
import pty
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

BALLCL = os.environ["BALLCL"]
KERNELS = pathlib.Path(os.environ["BALLCL_KERNEL_DIR"])
ROOT = pathlib.Path(__file__).resolve().parent.parent
PLOT = ROOT / "tools" / "plot_bench.sh"
ROWS = ["reference", "openmp", "local=1", "local=driver", "local=auto", "local=tuned",
        "sync-every-step", "batched", "fused"]
# Small and quick: structure, not speed.
QUICK = ["-r", "2", "-s", "8"]

failures = []
TMP = pathlib.Path(tempfile.mkdtemp(prefix="test_bench."))
ENV = dict(os.environ)
ENV["BALLCL_CACHE_DIR"] = str(TMP / "cache")


def ballcl(*args, env=None, check=None):
    p = subprocess.run([BALLCL, *args], capture_output=True, text=True, env=env or ENV,
                       timeout=300)
    if check is not None and p.returncode != check:
        raise AssertionError(f"ballcl {' '.join(args)}: exit {p.returncode}, wanted {check}\n"
                             f"stdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}")
    return p


TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def run_all():
    for fn in TESTS:
        try:
            fn()
            print(f"ok   {fn.__name__}", flush=True)
        except Exception as exc:  # noqa: BLE001 - report every failure, then go on
            failures.append(fn.__name__)
            print(f"FAIL {fn.__name__}: {type(exc).__name__}: {exc}", flush=True)


def check_stats(s, what):
    assert set(s) == {"median", "min", "max"}, (what, s)
    assert 0 < s["min"] <= s["median"] <= s["max"], (what, s)


def device_native_width():
    """The native float vector width of the device the tests run on."""
    p = ballcl("devices", "--json", check=0)
    dev = [d for d in json.loads(p.stdout)["devices"] if d["default"]]
    assert len(dev) == 1, p.stdout
    return dev[0]["native_vector_width_float"]


def default_k(j):
    """The default K rule (docs/BENCHMARK.md) for the device of a run or bench object."""
    return 1000 if j["device"]["type"] == "cpu" else 100


def check_bench_object(j, balls, k=None):
    assert j["balls"] == balls
    assert j["copy_gb_per_s"] > 0
    check_stats(j["copy"]["gb_per_s"], "copy")
    # The add-rate bound, measured in the same run, checked against the host.
    a = j["add_rate"]
    assert j["add_gflop_per_s"] == a["gflop_per_s"]["median"] > 0, a
    check_stats(a["gflop_per_s"], "add rate")
    assert a["width"] in (1, 2, 4, 8, 16) and a["chains"] in (4, 8, 12, 16), a
    assert a["global"] >= 1 and a["local"] >= 1 and a["adds_per_repeat"] > 0, a
    assert a["compared"] >= 5 * a["global"] * 4 * a["width"], a  # every chain count, and the last
    assert a["ops_per_ball_step"] >= 1
    assert a["ball_steps_per_s_bound"] > 0
    for r in j["rows"]:
        f = r["add_bound_fraction"]
        assert f is None if not r["validated"] else (isinstance(f, float) and f > 0), r
    assert [r["name"] for r in j["rows"]] == ROWS, [r["name"] for r in j["rows"]]
    for r in j["rows"]:
        assert r["validated"] is True, r
        check_stats(r["us_per_step"], r["name"])
        for key in ("ball_steps_per_s", "gb_per_s", "speedup_vs_reference"):
            assert isinstance(r[key], float) and r[key] > 0, (r["name"], key, r[key])
        assert r["validation"]["mismatches"] == 0
        assert r["steps_per_repeat"] >= 1
    rows = {r["name"]: r for r in j["rows"]}
    assert rows["reference"]["speedup_vs_reference"] == 1.0
    assert rows["reference"]["config"] == {"where": "host", "threads": 1}
    assert rows["openmp"]["config"]["threads"] >= 1
    assert rows["openmp"]["validation"]["compared"] == 4 * balls
    assert rows["local=1"]["config"]["local"] == 1
    assert rows["local=driver"]["config"]["local"] == "driver"
    assert rows["local=auto"]["config"]["local_how"] == "auto"
    assert rows["sync-every-step"]["clock"] == "host"
    assert rows["sync-every-step"]["config"]["sync"] == "every"
    assert rows["batched"]["clock"] == "host"
    assert rows["batched"]["config"]["sync"] == "end"
    # Device rows are timed by the device's clock unless its profiling
    # failed the check (docs/BENCHMARK.md, "Clocks"): then by the host's,
    # and the object says why.
    note = j["clock_note"]
    assert note is None or "ns" in note, note
    for name in ("local=1", "local=driver", "local=auto", "local=tuned", "fused"):
        assert rows[name]["clock"] == ("device" if note is None else "host"), (name, note)
        assert (rows[name]["device_us_per_step"] is None) == (note is not None), rows[name]
    # The copy is measured first: it is the host's only if the check failed
    # by then.
    assert j["copy"]["clock"] == "device" or note is not None, j["copy"]
    fused = rows["fused"]["config"]
    if k is not None:
        assert fused["steps_per_launch"] == k, fused
    for name in ROWS[2:]:
        assert rows[name]["validation"]["compared"] == 4 * balls, name
    return rows


@test
def bench_json_and_csv():
    csv = TMP / "b.csv"
    p = ballcl("bench", "-n", "301", *QUICK, "--steps-per-launch", "4", "--json", "--csv",
               str(csv), check=0)
    assert p.stderr == "", p.stderr  # not a terminal: no progress
    j = json.loads(p.stdout)
    assert j["schema"] == "ballcl-bench/1"
    assert j["model"] == "seed"
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", j["date"])
    assert j["repeats"] == 2
    rows = check_bench_object(j, 301, k=4)
    assert rows["local=tuned"]["config"]["local_how"] == "auto"  # nothing tuned yet
    lines = csv.read_text().splitlines()
    assert lines[0].startswith("balls,row,us_per_step_median,us_per_step_min,us_per_step_max,")
    assert [line.split(",")[1] for line in lines[1:]] == ROWS
    assert all(line.split(",")[8] == "yes" for line in lines[1:])


@test
def bench_table_tells_the_story():
    p = ballcl("bench", "-n", "300", *QUICK, check=0)
    out = p.stdout
    for name in ROWS:
        assert re.search(rf"^{re.escape(name)}\s", out, re.M), name
    assert "FAILED" not in out
    story = out[out.index("The seed's three mistakes"):]
    # A cost, or (on a busy machine, with two repeats) ranges that overlap.
    assert re.search(r"^  1\. N work-groups of one work-item \(local=1\): [\d.]+ us/step(, "
                     r"[\d.]+x the time of local=auto| against local=auto's [\d.]+: within the "
                     r"noise)", story, re.M), story
    assert re.search(r"^  2\. .*local=driver", story, re.M), story
    # A cost, or (noise on a busy machine) the same or a faster time, said so.
    assert re.search(r"^  3\. .*sync-every-step [\d.]+ us/step (against|was faster than) "
                     r"batched", story, re.M), story
    assert "nothing is tuned" in story


@test
def bench_sweep():
    csv = TMP / "sweep.csv"
    p = ballcl("bench", "-n", "100,257", *QUICK, "--json", "--csv", str(csv), check=0)
    j = json.loads(p.stdout)
    assert [s["balls"] for s in j["sweep"]] == [100, 257]
    for s, n in zip(j["sweep"], [100, 257]):
        check_bench_object(s, n)
    assert len(csv.read_text().splitlines()) == 1 + 2 * len(ROWS)
    png = TMP / "sweep.png"
    if shutil.which("gnuplot") is None:
        raise AssertionError("gnuplot is missing (tools/setup.sh installs gnuplot-nox)")
    subprocess.run(["sh", str(PLOT), str(csv), str(png)], check=True, capture_output=True)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, len(data)
    assert not list(TMP.glob(".*.part"))
    svg = TMP / "sweep.svg"
    subprocess.run(["sh", str(PLOT), str(csv), str(svg), "t"], check=True, capture_output=True)
    assert "<svg" in svg.read_text()
    # Not a bench CSV: refused, nothing written.
    bad = TMP / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    p = subprocess.run(["sh", str(PLOT), str(bad), str(TMP / "bad.png")], capture_output=True,
                       text=True)
    assert p.returncode == 2 and "not a 'ballcl bench --csv' file" in p.stderr
    assert not (TMP / "bad.png").exists()


@test
def progress_only_on_a_terminal():
    master, slave = pty.openpty()
    p = subprocess.run([BALLCL, "bench", "-n", "100", *QUICK], stdout=subprocess.PIPE,
                       stderr=slave, env=ENV, timeout=300)
    os.close(slave)
    seen = b""
    try:
        while True:
            chunk = os.read(master, 65536)
            if not chunk:
                break
            seen += chunk
    except OSError:
        pass
    os.close(master)
    assert p.returncode == 0
    assert b"bench: [" in seen and b"local=1" in seen, seen[:300]
    assert seen.endswith(b"\r\x1b[K"), seen[-40:]  # the line is erased at the end
    assert b"bench: [" not in p.stdout


@test
def tune_stores_and_run_uses_it():
    cache = TMP / "tune-cache"
    env = dict(ENV, BALLCL_CACHE_DIR=str(cache))
    # Before tuning: auto, the default K rule and the rule's variant.
    p = ballcl("run", "-n", "203", "-s", "2500", "--local", "tuned", "--json", env=env, check=0)
    j = json.loads(p.stdout)
    assert j["launch"]["how"] == "auto", j["launch"]
    assert j["launch"]["steps_per_launch"] == default_k(j)
    assert j["launch"]["steps_per_launch_how"] == "default rule"
    assert j["validation"]["passed"]

    p = ballcl("tune", "-n", "203", "-r", "1", "-s", "4", "--k", "3,5", env=env, check=0)
    assert "best one-step:" in p.stdout and "best k-step:" in p.stdout
    files = list((cache / "tuned").glob("seed-*.json"))
    assert len(files) == 1, files
    assert oct(os.stat(cache / "tuned").st_mode & 0o777) == "0o700"
    t = json.loads(files[0].read_text())
    assert t["format"] == "ballcl-tuned/1" and t["model"] == "seed"
    assert t["balls"] == 203
    assert re.match(r"\d{4}-\d\d-\d\dT", t["date"])
    assert t["device"]["name"] and t["device"]["driver"] and len(t["device"]["key"]) == 32
    assert t["single"]["steps_per_launch"] == 1
    assert t["fused"]["steps_per_launch"] in (3, 5, default_k(j))
    assert all(c["validated"] for c in t["candidates"])
    kinds = {(c["kernel"], c["steps_per_launch"]) for c in t["candidates"]}
    assert ("seed_step", 1) in kinds and any(k[0].startswith("seed_steps") for k in kinds)
    assert any(c["local"] == "driver" for c in t["candidates"])
    assert f"stored in {files[0]}" in p.stdout

    # run --local tuned uses it and says so; K comes from it.
    p = ballcl("run", "-n", "203", "-s", "250", "--local", "tuned", "--json", env=env, check=0)
    j = json.loads(p.stdout)
    fused = t["fused"]
    assert j["launch"]["how"] == "tuned", j["launch"]
    # (never more than S: the CPU's sweep 2 runs at K = 1000)
    assert j["launch"]["steps_per_launch"] == min(fused["steps_per_launch"], 250), j["launch"]
    assert j["launch"]["steps_per_launch_how"] == "tuned"
    assert j["launch"]["variant"] == fused["variant"]
    assert j["launch"]["local"] == (0 if fused["local"] == "driver" else fused["local"])
    assert j["validation"]["passed"]
    # One step per launch: the tuned one-step entry.
    p = ballcl("run", "-n", "203", "-s", "20", "--steps-per-launch", "1", "--local", "tuned",
               "--json", env=env, check=0)
    j = json.loads(p.stdout)
    single = t["single"]
    assert j["launch"]["how"] == "tuned" and j["launch"]["variant"] == single["variant"]
    assert j["launch"]["steps_per_launch_how"] == "given"

    # bench's tuned rows use it.
    p = ballcl("bench", "-n", "203", *QUICK, "--json", env=env, check=0)
    rows = check_bench_object(json.loads(p.stdout), 203, k=fused["steps_per_launch"])
    assert rows["local=tuned"]["config"]["local_how"] == "tuned"
    assert rows["local=tuned"]["config"]["variant"] == single["variant"]
    assert rows["batched"]["config"]["local_how"] == "tuned"
    assert rows["fused"]["config"]["variant"] == fused["variant"]

    # --json prints the stored record with its path.
    p = ballcl("tune", "-n", "50", "-r", "1", "-s", "2", "--k", "2", "--json", env=env, check=0)
    j = json.loads(p.stdout)
    assert j["path"] == str(files[0]) and j["balls"] == 50

    # A damaged file: a warning, then auto, never a crash.
    files[0].write_text("{ damaged")
    p = ballcl("run", "-n", "203", "-s", "10", "--local", "tuned", "--json", env=env, check=0)
    assert "warning" in p.stderr and "not valid JSON" in p.stderr and str(files[0]) in p.stderr
    assert json.loads(p.stdout)["launch"]["how"] == "auto"


@test
def fused_same_bits_as_single_steps():
    # K in {1, 2, 7, 64}, N prime (no multiple of any work-group size), every
    # k-step variant: the final state equals that of single steps, bit for bit.
    n, steps = 1031, 131
    single = TMP / "single.npy"
    ballcl("run", "-n", str(n), "-s", str(steps), "--init", "random", "--steps-per-launch", "1",
           "--output", str(single), check=0)
    want = np.load(single)
    p = ballcl("run", "-n", "1", "-s", "2", "--variant", "nosuch", check=2)
    variants = re.search(r"expected one of (.*)$", p.stderr.strip()).group(1).split(", ")
    assert variants[0] == "base" and len(variants) >= 2, variants
    for v in variants:
        for k in (1, 2, 7, 64):
            out = TMP / f"fused-{v}-{k}.npy"
            args = ["run", "-n", str(n), "-s", str(steps), "--init", "random",
                    "--steps-per-launch", str(k), "--output", str(out), "--json"]
            if k > 1:
                args += ["--variant", v]
            for local in ("auto", "5"):
                p = ballcl(*args, "--local", local, check=0)
                j = json.loads(p.stdout)
                assert j["validation"]["passed"]
                assert j["launch"]["steps_per_launch"] == k
                got = np.load(out)
                assert got.tobytes() == want.tobytes(), (v, k, local)


@test
def run_default_k():
    p = ballcl("run", "-n", "100", "-s", "2500", "--json", check=0)
    j = json.loads(p.stdout)
    assert j["launch"]["steps_per_launch"] == default_k(j)
    assert j["launch"]["steps_per_launch_how"] == "default rule"
    # The default variant on a CPU: four sets of the native float width;
    # a driver with 1-wide native vectors (llvmpipe) makes lanes of
    # work-items and runs one ball per work-item.
    if j["device"]["type"] == "cpu":
        width = device_native_width()
        want = ("",) if width == 1 else ("x16", "x32", "x64")
        assert j["launch"]["variant"] in want, (width, j["launch"])
    p = ballcl("run", "-n", "100", "-s", "30", "--json", check=0)
    assert json.loads(p.stdout)["launch"]["steps_per_launch"] == 30
    p = ballcl("run", "-n", "100", "-s", "30", "--sync", "every", "--json", check=0)
    j = json.loads(p.stdout)
    assert j["launch"]["steps_per_launch"] == 1 and j["launch"]["sync"] == "every"
    p = ballcl("run", "-n", "100", "-s", "30", "--steps-per-launch", "7", check=0)
    assert "7 per launch: given; 5 launches" in p.stdout, p.stdout


@test
def a_failing_row_is_shown_failed_and_not_timed():
    # A kernel folder whose seed kernels compute z' = z - w: every device
    # row differs from the C reference; the host rows do not.
    broken = TMP / "broken-cl"
    shutil.copytree(KERNELS, broken)
    src = (broken / "seed.cl").read_text()
    new, count = re.subn(r"\b(b\.|)z(\d?) = \1z\2 \+ \1w\2\b", r"\1z\2 = \1z\2 - \1w\2", src)
    assert count >= 2 and "b.z = b.z - b.w" in new, count
    (broken / "seed.cl").write_text(new)
    env = dict(ENV, BALLCL_KERNEL_DIR=str(broken))
    csv = TMP / "failed.csv"
    # --init random: with the seed's data w is 0 and z - w has the bits of z + w.
    p = ballcl("bench", "-n", "100", "--init", "random", *QUICK, "--json", "--csv", str(csv),
               env=env, check=1)
    assert "validation failed: 7 rows" in p.stderr, p.stderr
    j = json.loads(p.stdout)
    rows = {r["name"]: r for r in j["rows"]}
    assert rows["reference"]["validated"] and rows["openmp"]["validated"]
    for name in ROWS[2:]:
        r = rows[name]
        assert r["validated"] is False, name
        assert r["us_per_step"] is None and r["ball_steps_per_s"] is None, r
        assert r["validation"]["mismatches"] > 0
    lines = csv.read_text().splitlines()
    assert all(line.split(",")[8] == "no" and line.split(",")[2] == ""
               for line in lines[3:]), lines
    p = ballcl("bench", "-n", "100", "--init", "random", *QUICK, env=env, check=1)
    assert p.stdout.count("FAILED") == 7
    assert "n/a (a row failed validation)" in p.stdout
    p = ballcl("tune", "-n", "100", "--init", "random", "-r", "1", "-s", "2", "--k", "2",
               env=env, check=1)
    assert "no launch configuration gave the C reference's bits" in p.stderr
    assert not (TMP / "cache" / "tuned").exists() or not any(
        (TMP / "cache" / "tuned").iterdir())


@test
def no_kernel_beats_the_add_bound():
    # The bound is measured between the repeats of the rows, so both see the
    # same load; the fused row (the best kernel: the default wide variant and
    # K) must not run faster than the device's add rate allows. 15% is room
    # for noise on a busy machine; a bound that is wrong (a probe with too few chains, spilled
    # registers, the wrong width) is off by far more. Each run has a fresh
    # chance, so only a bound that is low every time fails.
    seen = []
    for _ in range(3):
        p = ballcl("bench", "-n", "65536", "-r", "3", "--repeat-ms", "100", "--json", check=0)
        j = json.loads(p.stdout)
        fused = {r["name"]: r for r in j["rows"]}["fused"]
        # Against the best repeat of the bound: noise only ever slows a run.
        bound = j["add_rate"]["gflop_per_s"]["max"] * 1e9 / j["add_rate"]["ops_per_ball_step"]
        seen.append((fused["ball_steps_per_s"] / bound, j["add_rate"]))
        if fused["ball_steps_per_s"] <= 1.15 * bound:
            return
    raise AssertionError(f"the fused row ran above the add-rate bound in every run: {seen}")


@test
def add_bound_is_validated():
    # An add-rate kernel that adds twice per chain: its chains differ from
    # the host's adds, and bench says so instead of reporting a bound.
    broken = TMP / "broken-addrate"
    shutil.copytree(KERNELS, broken)
    src = (broken / "addrate.cl").read_text()
    new = src.replace("#define ADD(i)   a##i = a##i + d;", "#define ADD(i)   a##i = a##i + d + d;")
    assert new != src
    (broken / "addrate.cl").write_text(new)
    env = dict(ENV, BALLCL_KERNEL_DIR=str(broken))
    p = ballcl("bench", "-n", "100", *QUICK, env=env, check=1)
    assert "add-rate kernel" in p.stderr and "differ from the host's adds" in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1, p.stderr


@test
def bad_input():
    cases = [
        (["bench", "-n", "0"], "--balls"),
        (["bench", "-n", "10,,20"], "--balls"),
        (["bench", "-n", "abc"], "--balls"),
        (["bench", "-r", "0"], "--repeats"),
        (["bench", "--steps-per-launch", "0"], "--steps-per-launch"),
        (["bench", "--bogus"], "unknown option"),
        (["bench", "extra"], "unexpected argument"),
        (["bench", "--model", "nosuch"], "unknown model"),
        (["tune", "--k", "0"], "--k"),
        (["tune", "-n", "-5"], "--balls"),
        (["tune", "--repeat-ms", "x"], "--repeat-ms"),
        (["run", "--variant", "x999", "-n", "10"], "no variant 'x999'"),
        # More than any device or this host holds: refused before any work.
        (["bench", "-n", "100,4000000000"], "balls need"),
        (["tune", "-n", "4000000000"], "balls need"),
    ]
    for args, want in cases:
        p = ballcl(*args)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
        assert want in p.stderr and p.stderr.count("\n") == 1, (args, p.stderr)
        assert p.stdout == "", (args, p.stdout)
    # An unwritable CSV: exit 2, nothing written.
    p = ballcl("bench", "-n", "50", *QUICK, "--csv", str(TMP / "no" / "such" / "x.csv"))
    assert p.returncode == 2 and "x.csv" in p.stderr, p.stderr
    assert not (TMP / "no").exists()
    for cmd in ("bench", "tune"):
        p = ballcl(cmd, "--help", check=0)
        assert p.stdout.startswith(f"usage: ballcl {cmd}")


def main():
    if os.environ.get("BALLCL_FORCE_BALLS_PER_ITEM"):
        # The default variant and the tuned rules are what this test checks.
        print("skip: BALLCL_FORCE_BALLS_PER_ITEM overrides the variant rules this test checks")
        return 77
    if subprocess.run([BALLCL, "devices"], capture_output=True).returncode == 3:
        print("no OpenCL device: skipped")
        return 77
    run_all()
    shutil.rmtree(TMP, ignore_errors=True)
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
