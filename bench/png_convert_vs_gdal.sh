#!/bin/sh
# A 16-bit PNG re-encoded at zlib level 6: `terrane convert IN.png OUT.png` on 1 and 2 threads
# against `gdal_translate -of PNG -co ZLEVEL=6`, runs interleaved, wall and CPU (user + system)
# seconds from /usr/bin/time, median and best; output to /dev/shm so no disk is timed.
# usage: bench/png_convert_vs_gdal.sh TERRANE IN.png [ROUNDS 5]
# (a 4097^2 input: `terrane generate examples/recipes/mountains.json --resolution 4096x4096
# -o IN.png`)
set -eu
TERRANE=$1
IN=$2
ROUNDS=${3:-5}
command -v gdal_translate >/dev/null || { echo "gdal_translate not found (gdal-bin)" >&2; exit 1; }
OUT=$(mktemp -d /dev/shm/png_vs_gdal.XXXXXX)
cat "$IN" >/dev/null
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
    OMP_NUM_THREADS=1 /usr/bin/time -f "%e %U %S" -a -o "$OUT/t1" "$TERRANE" convert "$IN" "$OUT/t.png" -q
    OMP_NUM_THREADS=2 /usr/bin/time -f "%e %U %S" -a -o "$OUT/t2" "$TERRANE" convert "$IN" "$OUT/t.png" -q
    /usr/bin/time -f "%e %U %S" -a -o "$OUT/g" gdal_translate -q -of PNG -co ZLEVEL=6 "$IN" "$OUT/g.png"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
# median and best of wall ($1) and of CPU ($2 + $3)
stats() { awk '{ print $1, $2 + $3 }' "$1" | sort -n -k"$2" | awk -v c="$2" '{ v[NR] = $c }
    END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f", m, v[1] }'; }
printf '%-34s %9s %9s %9s %9s %8s\n' "$ROUNDS rounds" "wall med" "wall best" "cpu med" "cpu best" "MB"
for who in t1 t2 g; do
    case $who in t1) name="terrane convert, 1 thread"; f=t.png ;; t2) name="terrane convert, 2 threads"; f=t.png ;;
        g) name="gdal_translate ZLEVEL=6"; f=g.png ;; esac
    printf '%-34s %9s %9s %9s %9s %8.2f\n' "$name" $(stats "$OUT/$who" 1) $(stats "$OUT/$who" 2) \
        "$(wc -c <"$OUT/$f" | awk '{ print $1 / 1e6 }')"
done
rm -rf "$OUT"
