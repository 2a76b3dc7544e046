#!/bin/sh
# The wheel on a fresh Debian 12 with no compiler (docs/PYTHON.md, "Binary
# wheels"): as root,
#
#   tools/wheel_chroot_check.sh WHEEL ROOTDIR
#
# makes ROOTDIR a minimal Debian 12 with debootstrap (unless it holds one
# already), installs python3-venv and PoCL's OpenCL driver
# (pocl-opencl-icd) there and nothing else — no build-essential, no
# development package, no OpenCL loader (the wheel carries its own) — then,
# inside it, installs the wheel into a fresh virtual environment with pip
# from files alone (NumPy's wheel fetched beforehand on this side, so the
# chroot needs no access to the package index) and runs a validated run of
# both models, a Result's pickle, and `python -m ballcl devices`.
set -eu
if [ $# -ne 2 ]; then
    echo "usage: tools/wheel_chroot_check.sh WHEEL ROOTDIR" >&2
    exit 2
fi
wheel=$1
root=$2
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
[ -f "$root/etc/debian_version" ] || debootstrap --variant=minbase bookworm "$root" "$mirror"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mounted=""
cleanup() { for m in $mounted; do umount "$root/$m" || true; done; }
trap cleanup EXIT INT TERM
mount -t proc proc "$root/proc" && mounted="proc"
mount -t sysfs sysfs "$root/sys" && mounted="sys $mounted"
mount --bind /dev "$root/dev" && mounted="dev $mounted"
chroot "$root" /bin/sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-venv pocl-opencl-icd' >/dev/null
v=$(chroot "$root" python3 -c 'import sys; print("%d%d" % sys.version_info[:2])')
rm -rf "$root/root/ballcl-check"
mkdir -p "$root/root/ballcl-check/dl"
cp "$wheel" "$root/root/ballcl-check/"
python3 -m pip download -q --only-binary :all: --python-version "$v" \
    --platform manylinux2014_x86_64 --implementation cp -d "$root/root/ballcl-check/dl" \
    "numpy>=1.23.5"
cat > "$root/root/ballcl-check/check.py" <<'PY'
import pickle
import numpy as np, ballcl
print("ballcl", ballcl.__version__, "from", ballcl.__file__)
s = np.random.default_rng(1).uniform(-100, 100, (100000, 4)).astype(np.float32)
new, r = ballcl.run(s, 100)
print(r)
assert r.validation["performed"] and r.validation["passed"] and r.validation["mismatches"] == 0
assert ballcl.run(s, 20, model="bounce")[1].validation["passed"]
assert pickle.loads(pickle.dumps(r)) == r
print("validated:", r.validation["compared"], "floats bit for bit; bounce too")
PY
chroot "$root" /bin/sh -ec '
for p in build-essential gcc ocl-icd-libopencl1 python3-dev; do
    if dpkg -s $p >/dev/null 2>&1; then echo "$p is installed: not a bare root"; exit 1; fi
done
cd /root/ballcl-check && rm -rf venv && python3 -m venv venv
venv/bin/pip install -q --no-index --find-links dl --only-binary :all: ./ballcl-*.whl
cd /tmp && /root/ballcl-check/venv/bin/python /root/ballcl-check/check.py
/root/ballcl-check/venv/bin/python -m ballcl devices'
echo "ok   $(basename "$wheel") installed and validated in a fresh Debian 12 root"
