#!/bin/bash
# The untuned default against the tuned plan and the best of a sweep of
# K x local size x variant on the NVIDIA GPU host, both models, N = 10^3 ...
# 10^8 (docs/PERFORMANCE.md, "Defaults against the best"). Run from the
# project root after `source .gpu/env.sh`, with a built build/tools/ballcl:
#
#   OUT=/some/folder tools/h200/defaults.sh
#
# Everything goes under $OUT (tools/measure_defaults.sh says which files):
# info.txt, seed.{txt,json}, bounce.{txt,json}, table.md, status.txt.
# Two to three minutes. The device selector defaults to "nvidia";
# BALLCL_H200_DEVICE overrides it.
set -u
out=${OUT:?set OUT to the folder for the results}
exec "$(dirname "$0")/../measure_defaults.sh" "${BALLCL_H200_DEVICE:-nvidia}" "$out" \
    1000,10000,100000,1000000,10000000,100000000
