#!/bin/sh
# A 16-bit PNG re-encoded: `terrane convert IN.png OUT.png --compression N` for each level N on 1
# and 2 threads against `gdal_translate -of PNG -co ZLEVEL=6`, runs interleaved, wall and CPU
# (user + system) seconds from /usr/bin/time, median and best; output to /dev/shm so no disk is
# timed.
# usage: bench/png_convert_vs_gdal.sh TERRANE IN.png [ROUNDS 5] [LEVELS "3 6"]
# (a 4097^2 input: `terrane generate examples/recipes/mountains.json --resolution 4096x4096
# -o IN.png`)
set -eu
TERRANE=$1
IN=$2
ROUNDS=${3:-5}
LEVELS=${4:-3 6}
command -v gdal_translate >/dev/null || { echo "gdal_translate not found (gdal-bin)" >&2; exit 1; }
OUT=$(mktemp -d /dev/shm/png_vs_gdal.XXXXXX)
cat "$IN" >/dev/null
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
    for l in $LEVELS; do
        for t in 1 2; do
            OMP_NUM_THREADS=$t /usr/bin/time -f "%e %U %S" -a -o "$OUT/t$l.$t" "$TERRANE" convert \
                "$IN" "$OUT/t$l.png" --compression "$l" -q
        done
    done
    /usr/bin/time -f "%e %U %S" -a -o "$OUT/g" gdal_translate -q -of PNG -co ZLEVEL=6 "$IN" "$OUT/g.png"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
# median and best of wall ($1) and of CPU ($2 + $3)
stats() { awk '{ print $1, $2 + $3 }' "$1" | sort -n -k"$2" | awk -v c="$2" '{ v[NR] = $c }
    END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f", m, v[1] }'; }
printf '%-38s %9s %9s %9s %9s %10s\n' "$ROUNDS rounds" "wall med" "wall best" "cpu med" "cpu best" "bytes"
for l in $LEVELS; do
    for t in 1 2; do
        printf '%-38s %9s %9s %9s %9s %10s\n' "terrane convert, level $l, $t thread(s)" \
            $(stats "$OUT/t$l.$t" 1) $(stats "$OUT/t$l.$t" 2) "$(wc -c <"$OUT/t$l.png")"
    done
done
printf '%-38s %9s %9s %9s %9s %10s\n' "gdal_translate ZLEVEL=6" $(stats "$OUT/g" 1) $(stats "$OUT/g" 2) \
    "$(wc -c <"$OUT/g.png")"
rm -rf "$OUT"
