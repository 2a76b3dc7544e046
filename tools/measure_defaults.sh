#!/bin/bash
# The untuned default against the tuned plan and the best of a sweep of
# K x local size x variant (docs/PERFORMANCE.md, "Defaults against the
# best"), for both models, on one device:
#
#   tools/measure_defaults.sh DEVICE_SELECTOR OUTDIR [N,N,...]
#
# N defaults to 1000,10000,100000,1000000,10000000,100000000. For each model
# it runs, in a fresh cache folder (so the launch costs are measured as on a
# first run, and no earlier tuned record counts):
#   1. ballcl tune at TUNE_N balls (the "tuned" row; TUNE=0 skips it);
#   2. ballcl bench --sweep over every N in one process: per N one warm run
#      of each configuration, then REPEATS interleaved runs of S steps
#      (S = 10^4 up to 10^6 balls, 2000 above), device time per step,
#      median; configurations whose launches exceed the budget are not
#      candidates for the best.
# Writes into OUTDIR (created; at most 8 files):
#   info.txt        date, ballcl version, the device list, the settings
#   MODEL.txt       tune's and the sweep's reports (seed.txt, bounce.txt)
#   MODEL.json      the sweep, every configuration (bench --sweep --json)
#   table.md        default / tuned / best per model and N, with the verdict
#                   against the targets (default within 10% of the best for
#                   the seed model, 15% for bounce), also printed
#   status.txt      the exit status of every step
# Environment: BALLCL (default build/tools/ballcl), MODELS ("seed bounce"),
# TUNE (1), TUNE_N (100000), REPEATS (5), SWEEP_K (100,1000,10000; S is
# always added), SWEEP_LOCAL (bench's default: the driver's, auto and
# 32..1024), BALLCL_LAUNCH_BUDGET_MS (the budget, default 50).
set -u
dev=${1:?usage: tools/measure_defaults.sh DEVICE_SELECTOR OUTDIR [N,N,...]}
out=${2:?usage: tools/measure_defaults.sh DEVICE_SELECTOR OUTDIR [N,N,...]}
ns=${3:-1000,10000,100000,1000000,10000000,100000000}
ballcl=${BALLCL:-build/tools/ballcl}
models=${MODELS:-seed bounce}
repeats=${REPEATS:-5}
sweep_k=${SWEEP_K:-100,1000,10000}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" || exit 2
cache=$(mktemp -d "${TMPDIR:-/tmp}/ballcl-defaults.XXXXXX") || exit 2
trap 'rm -rf "$cache"' EXIT
export BALLCL_CACHE_DIR="$cache"
: >"$out/status.txt"
local_args=()
[ -n "${SWEEP_LOCAL:-}" ] && local_args=(--sweep-local "$SWEEP_LOCAL")

{
    date -u +%Y-%m-%dT%H:%M:%SZ
    "$ballcl" --version
    "$ballcl" devices
    echo "device selector: $dev"
    echo "N: $ns; models: $models; repeats: $repeats; sweep K: $sweep_k (and S)"
    echo "sweep local: ${SWEEP_LOCAL:-default}; budget: ${BALLCL_LAUNCH_BUDGET_MS:-50} ms"
    echo "tune: ${TUNE:-1} at N = ${TUNE_N:-100000}"
} >"$out/info.txt" 2>&1

jsons=()
for m in $models; do
    : >"$out/$m.txt"
    if [ "${TUNE:-1}" != 0 ]; then
        echo "== $m: tune" >&2
        "$ballcl" tune -d "$dev" --model "$m" -n "${TUNE_N:-100000}" >>"$out/$m.txt" 2>&1
        echo "$m tune: exit $?" >>"$out/status.txt"
    fi
    echo "== $m: bench --sweep -n $ns" >&2
    "$ballcl" bench --sweep -d "$dev" --model "$m" -n "$ns" --init random -r "$repeats" \
        --sweep-k "$sweep_k" ${local_args[@]+"${local_args[@]}"} --json >"$out/$m.json" 2>>"$out/$m.txt"
    echo "$m sweep: exit $?" >>"$out/status.txt"
    jsons+=("$out/$m.json")
done
python3 "$here/defaults_table.py" "${jsons[@]}" | tee "$out/table.md"
echo "table: exit ${PIPESTATUS[0]}" >>"$out/status.txt"
