#!/usr/bin/env python3
"""The survey database and report at their edges (docs/RELIABILITY.md, round
four, classes 3, 5, 6, 7, 9 and 10; docs/SURVEY.md).

- One survey with an implausible figure (1e308, 5e-324, -1e308, an infinity
  or text put in by hand) or a date that is no time never costs the fleet its
  page: the figure is shown as invalid and left out of the charts, a date
  that is no time shown escaped (the history, drawn in order of the surveys,
  needs no time of day), the rest drawn, exit 0.
- Every argument is read before anything is written: options after file
  names, '--', an option without its value, an unknown one, one given twice.
- The database is a file: ':memory:' and 'file:' URI names are refused.
- 'survey list' and 'report' only read: a read-only file in a read-only
  folder is enough, a writer holding a transaction does not hold them up, an
  empty or missing file is refused and never made a database, nothing is left
  beside it; an import that cannot fill a new file (a full disk) removes it.
- gnuplot that never returns is stopped after 20 s; SIGINT, SIGTERM and
  SIGHUP during the report remove its temporary folder and end gnuplot.
- Text columns changed to BLOBs (bytes that are no UTF-8 too) crash nothing.

Every case within 30 s. Environment (from tests/meson.build): BALLCL.
"""
import glob
import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import time

import testlib
from testlib import check

ROOT = testlib.SOURCE_ROOT
SURVEYS = sorted(glob.glob(os.path.join(ROOT, "docs", "surveys", "*.json")))
POCL = os.path.join(ROOT, "docs", "surveys", "h200-host-pocl.json")
tmp = testlib.tempdir()
os.chmod(tmp, 0o755)  # the cases run as nobody read below it
LIMIT = 30
n = 0

if not shutil.which("gnuplot"):
    raise SystemExit("gnuplot is missing (tools/setup.sh installs gnuplot-nox)")


def fresh(name):
    global n
    n += 1
    d = os.path.join(tmp, f"{n}-{name}")
    os.makedirs(d)
    return d


def program_for(user):
    """The program, or for another user (nobody) a copy in this test's folder:
    the checkout may be where no other user can reach (a clone in /root, mode
    0700); the sanitizers' suppressions are shared likewise."""
    if user is None:
        return testlib.BALLCL
    copy = os.path.join(tmp, "ballcl")
    if not os.path.exists(copy):
        shutil.copy(testlib.BALLCL, copy)
        os.chmod(copy, 0o755)
        testlib.share_suppressions(tmp)
    return copy


def run(args, env=None, cwd=None, user=None, timeout=LIMIT + 30):
    """ballcl args; Result with .seconds."""
    full = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    t0 = time.monotonic()
    kw = {"user": user} if user is not None else {}
    p = subprocess.run([program_for(user)] + args, env=full, cwd=cwd or tmp, capture_output=True,
                       text=True, timeout=timeout, **kw)
    r = testlib.Result(args, p)
    r.seconds = time.monotonic() - t0
    return r


def one_line(r, code, *parts):
    lines = r.err_lines()
    return (r.rc == code and len(lines) == 1 and lines[0].startswith("ballcl: ")
            and all(p in lines[0] for p in parts) and r.seconds < LIMIT)


def listing(d):
    return sorted(os.listdir(d))


def variant(name, date, **figures):
    """The PoCL survey with another date and figures of its first device set
    (dotted keys under measured)."""
    doc = json.load(open(POCL))
    doc["date"] = date
    for key, value in figures.items():
        node = doc["devices"][0]["measured"]
        *path, last = key.split(".")
        for p in path:
            node = node[p]
        node[last] = value
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def report(db, html, env=None, **kw):
    return run(["survey", "report", "--db", db, "--html", html], env=env, **kw)


def new_db(name, *files):
    d = fresh(name)
    db = os.path.join(d, "s.db")
    r = run(["survey", "import", "--db", db] + SURVEYS + list(files))
    check(r.rc == 0, f"{name}: import", r.describe())
    return d, db


# ---- 3: one bad survey never costs the fleet its page -----------------------------------
for what, key, value in [("1e308", "copy_gb_per_s", 1e308),
                         ("5e-324", "copy_gb_per_s", 5e-324),
                         ("1e31", "copy_gb_per_s", 1e31),
                         ("1e308 launch latency (a linear axis)", "launch_latency_us", 1e308),
                         ("1e-300 add rate", "add_gflop_per_s", 1e-300)]:
    f = variant("extreme", "2026-12-05T10:00:00Z", **{key: value})
    d, db = new_db("extreme", f)
    html = os.path.join(d, "r.html")
    r = report(db, html)
    page = open(html).read() if os.path.exists(html) else ""
    check(r.rc == 0 and r.seconds < LIMIT and ">invalid<" in page and page.count("<svg") >= 5,
          f"{key} = {what} in one survey: exit 0, the figure shown as invalid, the charts drawn",
          r.describe())
    check(listing(d) == ["r.html", "s.db"], f"{key} = {what}: nothing else left", listing(d))
# 1.8e308 is beyond a double: the import refuses it in one line (or takes it as
# invalid); either way the page of the rest is drawn.
f = variant("huge", "2026-12-05T10:00:00Z", copy_gb_per_s=1.8e308)
d, db = new_db("huge")
r = run(["survey", "import", "--db", db, f])
check(r.rc in (0, 2) and len(r.err_lines()) == (1 if r.rc else 0), "1.8e308: refused in one line "
      "or taken", r.describe())
check(report(db, os.path.join(d, "r.html")).rc == 0, "1.8e308: the page is drawn")
# A date that is no time, on one of two surveys of a device.
f = variant("baddate", "not a date", copy_gb_per_s=1.0)
d, db = new_db("baddate", f)
r = report(db, os.path.join(d, "r.html"))
page = open(os.path.join(d, "r.html")).read() if r.rc == 0 else ""
check(r.rc == 0 and "2 surveys, oldest to newest" in page and "not a date" in page,
      "a malformed date on one of two surveys: exit 0, the history of both drawn",
      r.describe())
# Figures made implausible in the database by hand: an infinity, text, bytes.
for what, sql in [("an infinity", "UPDATE figures SET value = 9e999 WHERE key = 'copy_gb_per_s'"),
                  ("text", "UPDATE figures SET value = 'fast' WHERE key = 'copy_gb_per_s'"),
                  ("a BLOB", "UPDATE figures SET value = x'00ff' WHERE key = 'add_gflop_per_s'")]:
    d, db = new_db("crafted-figure")
    con = sqlite3.connect(db)
    con.execute(sql)
    con.commit()
    con.close()
    r = report(db, os.path.join(d, "r.html"))
    check(r.rc == 0 and r.seconds < LIMIT, f"a figure set to {what} by hand: the page, exit 0",
          r.describe())

# ---- 10: text columns made BLOBs by hand ----------------------------------------------------
for what, sql in [
        ("the issue's extension name x'41424344'",
         "UPDATE extensions SET name = x'41424344' WHERE rowid = (SELECT min(rowid) FROM extensions)"),
        ("an extension name of bytes that are no UTF-8",
         "UPDATE extensions SET name = x'ff00fe' WHERE rowid = (SELECT max(rowid) FROM extensions)"),
        ("a device name as a BLOB", "UPDATE devices SET name = x'c3' WHERE id = 1"),
        ("a driver as a BLOB", "UPDATE runs SET driver = x'e282' WHERE id = 1"),
        ("a model name as a BLOB", "UPDATE figures SET model = x'ff' WHERE model = 'seed'"),
        ("a survey date as a BLOB", "UPDATE surveys SET date = x'00' WHERE id = 1"),
        ("a fact key as a BLOB", "UPDATE facts SET key = x'fe' WHERE rowid = 1")]:
    d, db = new_db("crafted-text", variant("again", "2026-12-06T10:00:00Z"))
    con = sqlite3.connect(db)
    con.execute(sql)
    con.commit()
    con.close()
    r = report(db, os.path.join(d, "r.html"))
    check(r.rc == 0 and r.seconds < LIMIT, f"{what}: report exit 0, no crash", r.describe())
    r = run(["survey", "list", "--db", db])
    check(r.rc == 0, f"{what}: list exit 0", r.describe())

# ---- 5: every argument read before anything is written ---------------------------------------
home = fresh("home")
HOME = {"HOME": home, "XDG_DATA_HOME": None, "BALLCL_SURVEY_DB": None}
d = fresh("args")
r = run(["survey", "import", SURVEYS[0], SURVEYS[1], "--db", "X.db"], env=HOME, cwd=d)
check(r.rc == 0 and listing(d) == ["X.db"] and listing(home) == [],
      "import A B --db X.db (the issue's case): both into X.db, the default untouched",
      r.describe())
r = run(["survey", "list", "surveys", "--db", "X.db"], env=HOME, cwd=d)
check(r.rc == 0 and r.out.count("\n") == 4, "list surveys --db X.db: the option after the section",
      r.describe())
for what, args, want in [
        ("--db without its value at the end", ["survey", "import", SURVEYS[0], "--db"],
         "--db needs a value"),
        ("an unknown option after the files", ["survey", "import", SURVEYS[0], "--bogus"],
         "unknown option '--bogus'"),
        ("--db twice", ["survey", "import", "--db", "a.db", SURVEYS[0], "--db", "b.db"],
         "--db given twice"),
        ("report with an extra argument after --html",
         ["survey", "report", "--html", "p.html", "extra", "--db", "X.db"],
         "unexpected argument 'extra'"),
        ("list with two sections", ["survey", "list", "devices", "--db", "X.db", "surveys"],
         "one section at most")]:
    before = listing(d)
    r = run(args, env=HOME, cwd=d)
    check(one_line(r, 2, want) and listing(d) == before and listing(home) == [],
          f"{what}: exit 2, one line, nothing written", r.describe())
# '--' ends the options: a file named like one is a file.
dash = os.path.join(d, "--db")
shutil.copy(SURVEYS[0], dash)
r = run(["survey", "import", "--db", "Y.db", "--", "--db"], env=HOME, cwd=d)
check(r.rc == 0 and "--db: already there as" not in r.out and "added as survey 1" in r.out,
      "import --db Y.db -- --db: the file named '--db' imported", r.describe())
r = run(["survey", "report", "--db", "X.db", "--html", "p.html"], env=HOME, cwd=d)
r2 = run(["survey", "report", "--html=q.html", "--db=X.db"], env=HOME, cwd=d)
check(r.rc == 0 and r2.rc == 0 and os.path.exists(os.path.join(d, "q.html")),
      "report: options in any order and with '='", r.describe() + r2.describe())

# ---- 6: in-memory and URI names ----------------------------------------------------------------
d = fresh("names")
for name in [":memory:", "file:x.db", "file:x.db?mode=memory", "file::memory:?cache=shared"]:
    for args in (["survey", "import", "--db", name, SURVEYS[0]], ["survey", "list", "--db", name]):
        r = run(args, cwd=d)
        check(one_line(r, 2, "in-memory and URI names are not accepted") and listing(d) == [],
              f"{args[1]} --db '{name}': exit 2, one line, no file", r.describe())
r = run(["survey", "import", SURVEYS[0]], env={"BALLCL_SURVEY_DB": ":memory:"}, cwd=d)
check(one_line(r, 2, "':memory:'"), "BALLCL_SURVEY_DB=:memory: refused", r.describe())
r = run(["survey", "import", "--db", "./file:x.db", SURVEYS[0]], cwd=d)
r2 = run(["survey", "list", "--db", "./file:x.db", "surveys"], cwd=d)
check(r.rc == 0 and r2.rc == 0 and listing(d) == ["file:x.db"] and "1 " in r2.out,
      "--db ./file:x.db: a file of that name, which list then finds", r.describe() + r2.describe())

# ---- 7: reading only reads ---------------------------------------------------------------------
d, db = new_db("readonly")
ro = os.path.join(d, "ro")
os.makedirs(ro)
shutil.copy(db, ro)
rodb = os.path.join(ro, "s.db")
os.chmod(rodb, 0o444)
os.chmod(ro, 0o555)
user = 65534 if os.geteuid() == 0 else None  # root writes whatever the modes say
html = os.path.join(fresh("page"), "r.html")
os.chmod(os.path.dirname(html), 0o777)
r = run(["survey", "list", "--db", rodb], user=user)
r2 = report(rodb, html, user=user)
check(r.rc == 0 and r2.rc == 0 and listing(ro) == ["s.db"],
      "list and report of a read-only file in a read-only folder: exit 0, nothing beside it",
      r.describe() + r2.describe())
os.chmod(rodb, 0o644)
r = run(["survey", "list", "--db", rodb], user=user)
check(r.rc == 0 and listing(ro) == ["s.db"], "a writable file in a read-only folder: exit 0",
      r.describe())
os.chmod(ro, 0o755)
r = run(["survey", "list", "--db", db])
check(r.rc == 0 and listing(d) == ["ro", "s.db"], "list leaves no WAL file beside the database",
      r.describe())
# A writer holding its transaction: readers go on.
con = sqlite3.connect(db, isolation_level=None)
con.execute("BEGIN EXCLUSIVE")
con.execute("INSERT INTO extensions VALUES (1, 'held')")
r = run(["survey", "list", "--db", db])
r2 = report(db, os.path.join(d, "w.html"))
con.execute("ROLLBACK")
con.close()
check(r.rc == 0 and r2.rc == 0 and r.seconds < 5 and r2.seconds < LIMIT,
      "list and report while another process holds a write transaction: exit 0 at once",
      r.describe() + r2.describe())
# An empty file stays empty; a missing one stays missing.
d = fresh("empty")
open(os.path.join(d, "e.db"), "w").close()
for args in (["survey", "list", "--db", "e.db"],
             ["survey", "report", "--db", "e.db", "--html", "p.html"]):
    r = run(args, cwd=d)
    check(one_line(r, 2, "'e.db' is empty") and listing(d) == ["e.db"] and
          os.path.getsize(os.path.join(d, "e.db")) == 0,
          f"{args[1]} of an empty file: exit 2, the file left empty, nothing beside it",
          r.describe())
    r = run(args[:2] + ["--db", "none.db"] + args[4:], cwd=d)
    check(one_line(r, 2, "no survey database at 'none.db'") and listing(d) == ["e.db"],
          f"{args[1]} of a missing file: exit 2, nothing made", r.describe())
# A FIFO, a folder.
fifo = os.path.join(d, "fifo.db")
os.mkfifo(fifo)
for args in (["survey", "list", "--db", fifo], ["survey", "import", "--db", fifo, SURVEYS[0]]):
    r = run(args)
    check(one_line(r, 2, "is not a regular file"), f"{args[1]} --db a FIFO: exit 2, said",
          r.describe())
# A full disk: a tiny file system in a mount namespace of this case.
unshare = shutil.which("unshare")
if os.geteuid() == 0 and unshare and subprocess.run([unshare, "-m", "true"]).returncode == 0:
    d = fresh("full")
    script = ('mount -t tmpfs -o size=4k full "$1" && "$2" survey import --db "$1/s.db" "$3"; '
              'echo "rc=$?"; ls -A "$1"')
    p = subprocess.run([unshare, "-m", "sh", "-c", script, "sh", d, testlib.BALLCL, SURVEYS[0]],
                       capture_output=True, text=True, timeout=LIMIT)
    lines = p.stdout.split()
    check(lines[-1:] != [] and lines[0] in ("rc=2", "rc=3") and lines[1:] == [] and
          len(p.stderr.strip().splitlines()) == 1,
          "import on a full disk: one line, exit 2 or 3, no file left", p.stdout + p.stderr)
else:
    print("skip (case): a full disk needs root and unshare")

# ---- 11: the minor ones ------------------------------------------------------------------------
d = fresh("minor")
doc = json.load(open(POCL))
doc["devices"][0]["identity"]["name"] = "e\u202eg\u2066x"
bidi = os.path.join(d, "bidi.json")
json.dump(doc, open(bidi, "w"))
r = run(["survey", "import", "--db", "b.db", bidi], cwd=d)
r2 = run(["survey", "list", "--db", "b.db", "devices"], cwd=d)
check(r.rc == 0 and r2.rc == 0 and "e\\xe2\\x80\\xaeg\\xe2\\x81\\xa6x" in r2.out and
      "\u202e" not in r2.out + r2.err, "bidirectional controls escaped in survey list",
      r2.describe())
before = listing(d)
for what, args, want in [
        ("--html -", ["survey", "report", "--db", "b.db", "--html", "-"], "--html '-'"),
        ("run --output -", ["run", "-n", "10", "-s", "1", "--output", "-"], "--output '-'"),
        ("run --variant ''", ["run", "-n", "10", "--variant", ""], "--variant: empty value")]:
    r = run(args, cwd=d)
    check(one_line(r, 2, want) and listing(d) == before, f"{what}: exit 2, one line, no file",
          r.describe())
r = run(["run", "-n", "10", "-s", "1"], env={"BALLCL_FAULT": "clFinish:-1"}, cwd=d)
check(r.rc != 0 and "n must be a call number from 1" in r.err,
      "BALLCL_FAULT=clFinish:-1 refused", r.describe())

# A bad BALLCL_LAUNCH_BUDGET_MS is refused whether or not the K rule runs: with
# a given K, and with a tuned record (which a bad value once hid).
for what, args in (("a given K", ["run", "-n", "100", "-s", "4", "--steps-per-launch", "2"]),
                   ("the rule", ["run", "-n", "100", "-s", "4"])):
    for bad in ("abc", "0", "-5", "1e9"):
        r = run(args, env={"BALLCL_LAUNCH_BUDGET_MS": bad}, cwd=d)
        check(one_line(r, 2, "BALLCL_LAUNCH_BUDGET_MS", f"'{bad}'") and listing(d) == before,
              f"BALLCL_LAUNCH_BUDGET_MS={bad} with {what}: exit 2, one line", r.describe())
tuned_cache = os.path.join(d, "tuned-cache")
r = run(["tune", "-n", "300", "-r", "1", "-s", "2", "--k", "2"],
        env={"BALLCL_CACHE_DIR": tuned_cache}, cwd=d)
if r.rc == 0:
    r = run(["run", "-n", "300", "-s", "4"],
            env={"BALLCL_CACHE_DIR": tuned_cache, "BALLCL_LAUNCH_BUDGET_MS": "abc"}, cwd=d)
    check(one_line(r, 2, "BALLCL_LAUNCH_BUDGET_MS", "'abc'"),
          "BALLCL_LAUNCH_BUDGET_MS=abc with a tuned record: exit 2, one line", r.describe())
else:
    check(r.rc == 77 or "no OpenCL" in r.err, "tune for the tuned-record case", r.describe())

# XDG variables follow the XDG Base Directory rule: a relative path is
# invalid and ignored (the default under HOME is used), for the cache and the
# survey database alike; BALLCL_* paths are the user's own and may be relative
# to the working folder.
home = os.path.join(d, "home")
os.makedirs(home)
xenv = {"HOME": home, "BALLCL_SURVEY_DB": None, "BALLCL_CACHE_DIR": None,
        "XDG_DATA_HOME": "rel-data", "XDG_CACHE_HOME": "rel-cache"}
r = run(["survey", "import", bidi], env=xenv, cwd=d)
check(r.rc == 0 and os.path.exists(os.path.join(home, ".local/share/ballcl/surveys.db"))
      and not os.path.exists(os.path.join(d, "rel-data")),
      "a relative XDG_DATA_HOME is ignored: the database under HOME", r.describe())
r = run(["cache", "path"], env=xenv, cwd=d)
check(r.rc == 0 and r.out.strip() == os.path.join(home, ".cache/ballcl"),
      "a relative XDG_CACHE_HOME is ignored: the cache under HOME", r.describe())
r = run(["cache", "path"], env=dict(xenv, BALLCL_CACHE_DIR="rel-ballcl"), cwd=d)
check(r.rc == 0 and r.out.strip() == "rel-ballcl",
      "a relative BALLCL_CACHE_DIR is the user's: kept", r.describe())
r = run(["survey", "list", "devices"], env=dict(xenv, BALLCL_SURVEY_DB="rel.db"), cwd=d)
check(r.rc == 2 and "rel.db" in r.err and not os.path.exists(os.path.join(d, "rel.db")),
      "a relative BALLCL_SURVEY_DB is the user's: read there (missing: exit 2, not created)",
      r.describe())

# ---- 9: gnuplot that never returns, and signals ----------------------------------------------
d, db = new_db("gnuplot")
hang = os.path.join(d, "hang.sh")
pids = os.path.join(d, "pids")
with open(hang, "w") as f:
    f.write(f"#!/bin/sh\necho $$ >> {pids}\nsleep 1000 &\necho $! >> {pids}\nwait\n")
os.chmod(hang, 0o755)


def alive():
    if not os.path.exists(pids):
        return []
    out = []
    for p in open(pids).read().split():
        try:
            with open(f"/proc/{p}/stat") as f:
                if f.read().split()[2] != "Z":
                    out.append(p)
        except OSError:
            pass
    return out


tmpdir = fresh("tmpdir")
env = {"BALLCL_GNUPLOT": hang, "TMPDIR": tmpdir}
r = report(db, os.path.join(d, "hang.html"), env=env)
check(r.rc == 3 and len(r.err_lines()) == 1 and "within 20 s: stopped" in r.err and
      r.seconds < LIMIT and listing(tmpdir) == [] and alive() == [] and
      not os.path.exists(os.path.join(d, "hang.html")),
      "gnuplot that never returns: stopped after 20 s, exit 3, one line, nothing left",
      r.describe() + f" after {r.seconds:.1f} s; left {listing(tmpdir)}, alive {alive()}")
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    os.path.exists(pids) and os.remove(pids)
    full = dict(os.environ, **env)
    page = os.path.join(d, f"sig{int(sig)}.html")
    p = subprocess.Popen([testlib.BALLCL, "survey", "report", "--db", db, "--html", page],
                         env=full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t0 = time.monotonic()
    while len(alive()) < 2 and time.monotonic() - t0 < 10:
        time.sleep(0.05)
    p.send_signal(sig)
    try:
        rc = p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = None
    time.sleep(0.2)
    check(rc == 128 + int(sig) and listing(tmpdir) == [] and alive() == [] and
          not os.path.exists(page) and not glob.glob(page + "*") and
          not [x for x in listing(d) if x.startswith(".")],
          f"{signal.Signals(sig).name} during the report: exit {128 + int(sig)}, the chart "
          "folder removed, gnuplot ended, no page",
          f"exit {rc}; left {listing(tmpdir)}; alive {alive()}; folder {listing(d)}")

testlib.finish()
