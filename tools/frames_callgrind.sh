#!/bin/bash
# Host instructions of a Python frame before and after a change (docs/PYTHON.md,
# "Frame loops"), counted by callgrind, which a loaded machine does not
# change: builds the module of revision REV in a temporary folder (git
# archive), then runs tools/frame_instructions.py with F = 100 and 200
# frames of N balls through a Context ("ctx") and ballcl.run ("run"), with
# that module and with this build's (build/python). The per-frame figure is
# the difference of the inclusive counts of frame_locked (ctx) or
# bpy_run_py (run) over the 100 extra frames. PoCL with one worker thread.
#
# The count of one module varies by a few percent from one try to the next
# (how often the calling thread polls while PoCL's worker runs), so each side
# is counted ROUNDS times, the sides alternating, and the median is given.
#
#   tools/frames_callgrind.sh REV [N] [DEVICE] [ROUNDS]  (defaults: 1000, cpu, 3)
set -eu
. tools/old_module.sh
frame_args 1000 "$@"
old_module "$1"
count() { # pkg frames way kernels -> inclusive instructions of the frame function
    local fn=frame_locked
    [ "$3" = run ] && fn=bpy_run_py
    PYTHONPATH=$1 BALLCL_KERNEL_DIR=$4 POCL_MAX_PTHREAD_COUNT=1 valgrind --tool=callgrind \
        --callgrind-out-file="$old/cg.out" /usr/bin/python3 "$root/tools/frame_instructions.py" \
        "$n" "$2" "$3" "$dev" >/dev/null 2>&1
    callgrind_annotate --inclusive=yes "$old/cg.out" | grep -E "[:.]$fn( |$)" | head -1 |
        awk '{gsub(",", "", $1); print $1}'
}
echo "frames_callgrind: $n balls, 100 steps a frame, validate=False, device $dev, $(date -u +%FT%TZ)"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
median() { tr ' ' '\n' | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for way in ctx run; do
    declare -A per=([before]="" [after]="")
    for r in $(seq "$rounds"); do
        for side in before after; do
            side $side
            a=$(count "$pkg" 100 $way "$cl")
            b=$(count "$pkg" 200 $way "$cl")
            echo "$way $side ($label), round $r:" \
                "F=100 $a, F=200 $b, per frame $(((b - a) / 100))"
            per[$side]="${per[$side]} $(((b - a) / 100))"
        done
    done
    for side in before after; do
        echo "$way $side: median per frame $(echo ${per[$side]} | median) (of${per[$side]})"
    done
done
