"""Several devices: damaged tuned records and loose checks (docs/RELIABILITY.md
classes 6 and 7), on two PoCL devices (POCL_DEVICES="pthread pthread").

- A tuned entry whose time per step is not a positive finite number (1e-300,
  0, -1, missing), whose N is not positive, or whose rate is more than twice
  the device's bound, is damaged: one warning for the record (not one per
  device), the entry is not used, and the split calibrates instead. A sound
  record is still taken.
- `-d all,0:0` is refused in clear words ('all' stands alone).
- BALLCL_FAULT naming a device the run does not have aborts, naming it.
- The report of a run over several devices has a program line per device.
- Calibration times at most one queue window of launches, so what it does
  (and a fault injected into it) does not depend on the host's speed.

Skips (77) without two PoCL devices.
"""
import json
import os
import signal
import subprocess

import testlib
from testlib import check, run

testlib.require_device()
tmp = testlib.tempdir()
cache = os.path.join(tmp, "cache")
os.makedirs(cache)
TWO = dict(testlib.TWO_POCL, BALLCL_FAULT=None, BALLCL_CACHE_DIR=cache)
A, B = testlib.two_pocl_devices(TWO)
PAIR = f"{A},{B}"

# ---- 6: damaged tuned records -------------------------------------------------------------
r = run(["tune", "-d", PAIR, "-n", 4096, "-r", 1, "-s", 2, "--k", 2, "--json"], env=TWO,
        timeout=300)
paths = sorted({d.get("path") for d in r.json().get("devices", [])}) if r.rc == 0 else []
check(len(paths) == 1 and os.path.exists(paths[0]),
      "tune -d A,B: one tuned file for two devices of one make", r.describe()[-1500:])
path = paths[0] if paths else os.path.join(cache, "missing.json")
with open(path) as f:
    good = json.load(f)


def with_record(change):
    doc = json.loads(json.dumps(good))
    change(doc)
    with open(path, "w") as f:
        json.dump(doc, f)


def warnings(r):
    return [l for l in r.err_lines() if l.startswith("ballcl: warning")]


RUN = ["run", "-d", PAIR, "-n", 3001, "-s", 23, "--json"]
r = run(RUN, env=TWO)
j = r.json() if r.rc == 0 else {}
check([d.get("rate_how") for d in j.get("devices", [])] == ["tuned", "tuned"]
      and warnings(r) == [], "a sound tuned record is taken, no warning", r.describe()[-1500:])


def drop(entry, key):
    return lambda d: d[entry].pop(key)


def put(entry, key, value):
    return lambda d: d[entry].__setitem__(key, value)


cases = [
    ("fused us_per_step 1e-300 (the issue's case)", put("fused", "us_per_step", 1e-300)),
    ("fused us_per_step 0", put("fused", "us_per_step", 0)),
    ("fused us_per_step -1", put("fused", "us_per_step", -1)),
    ("fused us_per_step missing", drop("fused", "us_per_step")),
    ("fused us_per_step 1e-9 (beyond twice the device's bound)", put("fused", "us_per_step",
                                                                     1e-9)),
    ("balls 0", lambda d: d.__setitem__("balls", 0)),
    ("balls -1", lambda d: d.__setitem__("balls", -1)),
    ("balls missing", lambda d: d.pop("balls")),
]
for what, change in cases:
    with_record(change)
    r = run(RUN, env=TWO)
    j = r.json() if r.rc == 0 else {}
    hows = [d.get("rate_how") for d in j.get("devices", [])]
    w = warnings(r)
    check(r.rc == 0 and len(hows) == 2 and all(h.startswith("calibrated") for h in hows),
          f"tuned record with {what}: the run calibrates and succeeds", r.describe()[-1500:])
    check(len(w) == 1 and "damaged" in w[0] and path in w[0] and f"{A}, {B}" in w[0],
          f"tuned record with {what}: one warning naming the file and both devices",
          "\n".join(w))

# One device: the damaged entry is said once and not used.
with_record(put("fused", "us_per_step", 1e-300))
r = run(["run", "-d", A, "-n", 3001, "-s", 23, "--json"], env=TWO)
j = r.json() if r.rc == 0 else {}
check(r.rc == 0 and len(warnings(r)) == 1 and "damaged" in warnings(r)[0]
      and not j.get("launch", {}).get("steps_per_launch_how", "").startswith("tuned"),
      "one device, damaged fused entry: one warning, the tuned K not taken", r.describe()[-1500:])
with_record(lambda d: None)

# ---- 7: -d all inside a list ----------------------------------------------------------------
for sel in (f"all,{A}", f"{B},all"):
    r = run(["run", "-d", sel, "-n", 300, "-s", 1], env=TWO)
    check(r.rc == 2 and r.err_lines() == [
        f"ballcl: device selector list '{sel}': 'all' names every device and stands alone: "
        "expected -d all, or a list of selectors without it"],
          f"-d {sel}: refused in clear words", r.describe())
r = run(["run", "-n", 300, "-s", 1], env=dict(TWO, BALLCL_DEVICE=f"all,{A}"))
check(r.rc == 2 and "'all' names every device and stands alone" in r.err,
      "BALLCL_DEVICE=all,<sel>: refused the same way", r.describe())
r = run(["run", "-d", "all", "-n", 3001, "-s", 3, "--json"], env=TWO)
check(r.rc == 0 and len(r.json().get("devices", [])) >= 2, "-d all alone: every device",
      r.describe()[-800:])

# ---- 7: a fault naming a device the run does not have -------------------------------------
# testlib.run counts a signal as a crash; this abort is the documented end.
env = dict(os.environ, BALLCL_KERNEL_DIR=testlib.KERNEL_DIR)
env.update({k: v for k, v in TWO.items() if v is not None})
for k in [k for k, v in TWO.items() if v is None]:
    env.pop(k, None)
env["BALLCL_FAULT"] = "clFinish:1@2"
p = subprocess.run([testlib.BALLCL, "run", "-d", PAIR, "-n", "3000", "-s", "3"], env=env,
                   capture_output=True, text=True, timeout=120)
check(p.returncode in (-signal.SIGABRT, 128 + signal.SIGABRT)
      and "BALLCL_FAULT='clFinish:1@2': device 2 does not exist: the run has 2 devices" in p.stderr,
      "BALLCL_FAULT=clFinish:1@2 with two devices: aborts naming the missing device",
      f"exit {p.returncode}: {p.stderr[-600:]}")

# ---- 7: calibration does the same whatever the host's speed -------------------------------
# It used to time as many launches as fit in 30 ms, waiting on events only
# when there were more than two queue windows: a fault in clWaitForEvents of
# device 0 hit it on a fast moment and not on a slow one (exit 3 or 0 at
# random). Now it never waits on an event, so the same every time.
rcs = []
for _ in range(4):
    r = run(["run", "-d", PAIR, "-n", 3001, "-s", 2], env=dict(TWO, BALLCL_FAULT=
                                                              "clWaitForEvents:1@0"))
    rcs.append(r.rc)
check(rcs == [0, 0, 0, 0],
      "BALLCL_FAULT=clWaitForEvents:1@0 -n 3001 -s 2: the same outcome every run (the "
      "calibration waits on no event)", str(rcs))

# ---- 7: a program line per device -------------------------------------------------------------
r = run(["run", "-d", PAIR, "-n", 3001, "-s", 3], env=TWO)
lines = [l for l in r.out.splitlines() if l.startswith("  program   ")]
check(r.rc == 0 and len(lines) == 2 and all("first launch" in l for l in lines),
      "the several-devices report: a program line per device", r.out[-1500:])

testlib.finish()
