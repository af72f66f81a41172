#!/bin/sh
# Times `terrane convert DEM.tif out.png --compression 1` against gdal_translate on the same
# 8192x8192 float32 uncompressed GeoTIFF (the target), and checks both PNGs.
# usage: bench/geotiff_vs_gdal.sh [BUILD_DIR] [OUT_DIR] [SIZE]
# Use a Release build (cmake -DCMAKE_BUILD_TYPE=Release) on a quiet machine.
set -eu
BUILD=${1:-build}
OUT=${2:-$(mktemp -d "${TMPDIR:-/tmp}/geotiff_vs_gdal.XXXXXX")}
SIZE=${3:-8192}
mkdir -p "$OUT"
command -v gdal_translate >/dev/null || { echo "gdal_translate not found (apt-get install gdal-bin)" >&2; exit 1; }

echo "== input and library figures (bench_geotiff)"
"$BUILD/bench_geotiff" "$OUT" "$SIZE" 3
IN="$OUT/bench_dem.tif"
# Warm the page cache so both read their input from memory.
cat "$IN" >/dev/null

best_of_3() { # command... ; prints the best wall time of three runs
    best=""
    for run in 1 2 3; do
        start=$(date +%s.%N)
        "$@"
        end=$(date +%s.%N)
        t=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')
        echo "  run $run: $t s" >&2
        best=$(awk -v a="$best" -v b="$t" 'BEGIN { if (a == "" || b < a) print b; else print a }')
    done
    echo "$best"
}

echo "== terrane convert IN out.png --compression 1 (best of 3)"
ours=$(best_of_3 "$BUILD/terrane" convert "$IN" "$OUT/terrane.png" --compression 1 -q)
echo "== gdal_translate -ot UInt16 -scale -of PNG -co ZLEVEL=1 (best of 3)"
gdal_translate --version
gdal=$(best_of_3 gdal_translate -q -ot UInt16 -scale -of PNG -co ZLEVEL=1 "$IN" "$OUT/gdal.png")
# The same stretch as ours (min..max over the full 16-bit range), for a like-for-like file.
range=$("$BUILD/terrane" info "$IN" --format json | awk -F': ' '/"min"/ { gsub(",", "", $2); lo = $2 } /"max"/ { gsub(",", "", $2); hi = $2 } END { print lo, hi }')
lo=${range% *}
hi=${range#* }
echo "== gdal_translate -ot UInt16 -scale $lo $hi 0 65535 -of PNG -co ZLEVEL=1 (best of 3)"
gdal_full=$(best_of_3 gdal_translate -q -ot UInt16 -scale "$lo" "$hi" 0 65535 -of PNG -co ZLEVEL=1 "$IN" "$OUT/gdal_full.png")

printf "terrane convert:              %s s, %.2f MB\n" "$ours" "$(wc -c <"$OUT/terrane.png" | awk '{ print $1 / 1e6 }')"
printf "gdal_translate -scale:        %s s, %.2f MB\n" "$gdal" "$(wc -c <"$OUT/gdal.png" | awk '{ print $1 / 1e6 }')"
printf "gdal_translate -scale 0 65535: %s s, %.2f MB\n" "$gdal_full" "$(wc -c <"$OUT/gdal_full.png" | awk '{ print $1 / 1e6 }')"
awk -v a="$ours" -v b="$gdal" 'BEGIN { printf "ratio terrane / gdal: %.2f (%s)\n", a / b, a <= b ? "no slower: bar met" : "SLOWER: bar missed" }'

# Both full-range PNGs hold the same samples within one step of rounding.
gdal_translate -q -of ENVI "$OUT/terrane.png" "$OUT/ours.raw"
gdal_translate -q -of ENVI "$OUT/gdal_full.png" "$OUT/theirs.raw"
if cmp -s "$OUT/ours.raw" "$OUT/theirs.raw"; then
    echo "check: GDAL reads the same samples from both full-range PNGs"
else
    n=$(cmp -l "$OUT/ours.raw" "$OUT/theirs.raw" | wc -l)
    echo "check: $n bytes differ between the full-range PNGs (rounding of the stretch)"
fi
rm -f "$OUT"/ours.raw* "$OUT"/theirs.raw* "$OUT"/ours.hdr "$OUT"/theirs.hdr "$OUT"/*.aux.xml
echo "files left in $OUT"
