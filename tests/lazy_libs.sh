#!/bin/sh
# PROJ and libgeotiff (the library) and libmicrohttpd (the CLI's studio) are opened on first use,
# not at every start: neither terrane nor libterrane.so names them (ELF NEEDED), `terrane
# --version` loads none of them, and reading a GeoTIFF's GeoKeys opens PROJ and still normalises
# its CRS (the datum found through PROJ's database).
# usage: tests/lazy_libs.sh TERRANE LIBTERRANE_SO BUILD_DIR SOURCE_DIR
# (exit 77 = skipped: the build links them, as where their sonames were not found)
set -u
TERRANE=$1
LIB=$2
BUILD=$3
SRC=$4
fail() { echo "FAIL: $*"; exit 1; }
[ -f "$BUILD/lazy-libs.txt" ] || { echo "the build links PROJ and libgeotiff: skipped"; exit 77; }
command -v objdump >/dev/null 2>&1 || { echo "objdump not found: skipped"; exit 77; }
needed() { objdump -p "$1" | awk '$1 == "NEEDED" { print $2 }'; }
cli_libs=$(cat "$BUILD/lazy-libs.txt" "$BUILD/lazy-libs-cli.txt" 2>/dev/null)
for so in $(cat "$BUILD/lazy-libs.txt"); do
    needed "$LIB" | grep -qxF "$so" && fail "libterrane.so links $so"
done
for so in $cli_libs; do
    needed "$TERRANE" | grep -qxF "$so" && fail "terrane links $so"
done
echo "ok: neither names $(echo $cli_libs)"
loaded=$(LD_DEBUG=files "$TERRANE" --version 2>&1 >/dev/null | grep 'file=' | sed 's/.*file=\([^ ]*\).*/\1/' | sort -u)
for so in $cli_libs; do
    echo "$loaded" | grep -qxF "$so" && fail "terrane --version loaded $so"
done
echo "ok: terrane --version loads $(echo "$loaded" | wc -l) files, none of them"
dem=$SRC/fuzz/corpus/fuzz_geotiff/written_geographic_lzw.tif
out=$(LD_DEBUG=files "$TERRANE" info "$dem" 2>&1) || fail "terrane info $dem failed"
for so in $(cat "$BUILD/lazy-libs.txt"); do
    echo "$out" | grep -q "file=$so " || fail "reading GeoKeys did not open $so"
done
echo "$out" | grep -q '^crs: *EPSG:4326 (geographic), datum EPSG:6326' ||
    fail "the CRS was not normalised: $(echo "$out" | grep '^crs:')"
echo "ok: reading GeoKeys opens them and normalises the CRS (datum EPSG:6326)"
