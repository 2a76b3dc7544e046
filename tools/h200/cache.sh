#!/bin/bash
# Binary cache figures on the NVIDIA GPU host (issue 3, docs/cache.md). Run from
# the project root after `source .gpu/env.sh`, with a built build/tools/ballcl:
#
#   tools/h200/cache.sh OUTDIR
#
# Writes into OUTDIR:
#   cache-nvidia.md  tools/measure_cache.sh on the NVIDIA GPU: cold source build,
#                    NVIDIA's compute cache (CUDA_CACHE_DISABLE=0/1), our cache,
#                    both, a miss, and an entry stored right after the build
#   cache-pocl.md    the same on PoCL (the host's CPUs), POCL_KERNEL_CACHE=0/1
#   cache-tests.txt  tests/test_cache_cli.py on the NVIDIA device: hits, every
#                    kind of bad entry (a PTX the driver refuses included),
#                    8 concurrent processes, unwritable folder, rename fault
#   devices.txt      `ballcl devices`, for the record
#   *.err            stderr of each step (progress, and any failure)
set -u
out=${1:?usage: tools/h200/cache.sh OUTDIR}
cd "$(dirname "$0")/../.."
. tools/h200/common.sh
mkdir -p "$out"
repeats=${REPEATS:-7}
status=0

"$ballcl" devices >"$out/devices.txt" 2>&1 || status=3

# The NVIDIA device: the first selector that names exactly one device.
gpu=$(pick h200 nvidia gpu)
if [ -z "$gpu" ]; then
    echo "no NVIDIA device found (tried h200, nvidia, gpu)" | tee "$out/cache-nvidia.md"
    status=3
else
    tools/measure_cache.sh -d "$gpu" -r "$repeats" >"$out/cache-nvidia.md" \
        2>"$out/cache-nvidia.err" || status=3
    if command -v python3 >/dev/null; then
        BALLCL="$ballcl" BALLCL_KERNEL_DIR=cl BALLCL_DEVICE="$gpu" \
            python3 tests/test_cache_cli.py >"$out/cache-tests.txt" 2>&1 || status=1
    else
        echo "python3 missing: cache CLI tests not run" >"$out/cache-tests.txt"
    fi
fi

tools/measure_cache.sh -d cpu -r "$repeats" >"$out/cache-pocl.md" 2>"$out/cache-pocl.err" ||
    status=3

cat "$out"/cache-*.md
exit $status
