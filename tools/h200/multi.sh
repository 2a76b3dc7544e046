#!/bin/bash
# Several devices in one run on the NVIDIA GPU host (docs/DESIGN.md, "Several
# devices"; docs/PERFORMANCE.md): the H200 beside the host's CPU through PoCL.
# Run from the project root after `source .gpu/env.sh`, with a built
# build/tools/ballcl:
#
#   tools/h200/multi.sh OUTDIR
#
# Writes into OUTDIR (created):
#   info.txt                 date, ballcl version, device list, CPU model
#   bench_pair.{txt,json}    bench -d GPU,CPU -n 16M,256M: each device alone on
#                            its shard, then the all-devices row (aggregate
#                            ball-steps/s, efficiency against the sum alone)
#   same_{gpu,pair}.json     run of 1000003 random balls on the GPU alone and on
#   same.txt                 both: cmp of the two .npy outputs (must be equal)
#   run_2e9_gpu.json         N = 2*10^9 balls (32 GB, several buffers) on the GPU
#                            alone, validated against the C reference
#   run_2e9_pair.json        the same N over GPU + CPU, split by calibrated rate,
#                            every shard validated; the record of the split
#   status.txt               exit status of every step
# BALLCL_H200_PART=bench runs the bench and the same-output steps only,
# BALLCL_H200_PART=big the two N = 2*10^9 runs only (each fits one session's
# command limit); the default runs all.
# Selectors: BALLCL_H200_DEVICE (default "nvidia") and BALLCL_H200_CPU
# (default "pocl"); BALLCL_H200_BENCH_N (default 16777216,268435456) and
# BALLCL_H200_BIG_N (default 2000000000) change the sizes (to try the script
# on a small machine). The .npy files of the comparison are removed after cmp.
set -u
. "$(dirname "$0")/common.sh"
h200_out "${1:?usage: tools/h200/multi.sh OUTDIR}"
gpu=$dev
cpu=${BALLCL_H200_CPU:-pocl}
pair="$gpu,$cpu"
bench_n=${BALLCL_H200_BENCH_N:-16777216,268435456}
big_n=${BALLCL_H200_BIG_N:-2000000000}
# Nothing tuned (BALLCL_CACHE_DIR): the split is calibrated, and its cost
# is in the records.
{
    grep -m1 'model name' /proc/cpuinfo
    nproc
    free -g
} >>"$out/info.txt" 2>&1

part=${BALLCL_H200_PART:-all}
if [ "$part" != big ]; then
step bench_pair.txt "$ballcl" bench -d "$pair" -n "$bench_n" -r 5
step bench_pair.json "$ballcl" bench -d "$pair" -n "$bench_n" -r 5 --json
tmp=$(mktemp -d)
step same_gpu.json "$ballcl" run -d "$gpu" -n 1000003 -s 1000 --init random --seed 7 \
    --output "$tmp/gpu.npy" --json
step same_pair.json "$ballcl" run -d "$pair" -n 1000003 -s 1000 --init random --seed 7 \
    --output "$tmp/pair.npy" --json
step same.txt cmp "$tmp/gpu.npy" "$tmp/pair.npy"
rm -rf "$tmp"
fi
if [ "$part" != bench ]; then
step run_2e9_gpu.json "$ballcl" run -d "$gpu" -n "$big_n" -s 100 --json
step run_2e9_pair.json "$ballcl" run -d "$pair" -n "$big_n" -s 100 --json
fi
cat "$out/status.txt" >&2
