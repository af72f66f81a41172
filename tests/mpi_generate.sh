#!/bin/sh
# mpirun -np N terrane-mpi generate writes the bytes of one process and of
# 'terrane generate --tiles' (the same tiled BigTIFF), for tiles that do not divide the grid;
# the band files and tile caches are gone afterwards; a bad recipe is refused with one message.
# usage: mpi_generate.sh MPIRUN TERRANE_MPI TERRANE NP SOURCE_DIR WORKDIR
set -eu
mpirun=$1 tool=$2 cli=$3 np=$4 src=$5 work=$6
rm -rf "$work" && mkdir -p "$work"
fail=0
recipe="$src/examples/recipes/valley.json"
for args in "--resolution 100x100 --tiles 16" "--resolution 63x80 --tiles 32"; do
    # shellcheck disable=SC2086
    "$cli" generate "$recipe" $args -q -o "$work/cli.tif"
    # shellcheck disable=SC2086
    "$mpirun" -np 1 "$tool" generate "$recipe" $args -o "$work/one.tif" >"$work/one.txt"
    # shellcheck disable=SC2086
    "$mpirun" -np "$np" --oversubscribe "$tool" generate "$recipe" $args -o "$work/many.tif" \
        >"$work/many.txt"
    cmp -s "$work/one.tif" "$work/cli.tif" || { echo "FAIL $args: -np 1 differs from terrane generate --tiles"; fail=1; }
    cmp -s "$work/many.tif" "$work/cli.tif" || { echo "FAIL $args: -np $np differs from terrane generate --tiles"; fail=1; }
    grep -q "$np processes" "$work/many.txt" || { echo "FAIL: not $np processes"; cat "$work/many.txt"; fail=1; }
    [ "$(grep xxh64 "$work/one.txt")" = "$(grep xxh64 "$work/many.txt")" ] || {
        echo "FAIL $args: hashes differ"; cat "$work/one.txt" "$work/many.txt"; fail=1; }
    left=$(ls "$work" | grep -c -e '\.part' -e 'terrane-tiles-' || true)
    [ "$left" = 0 ] || { echo "FAIL: band files or tile caches left:"; ls "$work"; fail=1; }
    echo "ok $args -np $np $(grep xxh64 "$work/many.txt")"
done
# A missing recipe: one message naming it, exit 1, no output.
if "$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/missing.json" --tiles 16 \
    -o "$work/bad.tif" >"$work/bad.txt" 2>&1; then
    echo "FAIL: a missing recipe was accepted"; fail=1
fi
[ "$(grep -c 'missing.json' "$work/bad.txt")" = 1 ] || { echo "FAIL: not one message naming the recipe"; cat "$work/bad.txt"; fail=1; }
[ ! -e "$work/bad.tif" ] || { echo "FAIL: an output was written"; fail=1; }
exit $fail
