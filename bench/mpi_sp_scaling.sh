#!/bin/sh
# Scaling of terrane-mpi stream-power (the tiled stream-power solve shared by processes) over 1,
# 2 and 4 processes on one machine: median and best of RUNS timed runs, the CPU time of all
# processes (and outside the collectives: each process's own work), the bytes moved by kind per tile and step, the incision's rounds, and (WHOLE=1)
# the whole-grid solve on process 0 with its bytes compared.
# usage: sh bench/mpi_sp_scaling.sh BUILD_DIR [SAMPLES] [TILE] [RUNS] [STEPS] [DIR]
set -eu
build=${1:-build} samples=${2:-2049} tile=${3:-512} runs=${4:-3} steps=${5:-2} dir=${6:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "terrane-mpi stream-power --landform $samples --tile $tile --steps $steps --runs $runs${dir:+ --dir $dir}"
for np in 1 2 4; do
    out=$(mpirun -np "$np" --oversubscribe "$build/terrane-mpi" stream-power --landform "$samples" \
        --tile "$tile" --steps "$steps" --runs "$runs" ${dir:+--dir "$dir"} ${WHOLE:+--whole})
    times=$(echo "$out" | sed -n 's/^time s: //p')
    med=$(echo "$times" | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    best=$(echo "$times" | tr ' ' '\n' | sort -n | head -1)
    cpu=$(echo "$out" | sed -n 's/^cpu s (all processes \/ the busiest): //p')
    own=$(echo "$out" | sed -n 's/^cpu s outside the collectives (all processes \/ the busiest): //p')
    echo "np $np: median $med s, best $best s; cpu all/busiest $cpu; outside the collectives $own"
    echo "$out" | grep -e xxh64 -e '^frames' -e '^graphs' -e '^incision' -e '^result' -e '^whole' -e '^grid'
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
