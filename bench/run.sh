#!/bin/sh
# Runs every benchmark on a Release build and prints the figures for bench/RESULTS.md.
# usage: bench/run.sh [BUILD_DIR] [SCRATCH_DIR]   (run on a quiet machine; takes a few minutes)
set -eu
BUILD=${1:-build}
SCRATCH=${2:-$(mktemp -d "${TMPDIR:-/tmp}/terrane-bench.XXXXXX")}
mkdir -p "$SCRATCH"
echo "machine: $(uname -m), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
grep -m1 'model name' /proc/cpuinfo || true
echo "scratch: $SCRATCH ($(df -h "$SCRATCH" | awk 'NR==2 {print $1}'))"
echo
echo "== .ter read / write / peak memory (8192x8192)"
"$BUILD/bench_ter" "$SCRATCH"
echo
echo "== 16-bit PNG encode vs gdal_translate (8192x8192, zlib level 6)"
if command -v gdal_translate >/dev/null; then
    sh "$(dirname "$0")/png_vs_gdal.sh" "$BUILD" "$SCRATCH" 8192
else
    echo "gdal_translate not installed: only our encoder"
    "$BUILD/bench_png" "$SCRATCH" 8192
fi
rm -rf "$SCRATCH"
echo
echo "== render: hillshade, multidirectional, slope, layers (4097x4097, 1 and all threads)"
"$BUILD/bench_render"

# ---- generate: recipe generation time and peak memory ----
echo
echo "== generate: 4097x4097 recipe with warp and rules, 2 threads then 1, peak RSS per sample"
"$BUILD/bench_generate" 4097 2

# ---- noise: gradient noise, fractals, landform fill, moisture ----
echo
echo "== noise: 6-octave fbm and ridged rows, 1-octave noise, landform fill, moisture (4096x4096, 1 and 2 threads)"
"$BUILD/bench_noise" 4096

# ---- edit: incremental stroke vs full regeneration, stamp replay cost ----
echo
echo "== edit: one raise stroke on a 4097x4097 session vs regenerating; 10,000 stamps replayed on 1025^2 and 4097^2"
"$BUILD/bench_edit" 4097 2

# ---- erosion: droplet erosion throughput, 1 and 2 threads ----
echo
echo "== erosion: 500,000 droplets on 1024x1024, lifetime 30, inertia 0.05, radius 3 (1 and 2 threads)"
"$BUILD/bench_erosion" 1024 500000

# ---- drainage: priority-flood fill, D8 directions, accumulation, basins ----
echo
echo "== drainage: fill + D8 + accumulation + basins on 4096x4096 landform terrain, 1 thread, best of 3"
"$BUILD/bench_drainage" 4096 3

# ---- reprojection: a 1-arc-second geographic DEM to its UTM zone (PROJ) ----
echo
echo "== reproject: 3601x3601 EPSG:4326 tile to UTM 54N, 1 and 2 threads, median and best of 5"
"$BUILD/bench_reproject" 3601 5

# ---- masks: band, path and polygon masks, height blend ----
echo
echo "== masks: elevation, slope, path, polygon masks and blend on 4097x4097 (1 and 2 threads)"
"$BUILD/bench_masks"

# ---- graph: Mountain Range preset at 2049x2049 with final erosion ----
echo
echo "== graph: Mountain Range preset at 2049x2049 samples, final and preview, cache reuse (2 threads)"
"$BUILD/bench_graph" 2048 2

# ---- stationeers: octree -> heightfield on a MaxDepth-12 world ----
echo
echo "== stationeers: octree -> heightfield, MaxDepth 12 (4096^3) world from a 4096^2 landform, best of 3"
"$BUILD/bench_stationeers" 12 3

# ---- unity: read the 2021.3 TerrainData and write its RAW ----
echo
echo "== unity: read the real 2021.3 TerrainData (513^2) and write its RAW + metadata"
"$BUILD/bench_unity"

# ---- water: resolution of lakes, an ocean and a river on 4097^2, and the query rate ----
echo
echo "== water: 4097x4097 resolution (16 lakes, ocean, 200-point river), queries on one core"
"$BUILD/bench_water" 4097 7 20000000

# ---- scatter and surface roles: six rules on 4097^2 over 2048 units; roles of 4097^2 ----
echo
echo "== scatter: six rules on 4097x4097 (2 threads), refilter after one stroke"
"$BUILD/bench_scatter" 4097 2 5
echo
echo "== surface roles: 4097x4097 classification, triangles, a sculpt window"
"$BUILD/bench_roles" 4096 7

# ---- write sets: many small files, big files, a whole BeamNG level ----
echo
echo "== write sets: plain atomic writes against one journaled set"
"$BUILD/bench_write_set" "$SCRATCH"

# ---- geotiff: 8192^2 float32 DEM to 16-bit PNG at zlib level 1, vs gdal_translate ----
echo
echo "== geotiff: 8192x8192 float32 GeoTIFF -> 16-bit PNG (zlib level 1) vs gdal_translate"
if command -v gdal_translate >/dev/null; then
    sh "$(dirname "$0")/geotiff_vs_gdal.sh" "$BUILD"
else
    echo "gdal_translate not installed: skipped"
fi

# ---- Lua binding: water samples through Lua against the C call ----
echo
echo "== lua: water samples per second through the Lua binding vs C (1025x1025 lake, one core)"
"$BUILD/bench_lua" "${TMPDIR:-/tmp}"
