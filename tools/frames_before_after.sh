#!/bin/bash
# The Python frame loop before and after a change, on this machine's device
# (docs/PYTHON.md, "Frame loops"): builds the module of revision REV (default
# main) in a temporary folder (git archive), then runs tests/python/bench_frames.py of
# this tree with that module and with this build's (build/python),
# alternating, ROUNDS times each. The benchmark runs on a module without
# out= or the process-wide cache too (those rows are left out or measure the
# old call). Meant for an idle machine:
#
#   tools/frames_before_after.sh [REV] [N] [DEVICE] [ROUNDS]
#   (defaults: main 100000 cpu 3)
set -eu
. tools/old_module.sh
frame_args 100000 "$@"
old_module "${1:-main}"
py=/usr/bin/python3
for r in $(seq "$rounds"); do
    for side in before after; do
        side $side
        echo "== $side ($label), round $r"
        PYTHONPATH=$pkg BALLCL_KERNEL_DIR=$cl "$py" "$root/tests/python/bench_frames.py" "$n" --device "$dev" --no-cupy \
            --frames 20 --repeats 5 | sed -n '2,8p'
    done
done
