#!/bin/sh
# 6-octave fbm over 4096 x 4096 samples on one thread: terrane (bench_noise SIZE fbm) against
# FastNoise2's Simplex and Perlin fbm (bench/fastnoise2_fbm.cpp built against FastNoise2's own
# sources), runs interleaved, wall and thread-CPU seconds, median and best of each.
# usage: bench/noise_vs_fastnoise2.sh BUILD_DIR FASTNOISE2_SRC [FASTSIMD_SRC] [ROUNDS] [SIZE]
#   ISA=avx2 in the environment caps both at AVX2 (terrane's AVX2 variant, FastNoise2's AVX2
#   kernels), as on most desktop CPUs
#   BUILD_DIR       a Release build of terrane (bench_noise)
#   FASTNOISE2_SRC  a checkout of github.com/Auburn/FastNoise2 (measured: v1.1.1, ba93f17)
#   FASTSIMD_SRC    a checkout of github.com/Auburn/FastSIMD at the commit FastNoise2 pins
#                   (src/CMakeLists.txt); without it CMake's CPM downloads it
# FastNoise2 is built as its CMake files say (Release: -O3, -ffast-math, FMA in the AVX2 and
# AVX-512 kernels, picked at run time), once, in $FN2_BUILD (default /tmp/fastnoise2-build).
# On a shared machine the CPU seconds are the steadier figure: the wall clock also counts time
# spent waiting for a core.
set -eu
BUILD=$1
FN2=$2
FASTSIMD=${3:-}
ROUNDS=${4:-7}
SIZE=${5:-4096}
HERE=$(cd "$(dirname "$0")" && pwd)
FN2_BUILD=${FN2_BUILD:-/tmp/fastnoise2-build}
if [ ! -x "$FN2_BUILD/fastnoise2_fbm" ]; then
    set -- -DCMAKE_BUILD_TYPE=Release -DFASTNOISE2_TOOLS=OFF -DFASTNOISE2_TESTS=OFF
    [ -n "$FASTSIMD" ] && set -- "$@" -DCPM_FastSIMD_SOURCE="$FASTSIMD"
    cmake -S "$FN2" -B "$FN2_BUILD" "$@" >/dev/null
    cmake --build "$FN2_BUILD" -j2 >/dev/null
    [ -n "$FASTSIMD" ] || FASTSIMD=$(find "$FN2_BUILD" -maxdepth 3 -type d -name 'fastsimd-src' | head -1)
    g++ -std=c++17 -O3 -DNDEBUG -DFASTNOISE_STATIC_LIB -DFASTSIMD_STATIC_LIB -I "$FN2/include" \
        -I "$FASTSIMD/include" -I "$FN2_BUILD/src/fastsimd/FastSIMD_FastNoise/include" \
        "$HERE/fastnoise2_fbm.cpp" "$FN2_BUILD/Release/lib/libFastNoise.a" \
        -o "$FN2_BUILD/fastnoise2_fbm"
fi
OUT=$(mktemp -d "${TMPDIR:-/tmp}/noise_vs_fn2.XXXXXX")
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
    "$BUILD/bench_noise" "$SIZE" fbm 1 ${ISA:-} | sed -n 's/^wall \([0-9.]*\) s cpu \([0-9.]*\) s.*/\1 \2/p' >>"$OUT/terrane"
    "$FN2_BUILD/fastnoise2_fbm" simplex "$SIZE" 1 ${ISA:-} | sed -n 's/^wall \([0-9.]*\) s cpu \([0-9.]*\) s.*/\1 \2/p' >>"$OUT/simplex"
    "$FN2_BUILD/fastnoise2_fbm" perlin "$SIZE" 1 ${ISA:-} | sed -n 's/^wall \([0-9.]*\) s cpu \([0-9.]*\) s.*/\1 \2/p' >>"$OUT/perlin"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BUILD/bench_noise" "$SIZE" fbm 1 ${ISA:-} | head -1
"$FN2_BUILD/fastnoise2_fbm" simplex "$SIZE" 1 ${ISA:-} | head -1
# median and best of column $2 of a file
stats() { sort -n -k"$2" "$1" | awk -v c="$2" '{v[NR] = $c} END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.4f %.4f", m, v[1] }'; }
printf '%-22s %10s %10s %10s %10s\n' "$ROUNDS rounds" "wall med" "wall best" "cpu med" "cpu best"
for who in terrane simplex perlin; do
    set -- $(stats "$OUT/$who" 1) $(stats "$OUT/$who" 2)
    printf '%-22s %10s %10s %10s %10s\n' "$who" "$1" "$2" "$3" "$4"
    eval "${who}_wall=$1 ${who}_cpu=$3"
done
awk -v tw="$terrane_wall" -v tc="$terrane_cpu" -v sw="$simplex_wall" -v sc="$simplex_cpu" \
    -v pw="$perlin_wall" -v pc="$perlin_cpu" 'BEGIN {
    printf "terrane vs Simplex: %.2fx wall, %.2fx cpu (medians); vs Perlin: %.2fx wall, %.2fx cpu\n",
        sw / tw, sc / tc, pw / tw, pc / tc }'
rm -rf "$OUT"
