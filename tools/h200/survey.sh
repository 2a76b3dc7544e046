#!/bin/bash
# Device capability surveys on the NVIDIA GPU host (issue 5, docs/SURVEY.md;
# docs/SURVEY.md). Run from the project root after `source .gpu/env.sh`, with
# a built build/tools/ballcl:
#
#   tools/h200/survey.sh OUTDIR
#
# Writes into OUTDIR (created), in about a minute and a half:
#   h200.json, h200.md            ballcl survey of the NVIDIA GPU (JSON, table)
#   h200-host-pocl.json, .md      ballcl survey of the host's CPUs through PoCL
#   compare.md                    ballcl survey compare of both and of the
#                                 committed survey of the development machine
#   info.txt                      date, ballcl version, `ballcl devices`
#   *.err                         stderr of each step
#   status.txt                    exit status of every step
# The GPU selector is the first of h200, nvidia, gpu that names one device
# (BALLCL_H200_DEVICE overrides it); the host's, the first of pocl, cpu. The JSON files go to docs/surveys/ as they
# are: the program wrote them, with the command and date inside.
set -u
out=${1:?usage: tools/h200/survey.sh OUTDIR}
cd "$(dirname "$0")/../.." || exit 2
. tools/h200/common.sh
h200_out "$out"
step_err=1

gpu=${BALLCL_H200_DEVICE:-$(pick h200 nvidia gpu)}
if [ -n "$gpu" ]; then
    step h200.md "$ballcl" survey -d "$gpu" --json "$out/h200.json"
else
    echo "h200.md: no NVIDIA device found (tried h200, nvidia, gpu)" >>"$out/status.txt"
fi
cpu=$(pick pocl cpu)
if [ -n "$cpu" ]; then
    step h200-host-pocl.md "$ballcl" survey -d "$cpu" --json "$out/h200-host-pocl.json"
else
    echo "h200-host-pocl.md: no PoCL or CPU device found (tried pocl, cpu)" >>"$out/status.txt"
fi

files=()
for f in "$out/h200.json" "$out/h200-host-pocl.json" docs/surveys/pocl-*.json; do
    [ -f "$f" ] && files+=("$f")
done
step compare.md "$ballcl" survey compare "${files[@]}"
cat "$out/status.txt" >&2
