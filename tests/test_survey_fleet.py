"""The survey at fleet scale (docs/SURVEY.md, "A fleet" and "The node health
check"): a fleet of 1000 surveys of one device model on 1000 hosts, made
here from a committed survey (figures varied by up to 10%, never
committed), imported as a folder; 'survey import -' (stdin); --json of
import, list, compare and check parsed as JSON; the summary lines of import
and report; 'survey check' exiting 0 on a survey like its fleet's, 1 naming
copy_gb_per_s and add_gflop_per_s when those fell by half, 2 with one line
when nothing compares, and leaving a read-only database unchanged; a new
survey carrying its host (and none with --label ''), a --quick survey
not recorded without --db, and, of a PoCL device, every CL_DEVICE_* key that
`clinfo --raw` prints for it in the survey's "clinfo" object.

Environment (from tests/meson.build): BALLCL, BALLCL_SURVEY_DB.
"""
import copy
import json
import os
import random
import re
import shutil
import sqlite3
import stat
import subprocess
import time

import testlib
from fleetlib import host_fleet
from testlib import check

ROOT = testlib.SOURCE_ROOT
BASE = json.load(open(os.path.join(ROOT, "docs", "surveys", "pocl-amd-epyc.json")))
tmp = testlib.tempdir()
db = os.path.join(tmp, "fleet.db")
rng = random.Random(36)


folder = os.path.join(tmp, "fleet")
os.mkdir(folder)
host_fleet(BASE, folder, rng)

t0 = time.monotonic()
r = testlib.run(["survey", "import", "--db", db, "--json", folder], timeout=300)
took = time.monotonic() - t0
j = json.loads(r.out) if r.rc == 0 else {}
check(r.rc == 0 and j.get("added") == 1000 and j.get("refused") == 0
      and len(j.get("files", [])) == 1000,
      "import DIR --json: 1000 surveys added, valid JSON", r.describe()[:400])
print(f"note: 1000 surveys imported in {took:.1f} s")
con = sqlite3.connect(db)
ndev = con.execute("SELECT count(*) FROM devices").fetchone()[0]
con.close()
check(ndev == 1000, "1000 hosts of one device model: 1000 devices, kept apart by host", str(ndev))

# stdin, and the summary line.
p = subprocess.run([os.environ["BALLCL"], "survey", "import", "--db", db, "-"],
                   stdin=open(os.path.join(ROOT, "docs", "surveys", "h200.json")),
                   capture_output=True, text=True, timeout=60)
lines = p.stdout.splitlines()
check(p.returncode == 0 and lines[0].startswith("-: added as survey")
      and lines[-1].startswith("import: 1 added, 0 already there, 0 refused"),
      "import -: the document read from stdin, then a summary line", p.stdout + p.stderr)
p = subprocess.run([os.environ["BALLCL"], "survey", "import", "--db", db, "-"],
                   input="{not json", capture_output=True, text=True, timeout=60)
check(p.returncode == 2 and "'-'" in p.stderr and "1 refused" in p.stdout,
      "import - of bad JSON: refused, named '-'", p.stdout + p.stderr)

r = testlib.run(["survey", "list", "--db", db, "--json"], timeout=120)
j = json.loads(r.out) if r.rc == 0 else {}
check(r.rc == 0 and len(j.get("devices", [])) == 1001 and len(j.get("surveys", [])) == 1001,
      "list --json: valid JSON with every device and survey", r.describe()[:300])

r = testlib.run(["survey", "compare", "--json", os.path.join(ROOT, "docs", "surveys", "h200.json"),
                 os.path.join(ROOT, "docs", "surveys", "pocl-amd-epyc.json")])
j = json.loads(r.out) if r.rc == 0 else {}
check(r.rc == 0 and [d["file"] for d in j.get("devices", [])] == ["h200.json", "pocl-amd-epyc.json"],
      "compare --json: every device with its file", r.describe()[:300])

# ---- survey check ---------------------------------------------------------------------------
os.chmod(db, stat.S_IRUSR)
before = open(db, "rb").read()
like = copy.deepcopy(BASE)
like["devices"][0]["identity"]["host"] = "node-new"
like_path = os.path.join(tmp, "like.json")
json.dump(like, open(like_path, "w"))
t0 = time.monotonic()
r = testlib.run(["survey", "check", "--db", db, like_path], timeout=60)
took = time.monotonic() - t0
check(r.rc == 0 and "0 worse than the fleet" in r.out,
      "check: exit 0 on a survey like its fleet's", r.describe())
check(took < 30, f"check ends within 30 s ({took:.1f} s)")
half = copy.deepcopy(like)
m = half["devices"][0]["measured"]
m["copy_gb_per_s"] /= 2
m["add_gflop_per_s"] /= 2
half_path = os.path.join(tmp, "half.json")
json.dump(half, open(half_path, "w"))
r = testlib.run(["survey", "check", "--db", db, half_path], timeout=60)
named = [ln.split(": ")[2].split()[0] for ln in r.out.splitlines() if " is below " in ln
         or " is above " in ln]
check(r.rc == 1 and sorted(named) == ["add_gflop_per_s", "copy_gb_per_s"],
      "check: exit 1 naming copy_gb_per_s and add_gflop_per_s, halved", r.describe())
r = testlib.run(["survey", "check", "--db", db, "--json", half_path], timeout=60)
j = json.loads(r.out) if r.out.strip() else {}
check(r.rc == 1 and j.get("verdict") == "worse" and j.get("worse") == 2
      and all(f["surveys"] == 1000 for f in j["figures"] if f["figure"] == "copy_gb_per_s"),
      "check --json: valid JSON, the two figures worse, against 1000 surveys", r.describe()[:300])
quick = copy.deepcopy(like)
quick["quick"] = True
quick_path = os.path.join(tmp, "quick.json")
json.dump(quick, open(quick_path, "w"))
r = testlib.run(["survey", "check", "--db", db, quick_path], timeout=60)
lines = r.err_lines()
check(r.rc == 2 and len(lines) == 1 and "nothing to compare" in lines[0],
      "check: a quick survey against a fleet of full ones: exit 2, one line", r.describe())
check(open(db, "rb").read() == before, "check: the read-only database left unchanged")
os.chmod(db, stat.S_IRUSR | stat.S_IWUSR)

# ---- a new survey carries its host; --quick is recorded only with --db ------------------


def clinfo_keys(dev):
    """Of a PoCL device: every CL_DEVICE_* key `clinfo --raw` prints for it
    is in the survey's "clinfo" object under that name (values in ballcl's
    own format: not compared)."""
    ident = dev.get("identity", {})
    if "PoCL" not in ident.get("opencl_version", "") or not shutil.which("clinfo"):
        print("note: the surveyed device is no PoCL one, or clinfo is missing: the clinfo "
              "keys are not checked here")
        return
    raw = subprocess.run(["clinfo", "--raw"], capture_output=True, text=True, timeout=120).stdout
    by_tag = {}  # "[POCL/0]" -> {key: value}
    for line in raw.splitlines():
        m = re.match(r"\s*(\[[^\]]+\])\s+(CL_\w+)\s*(.*)$", line)
        if m:
            by_tag.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
    tags = [t for t, keys in by_tag.items() if keys.get("CL_DEVICE_NAME") == ident.get("name")
            and "PoCL" in keys.get("CL_DEVICE_VERSION", "")]
    if not check(len(tags) >= 1, "clinfo --raw lists the surveyed PoCL device",
                 str(list(by_tag))[:300]):
        return
    want = sorted(k for k in by_tag[tags[0]] if k.startswith("CL_DEVICE_"))
    have = dev.get("clinfo", {})
    missing = [k for k in want if k not in have]
    check(len(want) > 50 and not missing,
          f"the survey holds every one of the {len(want)} CL_DEVICE_* keys clinfo --raw prints "
          f"for {tags[0]}", str(missing))
    check(have.get("CL_DEVICE_NAME") == ident.get("name")
          and have.get("CL_DEVICE_EXTENSIONS", "").split() == by_tag[tags[0]].get(
              "CL_DEVICE_EXTENSIONS", "").split(),
          "clinfo keys: the name, and the extension list whole, as clinfo has them",
          str(have.get("CL_DEVICE_EXTENSIONS"))[:200])


listed = testlib.run(["devices", "--json"])
if listed.rc == 0 and listed.json().get("devices"):
    out = os.path.join(tmp, "mine.json")
    default_db = os.environ["BALLCL_SURVEY_DB"]
    n0 = os.path.exists(default_db) and sqlite3.connect(default_db).execute(
        "SELECT count(*) FROM surveys").fetchone()[0]
    r = testlib.run(["survey", "--quick", "-d", "cpu", "--json", out], timeout=600)
    n1 = os.path.exists(default_db) and sqlite3.connect(default_db).execute(
        "SELECT count(*) FROM surveys").fetchone()[0]
    check(r.rc in (0, 1, 3) and n1 == n0 and "recorded in" not in r.err,
          "survey --quick without --db: not recorded", r.describe()[:300])
    mine = json.load(open(out))["devices"][0] if os.path.exists(out) else {}
    host = mine.get("identity", {}).get("host")
    check(host == os.uname().nodename, "a new survey records the host name", str(host))
    clinfo_keys(mine)
    mdb = os.path.join(tmp, "mine.db")
    r = testlib.run(["survey", "--quick", "-d", "cpu", "--json", out, "--db", mdb,
                     "--label", ""], timeout=600)
    check(r.rc in (0, 1, 3) and f"recorded in '{mdb}' as survey 1" in r.err
          and "host" not in json.load(open(out))["devices"][0]["identity"],
          "survey --quick --db --label '': recorded, says where, no host", r.describe()[:300])
else:
    print("note: no OpenCL device: the host of a new survey is not checked here")

testlib.finish()
