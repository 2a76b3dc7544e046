# Sourced by tools/frames_before_after.sh and tools/frames_callgrind.sh, run
# from the project root, with the arguments REV [N [DEVICE [ROUNDS]]].
# frame_args DEFAULT_N ARGS...: sets n (default DEFAULT_N), dev (default cpu)
# and rounds (default 3) from ARGS.
# old_module REV: the Python module of revision REV, built in a temporary
# folder $old that is removed on exit (git archive into $old/src, release
# build in $old/build; only the module and its package files).
# side before|after: sets pkg (for PYTHONPATH), cl (for BALLCL_KERNEL_DIR:
# the old build's own copy of cl/ is not made) and label to those of REV's
# module or this build's (build/python).
frame_args() {
    n=${3:-$1}
    dev=${4:-cpu}
    rounds=${5:-3}
}

old_module() {
    local suffix
    rev=$1
    root=$PWD
    old=$(mktemp -d)
    trap 'rm -rf "$old"' EXIT
    mkdir -p "$old/src"
    git archive "$rev" | tar -x -C "$old/src"
    meson setup "$old/build" "$old/src" --buildtype=release >/dev/null
    suffix=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
    ninja -C "$old/build" "python/ballcl/_core$suffix" python/ballcl/__init__.py >/dev/null
}

side() {
    if [ "$1" = before ]; then
        pkg=$old/build/python cl=$old/src/cl label=$rev
    else
        pkg=$root/build/python cl=$root/cl label="this tree"
    fi
}
