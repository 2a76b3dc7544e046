"""What a new user meets first, checked: the default device and the device
facts of 'ballcl devices'; the rule by which 'run' takes a tuned
configuration (whole or not at all) and what '--local 1' runs; 'tune --show';
tuned files in 'cache list'; bench conclusions that follow from its numbers;
progress lines off a terminal; the probes' help; set-up through sudo; a
configure step without deprecation notices."""

import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testlib  # noqa: E402
from testlib import check  # noqa: E402

testlib.skip_when_variant_forced("the tuned-configuration rule and '--local 1'")
tmp = testlib.tempdir()
BUILD = os.path.dirname(os.path.dirname(testlib.BALLCL))


# ---- set-up and build, no device needed --------------------------------------------
def setup_through_sudo():
    """tools/setup.sh as a user with sudo: sudo resets the environment, so
    DEBIAN_FRONTEND must be set on sudo's side of the command."""
    fake = os.path.join(tmp, "fakebin")
    os.makedirs(fake)
    log = os.path.join(tmp, "apt.log")
    scripts = {
        "id": "#!/bin/sh\n[ \"$1\" = -u ] && echo 1000 && exit 0\nexec /usr/bin/id \"$@\"\n",
        "dpkg-query": "#!/bin/sh\nexit 1\n",
        # What sudo does by default: a fresh environment (env_reset).
        "sudo": "#!/bin/sh\nexec env -i PATH=\"$PATH\" \"$@\"\n",
        "apt-get": f"#!/bin/sh\necho \"$1 DEBIAN_FRONTEND=${{DEBIAN_FRONTEND:-unset}}\" >>{log}\n"
                   "echo \"apt-get $1: a line of package noise\"\n"
                   "[ \"$1\" = update ] && exit 0\nexit 42\n",
    }
    for name, text in scripts.items():
        path = os.path.join(fake, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
    env = dict(os.environ, PATH=fake + ":" + os.environ["PATH"])
    env.pop("DEBIAN_FRONTEND", None)
    p = subprocess.run(["sh", os.path.join(testlib.SOURCE_ROOT, "tools", "setup.sh"), "run"],
                       env=env, capture_output=True, text=True, timeout=60)
    lines = open(log).read().splitlines() if os.path.exists(log) else []
    check(p.returncode != 0 and lines == ["update DEBIAN_FRONTEND=noninteractive",
                                          "install DEBIAN_FRONTEND=noninteractive"],
          "setup.sh through sudo: apt-get sees DEBIAN_FRONTEND=noninteractive",
          f"exit {p.returncode}, apt-get saw {lines}, stderr {p.stderr[-300:]}")
    # Its output goes to the log; the terminal gets a line per stage.
    apt_log = os.path.join(testlib.SOURCE_ROOT, "build-setup", "apt.log")
    logged = open(apt_log).read() if os.path.exists(apt_log) else ""
    check("apt-get update: a line of package noise" in logged
          and "apt-get update: a line of package noise" not in p.stdout
          and "setup: installing" in p.stdout and "takes minutes" in p.stdout
          and "installing packages failed" in p.stderr,
          "setup.sh: apt-get's output in build-setup/apt.log, one line per stage, the failure "
          "said with the log's last lines", f"stdout {p.stdout[-300:]!r}, stderr {p.stderr[-300:]!r}")


setup_through_sudo()

mlog = os.path.join(BUILD, "meson-logs", "meson-log.txt")
if os.path.exists(mlog):
    text = open(mlog, errors="replace").read()
    check("deprecated" not in text.lower(), "meson configures without deprecation notices",
          "\n".join(l for l in text.splitlines() if "deprecat" in l.lower())[:400])

for probe, want in (("ballcl-clprobe", "usage: ballcl-clprobe [DEVICE [BIG-N]]"),
                    ("ballcl-addpeak", "usage: ballcl-addpeak [SECONDS]")):
    exe = os.path.join(BUILD, "tools", "probe", probe)
    if not os.path.exists(exe):
        continue
    p = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0 and p.stdout.startswith(want) and p.stderr == "",
          f"{probe} --help: its usage on stdout, exit 0", p.stdout[:200] + p.stderr[:200])
    bad = ["--bogus"] if probe == "ballcl-clprobe" else ["x"]
    p = subprocess.run([exe, *bad], capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and want in p.stderr, f"{probe} {bad[0]}: usage error, exit 2",
          p.stderr[:300])
exe = os.path.join(BUILD, "tools", "probe", "ballcl-clprobe")
if os.path.exists(exe):
    p = subprocess.run([exe, "cpu", "12x"], capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and "BIG-N '12x'" in p.stderr, "clprobe: a bad BIG-N is refused",
          p.stderr)

# ---- devices -------------------------------------------------------------------------
dev = testlib.require_device()
r = testlib.run(["devices"], env={"BALLCL_DEVICE": None})
rows = [l for l in r.out.splitlines() if re.match(r"^[ *] \d+:\d+ ", l)]
marked = [l for l in rows if l.startswith("*")]
check(r.rc == 0 and len(marked) == 1 and "* the default device:" in r.out,
      "devices: the default device is marked, once, and the mark explained", r.out)
r = testlib.run(["devices", "--json"], env={"BALLCL_DEVICE": None})
devs = r.json()["devices"]
check(sum(d["default"] is True for d in devs) == 1
      and marked and marked[0].split()[1] == next(d["selector"] for d in devs if d["default"]),
      "devices --json: 'default' is true for the marked device only", json.dumps(devs)[:300])
ok = all(isinstance(d["clock_mhz"], int) and isinstance(d["local_mem_bytes"], int)
         and d["local_mem_bytes"] > 0
         and (d["preferred_multiple"] is None or d["preferred_multiple"] >= 1)
         and len(d["max_work_item_sizes"]) == 3
         and all(isinstance(x, int) and x > 0 for x in d["max_work_item_sizes"])
         and isinstance(d["native_vector_width_float"], int)
         and isinstance(d["extensions"], list) and d["extensions"]
         and all(x.startswith("cl_") and " " not in x for x in d["extensions"])
         for d in devs)
check(ok, "devices --json: clock, local memory, preferred multiple, work-item sizes, native "
      "float width and the extensions as a list", json.dumps(devs)[:600])
r = testlib.run(["devices", "-v"], env={"BALLCL_DEVICE": None})
d0 = devs[0]
check(r.rc == 0 and all(k in r.out for k in (
      "clock", "local memory", "max work-item sizes", "preferred multiple",
      "native float vector", f"extensions ({len(d0['extensions'])})", d0["extensions"][0],
      d0["name"], d0["platform"])),
      "devices -v: every property, names whole, the extensions counted and listed", r.out[:800])
r = testlib.run(["devices", "--json"], env={"BALLCL_DEVICE": devs[-1]["selector"]})
check([d["default"] for d in r.json()["devices"]] == [False] * (len(devs) - 1) + [True],
      "devices: $BALLCL_DEVICE moves the default, as it does for a run", r.out[:200])
r = testlib.run(["devices"], env={"BALLCL_DEVICE": "no-such-device-xyz"})
check(r.rc == 0 and not any(l.startswith("*") for l in r.out.splitlines())
      and "BALLCL_DEVICE" in r.err and "no device matches" in r.err,
      "devices: a $BALLCL_DEVICE that selects nothing marks nothing and says why", r.describe())

# ---- run: one launch, --local 1, --snapshot --------------------------------------------
cache = os.path.join(tmp, "cache")
env = {"BALLCL_CACHE_DIR": cache}
r = testlib.run(["run", "-d", dev, "-n", "1000", "-s", "1"], env=env)
check(r.rc == 0 and "(1 per launch: default rule; 1 launch, sync at end)" in r.out,
      "run -s 1: '1 launch', not '1 launches'", r.out)
r = testlib.run(["run", "-d", dev, "-n", "1000", "-s", "20", "--local", "1", "--json"], env=env)
j = r.json()
check(r.rc == 0 and j["launch"]["steps_per_launch"] == 1 and j["launch"]["variant"] == ""
      and j["launch"]["local"] == 1 and j["timing"]["device_ms"] > 0
      and "--local 1" in j["launch"]["steps_per_launch_how"],
      "run --local 1: the seed's launch, single steps of the base kernel", json.dumps(j)[:400])
r = testlib.run(["run", "-d", dev, "-n", "1000", "-s", "20", "--local", "1",
                 "--steps-per-launch", "10"], env=env)
check(r.rc == 0 and "10 per launch: given" in r.out and "local 1," in r.out,
      "run --local 1 --steps-per-launch 10: K as given, with local 1", r.out)
snap = os.path.join(tmp, "x.jpg")
r = testlib.expect_error(["run", "-d", dev, "-n", "100", "-s", "1", "--snapshot", snap], 2,
                         "--snapshot", "x.jpg", ".png", env=env)
check(not os.path.exists(snap), "--snapshot x.jpg: refused, nothing written")

# ---- tune, tune --show, cache list ------------------------------------------------------
r = testlib.expect_error(["tune", "-d", dev, "--show"], 2, "nothing is tuned", "ballcl tune -d",
                         env=env)
r = testlib.run(["tune", "-d", dev, "-n", "4096", "-r", "1", "--repeat-ms", "1", "--k", "4"],
                env={**env, "BALLCL_PROGRESS_SECONDS": "0"}, timeout=300)
prog = r.err_lines()
check(r.rc == 0 and len(prog) > 5 and all(re.match(r"tune: \[\d+/\d+\] ", l) for l in prog)
      and "\r" not in r.err,
      "tune, stderr not a terminal: whole progress lines (BALLCL_PROGRESS_SECONDS=0: each one)",
      r.err[:300])
r2 = testlib.run(["run", "-d", dev, "-n", "1000", "-s", "5"],
                 env={**env, "BALLCL_PROGRESS_SECONDS": None})
check(r2.rc == 0 and r2.err == "", "a short run prints no progress", r2.describe())
# A run of a few seconds (K fixed: not the tuned record): off a terminal
# too, a line at most every 2 s once 2 s of steps have passed (without
# BALLCL_PROGRESS_SECONDS, which tests set high), none with -q.
long_run = ["run", "-d", dev, "-n", "100000", "-s", "500000", "--no-validate",
            "--steps-per-launch", "2000"]
t0 = time.monotonic()
r2 = testlib.run(long_run, env={**env, "BALLCL_PROGRESS_SECONDS": None}, timeout=300)
took = time.monotonic() - t0
done = [int(m.group(1)) for m in (re.fullmatch(r"run: step (\d+) of 500000 \(\d+%\)", l)
                                  for l in r2.err_lines()) if m]
check(r2.rc == 0 and (done or took < 4) and len(done) == len(r2.err_lines())
      and done == sorted(done) and len(done) <= took / 2 and "\r" not in r2.err,
      "run: a progress line every 2 s off a terminal, steps increasing", r2.describe())
r2 = testlib.run(long_run + ["-q"], env={**env, "BALLCL_PROGRESS_SECONDS": "0"}, timeout=300)
check(r2.rc == 0 and r2.err == "", "run -q: no progress", r2.describe())
# The C reference's validation (the silent part of a long run on a GPU)
# reports too: 'validating: step N of S', at most one line per 2 s.
t0 = time.monotonic()
r2 = testlib.run(["run", "-d", dev, "-n", "100000", "-s", "30000"],
                 env={**env, "BALLCL_PROGRESS_SECONDS": None}, timeout=300)
took = time.monotonic() - t0
val = [int(m.group(1)) for m in (re.fullmatch(r"run: validating: step (\d+) of 30000 \(\d+%\)",
                                               l) for l in r2.err_lines()) if m]
check(r2.rc == 0 and (val or took < 4) and val == sorted(val) and len(r2.err_lines()) <= took / 2,
      "run: progress lines through the validation", r2.describe())
path = re.search(r"stored in (\S+)", r.out).group(1)
rec = json.load(open(path))
check(rec["fused"] is not None and rec["single"] is not None, "tune stored both entries",
      json.dumps(rec)[:300])
# Make the stored winners ones no rule would pick, so a run shows where each
# part of its configuration came from.
variants = sorted({c["variant"] for c in rec["candidates"] if c["steps_per_launch"] > 1})
rec["fused"].update(variant=variants[-1], local=16, steps_per_launch=7,
                    kernel="seed_steps" + ("_" + variants[-1] if variants[-1] else ""))
rec["single"].update(variant="", local="driver", kernel="seed_step")
with open(path, "w") as f:
    json.dump(rec, f)
r = testlib.run(["tune", "-d", dev, "--show"], env=env)
check(r.rc == 0 and path in r.out and "k-step" in r.out
      and f"{variants[-1] or 'base'}, local 16, K 7" in r.out and "local driver, K 1" in r.out,
      "tune --show: the stored record, without measuring", r.out)
r = testlib.run(["tune", "-d", dev, "--show", "--json"], env=env)
sj = r.json()
check(r.rc == 0 and sj["path"] == path and sj["fused"]["steps_per_launch"] == 7
      and len(sj["candidates"]) == len(rec["candidates"]),
      "tune --show --json: the stored file, with its path", r.out[:300])
testlib.expect_error(["tune", "-d", dev, "--show", "-r", "3"], 2, "--show", "--repeats", env=env)
r = testlib.run(["cache", "list"], env=env)
check(r.rc == 0 and "TUNED" in r.out and "seed" in r.out and "local 16, K 7" in r.out
      and "1 tuned configuration" in r.out, "cache list shows the tuned file", r.out)
r = testlib.run(["cache", "list", "--json"], env=env)
t = r.json()["tuned"]
check(len(t) == 1 and t[0]["model"] == "seed" and t[0]["valid"] is True
      and t[0]["fused"]["steps_per_launch"] == 7 and t[0]["single"]["local"] == "driver",
      "cache list --json: the tuned files", json.dumps(t)[:300])

# ---- run takes the tuned configuration whole, or not at all ------------------------------
r = testlib.run(["run", "-d", dev, "-n", "4096", "-s", "50", "--json"], env=env)
j = r.json()
check(r.rc == 0 and j["launch"]["steps_per_launch"] == 7 and j["launch"]["steps_per_launch_how"] == "tuned"
      and j["launch"]["variant"] == variants[-1] and j["launch"]["local"] == 16
      and j["launch"]["how"] == "tuned" and j["tuned"]["used"] is True,
      "a plain run: K, variant and local size all from the tuned record", json.dumps(j)[:500])
r = testlib.run(["run", "-d", dev, "-n", "4096", "-s", "50"], env=env)
check("tuned       used: K, variant and local size" in r.out, "the report says the record was used",
      r.out)
for extra, what in ((["--local", "driver"], "--local"), (["--steps-per-launch", "20"],
                    "--steps-per-launch"), (["--variant", "base"], "--variant")):
    r = testlib.run(["run", "-d", dev, "-n", "4096", "-s", "50", "--json", *extra], env=env)
    j = r.json()
    check(r.rc == 0 and j["tuned"]["used"] is False and what in j["tuned"]["note"]
          and j["launch"]["how"] != "tuned" and j["launch"]["steps_per_launch_how"] != "tuned"
          and not (j["launch"]["steps_per_launch"] == 7 or (j["launch"]["local"] == 16
                                                  and j["launch"]["variant"] == variants[-1])),
          f"run {' '.join(extra)}: nothing from the tuned record", json.dumps(j)[:500])
r = testlib.run(["run", "-d", dev, "-n", "4096", "-s", "50", "--sync", "every", "--json"],
                env=env)
j = r.json()
check(r.rc == 0 and j["launch"]["steps_per_launch"] == 1 and j["launch"]["how"] == "tuned"
      and j["launch"]["local"] == 0 and j["launch"]["variant"] == "",
      "run --sync every: the tuned one-step entry whole", json.dumps(j)[:500])
r = testlib.run(["run", "--help"])
check("taken together, never mixed" in r.out and "--local 1 without" in r.out,
      "run --help states the rule", r.out[-1200:])

# ---- bench: conclusions that follow from the numbers -------------------------------------
r = testlib.run(["bench", "-d", dev, "-n", "4096", "-r", "3", "--repeat-ms", "5", "--json"],
                env=env, timeout=300)
b = r.json()
check(r.rc == 0, "bench --json", r.describe())
rows = {x["name"]: x for x in b["rows"]}
ok = True
for c in b["conclusions"]:
    a_, b_ = rows[c["row"]], rows[c["against"]]
    x, y = a_["us_per_step"], b_["us_per_step"]
    same = a_["config"] == b_["config"] or (
        a_["config"].get("where") == "device" and b_["config"].get("where") == "device"
        and all(a_["config"][k] == b_["config"][k]
                for k in ("variant", "local", "steps_per_launch", "sync"))
        and a_["clock"] == b_["clock"])
    want = ("same configuration" if same else
            "within noise" if x["min"] <= y["max"] and y["min"] <= x["max"] else "different")
    ok = ok and c["verdict"] == want
check(ok and len(b["conclusions"]) == 5,
      "bench: each conclusion's verdict follows from the rows (same configuration, ranges "
      "overlapping, or different)", json.dumps(b["conclusions"]))
tuned_vs_driver = next(c for c in b["conclusions"]
                       if c["row"] == "local=driver" and c["against"] == "local=tuned")
check(tuned_vs_driver["verdict"] == "same configuration",
      "bench: local=tuned stored as the driver's choice is the same configuration as "
      "local=driver", json.dumps(tuned_vs_driver))
r = testlib.run(["bench", "-d", dev, "-n", "4096", "-r", "3", "--repeat-ms", "5"], env=env,
                timeout=300)
check(r.rc == 0 and "local=tuned is the driver's choice too (the same configuration" in r.out
      and "1.00x the time of local=tuned" not in r.out,
      "bench table: no ratio for two rows of one configuration", r.out[-900:])

testlib.finish()
