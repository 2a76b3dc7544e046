#!/bin/sh
# Sets up ballcl on a Debian machine and runs it or its tests:
#   tools/setup.sh run    install what is missing, build, run the main job
#   tools/setup.sh test   install what is missing, build, run the test suite
# Packages are installed with apt-get, as root or through sudo. Both are
# idempotent: with everything present they only (re)build incrementally.
set -eu
cd "$(dirname "$0")/.."

mode=${1:-run}
case "$mode" in
run | test) ;;
*)
    echo "usage: tools/setup.sh run|test" >&2
    exit 2
    ;;
esac

# Build tools, the OpenCL ICD loader and headers, PoCL (OpenCL on the CPU),
# Mesa's rusticl (mesa-opencl-icd: the tests run it on llvmpipe, the CPU),
# the libraries ballcl links, and what the tests use (python3-venv,
# python3-build and mypy: the Python package checks, docs/PYTHON.md).
packages="build-essential meson ninja-build pkg-config
ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers clinfo pocl-opencl-icd mesa-opencl-icd
libjansson-dev libssl-dev libpng-dev libomp-dev
libopenmpi-dev openmpi-bin
libcmocka-dev python3 python3-dev python3-numpy python3-pytest python3-jsonschema python3-venv python3-build mypy gnuplot-nox oclgrind clang libclang-rt-dev"

missing=""
for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
if [ -n "$missing" ]; then
    echo "setup: installing$missing"
    # sudo resets the environment, so the frontend is passed through env:
    # a DEBIAN_FRONTEND set before "sudo" would not reach debconf, which
    # would then ask its questions interactively.
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi

# meson itself runs under /usr/bin/python3, which has numpy from Debian.
if [ ! -f build/build.ninja ]; then
    meson setup build --buildtype=release
fi
ninja -C build

if [ "$mode" = run ]; then
    exec build/tools/ballcl run -n 100000
fi

status=0
meson test -C build --print-errorlogs --num-processes 2 || status=$?
# Reliability jobs (docs/RELIABILITY.md): the suites again on the ASan+UBSan
# build, then bounded fuzzing of every fuzz target (BALLCL_FUZZ_SECONDS each).
rm -f build-asan/meson-logs/testlog.json build-fuzz/fuzz-results.jsonl build/embed-results.jsonl
tools/sanitize.sh || status=1
tools/fuzz.sh "${BALLCL_FUZZ_SECONDS:-60}" || status=1
# The library as another program uses it: installed, then examples/embed.c
# built against the installed copy through pkg-config and run.
tools/embed_check.sh build || status=1
# One closing line with the counts from the test logs of all of them.
/usr/bin/python3 - build/meson-logs/testlog.json build-asan/meson-logs/testlog.json \
    build-fuzz/fuzz-results.jsonl build/embed-results.jsonl <<'PY'
import json, os, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
# A job that ran no test at all left no log: it counts as one failure.
lines = []
for path in sys.argv[1:]:
    if os.path.exists(path):
        lines += open(path).readlines()
    else:
        lines.append(json.dumps({"result": "FAIL"}))
for line in lines:
    line = line.strip()
    if not line:
        continue
    r = json.loads(line).get("result", "")
    if r in ("OK", "EXPECTEDFAIL"):
        counts["OK"] += 1
    elif r == "SKIP":
        counts["SKIP"] += 1
    else:
        counts["FAIL"] += 1
print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
PY
exit $status
