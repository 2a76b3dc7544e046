#!/bin/bash
# The Python frame loop on the NVIDIA GPU host beside CuPy (docs/PYTHON.md,
# "Frame loops"): tests/python/bench_frames.py at N = 100000 and 1000000 on
# the GPU — 20 frames of 100 steps, the state read back after each, median
# of 5 interleaved repeats; rows CuPy single-step and 100-step RawKernels,
# ballcl.Context, Context with out=, ballcl.run from the second call on;
# every final state checked bit for bit against CuPy's and the C reference.
# The module is built for the host's python3 as tools/h200/python.sh does
# (an extension module is tied to one Python minor version). Run from the
# project root after `source .gpu/env.sh`, with the build in build/:
#
#   OUT=DIR tools/h200/frames.sh        (or: tools/h200/frames.sh DIR)
#
# Writes into DIR (created): frames.txt (interpreter, NumPy, CuPy, the
# module's build, both tables, exit statuses) and frames-<N>.json. About a
# minute.
set -u
. "$(dirname "$0")/module.sh"
out=${OUT:-${1:?usage: OUT=DIR tools/h200/frames.sh  (or tools/h200/frames.sh DIR)}}
mkdir -p "$out"
dev=${BALLCL_H200_DEVICE:-gpu}
{
    date -u +%Y-%m-%dT%H:%M:%SZ
    git rev-parse HEAD 2>/dev/null
    "$py" --version
    "$py" -c 'import numpy; print("numpy", numpy.__version__)' || exit 1
    "$py" -c 'import cupy; print("cupy", cupy.__version__)' || echo "cupy: not importable"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>/dev/null
    ballcl_module || exit 1
    for n in 100000 1000000; do
        echo
        echo "\$ $py tests/python/bench_frames.py $n --device $dev --json frames-$n.json"
        PYTHONPATH=$pkg timeout 150 "$py" tests/python/bench_frames.py "$n" --device "$dev" \
            --json "$out/frames-$n.json"
        echo "exit $?"
    done
} >"$out/frames.txt" 2>&1
cat "$out/frames.txt"
