"""examples/embed.c, the program that embeds ballcl through its installed
header alone, built as C (embed) and as C++ (embed_cpp). Arguments: mode,
then the program's path ("none": the build found no C++ compiler, and the
test skips with 77 rather than passing).
  link  it links and runs without a device: the library's version and the
        header's agree, and a bad N is exit 2 with a one-line message;
  run   N balls for S steps on the default device, bit-identical to the C
        reference (exit 0), or 77 when there is no OpenCL device."""
import re
import subprocess
import sys

mode, exe = sys.argv[1], sys.argv[2]
if exe == "none":
    print("skip no C++ compiler: examples/embed.c was not built as C++")
    sys.exit(77)
failed = False


def check(ok, what, detail=""):
    global failed
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failed = True
        print("     " + detail.replace("\n", "\n     "))


if mode == "link":
    r = subprocess.run([exe, "", "0"], capture_output=True, text=True, timeout=60)
    detail = f"exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    m = re.match(r"embed: libballcl (\S+) \(header (\S+)\)\n", r.stderr)
    check(m is not None and m.group(1) == m.group(2),
          "bcl_version() is the header's BALLCL_VERSION", detail)
    check(r.returncode == 2 and r.stdout == "" and
          r.stderr.splitlines()[-1:] == ["embed: N must be a whole number from 1 to 67108864"],
          "a bad N: exit 2, one line", detail)
else:
    r = subprocess.run([exe, "", "3001", "40"], capture_output=True, text=True, timeout=600)
    if r.returncode == 77:
        print("skip no OpenCL device: " + r.stderr.strip())
        sys.exit(77)
    check(r.returncode == 0 and "bit-identical to the C reference" in r.stdout,
          "3001 balls, 40 steps on the default device, bit-identical", 
          f"exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}")
sys.exit(1 if failed else 0)
