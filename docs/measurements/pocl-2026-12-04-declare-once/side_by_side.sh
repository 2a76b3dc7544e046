#!/bin/bash
# Run from the project root: this tree (build/) beside 98a9ea7 built in build-98a/ (its ballcl and cl/).
# Usage: side_by_side.sh OUTDIR
# five interleaved rounds; the call counts of one run each at the end
set -u
D=$1
new() { BALLCL_CACHE_DIR=$D/cache-new build/tools/ballcl "$@"; }
old() { BALLCL_CACHE_DIR=$D/cache-old BALLCL_KERNEL_DIR=build-98a/cl build-98a/ballcl "$@"; }
for r in 1 2 3 4 5; do
  for rev in new old; do
    $rev bench -d cpu -n 100000 -r 5 --repeat-ms 100 --json > $D/bench_${rev}_$r.json 2>/dev/null
    $rev run -d cpu -n 100000 -s 2000 --steps-per-launch 1 --json -q > $D/run_${rev}_$r.json 2>/dev/null || \
    $rev run -d cpu -n 100000 -s 2000 --steps-per-launch 1 --json > $D/run_${rev}_$r.json 2>/dev/null
  done
done
for rev in new old; do
  CLCOUNT_OUT=$D/count_$rev.txt LD_PRELOAD=$PWD/build/tests/libclcount.so $rev run -d cpu -n 10000 -s 2000 --steps-per-launch 1 --json > /dev/null 2>&1
done
