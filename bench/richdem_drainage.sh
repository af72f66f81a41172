#!/bin/sh
# The RichDEM anchor of bench_drainage, interleaved with it: RichDEM (header-only, a checkout of
# https://github.com/r-barnes/richdem; measured at commit c5a183a) fills, routes and accumulates
# the same 4096^2 heights terrane does, one thread each, ROUNDS rounds.
# usage: sh bench/richdem_drainage.sh BUILD_DIR RICHDEM_DIR SCRATCH_DIR [ROUNDS] [SAMPLES]
set -eu
build=$1 richdem=$2 scratch=$3 rounds=${4:-3} n=${5:-4096}
mkdir -p "$scratch"
g++ -O3 -std=c++17 -DNDEBUG -I"$richdem/include" "$(dirname "$0")/richdem_drainage.cpp" \
    -o "$scratch/richdem_drainage" 2>"$scratch/richdem_build.log"
OMP_NUM_THREADS=1 "$build/bench_drainage" "$n" 1 1 "$scratch" >/dev/null
r=1
while [ "$r" -le "$rounds" ]; do
    echo "round $r, $(cut -d' ' -f1-4 /proc/loadavg)"
    OMP_NUM_THREADS=1 "$build/bench_drainage" "$n" 5 1
    echo "RichDEM, ridged:"
    "$scratch/richdem_drainage" "$scratch/ridged.f32" "$n" nan 5 2>/dev/null | sed 's/\x1b\[2K//g'
    echo "RichDEM, fbm with sea:"
    "$scratch/richdem_drainage" "$scratch/fbm.f32" "$n" 120 5 2>/dev/null | sed 's/\x1b\[2K//g'
    r=$((r + 1))
done
