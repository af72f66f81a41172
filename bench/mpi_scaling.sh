#!/bin/sh
# Scaling of terrane-mpi drainage over 1, 2 and 4 processes on one machine: median and best of
# RUNS timed computations (results gathered apart), bytes moved, and the one-process fill.
# usage: sh bench/mpi_scaling.sh BUILD_DIR [SAMPLES] [TILE] [RUNS]
set -eu
build=${1:-build} samples=${2:-2049} tile=${3:-256} runs=${4:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "terrane-mpi drainage --landform $samples --tile $tile --runs $runs"
for np in 1 2 4; do
    out=$(mpirun -np "$np" --oversubscribe "$build/terrane-mpi" drainage --landform "$samples" \
        --tile "$tile" --runs "$runs" ${WHOLE:+--whole})
    times=$(echo "$out" | sed -n 's/^time s: \(.*\) (gather.*/\1/p')
    med=$(echo "$times" | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    best=$(echo "$times" | tr ' ' '\n' | sort -n | head -1)
    acc=$(echo "$out" | sed -n 's/^accumulation xxh64 //p')
    traffic=$(echo "$out" | sed -n 's/^traffic bytes: //p')
    graph=$(echo "$out" | sed -n 's/^spill graph //p')
    echo "np $np: median $med s, best $best s; accumulation $acc; $traffic; graph $graph"
    echo "$out" | grep '^one process' || true
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
