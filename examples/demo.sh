#!/bin/sh
# The demo job: example images into a BeamNG level, recipes, graphs, water and placement.
# usage: examples/demo.sh TERRANE_BINARY OUT_DIR   (make demo runs it with build/ and out/demo)
set -eu
TERRANE=${1:-build/terrane}
OUT=${2:-out/demo}
BIN=$(dirname "$TERRANE")
LEVEL="$OUT/levels/demo_island"
MAX_HEIGHT=256

rm -rf "$OUT"
mkdir -p "$OUT/src"

echo "== 1. example inputs: a 512x512 island heightmap, grass/rock/sand opacity (R/G/B), holes"
"$BIN/terrane_demo_inputs" "$OUT/src" 512
"$TERRANE" info "$OUT/src/heightmap.png"

echo
echo "== 2. import as a BeamNG level"
"$TERRANE" beamng import "$OUT/src/heightmap.png" --level "$LEVEL" \
    --materials grass,rock,sand \
    --opacity "$OUT/src/opacity.png:R" --opacity "$OUT/src/opacity.png:G" \
    --opacity "$OUT/src/opacity.png:B" --holes "$OUT/src/holes.png" \
    --max-height $MAX_HEIGHT --square-size 2

echo
echo "== 3. inspect and validate it"
"$TERRANE" info "$LEVEL/theTerrain.ter" --max-height $MAX_HEIGHT
"$TERRANE" beamng validate "$LEVEL"

echo
echo "== 4. pictures"
"$TERRANE" render "$LEVEL/theTerrain.ter" -o "$OUT/hillshade.png" --mode hillshade \
    --max-height $MAX_HEIGHT --square-size 2 --multidirectional
"$TERRANE" render "$LEVEL/theTerrain.ter" -o "$OUT/layers.png" --mode layers

echo
echo "== 5. export it back to images (and the command that re-imports them)"
"$TERRANE" beamng export "$LEVEL/theTerrain.ter" -o "$OUT/export"

echo
echo "demo done: level in $LEVEL, pictures $OUT/hillshade.png and $OUT/layers.png"

# ---- recipes: generate a recipe into a BeamNG level, with previews ----------------
# Appended section; the BeamNG import demo above is unchanged.
RECIPES="$(dirname "$0")/recipes"
RECIPE_LEVEL="$OUT/levels/recipe_island"

echo
echo "== 6. a terrain recipe: generate it into a BeamNG level, validate it, explain a point"
"$TERRANE" generate "$RECIPES/island.json" --export "beamng:$RECIPE_LEVEL" \
    --preview "$OUT/recipe_island_hillshade.png" --biomes "$OUT/recipe_island_biomes.png"
"$TERRANE" beamng validate "$RECIPE_LEVEL"
"$TERRANE" explain "$RECIPES/island.json" --at 320,3520

echo
echo "recipe demo done: level in $RECIPE_LEVEL, pictures $OUT/recipe_island_hillshade.png and" \
    "$OUT/recipe_island_biomes.png"

# ---- graphs: a module graph with masks, drainage and erosion, cached per node ----
echo
echo "== 7. a terrain graph: check it, preview it, generate it final, then again from the cache"
"$TERRANE" graph check "$RECIPES/valley.json"
"$TERRANE" generate "$RECIPES/valley.json" --quality preview --preview "$OUT/valley_preview.png" -q
"$TERRANE" generate "$RECIPES/valley.json" --cache "$OUT/graph-cache" \
    --preview "$OUT/valley_hillshade.png" --biomes "$OUT/valley_biomes.png"
echo "-- again, with one downstream change: only what depends on it is evaluated"
sed 's/"drainage_weight": 1.5/"drainage_weight": 2/' "$RECIPES/valley.json" >"$OUT/valley_changed.json"
"$TERRANE" generate "$OUT/valley_changed.json" --cache "$OUT/graph-cache" \
    --preview "$OUT/valley_changed_hillshade.png"

echo
echo "graph demo done: pictures $OUT/valley_hillshade.png, $OUT/valley_biomes.png and" \
    "$OUT/valley_changed_hillshade.png"

# ---- water and placement: lakes, an ocean, rivers; a palette scattered and exported ----
WATER_LEVEL="$OUT/levels/lakeside"
echo
echo "== 8. water and placement: the bodies, a point's water column, pictures, instances, a level"
"$TERRANE" water "$RECIPES/lakeside.json"
"$TERRANE" water "$RECIPES/lakeside.json" --at 172,220,44 -q
"$TERRANE" generate "$RECIPES/lakeside.json" --preview "$OUT/lakeside_hillshade.png" \
    --roles "$OUT/lakeside_roles.png" --export "beamng:$WATER_LEVEL" -q
"$TERRANE" scatter "$RECIPES/lakeside.json" -o "$OUT/lakeside_instances.json" \
    --picture "$OUT/lakeside_dots.png" -q
"$TERRANE" beamng validate "$WATER_LEVEL"

echo
echo "water demo done: pictures $OUT/lakeside_hillshade.png, $OUT/lakeside_roles.png and" \
    "$OUT/lakeside_dots.png, instances $OUT/lakeside_instances.json, level $WATER_LEVEL"

# ---- real data: a DEM read by a Heightfield Input node, eroded, watered, planted ----
DEM_LEVEL="$OUT/levels/dem_level"
echo
echo "== 9. a DEM as a graph input: dem.tif (from step 1) beside its recipe, into a BeamNG level"
cp "$RECIPES/dem_level.json" "$OUT/src/dem_level.json"
"$TERRANE" info "$OUT/src/dem.tif"
"$TERRANE" generate "$OUT/src/dem_level.json" --preview "$OUT/dem_level_hillshade.png" \
    --export "beamng:$DEM_LEVEL" -q
"$TERRANE" beamng validate "$DEM_LEVEL"

echo
echo "DEM demo done: picture $OUT/dem_level_hillshade.png, level $DEM_LEVEL"
