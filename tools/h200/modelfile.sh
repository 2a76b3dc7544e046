#!/bin/bash
# A model file against the built-in model of an earlier revision
# (docs/PERFORMANCE.md, "Model files"): the seed's update given as
# examples/seed.cl beside that revision's --model seed, and examples/bounce.cl
# beside its --model bounce, run in turn (interleaved, so a slow moment weighs
# on both), each a fused run of N balls at K steps a launch. Run from the
# project root after `source .gpu/env.sh` on the GPU host (or on any device
# with BALLCL_H200_DEVICE), with build/tools/ballcl built here and the earlier
# revision built elsewhere:
#
#   OLD=DIR/ballcl OLD_CL=DIR/cl tools/h200/modelfile.sh [OUTDIR]   (default: $OUT)
#
# N (default 16777216), K (1024), S (steps, default 100 launches), ROUNDS (3).
# Every run writes its final state: the model file's must equal the built-in's
# bit for bit (cmp), from the same initial state (--init random: the seed
# model's random balls for both; --init seed for bounce: its uniform balls in
# the default box, which is a model file's --init seed). Then, once, the third
# model (examples/drag.cl) validated against its C reference, at N/16.
# summary.txt: the rates (ball-steps/s by the device's clock), their medians,
# the ratios model file / built-in, and whether the states were identical.
set -u
out=${1:-${OUT:?usage: OLD=... OLD_CL=... tools/h200/modelfile.sh OUTDIR (or set OUT)}}
old=${OLD:?OLD: the ballcl program of the earlier revision}
old_cl=${OLD_CL:?OLD_CL: the kernel folder of the earlier revision}
. "$(dirname "$0")/common.sh"
h200_out "$out"
step_err=1
n=${N:-16777216}
k=${K:-1024}
s=${S:-$((100 * k))}
rounds=${ROUNDS:-3}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv \
    >>"$out/info.txt" 2>/dev/null

with_new() { BALLCL_CACHE_DIR="$out/cache-new" "$ballcl" "$@"; }
with_old() { BALLCL_CACHE_DIR="$out/cache-old" BALLCL_KERNEL_DIR="$old_cl" "$old" "$@"; }
common=(-d "$dev" -n "$n" -s "$s" --steps-per-launch "$k" --no-validate -q --json)

for r in $(seq 1 "$rounds"); do
    for pair in "seed random examples/seed.cl" "bounce seed examples/bounce.cl"; do
        set -- $pair
        step "$1_builtin_$r.json" with_old run --model "$1" --init "$2" "${common[@]}" \
            --output "$out/$1_builtin_$r.npy"
        step "$1_file_$r.json" with_new run --model-file "$3" --init "$2" "${common[@]}" \
            --output "$out/$1_file_$r.npy"
    done
done
step drag_validated.json with_new run -d "$dev" --model-file examples/drag.cl \
    --reference examples/drag.c -n $((n / 16)) -s 2000 -q --json

python3 - "$out" "$rounds" >"$out/summary.txt" <<'PY'
import filecmp, json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def rate(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)["timing"]["ball_steps_per_s"]
    except (OSError, ValueError, KeyError):
        return None
for model in ("seed", "bounce"):
    b = [rate(f"{model}_builtin_{r}.json") for r in range(1, rounds + 1)]
    m = [rate(f"{model}_file_{r}.json") for r in range(1, rounds + 1)]
    same = all(filecmp.cmp(os.path.join(out, f"{model}_builtin_{r}.npy"),
                           os.path.join(out, f"{model}_file_{r}.npy"), shallow=False)
               for r in range(1, rounds + 1)
               if os.path.exists(os.path.join(out, f"{model}_file_{r}.npy")))
    print(f"{model}: built-in (earlier revision) {b}")
    print(f"{model}: model file (this tree)      {m}")
    if None not in b + m:
        mb, mm = statistics.median(b), statistics.median(m)
        print(f"{model}: medians {mb:.4g} and {mm:.4g} ball-steps/s; model file / built-in = {mm / mb:.4f}")
    print(f"{model}: final states identical: {same}")
try:
    with open(os.path.join(out, "drag_validated.json")) as f:
        v = json.load(f)["validation"]
    print(f"drag: validation performed {v['performed']}, passed {v['passed']}, "
          f"{v['compared']} floats, max {v['max_ulp']} ULP")
except (OSError, ValueError, KeyError) as e:
    print(f"drag: no result ({e})")
PY
rm -f "$out"/*.npy
cat "$out/summary.txt"
