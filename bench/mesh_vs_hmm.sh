#!/bin/sh
# Meshes one 4097x4097 heightfield at a vertical error bound with `terrane mesh --max-error` and
# with hmm (github.com/fogleman/hmm, greedy Delaunay insertion after Garland & Heckbert), runs
# interleaved: triangles, wall time and peak resident memory of each run, median and best.
# usage: bench/mesh_vs_hmm.sh TERRANE HMM [OUT_DIR] [RUNS] [ERRORS...]
#   TERRANE  a Release build of terrane; BASELINE=/path/to/terrane adds a second one to compare
#   HMM      hmm built from its source: g++ -std=c++11 -O3 -march=native -flto -DNDEBUG
#            -DGLM_ENABLE_EXPERIMENTAL -I src -I GLM_INCLUDE src/*.cpp -o hmm -lpthread
#            (GLM from libglm-dev; hmm's Makefile does the same)
#   ERRORS   metres (default 0.1 0.5)
# The heightfield is examples/recipes/mountains.json generated at 4096 x 4096 cells as a 16-bit
# PNG, read by both: terrane with --max-height 1000 (metres = value / 65535 * 1000), hmm with
# -z 1000 and its error in the PNG's 0..1 units, so -e (M / 1000) is the same bound.
set -eu
TERRANE=$1
HMM=$2
OUT=${3:-$(mktemp -d "${TMPDIR:-/tmp}/mesh_vs_hmm.XXXXXX")}
RUNS=${4:-3}
shift 2
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
ERRORS=${*:-0.1 0.5}
HERE=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
PNG="$OUT/mountains4097.png"
[ -f "$PNG" ] || "$TERRANE" generate "$HERE/examples/recipes/mountains.json" --resolution 4096x4096 \
    -o "$PNG" -q
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (GNU time)" >&2; exit 1; }

# one run: prints "SECONDS PEAK_KB TRIANGLES"
run_terrane() { # BINARY ERROR
    /usr/bin/time -f "%e %M" -o "$OUT/time.txt" "$1" mesh "$PNG" -o "$OUT/t.glb" --max-error "$2" \
        --max-height 1000 --format json -q >"$OUT/t.json"
    tris=$(sed -n 's/.*"triangles": *\([0-9]*\).*/\1/p' "$OUT/t.json")
    echo "$(cat "$OUT/time.txt") $tris"
}
run_hmm() { # ERROR
    e=$(awk -v m="$1" 'BEGIN { printf "%.9g", m / 1000 }')
    /usr/bin/time -f "%e %M" -o "$OUT/time.txt" "$HMM" "$PNG" "$OUT/h.stl" -z 1000 -e "$e" \
        >"$OUT/h.txt"
    tris=$(sed -n 's/.*triangles = \([0-9]*\).*/\1/p' "$OUT/h.txt")
    echo "$(cat "$OUT/time.txt") $tris"
}
summary() { # NAME FILE: median and best of time and peak memory
    sort -n "$2" | awk -v name="$1" '{ t[NR] = $1; m[NR] = $2; tri = $3 }
        END { n = NR; med = (n % 2) ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2
              best_m = m[1]; for (i = 2; i <= n; i++) if (m[i] < best_m) best_m = m[i]
              printf "%-10s triangles %9d  time median %6.2f s best %6.2f s  peak RSS max %5.0f MB min %5.0f MB\n",
                     name, tri, med, t[1], mmax(m, n) / 1024, best_m / 1024 }
        function mmax(a, n,   i, x) { x = a[1]; for (i = 2; i <= n; i++) if (a[i] > x) x = a[i]; return x }'
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for err in $ERRORS; do
    : >"$OUT/terrane.txt"
    : >"$OUT/hmm.txt"
    : >"$OUT/baseline.txt"
    for r in $(seq "$RUNS"); do
        run_terrane "$TERRANE" "$err" >>"$OUT/terrane.txt"
        run_hmm "$err" >>"$OUT/hmm.txt"
        if [ -n "${BASELINE:-}" ]; then run_terrane "$BASELINE" "$err" >>"$OUT/baseline.txt"; fi
    done
    echo "== max error $err m, $RUNS runs each (load now: $(cut -d' ' -f1-3 /proc/loadavg))"
    summary terrane "$OUT/terrane.txt"
    summary hmm "$OUT/hmm.txt"
    if [ -n "${BASELINE:-}" ]; then summary baseline "$OUT/baseline.txt"; fi
done
