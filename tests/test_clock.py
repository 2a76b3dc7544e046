#!/usr/bin/env python3
"""No physically impossible figure from run, bench, tune or survey, whatever
the implementation's profiling clock does (docs/BENCHMARK.md, "Clocks").

On the device under test (BALLCL_TEST_DEVICE; tests/with_impl.py runs this
on rusticl, whose profiling timestamps are 0, 1, 2, 3 ns for every event),
every time figure of every command's JSON must be one the hardware can
have taken:

  * a per-step time is positive and not shorter than the host saw for the
    same work allows (device time <= host time, with the check's slack);
  * no launch takes under 10 ns (BCL_CLOCK_MIN_LAUNCH_NS);
  * no bandwidth above 10000 GB/s (the survey's plausibility limit, itself
    twice the fastest memory of 2026), no survey flag;
  * the clock is named: "device", or "host" with the reason, and then every
    device figure of that output is the host's.

Then the same with BALLCL_TEST_PROFILING=unusable, which marks every device's
profiling as failed: the host clock's figures, said so, on any
implementation (PoCL in the default suite and under the sanitizers).
Exit 77 (skipped) without an OpenCL device.
"""
import json
import os

import testlib
from testlib import check

MIN_LAUNCH_US = 0.01
MAX_GB_PER_S = 10000.0
SLACK = 1.02

dev = testlib.require_device()
tmp = testlib.tempdir()
cache = os.path.join(tmp, "cache")


def ballcl_json(args, env=None, timeout=600):
    r = testlib.run(args + ["--json"], env={"BALLCL_CACHE_DIR": cache, **(env or {})},
                    timeout=timeout)
    if not check(r.rc == 0, f"ballcl {' '.join(args)} --json: exit 0", r.describe()):
        return None
    return r.json()


def check_clock(what, clock, note, forced):
    if forced:
        check(clock == "host" and note and "BALLCL_TEST_PROFILING" in note,
              f"{what}: host clock with the reason", f"{clock} {note}")
    else:
        check(clock in ("device", "host") and (clock == "host") == bool(note),
              f"{what}: clock {clock}, a note exactly when host ({note})")


def check_run(forced, env):
    n, steps = 20000, 200
    for k in ("1", "100"):
        j = ballcl_json(["run", "-d", dev, "-n", str(n), "-s", str(steps), "--steps-per-launch", k],
                        env)
        if not j:
            continue
        t = j["timing"]
        what = f"run K={k}"
        check_clock(what, t["clock"], t["clock_note"], forced)
        launches = steps // int(k)
        us, wall = t["us_per_step"], t["wall_us_per_step"]
        check(j["validation"]["passed"], f"{what}: validated")
        check(0 < us <= wall * SLACK + 5.0 / steps,
              f"{what}: {us:.4g} us/step, not above the host's {wall:.4g}")
        check(us * steps / launches >= MIN_LAUNCH_US,
              f"{what}: {us * steps / launches:.4g} us per launch, at least {MIN_LAUNCH_US}")
        check(t["gb_per_s"] <= MAX_GB_PER_S, f"{what}: {t['gb_per_s']:.4g} GB/s effective")
        check(n * 32 * launches / (us * steps * 1e3) <= MAX_GB_PER_S,
              f"{what}: the state moves at most {MAX_GB_PER_S} GB/s")
        if t["clock"] == "host":
            check(us == wall, f"{what}: the host clock's figure is the wall time")


def check_bench(forced, env):
    j = ballcl_json(["bench", "-d", dev, "-n", "3001", "-r", "2", "-s", "8"], env)
    if not j:
        return
    if forced:
        check_clock("bench copy", j["copy"]["clock"], j["clock_note"], forced)
    else:  # measured first: the host's only once the check has failed
        check(j["copy"]["clock"] == "device" or j["clock_note"],
              f"bench copy: clock {j['copy']['clock']}, note {j['clock_note']}")
    check(0 < j["copy_gb_per_s"] <= MAX_GB_PER_S, f"bench: copy {j['copy_gb_per_s']:.4g} GB/s")
    for r in j["rows"]:
        what = f"bench {r['name']}"
        check(r["validated"], f"{what}: validated")
        us = r["us_per_step"]["min"]
        per_launch = us * r["steps_per_repeat"] / max(r["launches_per_repeat"], 1)
        check(us > 0 and r["gb_per_s"] <= MAX_GB_PER_S,
              f"{what}: {us:.4g} us/step (min), {r['gb_per_s']:.4g} GB/s")
        if r["config"]["where"] == "device":
            check(per_launch >= MIN_LAUNCH_US, f"{what}: {per_launch:.4g} us per launch")
            if forced or j["clock_note"]:
                check(r["clock"] == "host" and r["device_us_per_step"] is None,
                      f"{what}: the host clock, no device figure")
            if r["clock"] == "device":
                check(r["us_per_step"]["median"] <= r["wall_us_per_step"]["median"] * SLACK + 5,
                      f"{what}: device time not above the host's")


def check_tune(forced, env):
    r = testlib.run(["tune", "-d", dev, "-n", "2001", "-r", "1", "-s", "4", "--k", "3", "--json"],
                    env={"BALLCL_CACHE_DIR": cache, **env}, timeout=600)
    if not check(r.rc == 0, "tune --json: exit 0", r.describe()):
        return
    t = r.json()
    check_clock("tune", t["clock"], t["clock_note"], forced)
    for c in t["candidates"]:
        what = f"tune {c['kernel']} local {c['local']} K {c['steps_per_launch']}"
        us = c["us_per_step"]["min"]
        check(c["validated"] and us * c["steps_per_launch"] >= MIN_LAUNCH_US
              and c["clock"] == t["clock"],
              f"{what}: {us:.4g} us/step, {us * c['steps_per_launch']:.4g} us per launch, "
              f"clock {c['clock']}")


def check_survey(env):
    out = os.path.join(tmp, "survey.json")
    r = testlib.run(["survey", "-d", dev, "--quick", "--json", out],
                    env={"BALLCL_CACHE_DIR": cache, **env}, timeout=600)
    check(r.rc == 0, "survey --quick: exit 0", r.describe())
    if not os.path.exists(out):
        return
    d = json.load(open(out))["devices"][0]
    m = d["measured"]
    check(d["flags"] == [], "survey: no figure above a plausible peak", json.dumps(d["flags"]))
    usable = d["profiling_usable"]
    check((d["profiling_note"] is None) == usable, f"survey: profiling usable: {usable}, "
          f"why not: {d['profiling_note']}")
    check((m["launch_latency_us"] is None) == (not usable),
          f"survey: launch latency {m['launch_latency_us']} (profiling usable: {usable})")
    check(m["copy_gb_per_s"] is not None and 0 < m["copy_gb_per_s"] <= MAX_GB_PER_S,
          f"survey: copy {m['copy_gb_per_s']} GB/s")
    for name, mm in {m["model"]: m, **m["models"]}.items():
        for size in ("small", "large"):
            f = mm[size]
            check(f["validated"] and f["us_per_step"] >= MIN_LAUNCH_US
                  and f["gb_per_s"] <= MAX_GB_PER_S,
                  f"survey {name} {size}: {f['us_per_step']} us/step, {f['gb_per_s']} GB/s")
        fu = mm["fused"]
        check(fu["validated"] and fu["us_per_step"] * fu["k"] >= MIN_LAUNCH_US,
              f"survey {name} fused: {fu['us_per_step']} us/step at K {fu['k']}")


for forced in (False, True):
    env = {"BALLCL_TEST_PROFILING": "unusable" if forced else None}
    print(f"-- profiling {'forced unusable' if forced else 'as the implementation gives it'}")
    check_run(forced, env)
    check_bench(forced, env)
    check_tune(forced, env)
    if not forced:
        check_survey(env)
testlib.finish()
