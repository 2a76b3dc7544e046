# Sourced by tools/h200/python.sh and frames.sh: the Python module for the
# interpreter $py. An extension module is tied to one Python minor version:
# the build's (build/python) is used when it was built for this one, else
# the extension is rebuilt from python/ballcl/*.c for it, with the build's
# static libballcl.a linked in, as meson does (the module uses the installed
# header, include/ballcl/ballcl.h, but for cli.c, `python -m ballcl`, which
# links the program's commands, build/tools/cli/libballcl_cli.a).
# Sets pkg to the folder to put on PYTHONPATH; returns
# non-zero when the rebuild fails. The interpreter is $PYTHON (default
# python3); the kernels are the source tree's (the build tree's module finds
# its own beside it, build/python/ballcl/cl, but one rebuilt here has none).
py=${PYTHON:-python3}
export BALLCL_KERNEL_DIR=$PWD/cl

ballcl_module() {
    local suffix pyinc npinc lib=$PWD/build/src
    suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))') || return 1
    pkg=$PWD/build/python
    if [ -f "$pkg/ballcl/_core$suffix" ]; then
        echo "module: $pkg/ballcl/_core$suffix (the build's)"
        return 0
    fi
    pkg=$(mktemp -d)/python
    mkdir -p "$pkg/ballcl"
    cp python/ballcl/__init__.py python/ballcl/__main__.py "$pkg/ballcl/"
    pyinc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
    npinc=$("$py" -c 'import numpy; print(numpy.get_include())')
    echo "building _core$suffix for $("$py" --version) (headers $pyinc, NumPy $npinc)"
    # The flags of the project's release build (meson --buildtype=release:
    # -O3), no contraction, no fast-math.
    cc -std=gnu11 -O3 -fPIC -shared -ffp-contract=off -fno-fast-math \
        -Iinclude -Isrc -Itools/cli -I"$pyinc" -I"$npinc" python/ballcl/*.c \
        "$PWD/build/tools/cli/libballcl_cli.a" "$lib/libballcl.a" -Wl,--exclude-libs,ALL \
        -fopenmp -pthread -lOpenCL -ljansson -lsqlite3 -Wl,-Bstatic -lmd -Wl,-Bdynamic -lpng -lm \
        -o "$pkg/ballcl/_core$suffix"
}
