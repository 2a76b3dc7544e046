#!/usr/bin/env python3
"""Device tests of the binary cache through `ballcl run` and `ballcl cache`
(docs/cache.md): a second run hits; every kind of bad entry is a miss that
rebuilds, replaces the entry and then hits; concurrent processes on an empty
cache all succeed and leave one valid entry; an unwritable folder is a
warning; a changed kernel misses; the folder is 0700; a failed rename leaves
no partial entry. Exits 77 (skip) when there is no OpenCL device."""

import glob
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

BALLCL = os.environ["BALLCL"]
KERNELS = os.environ["BALLCL_KERNEL_DIR"]
# BALLCL_TEST_DEVICE picks the device as in the other device tests; without
# it, ballcl's own default (BALLCL_DEVICE, else the first GPU, ..., CPU).
DEVICE = os.environ.get("BALLCL_TEST_DEVICE", "")
RUN = ["run", "-n", "300", "-s", "3", "--init", "random", "--json"] + (
    ["-d", DEVICE] if DEVICE else [])
failures = []


def ballcl(args, cache, extra_env=None):
    env = dict(os.environ)
    env["BALLCL_CACHE_DIR"] = cache
    env.pop("BALLCL_FAULT", None)
    env.update(extra_env or {})
    p = subprocess.run([BALLCL] + args, env=env, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def run(cache, extra=None, env=None):
    rc, out, err = ballcl(RUN + (extra or []), cache, env)
    if rc != 0:
        raise AssertionError(f"run exited {rc}: {err.strip()}")
    report = json.loads(out)
    if not report["validation"]["passed"]:
        raise AssertionError("run did not validate")
    return report["cache"], err


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}")


def entries(cache):
    return sorted(glob.glob(os.path.join(cache, "program-*.bin")))


def temporaries(cache):
    return glob.glob(os.path.join(cache, ".program-*"))


def listing(cache):
    rc, out, err = ballcl(["cache", "list", "--json"], cache)
    assert rc == 0, err
    return json.loads(out)


def expect_miss_then_hit(cache, what, reason, env=None):
    """A run after damage misses with `reason` (printed once, under -v only)
    and still validates; the entry is replaced, so the next run hits."""
    c, err = run(cache, env=env)
    check(not c["hit"], f"{what}: first run after damage hits")
    reasons = reason if isinstance(reason, tuple) else (reason,)
    check(any(r in c["note"] for r in reasons), f"{what}: note '{c['note']}' lacks {reasons}")
    check(err.strip() == "", f"{what}: stderr without -v is not empty: {err!r}")
    c, err = run(cache, env=None)
    check(c["hit"], f"{what}: the run after the rebuild misses ({c['note']})")
    check(len(entries(cache)) == 1 and not temporaries(cache), f"{what}: not exactly one entry")


def damage(path, fn):
    data = bytearray(open(path, "rb").read())
    data = fn(data)
    with open(path, "wb") as f:
        f.write(bytes(data))


def with_payload(data, payload):
    """A header that checks out (length and checksum right) over payload."""
    head = bytearray(data[:512])
    head[48:56] = len(payload).to_bytes(8, "little")
    head[56:88] = hashlib.sha256(payload).digest()
    return head + payload


def main():
    rc, _, _ = ballcl(["devices"], tempfile.gettempdir())
    if rc == 3:
        print("no OpenCL device: skipped")
        return 77
    top = tempfile.mkdtemp(prefix="test_cache_cli.")
    try:
        cases(top)
    finally:
        for root, dirs, _ in os.walk(top):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o700)
        shutil.rmtree(top)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("all cache CLI checks passed")
    return 0


def cases(top):
    # Created 0700 (and its missing parents), whatever the umask.
    cache = os.path.join(top, "a", "b", "ballcl")
    old = os.umask(0)
    try:
        c, err = run(cache)
    finally:
        os.umask(old)
    check(stat.S_IMODE(os.stat(cache).st_mode) == 0o700, "cache folder mode is not 0700")
    check(stat.S_IMODE(os.stat(os.path.dirname(cache)).st_mode) == 0o700, "parent not 0700")
    check(not c["hit"] and c["stored"], f"first run: hit or not stored: {c}")
    check(len(entries(cache)) == 1, "first run left no single entry")

    # The second run hits; -v says so once.
    c, _ = run(cache)
    check(c["hit"], f"second run misses: {c['note']}")
    rc, _, err = ballcl(RUN + ["-v"], cache)
    check(rc == 0 and "from the binary cache" in err, "-v does not report the hit")

    # `cache list` shows key, device, size and age; list and clear leave
    # the tuned files (tuned/<model>-<key>.json) alone.
    lst = listing(cache)
    check(lst["count"] == 1 and lst["entries"][0]["valid"], f"list: {lst}")
    e = lst["entries"][0]
    check(e["key"] in os.path.basename(entries(cache)[0]), "list key is not the file's")
    check(e["device"] != "" and e["bytes"] > 512 and e["age_s"] >= 0, f"list entry: {e}")
    rc, out, _ = ballcl(["cache", "list"], cache)
    check(rc == 0 and e["key"][:16] in out and "ok" in out, f"list text: {out}")
    rc, out, _ = ballcl(["cache", "path"], cache)
    check(rc == 0 and out.strip() == cache, f"cache path: {out!r}")

    # Every kind of bad entry: a miss that rebuilds, then a hit.
    path = entries(cache)[0]
    damage(path, lambda d: d[:100])
    expect_miss_then_hit(cache, "truncated header", "truncated header")
    damage(path, lambda d: d[: len(d) // 2])
    expect_miss_then_hit(cache, "truncated payload", "truncated payload")
    damage(path, lambda d: bytearray(os.urandom(len(d))))
    expect_miss_then_hit(cache, "garbage", "bad magic")
    damage(path, lambda d: d[:600] + bytes([d[600] ^ 0x55]) + d[601:])
    expect_miss_then_hit(cache, "flipped payload byte", "checksum mismatch")
    damage(path, lambda d: d + b"\0" * 7)
    expect_miss_then_hit(cache, "trailing bytes", "after the payload")
    damage(path, lambda d: with_payload(d, os.urandom(4000)))
    # PoCL refuses it at clCreateProgramWithBinary; a driver that takes any
    # bytes there (NVIDIA's PTX is text) fails at the build instead; one
    # that would crash on it (rusticl) has its header checked first.
    expect_miss_then_hit(cache, "binary the driver refuses",
                         ("the driver refused the binary", "building from the binary failed",
                          "not a binary of this driver"))
    expect_miss_then_hit(cache, "failed build from binary", "building from the binary failed",
                         env={"BALLCL_FAULT": "clBuildProgram:1"})
    damage(path, lambda d: bytearray())
    expect_miss_then_hit(cache, "empty file", "truncated header")

    # A changed kernel source misses, and both entries then hit.
    kdir = os.path.join(top, "cl")
    shutil.copytree(KERNELS, kdir)
    with open(os.path.join(kdir, "seed.cl"), "a") as f:
        f.write("\n/* changed */\n")
    c, _ = run(cache, env={"BALLCL_KERNEL_DIR": kdir})
    check(not c["hit"], "changed source hits")
    check(len(entries(cache)) == 2, "changed source did not add an entry")
    c, _ = run(cache, env={"BALLCL_KERNEL_DIR": kdir})
    check(c["hit"], "changed source misses twice")
    c, _ = run(cache)
    check(c["hit"], "original source misses after a changed one")

    # A source with #include is never cached: the key cannot see the
    # included file.
    idir = os.path.join(top, "cl-include")
    shutil.copytree(KERNELS, idir)
    with open(os.path.join(idir, "extra.h"), "w") as f:
        f.write("#define BALLCL_TEST_EXTRA 1\n")
    with open(os.path.join(idir, "seed.cl")) as f:
        text = f.read()
    with open(os.path.join(idir, "seed.cl"), "w") as f:
        f.write(f'#  include "{os.path.join(idir, "extra.h")}"\n' + text)
    inc_cache = os.path.join(top, "include-cache")
    c, _ = run(inc_cache, env={"BALLCL_KERNEL_DIR": idir})
    check(not c["hit"] and not c["stored"] and "#include" in c["note"], f"#include: {c}")
    check(not os.path.exists(inc_cache) or entries(inc_cache) == [], "#include source cached")

    # Another program's entry under this key's name is a wrong key.
    a, b = entries(cache)
    shutil.copyfile(b, a + ".other")
    os.replace(a + ".other", a)
    c1, _ = run(cache)
    c2, _ = run(cache, env={"BALLCL_KERNEL_DIR": kdir})
    check(not c1["hit"] or not c2["hit"], "an entry under another key's name was used")
    check(("wrong key" in c1["note"]) != ("wrong key" in c2["note"]), "no 'wrong key' note")
    c1, _ = run(cache)
    c2, _ = run(cache, env={"BALLCL_KERNEL_DIR": kdir})
    check(c1["hit"] and c2["hit"], "wrong-key entry was not replaced")

    # --no-cache neither reads nor writes.
    empty = os.path.join(top, "nocache")
    c, _ = run(empty, extra=["--no-cache"])
    check(not c["hit"] and not c["stored"], "--no-cache used the cache")
    check(not os.path.exists(empty), "--no-cache created the folder")

    # `cache clear` removes entries only, never a tuned file.
    tuned_file = os.path.join(cache, "tuned", "seed-0123456789abcdef0123456789abcdef.json")
    os.makedirs(os.path.dirname(tuned_file), exist_ok=True)
    with open(tuned_file, "w") as f:
        f.write("{}")
    rc, out, _ = ballcl(["cache", "clear"], cache)
    check(rc == 0 and "removed 2 cache entries" in out and "tuned configurations, tuned/" in out,
          out)
    check(entries(cache) == [] and os.path.exists(tuned_file),
          "clear removed the wrong files")

    # Eight processes on an empty cache: all succeed, one valid entry, no
    # temporaries; the next run hits.
    conc = os.path.join(top, "concurrent")
    env = dict(os.environ, BALLCL_CACHE_DIR=conc)
    env.pop("BALLCL_FAULT", None)
    procs = [subprocess.Popen([BALLCL] + RUN, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(8)]
    outs = [p.communicate(timeout=300) for p in procs]
    check(all(p.returncode == 0 for p in procs), f"concurrent runs failed: {[o[1] for o in outs]}")
    check(all(json.loads(o[0])["validation"]["passed"] for o in outs if o[0]),
          "a concurrent run did not validate")
    check(len(entries(conc)) == 1 and not temporaries(conc),
          f"concurrent runs left {os.listdir(conc)}")
    lst = listing(conc)
    check(lst["count"] == 1 and lst["entries"][0]["valid"], f"concurrent entry invalid: {lst}")
    c, _ = run(conc)
    check(c["hit"], "no hit after the concurrent runs")

    # A folder that cannot be created (under a plain file: root cannot
    # either): a warning, and the run goes on and validates.
    blocker = os.path.join(top, "file")
    open(blocker, "w").close()
    c, err = run(os.path.join(blocker, "ballcl"))
    check("warning" in err and "cannot create cache folder" in err, f"no warning: {err!r}")
    check(not c["hit"] and not c["stored"], "unusable folder: hit or stored")
    # A read-only folder (only meaningful when not root).
    if os.geteuid() != 0:
        ro = os.path.join(top, "readonly")
        os.mkdir(ro, 0o500)
        c, err = run(ro)
        check("warning" in err and "not writable" in err, f"read-only: no warning: {err!r}")
        check(os.listdir(ro) == [], "read-only folder was written")

    # The rename of a new entry fails: a warning, the run goes on, and no
    # entry and no temporary are left.
    fault = os.path.join(top, "fault")
    c, err = run(fault, env={"BALLCL_FAULT": "rename:1"})
    check("warning: program not stored in the cache" in err, f"rename fault: {err!r}")
    check(not c["stored"], "rename fault: reported as stored")
    # (The launch costs the run measured are kept after it, in launch/.)
    check(entries(fault) == [] and temporaries(fault) == []
          and set(os.listdir(fault)) <= {"launch"}, f"rename fault left {os.listdir(fault)}")
    c, _ = run(fault)
    check(not c["hit"] and c["stored"], "after the fault: no clean miss and store")
    c, _ = run(fault)
    check(c["hit"], "after the fault: no hit")


if __name__ == "__main__":
    sys.exit(main())
