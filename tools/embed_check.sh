#!/bin/sh
# Installs the build into a scratch folder (meson install --destdir), builds
# examples/embed.c against that installed copy through pkg-config alone, and
# runs it on the default device: the check that ballcl is a library another
# program can use. Appends one JSON line with the result to
# build/embed-results.jsonl, which tools/setup.sh counts in its closing line.
#   tools/embed_check.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
results=$build/embed-results.jsonl
dest=$(mktemp -d "${TMPDIR:-/tmp}/ballcl-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT

result() {
    printf '{"name": "embed", "result": "%s"}\n' "$1" >>"$results"
    echo "embed_check: $1${2:+: $2}"
}

fail() {
    result FAIL "$1"
    exit 1
}

meson install -C "$build" --destdir "$dest" --quiet || fail "meson install failed"
pc=$(find "$dest" -name ballcl.pc | head -n 1)
[ -n "$pc" ] || fail "no ballcl.pc installed"
# The sysroot makes pkg-config prefix every path it gives with $dest.
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$dest"
flags=$(pkg-config --cflags --libs ballcl) || fail "pkg-config does not know ballcl"
# The scratch prefix is none of the loader's folders, and ldconfig only
# serves those: a user who installs to /usr/local runs 'ldconfig' (docs/
# INSTALL.md); a program using a library from any other prefix records
# where it is, as here, with an rpath to the folder pkg-config names. No
# LD_LIBRARY_PATH: the example must find the installed copy by itself.
libdir=$(pkg-config --libs-only-L ballcl | sed 's/^ *-L//; s/ .*//')
# shellcheck disable=SC2086 # the flags are words
cc -std=c11 -Wall -Wextra -Werror examples/embed.c $flags -Wl,-rpath,"$libdir" -o "$dest/embed" ||
    fail "examples/embed.c does not build against the installed copy"
# It must load the installed library, not another copy (the build's).
loaded=$(ldd "$dest/embed" | sed -n 's/^[[:space:]]*libballcl\.so[^ ]* => \([^ ]*\).*/\1/p')
case $loaded in
"$dest"/*) ;;
*) fail "examples/embed.c loads libballcl from '${loaded:-nowhere}', not the installed copy in $libdir" ;;
esac
kernels=$(find "$dest" -name seed.cl | head -n 1)
# A model's kernels are generated from cl/kernels.cl around its update: the
# install must carry both.
[ -n "$kernels" ] && [ -f "$(dirname "$kernels")/kernels.cl" ] ||
    fail "the installed kernel folder lacks seed.cl or kernels.cl: '${kernels:-no seed.cl}'"
rc=0
BALLCL_KERNEL_DIR="$(dirname "$kernels")" BALLCL_CACHE_DIR="$dest/cache" "$dest/embed" || rc=$?
case $rc in
0) result OK ;;
77) result SKIP "no OpenCL device" ;;
*) fail "examples/embed.c exited with $rc" ;;
esac
