#!/usr/bin/env python3
"""The survey database (docs/SURVEY.md, "The survey database"): 'ballcl survey
import' of every committed survey and of every schema version (1 made from a
committed file, 2, and 3 when this build's reader takes it), its rows
against the files (read back with Python's sqlite3), the same document
twice (or reformatted) being one survey, bad files refused in one line with
nothing written for them, bad --db paths (a folder, a missing folder, a file
that is not a database, another program's database) refused with the file
untouched, two processes importing at once, 'survey list' with text from
files escaped, 'survey report' errors (no database, no gnuplot), and
'ballcl survey' recording its survey when a device is present. Structure and
correctness only, never timings.

Environment (from tests/meson.build): BALLCL.
"""
import copy
import glob
import json
import os
import sqlite3
import subprocess
import sys

import testlib
from testlib import check

ROOT = testlib.SOURCE_ROOT
COMMITTED = sorted(glob.glob(os.path.join(ROOT, "docs", "surveys", "*.json")))
CORPUS = sorted(glob.glob(os.path.join(ROOT, "tests", "fuzz", "corpus", "survey", "*")))

tmp = testlib.tempdir()


def dbfile(name):
    return os.path.join(tmp, name + ".db")


def one_line_error(r, code, *parts):
    lines = r.err_lines()
    return (r.rc == code and len(lines) == 1 and lines[0].startswith("ballcl: ")
            and all(p in lines[0] for p in parts))


def rows(db, sql, *args):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def count(db, table):
    return rows(db, f"SELECT count(*) FROM {table}")[0][0]


def write_json(name, doc, indent=2):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f, indent=indent)
    return path


def reader_accepts(path):
    """What the program's own survey reader says of a file."""
    return testlib.run(["survey", "compare", path]).rc == 0


# ---- every committed survey, and its rows ------------------------------------------

db = dbfile("main")
r = testlib.run(["survey", "import", "--db", db] + COMMITTED)
check(r.rc == 0 and r.err == "", "import of every committed survey: exit 0", r.describe())
check(r.out.count("added as survey") == len(COMMITTED), "each reported as added", r.out)
check(count(db, "surveys") == len(COMMITTED), f"{len(COMMITTED)} surveys in the database")
journal = rows(db, "PRAGMA journal_mode")[0][0]
check(journal == "wal", "the database is in WAL mode", journal)

for path in COMMITTED:
    doc = json.load(open(path))
    base = os.path.basename(path)
    sid = rows(db, "SELECT id FROM surveys WHERE source = ?", path)
    if not check(len(sid) == 1, f"{base}: one survey row"):
        continue
    sid = sid[0][0]
    stored = rows(db, "SELECT document, schema, date FROM surveys WHERE id = ?", sid)[0]
    check(stored[0] == open(path).read() and stored[1] == doc["schema"]
          and stored[2] == doc["date"], f"{base}: the document kept whole, schema and date")
    for pos, d in enumerate(doc["devices"]):
        run = rows(db, "SELECT r.id, d.name, r.driver FROM runs r JOIN devices d ON"
                   " d.id = r.device_id WHERE r.survey_id = ? AND r.position = ?", sid, pos)
        ident = d["identity"]
        if not check(len(run) == 1 and run[0][1] == ident["name"]
                     and run[0][2] == ident["driver"], f"{base} device {pos}: its run", str(run)):
            continue
        rid = run[0][0]
        m = d["measured"]
        fig = dict(rows(db, "SELECT key, value FROM figures WHERE run_id = ? AND model = ''",
                        rid))
        for k in ("copy_gb_per_s", "launch_latency_us", "write_gb_per_s",
                  "add_gflop_per_s"):
            if k in m:
                check(fig.get(k) == m[k], f"{base} device {pos}: figure {k}",
                      f"{fig.get(k)} vs {m[k]}")
        if "transfer" in m:
            check(fig.get("transfer.pageable_read_gb_per_s")
                  == m["transfer"]["pageable_read_gb_per_s"],
                  f"{base} device {pos}: figure transfer.pageable_read_gb_per_s")
        seed = dict(rows(db, "SELECT key, value FROM figures WHERE run_id = ? AND model = ?",
                         rid, m["model"]))
        check(seed.get("local1_penalty") == m["local1_penalty"]
              and seed.get("large.ball_steps_per_s") == m["large"]["ball_steps_per_s"]
              and seed.get("fused.us_per_step") == m["fused"]["us_per_step"],
              f"{base} device {pos}: the default model's figures under model '{m['model']}'")
        for name, mm in m.get("models", {}).items():
            got = rows(db, "SELECT value FROM figures WHERE run_id = ? AND model = ? AND"
                       " key = 'fused_ball_steps_per_s'", rid, name)
            check(got == [(mm["fused_ball_steps_per_s"],)],
                  f"{base} device {pos}: model {name}'s fused rate")
        sweep = m["local_sweep"]["points"][0]
        got = rows(db, "SELECT value FROM figures WHERE run_id = ? AND model = ? AND key = ?",
                   rid, m["model"], f"local_sweep.us_per_step.{sweep['local']}")
        check(got == [(sweep["us_per_step"],)], f"{base} device {pos}: a local sweep point")
        facts = dict(rows(db, "SELECT key, value FROM facts WHERE run_id = ?", rid))
        check(facts.get("limits.compute_units") == d["limits"]["compute_units"]
              and facts.get("limits.fp64") == int(d["limits"]["fp64"])
              and facts.get("identity.opencl_version") == ident["opencl_version"],
              f"{base} device {pos}: facts")
        exts = [e for (e,) in rows(db, "SELECT name FROM extensions WHERE run_id = ?", rid)]
        check(sorted(exts) == sorted(set(d["limits"]["extensions"])),
              f"{base} device {pos}: its {len(exts)} extensions")

# The same device in two surveys is one device with two runs; the views.
devices = rows(db, "SELECT name, count(*) FROM device_runs GROUP BY device_id")
expected = {}
for path in COMMITTED:
    for d in json.load(open(path))["devices"]:
        i = d["identity"]
        k = (i["platform"], i["vendor"], i["name"], i["type"], d["limits"]["compute_units"])
        expected[k] = expected.get(k, 0) + 1
check(sorted(n for _, n in devices) == sorted(expected.values()),
      f"{len(expected)} devices, runs per device as in the files", str(devices))
check(count(db, "latest_runs") == len(expected), "latest_runs: one row per device")

# ---- idempotence -------------------------------------------------------------------

before = [count(db, t) for t in ("surveys", "runs", "figures", "facts", "extensions")]
r = testlib.run(["survey", "import", "--db", db] + COMMITTED)
check(r.rc == 0 and r.out.count("already there as survey") == len(COMMITTED),
      "the same files again: each already there", r.describe())
reformatted = write_json("reformatted.json", json.load(open(COMMITTED[0])), indent=None)
r = testlib.run(["survey", "import", "--db", db, reformatted])
check(r.rc == 0 and "already there" in r.out, "the same document reformatted: already there",
      r.describe())
after = [count(db, t) for t in ("surveys", "runs", "figures", "facts", "extensions")]
check(before == after, "nothing added twice", f"{before} -> {after}")

# ---- every schema version ------------------------------------------------------------

v2 = json.load(open(COMMITTED[0]))
v1 = copy.deepcopy(v2)
v1["schema"] = "ballcl-survey/1"
v1["date"] = "2026-11-01T00:00:00Z"
for d in v1["devices"]:
    for k in ("write_gb_per_s", "read_gb_per_s", "transfer", "add_gflop_per_s"):
        d["measured"].pop(k, None)
    d.pop("profiling_usable", None)
    d.pop("profiling_note", None)
p1 = write_json("schema1.json", v1)
check(reader_accepts(p1), "a schema-1 document: the reader takes it")
r = testlib.run(["survey", "import", "--db", db, p1])
check(r.rc == 0 and "added as" in r.out, "import of a schema-1 document", r.describe())

# Schema 3 (docs/SURVEY.md): the new figures and facts, and the platforms
# list, from the committed schema-3 sample with figures of our own.
v3 = json.load(open(os.path.join(ROOT, "tests", "fuzz", "corpus", "survey", "ok-v3-quick.json")))
v3["date"] = "2026-12-24T00:00:00Z"
for d in v3["devices"]:
    m = d["measured"]
    m.update({"read_only_gb_per_s": 12.5, "fma_gflop_per_s": 1000.0,
              "int_add_gop_per_s": 400.0, "fp64_gflop_per_s": None,
              "half_gflop_per_s": None})
    m["transfer"].update({"mapped_write_gb_per_s": 9.0, "mapped_read_gb_per_s": 8.0})
p3 = write_json("schema3.json", v3)
check(reader_accepts(p3), "a schema-3 document: the reader takes it")
r = testlib.run(["survey", "import", "--db", db, p3])
check(r.rc == 0 and "added as" in r.out, "import of a schema-3 document", r.describe())
sid = rows(db, "SELECT id FROM surveys WHERE source = ?", p3)[0][0]
got = dict(rows(db, "SELECT f.key, f.value FROM figures f JOIN runs r ON r.id = f.run_id"
                " WHERE r.survey_id = ? AND f.model = ''", sid))
check(got.get("read_only_gb_per_s") == 12.5 and got.get("fma_gflop_per_s") == 1000.0
      and got.get("transfer.mapped_read_gb_per_s") == 8.0
      and "fp64_gflop_per_s" in got and got["fp64_gflop_per_s"] is None,
      "schema 3: the new figures (null kept as NULL)", str(got))
facts = dict(rows(db, "SELECT f.key, f.type FROM facts f JOIN runs r ON r.id = f.run_id"
                  " WHERE r.survey_id = ?", sid))
check(facts.get("capabilities.fp_config.float.denorm") == "bool",
      "schema 3: nested facts under their dotted path", str(facts)[:400])
want = [(p["name"], p["status"]) for p in v3["platforms"]]
check(rows(db, "SELECT name, status FROM platforms WHERE survey_id = ? ORDER BY position", sid)
      == want, "schema 3: the platforms list", str(want))

# A schema this build does not know: refused in one line, nothing written.
v4 = copy.deepcopy(v3)
v4["schema"] = "ballcl-survey/4"
p4 = write_json("schema4.json", v4)
n0 = count(db, "surveys")
r = testlib.run(["survey", "import", "--db", db, p4])
check(one_line_error(r, 2, p4, "ballcl-survey/4") and count(db, "surveys") == n0,
      "a schema-4 document: one line, exit 2, nothing written", r.describe())

# ---- the corpus: what the reader refuses, import refuses, writing nothing ------------

for path in CORPUS:
    name = os.path.basename(path)
    n0 = count(db, "surveys")
    r = testlib.run(["survey", "import", "--db", db, path])
    if reader_accepts(path):
        check(r.rc == 0, f"corpus {name}: imported", r.describe())
    else:
        check(one_line_error(r, 2, path), f"corpus {name}: refused in one line, exit 2",
              r.describe())
        check(count(db, "surveys") == n0, f"corpus {name}: nothing written")
# A bad file among good ones: the good ones are imported, exit 2.
good = write_json("good-new.json", dict(v2, date="2026-12-25T00:00:00Z"))
bad = os.path.join(ROOT, "tests", "fuzz", "corpus", "survey", "truncated")
n0 = count(db, "surveys")
r = testlib.run(["survey", "import", "--db", db, bad, good])
check(r.rc == 2 and len(r.err_lines()) == 1 and bad in r.err and "added as" in r.out,
      "a bad file and a good one: the good one added, one line, exit 2", r.describe())
check(count(db, "surveys") == n0 + 1, "... exactly one survey more")
r = testlib.run(["survey", "import", "--db", db, os.path.join(tmp, "missing.json")])
check(one_line_error(r, 2, "missing.json"), "a missing file: one line, exit 2", r.describe())
r = testlib.run(["survey", "import", "--db", db])
check(r.rc == 2 and "no survey file" in r.err, "no file given: usage error", r.describe())

# ---- bad database paths ----------------------------------------------------------------

r = testlib.run(["survey", "import", "--db", tmp, COMMITTED[0]])
check(one_line_error(r, 2, tmp, "folder"), "--db a folder: one line, exit 2", r.describe())
r = testlib.run(["survey", "import", "--db", os.path.join(tmp, "no", "such", "x.db"),
                 COMMITTED[0]])
check(one_line_error(r, 2, "cannot open"), "--db in a missing folder: one line, exit 2",
      r.describe())
not_db = os.path.join(tmp, "not-a-db.json")
open(not_db, "w").write(open(COMMITTED[0]).read())
before = open(not_db, "rb").read()
for cmd in (["import"], ["list"]):
    args = ["survey"] + cmd + ["--db", not_db] + ([COMMITTED[0]] if cmd == ["import"] else [])
    r = testlib.run(args)
    check(one_line_error(r, 2, not_db), f"{cmd[0]} --db a JSON file: one line, exit 2",
          r.describe())
check(open(not_db, "rb").read() == before, "... the file untouched")
other = os.path.join(tmp, "other.db")
con = sqlite3.connect(other)
con.execute("CREATE TABLE t (x)")
con.commit()
con.close()
before = open(other, "rb").read()
r = testlib.run(["survey", "import", "--db", other, COMMITTED[0]])
check(one_line_error(r, 2, "not a ballcl survey database"),
      "--db another program's SQLite file: refused", r.describe())
check(open(other, "rb").read() == before, "... the file untouched")
missing = dbfile("never-made")
for cmd in (["list"], ["report", "--html", os.path.join(tmp, "x.html")]):
    r = testlib.run(["survey"] + cmd + ["--db", missing])
    check(one_line_error(r, 2, "no survey database", "survey import"),
          f"{cmd[0]} without a database: one line with the way to fill one", r.describe())
check(not os.path.exists(missing), "... and none created")
# The default location: BALLCL_SURVEY_DB, else under XDG_DATA_HOME.
xdg = os.path.join(tmp, "xdg")
r = testlib.run(["survey", "import", COMMITTED[0]],
                env={"BALLCL_SURVEY_DB": None, "XDG_DATA_HOME": xdg})
check(r.rc == 0 and os.path.exists(os.path.join(xdg, "ballcl", "surveys.db")),
      "default: $XDG_DATA_HOME/ballcl/surveys.db, its folder created", r.describe())
envdb = dbfile("from-env")
r = testlib.run(["survey", "import", COMMITTED[0]], env={"BALLCL_SURVEY_DB": envdb})
check(r.rc == 0 and os.path.exists(envdb), "BALLCL_SURVEY_DB names the database",
      r.describe())

# ---- two writers at once ----------------------------------------------------------------

cdb = dbfile("concurrent")
batches = []
for w in range(2):
    files = []
    for i in range(15):
        doc = copy.deepcopy(v2)
        doc["date"] = f"2026-10-{i + 1:02d}T0{w}:00:00Z"
        files.append(write_json(f"c{w}-{i}.json", doc))
    batches.append(files)
for attempt in range(3):
    procs = [subprocess.Popen([testlib.BALLCL, "survey", "import", "--db", cdb] + b,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for b in batches]
    outs = [p.communicate(timeout=120) for p in procs]
    ok = all(p.returncode == 0 for p in procs) and all(not e for _, e in outs)
    check(ok, f"two imports at once (round {attempt + 1}): both exit 0, no message",
          str([(p.returncode, e[-300:]) for p, (_, e) in zip(procs, outs)]))
check(count(cdb, "surveys") == 30, "... every survey recorded once",
      str(count(cdb, "surveys")))
check(count(cdb, "runs") == 30 * len(v2["devices"]), "... with its devices")
check(rows(cdb, "PRAGMA integrity_check") == [("ok",)], "... the database intact")

# ---- list, with text from files escaped ---------------------------------------------------

r = testlib.run(["survey", "list", "--db", db])
check(r.rc == 0 and r.err == "", "list: exit 0", r.describe())
for section in ("devices:", "surveys:", "drivers:"):
    check(section in r.out, f"list: section {section}")
for path in COMMITTED:
    for d in json.load(open(path))["devices"]:
        check(d["identity"]["name"][:20] in r.out, f"list: device {d['identity']['name']}")
        check(d["identity"]["driver"] in r.out, f"list: driver {d['identity']['driver']}")
r = testlib.run(["survey", "list", "--db", db, "drivers"])
check(r.rc == 0 and "drivers:" in r.out and "devices:" not in r.out, "list drivers: one section",
      r.describe())
r = testlib.run(["survey", "list", "--db", db, "nonsense"])
check(r.rc == 2 and "unknown section" in r.err, "list: an unknown section is a usage error",
      r.describe())
evil = copy.deepcopy(v2)
evil["date"] = "2026-12-26T00:00:00Z"
evil["devices"][0]["identity"]["name"] = "evil\x1b[31mred\u0085next\x7f"
evil["devices"][0]["identity"]["driver"] = "</script><script>alert(1)</script>&'\""
edb = dbfile("escape")
r = testlib.run(["survey", "import", "--db", edb, write_json("evil.json", evil)])
check(r.rc == 0, "a device name with control characters: imported", r.describe())
r = testlib.run(["survey", "list", "--db", edb, "devices"])
check(r.rc == 0 and "evil\\x1b[31mred\\xc2\\x85next\\x7f" in r.out
      and "\x1b" not in r.out and "\u0085" not in r.out and "\x7f" not in r.out,
      "list: C0, C1 and DEL from a file printed as \\xNN", repr(r.out))

# ---- report errors ---------------------------------------------------------------------------

html = os.path.join(tmp, "r.html")
r = testlib.run(["survey", "report", "--db", edb, "--html", html],
                env={"BALLCL_GNUPLOT": os.path.join(tmp, "no-gnuplot")})
check(one_line_error(r, 3, "gnuplot") and not os.path.exists(html),
      "report without gnuplot: one line saying so, exit 3, no page", r.describe())
r = testlib.run(["survey", "report", "--db", edb, "--html", os.path.join(tmp, "no", "r.html")])
check(r.rc == 2 and len(r.err_lines()) == 1, "report into a missing folder: one line, exit 2",
      r.describe())
r = testlib.run(["survey", "report", "--db", edb])
check(r.rc == 2 and "--html" in r.err, "report without --html: usage error", r.describe())
r = testlib.run(["survey", "report", "--db", edb, "--html", html])
page = open(html, encoding="utf-8").read() if r.rc == 0 else ""
check(r.rc == 0 and "evil\\x1b[31mred" in page and "\x1b" not in page,
      "report: a name with control characters escaped in the page", r.describe())
check("<script>alert" not in page and "&lt;/script&gt;&lt;script&gt;alert(1)" in page,
      "report: markup from a file escaped (HTML and the embedded JSON)")
svgs = page.count("<svg")
check(svgs > 0 and svgs == page.count("</svg>"), "report: every chart's SVG whole", str(svgs))

# ---- 'ballcl survey' records its survey -----------------------------------------------------

listed = testlib.run(["devices", "--json"])
has_device = listed.rc == 0 and bool(json.loads(listed.out).get("devices"))
if has_device:
    sdb = dbfile("recorded")
    out = os.path.join(tmp, "recorded.json")
    r = testlib.run(["survey", "--quick", "-d", "cpu", "--json", out, "--db", sdb],
                    timeout=600)
    if r.rc in (0, 1, 3) and os.path.exists(out):
        check(count(sdb, "surveys") == 1, "survey --db: the survey recorded", r.describe())
        r2 = testlib.run(["survey", "import", "--db", sdb, out])
        check(r2.rc == 0 and "already there" in r2.out,
              "survey --db then import of its --json: the same survey", r2.describe())
    else:
        print(f"note: no CPU device to survey ({r.rc}); recording not checked")
    r = testlib.run(["survey", "--quick", "-d", "cpu", "--db", tmp])
    check(one_line_error(r, 2, "folder"), "survey --db a folder: refused before the survey",
          r.describe())
    r = testlib.run(["survey", "--quick", "--db", sdb, "--no-db"])
    check(r.rc == 2, "survey --db with --no-db: refused", r.describe())
else:
    print("note: no OpenCL device: the recording of 'ballcl survey' is not checked here")

testlib.finish()
