#!/bin/sh
# Times terrane's 16-bit PNG encoder against gdal_translate on the same 8192x8192 terrain.
# usage: bench/png_vs_gdal.sh [BUILD_DIR] [OUT_DIR] [SIZE]
# Use a Release build (cmake -DCMAKE_BUILD_TYPE=Release) on a quiet machine.
set -eu
BUILD=${1:-build}
OUT=${2:-$(mktemp -d "${TMPDIR:-/tmp}/png_vs_gdal.XXXXXX")}
SIZE=${3:-8192}
mkdir -p "$OUT"
command -v gdal_translate >/dev/null || { echo "gdal_translate not found (apt-get install gdal-bin)" >&2; exit 1; }

echo "== terrane (bench_png, zlib level 6, best of 3)"
"$BUILD/bench_png" "$OUT" "$SIZE" --filters

echo "== gdal_translate -of PNG -co ZLEVEL=6 (best of 3)"
gdal_translate --version
# Warm the page cache so both read their input from memory.
cat "$OUT/bench_input.r16" >/dev/null
best=""
for run in 1 2 3; do
    start=$(date +%s.%N)
    gdal_translate -q -of PNG -co ZLEVEL=6 "$OUT/bench_input.r16" "$OUT/bench_gdal.png"
    end=$(date +%s.%N)
    t=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')
    echo "  run $run: $t s"
    best=$(awk -v a="$best" -v b="$t" 'BEGIN { if (a == "" || b < a) print b; else print a }')
done
gdal_size=$(wc -c <"$OUT/bench_gdal.png")
ours_size=$(wc -c <"$OUT/bench_terrane.png")
awk -v t="$best" -v s="$gdal_size" 'BEGIN { printf "gdal png level 6: best of 3 %.3f s, %.2f MB\n", t, s / 1e6 }'
awk -v s="$ours_size" 'BEGIN { printf "terrane png size: %.2f MB\n", s / 1e6 }'

# Both files must hold the same samples: GDAL decodes ours back to raw and we compare.
gdal_translate -q -of ENVI "$OUT/bench_terrane.png" "$OUT/check.raw"
if cmp -s "$OUT/check.raw" "$OUT/bench_input.r16"; then
    echo "check: GDAL reads terrane's PNG back to the identical samples"
else
    echo "check FAILED: GDAL reads different samples from terrane's PNG" >&2
    exit 1
fi
rm -f "$OUT/check.raw" "$OUT/check.hdr" "$OUT/check.raw.aux.xml" "$OUT/bench_gdal.png.aux.xml"
echo "files left in $OUT"
