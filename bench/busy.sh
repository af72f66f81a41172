#!/bin/bash
# Threads on a busy machine: each case on 1 and N threads, quiet and with one CPU-bound process
# per core competing, runs interleaved (1, N, 1, N, ...); median and best wall time of each, with
# the one-minute load average before every run, and N threads' time over one thread's; the
# median CPU time (user + system) of each: where the machine's other work caps what this
# program gets (the scheduler shares the CPU between sessions, not threads), N threads can only
# cost more CPU, so their CPU over one thread's is the overhead that shows as a slowdown.
# usage: bench/busy.sh [BUILD_DIR] [RUNS] [N] [CASE...]
#   cases: gen1025 gen2049 evolve evolve257 erosion png cook (default: all), and the other
#   verbs a user runs on a whole map (not in the default list: their inputs take a minute):
#   mesh       'terrane mesh' of the 2049^2 Mountain Range, every chunk at full resolution
#   meshadapt  the same with --max-error 0.5 (the adaptive right-triangulated levels)
#   render     'terrane render --multidirectional' hillshade of a 4096^2 .ter
#   ter2png    'terrane convert' of that .ter to a 16-bit PNG
#   png2ter    'terrane convert' of that PNG back to a .ter
#   reproject  'terrane convert' of a 3601^2 geographic GeoTIFF (EPSG:4326) to UTM, as .r32
#   stats      'terrane stats' of the 2049^2 Mountain Range
#   scatter    'terrane scatter' of examples/recipes/lakeside.json (its own 257^2 grid: the
#              sites lie on a lattice in metres, so a finer grid only adds generating)
#   water      'terrane water' of the same recipe (its bodies resolved on the surface; with the
#              graph's node results cached, the verb's own work took 0.1 s, too short to time)
#   scatter and water are mostly generating: 4 s on one thread, a third of it printing
#   the instances' numbers (scatter).
# Outputs must not depend on threads: each case's outputs on 1 and N threads are compared.
# png writes a 16-bit PNG of PNG_SIZE^2 samples at zlib level 6 (default 8192, the size of the
# PNG goals; at 2048^2 a run took 0.3-0.5 s in 9 bands, too short and too few for a steady
# ratio: PNG_SIZE=2048 gives that case back).
set -u
PNG_SIZE=${PNG_SIZE:-8192}
BUILD=${1:-build}
RUNS=${2:-3}
N=${3:-$(nproc)}
shift 3 2>/dev/null || shift $#
CASES=${*:-gen1025 gen2049 evolve evolve257 erosion png cook}
CORES=$(nproc)
# Outputs go to memory (/dev/shm) where there is one: their fsync would otherwise time the disk.
SCRATCH=${TMPDIR:-/tmp}
[ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && SCRATCH=/dev/shm
OUT=$(mktemp -d "$SCRATCH/busy.XXXXXX")
trap 'stop_load; rm -rf "$OUT"' EXIT
TERRANE="$BUILD/terrane"
export TERRANE_CACHE=off # every run computes (no node results reused from disk)
BB="$BUILD/bench_busy"
"$BB" preset builtin://terrain/mountain-range 1024 >"$OUT/mr1024.json" || exit 1
"$BB" preset builtin://terrain/mountain-range 2048 >"$OUT/mr2048.json" || exit 1
# The verbs' inputs, made once and only for the cases asked for (on every core, quiet).
need() { case " $CASES " in *" $1 "*) return 0 ;; esac; return 1; }
if need mesh || need meshadapt || need stats; then
    "$TERRANE" generate "$OUT/mr2048.json" -o "$OUT/mr2049.r32" -q || exit 1
fi
if need render || need ter2png || need png2ter; then
    "$BB" ter 4096 "$OUT/t4096.ter" || exit 1
    "$TERRANE" convert "$OUT/t4096.ter" "$OUT/t4096.png" -q || exit 1
fi
if need reproject; then "$BB" geotiff 3601 "$OUT/dem.tif" || exit 1; fi

LOAD_PIDS=()
start_load() {
    for _ in $(seq "$CORES"); do
        sh -c 'while :; do :; done' &
        LOAD_PIDS+=($!)
    done
    sleep 0.5
}
stop_load() {
    if [ ${#LOAD_PIDS[@]} -gt 0 ]; then kill "${LOAD_PIDS[@]}" 2>/dev/null; wait "${LOAD_PIDS[@]}" 2>/dev/null; fi
    LOAD_PIDS=()
}

# One run of case $1 on $2 threads: prints the wall seconds; the output's digest in $OUT/digest.$1.$2.
run_case() {
    local c=$1 t=$2 s e
    case $c in
        gen1025|gen2049)
            local res=${c#gen}; res=$((res - 1))
            s=$(date +%s.%N)
            OMP_NUM_THREADS=$t /usr/bin/time -f "%U %S" -o "$OUT/time" \
                "$TERRANE" generate "$OUT/mr$res.json" -o "$OUT/g$t.r32" -q || return 1
            e=$(date +%s.%N)
            awk '{ print $1 + $2 }' "$OUT/time" >"$OUT/cpu"
            cksum <"$OUT/g$t.r32" >"$OUT/digest.$c.$t"
            awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f\n", b - a }' ;;
        cook)
            rm -rf "$OUT/cook$t"
            s=$(date +%s.%N)
            OMP_NUM_THREADS=$t /usr/bin/time -f "%U %S" -o "$OUT/time" \
                "$TERRANE" cook "$OUT/mr1024.json" -o "$OUT/cook$t" -q >/dev/null || return 1
            e=$(date +%s.%N)
            awk '{ print $1 + $2 }' "$OUT/time" >"$OUT/cpu"
            cksum <"$OUT/cook$t/mr1024.terrain.bin" >"$OUT/digest.$c.$t"
            awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f\n", b - a }' ;;
        evolve|evolve257) # 20 steps on 1025^2; 100 on 257^2 (a preset's evolution grid)
            local size=1024 steps=20
            [ "$c" = evolve257 ] && size=256 steps=100
            OMP_NUM_THREADS=$t "$BB" evolve "$size" "$steps" "$t" >"$OUT/r" || return 1
            awk '{ print $4 }' "$OUT/r" >"$OUT/digest.$c.$t"; awk '{ print $6 }' "$OUT/r" >"$OUT/cpu"
            awk '{ print $2 }' "$OUT/r" ;;
        erosion)
            OMP_NUM_THREADS=$t "$BB" erosion 1024 300000 "$t" >"$OUT/r" || return 1
            awk '{ print $4 }' "$OUT/r" >"$OUT/digest.$c.$t"; awk '{ print $6 }' "$OUT/r" >"$OUT/cpu"
            awk '{ print $2 }' "$OUT/r" ;;
        png)
            OMP_NUM_THREADS=$t "$BB" png "$PNG_SIZE" "$OUT/p$t.png" "$t" >"$OUT/r" || return 1
            cksum <"$OUT/p$t.png" >"$OUT/digest.$c.$t"; awk '{ print $6 }' "$OUT/r" >"$OUT/cpu"
            awk '{ print $2 }' "$OUT/r" ;;
        mesh|meshadapt|render|ter2png|png2ter|reproject|stats|scatter|water)
            local cmd out=$OUT/v$t
            case $c in
                mesh) cmd=(mesh "$OUT/mr2049.r32" -o "$out.glb"); out=$out.glb ;;
                meshadapt) cmd=(mesh "$OUT/mr2049.r32" -o "$out.glb" --max-error 0.5); out=$out.glb ;;
                render) cmd=(render "$OUT/t4096.ter" -o "$out.png" --multidirectional); out=$out.png ;;
                ter2png) cmd=(convert "$OUT/t4096.ter" "$out.png"); out=$out.png ;;
                png2ter) cmd=(convert "$OUT/t4096.png" "$out.ter"); out=$out.ter ;;
                reproject) cmd=(convert "$OUT/dem.tif" "$out.r32"); out=$out.r32 ;;
                stats) cmd=(stats "$OUT/mr2049.r32" --format json); out=$out.json ;;
                scatter) cmd=(scatter "$(dirname "$0")/../examples/recipes/lakeside.json" -o "$out.json")
                    out=$out.json ;;
                water) cmd=(water "$(dirname "$0")/../examples/recipes/lakeside.json" --format json)
                    out=$out.json ;;
            esac
            rm -f "$out"
            s=$(date +%s.%N)
            # stats and water print their figures; the others write a file (stdout is empty).
            OMP_NUM_THREADS=$t /usr/bin/time -f "%U %S" -o "$OUT/time" "$TERRANE" "${cmd[@]}" -q \
                >"$OUT/stdout" || return 1
            e=$(date +%s.%N)
            [ -s "$OUT/stdout" ] && mv "$OUT/stdout" "$out"
            awk '{ print $1 + $2 }' "$OUT/time" >"$OUT/cpu"
            cksum <"$out" >"$OUT/digest.$c.$t"
            awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f\n", b - a }' ;;
        *) echo "unknown case $c" >&2; return 1 ;;
    esac
}

stats() { # stdin: "seconds load" lines -> "median best load_lo-load_hi"
    sort -n | awk '{ t[NR] = $1; l[NR] = $2 } END {
        lo = l[1]; hi = l[1]; for (i = 1; i <= NR; i++) { if (l[i] < lo) lo = l[i]; if (l[i] > hi) hi = l[i] }
        m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
        printf "%.3f %.3f %.2f-%.2f\n", m, t[1], lo, hi }'
}

echo "busy.sh: $CORES cores, N = $N threads, $RUNS interleaved runs, $(date -u '+%Y-%m-%d %H:%M UTC')"
printf "%-8s %-6s %8s %8s %11s | %8s %8s %11s | %6s %6s | %6s %6s %6s\n" case mode "1:med" "1:best" \
    "1:load" "N:med" "N:best" "N:load" "N/1med" "N/1bst" "1:cpu" "N:cpu" "N/1cpu"
for c in $CASES; do
    for mode in quiet loaded; do
        : >"$OUT/t1"; : >"$OUT/tN"; : >"$OUT/c1"; : >"$OUT/cN"
        [ $mode = loaded ] && start_load
        for _ in $(seq "$RUNS"); do
            for t in 1 "$N"; do
                l=$(cut -d' ' -f1 /proc/loadavg)
                w=$(run_case "$c" "$t") || { echo "$c failed on $t threads" >&2; stop_load; exit 1; }
                if [ "$t" = 1 ]; then echo "$w $l" >>"$OUT/t1"; else echo "$w $l" >>"$OUT/tN"; fi
                if [ "$t" = 1 ]; then cat "$OUT/cpu" >>"$OUT/c1"; else cat "$OUT/cpu" >>"$OUT/cN"; fi
            done
        done
        [ $mode = loaded ] && stop_load
        read -r m1 b1 l1 < <(stats <"$OUT/t1")
        read -r mN bN lN < <(stats <"$OUT/tN")
        c1=$(sort -n "$OUT/c1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
        cN=$(sort -n "$OUT/cN" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
        same=""
        cmp -s "$OUT/digest.$c.1" "$OUT/digest.$c.$N" || same="  OUTPUTS DIFFER"
        printf "%-8s %-6s %8s %8s %11s | %8s %8s %11s | %6.2f %6.2f | %6.2f %6.2f %6.2f%s\n" "$c" \
            "$mode" "$m1" "$b1" "$l1" "$mN" "$bN" "$lN" \
            "$(awk -v a="$mN" -v b="$m1" 'BEGIN { print a / b }')" \
            "$(awk -v a="$bN" -v b="$b1" 'BEGIN { print a / b }')" "$c1" "$cN" \
            "$(awk -v a="$cN" -v b="$c1" 'BEGIN { print a / b }')" "$same"
    done
done
