# Sourced by the tools/h200 scripts that log their steps (run from the
# project root). After `h200_out DIR`:
#   $out          DIR, created, with an empty status.txt in it and info.txt:
#                 date, ballcl version, `ballcl devices`
#   BALLCL_CACHE_DIR   $out/cache, a cache of its own: no figure (the cached
#                 build, a tuned record) depends on what earlier runs left
#   $ballcl       the program, build/tools/ballcl
#   $dev          the GPU's selector: $BALLCL_H200_DEVICE, else "nvidia"
#   step NAME CMD...   runs CMD with stdout into $out/NAME (stderr into
#                 $out/NAME.err when step_err=1), logs its exit status in
#                 status.txt and goes on: each step runs even if an earlier
#                 one failed
#   pick SEL...   the first selector that names exactly one device that runs
#                 (a tiny run is the cheapest check; an ambiguous name fails)
ballcl=build/tools/ballcl
dev=${BALLCL_H200_DEVICE:-nvidia}
step_err=0

h200_out() {
    out=$1
    mkdir -p "$out"
    : >"$out/status.txt"
    export BALLCL_CACHE_DIR="$out/cache"
    {
        date -u +%Y-%m-%dT%H:%M:%SZ
        "$ballcl" --version
        "$ballcl" devices
    } >"$out/info.txt" 2>&1
}

step() {
    local name=$1 rc
    shift
    echo "== $name: $*" >&2
    if [ "$step_err" = 1 ]; then
        "$@" >"$out/$name" 2>"$out/$name.err"
    else
        "$@" >"$out/$name"
    fi
    rc=$?
    echo "$name: exit $rc ($*)" >>"$out/status.txt"
    return 0
}

pick() {
    local s
    for s in "$@"; do
        if "$ballcl" run -d "$s" -n 1000 -s 1 --no-cache --no-validate >/dev/null 2>&1; then
            echo "$s"
            return
        fi
    done
}
