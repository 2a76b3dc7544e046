"""What files and drivers say reaches a terminal escaped (docs/RELIABILITY.md
classes 5 and 7): control characters (C0, DEL, C1) and bytes that are no
UTF-8 are shown as \\xNN; printable UTF-8 stays as it is. And files whose
size the kernel does not know (/proc) are read to their end, so what is
said about them is true.

A survey file whose device name, type, extensions, model, transfer method
and variant hold an OSC title sequence, a clear-screen sequence and C1
controls goes through `survey compare`; nothing of it may reach stdout or
stderr raw. No device is needed.
"""
import json
import os

import testlib
from testlib import check

tmp = testlib.tempdir()
SURVEY = os.path.join(testlib.SOURCE_ROOT, "docs", "surveys", "pocl-amd-epyc.json")

# ESC ] 0 ; title BEL (sets the title), ESC [ 2 J (clears the screen), C1 NEL
# and CSI as UTF-8 (U+0085, U+009B), DEL.
EVIL = "\u001b]0;pwned\u0007\u001b[2J\u0085\u009b31m\u007f"


def raw_controls(data):
    """What in data would reach a terminal raw: bytes that are no UTF-8, C0
    controls but the newline, DEL and C1 controls. Empty when clean."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as ex:
        return [f"not UTF-8 at byte {ex.start}: {data[ex.start:ex.start + 4]!r}"]
    return [hex(ord(c)) for c in text
            if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f]


def run_bytes(args):
    """ballcl with args; stdout and stderr as bytes."""
    import subprocess
    env = dict(os.environ, BALLCL_KERNEL_DIR=testlib.KERNEL_DIR)
    p = subprocess.run([testlib.BALLCL] + args, env=env, capture_output=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


with open(SURVEY) as f:
    doc = json.load(f)
dev = doc["devices"][0]
dev["identity"]["name"] = "Gerät \u2014 " + EVIL
dev["identity"]["type"] = "cpu" + EVIL
dev["limits"]["extensions"] = ["cl_khr_fp64", "cl_khr_x" + EVIL]
dev["measured"]["model"] = "m" + EVIL
dev["measured"]["transfer"]["method"] = "pinned" + EVIL
dev["measured"]["fused"]["variant"] = "x32" + EVIL
evil = os.path.join(tmp, "evil.json")
with open(evil, "w") as f:
    json.dump(doc, f)

rc, out, err = run_bytes(["survey", "compare", evil])
check(rc == 0, "survey compare of a file with control characters in its strings: exit 0",
      err.decode(errors="replace"))
check(not raw_controls(out) and not raw_controls(err),
      "survey compare: no control character or C1 byte reaches the terminal raw",
      repr((raw_controls(out) + raw_controls(err))[:10]))
text = out.decode()
# (the table shows extensions without their "cl_khr_")
for field in ("Gerät \u2014 ", "cpu", ", x", "pinned", "x32"):
    check(field + "\\x1b]0;pwned\\x07\\x1b[2J\\xc2\\x85\\xc2\\x9b31m\\x7f" in text,
          f"survey compare: '{field}...' shown with each control as \\xNN, UTF-8 kept")
check("m\\x1b]0;pwned" in text, "survey compare: the model field escaped")

# A name that is no UTF-8 at all (a lone 0x9b is CSI to some terminals): the
# file is refused or shown, but none of its bytes reach the terminal raw.
raw = json.dumps(doc, ensure_ascii=False).encode().replace("Gerät".encode(), b"Ger\x9b\xe4t")
bad = os.path.join(tmp, "bad-utf8.json")
with open(bad, "wb") as f:
    f.write(raw)
rc, out, err = run_bytes(["survey", "compare", bad])
check(not raw_controls(out) and not raw_controls(err) and b"\x9b" not in out + err,
      "survey compare of a file that is no UTF-8: no byte of it on the terminal raw",
      repr((raw_controls(out) + raw_controls(err))[:10]) + repr(err[:300]))

# A file name with control characters, in the message about it.
weird = os.path.join(tmp, "a\u001b[2Jb\u0085.json")
with open(weird, "w") as f:
    f.write("{")
rc, out, err = run_bytes(["survey", "compare", weird])
check(rc == 2 and not raw_controls(err) and b"a\\x1b[2Jb\\xc2\\x85.json" in err,
      "a survey file name with ESC and C1: escaped in the message", repr(err))

# /proc files report size 0: read to their end, the message says what is there.
rc, out, err = run_bytes(["survey", "compare", "/proc/self/status"])
check(rc == 2 and b"not valid JSON" in err and b"end of file" not in err
      and b"near 'Name'" in err,
      "survey compare /proc/self/status: read to its end ('near 'Name'', not 'end of file')",
      err.decode(errors="replace"))
rc, out, err = run_bytes(["run", "--input", "/proc/self/status"])
check(rc == 2 and b"file is empty" not in err and b"no size" in err,
      "run --input /proc/self/status: not called empty", err.decode(errors="replace"))

testlib.finish()
