#!/usr/bin/env python3
"""Files that are not what they seem, trust across users, interruptions,
partial results and messages: each class an adversarial test once broke
(docs/RELIABILITY.md, "Outputs, special files, users and signals").

Every class is checked through the shared mechanism it belongs to, for each
command that reaches it:

  * outputs (--output, --snapshot, bench --csv, survey --json, the tuned
    file): an existing destination that is not a regular file is refused
    before any work and left as it was; a symbolic link is followed and its
    target replaced (a dangling link, a link to a special file and another
    user's link in a shared folder are refused); every output is committed
    or none (a missing folder for the second, a failed rename of the second);
    names up to the file system's limit work; SIGINT and SIGTERM remove the
    temporaries and exit 130 and 143;
  * special files where ballcl reads (a FIFO or /dev/zero as --input, a FIFO
    as a cache entry or as the tuned file): never read, never a hang;
  * the binary cache across users: a folder that others may write (0777,
    1777), a folder or entry of another user, an entry others may write: not
    used, said once on stderr, the program built from source; an entry whose
    load never returned (a crash in the driver) is rebuilt, not loaded again;
  * tune with a cache folder it cannot write: refused before the sweep;
  * messages: an unknown tuned variant falls back with a warning naming the
    file; an overflow from finite input is an overflow of ball i at step s,
    never a mismatch of identical bits; -d '' is an error; a cache folder
    that is a file says "not a folder"; no "(line -1)"; control characters
    are escaped.

Run as root (CI), the cases that need another user run ballcl as user nobody
through setpriv (or runuser), with the fixtures made by root; run as an
ordinary user, all but the cases that need files of a third user run as
that user. `test_adversarial.py nobody` (the test 'adversarial-nobody') runs
the whole test again as nobody when started as root, so CI covers both.
Exit 77 without an OpenCL device, or as root with no way to drop root.
"""
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import numpy as np

import testlib
from testlib import check

NOBODY = 65534
OTHER = 12345  # a uid that is neither the user nor nobody (only root makes its files)
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def drop_prefix():
    """The command prefix that runs a program as nobody, [] when we are not
    root, None when root cannot drop its rights here."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv:
        return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
    runuser = shutil.which("runuser")
    if runuser:
        return [runuser, "-u", "nobody", "--"]
    return None


class Env:
    """A private world: the program and kernels where nobody can reach them,
    a work folder and a cache folder per user."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="ballcl-adversarial.")
        os.chmod(self.root, 0o755)
        self.exe = os.path.join(self.root, "ballcl")
        shutil.copy(testlib.BALLCL, self.exe)
        os.chmod(self.exe, 0o755)
        self.kdir = os.path.join(self.root, "cl")
        shutil.copytree(testlib.KERNEL_DIR, self.kdir)
        for base, dirs, files in os.walk(self.kdir):
            for d in dirs:
                os.chmod(os.path.join(base, d), 0o755)
            for f in files:
                os.chmod(os.path.join(base, f), 0o644)
        os.chmod(self.kdir, 0o755)
        testlib.share_suppressions(self.root)
        self.counter = 0

    def folder(self, name, mode=0o700, uid=None):
        """A fresh folder under the root, owned by uid (root only)."""
        self.counter += 1
        p = os.path.join(self.root, f"{self.counter}-{name}")
        os.mkdir(p)
        os.chmod(p, mode)
        if uid is not None:
            os.chown(p, uid, uid)
        return p

    def run(self, args, cache, cwd=None, user=None, env=None, timeout=120, background=False):
        """Runs ballcl; user is a command prefix (None: as ourselves)."""
        e = dict(os.environ)
        for k in ("BALLCL_DEVICE", "BALLCL_FAULT", "BALLCL_FAULT_TRACE"):
            e.pop(k, None)
        home = cwd or self.root
        # The survey database in this test's own folder: the one tests/meson.build
        # names is root's, and a run as nobody could not open it.
        e.update({"BALLCL_KERNEL_DIR": self.kdir, "BALLCL_CACHE_DIR": cache, "HOME": home,
                  "POCL_CACHE_DIR": os.path.join(home, ".pocl"),
                  "BALLCL_SURVEY_DB": os.path.join(self.root, "surveys.db")})
        e.update(env or {})
        cmd = (user or []) + [self.exe] + [str(a) for a in args]
        if background:
            return subprocess.Popen(cmd, cwd=cwd or self.root, env=e, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        p = subprocess.run(cmd, cwd=cwd or self.root, env=e, capture_output=True, text=True,
                           timeout=timeout)
        if any(mark in p.stderr for mark in SANITIZER_MARKS):
            check(False, f"ballcl {' '.join(cmd[-len(args):])}: no sanitizer report",
                  p.stderr[-2000:])
        return p

    def close(self):
        for base, dirs, files in os.walk(self.root):
            for d in dirs:
                try:
                    os.chmod(os.path.join(base, d), 0o755)
                except OSError:
                    pass
        shutil.rmtree(self.root, ignore_errors=True)


def describe(p):
    return f"exit {p.returncode}\n     stdout: {p.stdout[-800:]!r}\n     stderr: {p.stderr[-1500:]!r}"


def one_error(p, rc, *words):
    """Exit rc, nothing on stdout, one 'ballcl:' line holding every word."""
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    return (p.returncode == rc and not p.stdout and len(lines) == 1
            and lines[0].startswith("ballcl") and all(w in lines[0] for w in words))


def hidden(folder):
    """Hidden files: temporaries and markers (PoCL's own cache aside)."""
    return sorted(f for f in os.listdir(folder) if f.startswith(".") and f != ".pocl")


def listing(folder):
    return sorted(f for f in os.listdir(folder) if f != ".pocl")


def kind(path):
    st = os.lstat(path)
    for test, name in ((stat.S_ISFIFO, "fifo"), (stat.S_ISCHR, "chr"), (stat.S_ISSOCK, "sock"),
                       (stat.S_ISLNK, "link"), (stat.S_ISDIR, "dir"), (stat.S_ISREG, "file")):
        if test(st.st_mode):
            return name
    return "other"


def special_files(work):
    """Special files to offer as outputs: a FIFO, a socket, a character
    device (a copy of /dev/null's node when root may make one, else
    /dev/null itself, which a user cannot replace anyway)."""
    import socket
    out = {}
    # Named .png, as --snapshot demands; the other outputs take any name.
    f = os.path.join(work, "fifo.png")
    os.mkfifo(f)
    out["a FIFO"] = f
    s = os.path.join(work, "sock.png")
    sk = socket.socket(socket.AF_UNIX)
    sk.bind(s)
    sk.close()
    out["a socket"] = s
    c = os.path.join(work, "null.png")
    try:
        os.mknod(c, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        out["a character device"] = c
    except OSError:
        out["a character device"] = "/dev/null"
    return out


# ---- outputs ---------------------------------------------------------------------

def output_commands(dest):
    """Each command with an output, writing dest."""
    return [
        ("run --output", ["run", "-n", "20", "-s", "2", "--output", dest]),
        ("run --snapshot", ["run", "-n", "20", "-s", "2", "--snapshot", dest]),
        ("bench --csv", ["bench", "-n", "64", "-r", "1", "-s", "2", "--csv", dest]),
        ("survey --json", ["survey", "--quick", "--json", dest]),
    ]


def test_special_outputs(env, cache):
    work = env.folder("special", 0o755)
    specials = special_files(work)
    for what, path in specials.items():
        before = kind(path)
        for label, args in output_commands(path):
            if label == "run --snapshot" and not path.endswith(".png"):
                continue  # /dev/null: --snapshot refuses the name first
            t0 = time.monotonic()
            p = env.run(args, cache, cwd=work, timeout=60)
            took = time.monotonic() - t0
            check(one_error(p, 2, f"cannot write '{path}'", f"it is {what}, not a regular file"),
                  f"{label} {what}: refused, exit 2, one line", describe(p))
            check(kind(path) == before, f"{label} {what}: left as it was ({kind(path)})")
            check(took < 20, f"{label} {what}: refused before any work ({took:.1f} s)")
        check(not hidden(work), f"outputs to {what}: no temporary left", str(hidden(work)))
    # The tuned file: a FIFO in its place is refused before the sweep.
    tcache = env.folder("tcache")
    # A cold cache: the launch costs and every variant built (as nobody, under
    # the sanitizers, on two shared cores this took 163 s once).
    p = env.run(["tune", "-n", "50", "-r", "1", "-s", "2", "--k", "2", "--json"], tcache,
                timeout=400)
    tuned = json.loads(p.stdout)["path"] if p.returncode == 0 else None
    check(tuned is not None, "tune stores a tuned file", describe(p))
    if tuned:
        os.unlink(tuned)
        os.mkfifo(tuned)
        p = env.run(["tune", "-n", "50", "-r", "1", "-s", "2", "--k", "2"], tcache, timeout=60)
        check(one_error(p, 2, "tuned file: cannot write", "it is a FIFO"),
              "tune: a FIFO as the tuned file is refused before the sweep", describe(p))
        check(kind(tuned) == "fifo", "tune: the FIFO is left as it was")
        # run and bench read it: never, and never hang.
        for args in (["run", "-n", "20", "-s", "2", "--local", "tuned"],
                     ["run", "-n", "20", "-s", "2"],
                     ["bench", "-n", "64", "-r", "1", "-s", "2"]):
            p = env.run(args, tcache, timeout=60)
            check(p.returncode == 0 and "is a FIFO, not a regular file" in p.stderr,
                  f"{' '.join(args[:1] + args[5:])}: a FIFO as the tuned file is skipped with a "
                  "warning", describe(p))


def test_symlinks(env, cache, nobody):
    work = env.folder("links", 0o755)
    target = os.path.join(work, "target.npy")
    with open(target, "wb") as f:
        f.write(b"old")
    link = os.path.join(work, "link.npy")
    os.symlink("target.npy", link)
    p = env.run(["run", "-n", "20", "-s", "2", "--output", "link.npy"], cache, cwd=work)
    check(p.returncode == 0, "a symbolic link as --output: followed", describe(p))
    check(os.path.islink(link) and os.readlink(link) == "target.npy",
          "the link stays a link to its target")
    check(np.load(target).shape == (20, 4), "the target holds the new state")
    check(not hidden(work), "no temporary left beside link or target", str(hidden(work)))
    # A target in another folder: the temporary is made beside the target.
    other = env.folder("elsewhere", 0o755)
    far = os.path.join(other, "far.npy")
    with open(far, "wb") as f:
        f.write(b"old")
    os.symlink(far, os.path.join(work, "far-link.npy"))
    p = env.run(["run", "-n", "20", "-s", "2", "--output", "far-link.npy"], cache, cwd=work)
    check(p.returncode == 0 and np.load(far).shape == (20, 4),
          "a link to another folder: the target there is replaced", describe(p))
    os.symlink("nowhere.npy", os.path.join(work, "dangling.npy"))
    p = env.run(["run", "-n", "20", "-s", "2", "--output", "dangling.npy"], cache, cwd=work)
    check(one_error(p, 2, "cannot write 'dangling.npy'", "symbolic link"),
          "a dangling link: refused", describe(p))
    check(not os.path.exists(os.path.join(work, "nowhere.npy")), "nothing made at its target")
    os.mkfifo(os.path.join(work, "f"))
    os.symlink("f", os.path.join(work, "to-fifo.npy"))
    p = env.run(["run", "-n", "20", "-s", "2", "--output", "to-fifo.npy"], cache, cwd=work)
    check(one_error(p, 2, "a symbolic link to a FIFO"), "a link to a FIFO: refused", describe(p))
    if os.geteuid() == 0 and nobody is not None:
        # /tmp-like: a link that nobody planted in a 1777 folder is not
        # followed by root (fs.protected_symlinks); the victim file stays.
        shared = env.folder("shared", 0o1777)
        victim = os.path.join(env.folder("victim", 0o755), "precious")
        with open(victim, "w") as f:
            f.write("precious\n")
        planted = os.path.join(shared, "out.npy")
        os.symlink(victim, planted)
        os.lchown(planted, NOBODY, NOBODY)
        p = env.run(["run", "-n", "20", "-s", "2", "--output", planted], cache)
        check(one_error(p, 2, "symbolic link of another user in a folder everyone may write"),
              "root does not follow nobody's link in a 1777 folder", describe(p))
        with open(victim) as f:
            check(f.read() == "precious\n", "the link's target is untouched")


def test_all_or_none(env, cache):
    work = env.folder("allornone", 0o755)
    p = env.run(["run", "-n", "20", "-s", "2", "--output", "o.npy", "--snapshot",
                 "nodir/x.png"], cache, cwd=work)
    check(one_error(p, 2, "--snapshot: cannot write 'nodir/x.png'"),
          "a second output that cannot be written: exit 2", describe(p))
    check(listing(work) == [], "... and the first is not created either", str(listing(work)))
    # A rename failing for the second output after the first was placed:
    # the first is put back as it was.
    for existing in (False, True):
        for f in ("o.npy", "x.png"):
            path = os.path.join(work, f)
            if existing:
                with open(path, "wb") as fh:
                    fh.write(b"old " + f.encode())
            elif os.path.exists(path):
                os.unlink(path)
        p = env.run(["run", "-n", "20", "-s", "2", "--output", "o.npy", "--snapshot", "x.png"],
                    cache, cwd=work, env={"BALLCL_FAULT": "rename:2"})
        check(p.returncode == 2 and "(rename failed)" in p.stderr,
              f"rename of the second output fails ({'existing' if existing else 'new'} files): "
              "exit 2", describe(p))
        if existing:
            same = all(open(os.path.join(work, f), "rb").read() == b"old " + f.encode()
                       for f in ("o.npy", "x.png"))
            check(same, "... both old files are as they were")
        else:
            check(listing(work) == [], "... neither file is created", str(listing(work)))
        check(not hidden(work), "... no temporary left", str(hidden(work)))


def test_name_length(env, cache):
    work = env.folder("names", 0o755)
    longest = "a" * 251 + ".npy"  # 255 bytes: the limit of most file systems
    p = env.run(["run", "-n", "20", "-s", "2", "--output", longest], cache, cwd=work)
    check(p.returncode == 0 and os.path.exists(os.path.join(work, longest)),
          "a 255-byte file name is written", describe(p))
    check(not hidden(work), "... and no temporary is left", str(hidden(work)))
    too_long = "a" * 252 + ".npy"
    t0 = time.monotonic()
    p = env.run(["run", "-n", "20", "-s", "200000", "--output", too_long], cache, cwd=work)
    check(one_error(p, 2, "--output: cannot write", "File name too long"),
          "a 256-byte name: refused", describe(p))
    check(time.monotonic() - t0 < 15, "... before the run")


def test_signals(env, cache):
    work = env.folder("signals", 0o755)
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
        proc = env.run(["run", "-n", "200000", "-s", "1000000", "--sync", "every",
                        "--output", "out.npy", "--snapshot", "out.png"],
                       cache, cwd=work, background=True)
        # Wait for the temporaries: the outputs are prepared before the run.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(hidden(work)) < 2 and proc.poll() is None:
            time.sleep(0.05)
        had = hidden(work)
        time.sleep(0.5)
        proc.send_signal(sig)
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        check(len(had) == 2, f"{sig.name}: the run made its two temporaries first", str(had))
        check(proc.returncode == code, f"{sig.name}: exit {code}", f"exit {proc.returncode}")
        check(listing(work) == [], f"{sig.name}: no temporary and no output left",
              str(listing(work)))


# ---- special files where ballcl reads --------------------------------------------

def test_special_inputs(env, cache):
    work = env.folder("inputs", 0o755)
    os.mkfifo(os.path.join(work, "in.npy"))
    for path, what in (("in.npy", "a FIFO"), ("/dev/zero", "a character device")):
        p = env.run(["run", "--input", path], cache, cwd=work, timeout=30)
        check(one_error(p, 2, f"'{path}'", "not a regular file"),
              f"--input {path}: refused at once, exit 2", describe(p))
    p = env.run(["survey", "compare", os.path.join(work, "in.npy")], cache, timeout=30)
    check(one_error(p, 2, "not a regular file"), "survey compare of a FIFO: refused", describe(p))
    kd = env.folder("kfifo", 0o755)
    os.mkfifo(os.path.join(kd, "seed.cl"))
    p = env.run(["run", "-n", "20", "-s", "2"], cache, timeout=30,
                env={"BALLCL_KERNEL_DIR": kd})
    check(one_error(p, 2, "cannot read kernel", "not a regular file"),
          "a FIFO as the kernel source: refused", describe(p))


def fill_cache(env, cache, user=None, cwd=None):
    """One run that stores an entry; returns the entry's path."""
    p = env.run(["run", "-n", "37", "-s", "3", "--json"], cache, user=user, cwd=cwd)
    check(p.returncode == 0, "a run fills the cache", describe(p))
    entries = [f for f in os.listdir(cache) if f.startswith("program-")]
    check(len(entries) == 1, "one entry stored", str(os.listdir(cache)))
    return os.path.join(cache, entries[0]) if entries else None


def json_run(env, cache, user=None, cwd=None, extra_env=None):
    p = env.run(["run", "-n", "37", "-s", "3", "--json"], cache, user=user, cwd=cwd,
                env=extra_env)
    try:
        return p, json.loads(p.stdout)
    except ValueError:
        return p, {}


def test_cache_special_entries(env):
    cache = env.folder("cache-special")
    entry = fill_cache(env, cache)
    if not entry:
        return
    os.unlink(entry)
    os.mkfifo(entry)
    p, j = json_run(env, cache)
    check(p.returncode == 0 and "a FIFO, not a regular file" in j.get("cache", {}).get("note", ""),
          "a FIFO in place of an entry: rebuilt from source, no hang", describe(p))
    check(kind(entry) == "file", "... and replaced by a good entry", kind(entry))
    os.unlink(entry)
    os.mkfifo(entry)
    p = env.run(["cache", "list"], cache, timeout=30)
    check(p.returncode == 0 and "a FIFO, not a regular file" in p.stdout,
          "cache list with a FIFO entry: listed as bad, no hang", describe(p))
    p = env.run(["cache", "clear"], cache, timeout=30)
    check(p.returncode == 0, "cache clear with a FIFO entry: no hang", describe(p))
    os.unlink(entry)
    os.symlink("/etc/passwd", entry)
    p, j = json_run(env, cache)
    check(p.returncode == 0 and "symbolic link" in j.get("cache", {}).get("note", ""),
          "a symbolic link in place of an entry: not followed", describe(p))


# ---- trust across users ----------------------------------------------------------------

def untrusted_run(env, cache, what, user=None, cwd=None, words=("not trusted",)):
    """A run with an untrusted cache: exit 0, validated, one warning, built
    from source; the folder gains no entry."""
    before = sorted(os.listdir(cache))
    p, j = json_run(env, cache, user=user, cwd=cwd)
    warnings = [l for l in p.stderr.splitlines() if "warning" in l]
    c = j.get("cache", {})
    check(p.returncode == 0 and j.get("validation", {}).get("passed") and not c.get("hit"),
          f"{what}: the run builds from source and validates", describe(p))
    check(len(warnings) == 1 and all(w in warnings[0] for w in words),
          f"{what}: one warning saying {list(words)}", p.stderr)
    return before, p


def test_cache_folder_modes(env):
    for mode in (0o777, 0o1777, 0o770):
        cache = env.folder(f"cache-{mode:o}", mode)
        before, p = untrusted_run(env, cache, f"a cache folder of mode {mode:o}",
                                  words=("not trusted", f"mode {mode:04o}"))
        check(sorted(os.listdir(cache)) == before, f"mode {mode:o}: nothing stored there")
    cache = env.folder("cache-entry-mode")
    entry = fill_cache(env, cache)
    if entry:
        os.chmod(entry, 0o666)
        untrusted_run(env, cache, "an entry others may write", words=("not trusted", "0666"))
        check(os.stat(entry).st_mode & 0o777 == 0o644, "... replaced by a private one")
    # A bench that builds several programs says it once.
    cache = env.folder("cache-once", 0o777)
    p = env.run(["bench", "-n", "64", "-r", "1", "-s", "2"], cache)
    n = p.stderr.count("not trusted")
    check(p.returncode == 0 and n == 1, f"bench with an untrusted folder: said once ({n})",
          describe(p))


def test_cross_user(env, nobody):
    """As root: the victim is nobody, the other user is root or uid OTHER."""
    # nobody's own private cache folder holding an entry of another user.
    home = env.folder("nobody-home", 0o700, uid=NOBODY)
    cache = os.path.join(home, "cache")
    entry = fill_cache(env, cache, user=nobody, cwd=home)
    if entry:
        check(os.stat(cache).st_uid == NOBODY and os.stat(cache).st_mode & 0o777 == 0o700,
              "nobody's cache folder is created private")
        os.chown(entry, OTHER, OTHER)
        untrusted_run(env, cache, "an entry of another user (uid 12345)", user=nobody,
                      cwd=home, words=("not trusted", "owned by uid 12345"))
        check(os.stat(entry).st_uid == NOBODY, "... replaced by nobody's own entry")
        p, j = json_run(env, cache, user=nobody, cwd=home)
        check(j.get("cache", {}).get("hit"), "... which the next run uses", describe(p))
    # A shared 1777 folder, with an entry planted by another user.
    shared = env.folder("shared-cache", 0o1777)
    home2 = env.folder("nobody-home2", 0o700, uid=NOBODY)
    before, p = untrusted_run(env, shared, "nobody with a 1777 cache folder", user=nobody,
                              cwd=home2, words=("not trusted", "mode 1777"))
    check(sorted(os.listdir(shared)) == before, "... nothing stored there")
    # A folder the victim has not made yet, made first by another user with
    # mode 0777 (the planting attack): refused.
    planted = env.folder("planted", 0o777, uid=OTHER)
    untrusted_run(env, planted, "nobody with a cache folder another user made", user=nobody,
                  cwd=home2, words=("not trusted", "owned by uid 12345"))
    # A folder of another user that nobody may not write, mode 0755: the
    # owner is not nobody (nor root).
    foreign = env.folder("foreign", 0o755, uid=OTHER)
    untrusted_run(env, foreign, "nobody with another user's 0755 folder", user=nobody, cwd=home2,
                  words=("owned by uid 12345",))
    # tune as nobody with a cache folder nobody cannot write: before the sweep.
    rootonly = env.folder("root-cache", 0o755)
    t0 = time.monotonic()
    p = env.run(["tune", "-n", "100000", "-r", "5"], rootonly, user=nobody, cwd=home2)
    took = time.monotonic() - t0
    check(one_error(p, 2, "Permission denied"),
          "tune as nobody with an unwritable cache folder: exit 2 naming the problem", describe(p))
    check(took < 20, f"... before the sweep ({took:.1f} s)")
    # A folder of root, trusted, read by nobody: root is trusted like the user.
    outs = env.folder("nobody-outs", 0o755, uid=NOBODY)
    p = env.run(["run", "-n", "20", "-s", "2", "--output", "o.npy"], rootonly, user=nobody,
                cwd=outs)
    check(p.returncode == 0, "nobody with root's 0755 cache folder: runs", describe(p))


def test_unwritable_tune(env):
    """tune with a cache folder it cannot use says so before the sweep."""
    work = env.folder("tune-file", 0o755)
    afile = os.path.join(work, "afile")
    with open(afile, "w") as f:
        f.write("x\n")
    t0 = time.monotonic()
    p = env.run(["tune", "-n", "100000", "-r", "5"], afile)
    check(one_error(p, 2, f"cannot create cache folder '{afile}", "not a folder"),
          "tune with a file as the cache folder: exit 2, 'not a folder'", describe(p))
    check(time.monotonic() - t0 < 20, "... before the sweep")
    cache = env.folder("tune-777", 0o777)
    p = env.run(["tune", "-n", "100000", "-r", "5"], cache)
    check(one_error(p, 2, "not trusted", "mode 0777"),
          "tune with a cache folder others may write: exit 2 before the sweep", describe(p))


# ---- the in-use marker -----------------------------------------------------------------

def proc_start(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[19]


def test_crash_at_load(env):
    cache = env.folder("cache-crash")
    entry = fill_cache(env, cache)
    if not entry:
        return
    marker = os.path.join(cache, "." + os.path.basename(entry) + ".loading")
    # A load that never returns (the driver crashes in the loader).
    p, _ = json_run(env, cache, extra_env={"BALLCL_FAULT": "clBuildProgram:1:crash"})
    check(p.returncode == -signal.SIGKILL, "a crash while loading the entry kills the run",
          describe(p))
    check(os.path.exists(marker), "... and leaves the in-use marker")
    p, j = json_run(env, cache)
    note = j.get("cache", {}).get("note", "")
    check(p.returncode == 0 and "last load did not finish" in note and not j["cache"]["hit"],
          "the next run does not load it again: rebuilt from source", describe(p))
    check(not os.path.exists(marker), "... the marker is gone")
    p, j = json_run(env, cache)
    check(p.returncode == 0 and j.get("cache", {}).get("hit"), "... the replaced entry is used",
          describe(p))
    # Ctrl-C during a load is no crash: the marker goes with the process.
    # A marker of a live process (this test): loaded as usual, left alone.
    with open(marker, "w") as f:
        f.write(f"{os.getpid()} {proc_start(os.getpid())}\n")
    p, j = json_run(env, cache)
    check(p.returncode == 0 and j.get("cache", {}).get("hit"),
          "a marker of a live process: the entry is loaded", describe(p))
    check(os.path.exists(marker), "... and that process's marker is left")
    # A marker of a process that is gone (a pid, then the same pid with
    # another start time: a reused pid is not the loader).
    child = subprocess.Popen(["true"])
    child.wait()
    for text in (f"{child.pid} 1\n", f"{os.getpid()} 1\n"):
        with open(marker, "w") as f:
            f.write(text)
        p, j = json_run(env, cache)
        check(p.returncode == 0 and "last load did not finish" in j.get("cache", {}).get("note", ""),
              f"a marker '{text.strip()}' of a dead loader: rebuilt", describe(p))
        p, j = json_run(env, cache)
        check(j.get("cache", {}).get("hit"), "... then used", describe(p))
    check(not hidden(cache), "no marker or temporary left", str(hidden(cache)))


# ---- resources ---------------------------------------------------------------------------

def max_rss_kb(env, cache, args):
    """Peak resident memory of one ballcl run, from wait4. Under the
    sanitizers the allocator's quarantine of freed blocks (256 MB by
    default) would count as growth: it is turned off for this measure."""
    extra = {}
    if "ASAN_OPTIONS" in os.environ:
        extra["ASAN_OPTIONS"] = (os.environ["ASAN_OPTIONS"] +
                                 ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0")
    proc = env.run(args, cache, env=extra, background=True)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    out, err = proc.communicate()
    return proc.returncode, usage.ru_maxrss, err


def test_launch_queue(env, cache):
    """Host memory stays flat whatever S: 300000 one-step launches cost no
    more than 2000 (a queue without bound grows by tens of MB here)."""
    base = ["run", "-n", "7", "--steps-per-launch", "1", "--no-validate"]
    rc1, small, err1 = max_rss_kb(env, cache, base + ["-s", "2000"])
    rc2, big, err2 = max_rss_kb(env, cache, base + ["-s", "300000"])
    check(rc1 == 0 and rc2 == 0, "the runs of 2000 and 300000 launches succeed", err1 + err2)
    check(big - small < 4096, f"300000 launches: peak memory {big} KB against {small} KB for "
          "2000 (at most 4 MB more)")


def test_memory_limits(env, cache):
    """One check counts every copy (the CPU device's too) against the
    tightest limit: a cgroup's memory.max, here a fake cgroup tree."""
    fake = env.folder("cgroup", 0o755)
    os.makedirs(os.path.join(fake, "fs", "box"))
    with open(os.path.join(fake, "fs", "box", "memory.max"), "w") as f:
        f.write("104857600\n")  # 100 MiB
    with open(os.path.join(fake, "proc"), "w") as f:
        f.write("0::/box\n")
    cg = {"BALLCL_TEST_PROC_CGROUP": os.path.join(fake, "proc"),
          "BALLCL_TEST_CGROUP_FS": os.path.join(fake, "fs")}
    cpu = testlib.require_device() == "cpu"
    cases = [
        (["run", "-n", "4000000"], "--balls: 4000000 balls need"),
        (["bench", "-n", "4000000", "-r", "1"], "--balls: 4000000 balls need"),
        (["tune", "-n", "4000000", "-r", "1"], "--balls: 4000000 balls need"),
        (["survey", "--quick", "--large", "4000000"], "--large: 4000000 balls need"),
    ]
    if cpu:
        # 2.5M balls are 40 MB: two host copies fit in 100 MiB, three do
        # not, and a CPU device's buffer is the third.
        cases.append((["run", "-n", "2500000"], "(3 copies of the state)"))
    for args, words in cases:
        t0 = time.monotonic()
        p = env.run(args, cache, env=cg)
        check(one_error(p, 2, words, "cgroup limit") and time.monotonic() - t0 < 30,
              f"{' '.join(args)} under a 100 MiB cgroup: refused before any work", describe(p))
    p = env.run(["run", "-n", "2500000", "--no-validate", "-s", "1"], cache, env=cg)
    check(p.returncode == 0, "without validation one copy fewer is needed: it runs", describe(p))
    p = env.run(["survey", "--large", str(10**9)], cache)
    check(one_error(p, 2, "--large: 1000000000 balls need"),
          "survey --large beyond the device: refused at once", describe(p))


# ---- messages ----------------------------------------------------------------------------

def test_messages(env):
    cache = env.folder("cache-msg")
    p = env.run(["tune", "-n", "50", "-r", "1", "-s", "2", "--k", "2", "--json"], cache)
    if check(p.returncode == 0, "tune stores a tuned file", describe(p)):
        path = json.loads(p.stdout)["path"]
        with open(path) as f:
            doc = json.load(f)
        for part in ("single", "fused"):
            if doc.get(part):
                doc[part]["variant"] = "x999"
        with open(path, "w") as f:
            json.dump(doc, f)
        for args in (["run", "-n", "40", "-s", "3", "--local", "tuned"],
                     ["run", "-n", "40", "-s", "1", "--local", "tuned"],
                     ["bench", "-n", "64", "-r", "1", "-s", "2"]):
            p = env.run(args, cache)
            warn = [l for l in p.stderr.splitlines() if "x999" in l]
            check(p.returncode == 0 and len(warn) >= 1 and path in warn[0]
                  and "default rule" in warn[0] and "CL_INVALID_KERNEL_NAME" not in p.stderr,
                  f"{' '.join(args)} with an unknown tuned variant: falls back, warning names "
                  "the file", describe(p))
        with open(path, "w") as f:
            f.write("{not json")
        p = env.run(["run", "-n", "20", "-s", "2"], cache)
        check(p.returncode == 0 and "(line 1)" in p.stderr and "line -1" not in p.stderr,
              "a tuned file that is not JSON: the line is named", describe(p))
        os.unlink(path)
        os.mkdir(path)
        p = env.run(["run", "-n", "20", "-s", "2"], cache)
        check(p.returncode == 0 and "is a folder, not a regular file" in p.stderr
              and "line -1" not in p.stderr, "a folder as the tuned file: no '(line -1)'",
              describe(p))
        os.rmdir(path)
    work = env.folder("overflow", 0o755)
    a = np.zeros((3, 4), "<f4")
    a[1] = [3e38, 0, 3e38, 3e38]  # x + z overflows at the first step
    a[2] = [1, 1, 1, 1]
    np.save(os.path.join(work, "ov.npy"), a)
    p = env.run(["run", "--input", "ov.npy", "-s", "5", "--output", "o.npy"], cache, cwd=work)
    check(one_error(p, 2, "ball 1 overflowed at step 1", "its x became inf",
                    "output not written") and "differ" not in p.stderr,
          "finite input that overflows: ball and step named, no mismatch", describe(p))
    check(not os.path.exists(os.path.join(work, "o.npy")), "... and no output")
    b = np.zeros((2, 4), "<f4")
    b[0] = [0, 0, 1e38, 1e38]  # z grows by w each step: inf at step 3
    np.save(os.path.join(work, "ov3.npy"), b)
    p = env.run(["run", "--input", "ov3.npy", "-s", "10", "--steps-per-launch", "4"], cache,
                cwd=work)
    check(one_error(p, 2, "ball 0 overflowed at step 3", "its x became inf"),
          "an overflow at step 3 inside a 4-step launch: named", describe(p))
    p = env.run(["run", "-d", ""], cache, env={"BALLCL_DEVICE": "cpu"})
    check(one_error(p, 2, "device selector '' is empty"), "-d '': an error, even with "
          "BALLCL_DEVICE set", describe(p))
    p = env.run(["run", "-n", "20", "-s", "2"], cache, env={"BALLCL_DEVICE": ""})
    check(p.returncode == 0, "BALLCL_DEVICE='' counts as unset", describe(p))
    afile = os.path.join(work, "afile")
    with open(afile, "w") as f:
        f.write("x\n")
    p = env.run(["run", "-n", "20", "-s", "2"], afile)
    check(p.returncode == 0 and f"cannot create cache folder '{afile}': it exists and is a "
          "regular file, not a folder" in p.stderr, "a file as the cache folder: 'not a folder'",
          describe(p))
    check("File exists" not in p.stderr, "... not 'File exists'", p.stderr)
    p = env.run(["run", "-n", "20", "-s", "2"], os.path.join(afile, "sub"))
    check(p.returncode == 0 and "'" + afile + "' exists and is not a folder" in p.stderr,
          "a file above the cache folder: 'not a folder'", describe(p))
    for args, word in ((["run", "-d", "\x1b[31mred\x07"], "\\x1b[31mred\\x07"),
                       (["\x1b]0;title\x07"], "\\x1b]0;title\\x07"),
                       (["run", "-n", "5", "-s", "1", "--output", "a\nb/x.npy"], "a\\x0ab/x.npy"),
                       (["run", "--input", "\rin.npy"], "\\x0din.npy"),
                       (["cache", "\x1bx"], "\\x1bx")):
        p = env.run(args, cache, cwd=work)
        raw = any(c in p.stderr.rstrip("\n") for c in "\x1b\x07\r") or \
            p.stderr.rstrip("\n").count("\n") > 0
        check(p.returncode == 2 and word in p.stderr and not raw,
              f"control characters in {args!r}: escaped, one line", describe(p))


def as_nobody():
    """The whole test again as user nobody: root copies the test, the
    program and the kernels where nobody can read them and runs the test
    through setpriv (or runuser). Skipped (77) when not root: the plain
    test then already runs unprivileged."""
    if os.geteuid() != 0:
        print("skip: not root: 'adversarial' itself runs as this unprivileged user")
        return testlib.SKIP
    prefix = drop_prefix()
    if prefix is None:
        print("skip: running as root with neither setpriv nor runuser to run as nobody")
        return testlib.SKIP
    top = tempfile.mkdtemp(prefix="ballcl-adversarial-nobody.")
    try:
        os.chmod(top, 0o755)
        for f in ("test_adversarial.py", "testlib.py"):
            shutil.copy(os.path.join(testlib.HERE, f), os.path.join(top, f))
        shutil.copy(testlib.BALLCL, os.path.join(top, "ballcl"))
        shutil.copytree(testlib.KERNEL_DIR, os.path.join(top, "cl"))
        for base, dirs, files in os.walk(top):
            for d in dirs:
                os.chmod(os.path.join(base, d), 0o755)
            for f in files:
                os.chmod(os.path.join(base, f), 0o755)
        testlib.share_suppressions(top)
        home = os.path.join(top, "home")
        os.mkdir(home, 0o700)
        os.chown(home, NOBODY, NOBODY)
        env = dict(os.environ, BALLCL=os.path.join(top, "ballcl"),
                   BALLCL_KERNEL_DIR=os.path.join(top, "cl"), HOME=home,
                   BALLCL_CACHE_DIR=os.path.join(home, "cache"),
                   POCL_CACHE_DIR=os.path.join(home, "pocl"))
        print(f"running the test as nobody: {' '.join(prefix)}")
        p = subprocess.run(prefix + [sys.executable, os.path.join(top, "test_adversarial.py")],
                           env=env, cwd=home, timeout=900)
        return p.returncode
    finally:
        shutil.rmtree(top, ignore_errors=True)


def main():
    if not testlib.BALLCL:
        print("BALLCL is not set: run this through 'meson test'")
        return 1
    if sys.argv[1:] == ["nobody"]:
        return as_nobody()
    testlib.require_device()
    nobody = drop_prefix()
    if nobody is None:
        print("skip: running as root with neither setpriv nor runuser to run as nobody")
        return testlib.SKIP
    env = Env()
    try:
        cache = env.folder("cache")
        test_special_outputs(env, cache)
        test_symlinks(env, cache, nobody)
        test_all_or_none(env, cache)
        test_name_length(env, cache)
        test_signals(env, cache)
        test_special_inputs(env, cache)
        test_cache_special_entries(env)
        test_cache_folder_modes(env)
        test_unwritable_tune(env)
        test_crash_at_load(env)
        test_messages(env)
        test_launch_queue(env, cache)
        test_memory_limits(env, cache)
        if os.geteuid() == 0:
            test_cross_user(env, nobody)
        else:
            print("note: not root: the cases with files of other users are not run "
                  "(every other case ran as this unprivileged user)")
    finally:
        env.close()
    testlib.finish()


if __name__ == "__main__":
    sys.exit(main())
