"""Several devices in one run (docs/DESIGN.md, "Several devices"), on PoCL:
POCL_DEVICES="pthread pthread" gives two devices (POCL_MAX_PTHREAD_COUNT=1:
one worker thread, which PoCL's pthread devices of one process share),
"basic pthread" two of different speed. The output of a run over two devices must be the very bytes of a
single-device run (cmp of the .npy), every shard validated; the faster
device gets more balls; a fault on one device ends the run with exit 3
naming it and no output file. Also -d all, BALLCL_DEVICE lists, bad lists,
a device left without balls, and PoCL beside rusticl when Mesa's llvmpipe
is there.

Skips (77) without PoCL."""

import filecmp
import os

import testlib
from testlib import check, expect_error, run

testlib.require_device()
tmp = testlib.tempdir()
TWO = testlib.TWO_POCL
A, B = testlib.two_pocl_devices(TWO)
PAIR = f"{A},{B}"


def out(name):
    return os.path.join(tmp, name)


def same_file(a, b):
    return os.path.exists(a) and os.path.exists(b) and filecmp.cmp(a, b, shallow=False)


# ---- bit for bit against one device, for each model and init ------------------------
for model, init, steps, split in [("seed", "random", 37, "30000,70003"),
                                  ("bounce", "random", 25, "64,99939"),
                                  ("bounce", "seed", 300, None)]:
    args = ["run", "--model", model, "--init", init, "--seed", 5, "-n", 100003, "-s", steps]
    one = out(f"one-{model}-{init}.npy")
    two = out(f"two-{model}-{init}.npy")
    r1 = run(args + ["-d", A, "--output", one], env=TWO)
    env = dict(TWO, BALLCL_TEST_SPLIT=split) if split else TWO
    r2 = run(args + ["-d", PAIR, "--output", two, "--json"], env=env)
    j = r2.json() if r2.rc == 0 else {}
    ds = j.get("devices", [])
    label = f"{model} --init {init}, split {split or 'by rate'}"
    check(r1.rc == 0 and r2.rc == 0 and same_file(one, two),
          f"{label}: two devices write the very bytes of one", r1.describe() + r2.describe())
    check(len(ds) == 2 and sum(d["balls"] for d in ds) == 100003
          and all(d["validation"] is None or d["validation"]["passed"] for d in ds)
          and j["validation"]["passed"] and j["validation"]["compared"] == 4 * 100003,
          f"{label}: two entries holding every ball, each shard validated", r2.out[-2000:])
    if split:
        check([d["balls"] for d in ds] == [int(c) for c in split.split(",")]
              and ds[1]["first_ball"] == ds[0]["balls"],
              f"{label}: contiguous shards as given", r2.out[-2000:])

# ---- --input / --output: one file in the original order ----------------------------
src = out("one-seed-random.npy")
r1 = run(["run", "-d", A, "--input", src, "-s", 11, "--output", out("in1.npy")], env=TWO)
r2 = run(["run", "-d", PAIR, "--input", src, "-s", 11, "--output", out("in2.npy")],
         env=dict(TWO, BALLCL_TEST_SPLIT="50000,50003"))
check(r1.rc == 0 and r2.rc == 0 and same_file(out("in1.npy"), out("in2.npy")),
      "--input over two devices gives the bytes of one", r1.describe() + r2.describe())

# ---- the report and JSON -------------------------------------------------------------
r = run(["run", "-d", PAIR, "-n", 50000, "-s", 20], env=dict(TWO, BALLCL_TEST_SPLIT="20000,30000"))
check(r.rc == 0 and r.out.count("  validation passed:") == 2
      and "aggregate " in r.out and "validation  passed: 200000 floats" in r.out,
      "the report gives each device's validation and the aggregate", r.describe())
r = run(["run", "-d", A, "-n", 300, "-s", 5, "--json"], env=TWO)
j = r.json() if r.rc == 0 else {}
check(len(j.get("devices", [])) == 1 and j["devices"][0]["balls"] == 300
      and j["devices"][0]["share"] == 1 and "launch" in j and "timing" in j,
      "run --json on one device: a devices array of one entry beside today's fields",
      r.out[-1500:])
r = run(["run", "-n", 300, "-s", 5, "--json"], env=dict(TWO, BALLCL_DEVICE=PAIR))
j = r.json() if r.rc == 0 else {}
check(len(j.get("devices", [])) == 2, "BALLCL_DEVICE takes a list as -d does", r.describe())
r = run(["devices", "--json"], env=TWO)
n_all = len(r.json()["devices"])
r = run(["run", "-d", "all", "-n", 300, "-s", 5, "--json"], env=TWO)
j = r.json() if r.rc == 0 else {}
check(len(j.get("devices", [])) == n_all, f"-d all runs on all {n_all} devices", r.describe())

# ---- a device without balls: its share would be under one block ---------------------
r = run(["run", "-d", PAIR, "-n", 16, "-s", 5, "--json"], env=TWO)
j = r.json() if r.rc == 0 else {}
ds = j.get("devices", [])
check(len(ds) == 2 and sorted(d["balls"] for d in ds) == [0, 16]
      and all(d["balls"] or d["excluded"].startswith("no balls") for d in ds),
      "16 balls (one block): one device takes them, the report says why the other has none",
      r.out[-2000:])

# ---- weighting: the faster device gets more ----------------------------------------
UNEQUAL = {"POCL_DEVICES": "basic pthread", "POCL_MAX_PTHREAD_COUNT": None,
           "BALLCL_DEVICE": None, "BALLCL_TEST_SPLIT": None}
r = run(["devices", "--json"], env=UNEQUAL)
ud = r.json()["devices"] if r.rc == 0 else []
basic = [d["selector"] for d in ud if d["name"].startswith("basic")]
pthr = [d["selector"] for d in ud if d["name"].startswith("pthread")]
cus = [d["compute_units"] for d in ud if d["name"].startswith("pthread")]
if basic and pthr and cus and cus[0] >= 2:
    r = run(["run", "-d", f"{basic[0]},{pthr[0]}", "-n", 1 << 20, "-s", 200, "--json"],
            env=UNEQUAL, timeout=300)
    j = r.json() if r.rc == 0 else {}
    ds = j.get("devices", [])
    # Which is faster depends on what else the machine runs while each is
    # calibrated alone; the rule does not: shares follow the measured rates.
    ok = (len(ds) == 2 and j["validation"]["passed"]
          and all(d["rate_how"].startswith("calibrated") and d["split_rate_ball_steps_per_s"] > 0
                  for d in ds))
    if ok:
        fast, slow = sorted(ds, key=lambda d: -d["split_rate_ball_steps_per_s"])
        total = fast["split_rate_ball_steps_per_s"] + slow["split_rate_ball_steps_per_s"]
        want = (1 << 20) * fast["split_rate_ball_steps_per_s"] / total
        # Shares come in whole blocks of the widest balls per work-item of
        # the devices (what the program reports: 32 with AVX2, 64 with
        # AVX-512), the balls past the last whole block to the last device:
        # a share is at most one block and that tail off the exact proportion.
        block = max([j["launch"]["balls_per_item"]]
                    + [d["launch"]["balls_per_item"] for d in ds if "launch" in d])
        tol = block + (1 << 20) % block
        ok = (fast["balls"] >= slow["balls"] and abs(fast["balls"] - want) <= tol) \
            or slow["balls"] == 0
    check(ok, f"basic (1 thread) beside pthread ({cus[0]} threads), each calibrated alone: "
          "the faster device gets more balls, in proportion to the rates", r.out[-2500:])
else:
    print("skipped: PoCL's pthread device has fewer than 2 compute units here")

# ---- a fault on device 1 ends the run: exit 3, naming it, no output ------------------
for fault in ["clEnqueueNDRangeKernel:2@1", "clEnqueueReadBuffer:1@1", "clCreateBuffer:1@1"]:
    path = out("fault.npy")
    r = expect_error(["run", "-d", PAIR, "-n", 50000, "-s", 300, "--output", path], 3,
                     f"device {B}", fault.split(":")[0],
                     env=dict(TWO, BALLCL_FAULT=fault, BALLCL_TEST_SPLIT="25000,25000"),
                     what=f"BALLCL_FAULT={fault}")
    check(not os.path.exists(path), f"BALLCL_FAULT={fault}: no output file", str(os.listdir(tmp)))
# The same fault aimed at device 0's calls only does not touch device 1.
r = run(["run", "-d", A, "-n", 300, "-s", 5], env=dict(TWO, BALLCL_FAULT="clFinish:1@1"))
check(r.rc == 0, "a fault aimed at device 1 leaves a run on one device alone", r.describe())

# ---- bench: each device alone, then all-devices with the efficiency -------------------
r = run(["bench", "-d", PAIR, "-n", 65536, "-r", 2, "--repeat-ms", 20, "--json"], env=TWO,
        timeout=300)
j = r.json() if r.rc == 0 else {}
rows = j.get("sweep", [{}])[0].get("rows", [])
names = [x["name"] for x in rows]
alld = rows[-1] if rows else {}
check(names == [f"{A} alone", f"{B} alone", "all-devices"] and alld.get("efficiency", 0) > 0
      and abs(alld["efficiency"] - alld["ball_steps_per_s"]
              / sum(x["ball_steps_per_s"] for x in rows[:-1])) < 1e-6
      and sum(x["balls"] for x in rows[:-1]) == 65536,
      "bench over two devices: a row per device alone and all-devices with its efficiency",
      r.out[-2500:] + r.err[-500:])

# ---- tune: each device in turn; a later run weighs them by the tuned rates -------------
cache = out("cache")
os.makedirs(cache, exist_ok=True)
TUNED = dict(TWO, BALLCL_CACHE_DIR=cache)
r = run(["tune", "-d", PAIR, "-n", 4096, "-r", 1, "-s", 2, "--k", 2, "--json"], env=TUNED,
        timeout=300)
j = r.json() if r.rc == 0 else {}
check(len(j.get("devices", [])) == 2 and all(d.get("path") for d in j["devices"]),
      "tune -d A,B tunes and stores both devices", r.describe()[-1500:])
r = run(["run", "-d", PAIR, "-n", 100000, "-s", 20, "--json"], env=TUNED)
j = r.json() if r.rc == 0 else {}
check([d.get("rate_how") for d in j.get("devices", [])] == ["tuned", "tuned"]
      and j["aggregate"]["calibrate_ms"] == 0,
      "with tuned records the split takes their rates and calibrates nothing", r.out[-2000:])

# ---- bad lists -------------------------------------------------------------------------
expect_error(["run", "-d", f"{A},", "-n", 300], 2, "an empty item", env=TWO)
expect_error(["run", "-d", f"{A},{A}", "-n", 300], 2, "a second time", env=TWO)
expect_error(["run", "-d", f"{A},9:9", "-n", 300], 2, "no device matches '9:9'", env=TWO)

# ---- across platforms: PoCL and Mesa's rusticl ----------------------------------------
MIXED = {"RUSTICL_ENABLE": "llvmpipe", "POCL_DEVICES": None, "BALLCL_DEVICE": None,
         "BALLCL_TEST_SPLIT": "40000,60003"}
r = run(["devices", "--json"], env=MIXED)
names = [d["platform"] for d in r.json()["devices"]] if r.rc == 0 else []
if "ASAN_OPTIONS" in os.environ:
    # The sanitizer suites leave rusticl out (tools/sanitize.sh says why):
    # there ASan's slow unwinder, which the leak suppressions need, and
    # rusticl's threads deadlock on libgcc's unwinder lock.
    print("skipped: PoCL beside rusticl under the sanitizers (the plain suite runs it)")
elif any("rusticl" in p for p in names) and any("Portable" in p for p in names):
    args = ["run", "--model", "bounce", "--init", "random", "--seed", 5, "-n", 100003, "-s", 25]
    r = run(args + ["-d", "pocl,rusticl", "--output", out("mixed.npy"), "--json"], env=MIXED,
            timeout=300)
    j = r.json() if r.rc == 0 else {}
    plats = {d["platform"] for d in j.get("devices", [])}
    check(r.rc == 0 and len(plats) == 2
          and same_file(out("mixed.npy"), out("two-bounce-random.npy")),
          "-d pocl,rusticl: two platforms, the bytes of one device", r.describe())
else:
    print("skipped: rusticl (RUSTICL_ENABLE=llvmpipe) is not there beside PoCL")

testlib.finish()
