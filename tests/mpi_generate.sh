#!/bin/sh
# mpirun -np N terrane-mpi generate writes the bytes of one process and of
# 'terrane generate --tiles' (the same tiled BigTIFF), for tiles that do not divide the grid;
# the band files and tile caches are gone afterwards; a Drainage node (its results kept in
# tiles, read back with halos by tile nodes downstream) and a stream power evolution's steps on
# the output grid are split across the processes, and a droplet erosion by rows keeps its
# results in tiles there (no process writes them all); a bad recipe is refused with one message.
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
# A Drainage node is split across the processes (Barnes' tiled fill and accumulation, the spill
# graph on one process) instead of run whole on each: the same bytes, and the run says so.
cat >"$work/drain.json" <<'JSON'
{"size": [1024, 1024], "resolution": [100, 100], "seed": 5, "default_landform": "base",
 "landforms": {"base": {"height_variation": 100}}, "default_biome": "g",
 "biomes": {"g": {"color": [0.4, 0.6, 0.3, 1]}},
 "graph": {"format_version": 1, "output": "out", "nodes": [
  {"id": "n", "type": "noise_terrain", "params": {"height_variation": 200, "feature_size": 300, "octaves": 5}},
  {"id": "d", "type": "drainage", "params": {"sea": "off"}, "inputs": {"field": {"node": "n"}}},
  {"id": "f", "type": "flow_accumulation", "params": {"method": "d8"},
   "inputs": {"drainage": {"node": "d", "pin": "drainage"}}},
  {"id": "c", "type": "height_offset", "params": {"offset": -20},
   "inputs": {"field": {"node": "n"}, "mask": {"node": "f"}}},
  {"id": "out", "type": "terrain_output", "inputs": {"field": {"node": "c"}}}]}}
JSON
for tile in 16 48; do
    "$cli" generate "$work/drain.json" --tiles $tile -q -o "$work/cli.tif"
    "$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/drain.json" --tiles $tile \
        -o "$work/many.tif" >"$work/many.txt"
    cmp -s "$work/many.tif" "$work/cli.tif" || { echo "FAIL drainage --tiles $tile: -np $np differs from terrane generate --tiles"; fail=1; }
    # Tiles of 48: 3 rows of tiles, so with 4 processes one has none and sits the drainage out.
    want=$np
    [ "$tile" = 48 ] && [ "$np" -gt 3 ] && want=3
    grep -q "drainage: 1 node(s) split across $want processes" "$work/many.txt" || {
        echo "FAIL drainage --tiles $tile: not split across $want processes"; cat "$work/many.txt"; fail=1; }
    echo "ok drainage --tiles $tile -np $np $(grep '^drainage' "$work/many.txt")"
done
# The split drainage keeps its results in tiles (each process writes its own to a tile cache
# every process shares, nothing gathered whole): a D8 Flow Accumulation of it and a filling Drain
# Depressions are split too, and a slope mask reads the filled heights one sample beyond each
# tile, across the processes' tiles; cache tiles of 64 that leave a last row and column of one
# sample (129) and that do not divide the grid (101 x 91). The bytes of 'terrane generate
# --tiles' on any process count, and nothing left in the folder.
cat >"$work/fill.json" <<'JSON'
{"size": [1024, 1024], "resolution": [128, 128], "seed": 7, "default_landform": "base",
 "landforms": {"base": {"height_variation": 100}}, "default_biome": "g",
 "biomes": {"g": {"color": [0.4, 0.6, 0.3, 1]}},
 "graph": {"format_version": 1, "output": "out", "nodes": [
  {"id": "n", "type": "noise_terrain", "params": {"height_variation": 200, "feature_size": 250, "octaves": 5}},
  {"id": "d", "type": "drainage", "params": {"sea": "off"}, "inputs": {"field": {"node": "n"}}},
  {"id": "f", "type": "flow_accumulation", "params": {"method": "d8"},
   "inputs": {"drainage": {"node": "d", "pin": "drainage"}}},
  {"id": "dd", "type": "drain_depressions", "params": {"mode": "fill", "sea": "off"},
   "inputs": {"field": {"node": "n"}}},
  {"id": "s", "type": "slope_mask", "inputs": {"field": {"node": "dd"}}},
  {"id": "b", "type": "height_offset", "params": {"offset": -20},
   "inputs": {"field": {"node": "dd"}, "mask": {"node": "f"}}},
  {"id": "c", "type": "height_offset", "params": {"offset": 15},
   "inputs": {"field": {"node": "b"}, "mask": {"node": "s"}}},
  {"id": "out", "type": "terrain_output", "inputs": {"field": {"node": "c"}}}]}}
JSON
# A breaching Drain Depressions (the default mode) is split the same way: each process breaches
# its tiles, the heights its tiles' exits pass on are solved on process 0, each breaches again.
sed -e 's/"mode": "fill"/"mode": "breach"/' "$work/fill.json" >"$work/breach.json"
for mode in fill breach; do
for args in "--tiles 16" "--tiles 48 --resolution 100x90" "--tiles 64"; do
    # shellcheck disable=SC2086
    "$cli" generate "$work/$mode.json" $args -q -o "$work/cli.tif"
    # shellcheck disable=SC2086
    "$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/$mode.json" $args \
        -o "$work/many.tif" >"$work/many.txt"
    cmp -s "$work/many.tif" "$work/cli.tif" || { echo "FAIL $mode $args: -np $np differs from terrane generate --tiles"; fail=1; }
    grep -q "drainage: 2 node(s) split across .* 2 kept in tiles of 64, 0 gathered whole" "$work/many.txt" || {
        echo "FAIL $mode $args: the drainage and the $mode not kept in tiles"; cat "$work/many.txt"; fail=1; }
    if [ "$mode" = breach ]; then
        # 3 rows of tiles of 64 at 128 x 128, 2 of 48 at 100 x 90: with more processes than
        # rows, some sit out.
        want=$np
        case "$args" in
            *48*) [ "$np" -gt 2 ] && want=2 ;;
            *64*) [ "$np" -gt 3 ] && want=3 ;;
        esac
        grep -q "drain depressions: 1 breach(es) split across $want processes" "$work/many.txt" || {
            echo "FAIL breach $args: not split across $want processes"; cat "$work/many.txt"; fail=1; }
    fi
    left=$(ls "$work" | grep -c -e '\.part' -e 'terrane-tiles-' || true)
    [ "$left" = 0 ] || { echo "FAIL: band files or tile caches left:"; ls "$work"; fail=1; }
    echo "ok $mode $args -np $np $(grep -e '^drainage' -e '^drain dep' "$work/many.txt" | tr '\n' ' ')"
done
done
# A node that reads the drainage whole (multiple-flow accumulation) gets it gathered whole, and
# the run says which node: the same bytes.
sed -e 's/"method": "d8"/"method": "mfd"/' "$work/fill.json" >"$work/mfd.json"
"$cli" generate "$work/mfd.json" --tiles 32 -q -o "$work/cli.tif"
"$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/mfd.json" --tiles 32 \
    -o "$work/many.tif" >"$work/many.txt"
cmp -s "$work/many.tif" "$work/cli.tif" || { echo "FAIL mfd: -np $np differs from terrane generate --tiles"; fail=1; }
grep -q "drainage: gathered whole for node 'f' (flow_accumulation)" "$work/many.txt" || {
    echo "FAIL mfd: the run does not say which node read the drainage whole"; cat "$work/many.txt"; fail=1; }
echo "ok mfd -np $np $(grep '^drainage' "$work/many.txt" | tr '\n' ' ')"
# A droplet erosion reads a split fill row band by row band from the shared folder, its
# droplets shared by the processes by bands of rows, and keeps its results there too (each
# process writes the rows it keeps, none the whole grid); a slope mask reads its heights one
# sample around each tile, across the processes' rows, and an offset its deposited mask (the
# largest rise over every process's rows): the same bytes.
cat >"$work/erode.json" <<'JSON'
{"size": [1024, 1024], "resolution": [100, 100], "seed": 5, "default_landform": "base",
 "landforms": {"base": {"height_variation": 100}}, "default_biome": "g",
 "biomes": {"g": {"color": [0.4, 0.6, 0.3, 1]}},
 "graph": {"format_version": 1, "output": "out", "nodes": [
  {"id": "n", "type": "noise_terrain", "params": {"height_variation": 200, "feature_size": 300, "octaves": 5}},
  {"id": "dd", "type": "drain_depressions", "params": {"mode": "fill"}, "inputs": {"field": {"node": "n"}}},
  {"id": "e", "type": "erosion", "params": {"lifetime": 4, "radius": 2, "thermal_iterations": 3,
   "droplet_density": 2}, "inputs": {"field": {"node": "dd"}}},
  {"id": "s", "type": "slope_mask", "params": {"min": 2, "max": 30}, "inputs": {"field": {"node": "e", "pin": "field"}}},
  {"id": "a", "type": "height_offset", "params": {"offset": 8},
   "inputs": {"field": {"node": "e", "pin": "field"}, "mask": {"node": "e", "pin": "deposited"}}},
  {"id": "b", "type": "height_offset", "params": {"offset": -5},
   "inputs": {"field": {"node": "a"}, "mask": {"node": "s"}}},
  {"id": "out", "type": "terrain_output", "inputs": {"field": {"node": "b"}}}]}}
JSON
"$cli" generate "$work/erode.json" --tiles 32 -q -o "$work/cli.tif"
"$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/erode.json" --tiles 32 \
    -o "$work/many.tif" >"$work/many.txt"
cmp -s "$work/many.tif" "$work/cli.tif" || { echo "FAIL erosion of a split fill: -np $np differs from terrane generate --tiles"; fail=1; }
grep -q "1 kept in tiles of 64" "$work/many.txt" || { echo "FAIL erosion of a split fill: the fill not kept in tiles"; cat "$work/many.txt"; fail=1; }
# Droplet tiles of 18 samples: 6 bands of rows, cache tiles of 64 (two rows of them, kept by
# two processes): the busiest process wrote less than the whole result.
kept=$(grep '^erosion: kept in tiles' "$work/many.txt" || true)
most=$(echo "$kept" | sed -n 's/.*: \([0-9.]*\) MiB written by the busiest process, \([0-9.]*\) MiB in all/\1/p')
all=$(echo "$kept" | sed -n 's/.*: \([0-9.]*\) MiB written by the busiest process, \([0-9.]*\) MiB in all/\2/p')
if [ -z "$most" ] || [ -z "$all" ] || ! awk -v m="$most" -v a="$all" 'BEGIN { exit !(m > 0 && m < a) }'; then
    echo "FAIL erosion of a split fill: a process wrote the whole eroded grid ($kept)"; cat "$work/many.txt"; fail=1
fi
echo "ok erosion of a split fill -np $np $kept"
# A stream power evolution's steps on the output grid share their tiles across the processes
# (frames exchanged, the small graphs on process 0): the bytes of 'terrane generate --tiles'
# and of the whole grid without tiles, on a grid the tiles do not divide; without and with
# deposition (its sums gathered across the tiles in rounds).
for dep in 0 1; do
cat >"$work/sp.json" <<JSON
{"size": [2048, 1536], "resolution": [150, 110], "seed": 9, "default_landform": "base",
 "landforms": {"base": {"height_variation": 100}}, "default_biome": "g",
 "biomes": {"g": {"color": [0.4, 0.6, 0.3, 1]}},
 "graph": {"format_version": 1, "output": "out", "nodes": [
  {"id": "n", "type": "noise_terrain", "params": {"height_variation": 300, "feature_size": 600, "octaves": 5}},
  {"id": "e", "type": "stream_power", "params": {"reference_cell": 30, "evolution_cell": 32,
   "fine_steps": 3, "steps": 20, "m": 0.5, "relief": "input", "border": "outlets", "deposition": $dep},
   "inputs": {"field": {"node": "n"}}},
  {"id": "out", "type": "terrain_output", "inputs": {"field": {"node": "e", "pin": "field"}}}]}}
JSON
"$cli" generate "$work/sp.json" -q -o "$work/whole.r32"
for tile in 16 48; do
    "$cli" generate "$work/sp.json" --tiles $tile -q -o "$work/cli.tif"
    "$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/sp.json" --tiles $tile \
        -o "$work/many.tif" >"$work/many.txt"
    cmp -s "$work/many.tif" "$work/cli.tif" || { echo "FAIL stream power deposition $dep --tiles $tile: -np $np differs from terrane generate --tiles"; fail=1; }
    "$cli" convert "$work/many.tif" "$work/many.r32" >/dev/null 2>&1
    cmp -s "$work/many.r32" "$work/whole.r32" || { echo "FAIL stream power deposition $dep --tiles $tile: -np $np differs from the whole grid"; fail=1; }
    # 7 rows of tiles of 16, 3 of 48: with 4 processes and tiles of 48 one sits out.
    want=$np
    [ "$tile" = 48 ] && [ "$np" -gt 3 ] && want=3
    grep -q "stream power: 1 node(s) with their steps on the output grid split across $want processes" "$work/many.txt" || {
        echo "FAIL stream power deposition $dep --tiles $tile: not split across $want processes"; cat "$work/many.txt"; fail=1; }
    grep -q "1 result(s) kept by bands of rows in the shared folder" "$work/many.txt" || {
        echo "FAIL stream power deposition $dep --tiles $tile: the result not kept by bands"; cat "$work/many.txt"; fail=1; }
    echo "ok stream power deposition $dep --tiles $tile -np $np $(grep '^stream power' "$work/many.txt")"
done
done
# The Mountain Range preset, whose evolution deposits and whose fine steps on the output grid
# are split (frames point to point to the processes that read them, the result one process's
# block at a time): the bytes of 'terrane generate --tiles'.
"$cli" generate builtin://terrain/mountain-range --resolution 512x512 --tiles 128 -q -o "$work/cli.tif"
"$mpirun" -np "$np" --oversubscribe "$tool" generate builtin://terrain/mountain-range \
    --resolution 512x512 --tiles 128 -o "$work/many.tif" >"$work/many.txt"
cmp -s "$work/many.tif" "$work/cli.tif" || { echo "FAIL mountain range: -np $np differs from terrane generate --tiles"; fail=1; }
grep -q "stream power: 1 node(s) with their steps on the output grid split across $np processes" "$work/many.txt" || {
    echo "FAIL mountain range: its fine steps not split across $np processes"; cat "$work/many.txt"; fail=1; }
# Its result kept by bands of rows in the shared folder: no process receives it whole.
grep -q "1 result(s) kept by bands of rows in the shared folder" "$work/many.txt" || {
    echo "FAIL mountain range: its evolution's result not kept by bands"; cat "$work/many.txt"; fail=1; }
echo "ok mountain range -np $np $(grep '^stream power' "$work/many.txt")"
# A DEM input is a tile node: each process resamples its own tiles from the file (enlarged by
# the spline, a slope mask's halo below it), the bytes of 'terrane generate --tiles'.
cat >"$work/demsrc.json" <<'JSON'
{"size": [256, 256], "resolution": [40, 40], "seed": 3, "default_landform": "base",
 "landforms": {"base": {"height_variation": 60, "feature_size": 80}}, "default_biome": "g",
 "biomes": {"g": {"color": [0.4, 0.6, 0.3, 1]}}}
JSON
"$cli" generate "$work/demsrc.json" -q -o "$work/dem.r16"
cat >"$work/dem.json" <<'JSON'
{"size": [512, 512], "resolution": [150, 130], "seed": 9, "default_landform": "l",
 "landforms": {"l": {}}, "default_biome": "g", "biomes": {"g": {"color": [0.4, 0.6, 0.3, 1]}},
 "graph": {"format_version": 1, "output": "out", "nodes": [
  {"id": "dem", "type": "heightfield_input", "params": {"path": "dem.r16", "format": "r16", "resample": "spline"}},
  {"id": "sm", "type": "slope_mask", "params": {"min": 5, "max": 30}, "inputs": {"field": {"node": "dem"}}},
  {"id": "off", "type": "height_offset", "params": {"offset": 4}, "inputs": {"field": {"node": "dem"}, "mask": {"node": "sm"}}},
  {"id": "out", "type": "terrain_output", "inputs": {"field": {"node": "off"}}}]}}
JSON
"$cli" generate "$work/dem.json" --tiles 48 -q -o "$work/cli.tif"
"$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/dem.json" --tiles 48 \
    -o "$work/many.tif" >"$work/many.txt"
cmp -s "$work/many.tif" "$work/cli.tif" || { echo "FAIL dem: -np $np differs from terrane generate --tiles"; fail=1; }
echo "ok dem -np $np $(grep xxh64 "$work/many.txt")"
# A missing recipe: one message naming it, exit 1, no output.
if "$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/missing.json" --tiles 16 \
    -o "$work/bad.tif" >"$work/bad.txt" 2>&1; then
    echo "FAIL: a missing recipe was accepted"; fail=1
fi
[ "$(grep -c 'missing.json' "$work/bad.txt")" = 1 ] || { echo "FAIL: not one message naming the recipe"; cat "$work/bad.txt"; fail=1; }
[ ! -e "$work/bad.tif" ] || { echo "FAIL: an output was written"; fail=1; }
# A recipe that is not JSON: the message names the line and column, as terrane generate's does.
printf '{"size": [100, 100],\n "resolution": [10,' >"$work/broken.json"
"$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/broken.json" --tiles 16 \
    -o "$work/bad.tif" >"$work/bad.txt" 2>&1 && { echo "FAIL: broken JSON accepted"; fail=1; }
grep -q 'broken.json:2:[0-9]*: invalid JSON' "$work/bad.txt" || { echo "FAIL: no line:column for broken JSON"; cat "$work/bad.txt"; fail=1; }
# A tile size the GeoTIFF cannot take: refused with a message saying which, not only the usage.
"$mpirun" -np "$np" --oversubscribe "$tool" generate "$recipe" --tiles 10 -o "$work/bad.tif" \
    >"$work/bad.txt" 2>&1 && { echo "FAIL: --tiles 10 accepted"; fail=1; }
grep -q -- '--tiles must be a multiple of 16 from 16 to 65536 (the GeoTIFF.s tile), not 10' "$work/bad.txt" || {
    echo "FAIL: --tiles 10 not named"; cat "$work/bad.txt"; fail=1; }
[ ! -e "$work/bad.tif" ] || { echo "FAIL: an output was written"; fail=1; }
exit $fail
