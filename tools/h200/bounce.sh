#!/bin/sh
# The bounce model on a GPU (docs/MODELS.md): is it bit for bit equal to the C
# reference there too, and what does its divergence cost next to the seed
# model? Run from the project root, after `source .gpu/env.sh`, with
# build/tools/ballcl built:
#
#   tools/h200/bounce.sh OUTDIR
#
# Writes into OUTDIR:
#   summary.txt         devices, every command with its exit status and
#                       validation result, and the seed-vs-bounce table
#   run-*.json          the `ballcl run --json` report of each run
#   bounce-gpu.png      a snapshot of 1M balls after 1000 steps on the GPU
#   bounce_numpy.txt    the NumPy comparison (tests/bounce_numpy.py) on the
#                       GPU, when python3 has numpy
# Exit status: 0 when every run validated, 1 otherwise.
set -u
out=${1:?usage: tools/h200/bounce.sh OUTDIR}
mkdir -p "$out"
B=build/tools/ballcl
dev=${BALLCL_DEVICE:-gpu}
export BALLCL_KERNEL_DIR="$PWD/cl"
export BALLCL_CACHE_DIR="${TMPDIR:-/tmp}/ballcl-h200-bounce-cache"
summary="$out/summary.txt"
status=0

{
    echo "# tools/h200/bounce.sh on $(hostname), $(date -u +%Y-%m-%dT%H:%M:%SZ), device '$dev'"
    "$B" devices
    echo
} >"$summary"

# run NAME ARGS...: one validated run, its JSON kept, one summary line.
run() {
    name=$1
    shift
    "$B" run -d "$dev" --json "$@" >"$out/run-$name.json" 2>"$out/run-$name.err"
    rc=$?
    echo "exit $rc: ballcl run -d $dev $*" >>"$summary"
    if [ -s "$out/run-$name.err" ]; then
        sed 's/^/    /' "$out/run-$name.err" >>"$summary"
    else
        rm -f "$out/run-$name.err"
    fi
    [ $rc -eq 0 ] || status=1
}

# Validation: both inits, single and fused launches, parameters at the limits.
run seed-init-k1 --model bounce -n 1000000 -s 1000 --snapshot "$out/bounce-gpu.png"
run seed-init-k16 --model bounce -n 1000000 -s 1000 --steps-per-launch 16
run random-k1 --model bounce --init random -n 1000000 -s 200
run random-k8 --model bounce --init random -n 1000000 -s 200 --steps-per-launch 8
run e0 --model bounce --init random -n 100003 -s 300 --restitution 0
run e1 --model bounce --init random -n 100003 -s 300 --restitution 1
run big-dt --model bounce --init random -n 100003 -s 100 --dt 1e30 --gravity 1
run big-box --model bounce --init random -n 100003 -s 100 --dt 1e10 --gravity -1e20 --box 1e38,1e-30
run local1 --model bounce -n 100003 -s 50 --local 1
run driver --model bounce -n 100003 -s 50 --local driver

# Divergence: seed and bounce side by side, same N, same launch rule.
for n in 1000000 16000000; do
    run "time-seed-$n" --model seed -n $n -s 1000
    run "time-bounce-$n" --model bounce -n $n -s 1000
    run "time-bounce-random-$n" --model bounce --init random -n $n -s 1000
done
{
    echo
    echo "model, init, N, us/step (device), ball-steps/s, validated"
    python3 - "$out" <<'PY'
import glob, json, os, sys
reports = []
for f in glob.glob(os.path.join(sys.argv[1], "run-time-*.json")):
    try:
        reports.append(json.load(open(f)))
    except ValueError:
        print(f"{os.path.basename(f)}: no report")
reports.sort(key=lambda j: (j["balls"], j["model"] != "seed", j["init"]))
for j in reports:
    t = j["timing"]
    print(f'{j["model"]}, {j["init"]}, {j["balls"]}, {t["us_per_step"]:.2f}, '
          f'{t["ball_steps_per_s"]:.3g}, {j["validation"]["passed"]}')
PY
} >>"$summary" 2>&1

# The independent NumPy implementation against the GPU.
if python3 -c "import numpy" 2>/dev/null; then
    BALLCL="$PWD/$B" BALLCL_DEVICE="$dev" python3 tests/bounce_numpy.py >"$out/bounce_numpy.txt" 2>&1
    rc=$?
    echo "exit $rc: tests/bounce_numpy.py (BALLCL_DEVICE=$dev)" >>"$summary"
    [ $rc -eq 0 ] || status=1
else
    echo "skipped: tests/bounce_numpy.py (python3 has no numpy here)" >>"$summary"
fi

echo "overall: $([ $status -eq 0 ] && echo 'all validated' || echo 'FAILURES')" >>"$summary"
cat "$summary"
exit $status
