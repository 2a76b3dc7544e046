#!/usr/bin/env python3
"""CLI tests of 'ballcl survey' and 'ballcl survey compare' (docs/SURVEY.md) on
whatever OpenCL device is present (PoCL in CI): the JSON against the
documented schema (docs/survey.schema.json, with python3-jsonschema) and
against the program's own reader, the table, compare on real files, bad
files refused, a failing measurement and a failing validation reported as
null figures while the survey goes on. Structure and correctness only,
never timings. Exits 77 (skipped) when there is no OpenCL device.

Environment (from tests/meson.build): BALLCL, BALLCL_KERNEL_DIR,
BALLCL_CACHE_DIR.
"""
import copy
import glob
import json
import os
import re
import shutil
import sys

import testlib
from testlib import check

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is missing: tools/setup.sh installs it")
    sys.exit(1)

ROOT = testlib.SOURCE_ROOT
SCHEMA = json.load(open(os.path.join(ROOT, "docs", "survey.schema.json")))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
COMMITTED = sorted(glob.glob(os.path.join(ROOT, "docs", "surveys", "*.json")))

dev = testlib.require_device()
tmp = testlib.tempdir()
env = {"BALLCL_CACHE_DIR": os.path.join(tmp, "cache")}
# The survey turns PoCL's kernel cache off for its cold build, so PoCL
# compiles every local size of the sweep afresh: about 30 s each in the
# sanitizer build (tools/sanitize.sh). There the user's choice, which the
# survey must respect, keeps it on; the default is checked in the plain build
# and by the unit test.
# The later runs of this test keep it on in every build, which also warms
# PoCL's cache for the sanitizer build's runs.
SANITIZED = "ASAN_OPTIONS" in os.environ
cache_on = {**env, "POCL_KERNEL_CACHE": "1"}
first_env = cache_on if SANITIZED else env


def schema_errors(doc):
    return [f"{'.'.join(map(str, e.path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)]


def models_of_program():
    """Model names from 'ballcl run --help' (the table, not a copy of it)."""
    r = testlib.run(["run", "--help"])
    line = next(l for l in r.out.splitlines() if l.strip().startswith("--model M"))
    return [w for w in line.split("model:", 1)[1].split() if w != "(default)"]


MODELS = models_of_program()
check(len(MODELS) >= 2 and MODELS[0] == "seed", f"models from run --help: {MODELS}")


def all_models(m):
    return {m["model"]: m, **m["models"]}


def table_rows(text):
    return [l for l in text.splitlines() if l.startswith("|")]


def check_table(text, ncols, what):
    rows = table_rows(text)
    ok = len(rows) > 40 and all(r.count(" |") - r.count("\\|") == ncols + 1 for r in rows)
    check(ok, f"{what}: a Markdown table, {ncols} device column(s) in every row",
          "\n".join(rows[:5]))
    return rows


# ---- a quick survey of the device ---------------------------------------------------
out = os.path.join(tmp, "s.json")
r = testlib.run(["survey", "-d", dev, "--quick", "--json", out], env=first_env, timeout=600)
check(r.rc == 0 and r.err == "", "survey --quick: exit 0, nothing on stderr", r.describe())
doc = json.load(open(out))
errs = schema_errors(doc)
check(not errs, "survey JSON validates against docs/survey.schema.json", "\n".join(errs[:5]))
check(doc["schema"] == "ballcl-survey/3" and doc["quick"] is True
      and doc["command"] == f"ballcl survey -d {dev} --quick --json {out}"
      and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", doc["date"]),
      "schema version, quick, the command and the date are recorded", str(doc)[:300])
caches = doc["settings"]["driver_caches"]
if SANITIZED:
    check("POCL_KERNEL_CACHE=1 (PoCL's kernel cache, left on by the user)" in caches,
          "a driver cache the user set stays, and the survey says so", caches)
else:
    check("POCL_KERNEL_CACHE=0" in caches and "CUDA_CACHE_DISABLE=1" in caches,
          "the drivers' caches are off for the cold build", caches)
check(len(doc["devices"]) == 1, "-d: one device")
d = doc["devices"][0]
m = d["measured"]
check(d["errors"] == {} and d["flags"] == [], "no errors, no flags", f"{d['errors']} {d['flags']}")
check(sorted(all_models(m)) == sorted(MODELS) and m["model"] == MODELS[0],
      "figures for every model of the table, the default model's at the top",
      f"{m['model']} {list(m['models'])}")
# Profiling checked before it is believed (docs/BENCHMARK.md, "Clocks"):
# where it failed (rusticl 22.3), the times are the host clock's and the
# queued-to-start latency, which needs the device's clock, is null.
PROFILING = d["profiling_usable"]
check(isinstance(PROFILING, bool) and (d["profiling_note"] is None) == PROFILING,
      f"profiling_usable ({PROFILING}) with a note exactly when false", str(d.get("profiling_note")))
# The peaks (src/measure/peak.c): double and half where the device has the
# type (limits.fp64, limits.fp16), else null without an error.
LIM = d["limits"]
for key, has in (("fp64_gflop_per_s", LIM["fp64"]), ("half_gflop_per_s", LIM["fp16"])):
    if not has:
        check(m.get(key) is None and f"measured.{key}" not in d["errors"],
              f"measured.{key} is null without an error: the device lacks the type", str(m.get(key)))
PEAKS = ("read_only_gb_per_s", "fma_gflop_per_s", "int_add_gop_per_s") \
    + (("fp64_gflop_per_s",) if LIM["fp64"] else ()) + (("half_gflop_per_s",) if LIM["fp16"] else ())
for key in ("build_ms_cold", "build_ms_cached", "launch_latency_us", "roundtrip_us",
            "copy_gb_per_s", "add_gflop_per_s") + PEAKS:
    if key == "launch_latency_us" and not PROFILING:
        check(m[key] is None and key not in d["errors"],
              "measured.launch_latency_us is null without an error: profiling is unusable",
              str(m[key]))
        continue
    check(isinstance(m[key], float) and m[key] > 0, f"measured.{key} is a positive number",
          str(m[key]))
tr = m["transfer"]
WAYS = ("pinned", "pageable", "mapped")


def best_way(t):
    """The way with the largest write + read of those measured."""
    done = [w for w in WAYS if t[f"{w}_write_gb_per_s"] is not None]
    return max(done, key=lambda w: t[f"{w}_write_gb_per_s"] + t[f"{w}_read_gb_per_s"])


check(tr["method"] == best_way(tr)
      and m["write_gb_per_s"] == tr[f"{tr['method']}_write_gb_per_s"]
      and m["read_gb_per_s"] == tr[f"{tr['method']}_read_gb_per_s"]
      and all(isinstance(tr[f"{w}_{k}_gb_per_s"], float) and tr[f"{w}_{k}_gb_per_s"] > 0
              for w in WAYS for k in ("write", "read"))
      and tr["bytes"] == m["copy_bytes"],
      "host-device transfers: pinned, pageable and mapped measured, the headline is the best "
      "and names its method",
      json.dumps({k: m[k] for k in ("write_gb_per_s", "read_gb_per_s", "transfer")}))
# Every facts key of `ballcl devices --json` (docs/SURVEY.md): the same
# identity, limits and capabilities as the survey's, under the same names.
devs = testlib.run(["devices", "--json"]).json()["devices"]
mine = next(x for x in devs if x["selector"] == d["selector"])
# (Memory sizes are compared as keys only: PoCL derives them from the host's
# free memory, which changes between two processes on a busy machine.)
VARIES = {"preferred_work_group_multiple", "global_mem_bytes", "max_alloc_bytes"}
# The host is where the survey ran, a survey's own (devices --json has none).
same = all(mine["identity"][k] == v for k, v in d["identity"].items() if k != "host") \
    and all(k in mine["limits"] and (k in VARIES or mine["limits"][k] == v)
            for k, v in d["limits"].items() if k != "preferred_work_group_multiple") \
    and mine["capabilities"] == d["capabilities"]
check(same, "devices --json: identity, limits and capabilities as the survey has them",
      json.dumps({"devices": mine.get("capabilities"), "survey": d["capabilities"]})[:600])
verbose = testlib.run(["devices", "-v"]).out
check(all(label in verbose for label in ("float config", "double config", "native vectors", "SVM",
                                         "global memory cache", "profiling resolution",
                                         "image support", "\nplatforms:\n"))
      and all(p["name"] in verbose for p in doc["platforms"]),
      "devices -v: the capabilities and every platform, as text", verbose[-1500:])
caps = d["capabilities"]
check(caps["fp_config"]["float"] is not None and caps["fp_config"]["float"]["round_to_nearest"]
      and (caps["fp_config"]["double"] is not None) == LIM["fp64"]
      and (caps["fp_config"]["half"] is not None) == LIM["fp16"]
      and caps["native_vector_width"]["float"] >= 1
      and caps["global_mem_cache_type"] in ("none", "read_only", "read_write")
      and isinstance(caps["profiling_timer_resolution_ns"], int),
      "capabilities: float and double config as fp64 says, vector widths, cache type",
      json.dumps(caps))
plats = doc["platforms"]
check(len(plats) >= 1 and any(p["name"] == d["identity"]["platform"] and p["devices"] >= 1
                              and p["status"] == "CL_SUCCESS" for p in plats)
      and all(p["status"] == "CL_SUCCESS" or p["devices"] == 0 for p in plats)
      and all(p["hint"] for p in plats if p["devices"] == 0 and "rusticl" in p["name"]),
      "platforms: every platform with its status; one without devices has a hint where known",
      json.dumps(plats))
for name, mm in all_models(m).items():
    ok = True
    for size, n in (("small", doc["settings"]["small_n"]), ("large", 65536)):
        f = mm[size]
        ok = ok and f["n"] == n and f["validated"] is True and f["us_per_step"] > 0
        ok = ok and abs(f["gb_per_s"] - 32 * n / (f["us_per_step"] * 1e3)) <= 1e-4 * f["gb_per_s"]
        ok = ok and abs(f["ball_steps_per_s"] - n / (f["us_per_step"] * 1e-6)) \
            <= 1e-4 * f["ball_steps_per_s"]
    check(ok, f"{name}: small and large validated, GB/s = 32 bytes x N / time",
          json.dumps({k: mm[k] for k in ("small", "large")}))
    pts = mm["local_sweep"]["points"]
    timed = [p for p in pts if p["us_per_step"] is not None]
    best = min(timed, key=lambda p: p["us_per_step"])
    one = next(p for p in pts if p["local"] == 1)
    check(pts[0]["local"] == 1 and pts[-1]["local"] == "driver" and len(timed) == len(pts)
          and mm["best_local"] == best["local"]
          and abs(mm["local1_penalty"] - one["us_per_step"] / best["us_per_step"]) < 1e-3
          * mm["local1_penalty"],
          f"{name}: sweep from local=1 to the driver's choice, best_local and local1_penalty "
          "follow from it", json.dumps(mm["local_sweep"]))
    fu = mm["fused"]
    check(fu["validated"] is True and fu["k"] == doc["settings"]["fused_k"]
          and abs(mm["fused_ball_steps_per_s"] - fu["n"] / (fu["us_per_step"] * 1e-6))
          <= 1e-4 * mm["fused_ball_steps_per_s"],
          f"{name}: fused figure validated, rate = N / time", json.dumps(fu))
rows = check_table(r.out, 1, "survey table")
labels = [row.split("|")[1].strip() for row in rows]
check(all(f"{mod}: large, us/step" in labels for mod in MODELS)
      and "copy bandwidth (GB/s)" in labels and "local = 1 penalty" in " ".join(labels)
      and "host to device (GB/s)" in labels and "device to host (GB/s)" in labels
      and "transfer method" in labels,
      "the table has the figures of every model", str(labels))

# ---- the program's reader agrees with the documented schema ------------------------
def compare(*files, code=0):
    return testlib.run(["survey", "compare", *files])


def reader_accepts(d_):
    path = os.path.join(tmp, "mutated.json")
    with open(path, "w") as f:
        json.dump(d_, f)
    r_ = compare(path)
    if r_.rc not in (0, 2) or (r_.rc == 2 and len(r_.err_lines()) != 1):
        check(False, "compare of a mutated file: exit 0, or 2 with one line", r_.describe())
    return r_.rc == 0


def mutations(node, path=()):
    """(path, kind) of every key to delete and every leaf to retype; one
    element stands for each array, one entry for each free-form map."""
    if isinstance(node, list):
        if node:
            yield from mutations(node[0], path + (0,))
        return
    if not isinstance(node, dict):
        return
    for k, v in node.items():
        yield path + (k,), "delete"
        if isinstance(v, (dict, list)):
            yield from mutations(v, path + (k,))
        else:
            yield path + (k,), "retype"


def mutate(d_, path, kind):
    d_ = copy.deepcopy(d_)
    parent = d_
    for p in path[:-1]:
        parent = parent[p]
    if kind == "delete":
        del parent[path[-1]]
    else:
        v = parent[path[-1]]
        parent[path[-1]] = 12345 if isinstance(v, str) else "x"
    return d_


# Keys added to version 1 after files without them were written: a reader
# must accept their absence (docs/SURVEY.md).
OPTIONAL = {"add_gflop_per_s", "profiling_usable", "profiling_note", "fp64_gflop_per_s",
            "half_gflop_per_s", "host", "uuid", "pci_bus", "clinfo"}
disagree, deleted, refused, optional = [], 0, 0, 0
for path, kind in mutations(doc):
    # Map entries are free-form (an error per figure, a model per name).
    if kind == "delete" and len(path) >= 2 and path[-2] in ("errors", "models", "clinfo"):
        continue
    mutated = mutate(doc, path, kind)
    by_schema = not schema_errors(mutated)
    by_reader = reader_accepts(mutated)
    if by_schema != by_reader:
        disagree.append(f"{kind} {'.'.join(map(str, path))}: schema {by_schema}, "
                        f"reader {by_reader}")
    if kind == "delete" and path[-1] in OPTIONAL:
        optional += 1
        check(by_reader, f"{'.'.join(map(str, path))} may be absent", "")
        continue
    deleted += kind == "delete"
    refused += kind == "delete" and not by_reader
check(not disagree, "docs/survey.schema.json and the program's reader agree on every deleted "
      "key and retyped value", "\n".join(disagree[:8]))
# Each optional key the document holds is deleted once (the first device's:
# one element stands for each array).
present = sum(k in doc["devices"][0] or k in doc["devices"][0].get("measured", {})
              or k in doc["devices"][0].get("identity", {}) for k in OPTIONAL)
check(optional == present and present >= 1,
      f"each of the {present} optional keys present was deleted once", str(optional))
check(deleted > 60 and refused == deleted, f"every one of {deleted} other keys is required",
      f"{refused} refused")

# ---- compare --------------------------------------------------------------------------
check(len(COMMITTED) >= 1, f"committed surveys in docs/surveys: {COMMITTED}")
for f in COMMITTED:
    errs = schema_errors(json.load(open(f)))
    check(not errs, f"{os.path.basename(f)} validates against the schema", "\n".join(errs[:5]))
r = compare(out, *COMMITTED)
ncols = 1 + sum(len(json.load(open(f))["devices"]) for f in COMMITTED)
check(r.rc == 0 and r.err == "", "compare of a fresh survey and the committed ones: exit 0",
      r.describe())
rows = check_table(r.out, ncols, "compare table")
check(all(os.path.basename(f) in rows[0] for f in [out] + COMMITTED),
      "each column names its file", rows[0] if rows else "")
check(any(row.startswith("| surveyed |") and "(quick)" in row for row in rows),
      "a quick survey is marked as such", "")
# A ballcl-survey/1 file (what earlier releases wrote) lacks the transfer
# figures: compare reads it and shows '-' for them, beside a fresh file's.
v1doc = copy.deepcopy(doc)
v1doc["schema"] = "ballcl-survey/1"
for v1dev in v1doc["devices"]:
    for k in ("write_gb_per_s", "read_gb_per_s", "transfer"):
        v1dev["measured"].pop(k, None)
v1path = os.path.join(tmp, "v1.json")
with open(v1path, "w") as f:
    json.dump(v1doc, f)
r1 = compare(out, v1path)
rows1 = check_table(r1.out, 2 * len(doc["devices"]), "compare table with a version 1 file")
wrow = next((row for row in rows1 if row.startswith("| host to device (GB/s) |")), "")
cells = [c.strip() for c in wrow.split("|")[2:-1]]
n = len(doc["devices"])
check(r1.rc == 0 and len(cells) == 2 * n and all(c not in ("-", "n/a") for c in cells[:n])
      and all(c == "-" for c in cells[n:]),
      "compare reads ballcl-survey/1 files: their transfer figures show '-'", wrow)
# A ballcl-survey/1 document is read without the version 2 keys; a version 2
# document without them is refused.
old = copy.deepcopy(doc)
old["schema"] = "ballcl-survey/1"
for k in ("write_gb_per_s", "read_gb_per_s", "transfer"):
    del old["devices"][0]["measured"][k]
check(not schema_errors(old) and reader_accepts(old),
      "a ballcl-survey/1 document without the transfer keys: accepted by schema and reader")

# Bad files: one line on stderr, exit 2, nothing on stdout.
def bad(name, content, *want):
    path = os.path.join(tmp, name)
    with open(path, "w" if isinstance(content, str) else "wb") as f:
        f.write(content)
    r_ = testlib.expect_error(["survey", "compare", out, path], 2, f"'{path}'", *want,
                              what=f"compare with {name}")
    check(r_.out == "", f"compare with {name}: nothing on stdout", r_.describe())


text = open(out).read()
bad("truncated.json", text[: len(text) // 2], "not valid JSON", "line")
bad("garbage.json", b"\x89PNG\r\n\x1a\n\x00\x00", "not valid JSON")
bad("empty.json", "", "not valid JSON")
bad("v4.json", text.replace('"ballcl-survey/3"', '"ballcl-survey/4"', 1),
    "schema 'ballcl-survey/4' is not supported: expected ballcl-survey/1, ballcl-survey/2 and "
    "ballcl-survey/3")
# A version 2 document (what the program wrote before the peaks and the
# capabilities) is read without them; a version 3 one without them is not.
v2 = copy.deepcopy(doc)
v2["schema"] = "ballcl-survey/2"
del v2["platforms"]
for v2dev in v2["devices"]:
    del v2dev["capabilities"]
    for k in ("read_only_gb_per_s", "fma_gflop_per_s", "int_add_gop_per_s", "fp64_gflop_per_s",
              "half_gflop_per_s"):
        v2dev["measured"].pop(k, None)
    for k in ("mapped_write_gb_per_s", "mapped_read_gb_per_s"):
        del v2dev["measured"]["transfer"][k]
check(not schema_errors(v2) and reader_accepts(v2),
      "a ballcl-survey/2 document without the version 3 keys: accepted by schema and reader")
nofma = copy.deepcopy(doc)
del nofma["devices"][0]["measured"]["fma_gflop_per_s"]
bad("no-fma.json", json.dumps(nofma), "devices[0].measured: missing key 'fma_gflop_per_s'")
notr = copy.deepcopy(doc)
del notr["devices"][0]["measured"]["write_gb_per_s"]
bad("no-write.json", json.dumps(notr), "devices[0].measured: missing key 'write_gb_per_s'")
bad("bench.json", json.dumps({"schema": "ballcl-bench/1"}), "is not supported")
bad("array.json", "[]", "not a ballcl survey")
missing = copy.deepcopy(doc)
del missing["devices"][0]["measured"]["copy_gb_per_s"]
bad("missing.json", json.dumps(missing), "devices[0].measured: missing key 'copy_gb_per_s'")
wrong = copy.deepcopy(doc)
wrong["devices"][0]["measured"]["small"]["n"] = "1024"
bad("wrong-type.json", json.dumps(wrong), "devices[0].measured.small.n: expected an integer")
nodev = copy.deepcopy(doc)
nodev["devices"] = []
bad("no-devices.json", json.dumps(nodev), "expected at least one device")
testlib.expect_error(["survey", "compare", out, os.path.join(tmp, "absent.json")], 2,
                     "cannot read", "No such file")
testlib.expect_error(["survey", "compare", out, tmp], 2, f"'{tmp}'")
testlib.expect_error(["survey", "compare"], 2, "no survey file given")
testlib.expect_error(["survey", "compare", "--bogus", out], 2, "unknown option '--bogus'")
r = testlib.run(["survey", "compare", "--help"])
check(r.rc == 0 and r.out.startswith("usage: ballcl survey compare [--json] A.json")
      and "--quick" not in r.out and "ballcl-survey/1, ballcl-survey/2 and ballcl-survey/3" in r.out,
      "survey compare --help: compare's own help", r.describe())
testlib.expect_error(["survey", "--bogus"], 2, "unknown option '--bogus'")
testlib.expect_error(["survey", "--repeats", "0"], 2, "--repeats")
testlib.expect_error(["survey", "extra"], 2, "unexpected argument 'extra'")
testlib.expect_error(["survey", "-d", "no-such-device-name"], 2, "no device matches")
# An unwritable --json is refused before any work, and nothing is written.
r = testlib.expect_error(["survey", "-d", dev, "--quick", "--json",
                          os.path.join(tmp, "no", "such", "dir", "s.json")], 2, "--json")
check(r.out == "", "an unwritable --json: refused before the survey", r.describe())

# ---- a failing measurement: null with its error, the others go on -------------------
fout = os.path.join(tmp, "faulted.json")
r = testlib.run(["survey", "-d", dev, "--quick", "--json", fout], timeout=600,
                env={**cache_on, "BALLCL_FAULT": "clEnqueueCopyBuffer:1"})
lines = r.err_lines()
check(r.rc == 3 and len(lines) == 1 and "copy_gb_per_s" in lines[0]
      and "clEnqueueCopyBuffer" in lines[0],
      "a failed copy: exit 3, one line naming the figure and the call", r.describe())
fdoc = json.load(open(fout))
check(not schema_errors(fdoc), "the survey with a failed figure is still valid JSON of the schema",
      "\n".join(schema_errors(fdoc)[:5]))
fm = fdoc["devices"][0]["measured"]
ferr = fdoc["devices"][0]["errors"]
check(fm["copy_gb_per_s"] is None and list(ferr) == ["measured.copy_gb_per_s"]
      and "clEnqueueCopyBuffer failed" in ferr["measured.copy_gb_per_s"]
      and "CL_OUT_OF_RESOURCES" in ferr["measured.copy_gb_per_s"],
      "the failed figure is null, with its error", json.dumps(ferr))
check(all(isinstance(fm[k], float) for k in ("build_ms_cold", "roundtrip_us")
          + (("launch_latency_us",) if PROFILING else ()))
      and all(mm[s]["validated"] is True for mm in all_models(fm).values()
              for s in ("small", "large")),
      "the other figures were measured", json.dumps(fm)[:400])
check(re.search(r"\| copy bandwidth \(GB/s\) \| n/a \[\d\] \|", r.out) is not None
      and "- [1] " in r.out and "clEnqueueCopyBuffer failed" in r.out,
      "the table shows n/a with a footnote holding the error", r.out[-600:])
r = compare(fout, out)
check(r.rc == 0 and re.search(r"n/a \[\d\]", r.out), "compare accepts and shows a survey with a null figure",
      r.describe())

# Pinned host memory that cannot be mapped: the pageable figures stand in,
# and the method says so; the pinned failure is an error of its own.
pout = os.path.join(tmp, "nopinned.json")
r = testlib.run(["survey", "-d", dev, "--quick", "--json", pout], timeout=600,
                env={**cache_on, "BALLCL_FAULT": "clEnqueueMapBuffer:1"})
pdoc = json.load(open(pout))
pm = pdoc["devices"][0]["measured"]
perr = pdoc["devices"][0]["errors"]
check(r.rc == 3 and pm["transfer"]["method"] == best_way(pm["transfer"]) != "pinned"
      and pm["write_gb_per_s"] == pm["transfer"][f"{pm['transfer']['method']}_write_gb_per_s"] > 0
      and pm["transfer"]["pinned_write_gb_per_s"] is None
      and "clEnqueueMapBuffer failed" in perr.get("measured.transfer.pinned_write_gb_per_s", "")
      and not schema_errors(pdoc),
      "pinned transfers failing: the best of the others stands in and is named, the error kept",
      json.dumps({"transfer": pm["transfer"], "errors": perr}))

# ---- a kernel that gives other bits: its figures fail validation, are not timed ------
if SANITIZED:
    # A changed kernel misses PoCL's cache: a dozen compiles of 30 s each
    # under ASan, for a path that allocates nothing the fault test above
    # does not. The plain build runs it.
    print("skip a kernel giving other bits: not in the sanitizer build")
    testlib.finish()
def survey_with(kdir):
    """A quick survey with the kernels of kdir, its JSON on stdout: the run and the document."""
    r = testlib.run(["survey", "-d", dev, "--quick", "--json", "-"], timeout=600,
                    env={**cache_on, "BALLCL_KERNEL_DIR": kdir})
    try:
        return r, json.loads(r.out)
    except ValueError:
        check(False, "--json -: the JSON on stdout", r.describe())
        testlib.finish()


kdir = os.path.join(tmp, "cl-wrong")
shutil.copytree(testlib.KERNEL_DIR, kdir)
src = open(os.path.join(kdir, "bounce.cl")).read()
# Gravity the other way in the update (which every kernel, scalar and wide, is made of).
wrong_src = src.replace("b.w = b.w + gdt;", "b.w = b.w - gdt;")
check(wrong_src.count("b.w = b.w - gdt;") == 1, "bounce.cl has the gravity line this test changes")
open(os.path.join(kdir, "bounce.cl"), "w").write(wrong_src)
# (--json - : the JSON on stdout instead of the table.)
r, vdoc = survey_with(kdir)
check(r.rc == 1 and len(r.err_lines()) == 1 and "validation failed" in r.err,
      "a kernel giving other bits: exit 1, one line", r.describe())
vm = vdoc["devices"][0]["measured"]
bounce = vm["models"]["bounce"]
verr = vdoc["devices"][0]["errors"]
check(not schema_errors(vdoc) and bounce["small"]["validated"] is False
      and bounce["small"]["us_per_step"] is None and bounce["fused_ball_steps_per_s"] is None
      and "validation failed" in verr.get("measured.models.bounce.small", "")
      and all(k.startswith("measured.models.bounce.") for k in verr),
      "the bounce figures are null, not validated, with the reason; nothing else failed",
      json.dumps(verr)[:600])
check(vm["small"]["validated"] is True and vm["large"]["us_per_step"] > 0,
      "the seed figures were measured", json.dumps(vm["small"]))

# ---- peak kernels that give other results: those peaks are null, not believed -------
kdir2 = os.path.join(tmp, "cl-wrong-peaks")
shutil.copytree(testlib.KERNEL_DIR, kdir2)
psrc = open(os.path.join(kdir2, "peak.cl")).read()
# Every FMA chain adds c twice; every read-only sum leaves one lane out.
wrong_peaks = psrc.replace("fma(a##i, m, c)", "fma(a##i, m, c + c)")
wrong_peaks = wrong_peaks.replace("out[g] = acc.x + acc.y + acc.z + acc.w;",
                                  "out[g] = acc.x + acc.y + acc.z;")
check(wrong_peaks.count("c + c") == 1 and wrong_peaks.count("acc.y + acc.z;") == 2,
      "peak.cl has the lines this test changes")
open(os.path.join(kdir2, "peak.cl"), "w").write(wrong_peaks)
r, wdoc = survey_with(kdir2)
wm = wdoc["devices"][0]["measured"]
werr = wdoc["devices"][0]["errors"]
wrong_keys = ["read_only_gb_per_s", "fma_gflop_per_s"] + (["fp64_gflop_per_s"] if LIM["fp64"] else []) \
    + (["half_gflop_per_s"] if LIM["fp16"] else [])
check(r.rc == 1 and not schema_errors(wdoc)
      and all(wm[k] is None and "differ from the host's" in werr.get(f"measured.{k}", "")
              for k in wrong_keys)
      and sorted(werr) == sorted(f"measured.{k}" for k in wrong_keys)
      and wm["int_add_gop_per_s"] > 0,
      "peaks that give other results: null with 'differ from the host's', exit 1; the int32 "
      "rate, whose kernel is unchanged, measured", json.dumps(werr)[:800])

testlib.finish()
