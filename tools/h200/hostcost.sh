#!/bin/bash
# The host's cost per launch on the NVIDIA GPU host (docs/PERFORMANCE.md, "The
# host's cost per launch"): this tree's ballcl and an earlier revision's, side
# by side in one sitting, with the floor beside them. Run from the project root
# after `source .gpu/env.sh`, with build/tools/ballcl and build/tools/probe/ballcl-floor
# built, and the earlier revision built elsewhere:
#
#   OLD=DIR/ballcl OLD_CL=DIR/cl tools/h200/hostcost.sh [OUTDIR]   (default: $OUT)
#
# OLD_CL is that revision's kernel folder. Three rounds, each running both
# revisions in turn (interleaved, so a slow moment weighs on both):
#   bench -n 100000,1000000 -r 5 --repeat-ms 100 --json   rows batched, local=auto (and floor)
#   run -n 100000 -s 2000 --steps-per-launch 1 --json
#   run -n 1000000 -s 1000 --steps-per-launch 1 --json
#   ballcl-floor at 10^5 and 10^6 with the floor row's kernel and local size
#   (this tree's round only: it is the same program for both)
# then, once, tune -n 16777216 and the fused run at 16M (K = 1024, tuned local)
# of this tree. Every output is kept in OUTDIR; summary.txt has the medians of
# the three rounds and the ratios the issue's targets name; status.txt the exit
# status of every step.
set -u
out=${1:-${OUT:?usage: OLD=... OLD_CL=... tools/h200/hostcost.sh OUTDIR (or set OUT)}}
old=${OLD:?OLD: the ballcl program of the earlier revision}
old_cl=${OLD_CL:?OLD_CL: the kernel folder of the earlier revision}
. "$(dirname "$0")/common.sh"
h200_out "$out"
step_err=1
new=$ballcl
floor=build/tools/probe/ballcl-floor
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv \
    >>"$out/info.txt" 2>/dev/null

# Each revision keeps its own cache (binary, launch costs, tuned record).
with_new() { BALLCL_CACHE_DIR="$out/cache-new" "$new" "$@"; }
with_old() { BALLCL_CACHE_DIR="$out/cache-old" BALLCL_KERNEL_DIR="$old_cl" "$old" "$@"; }

for r in 1 2 3; do
    for rev in new old; do
        step "bench_${rev}_$r.json" with_$rev bench -d "$dev" -n 100000,1000000 -r 5 --repeat-ms 100 --json
        step "run1e5_${rev}_$r.json" with_$rev run -d "$dev" -n 100000 -s 2000 \
            --steps-per-launch 1 --json
        step "run1e6_${rev}_$r.json" with_$rev run -d "$dev" -n 1000000 -s 1000 \
            --steps-per-launch 1 --json
    done
    # The floor row's launch, rebuilt without the library.
    sel=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"]["selector"])' \
        "$out/bench_new_$r.json" 2>/dev/null || echo 0:0)
    for n in 100000 1000000; do
        local=$(python3 - "$out/bench_new_$r.json" $n <<'EOF' 2>/dev/null || echo 0
import json, sys
j = json.load(open(sys.argv[1]))
s = [x for x in j["sweep"] if x["balls"] == int(sys.argv[2])][0]
c = [x for x in s["rows"] if x["name"] == "floor"][0]["config"]
print(0 if c["local"] == "driver" else c["local"])
EOF
        )
        step "minimal${n}_$r.txt" "$floor" -d "$sel" -f cl/seed.cl -f cl/kernels.cl \
            -D 'BCL_NAME(s)=seed##s' -D BCL_PARAMS= -D BCL_ARGS= -k seed_step -n $n \
            -s $((n == 100000 ? 20000 : 4000)) -l "$local" -r 9
    done
done
step tune_16M.txt with_new tune -d "$dev" -n 16777216
step fused_16M.json with_new run -d "$dev" -n 16777216 -s 10000 --steps-per-launch 1024 \
    --local tuned --json

# The longest launch a run reports, against a profiling run of the same
# command (tests/clcount with CLCOUNT_PROFILE=1: an event on every launch).
counter=build/tests/libclcount.so
if [ -f "$counter" ]; then
    i=0
    for args in "-n 100000 -s 2000 --steps-per-launch 1" "-n 1000000 -s 1000 --steps-per-launch 1" \
        "-n 16777216 -s 10000 --steps-per-launch 1024 --local tuned"; do
        i=$((i + 1))
        # shellcheck disable=SC2086
        CLCOUNT_OUT="$out/longest_$i.counts" CLCOUNT_PROFILE=1 LD_PRELOAD="$PWD/$counter" \
            step "longest_$i.json" with_new run -d "$dev" $args --json
    done
fi

python3 - "$out" >"$out/summary.txt" 2>&1 <<'EOF'
import json, os, statistics, sys
out = sys.argv[1]

def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")

def bench_row(rev, r, n, row):
    j = load(f"bench_{rev}_{r}.json")
    if not j:
        return None
    for s in j["sweep"]:
        if s["balls"] == n:
            for x in s["rows"]:
                if x["name"] == row and x["validated"]:
                    return x["us_per_step"]["median"]
    return None

def run_us(rev, r, n, key):
    j = load(f"run1e{5 if n == 100000 else 6}_{rev}_{r}.json")
    return j["timing"][key] if j and j["validation"].get("passed", True) else None

def minimal(r, n):
    try:
        for line in open(os.path.join(out, f"minimal{n}_{r}.txt")):
            if line.startswith("us_per_step_median "):
                return float(line.split()[1])
    except OSError:
        pass
    return None

R = (1, 2, 3)
print("us per step, median of 3 interleaved rounds (each round: this tree, then the earlier)")
print(f"{'figure':44} {'this tree':>10} {'earlier':>10} {'floor':>10} {'minimal':>10}"
      f" {'/floor':>7} {'/earlier':>8}")
bad = []
for n in (100000, 1000000):
    fl = med(bench_row("new", r, n, "floor") for r in R)
    mi = med(minimal(r, n) for r in R)
    rows = [(f"bench -n {n} {row}", bench_row, row) for row in ("batched", "local=auto")]
    rows += [(f"run -n {n} --steps-per-launch 1 ({what})", run_us, key)
             for what, key in (("device", "us_per_step"), ("wall", "wall_us_per_step"))]
    for label, figure, key in rows:
        x, y = (med(figure(rev, r, n, key) for r in R) for rev in ("new", "old"))
        print(f"{label:44} {x:10.3f} {y:10.3f} {fl:10.3f} {mi:10.3f} {x / fl:7.3f} {x / y:8.3f}")
        if "(wall)" not in label and (x / fl > 1.10 or x / y > 1.05):
            bad.append(label)
    print(f"{'floor row / minimal program, N = ' + str(n):44} {fl / mi:10.3f}")
    if abs(fl / mi - 1) > 0.05:
        bad.append(f"floor/minimal at {n}")
f = load("fused_16M.json")
rate = f["timing"]["ball_steps_per_s"] if f else float("nan")
print(f"fused, N = 16777216, K = 1024, tuned local: {rate:.4g} ball-steps/s "
      f"(target >= 9.5e12){'' if rate >= 9.5e12 else '  MISSED'}")
if rate < 9.5e12:
    bad.append("fused")
for i in (1, 2, 3):
    j = load(f"longest_{i}.json")
    try:
        recs = [json.loads(l) for l in open(os.path.join(out, f"longest_{i}.counts"))]
    except OSError:
        continue
    if not j:
        continue
    model = j["model"] + "_"
    true = max((k["max_ms"] for r in recs for name, k in r["kernels"].items()
                if name.startswith(model)), default=0)
    own = j["timing"]["max_launch_ms"]
    print(f"longest launch, run -n {j['balls']} -s {j['steps']} K={j['launch']['steps_per_launch']}"
          f": reported {own:.4f} ms, profiling run {true:.4f} ms ({own / true if true else 0:.3f})")
print("targets: every row within 10% of the floor, at most 5% above the earlier revision; "
      "the floor within 5% of the minimal program: " + ("met" if not bad else "missed: " +
                                                         ", ".join(bad)))
EOF
cat "$out/summary.txt"
