#!/bin/bash
# The survey's peaks beside clpeak's, in one sitting on the NVIDIA GPU host
# (docs/SURVEY.md, "The peaks beside clpeak"). Run from the project root
# after `source .gpu/env.sh` (clpeak is on PATH there), with a built
# build/tools/ballcl:
#
#   tools/h200/survey_clpeak.sh [OUTDIR]     (default: $OUT)
#
# Writes into OUTDIR (created), in about three minutes:
#   info.txt               date, ballcl version, `ballcl devices`, clpeak's version
#   h200.json, h200.md     ballcl survey -d nvidia (schema ballcl-survey/3)
#   clpeak.txt             clpeak -p P -d D --global-bandwidth --compute-sp
#                          --kernel-latency, P:D the surveyed device's selector
#   h200-host-pocl.json, .md   ballcl survey of the host's CPUs through PoCL
#   comparison.txt         read-only bandwidth vs clpeak's best global
#                          bandwidth width, FMA rate (an FMA = 2 FLOP) vs
#                          clpeak's best single-precision width, launch latency
#                          vs clpeak's kernel latency: each ratio, and whether
#                          it is within 10%
#   *.err, status.txt      stderr of each step; exit status of every step
# BALLCL_H200_DEVICE overrides the selector "nvidia".
set -u
out=${1:-${OUT:?usage: tools/h200/survey_clpeak.sh OUTDIR (or set OUT)}}
cd "$(dirname "$0")/../.." || exit 2
. tools/h200/common.sh
h200_out "$out"
step_err=1
dev=${BALLCL_H200_DEVICE:-nvidia}
# A cache folder of its own: the cached build figure must not depend on
# what earlier runs on this host left behind.
export BALLCL_CACHE_DIR="$out/cache"
h200_info
clpeak --version >>"$out/info.txt" 2>&1 || echo "clpeak: not found on PATH" >>"$out/info.txt"

step h200.md "$ballcl" survey -d "$dev" --json "$out/h200.json"

# clpeak on the same device: its platform and device indices are OpenCL's
# enumeration order, as ballcl's selector is.
sel=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][0]["selector"])' \
    "$out/h200.json" 2>/dev/null)
if [ -n "$sel" ]; then
    step clpeak.txt clpeak -p "${sel%%:*}" -d "${sel##*:}" --global-bandwidth --compute-sp \
        --kernel-latency
else
    echo "clpeak.txt: not run, no device selector in h200.json" >>"$out/status.txt"
fi

step h200-host-pocl.md "$ballcl" survey -d pocl --json "$out/h200-host-pocl.json"

python3 - "$out" >"$out/comparison.txt" 2>&1 <<'EOF'
import json, os, re, sys
out = sys.argv[1]
try:
    doc = json.load(open(os.path.join(out, "h200.json")))
    clp = open(os.path.join(out, "clpeak.txt")).read()
except (OSError, ValueError) as e:
    print(f"cannot compare: {e}")
    sys.exit(1)
d = doc["devices"][0]
m = d["measured"]
# clpeak prints a heading per test, then "width : value" lines, and
# "Kernel launch latency : X us".
sections, cur = {}, None
for line in clp.splitlines():
    s = line.strip()
    if re.search(r"\((GBPS|GFLOPS)\)$", s):
        cur = s
        sections[cur] = {}
    elif cur and re.fullmatch(r"\w+\s*:\s*[0-9.]+", s):
        k, v = (x.strip() for x in s.split(":"))
        sections[cur][k] = float(v)
    elif s.startswith("Kernel launch latency"):
        cur = None
        mm = re.search(r":\s*([0-9.]+)\s*us", s)
        if mm:
            sections["latency"] = float(mm.group(1))
def best(prefix):
    for name, widths in sections.items():
        if name.startswith(prefix) and isinstance(widths, dict) and widths:
            w = max(widths, key=widths.get)
            return w, widths[w]
    return None, None
print(f"device: {d['identity']['name']} ({d['selector']}), driver {d['identity']['driver']}")
print(f"survey: {doc['date']}, command: {doc['command']}")
print(f"clpeak: {out}/clpeak.txt, same sitting")
rows = []
bw_w, bw = best("Global memory bandwidth")
rows.append(("read-only bandwidth, GB/s", m.get("read_only_gb_per_s"), bw,
             f"clpeak global bandwidth, best width ({bw_w})"))
sp_w, sp = best("Single-precision compute")
rows.append(("FMA rate, GFLOP/s (FMA = 2)", m.get("fma_gflop_per_s"), sp,
             f"clpeak single precision, best width ({sp_w})"))
rows.append(("launch latency, us", m.get("launch_latency_us"), sections.get("latency"),
             "clpeak kernel launch latency"))
fails = 0
for what, ours, theirs, ref in rows:
    if ours is None or theirs is None or theirs == 0:
        print(f"{what:30} ballcl {ours}  vs {ref}: {theirs}  -> not comparable")
        fails += 1
        continue
    ratio = ours / theirs
    ok = abs(ratio - 1) <= 0.10
    fails += not ok
    print(f"{what:30} ballcl {ours:10.2f}  {ref}: {theirs:10.2f}  ratio {ratio:.3f}  "
          f"{'within 10%' if ok else 'NOT within 10%'}")
print(f"other peaks: copy {m.get('copy_gb_per_s')} GB/s, add {m.get('add_gflop_per_s')} GFLOP/s, "
      f"int32 add {m.get('int_add_gop_per_s')} GOP/s, fp64 {m.get('fp64_gflop_per_s')} GFLOP/s, "
      f"half {m.get('half_gflop_per_s')} GFLOP/s")
t = m.get("transfer", {})
print("transfer (GB/s, write/read): " + ", ".join(
    f"{w} {t.get(w + '_write_gb_per_s')}/{t.get(w + '_read_gb_per_s')}"
    for w in ("pinned", "pageable", "mapped")) + f"; headline method {t.get('method')}")
print(f"errors: {d['errors']}")
print(f"flags: {d['flags']}")
sys.exit(1 if fails else 0)
EOF
echo "comparison.txt: exit $? (within 10% of clpeak)" >>"$out/status.txt"
cat "$out/comparison.txt" "$out/status.txt" >&2
