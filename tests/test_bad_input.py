#!/usr/bin/env python3
"""Bad input, systematically: every input surface of ballcl gets each kind of
bad value, and each case asserts the exit status and the words of the error.

Usage: test_bad_input.py input    cases that need no OpenCL device
       test_bad_input.py device   cases that open a device (exit 77 without one)
       test_bad_input.py --markdown   the table of docs/RELIABILITY.md

Every case also checks what must hold for any bad input: no crash (a signal
or a sanitizer report), nothing on stdout, one line "ballcl: ..." on stderr
(a build log may follow a build failure), no file created or changed in the
working folder (no partial output), no temporary file in the cache folder.

Cases that need "permission denied" run as user nobody through setpriv when
the tests run as root (root reads and writes everything); without setpriv
they are skipped with a note.

Cache entries (device mode): each damaged header field must give exit 0, a
rebuild from source with the reason in the cache note, a validated result
and a replaced entry (see CACHE_DAMAGE; tests/test_cache_cli.py has the rest).

Surfaces still to add when they land (one list each, same Case shape):
  survey JSON (ballcl survey compare): not JSON, truncated, wrong top-level
    type, unknown schema version, missing or mistyped fields; expected: exit
    2 naming the file and the field.
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

import numpy as np

import testlib

BALLCL = os.environ.get("BALLCL", "")
KERNEL_DIR = os.environ.get("BALLCL_KERNEL_DIR", "")
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")
NOBODY = 65534


class Case:
    """One bad input: ballcl ARGS (with ENV) must exit RC with every string of
    WANT in its error line. cls is the input class shown in the docs table."""

    def __init__(self, cls, args, rc, want, env=None, device=False, nobody=False,
                 build_log=None, usage=False):
        self.cls, self.args, self.rc, self.want = cls, args, rc, want
        self.env = env or {}
        self.device = device      # needs an OpenCL device to reach the check
        self.nobody = nobody      # runs as an unprivileged user
        self.build_log = build_log  # a string the build log must contain
        self.usage = usage        # the error is the multi-line usage text


# ---- the fixtures every case may name (made in a fresh folder) -------------

def npy_bytes(arr):
    import io
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


def raw_npy(dict_text, data=b"", major=1, minor=0, hlen=None):
    unpadded = len(dict_text) + 1
    h = dict_text.encode() + b" " * ((64 - (10 + unpadded) % 64) % 64) + b"\n"
    n = len(h) if hlen is None else hlen
    return b"\x93NUMPY" + bytes([major, minor]) + n.to_bytes(2, "little") + h + data


def good_dict(n):
    return "{'descr': '<f4', 'fortran_order': False, 'shape': (%s, 4), }" % n


F4 = np.arange(12, dtype="<f4").reshape(3, 4)
NPY_FILES = {
    "good.npy": npy_bytes(F4),
    "empty.npy": b"",
    "short.npy": b"\x93NUMPY\x01",
    "magic.npy": b"\x89PNG\r\n\x1a\n" + bytes(64),
    "v2.npy": raw_npy(good_dict(1), bytes(16), major=2),
    "f8.npy": npy_bytes(F4.astype("<f8")),
    "be.npy": npy_bytes(F4.astype(">f4")),
    "i4.npy": npy_bytes(F4.astype("<i4")),
    "struct.npy": npy_bytes(np.zeros(2, dtype=[("x", "<f4"), ("y", "<f4")])),
    "fortran.npy": npy_bytes(np.asfortranarray(F4)),
    "1d.npy": npy_bytes(np.arange(4, dtype="<f4")),
    "3x5.npy": npy_bytes(np.zeros((3, 5), "<f4")),
    "0x4.npy": npy_bytes(np.zeros((0, 4), "<f4")),
    "trunc.npy": npy_bytes(F4)[:-5],
    "extra.npy": npy_bytes(F4) + bytes(4),
    "huge.npy": raw_npy(good_dict(10**19), bytes(16)),
    "overflow.npy": raw_npy(good_dict("9" * 30), bytes(16)),
    "longhdr.npy": raw_npy(good_dict(1), hlen=60000),
    "garbled.npy": raw_npy("{'descr': '<f4' 'fortran_order': False}", bytes(16)),
    "unknownkey.npy": raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), "
                              "'extra': 1}", bytes(16)),
    "nan.npy": npy_bytes(np.array([[0, 0, 0, 0], [1, 2, np.nan, 4]], "<f4")),
    "inf.npy": npy_bytes(np.array([[np.inf, 0, 0, 0]], "<f4")),
}
# The seed's update that does not compile (kernels.cl around it is the real one).
BAD_UPDATE = "float4 update(float4 b)\n{\n    return oops;\n}\n"
# A kernels.cl that makes the one-step kernel alone (the seed's update before it is the real one).
STEP_ONLY_KERNEL = "__kernel void seed_step(__global float4 *s, uint n, uint k)\n{\n}\n"


def make_fixtures(work):
    for name, data in NPY_FILES.items():
        with open(os.path.join(work, name), "wb") as f:
            f.write(data)
    os.mkdir(os.path.join(work, "adir"))
    os.mkdir(os.path.join(work, "adir.npy"))
    with open(os.path.join(work, "afile"), "w") as f:
        f.write("not a folder\n")
    # A model's program is its update (seed.cl, read first) and cl/kernels.cl
    # around it: each folder holds both, one of them made wrong.
    kernels = {"k-syntax": ("seed.cl", BAD_UPDATE), "k-empty": ("seed.cl", ""),
               "k-steponly": ("kernels.cl", STEP_ONLY_KERNEL)}
    for d, (name, text) in kernels.items():
        os.mkdir(os.path.join(work, d))
        for k in ("seed.cl", "kernels.cl"):
            shutil.copy(os.path.join(KERNEL_DIR, k), os.path.join(work, d, k))
        with open(os.path.join(work, d, name), "w") as f:
            f.write(text)
    os.mkdir(os.path.join(work, "k-none"))
    os.makedirs(os.path.join(work, "k-dir", "seed.cl"))
    # For user nobody: an unreadable file, a folder without write permission,
    # an unreadable kernel.
    shutil.copy(os.path.join(work, "good.npy"), os.path.join(work, "noread.npy"))
    os.chmod(os.path.join(work, "noread.npy"), 0)
    os.mkdir(os.path.join(work, "ro"), 0o555)
    os.chmod(os.path.join(work, "ro"), 0o555)
    os.mkdir(os.path.join(work, "k-noread"))
    shutil.copy(os.path.join(KERNEL_DIR, "seed.cl"), os.path.join(work, "k-noread", "seed.cl"))
    os.chmod(os.path.join(work, "k-noread", "seed.cl"), 0)
    # Another OpenCL vendor list: none at all, and PoCL next to Oclgrind (two
    # platforms, for an ambiguous name).
    os.mkdir(os.path.join(work, "icd-none"))
    os.mkdir(os.path.join(work, "icd-two"))
    if os.path.exists("/etc/OpenCL/vendors/pocl.icd"):
        shutil.copy("/etc/OpenCL/vendors/pocl.icd", os.path.join(work, "icd-two"))
    with open(os.path.join(work, "icd-two", "oclgrind.icd"), "w") as f:
        f.write("/usr/lib/oclgrind/liboclgrind-rt-icd.so\n")


# ---- the cases ----------------------------------------------------------------

# Options taking a count: (spellings, name in messages, minimum, maximum).
COUNTS = [
    (["-n", "--balls"], "--balls", 1, 2**40),
    (["-s", "--steps"], "--steps", 0, 2**40),
    (["--seed"], "--seed", 0, 2**64 - 1),
    (["--steps-per-launch"], "--steps-per-launch", 1, 2**24),
    (["--tolerance-ulp"], "--tolerance-ulp", 0, 2**30),
]
NOT_COUNTS = ["abc", "-1", "1e99", "10x", " 10", "+5", "0x10", "1.5", "1,2"]
LOCAL_MAX = 1 << 20
VALUED = ["-d", "--device", "-n", "--balls", "-s", "--steps", "--model", "--init", "--seed",
          "--input", "--output", "--local", "--steps-per-launch", "--sync", "--tolerance-ulp"]
FLAGS = ["--no-validate", "--no-cache", "--json", "--verbose", "--help"]


def model_params():
    """(model, option, floats taken) for every model parameter, from run --help."""
    out = subprocess.run([BALLCL, "run", "--help"], capture_output=True, text=True).stdout
    models, params = [], []
    for line in out.splitlines():
        s = line.strip()
        if s.startswith("--model M"):
            models = [w for w in s.split("model:", 1)[1].replace("(default)", "").split()]
        elif s.startswith("--") and " model: " in s:
            opt, arity = s.split()[0][2:], s.split()[1]
            model = s.split(" model: ")[0].split()[-1]
            params.append((model, opt, 2 if "," in arity else 1))
    return models, params


def input_cases(work):
    """Cases decided before any device is opened."""
    cases = []
    # Every count option: each kind of non-number, too big, too small, empty.
    for spellings, name, lo, hi in COUNTS:
        for sp in spellings:
            for v in NOT_COUNTS:
                cases.append(Case(f"{name}: not a non-negative integer", ["run", sp, v], 2,
                                  [f"{name}: '{v}' is not a non-negative integer"]))
            for v in [str(hi + 1), "99999999999999999999"] + ([str(lo - 1)] if lo else []):
                cases.append(Case(f"{name}: out of range", ["run", sp, v], 2,
                                  [f"{name}: '{v}' is out of range: expected {lo} to {hi}"]))
            cases.append(Case(f"{name}: empty", ["run", sp, ""], 2,
                              [f"{name}: empty value: expected an integer"]))
    for v in ["abc", "0", "-1", "1e99", "99999999999999999999", "10x", "", str(LOCAL_MAX + 1)]:
        cases.append(Case("--local: not auto, driver, tuned or 1..2^20", ["run", "--local", v], 2,
                          [f"--local: '{v}' is not valid: expected auto, driver, tuned or a "
                           f"work-group size from 1 to {LOCAL_MAX}"]))
    for v in ["bogus", "", "EVERY"]:
        cases.append(Case("--sync: not every or end", ["run", "--sync", v], 2,
                          [f"--sync: '{v}': expected every or end"]))
    for v in ["bogus", "", "Seed"]:
        cases.append(Case("--init: not seed or random", ["run", "--init", v], 2,
                          [f"--init: unknown '{v}': expected seed or random"]))
    for v in ["bogus", ""]:
        cases.append(Case("--model: unknown model", ["run", "--model", v], 2,
                          [f"--model: unknown model '{v}': expected one of seed"]))
    models, params = model_params()
    for model, opt, count in params:
        one = "1" + ",1" * (count - 1)  # a good value in every place but one
        bad = [("abc", "'abc' is not a number"), ("1x", "'1x' is not a number"),
               ("", "empty value: expected a number"),
               ("nan", "'nan' is out of range: expected a finite float32"),
               ("inf", "'inf' is out of range: expected a finite float32"),
               ("-inf", "'-inf' is out of range: expected a finite float32"),
               ("1e39", "'1e39' is out of range: expected a finite float32")]
        for v, msg in bad:
            text = one.rsplit(",", 1)[0] + "," + v if count == 2 else v
            cases.append(Case(f"--{opt} ({model} model): not {count} finite float32",
                              ["run", "--model", model, f"--{opt}", text], 2,
                              [f"--{opt}: {msg}"]))
        for v in (["1", "1,2,3"] if count == 2 else ["1,2"]):
            cases.append(Case(f"--{opt} ({model} model): wrong count of values",
                              ["run", "--model", model, f"--{opt}", v], 2,
                              [f"--{opt}: '{v}': expected {count} comma-separated numbers"]))
        for other in models:
            if other != model and not any(m == other and o == opt for m, o, _ in params):
                cases.append(Case(f"--{opt}: given for another model",
                                  ["run", "--model", other, f"--{opt}", "1" + ",1" * (count - 1)],
                                  2, [f"parameter '{opt}' does not apply to model '{other}'"]))
    for opt in VALUED:
        cases.append(Case("option without its value", ["run", opt], 2,
                          [f"option '{opt}' needs a value"]))
    for flag in FLAGS:
        cases.append(Case("flag given a value", ["run", f"{flag}=1"], 2,
                          [f"option '{flag}=1' takes no value"]))
    for opt in ["--bogus", "-x", "--s"]:
        cases.append(Case("unknown or ambiguous option", ["run", opt], 2,
                          [f"unknown option '{opt}'"]))
    for v in ["x.jpg", "out", "pic.png.tmp"]:
        cases.append(Case("--snapshot: a name that does not end in .png",
                          ["run", "--snapshot", v], 2,
                          [f"--snapshot: '{v}': the picture is a PNG: expected a name ending "
                           "in .png"]))
    for extra, name in ((["-r", "3"], "repeats"), (["-n", "5"], "balls"), (["--k", "4"], "k")):
        cases.append(Case("tune --show with a sweep option", ["tune", "--show", *extra], 2,
                          [f"--show prints the stored record and measures nothing: --{name} "
                           "does not go with it"]))
    cases += [
        Case("extra argument", ["run", "extra"], 2, ["unexpected argument 'extra'"]),
        Case("--input with --balls", ["run", "--input", "good.npy", "-n", "5"], 2,
             ["--input gives the balls: it cannot be combined with --balls or --init"]),
        Case("--input with --init", ["run", "--input", "good.npy", "--init", "random"], 2,
             ["--input gives the balls: it cannot be combined with --balls or --init"]),
        Case("no command", [], 2, ["usage: ballcl <command>"], usage=True),
        Case("unknown command", ["bogus"], 2, ["unknown command 'bogus': expected one of"]),
        Case("devices: unknown option", ["devices", "--bogus"], 2,
             ["ballcl: unknown option '--bogus' (see 'ballcl devices --help')"]),
        Case("devices: extra argument", ["devices", "extra"], 2,
             ["ballcl: unexpected argument 'extra' (see 'ballcl devices --help')"]),
    ]
    # Device selector text refused before any device is opened.
    for sel in ["1:", "0:0:0", "0:x", "12:"]:
        cases.append(Case("device selector: malformed P:D", ["run", "-d", sel], 2,
                          [f"device selector '{sel}': expected P:D with two indices"]))
    cases.append(Case("device selector: longer than 255", ["run", "-d", "x" * 300], 2,
                      ["device selector 'xxxxxxxx", "too long"]))
    cases.append(Case("BALLCL_DEVICE: malformed P:D", ["run"], 2,
                      ["device selector '3:': expected P:D"], env={"BALLCL_DEVICE": "3:"}))
    cases.append(Case("no OpenCL platform installed", ["devices"], 3,
                      ["no OpenCL platform found: install a driver", "pocl-opencl-icd"],
                      env={"OCL_ICD_VENDORS": os.path.join(work, "icd-none")}))
    # .npy input files, one per defect.
    npy = [
        ("missing.npy", "file missing", "'missing.npy': cannot open: No such file or directory"),
        ("adir", "a folder", "'adir': is a folder: expected a .npy file"),
        ("empty.npy", "empty file", "'empty.npy': file is empty"),
        ("short.npy", "ends inside the preamble",
         "'short.npy': file ends inside the .npy preamble (7 bytes): expected at least 10"),
        ("magic.npy", "wrong magic", "'magic.npy': not a .npy file (bad magic string)"),
        ("v2.npy", "version 2.0", ".npy version 2.0: expected .npy version 1.0"),
        ("f8.npy", "dtype float64", "dtype '<f8' is not supported: expected '<f4'"),
        ("be.npy", "dtype big-endian", "dtype '>f4' is not supported"),
        ("i4.npy", "dtype int32", "dtype '<i4' is not supported"),
        ("struct.npy", "structured dtype", "structured dtype is not supported"),
        ("fortran.npy", "Fortran order", "fortran_order is True (column-major data): expected "
                                         "False"),
        ("1d.npy", "shape (4,)", "shape (4,) is not supported: expected (N, 4)"),
        ("3x5.npy", "shape (3, 5)", "shape (3, 5) is not supported: expected (N, 4)"),
        ("0x4.npy", "no balls", "shape (0, 4) holds no balls: expected (N, 4), N >= 1"),
        ("trunc.npy", "truncated data", "data is truncated: shape (3, 4) needs 3 balls"),
        ("extra.npy", "data after the array", "4 bytes of extra data after the array"),
        ("huge.npy", "huge declared shape", "data is truncated: shape (10000000000000000000, 4)"),
        ("overflow.npy", "shape beyond 64 bits", "a dimension in 'shape' exceeds 64 bits"),
        ("longhdr.npy", "header longer than the file",
         "header length 60000 runs past the end of the file"),
        ("garbled.npy", "malformed header dict", "malformed .npy header at byte"),
        ("unknownkey.npy", "unknown header key", "unknown key 'extra' in the .npy header"),
        ("nan.npy", "NaN value", "ball 1 has a non-finite value (nan) in component z"),
        ("inf.npy", "infinite value", "ball 0 has a non-finite value (inf) in component x"),
    ]
    for f, what, msg in npy:
        cases.append(Case(f".npy input: {what}", ["run", "--input", f], 2, [msg]))
    cases.append(Case(".npy input: no read permission", ["run", "--input", "noread.npy"], 2,
                      ["'noread.npy': cannot open: Permission denied"], nobody=True))
    # Output paths: refused before any work.
    outs = [
        ("nodir/b.npy", "missing folder", "cannot write 'nodir/b.npy': No such file or directory"),
        ("adir.npy", "a folder", "cannot write 'adir.npy': Is a directory"),
        ("adir/", "a folder (trailing /)", "cannot write 'adir/': Is a directory"),
        ("afile/b.npy", "below a file", "cannot write 'afile/b.npy': Not a directory"),
    ]
    for path, what, msg in outs:
        cases.append(Case(f"--output: {what}", ["run", "-n", "5", "-s", "1", "--output", path],
                          2, [msg]))
    cases.append(Case("--output: folder without write permission",
                      ["run", "-n", "5", "-s", "1", "--output", "ro/b.npy"], 2,
                      ["cannot write 'ro/b.npy': Permission denied"], nobody=True))
    return cases


def device_cases(work, devices):
    """Cases that need the device list or a device."""
    names = ", ".join(f"{d['selector']} {d['name']}" for d in devices)
    cases = []
    for sel in ["nosuchdevice", "9:0", "0:99", "999999:999999"]:
        cases.append(Case("device selector: unknown or out of range", ["run", "-d", sel], 2,
                          [f"no device matches '{sel}': candidates are {names}"], device=True))
    types = {d["type"] for d in devices}
    for t in ("gpu", "accelerator", "cpu"):
        if t not in types:
            cases.append(Case("device selector: a type with no device", ["run", "-d", t], 2,
                              [f"no device matches '{t}'"], device=True))
    cases.append(Case("BALLCL_DEVICE: unknown", ["run"], 2, ["no device matches 'nosuch'"],
                      env={"BALLCL_DEVICE": "nosuch"}, device=True))
    if (os.path.exists("/usr/lib/oclgrind/liboclgrind-rt-icd.so") and
            os.path.exists("/etc/OpenCL/vendors/pocl.icd")):
        cases.append(Case("device selector: ambiguous name", ["run", "-d", "o"], 2,
                          ["device selector 'o' is ambiguous: it matches 0:0", "1:0", "use P:D"],
                          env={"OCL_ICD_VENDORS": os.path.join(work, "icd-two")}, device=True))
    else:
        print("# note: no Oclgrind or PoCL ICD: the ambiguous-name case is not run")
    cases += [
        Case("N larger than the device memory", ["run", "-n", str(2**40)], 2,
             [f"{2**40} balls need", "MiB, more than the", "MiB of memory of"], device=True),
        Case("--local larger than the kernel allows", ["run", "-n", "5", "--local",
                                                       str(LOCAL_MAX)], 2,
             [f"--local {LOCAL_MAX}: exceeds the limit of"], device=True),
        Case("kernel folder: missing", ["run", "-n", "5"], 2,
             ["BALLCL_KERNEL_DIR '", "nokernels' is not a folder"],
             env={"BALLCL_KERNEL_DIR": os.path.join(work, "nokernels")}, device=True),
        Case("kernel folder: a file", ["run", "-n", "5"], 2, ["afile' is not a folder"],
             env={"BALLCL_KERNEL_DIR": os.path.join(work, "afile")}, device=True),
        Case("kernel file: missing", ["run", "-n", "5"], 2,
             ["cannot read kernel '", "k-none/seed.cl': No such file or directory"],
             env={"BALLCL_KERNEL_DIR": os.path.join(work, "k-none")}, device=True),
        Case("kernel file: a folder", ["run", "-n", "5"], 2,
             ["cannot read kernel '", "k-dir/seed.cl': Is a directory"],
             env={"BALLCL_KERNEL_DIR": os.path.join(work, "k-dir")}, device=True),
        Case("kernel file: empty", ["run", "-n", "5"], 2, ["k-empty/seed.cl' is empty"],
             env={"BALLCL_KERNEL_DIR": os.path.join(work, "k-empty")}, device=True),
        Case("kernel file: no read permission", ["run", "-n", "5"], 2,
             ["cannot read kernel '", "k-noread/seed.cl': Permission denied"],
             env={"BALLCL_KERNEL_DIR": os.path.join(work, "k-noread")}, device=True,
             nobody=True),
        Case("kernel file: syntax error", ["run", "-n", "5", "--no-cache"], 3,
             ["clBuildProgram failed on '", "CL_BUILD_PROGRAM_FAILURE",
              "the kernel did not compile; see the build log"],
             env={"BALLCL_KERNEL_DIR": os.path.join(work, "k-syntax")}, device=True,
             build_log="oops"),
        Case("kernel file: a kernel missing", ["run", "-n", "5", "--steps-per-launch", "2",
                                               "--no-cache"], 3,
             ["clCreateKernel failed on '", "CL_INVALID_KERNEL_NAME",
              "kernel function missing from the source"],
             env={"BALLCL_KERNEL_DIR": os.path.join(work, "k-steponly")}, device=True),
    ]
    return cases


# ---- cache entries -------------------------------------------------------------
#
# A damaged entry is never used and never fatal: the run rebuilds from
# source, validates, says why in the cache note (--json), stores a good
# entry, and the next run hits. tests/test_cache_cli.py covers truncated
# header and payload, garbage, a flipped payload byte, trailing bytes, a
# binary the driver refuses, a failed build from the binary, an empty file, a
# wrong key and unusable folders; these are the header fields it leaves out.

def le(n, width):
    return n.to_bytes(width, "little")


CACHE_DAMAGE = [
    ("cache entry: other format version", lambda d: d[:8] + le(2, 4) + d[12:],
     "format version 2, expected 1"),
    ("cache entry: other header size", lambda d: d[:12] + le(256, 4) + d[16:],
     "header size 256, expected 512"),
    ("cache entry: payload length past the end", lambda d: d[:48] + le(1 << 62, 8) + d[56:],
     "truncated payload"),
    ("cache entry: empty payload", lambda d: d[:48] + le(0, 8) + d[56:512],
     "empty payload"),
    ("cache entry: key in the header not the file's", lambda d: d[:16] + bytes(32) + d[48:],
     "wrong key"),
    ("cache entry: header only", lambda d: d[:512], "truncated payload"),
]


def cache_run(exe, env, cache):
    e = dict(env, BALLCL_CACHE_DIR=cache)
    p = subprocess.run([exe, "run", "-n", "37", "-s", "3", "--json"], env=e,
                       capture_output=True, text=True, timeout=300)
    try:
        j = json.loads(p.stdout)
    except ValueError:
        j = {}
    return p, j


def cache_cases(work, exe, base_env):
    """Runs the cache damage cases; returns (label, problems) pairs."""
    results = []
    for label, damage, reason in CACHE_DAMAGE:
        cache = tempfile.mkdtemp(prefix="cache.", dir=work)
        problems = []
        p, j = cache_run(exe, base_env, cache)
        entries = [f for f in os.listdir(cache) if f.startswith("program-")]
        if p.returncode != 0 or len(entries) != 1:
            results.append((label, [f"first run: exit {p.returncode}, entries {entries}"]))
            continue
        path = os.path.join(cache, entries[0])
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(damage(data))
        p, j = cache_run(exe, base_env, cache)
        c = j.get("cache", {})
        if p.returncode != 0:
            problems.append(f"exit {p.returncode}, expected 0: {p.stderr.strip()}")
        if not j.get("validation", {}).get("passed"):
            problems.append("not validated")
        if c.get("hit") or reason not in c.get("note", ""):
            problems.append(f"cache note {c.get('note')!r} lacks {reason!r} (hit {c.get('hit')})")
        if any(m in p.stderr for m in SANITIZER_MARKS):
            problems.append("sanitizer report")
        p, j = cache_run(exe, base_env, cache)
        if p.returncode != 0 or not j.get("cache", {}).get("hit"):
            problems.append(f"the entry was not replaced: next run {j.get('cache')}")
        temps = [f for f in os.listdir(cache) if f.startswith(".")]
        if temps:
            problems.append(f"temporary files left: {temps}")
        results.append((label, problems))
        shutil.rmtree(cache, ignore_errors=True)
    return results


# ---- running them ---------------------------------------------------------------

def snapshot(folder, skip):
    """Every file and folder under folder with its size, mode and mtime."""
    snap = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if os.path.join(root, d) not in skip]
        for name in dirs + files:
            p = os.path.join(root, name)
            st = os.lstat(p)
            snap[os.path.relpath(p, folder)] = (st.st_size, st.st_mode, st.st_mtime_ns)
    return snap


def nobody_prefix():
    """How to run as an unprivileged user: [] when we are one, None if impossible."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if not setpriv:
        return None
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]


def run_case(case, work, exe, base_env, prefix):
    env = dict(base_env)
    env.update(case.env)
    cmd = (prefix if case.nobody else []) + [exe] + case.args
    before = snapshot(work, {env["BALLCL_CACHE_DIR"]})
    p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=300)
    after = snapshot(work, {env["BALLCL_CACHE_DIR"]})
    problems = []
    if p.returncode < 0:
        problems.append(f"killed by signal {-p.returncode}")
    elif p.returncode != case.rc:
        problems.append(f"exit {p.returncode}, expected {case.rc}")
    for mark in SANITIZER_MARKS:
        if mark in p.stderr:
            problems.append("sanitizer report")
    if p.stdout:
        problems.append(f"stdout not empty: {p.stdout[:200]!r}")
    lines = p.stderr.splitlines()
    errors = [l for l in lines if l.startswith("ballcl")]
    if case.usage:
        text = p.stderr
    elif len(errors) != 1:
        problems.append(f"{len(errors)} error lines, expected 1")
        text = p.stderr
    else:
        text = errors[0]
    for w in case.want:
        if w not in text:
            problems.append(f"message lacks {w!r}")
    if case.build_log is not None:
        if "---- build log ----" not in p.stderr or case.build_log not in p.stderr:
            problems.append(f"no build log showing {case.build_log!r}")
    elif not case.usage and len([l for l in lines if l.strip()]) != 1:
        problems.append("stderr has more than the one error line")
    if before != after:
        changed = sorted(set(before.items()) ^ set(after.items()))
        problems.append(f"files created or changed: {[c[0] for c in changed]}")
    cache = env["BALLCL_CACHE_DIR"]
    temps = [f for _, _, fs in os.walk(cache) for f in fs if f.startswith(".")]
    if temps:
        problems.append(f"temporary files in the cache folder: {temps}")
    return problems, p.stderr


def markdown(cases):
    """The docs table: one row per input class, with one example."""
    seen = {}
    for c in cases:
        seen.setdefault(c.cls, c)
    print("| input class | example | exit | message contains |")
    print("| --- | --- | --- | --- |")
    for cls, c in seen.items():
        ex = " ".join(a if a and " " not in a else repr(a) for a in c.args)
        if len(ex) > 50:
            ex = ex[:47] + "..."
        env = " ".join(f"{k}=…/{os.path.basename(v)}" if "/" in v else f"{k}={v}"
                       for k, v in c.env.items())
        ex = (env + " " if env else "") + "ballcl " + ex
        msg = " … ".join(c.want).replace("|", "\\|")
        if len(msg) > 90:
            msg = msg[:87] + "..."
        extra = " + build log" if c.build_log else ""
        print(f"| {cls} | `{ex.replace('|', '')}` | {c.rc} | {msg}{extra} |")


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "input"
    work = tempfile.mkdtemp(prefix="ballcl-bad-input.")
    aux = tempfile.mkdtemp(prefix="ballcl-bad-input-aux.")
    try:
        os.chmod(work, 0o755)
        os.chmod(aux, 0o777)
        make_fixtures(work)
        # A copy of the program and kernels that user nobody can reach
        # wherever the build tree is.
        exe = os.path.join(aux, "ballcl")
        shutil.copy(BALLCL, exe)
        os.chmod(exe, 0o755)
        kdir = os.path.join(aux, "cl")
        shutil.copytree(KERNEL_DIR, kdir)
        for root, dirs, files in os.walk(kdir):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
            for f in files:
                os.chmod(os.path.join(root, f), 0o644)
        os.chmod(kdir, 0o755)
        testlib.share_suppressions(aux)
        # The cache folder is the test user's and no one else's: ballcl
        # uses no other (docs/cache.md). The cases run as nobody fail before
        # they reach it.
        cache = os.path.join(aux, "cache")
        os.mkdir(cache, 0o700)
        base_env = dict(os.environ, BALLCL_KERNEL_DIR=kdir, BALLCL_CACHE_DIR=cache,
                        HOME=aux, POCL_CACHE_DIR=os.path.join(aux, "pocl"))
        base_env.pop("BALLCL_DEVICE", None)
        base_env.pop("BALLCL_FAULT", None)

        devices = []
        if mode in ("device", "--markdown"):
            p = subprocess.run([exe, "devices", "--json"], env=base_env, capture_output=True,
                               text=True)
            if p.returncode == 0:
                devices = json.loads(p.stdout)["devices"]
            elif mode == "device":
                print("no OpenCL device: skipped")
                return 77
        if mode == "--markdown":
            markdown(input_cases(work) + device_cases(work, devices))
            return 0
        cases = input_cases(work) if mode == "input" else device_cases(work, devices)
        prefix = nobody_prefix()
        failed = skipped = 0
        for i, case in enumerate(cases, 1):
            label = f"{case.cls}: ballcl {' '.join(repr(a) if not a or ' ' in a else a for a in case.args)}"
            if case.nobody and prefix is None:
                print(f"ok {i} - {label} # SKIP no setpriv to drop root")
                skipped += 1
                continue
            problems, stderr = run_case(case, work, exe, base_env, prefix)
            if problems:
                failed += 1
                print(f"not ok {i} - {label}")
                for pr in problems:
                    print(f"  # {pr}")
                print("  # stderr: " + stderr.strip().replace("\n", "\n  #         ")[:2000])
            else:
                print(f"ok {i} - {label}")
        total = len(cases)
        if mode == "device":
            for label, problems in cache_cases(work, exe, base_env):
                total += 1
                if problems:
                    failed += 1
                    print(f"not ok {total} - {label}")
                    for pr in problems:
                        print(f"  # {pr}")
                else:
                    print(f"ok {total} - {label}: rebuilt, validated, replaced")
        print(f"1..{total}")
        print(f"# {total - failed - skipped} passed, {failed} failed, {skipped} skipped")
        return 1 if failed else 0
    finally:
        for root, dirs, files in os.walk(work):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
            for f in files:
                os.chmod(os.path.join(root, f), 0o644)
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(aux, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
