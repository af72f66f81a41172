#!/bin/sh
# mpirun -np N terrane-mpi generate of a graph with every node type (the tiled evaluator's test
# graph, plus an erosion run by rows whose droplets the processes share) writes the bytes of
# 'terrane generate --tiles' and of the whole grid without tiles, for tiles that do not divide
# the grid.
# usage: mpi_every_node.sh MPIRUN TERRANE_MPI TERRANE NP WORKDIR
set -eu
mpirun=$1 tool=$2 cli=$3 np=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
fail=0
# The DEM the heightfield_input reads: a small generated terrain as 16-bit RAW.
cat >"$work/dem.json" <<'JSON'
{"size": [256, 256], "resolution": [32, 32], "seed": 3, "default_landform": "base",
 "landforms": {"base": {"height_variation": 60, "feature_size": 80}}, "default_biome": "g",
 "biomes": {"g": {"color": [0.4, 0.6, 0.3, 1]}}}
JSON
"$cli" generate "$work/dem.json" -q -o "$work/dem.r16"
cat >"$work/all.json" <<'JSON'
{"size": [256, 256], "resolution": [64, 64], "seed": 77, "default_landform": "hills",
 "landforms": {"hills": {"base_height": 0, "height_variation": 60, "feature_size": 120,
   "octaves": 4, "warp_amplitude": 15}},
 "default_biome": "grass",
 "biomes": {"grass": {"color": [0.4, 0.6, 0.3, 1]}, "rock": {"color": [0.5, 0.5, 0.5, 1]}},
 "rules": [{"id": "steep", "biome": "rock", "priority": 1, "slope": [25, 90]}],
 "palette": {"format_version": 3, "name": "Test", "placements": {
   "grass": {"model": "asset://models/grass", "collision": "none", "category": "grass",
             "density": 0.2, "candidate_spacing": 2, "slope": [0, 30]}}},
 "graph": {"format_version": 1, "output": "out", "nodes": [
  {"id": "lf", "type": "landform", "params": {"landform": "hills"}},
  {"id": "flat", "type": "flat_terrain", "params": {"height": 3}},
  {"id": "base", "type": "noise_terrain", "params": {"height_variation": 50, "feature_size": 100,
   "warp_amplitude": 20, "heading": 30, "stretch": 1.5}},
  {"id": "hin", "type": "heightfield_input", "params": {"path": "dem.r16", "format": "r16",
   "max_height": 80}},
  {"id": "em", "type": "elevation_mask", "params": {"min": 10, "max": 30},
   "inputs": {"field": {"node": "base"}}},
  {"id": "sm", "type": "slope_mask", "params": {"min": 5, "max": 25}, "inputs": {"field": {"node": "lf"}}},
  {"id": "pm", "type": "path_distance_mask", "params": {"points": [[10, 10], [200, 150]], "edge_warp": 8},
   "inputs": {"field": {"node": "base"}}},
  {"id": "po", "type": "polygon_mask", "inputs": {"field": {"node": "base"}}},
  {"id": "b1", "type": "height_blend", "inputs": {"a": {"node": "lf"}, "b": {"node": "flat"}, "mask": {"node": "em"}}},
  {"id": "b2", "type": "height_blend", "inputs": {"a": {"node": "b1"}, "b": {"node": "hin"}, "mask": {"node": "sm"}}},
  {"id": "b3", "type": "height_blend", "inputs": {"a": {"node": "b2"}, "b": {"node": "du"}, "mask": {"node": "pm"}}},
  {"id": "off", "type": "height_offset", "params": {"offset": 5}, "inputs": {"field": {"node": "b3"}, "mask": {"node": "po"}}},
  {"id": "sm2", "type": "slope_mask", "params": {"min": 2, "max": 20}, "inputs": {"field": {"node": "off"}}},
  {"id": "dr", "type": "drainage", "inputs": {"field": {"node": "off"}}},
  {"id": "fa", "type": "flow_accumulation", "inputs": {"drainage": {"node": "dr", "pin": "drainage"}}},
  {"id": "dd", "type": "drain_depressions", "inputs": {"field": {"node": "off"}}},
  {"id": "er", "type": "erosion", "params": {"droplets": 300, "thermal_iterations": 2},
   "inputs": {"field": {"node": "dd"}, "drainage": {"node": "dr", "pin": "drainage"}}},
  {"id": "er2", "type": "erosion", "params": {"droplet_density": 2, "lifetime": 4, "radius": 2,
   "thermal_iterations": 3}, "inputs": {"field": {"node": "er", "pin": "field"}}},
  {"id": "sp", "type": "stream_power", "params": {"steps": 3, "uplift_shape": "input"},
   "inputs": {"field": {"node": "er2", "pin": "field"}, "uplift": {"node": "fa"}}},
  {"id": "off2", "type": "height_offset", "params": {"offset": -2},
   "inputs": {"field": {"node": "sp", "pin": "field"}, "mask": {"node": "sm2"}}},
  {"id": "wb", "type": "water_body", "params": {"level": "spill", "center": [128, 128], "radius": 40},
   "inputs": {"field": {"node": "off2"}}},
  {"id": "dr2", "type": "drainage", "inputs": {"field": {"node": "wb", "pin": "field"}}},
  {"id": "bw", "type": "basin_water", "inputs": {"drainage": {"node": "dr2", "pin": "drainage"},
   "water": {"node": "wb", "pin": "water"}}},
  {"id": "we", "type": "water_edit", "inputs": {"field": {"node": "bw", "pin": "field"},
   "water": {"node": "bw", "pin": "water"}}},
  {"id": "dr3", "type": "drainage", "inputs": {"field": {"node": "we", "pin": "field"}}},
  {"id": "rr", "type": "river_route", "inputs": {"drainage": {"node": "dr3", "pin": "drainage"},
   "water": {"node": "we", "pin": "water"}}},
  {"id": "bi", "type": "biome_rules", "inputs": {"field": {"node": "rr", "pin": "field"},
   "water": {"node": "rr", "pin": "water"}}},
  {"id": "sc", "type": "scatter_palette", "inputs": {"field": {"node": "bi"}}},
  {"id": "du", "type": "dune_field", "params": {"height": 8, "wavelength": 60, "defect_spacing": 200,
   "warp_feature_size": 150, "crest_warp": 10}},
  {"id": "note", "type": "comment", "params": {"text": "every type"}},
  {"id": "out", "type": "terrain_output", "inputs": {"field": {"node": "bi"},
   "water": {"node": "rr", "pin": "water"}, "instances": {"node": "sc"}}}]}}
JSON
"$cli" generate "$work/all.json" -q -o "$work/whole.r32"
for tile in 16 48; do
    "$cli" generate "$work/all.json" --tiles $tile -q -o "$work/cli.tif"
    "$cli" convert "$work/cli.tif" "$work/cli.r32" >/dev/null 2>&1
    cmp -s "$work/cli.r32" "$work/whole.r32" || { echo "FAIL every node --tiles $tile: terrane generate --tiles differs from the whole grid"; fail=1; }
    "$mpirun" -np "$np" --oversubscribe "$tool" generate "$work/all.json" --tiles $tile \
        -o "$work/many.tif" >"$work/many.txt" || { echo "FAIL every node --tiles $tile: -np $np failed"; cat "$work/many.txt"; fail=1; }
    cmp -s "$work/many.tif" "$work/cli.tif" || { echo "FAIL every node --tiles $tile: -np $np differs from terrane generate --tiles"; fail=1; }
    "$cli" convert "$work/many.tif" "$work/many.r32" >/dev/null 2>&1
    cmp -s "$work/many.r32" "$work/whole.r32" || { echo "FAIL every node --tiles $tile: -np $np differs from the whole grid"; fail=1; }
    # The erosion by rows (er2: 4 rows of droplet tiles of 18 samples) shares its droplets among
    # the processes that evaluate tiles: 2 with tiles of 48 (2 rows of them).
    want=$np
    [ "$tile" = 48 ] && want=2
    grep -q "erosion: 1 node(s) by rows with their droplets split across $want processes" "$work/many.txt" || {
        echo "FAIL every node --tiles $tile: the erosion's droplets not split across $want processes"; fail=1; }
    left=$(ls "$work" | grep -c -e '\.part' -e 'terrane-tiles-' || true)
    [ "$left" = 0 ] || { echo "FAIL: band files or tile caches left:"; ls "$work"; fail=1; }
    echo "ok every node --tiles $tile -np $np"; cat "$work/many.txt"
done
exit $fail
