#!/bin/sh
# mpirun -np N terrane-mpi generate with sculpt strokes (raise, lower, flatten, smooth) and a
# protection snapshot, a chain of them crossing a band border, others at the grid's edge,
# with a painted region and an exclusion (they leave the heights alone): the bytes of one
# process, of 'terrane generate --tiles' and of the whole grid generated without tiles, for
# tiles that do not divide the grid; the same with a split Drain Depressions (each process
# reading beyond its band the filled tiles other processes wrote). The strokes change the
# heights, their order matters, and process 0 says what they cost. A region that blends in its
# own landform is refused with one message. Two smooths, one reading what the other left across
# a band border. Strokes over a split stream power evolution, fill and erosion by rows.
# usage: mpi_generate_strokes.sh MPIRUN TERRANE_MPI TERRANE NP WORKDIR
set -eu
mpirun=$1 tool=$2 cli=$3 np=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
fail=0
# 101 x 91 samples over 1000 x 900 m (10 m a sample). A chain of overlapping strokes over rows
# 24 to 70 crosses the band border at row 48 (2 processes, and 4 at tiles of 16: borders at 16,
# 48 and 64); the smooths have a hard edge and many stamps, so what they leave depends on what
# the strokes before them left. A raise at the far corner, a lower at the west edge across row
# 16.
edits='{"type": "raise", "radius": 60, "strength": 8, "points": [[500, 300], [520, 400], [540, 480]]},
 {"type": "smooth", "radius": 50, "strength": 1, "falloff": 0,
  "points": [[500, 350], [505, 385], [510, 420], [515, 455], [520, 490], [525, 525], [530, 560], [535, 595]]},
 {"type": "flatten", "radius": 70, "target_height": 40, "points": [[300, 420], [330, 470], [360, 520]]},
 {"type": "lower", "radius": 60, "strength": 6, "points": [[540, 520], [560, 600]]},
 {"type": "smooth", "radius": 40, "strength": 1, "falloff": 0, "points": [[560, 560], [570, 590], [580, 620]]},
 {"type": "raise", "radius": 45, "strength": 5, "center": [995, 895]},
 {"type": "lower", "radius": 35, "strength": 4, "center": [3, 160]},
 {"type": "protect", "grid": [100, 90], "samples": [[50, 40, 12.5], [51, 40, -3], [50, 70, 20]]}'
recipe() { # $1: the edits, $2: the graph (or nothing)
cat <<JSON
{"size": [1000, 900], "resolution": [100, 90], "seed": 11, "default_landform": "hills",
 "landforms": {"hills": {"height_variation": 60, "feature_size": 250, "octaves": 5}},
 "default_biome": "g", "biomes": {"g": {"color": [0.4, 0.6, 0.3, 1]}, "s": {"color": [0.8, 0.7, 0.5, 1]}},
 "regions": [{"type": "region", "biome": "s", "radius": 80, "center": [500, 450]}],
 "exclusions": [{"type": "exclusion", "radius": 50, "center": [200, 200]}],
 $2
 "edits": [$1]}
JSON
}
fill='"graph": {"format_version": 1, "output": "out", "nodes": [
  {"id": "n", "type": "noise_terrain", "params": {"height_variation": 200, "feature_size": 250, "octaves": 5}},
  {"id": "dd", "type": "drain_depressions", "params": {"mode": "fill", "sea": "off"}, "inputs": {"field": {"node": "n"}}},
  {"id": "s", "type": "slope_mask", "inputs": {"field": {"node": "dd"}}},
  {"id": "c", "type": "height_offset", "params": {"offset": 15}, "inputs": {"field": {"node": "dd"}, "mask": {"node": "s"}}},
  {"id": "out", "type": "terrain_output", "inputs": {"field": {"node": "c"}}}]},'
recipe "$edits" "" >"$work/strokes.json"
recipe "$edits" "$fill" >"$work/fill.json"
for name in strokes fill; do
    "$cli" generate "$work/$name.json" -q -o "$work/$name-whole.r32"
    for tile in 16 48; do
        "$cli" generate "$work/$name.json" --tiles $tile -q -o "$work/cli.tif"
        "$mpirun" -np 1 "$tool" generate "$work/$name.json" --tiles $tile -o "$work/one.tif" \
            >"$work/one.txt"
        "$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/$name.json" --tiles $tile \
            -o "$work/many.tif" >"$work/many.txt"
        cmp -s "$work/one.tif" "$work/cli.tif" || { echo "FAIL $name --tiles $tile: -np 1 differs from terrane generate --tiles"; fail=1; }
        cmp -s "$work/many.tif" "$work/cli.tif" || { echo "FAIL $name --tiles $tile: -np $np differs from terrane generate --tiles"; fail=1; }
        "$cli" convert "$work/many.tif" "$work/many.r32" >/dev/null 2>&1
        cmp -s "$work/many.r32" "$work/$name-whole.r32" || { echo "FAIL $name --tiles $tile: -np $np differs from the whole grid"; fail=1; }
        grep -q "^strokes: up to [0-9]* sculpt and protection stroke(s) replayed on a process; [0-9]* rows evaluated again for them beyond the processes. own" "$work/many.txt" || {
            echo "FAIL $name --tiles $tile: the strokes' cost not said"; cat "$work/many.txt"; fail=1; }
        for f in "$work"/*.part* "$work"/terrane-tiles-*; do
            [ -e "$f" ] && { echo "FAIL: band file or tile cache left: $f"; fail=1; }
        done
        echo "ok $name --tiles $tile -np $np $(grep '^strokes' "$work/many.txt")"
    done
done
# Two smooths with a hard edge across the band border at row 48: the first lies wholly below the
# border, the second crosses it and reads what the first left. The process above the border
# must run the first as well, over its whole box, before the second.
cat >"$work/order.json" <<'JSON'
{"size": [1000, 900], "resolution": [100, 90], "seed": 11, "default_landform": "hills",
 "landforms": {"hills": {"height_variation": 60, "feature_size": 120, "octaves": 5}},
 "default_biome": "g", "biomes": {"g": {"color": [0.4, 0.6, 0.3, 1]}},
 "edits": [{"type": "smooth", "radius": 50, "strength": 1, "falloff": 0,
  "points": [[500, 330], [500, 345], [500, 360], [500, 375], [500, 390], [500, 405], [500, 410]]},
 {"type": "smooth", "radius": 50, "strength": 1, "falloff": 0,
  "points": [[500, 440], [500, 450], [500, 460], [500, 470], [500, 480], [500, 490], [500, 500]]}]}
JSON
"$cli" generate "$work/order.json" -q -o "$work/order-whole.r32"
"$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/order.json" --tiles 16 \
    -o "$work/many.tif" >"$work/many.txt"
"$cli" convert "$work/many.tif" "$work/many.r32" >/dev/null 2>&1
cmp -s "$work/many.r32" "$work/order-whole.r32" || { echo "FAIL two smooths across a border: -np $np differs from the whole grid"; fail=1; }
echo "ok two smooths across a border -np $np $(grep '^strokes' "$work/many.txt")"
# Strokes over a stream power evolution split across the processes (its result kept by bands of
# rows), a split fill of it and a droplet erosion by rows: the rows evaluated again read the
# other processes' bands from the shared folder. The bytes of terrane generate --tiles and of
# the whole grid.
cat >"$work/sp.json" <<'JSON'
{"size": [2048, 1536], "resolution": [150, 110], "seed": 9, "default_landform": "base",
 "landforms": {"base": {"height_variation": 100}}, "default_biome": "g",
 "biomes": {"g": {"color": [0.4, 0.6, 0.3, 1]}},
 "edits": [{"type": "raise", "radius": 100, "strength": 20, "points": [[1000, 500], [1050, 700]]},
  {"type": "smooth", "radius": 90, "strength": 1, "falloff": 0, "points": [[1000, 600], [1020, 700], [1040, 800], [1060, 900]]},
  {"type": "lower", "radius": 60, "strength": 10, "center": [2040, 1530]}],
 "graph": {"format_version": 1, "output": "out", "nodes": [
  {"id": "n", "type": "noise_terrain", "params": {"height_variation": 300, "feature_size": 600, "octaves": 5}},
  {"id": "e", "type": "stream_power", "params": {"reference_cell": 30, "evolution_cell": 32,
   "fine_steps": 3, "steps": 20, "m": 0.5, "relief": "input", "border": "outlets", "deposition": 1},
   "inputs": {"field": {"node": "n"}}},
  {"id": "dd", "type": "drain_depressions", "params": {"mode": "fill"}, "inputs": {"field": {"node": "e", "pin": "field"}}},
  {"id": "er", "type": "erosion", "params": {"lifetime": 4, "radius": 2, "thermal_iterations": 3,
   "droplet_density": 2}, "inputs": {"field": {"node": "dd"}}},
  {"id": "s", "type": "slope_mask", "params": {"min": 2, "max": 30}, "inputs": {"field": {"node": "er", "pin": "field"}}},
  {"id": "b", "type": "height_offset", "params": {"offset": -5},
   "inputs": {"field": {"node": "er", "pin": "field"}, "mask": {"node": "s"}}},
  {"id": "out", "type": "terrain_output", "inputs": {"field": {"node": "b"}}}]}}
JSON
"$cli" generate "$work/sp.json" -q -o "$work/sp-whole.r32"
"$cli" generate "$work/sp.json" --tiles 16 -q -o "$work/cli.tif"
"$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/sp.json" --tiles 16 \
    -o "$work/many.tif" >"$work/many.txt"
cmp -s "$work/many.tif" "$work/cli.tif" || { echo "FAIL stream power with strokes: -np $np differs from terrane generate --tiles"; fail=1; }
"$cli" convert "$work/many.tif" "$work/many.r32" >/dev/null 2>&1
cmp -s "$work/many.r32" "$work/sp-whole.r32" || { echo "FAIL stream power with strokes: -np $np differs from the whole grid"; fail=1; }
grep -q "1 result(s) kept by bands of rows in the shared folder" "$work/many.txt" || {
    echo "FAIL stream power with strokes: the result not kept by bands"; cat "$work/many.txt"; fail=1; }
grep -q "^strokes: .* [1-9][0-9]* rows evaluated again" "$work/many.txt" || {
    echo "FAIL stream power with strokes: no rows evaluated again"; cat "$work/many.txt"; fail=1; }
echo "ok stream power with strokes -np $np $(grep '^strokes' "$work/many.txt")"
# Another grid: the strokes kept at their terrain positions (a protection snapshot refuses that)
# or cleared, as terrane generate does; without either, refused with the choice named.
recipe "$(printf '%s\n' "$edits" | grep -v '"protect"' | sed '$s/},$/}/')" "" >"$work/keep.json"
for policy in --keep-edits --clear-edits; do
    "$cli" generate "$work/keep.json" --resolution 120x107 $policy --tiles 32 -q -o "$work/cli.tif"
    "$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/keep.json" --resolution 120x107 \
        $policy --tiles 32 -o "$work/many.tif" >"$work/many.txt"
    cmp -s "$work/many.tif" "$work/cli.tif" || { echo "FAIL $policy: -np $np differs from terrane generate --tiles"; fail=1; }
    echo "ok $policy -np $np"
done
"$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/keep.json" --resolution 120x107 \
    --tiles 32 -o "$work/bad.tif" >"$work/bad.txt" 2>&1 && { echo "FAIL: a new grid with strokes accepted without a choice"; fail=1; }
grep -q -- "--keep-edits keeps brush strokes" "$work/bad.txt" || { echo "FAIL: the choice not named"; cat "$work/bad.txt"; fail=1; }
# Both choices at once: refused, naming them.
"$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/keep.json" --resolution 120x107 \
    --keep-edits --clear-edits --tiles 32 -o "$work/bad.tif" >"$work/bad.txt" 2>&1 && { echo "FAIL: both edit choices accepted"; fail=1; }
grep -q -- "--keep-edits and --clear-edits exclude each other" "$work/bad.txt" || { echo "FAIL: the two choices not named"; cat "$work/bad.txt"; fail=1; }
# The strokes matter, and so does their order: without them, or with two swapped, other bytes.
recipe "" "" >"$work/none.json"
"$cli" generate "$work/none.json" -q -o "$work/none.r32"
cmp -s "$work/none.r32" "$work/strokes-whole.r32" && { echo "FAIL: the strokes change nothing"; fail=1; }
swapped=$(printf '%s\n' "$edits" | sed -n '1p;4,$p' | sed '$s/$/,/'; printf '%s\n' "$edits" | sed -n '2,3p' | sed 's/},$/}/')
recipe "$swapped" "" >"$work/swapped.json"
"$cli" generate "$work/swapped.json" -q -o "$work/swapped.r32"
cmp -s "$work/swapped.r32" "$work/strokes-whole.r32" && { echo "FAIL: the strokes' order changes nothing"; fail=1; }
# A region whose biome blends in a landform of its own reads that landform over the whole grid:
# refused, one message naming it.
sed -e 's/"s": {"color": \[0.8, 0.7, 0.5, 1\]}/"s": {"color": [0.8, 0.7, 0.5, 1], "landform": "flat"}/' \
    -e 's/"landforms": {/"landforms": {"flat": {"height_variation": 1},/' \
    "$work/strokes.json" >"$work/own.json"
if "$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/own.json" --tiles 16 \
    -o "$work/bad.tif" >"$work/bad.txt" 2>&1; then
    echo "FAIL: a region with its own landform was accepted"; fail=1
fi
[ "$(grep -c "regions\[0\] paints biome 's', which blends in its own landform" "$work/bad.txt")" = 1 ] || {
    echo "FAIL: not one message naming the region"; cat "$work/bad.txt"; fail=1; }
[ ! -e "$work/bad.tif" ] || { echo "FAIL: an output was written"; fail=1; }
exit $fail
