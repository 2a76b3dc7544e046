#!/bin/bash
# Strong and weak scaling of `ballcl run` under mpirun on this 2-core machine
# (docs/SCALING.md): P = 1, 2, 4 ranks, one PoCL thread each.
#   docs/measurements/mpi-pocl-2026-12-02/run.sh OUTDIR
set -u
out=${1:?usage: run.sh OUTDIR}
mkdir -p "$out"
b=${BALLCL:-build/tools/ballcl}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 POCL_MAX_PTHREAD_COUNT=1
mpirun="mpirun --oversubscribe --bind-to none"
{ date -u +%Y-%m-%dT%H:%M:%SZ; uptime; nproc; grep -m1 "model name" /proc/cpuinfo; mpirun --version | head -1; } >"$out/info.txt"
$b run -d cpu -n 2097152 -s 1000 --init random --json >"$out/single_2M.json"
for p in 1 2 4; do
    $mpirun -n $p $b run -d cpu -n 2097152 -s 1000 --init random --json >"$out/strong_P$p.json"
    $mpirun -n $p $b run -d cpu -n $((p * 1048576)) -s 1000 --init random --json >"$out/weak_P$p.json"
done
t0=$(date +%s.%N); $b run -d cpu -n 4194304 -s 1 --init random --output "$out/io_single.npy" >/dev/null; t1=$(date +%s.%N)
t2=$(date +%s.%N); $b run -d cpu -n 4194304 -s 1 --init random >/dev/null; t3=$(date +%s.%N)
echo "one process, N = 4194304, 1 step: with --output $(echo "$t1 - $t0" | bc) s, without $(echo "$t3 - $t2" | bc) s" >"$out/io_single.txt"
for p in 1 2 4; do
    $mpirun -n $p $b run -d cpu -n 4194304 -s 1 --init random --output "$out/io$p.npy" --json >"$out/io_P$p.json"
    cmp "$out/io_single.npy" "$out/io$p.npy" && echo "io_P$p: identical to the one-process output" >>"$out/cmp.txt"
    rm -f "$out/io$p.npy"
done
rm -f "$out/io_single.npy"
{ date -u +%Y-%m-%dT%H:%M:%SZ; uptime; } >>"$out/info.txt"
