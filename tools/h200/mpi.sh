#!/bin/bash
# MPI figures on the NVIDIA GPU host (docs/SCALING.md): ranks over the H200
# and the host's CPU through PoCL. Run from the project root after
# `source .gpu/env.sh`, with a built build/tools/ballcl (MPI found by meson):
#
#   tools/h200/mpi.sh OUTDIR
#
# Writes into OUTDIR (created):
#   info.txt                 date, ballcl version, devices, mpirun, CPU, memory, disk
#   single_gpu.json          one process on the GPU, N = 16M, 1000 steps (the reference)
#   gpu_P{1,2,4}.json        mpirun -n P on the GPU alone (P ranks share it), N = 16M
#   gpu_cpu_P2.json          mpirun -n 2 -d GPU,cpu: rank 0 the H200, rank 1 the CPU, N = 16M
#   gpu_cpu_P1.json          mpirun -n 1 -d GPU,cpu: one rank driving both devices
#   bench_P2.txt             mpirun -n 2 bench -d GPU,cpu -n 1M: each rank's table
#   cpu_strong_P{1,2,4}.json mpirun -n P -d cpu, N = 4M, each rank CORES/4 PoCL threads
#   cpu_weak_P{1,2,4}.json   the same with N = P x 4M
#   io_P{1,4}.json           N = 256M (4 GiB state) with --output on the GPU: MPI-IO time
#   io_single.txt            the same in one process, timed by the shell (write included)
#   startup_P{1,4}.txt       wall time of a whole mpirun of a tiny run (start-up costs)
#   cmp.txt                  every output against the one-process output (cmp)
#   status.txt               exit status of every step
# The GPU selector defaults to "nvidia"; BALLCL_H200_DEVICE overrides it.
set -u
. "$(dirname "$0")/common.sh"
h200_out "${1:?usage: tools/h200/mpi.sh OUTDIR}"
out=$(cd "$out" && pwd)
ballcl=$PWD/build/tools/ballcl
gpu=$dev
export BALLCL_CACHE_DIR="$out/cache"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun="mpirun --allow-run-as-root --oversubscribe --bind-to none"
cores=$(nproc)
quarter=$((cores / 4 > 0 ? cores / 4 : 1))
states="$out/states"
mkdir -p "$states"
: >"$out/cmp.txt"

# same NAME A B: byte comparison of two state files into cmp.txt; B is
# removed after it.
same() {
    if cmp -s "$2" "$3"; then
        echo "$1: identical ($2 $3)" >>"$out/cmp.txt"
    else
        echo "$1: DIFFERENT ($2 $3)" >>"$out/cmp.txt"
    fi
    rm -f "$3"
}

# ranks NAME P DEVICES: step NAME.json, mpirun -n P of the 16M run on
# DEVICES, its output compared with the one-process output.
ranks() {
    step "$1.json" $mpirun -n "$2" "$ballcl" "${run16[@]}" -d "$3" --output "$states/$1.npy" --json
    same "$1" "$states/single.npy" "$states/$1.npy"
}

# seconds T0 T1: the time between two `date +%s.%N`, to 0.01 s.
seconds() {
    awk "BEGIN { printf \"%.2f\", $2 - $1 }"
}

{
    mpirun --version | head -1
    echo "cores: $cores"
    grep -m1 "model name" /proc/cpuinfo
    free -g | head -2
    df -h "$out" | tail -1
} >>"$out/info.txt" 2>&1

run16=(run -n 16777216 -s 1000 --init random)
step single_gpu.json "$ballcl" "${run16[@]}" -d "$gpu" --output "$states/single.npy" --json
for p in 1 2 4; do
    ranks "gpu_P$p" $p "$gpu"
done
ranks gpu_cpu_P2 2 "$gpu,cpu"
# One rank driving both devices (fewer ranks than devices on the node).
ranks gpu_cpu_P1 1 "$gpu,cpu"
# bench per rank: rank 0 the GPU, rank 1 the CPU; rank 0 prints both tables.
step bench_P2.txt $mpirun -n 2 "$ballcl" bench -d "$gpu,cpu" -n 1000000 -r 5

# The CPU through PoCL, a quarter of the cores per rank: strong (N fixed)
# and weak (N per rank fixed) scaling of ranks with the same resources each.
for p in 1 2 4; do
    step "cpu_strong_P$p.json" env POCL_MAX_PTHREAD_COUNT=$quarter $mpirun -n $p "$ballcl" run \
        -d cpu -n 4194304 -s 1000 --init random --json
    step "cpu_weak_P$p.json" env POCL_MAX_PTHREAD_COUNT=$quarter $mpirun -n $p "$ballcl" run \
        -d cpu -n $((p * 4194304)) -s 1000 --init random --json
done

# A 4 GiB state written with MPI-IO, against one process's atomic write.
io=(run -n 268435456 -s 100 --init random -d "$gpu")
t0=$(date +%s.%N)
step io_single_run.json "$ballcl" "${io[@]}" --output "$states/io_single.npy" --json
t1=$(date +%s.%N)
t2=$(date +%s.%N)
step io_single_norun.json "$ballcl" "${io[@]}" --json
t3=$(date +%s.%N)
echo "one process, N = 268435456: with --output $(seconds "$t0" "$t1") s, without $(seconds "$t2" "$t3") s" \
    >"$out/io_single.txt"
for p in 1 4; do
    step "io_P$p.json" $mpirun -n $p "$ballcl" "${io[@]}" --output "$states/io_P$p.npy" --json
    same "io_P$p" "$states/io_single.npy" "$states/io_P$p.npy"
done
rm -f "$states/io_single.npy"

for p in 1 4; do
    t0=$(date +%s.%N)
    $mpirun -n $p "$ballcl" run -d "$gpu" -n 1024 -s 1 >/dev/null 2>&1
    rc=$?
    t1=$(date +%s.%N)
    echo "mpirun -n $p ballcl run -n 1024 -s 1: exit $rc, $(seconds "$t0" "$t1") s" >"$out/startup_P$p.txt"
done
rm -f "$states/single.npy"
cat "$out/status.txt" "$out/cmp.txt" >&2
