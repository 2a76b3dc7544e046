#!/usr/bin/env python3
"""bench, tune and survey of a model file (docs/BENCHMARK.md, docs/SURVEY.md,
docs/MODELS.md): every device row validated against the file's C reference,
no host rows, a refusal without --reference, a tuned record keyed by the
file's digest, the survey's figures of the file kept apart from the built-in
models', and runs over two devices. Structure and correctness only, never
timings. Exits 77 without an OpenCL device.

Environment (from tests/meson.build): BALLCL, BALLCL_KERNEL_DIR.
"""
import hashlib
import json
import os
import shutil
import sqlite3

import testlib
from testlib import check, expect_error, run

EXAMPLES = os.path.join(testlib.SOURCE_ROOT, "examples")
SEED_CL = os.path.join(EXAMPLES, "seed.cl")
SEED_C = os.path.join(EXAMPLES, "seed.c")
DRAG_CL = os.path.join(EXAMPLES, "drag.cl")
DRAG_C = os.path.join(EXAMPLES, "drag.c")
DEVICE_ROWS = ["local=1", "local=driver", "local=auto", "local=tuned", "sync-every-step",
               "batched", "floor", "fused"]
QUICK = ["-n", "1000", "-r", "2", "-s", "8"]
NEEDS = "--model-file needs --reference FILE.c"


def key_of(path):
    """bcl_model_key of a model file: its name, then 16 hex digits of the
    SHA-256 of its text."""
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    name = os.path.splitext(os.path.basename(path))[0]
    return f"{name}-{digest[:16]}", digest


def bench_validates_every_device_row(dev):
    r = run(["bench", "-d", dev, "--model-file", SEED_CL, "--reference", SEED_C, *QUICK,
             "--json"])
    if not check(r.rc == 0, "bench --model-file --reference --json: exit 0", r.describe()):
        return
    j = r.json()
    rows = {x["name"]: x for x in j["rows"]}
    check(list(rows) == DEVICE_ROWS, "bench --model-file: the device rows, no host rows",
          list(rows))
    check(all(x["validated"] and x["validation"]["compared"] > 0
              and x["validation"]["mismatches"] == 0 for x in rows.values()),
          "bench --model-file: every device row validated bit for bit", j["rows"])
    check(all(x["speedup_vs_reference"] is None for x in rows.values()),
          "bench --model-file: no speedup against a reference row that did not run")
    check("child process" in (j.get("host_rows_na") or ""),
          "bench --model-file JSON: host_rows_na says why", j.get("host_rows_na"))
    _, digest = key_of(SEED_CL)
    check(j["model_file"] == {"path": SEED_CL, "sha256": digest},
          "bench --model-file JSON: model_file path and sha256", j["model_file"])
    check(j["add_rate"]["ops_per_ball_step"] == 3,
          "bench --model-file: #pragma ballcl ops 3 is the bound's count", j["add_rate"])
    # The built-in seed keeps its host rows and its speedups.
    b = run(["bench", "-d", dev, *QUICK, "--json"])
    check(b.rc == 0 and [x["name"] for x in b.json()["rows"]][:2] == ["reference", "openmp"]
          and b.json()["host_rows_na"] is None,
          "bench of a built-in model: host rows kept, host_rows_na null", b.describe())

    t = run(["bench", "-d", dev, "--model-file", SEED_CL, "--reference", SEED_C, *QUICK])
    lines = t.out.splitlines()
    table = [ln for ln in lines if ln.split(" ")[0] in DEVICE_ROWS + ["reference", "openmp"]]
    check(t.rc == 0 and [ln.split()[0] for ln in table] == DEVICE_ROWS
          and all(ln.rstrip().endswith("yes") for ln in table),
          "bench --model-file table: every device row, each validated", t.describe())
    check("host rows (reference, openmp): n/a for a model file" in t.out,
          "bench --model-file table: the host rows said n/a", t.out)
    check("the C reference" not in t.out.split("Best:")[-1],
          "bench --model-file: no 'x the C reference' in the best line", t.out)


def bench_without_ops(dev, tmp):
    # The seed's update with no #pragma ballcl ops: the bound is unknown,
    # said n/a, never a division by zero.
    path = os.path.join(tmp, "noops.cl")
    with open(SEED_CL) as f:
        text = "".join(ln for ln in f if not ln.startswith("#pragma"))
    with open(path, "w") as f:
        f.write(text)
    r = run(["bench", "-d", dev, "--model-file", path, "--reference", SEED_C, *QUICK,
             "--json"])
    if not check(r.rc == 0, "bench of a model file without #pragma ballcl ops: exit 0",
                 r.describe()):
        return
    j = r.json()
    check(j["add_rate"]["ops_per_ball_step"] is None
          and j["add_rate"]["ball_steps_per_s_bound"] is None
          and all(x["add_bound_fraction"] is None for x in j["rows"]),
          "no #pragma ballcl ops: the bound and its fractions null", j["add_rate"])
    t = run(["bench", "-d", dev, "--model-file", path, "--reference", SEED_C, *QUICK])
    check(t.rc == 0 and "bound n/a" in t.out and "(add-rate bound n/a)" in t.out
          and "inf" not in t.out and "nan" not in t.out,
          "no #pragma ballcl ops: the table says n/a", t.out)


def a_wrong_reference_fails_every_row(dev, tmp):
    # A reference that computes z - w where the kernel adds: every device
    # row differs and none is timed (--init random: the seed init's w is 0).
    ref = os.path.join(tmp, "wrong.c")
    with open(SEED_C) as f:
        text = f.read()
    assert "b.z = b.z + b.w;" in text
    with open(ref, "w") as f:
        f.write(text.replace("b.z = b.z + b.w;", "b.z = b.z - b.w;"))
    r = run(["bench", "-d", dev, "--model-file", SEED_CL, "--reference", ref, *QUICK,
             "--init", "random", "--json"])
    rows = r.json()["rows"] if r.rc == 1 else []
    check(r.rc == 1 and "validation failed: 8 rows" in r.err
          and all(x["validated"] is False and x["us_per_step"] is None for x in rows)
          and len(rows) == 8,
          "bench with a wrong reference: exit 1, every device row failed and not timed",
          r.describe())


def refused_without_reference(dev):
    for cmd, what in (("bench", "every row"), ("tune", "every candidate")):
        expect_error([cmd, "-d", dev, "--model-file", SEED_CL, "-n", "1000"], 2,
                     f"{cmd} {NEEDS}: {what} is validated before it is timed")
    expect_error(["survey", "--quick", "-d", dev, "--model-file", SEED_CL], 2,
                 f"survey {NEEDS}: every figure is validated before it is timed")
    expect_error(["survey", "--quick", "-d", dev, "--model", "bounce"], 2,
                 "survey: --model: the survey measures every model at its defaults")


def tune_then_run_uses_the_record(dev, tmp):
    cache = os.path.join(tmp, "tune-cache")
    env = {"BALLCL_CACHE_DIR": cache}
    model = os.path.join(tmp, "seed.cl")
    shutil.copy(SEED_CL, model)
    key, _ = key_of(model)
    t = run(["tune", "-d", dev, "--model-file", model, "--reference", SEED_C, "-n", "1000",
             "-r", "1", "-s", "2", "--k", "2", "--json"], env=env)
    if not check(t.rc == 0, "tune --model-file --reference: exit 0", t.describe()):
        return
    rec = t.json()
    check(rec["model"] == key and os.path.basename(rec["path"]).startswith(key + "-"),
          f"tune --model-file: the record is keyed {key}", rec.get("path"))
    args = ["run", "-d", dev, "--model-file", model, "--reference", SEED_C, "-n", "1000", "-s",
            "50", "--json"]
    r = run(args, env=env)
    check(r.rc == 0 and r.json()["tuned"]["used"] and r.json()["validation"]["passed"],
          "run of the tuned model file uses its record", r.describe())
    s = run(["tune", "--show", "-d", dev, "--model-file", model], env=env)
    check(s.rc == 0 and f"model {key}" in s.out, "tune --show --model-file: the record",
          s.describe())
    # An edited file is another model: no record, and tune --show says so.
    with open(model, "a") as f:
        f.write("/* edited */\n")
    new_key, _ = key_of(model)
    r = run(args, env=env)
    check(r.rc == 0 and not r.json()["tuned"]["used"] and not r.json()["tuned"]["stored"],
          "run of the edited model file: the old record is not used", r.describe())
    expect_error(["tune", "--show", "-d", dev, "--model-file", model], 2,
                 f"nothing is tuned for model '{new_key}'", "--model-file", env=env)


def survey_keeps_the_model_file_apart(dev, tmp):
    doc_path = os.path.join(tmp, "survey.json")
    db = os.path.join(tmp, "surveys.db")
    r = run(["survey", "--quick", "-d", dev, "--model-file", SEED_CL, "--reference", SEED_C,
             "--json", doc_path, "--db", db], timeout=600)
    if not check(r.rc == 0, "survey --model-file --reference: exit 0", r.describe()):
        return
    with open(doc_path) as f:
        dev_doc = json.load(f)["devices"][0]
    key, digest = key_of(SEED_CL)
    mf = dev_doc.get("model_file") or {}
    check(mf.get("key") == key and mf.get("sha256") == digest and mf.get("path") == SEED_CL
          and mf.get("flops_per_step") == 3,
          "survey: the device's model_file names the file by key and digest", mf)
    check(mf.get("small", {}).get("validated") is True
          and mf.get("large", {}).get("validated") is True
          and (mf.get("fused") or {}).get("validated") is True
          and (mf.get("fused_ball_steps_per_s") or 0) > 0,
          "survey: the model file's figures measured and validated", mf)
    check(f"model file {SEED_CL} ({key})" in r.out and "never in the database" in r.out,
          "survey: a line under the table gives the model file's rates", r.out[-800:])
    measured = dev_doc["measured"]
    check(measured["model"] == "seed" and list(measured["models"]) == ["bounce"],
          "survey: the built-in models' figures as without --model-file",
          list(measured["models"]))
    check(not any(k.startswith("model_file") for k in dev_doc["errors"]),
          "survey: no error in the model file's figures", dev_doc["errors"])
    con = sqlite3.connect(db)
    models = sorted(m for (m,) in con.execute("SELECT DISTINCT model FROM figures"))
    leaked = con.execute("SELECT count(*) FROM figures WHERE key LIKE '%model_file%' "
                         "OR model NOT IN ('', 'seed', 'bounce')").fetchone()[0]
    facts = con.execute("SELECT count(*) FROM facts WHERE key LIKE '%model_file%'").fetchone()[0]
    con.close()
    check(models == ["", "bounce", "seed"] and leaked == 0 and facts == 0,
          "survey database: the model file's figures are not among the fleet's",
          (models, leaked, facts))


def two_devices(tmp):
    env = dict(testlib.TWO_POCL)
    a, b = testlib.two_pocl_devices(env)
    r = run(["run", "-d", f"{a},{b}", "--model-file", DRAG_CL, "--reference", DRAG_C, "-n",
             "5000", "-s", "40", "--json"], env=env)
    j = r.json() if r.rc == 0 else {}
    check(r.rc == 0 and j["validation"]["passed"] and len(j["devices"]) == 2,
          "run --model-file on two devices: validated", r.describe())
    b2 = run(["bench", "-d", f"{a},{b}", "--model-file", SEED_CL, "--reference", SEED_C,
              "-n", "2000", "-r", "2", "-s", "8", "--json"], env=env)
    sweep = b2.json()["sweep"] if b2.rc == 0 else []
    check(b2.rc == 0 and len(sweep) == 1 and sweep[0]["validated"] is True,
          "bench --model-file on two devices: exit 0, every shard validated", b2.describe())


def main():
    dev = testlib.require_device()
    tmp = testlib.tempdir()
    os.environ["BALLCL_CACHE_DIR"] = os.path.join(tmp, "cache")
    refused_without_reference(dev)
    bench_validates_every_device_row(dev)
    bench_without_ops(dev, tmp)
    a_wrong_reference_fails_every_row(dev, tmp)
    tune_then_run_uses_the_record(dev, tmp)
    survey_keeps_the_model_file_apart(dev, tmp)
    two_devices(tmp)
    testlib.finish()


if __name__ == "__main__":
    main()
