#!/bin/sh
# The sanitizer build (docs/RELIABILITY.md): the library, the program and all
# tests built with AddressSanitizer (which includes LeakSanitizer) and
# UndefinedBehaviorSanitizer in build-asan, then every test suite run there
# except 'oclgrind' (Oclgrind preloads its own runtime, which ASan refuses),
# 'wide' and 'pocl-basic' (the device suites again in other shapes: the
# code paths of the plain suites; docs/testing.md)
# and 'rusticl' (the same suites again on Mesa's rusticl: ballcl's own code
# paths are those PoCL takes, and the host-clock fallback runs on PoCL too,
# through BALLCL_TEST_PROFILING; Mesa's leaks would need suppressions of
# their own, and with the slow unwinder set below, rusticl's threads and
# ASan deadlock on libgcc's unwinder lock: the plain suites' one run across
# PoCL and rusticl in tests/test_multi.py is skipped here for that reason),
# 'package' (pip builds its own uninstrumented copy from the source tree:
# the main build's run of it is the check) and 'cost' (the OpenCL call
# counter is preloaded, and ASan must come first in the list of libraries;
# the calls it counts are the plain build's) and 'fleet' (1000 surveys
# through import and the report page measure scale and time: under the
# sanitizers the report's code runs in survey_page, survey_db and
# survey_edges).
# Any memory error, leak or undefined behaviour in ballcl fails the test it
# happens in; the fault walk thereby also checks every error path for leaks.
#
#   tools/sanitize.sh [meson test options]   e.g. --suite unit
#
# Leaks are suppressed only where proven to be inside the OpenCL runtime:
# tests/lsan.supp says which and why. Uses $CC (default cc: gcc on Debian;
# CC=clang works too, in a fresh build-asan).
set -eu
cd "$(dirname "$0")/.."
dir=build-asan

if [ ! -f "$dir/build.ninja" ]; then
    # -Db_lundef=false: clang's sanitizer runtime leaves symbols to the
    # executable, which -Wl,--no-undefined on the library would refuse.
    meson setup "$dir" --buildtype=debugoptimized \
        -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args="-fno-sanitize-recover=undefined -fno-omit-frame-pointer"
fi
ninja -C "$dir"

# halt_on_error and -fno-sanitize-recover: the first report ends the process
# with an error, so no report can scroll by inside a passing test.
# fast_unwind_on_malloc=0: the driver is built without frame pointers, so the
# fast unwinder stops at its first frame and a leak inside PoCL could not be
# told from one of ours; the slow unwinder gives whole stacks, which
# tests/lsan.supp matches by function name. It costs time only where the
# driver compiles a kernel (about 30 s each under ASan), which PoCL's kernel
# cache (~/.cache/pocl, warmed by the main test suite) mostly avoids.
# intercept_tls_get_addr=0: up to GCC 13 the runtime's __tls_get_addr
# interceptor takes a dynamic TLS block that happens to start 16 bytes past a
# page boundary for a pre-2.25 glibc header and reads the words before it as
# that block's bounds; LeakSanitizer's tracer then dies at exit ("Tracer
# caught signal 11", once or twice in a run of these suites, in bench and under
# mpirun), failing a test that found no leak. Dynamic TLS blocks are still
# scanned through the thread's own pointers to them.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:fast_unwind_on_malloc=0:strict_string_checks=1:check_initialization_order=1:detect_invalid_pointer_pairs=1:intercept_tls_get_addr=0"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

status=0
meson test -C "$dir" --print-errorlogs --num-processes 2 --no-suite oclgrind --no-suite rusticl \
    --no-suite wide --no-suite pocl-basic --no-suite package --no-suite cost --no-suite fleet "$@" ||
    status=$?
if [ "$status" -eq 0 ]; then
    echo "sanitize: every test passed under ASan + UBSan + LSan ($dir)"
else
    echo "sanitize: FAILED (see $dir/meson-logs/testlog.txt)"
fi
exit $status
