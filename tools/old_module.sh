# Sourced by tools/frames_before_after.sh and tools/frames_callgrind.sh: the
# Python module of revision $1, built in the folder $2 (git archive into
# $2/src, release build in $2/build; only the module and its package files).
# The package is then $2/build/python, its kernels $2/src/cl (set
# BALLCL_KERNEL_DIR: the build's own copy of cl/ is not made).
old_module() {
    local rev=$1 dir=$2 suffix
    mkdir -p "$dir/src"
    git archive "$rev" | tar -x -C "$dir/src"
    meson setup "$dir/build" "$dir/src" --buildtype=release >/dev/null
    suffix=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
    ninja -C "$dir/build" "python/ballcl/_core$suffix" python/ballcl/__init__.py >/dev/null
}
