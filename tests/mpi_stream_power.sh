#!/bin/sh
# mpirun -np N terrane-mpi stream-power gives the one-process bytes: heights and drainage area
# hashes equal to -np 1 and to the whole-grid solve, for tiles that do not divide the grid, in
# memory and in files; frames and graphs crossed between the processes.
# usage: mpi_stream_power.sh MPIRUN TERRANE_MPI NP WORKDIR
set -eu
mpirun=$1 tool=$2 np=$3 work=$4
rm -rf "$work" && mkdir -p "$work/files"
fail=0
for args in "--landform 150 --tile 37 --steps 3" "--landform 201 --tile 48 --steps 2 --seed 9 --dir $work/files"; do
    # shellcheck disable=SC2086
    "$mpirun" -np 1 "$tool" stream-power $args >"$work/one.txt"
    # shellcheck disable=SC2086
    "$mpirun" -np "$np" --oversubscribe "$tool" stream-power $args --whole >"$work/many.txt"
    grep xxh64 "$work/one.txt" >"$work/one.h"
    grep xxh64 "$work/many.txt" >"$work/many.h"
    if ! cmp -s "$work/one.h" "$work/many.h"; then
        echo "FAIL $args: -np $np hashes differ from -np 1"; cat "$work/one.h" "$work/many.h"; fail=1
    fi
    if ! grep -q "whole grid: same bytes" "$work/many.txt"; then
        echo "FAIL $args: -np $np differs from the whole-grid solve"; cat "$work/many.txt"; fail=1
    fi
    grep -q "$np processes" "$work/many.txt" || { echo "FAIL: not $np processes"; fail=1; }
    grep -q '^frames   sent 0.000 MiB' "$work/many.txt" && { echo "FAIL: no frames crossed"; fail=1; }
    grep -q '^graphs   sent 0.000 MiB' "$work/many.txt" && { echo "FAIL: no graphs crossed"; fail=1; }
    echo "ok $args -np $np $(grep '^heights' "$work/many.txt")"
done
[ -z "$(ls "$work/files")" ] || { echo "FAIL: tile files left behind"; ls "$work/files"; fail=1; }
exit $fail
