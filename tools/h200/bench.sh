#!/bin/bash
# Benchmark figures on the NVIDIA GPU host (docs/BENCHMARK.md; docs/BENCHMARK.md).
# Run from the project root after `source .gpu/env.sh`, with a built
# build/tools/ballcl:
#
#   tools/h200/bench.sh OUTDIR
#
# Writes into OUTDIR (created):
#   info.txt                  date, ballcl version, device list
#   bench_100k_untuned.{txt,json}   bench -n 100000 before tuning
#   tune_100k.{txt,json}      tune -n 100000 (the stored record)
#   bench_100k.{txt,json}     bench -n 100000 with the tuned file
#   sweep.{txt,json,csv,png}  bench -n 10000,100000,1000000,16777216,67108864
#   tune_16M.{txt,json}       tune -n 16777216 (fused K up to 1024)
#   fused_16M_K*.json         run -n 16777216 with K = tuned, 100 and 1000
#   bench_64M.{txt,json}      bench -n 67108864 (single steps against copy bandwidth)
#   status.txt                exit status of every step
# The device selector defaults to "nvidia"; BALLCL_H200_DEVICE overrides it.
set -u
. "$(dirname "$0")/common.sh"
h200_out "${1:?usage: tools/h200/bench.sh OUTDIR}"
# Tuned files go with the results (BALLCL_CACHE_DIR), not into the host's cache.

step bench_100k_untuned.txt "$ballcl" bench -d "$dev" -n 100000
step bench_100k_untuned.json "$ballcl" bench -d "$dev" -n 100000 --json
step tune_100k.txt "$ballcl" tune -d "$dev" -n 100000
cp "$BALLCL_CACHE_DIR"/tuned/seed-*.json "$out/tune_100k.json" 2>/dev/null
step bench_100k.txt "$ballcl" bench -d "$dev" -n 100000
step bench_100k.json "$ballcl" bench -d "$dev" -n 100000 --json
step sweep.txt "$ballcl" bench -d "$dev" -n 10000,100000,1000000,16777216,67108864 \
    --csv "$out/sweep.csv"
step sweep.json "$ballcl" bench -d "$dev" -n 100000,16777216 --json
step sweep_plot.txt tools/plot_bench.sh "$out/sweep.csv" "$out/sweep.png" \
    "ballcl bench on $dev: time per step against N"
step tune_16M.txt "$ballcl" tune -d "$dev" -n 16777216
cp "$BALLCL_CACHE_DIR"/tuned/seed-*.json "$out/tune_16M.json" 2>/dev/null
step fused_16M_Ktuned.json "$ballcl" run -d "$dev" -n 16777216 -s 10000 --local tuned --json
step fused_16M_K100.json "$ballcl" run -d "$dev" -n 16777216 -s 10000 --local tuned \
    --steps-per-launch 100 --json
step fused_16M_K1000.json "$ballcl" run -d "$dev" -n 16777216 -s 10000 --local tuned \
    --steps-per-launch 1000 --json
step bench_64M.txt "$ballcl" bench -d "$dev" -n 67108864 -r 5
step bench_64M.json "$ballcl" bench -d "$dev" -n 67108864 -r 5 --json
cat "$out/status.txt" >&2
