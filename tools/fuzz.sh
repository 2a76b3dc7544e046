#!/bin/sh
# Bounded fuzzing (docs/RELIABILITY.md): builds the libFuzzer targets
# tests/fuzz/fuzz_<name>.c with clang (ASan + UBSan) in build-fuzz and runs
# each for SECONDS, starting from its seed corpus tests/fuzz/corpus/<name>/.
#
#   tools/fuzz.sh [SECONDS [NAME...]]     default: 60 seconds, every target
#
# A crash, a sanitizer report, a broken invariant, a timeout (10 s) or an
# input needing over 2 GiB fails the run; the input is saved as
# build-fuzz/artifacts/<name>-crash-... Replay it with
#   build/tests/fuzz/replay_<name> FILE
# and, once fixed, copy it into tests/fuzz/corpus/<name>/ so that every
# build replays it from then on. One line per target goes to
# build-fuzz/fuzz-results.jsonl for tools/setup.sh's closing count.
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-60}
[ $# -gt 0 ] && shift
case "$seconds" in
'' | *[!0-9]*)
    echo "usage: tools/fuzz.sh [SECONDS [NAME...]]" >&2
    exit 2
    ;;
esac
targets="$*"
[ -n "$targets" ] || targets=$(printf '%s\n' tests/fuzz/fuzz_*.c | sed 's|^tests/fuzz/fuzz_||; s|\.c$||')

dir=build-fuzz
if [ ! -f "$dir/build.ninja" ]; then
    CC=clang meson setup "$dir" --buildtype=debugoptimized -Dfuzz=true
fi
# shellcheck disable=SC2046,SC2086 # one word per target
ninja -C "$dir" $(printf 'tests/fuzz/fuzz_%s ' $targets)

results="$dir/fuzz-results.jsonl"
: >"$results"
mkdir -p "$dir/artifacts"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
failed=0
count=$(echo $targets | wc -w)
i=0
for t in $targets; do
    i=$((i + 1))
    # A line before each target, so a log shows what the next minute is.
    echo "fuzz: [$i/$count] $t: running for ${seconds} s (log $dir/fuzz-$t.log)"
    # New inputs go to a scratch corpus; the seeds in the repository stay as
    # they are (read-only second folder).
    work="$dir/corpus-work/$t"
    mkdir -p "$work"
    log="$dir/fuzz-$t.log"
    rc=0
    "$dir/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t-" \
        "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    if [ "$rc" -eq 0 ]; then
        echo "fuzz: $t: OK, ${runs:-?} inputs in ${seconds} s"
        result=OK
    else
        failed=1
        result=FAIL
        echo "fuzz: $t: FAILED (exit $rc); the last lines of $log:"
        tail -n 40 "$log"
        for f in "$dir/artifacts/$t-"*; do
            [ -e "$f" ] && echo "fuzz: saved input $f"
        done
    fi
    printf '{"name": "fuzz %s", "result": "%s"}\n' "$t" "$result" >>"$results"
done
exit $failed
