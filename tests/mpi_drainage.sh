#!/bin/sh
# mpirun -np N terrane-mpi gives the one-process bytes: hashes equal to -np 1 and to the
# whole-grid fill, for tiles that do not divide the grid, with a sea and without.
# usage: mpi_drainage.sh MPIRUN TERRANE_MPI NP WORKDIR
set -eu
mpirun=$1 tool=$2 np=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
fail=0
for args in "--landform 257 --tile 37" "--landform 300 --tile 64 --sea 100 --seed 7"; do
    # shellcheck disable=SC2086
    "$mpirun" -np 1 "$tool" drainage $args >"$work/one.txt"
    # shellcheck disable=SC2086
    "$mpirun" -np "$np" --oversubscribe "$tool" drainage $args --whole --out "$work/many" \
        >"$work/many.txt"
    grep xxh64 "$work/one.txt" >"$work/one.h"
    grep xxh64 "$work/many.txt" >"$work/many.h"
    if ! cmp -s "$work/one.h" "$work/many.h"; then
        echo "FAIL $args: -np $np hashes differ from -np 1"; cat "$work/one.h" "$work/many.h"; fail=1
    fi
    if ! grep -q "one process: same bytes" "$work/many.txt"; then
        echo "FAIL $args: -np $np differs from the whole-grid fill"; cat "$work/many.txt"; fail=1
    fi
    grep -q "$np processes" "$work/many.txt" || { echo "FAIL: not $np processes"; fail=1; }
    # The written accumulation is the hashed one.
    acc=$(grep '^accumulation' "$work/many.txt" | awk '{print $3}')
    [ -s "$work/many-accumulation.u32" ] && [ -s "$work/many-filled.tif" ] || {
        echo "FAIL: outputs not written"; fail=1; }
    echo "ok $args -np $np accumulation $acc"
done
# A bad input is refused on every process with one message, exit 1.
if "$mpirun" -np "$np" --oversubscribe "$tool" drainage "$work/missing.tif" >"$work/bad.txt" 2>&1; then
    echo "FAIL: a missing input was accepted"; fail=1
fi
grep -q "missing.tif" "$work/bad.txt" || { echo "FAIL: the message does not name the file"; cat "$work/bad.txt"; fail=1; }
exit $fail
