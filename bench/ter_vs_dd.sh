#!/bin/bash
# A .ter copy (terrane convert in.ter out.ter: read, check, atomic write with fsync) against
# dd bs=1M conv=fsync of the same file, interleaved; median and best of RUNS with the load.
# usage: bench/ter_vs_dd.sh [BUILD_DIR] [DIR] [RUNS] [SIZE]   (DIR on the disk to measure)
set -eu
BUILD=${1:-build}
DIR=${2:-${TMPDIR:-/tmp}}
RUNS=${3:-7}
SIZE=${4:-8192}
W=$(mktemp -d "$DIR/ter_vs_dd.XXXXXX")
trap 'rm -rf "$W"' EXIT
"$BUILD/bench_busy" ter "$SIZE" "$W/in.ter"
cat "$W/in.ter" >/dev/null # both read it from the page cache
: >"$W/t.terrane"; : >"$W/t.dd"
for _ in $(seq "$RUNS"); do
    l=$(cut -d' ' -f1 /proc/loadavg)
    s=$(date +%s.%N); "$BUILD/terrane" convert "$W/in.ter" "$W/out.ter" -q; e=$(date +%s.%N)
    echo "$(awk -v a="$s" -v b="$e" 'BEGIN { print b - a }') $l" >>"$W/t.terrane"
    l=$(cut -d' ' -f1 /proc/loadavg)
    s=$(date +%s.%N); dd if="$W/in.ter" of="$W/dd.ter" bs=1M conv=fsync 2>/dev/null; e=$(date +%s.%N)
    echo "$(awk -v a="$s" -v b="$e" 'BEGIN { print b - a }') $l" >>"$W/t.dd"
    rm -f "$W/out.ter" "$W/dd.ter"
done
stats() { sort -n | awk '{ t[NR] = $1; l[NR] = $2 } END {
    lo = l[1]; hi = l[1]; for (i = 1; i <= NR; i++) { if (l[i] < lo) lo = l[i]; if (l[i] > hi) hi = l[i] }
    m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
    printf "%.3f %.3f %.2f-%.2f\n", m, t[1], lo, hi }'; }
read -r mt bt lt < <(stats <"$W/t.terrane")
read -r md bd ld < <(stats <"$W/t.dd")
echo "ter_vs_dd: $SIZE^2 .ter ($(stat -c %s "$W/in.ter") bytes) in $DIR, $RUNS interleaved runs, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "terrane convert: median $mt s, best $bt s (load $lt)"
echo "dd conv=fsync:   median $md s, best $bd s (load $ld)"
awk -v a="$md" -v b="$mt" -v c="$bd" -v d="$bt" 'BEGIN { printf "speed of dd: median %.2fx, best %.2fx (goal >= 0.9)\n", a / b, c / d }'
