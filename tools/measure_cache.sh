#!/bin/bash
# What the binary cache buys (docs/cache.md), measured: the time from creating the
# program to the end of its first launch (cache.program_ms + first_launch_ms
# of `ballcl run --json`), with our cache on and off and the driver's own
# cache on and off, on one device, all in one run of this script.
#
#   tools/measure_cache.sh [-d SEL] [-r REPEATS] [-b BALLCL] [-n BALLS]
#
# Rows (each the median of REPEATS runs; the rows take turns, so noise from
# other work on the machine falls on all of them alike):
#   cold source build   --no-cache, the driver's cache off and its folder empty
#   driver cache        --no-cache, the driver's cache on and warm
#   our cache           our entry warm, the driver's cache off and its folder empty
#   both caches         our entry and the driver's cache warm
#   our cache, miss     our folder empty (a build plus storing the entry), driver off
#   entry stored early  our entry written right after the build instead of after
#                       the first launch (BALLCL_CACHE_STORE=build), driver off
# "Empty" means a fresh folder for every single run: PoCL keeps compiled
# work-group functions under POCL_CACHE_DIR even with POCL_KERNEL_CACHE=0,
# so only a fresh folder makes "off" and "cold" real. The driver's cache is
# PoCL's kernel cache (POCL_KERNEL_CACHE, POCL_CACHE_DIR) or NVIDIA's compute
# cache (CUDA_CACHE_DISABLE, CUDA_CACHE_PATH) or Mesa's shader cache for
# rusticl (MESA_SHADER_CACHE_DISABLE, MESA_SHADER_CACHE_DIR), picked from the
# platform name.
# Prints a Markdown table on stdout; progress on stderr.
set -eu
cd "$(dirname "$0")/.."

sel=cpu
repeats=5
bin=build/tools/ballcl
balls=100000
while getopts "d:r:b:n:h" o; do
    case $o in
    d) sel=$OPTARG ;;
    r) repeats=$OPTARG ;;
    b) bin=$OPTARG ;;
    n) balls=$OPTARG ;;
    *)
        sed -n '2,25p' "$0" >&2
        exit 2
        ;;
    esac
done
[ -x "$bin" ] || {
    echo "measure_cache: no executable '$bin' (build first, or give -b)" >&2
    exit 2
}
run_args=(run -d "$sel" -n "$balls" -s 10 --json)

work=$(mktemp -d "${TMPDIR:-/tmp}/measure_cache.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A value from ballcl's JSON report (keys are unique within it).
json_value() {
    sed -n "s/^ *\"$1\": *\\([^,]*\\),\\{0,1\\}\$/\\1/p" "$2" | head -1
}

# Device and driver kind, from one run that also proves the device works.
"$bin" "${run_args[@]}" --no-cache >"$work/probe.json" 2>"$work/probe.err" || {
    echo "measure_cache: ballcl run -d $sel failed:" >&2
    cat "$work/probe.err" >&2
    exit 3
}
# The device name may hold commas ("llvmpipe (LLVM 15.0.6, 256 bits)").
device=$(sed -n 's/^ *"name": *"\(.*\)",\{0,1\}$/\1/p' "$work/probe.json" | head -1)
platform=$(json_value platform "$work/probe.json" | tr -d '"')
driver=$(json_value driver "$work/probe.json" | tr -d '"')
case "$platform" in
*Portable*) kind=pocl ;;
*NVIDIA*) kind=cuda ;;
rusticl | Clover) kind=mesa ;;
*) kind=other ;;
esac

# driver_env on|off FOLDER: the environment that turns the driver's cache on
# or off and points it at FOLDER.
driver_env() {
    local on=0 off=1
    [ "$1" = on ] && on=1 off=0
    case $kind in
    pocl) echo "POCL_KERNEL_CACHE=$on POCL_CACHE_DIR=$2" ;;
    cuda) echo "CUDA_CACHE_DISABLE=$off CUDA_CACHE_PATH=$2" ;;
    mesa) echo "MESA_SHADER_CACHE_DISABLE=$([ $off = 1 ] && echo true || echo false)" \
        "MESA_SHADER_CACHE_DIR=$2" ;;
    *) echo "" ;;
    esac
}

rows="cold driver ours both miss early"

# measure ROW REPEAT: one run of a row; appends "program first store hit" to
# $work/ROW.txt. Folders named *.warm persist across repeats; the others are
# made fresh for each run.
measure() {
    local row=$1 i=$2 ours drv dstate flags="" extra=""
    case $row in
    cold) ours="$work/ours-none" drv="$work/drv-$row-$i" dstate=off flags=--no-cache ;;
    driver) ours="$work/ours-none" drv="$work/drv-driver.warm" dstate=on flags=--no-cache ;;
    ours) ours="$work/ours-ours.warm" drv="$work/drv-$row-$i" dstate=off ;;
    both) ours="$work/ours-both.warm" drv="$work/drv-both.warm" dstate=on ;;
    miss) ours="$work/ours-miss-$i" drv="$work/drv-$row-$i" dstate=off ;;
    early) ours="$work/ours-early.warm" drv="$work/drv-$row-$i" dstate=off
        extra="BALLCL_CACHE_STORE=build" ;;
    esac
    mkdir -p "$drv"
    # shellcheck disable=SC2046 # word splitting of VAR=value pairs is wanted
    env BALLCL_CACHE_DIR="$ours" $(driver_env $dstate "$drv") $extra \
        "$bin" "${run_args[@]}" $flags >"$work/out.json" 2>"$work/err.txt" || {
        echo "measure_cache: row '$row' failed:" >&2
        cat "$work/err.txt" >&2
        exit 3
    }
    case "$drv" in *.warm) ;; *) rm -rf "$drv" ;; esac
    case "$ours" in *.warm) ;; *) rm -rf "$ours" ;; esac
    echo "$(json_value program_ms "$work/out.json") $(json_value first_launch_ms "$work/out.json")" \
        "$(json_value store_ms "$work/out.json") $(json_value hit "$work/out.json")" >>"$work/$row.txt"
}

# Warm caches first (not counted): one run of each row that keeps a folder.
for row in driver ours both early; do
    measure "$row" 0
    rm -f "$work/$row.txt"
done
for i in $(seq 1 "$repeats"); do
    echo "measure_cache: repeat $i of $repeats" >&2
    for row in $rows; do
        measure "$row" "$i"
    done
done

# stats EXPR FILE: median, min and max of an awk expression over the lines
# of FILE; total_stats FILE, those of program + first launch; median COLUMN FILE
stats() {
    awk "{print $1}" "$2" | sort -g | awk '{v[NR]=$1} END {
        m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2
        printf "%.1f %.1f %.1f", m, v[1], v[NR] }'
}
total_stats() { stats '$1 + $2' "$1"; }
median() { stats "\$$1" "$2" | cut -d' ' -f1; }

cold_total=$(total_stats "$work/cold.txt" | cut -d' ' -f1)
echo "Command: \`tools/measure_cache.sh -d $sel -r $repeats -n $balls\` (each run:" \
    "\`ballcl ${run_args[*]}\`), $(date -u +%Y-%m-%d)"
echo
echo "Device: $device ($platform, driver $driver); driver cache knob: $kind"
echo
echo "| row | our cache | driver cache | program ms | first launch ms | program + first launch ms (min-max) | store ms | hits | vs cold |"
echo "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for row in $rows; do
    f="$work/$row.txt"
    case $row in
    cold) label="cold source build" o="off" d="off, empty" ;;
    driver) label="driver cache" o="off" d="on, warm" ;;
    ours) label="our cache" o="hit" d="off, empty" ;;
    both) label="both caches" o="hit" d="on, warm" ;;
    miss) label="our cache, miss" o="miss (empty)" d="off, empty" ;;
    early) label="entry stored early" o="hit, stored at build" d="off, empty" ;;
    esac
    [ "$kind" = other ] && d="n/a"
    read -r tm tmin tmax <<<"$(total_stats "$f")"
    hits=$(grep -c ' true$' "$f" || true)
    ratio=$(awk -v a="$cold_total" -v b="$tm" 'BEGIN { if (b > 0) printf "%.0fx", a / b; else print "-" }')
    echo "| $label | $o | $d | $(median 1 "$f") | $(median 2 "$f") | $tm ($tmin-$tmax) | $(median 3 "$f") | $hits/$repeats | $ratio |"
done
