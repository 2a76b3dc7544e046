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
#   comparison.txt         ballcl's figures as h200.md shows them: read-only
#                          bandwidth vs clpeak's best global
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
    md = open(os.path.join(out, "h200.md"), encoding="utf-8").read()
    clp = open(os.path.join(out, "clpeak.txt")).read()
except (OSError, ValueError) as e:
    print(f"cannot compare: {e}")
    sys.exit(1)
d = doc["devices"][0]
# The figures come from ballcl's table, by their rows' labels: their JSON
# keys are declared once, in src/survey/figures.c. The first column is the
# JSON's first device.
table = {}
for line in md.splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) > 1:
        table.setdefault(cells[0], cells[1])
def fig(label):
    mm = re.match(r"[-+]?[0-9.]+(e[-+]?[0-9]+)?", table.get(label, ""))
    return float(mm.group()) if mm else None
def shown(label):
    return table[label].split()[0] if fig(label) is not None else None
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
rows.append(("read-only bandwidth, GB/s", fig("read-only bandwidth (GB/s)"), bw,
             f"clpeak global bandwidth, best width ({bw_w})"))
sp_w, sp = best("Single-precision compute")
rows.append(("FMA rate, GFLOP/s (FMA = 2)", fig("float FMA rate (FMA = 2) (GFLOP/s)"), sp,
             f"clpeak single precision, best width ({sp_w})"))
rows.append(("launch latency, us", fig("launch latency, queued to start (µs)"), sections.get("latency"),
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
print(f"other peaks: copy {shown('copy bandwidth (GB/s)')} GB/s, "
      f"add {shown('add-rate bound (GFLOP/s)')} GFLOP/s, "
      f"int32 add {shown('int32 add rate (GOP/s)')} GOP/s, "
      f"fp64 {shown('double FMA rate (GFLOP/s)')} GFLOP/s, "
      f"half {shown('half FMA rate (GFLOP/s)')} GFLOP/s")
# Every method's rates, as the JSON names them ("<method>_write_...").
t = d["measured"].get("transfer", {})
rates = {}
for k, v in t.items():
    mm = re.fullmatch(r"(\w+)_(write|read)_gb_per_s", k)
    if mm:
        rates.setdefault(mm.group(1), {})[mm.group(2)] = v
print("transfer (GB/s, write/read): " + ", ".join(
    f"{w} {r.get('write')}/{r.get('read')}" for w, r in rates.items())
      + f"; headline method {t.get('method')}")
print(f"errors: {d['errors']}")
print(f"flags: {d['flags']}")
sys.exit(1 if fails else 0)
EOF
echo "comparison.txt: exit $? (within 10% of clpeak)" >>"$out/status.txt"
cat "$out/comparison.txt" "$out/status.txt" >&2
