#!/bin/bash
# The Python module on the NVIDIA GPU host (docs/PYTHON.md). The module in
# build/python is built for the build machine's python3 (Debian 12: 3.11);
# an extension module is tied to one Python minor version, so on a host with
# another python3 this rebuilds the extension from python/ballcl/*.c for the
# host's interpreter (its headers and NumPy are needed), with the
# build's libballcl.a linked in, then runs examples/seed_done_right.py on the GPU,
# and tools/compare_python.py: ballcl.run and a Context beside NumPy, CuPy
# (naive and a RawKernel) and PyOpenCL where they import, bit for bit.
# No network and no meson-python are needed (the pip way is for machines
# that reach the package index). Run from the project root after
# `source .gpu/env.sh`:
#
#   tools/h200/python.sh OUTDIR
#
# Writes into OUTDIR (created):
#   python.txt   interpreter, NumPy, how the module was built, the example's
#                output on the GPU and its exit status
#   compare.txt  tools/compare_python.py on the GPU (1M balls x 1000 steps)
#                and on the host's CPU device where there is one (100k x 100)
set -u
. "$(dirname "$0")/module.sh"
out=${1:?usage: tools/h200/python.sh OUTDIR}
mkdir -p "$out"
dev=${BALLCL_H200_DEVICE:-nvidia}
{
    date -u +%Y-%m-%dT%H:%M:%SZ
    "$py" --version
    "$py" -c 'import numpy; print("numpy", numpy.__version__)' || exit 1
    ballcl_module || exit 1
    PYTHONPATH=$pkg "$py" examples/seed_done_right.py "$dev"
    echo "exit $?"
} >"$out/python.txt" 2>&1
cat "$out/python.txt"
# $pkg is the module the block above used (a { } group runs in this shell).
{
    date -u +%Y-%m-%dT%H:%M:%SZ
    echo "\$ PYTHONPATH=$pkg $py tools/compare_python.py -d $dev -n 1000000 -s 1000 -r 7"
    PYTHONPATH=$pkg timeout 150 "$py" tools/compare_python.py -d "$dev" -n 1000000 -s 1000 -r 7
    echo "exit $?"
    echo "\$ PYTHONPATH=$pkg $py tools/compare_python.py -d cpu -n 100000 -s 100 -r 5"
    PYTHONPATH=$pkg timeout 60 "$py" tools/compare_python.py -d cpu -n 100000 -s 100 -r 5
    echo "exit $?"
} >"$out/compare.txt" 2>&1
cat "$out/compare.txt"
