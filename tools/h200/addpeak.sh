#!/bin/bash
# The add-rate bound and the fused rate on the NVIDIA GPU host, side by side in
# one run (docs/PERFORMANCE.md). Run from the project root after
# `source .gpu/env.sh`, with a built build/tools/ballcl:
#
#   tools/h200/addpeak.sh [OUTDIR]     (default: $OUT)
#
# Writes into OUTDIR (created):
#   info.txt              date, ballcl version, device list
#   tune_16M.txt          tune -n 16777216 (fused K up to 1024; stored in OUTDIR/cache)
#   bench_16M_K1024.{txt,json}   bench -n 16777216 --steps-per-launch 1024 (tuned
#                         local size): the fused row and the add-rate bound
#                         measured between its repeats, so the ratio is of one run
#   bench_16M_K100.json   the same with K = 100
#   fused_16M_K1024.json  run -n 16777216 -s 10000 --steps-per-launch 1024 --local tuned
#                         (the figure the H200 target names)
#   summary.txt           bound, fused rates, their ratio, and the theoretical
#                         add rate: compute units x 128 FP32 lanes x clock
#                         (the assumption for an NVIDIA SM since Ampere)
#   status.txt            exit status of every step
# The device selector defaults to "nvidia"; BALLCL_H200_DEVICE overrides it.
set -u
. "$(dirname "$0")/common.sh"
h200_out "${1:-${OUT:?usage: tools/h200/addpeak.sh OUTDIR (or set OUT)}}"
n=16777216

step tune_16M.txt "$ballcl" tune -d "$dev" -n $n
step bench_16M_K1024.json "$ballcl" bench -d "$dev" -n $n --steps-per-launch 1024 --json
step bench_16M_K1024.txt "$ballcl" bench -d "$dev" -n $n --steps-per-launch 1024
step bench_16M_K100.json "$ballcl" bench -d "$dev" -n $n --steps-per-launch 100 --json
step fused_16M_K1024.json "$ballcl" run -d "$dev" -n $n -s 10000 --steps-per-launch 1024 \
    --local tuned --json

python3 - "$out" >"$out/summary.txt" 2>&1 <<'EOF'
import json, sys, os
out = sys.argv[1]
def load(name):
    try:
        return json.load(open(os.path.join(out, name)))
    except (OSError, ValueError) as e:
        print(f"{name}: unreadable ({e})")
        return None
for name in ("bench_16M_K1024.json", "bench_16M_K100.json"):
    j = load(name)
    if not j:
        continue
    a = j["add_rate"]
    fused = {r["name"]: r for r in j["rows"]}["fused"]
    print(f"{name}: device {j['device']['name']}, {j['date']}")
    print(f"  add-rate bound {a['gflop_per_s']['median']:.1f} GFLOP/s "
          f"(min {a['gflop_per_s']['min']:.1f}, max {a['gflop_per_s']['max']:.1f}; "
          f"{a['chains']} chains of width {a['width']}, {a['global']} work-items)")
    print(f"  bound on seed ball-steps/s {a['ball_steps_per_s_bound']:.4g}")
    print(f"  fused ({fused['config']['variant'] or 'base'}, local {fused['config']['local']}, "
          f"K={fused['config']['steps_per_launch']}): {fused['ball_steps_per_s']:.4g} ball-steps/s, "
          f"{100 * fused['add_bound_fraction']:.1f}% of the bound")
    d = j["device"]
    theory = d["compute_units"] * 128 * d["clock_mhz"] * 1e6
    print(f"  theory: {d['compute_units']} compute units x 128 FP32 lanes x {d['clock_mhz']} MHz "
          f"= {theory / 1e9:.1f} GFLOP/s; the bound is {100 * a['gflop_per_s']['median'] * 1e9 / theory:.1f}% of it")
r = load("fused_16M_K1024.json")
if r:
    t = r["timing"]
    print(f"run -n 16777216 -s 10000 K=1024 --local tuned: {t['ball_steps_per_s']:.4g} ball-steps/s "
          f"({r['launch']['variant'] or 'base'}, local {r['launch']['local']}), "
          f"validated: {r['validation'].get('passed')}")
EOF
echo "summary.txt: exit $?" >>"$out/status.txt"
