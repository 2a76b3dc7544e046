"""The package as a Python user gets it (docs/PYTHON.md, "Install"):
`pip install <clone>` into a fresh virtual environment, then the import
check from another folder; `python3 -m build` makes an sdist and a wheel
(holding the module, the kernels and the stubs; no program, no headers),
the wheel goes into a second fresh environment, and the Python tests run
against it (tests/python/run_pytest.py --installed).

Build isolation fetches the pinned meson-python, meson, ninja and NumPy
(pyproject.toml), and pip fetches NumPy and pytest: with no package index
reachable the test is skipped (77), as a device test is without a device.

The sdist is `meson dist` of the source tree: committed files only.

Usage (tests/meson.build): test_package.py SOURCE_ROOT VERSION
"""
import glob
import os
import socket
import subprocess
import sys
import tempfile
import urllib.parse
import zipfile

SRC, VERSION = sys.argv[1], sys.argv[2]
PYTEST = "pytest==8.3.5"


def skip(why):
    print(f"skip: {why}")
    sys.exit(77)


def fail(what, p=None):
    print(f"FAIL {what}")
    if p is not None:
        print((p.stdout or "")[-6000:])
        print((p.stderr or "")[-6000:])
    sys.exit(1)


def index_reachable():
    """A connection to the index, or to the proxy pip would go through."""
    url = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple")
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    parts = urllib.parse.urlsplit(proxy if proxy and "://" in proxy else url)
    try:
        socket.create_connection((parts.hostname, parts.port or 443), timeout=10).close()
        return True
    except OSError:
        return False


def run(cmd, what, env, cwd, timeout=1500):
    print("+", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        fail(what, p)
    return p


if not index_reachable():
    skip("no Python package index reachable (pip's build isolation needs meson-python)")

# The user's environment, without the build tree's settings: the package
# must find its own kernels and import from its own folder.
env = {k: v for k, v in os.environ.items()
       if k not in ("BALLCL_KERNEL_DIR", "PYTHONPATH", "PYTHONHOME")}
env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"

with tempfile.TemporaryDirectory(prefix="ballcl-package-") as tmp:
    elsewhere = os.path.join(tmp, "elsewhere")
    os.mkdir(elsewhere)

    # 1. pip install <clone> into a fresh environment.
    a = os.path.join(tmp, "venv-clone")
    run([sys.executable, "-m", "venv", a], "python3 -m venv", env, tmp)
    run([f"{a}/bin/python", "-m", "pip", "install", "-q", SRC], "pip install <clone>", env, tmp)
    p = subprocess.run([f"{a}/bin/python", "-c",
                        "import ballcl; print(ballcl.__version__, ballcl.devices()[0]['name'])"],
                       env=env, cwd=elsewhere, capture_output=True, text=True, timeout=300)
    if p.returncode != 0 and "DeviceError" in p.stderr:
        skip(f"no OpenCL device: {p.stderr.strip().splitlines()[-1]}")
    if p.returncode != 0 or not p.stdout.startswith(VERSION + " "):
        fail("import ballcl from another folder after pip install <clone>", p)
    print(f"ok   pip install <clone>; import from another folder: {p.stdout.strip()}")

    # 2. python3 -m build: an sdist and a wheel from it.
    dist = os.path.join(tmp, "dist")
    run([sys.executable, "-m", "build", "--outdir", dist, SRC], "python3 -m build", env, tmp)
    sdists = glob.glob(os.path.join(dist, f"ballcl-{VERSION}.tar.gz"))
    wheels = glob.glob(os.path.join(dist, f"ballcl-{VERSION}-*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        fail(f"python3 -m build made {os.listdir(dist)}: expected one sdist and one wheel")
    names = zipfile.ZipFile(wheels[0]).namelist()
    package = [n for n in names if not n.startswith(f"ballcl-{VERSION}.dist-info/")]
    want = ["ballcl/__init__.py", "ballcl/__main__.py", "ballcl/_reference.py", "ballcl/_core.pyi",
            "ballcl/py.typed",
            "ballcl/build-python.txt", "ballcl/cl/seed.cl",
            "ballcl/cl/bounce.cl", "ballcl/cl/kernels.cl"]
    missing = [w for w in want if w not in package]
    if missing or not any(n.startswith("ballcl/_core.") and n.endswith(".so") for n in package):
        fail(f"the wheel lacks {missing or 'the extension'}: it holds {package}")
    strays = [n for n in package if not n.startswith("ballcl/") or n.endswith((".h", ".pc"))]
    if strays:
        fail(f"the wheel holds more than the package: {strays}")
    print(f"ok   python3 -m build: {os.path.basename(sdists[0])}, {os.path.basename(wheels[0])} "
          f"({len(package)} files of the package)")

    # 3. The wheel in a second fresh environment, and the Python tests on it.
    b = os.path.join(tmp, "venv-wheel")
    run([sys.executable, "-m", "venv", b], "python3 -m venv", env, tmp)
    run([f"{b}/bin/python", "-m", "pip", "install", "-q", wheels[0], PYTEST],
        "pip install the wheel", env, tmp)
    p = subprocess.run([f"{b}/bin/python", os.path.join(SRC, "tests", "python", "run_pytest.py"),
                        "--installed"], env=env, cwd=elsewhere, capture_output=True, text=True,
                       timeout=1500)
    print(p.stdout[-3000:])
    if p.returncode == 77:
        skip("no OpenCL device for the Python tests")
    if p.returncode != 0:
        fail("the Python tests against the installed wheel", p)
    print("ok   the Python tests pass against the wheel installed in a fresh environment")
