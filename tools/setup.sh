#!/bin/sh
# Sets up ballcl on a Debian machine and runs it or its tests:
#   tools/setup.sh run    install what is missing, build, run the main job
#   tools/setup.sh test   install what is missing, build, run the test suite
#   tools/setup.sh packages run|test   list the packages run or test installs
# Packages are installed with apt-get, as root or through sudo. Both are
# idempotent: with everything present they only (re)build incrementally.
# Each stage prints one line; what apt-get, meson and ninja print goes to
# build-setup/ (apt.log, meson-setup.log, ninja.log), and a failing stage
# shows the end of its log. The first run takes minutes (packages, build).
set -eu
cd "$(dirname "$0")/.."

usage() {
    echo "usage: tools/setup.sh $1" >&2
    exit 2
}
mode=${1:-run}
list=""
case "$mode" in
run | test) ;;
packages)
    # tools/setup.sh packages run|test: the packages that mode installs,
    # one a line, and nothing else (tests/test_setup.py reads it).
    list=1
    mode=${2:-}
    [ "$mode" = run ] || [ "$mode" = test ] || usage "packages run|test"
    ;;
*) usage "run|test|packages MODE" ;;
esac

# What a run needs: the compiler and build tools, the OpenCL ICD loader and
# headers, PoCL (OpenCL on the CPU) and the libraries ballcl links (SQLite
# for the survey database). The build leaves out the Python module and the
# tests when their packages are missing (meson.build).
packages="build-essential meson ninja-build pkg-config
ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd
libjansson-dev libmd-dev libpng-dev libsqlite3-dev"
# What only the tests use: Mesa's rusticl (mesa-opencl-icd: the tests run it
# on llvmpipe, the CPU), clinfo, MPI, cmocka, the Python module's build and
# checks (python3-venv, python3-pip, python3-build, mypy, and git, which the
# source distribution is made from: docs/PYTHON.md), gnuplot for the
# survey report, Oclgrind, clang and its sanitizer runtime with OpenMP,
# and Chromium, its driver and Selenium, which open the survey report page.
if [ "$mode" = test ]; then
    packages="$packages clinfo mesa-opencl-icd libomp-dev libopenmpi-dev openmpi-bin
libcmocka-dev python3 python3-dev python3-numpy python3-pytest python3-jsonschema python3-venv
python3-pip python3-build git mypy gnuplot-nox oclgrind clang libclang-rt-dev
chromium chromium-driver python3-selenium"
fi

if [ -n "$list" ]; then
    printf '%s\n' $packages
    exit 0
fi

missing=""
for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
log=build-setup/apt.log
mkdir -p build-setup
if [ -n "$missing" ]; then
    # The first run on a fresh machine: a few minutes of downloads. The
    # package manager's own lines go to the log, not the terminal.
    echo "setup: installing$missing"
    echo "setup: this takes minutes the first time; apt-get's output goes to $log"
    # sudo resets the environment, so the frontend is passed through env:
    # a DEBIAN_FRONTEND set before "sudo" would not reach debconf, which
    # would then ask its questions interactively.
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    if ! { $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing; } >"$log" 2>&1; then
        echo "setup: installing packages failed; the last lines of $log:" >&2
        tail -n 20 "$log" >&2
        exit 1
    fi
    echo "setup: packages installed"
else
    echo "setup: every package is installed"
fi

# meson itself runs under /usr/bin/python3, which has numpy from Debian.
# A build configured by 'run' lacks the tests: 'test' configures it again,
# finding the packages it installed.
configure=""
if [ ! -f build/build.ninja ]; then
    echo "setup: configuring build/ (meson)"
    configure=--buildtype=release
elif [ "$mode" = test ]; then
    echo "setup: configuring build/ again (meson: the test packages)"
    configure=--reconfigure
fi
if [ -n "$configure" ] && ! meson setup $configure build >build-setup/meson-setup.log 2>&1; then
    cat build-setup/meson-setup.log >&2
    exit 1
fi
echo "setup: building (ninja -C build; the first build takes a few minutes)"
ninja -C build >build-setup/ninja.log 2>&1 || {
    tail -n 40 build-setup/ninja.log >&2
    exit 1
}

if [ "$mode" = run ]; then
    echo "setup: running build/tools/ballcl run -n 100000"
    exec build/tools/ballcl run -n 100000
fi

# The stages, each with a line before it (docs/testing.md gives their
# times): the suites on PoCL, rusticl and Oclgrind, and the device suites
# again in other machines' shapes (suites 'wide' and 'pocl-basic'); the
# sanitizer build; bounded fuzzing; the installed library.
status=0
echo "setup: [1/4] meson test -C build (every suite on PoCL, rusticl, Oclgrind and other shapes)"
meson test -C build --print-errorlogs --num-processes 2 || status=$?
# Reliability jobs (docs/RELIABILITY.md): the suites again on the ASan+UBSan
# build, then bounded fuzzing of every fuzz target (BALLCL_FUZZ_SECONDS each).
rm -f build-asan/meson-logs/testlog.json build-fuzz/fuzz-results.jsonl build/embed-results.jsonl
echo "setup: [2/4] tools/sanitize.sh (the suites under ASan + UBSan + LSan)"
tools/sanitize.sh || status=1
echo "setup: [3/4] tools/fuzz.sh ${BALLCL_FUZZ_SECONDS:-60} s per fuzz target"
tools/fuzz.sh "${BALLCL_FUZZ_SECONDS:-60}" || status=1
# The library as another program uses it: installed, then examples/embed.c
# built against the installed copy through pkg-config and run.
echo "setup: [4/4] tools/embed_check.sh (install, then examples/embed.c through pkg-config)"
tools/embed_check.sh build || status=1
# One closing line with the counts from the test logs of all of them, the
# names of the failed tests on the line before it (CI reads the last line).
# Each argument is JOB=LOG: the job a log belongs to, in the failed names.
/usr/bin/python3 - build=build/meson-logs/testlog.json build-asan=build-asan/meson-logs/testlog.json \
    fuzz=build-fuzz/fuzz-results.jsonl embed=build/embed-results.jsonl <<'PY'
import json, os, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
failed = []
for arg in sys.argv[1:]:
    job, path = arg.split("=", 1)
    if not os.path.exists(path):
        # A job that ran no test at all left no log: it counts as one failure.
        counts["FAIL"] += 1
        failed.append(f"{job} (no log: the job did not run)")
        continue
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        t = json.loads(line)
        r = t.get("result", "")
        if r in ("OK", "EXPECTEDFAIL"):
            counts["OK"] += 1
        elif r == "SKIP":
            counts["SKIP"] += 1
        else:
            counts["FAIL"] += 1
            failed.append(f"{t.get('name', '?')} ({job})")
if failed:
    print("failed: " + ", ".join(failed))
print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
PY
exit $status
