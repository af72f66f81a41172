#!/bin/sh
# Regenerates docs/gallery.md and docs/images/gallery/: every preset and example shaded beside real land.
#
# usage: sh tools/gallery/gallery.sh [--check] [BUILD_DIR]
#
# Every built-in preset, every examples/recipes/*.json and the terrain of examples/project's
# scene, each at its own grid and regridded to GRID x GRID cells over its own extent, and every
# real DEM of REAL_DEMS, are drawn the same way: `terrane render --mode hillshade
# --multidirectional` at z-factor 1 over the true cell size, so equal slopes are equally dark
# in every picture. Under each picture go the figures of `terrane stats --format json` with a
# pass/fail mark against the targets. BUILD_DIR (default build) holds terrane,
# terrane_gallery and terrane_demo_inputs (`make gallery` builds them, Release; the last makes
# the DEM an example recipe may read).
#
# Environment:
#   REAL_DEMS  real DEMs to show, paths separated by spaces (default: those of
#              tools/gallery/real_dems.tsv found in ../shared/testdata/real)
#   GRID       cells of the regridded column's longer side (default 1024: 1025 x 1025 samples
#              for a square terrain)
#   OWN_GRID   0 (default): each terrain's own grid; N: N x N cells instead (check mode)
#   OUT_DIR    where gallery.md and images/gallery/ go (default docs)
#   ONLY       names of the terrains to draw, separated by spaces (a preset's short name, a
#              recipe's file name without .json, a scene's name); default all
#
# --check: a few terrains (ONLY defaults to a preset without water, one with the sea, the
# smallest example recipe and the project's scene) at small grids (GRID 64, OWN_GRID 48) into a
# temporary folder, then fails unless every picture the page names exists, every terrain has
# relief, median slope and closed depressions, and some row has an exponent b (the two
# grid-fingerprint figures may say n/a). Every preset at a small grid would not be quick: the
# landscape-evolution presets evolve on their own grid whatever the output grid.
#
# Exit status: 0 when every terrain was drawn and measured; 1 when one failed (the page still
# says which and why); 2 on a usage error.
set -eu

check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
[ $# -le 1 ] || { echo "usage: sh tools/gallery/gallery.sh [--check] [BUILD_DIR]" >&2; exit 2; }

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
TERRANE=$BUILD/terrane
TOOL=$BUILD/terrane_gallery
for exe in "$TERRANE" "$TOOL"; do
    [ -x "$exe" ] || { echo "gallery: $exe not found: run 'make gallery' (or build it)" >&2; exit 2; }
done

TSV=$ROOT/tools/gallery/real_dems.tsv
SHARED_REAL=$ROOT/../shared/testdata/real
if [ $check = 1 ]; then
    GRID=${GRID:-64}
    OWN_GRID=${OWN_GRID:-48}
    ONLY=${ONLY-flat-building-site coastal-island waters world}
    own_out=${OUT_DIR:+given}
    OUT_DIR=${OUT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/terrane-gallery-check.XXXXXX")}
else
    GRID=${GRID:-1024}
    OWN_GRID=${OWN_GRID:-0}
    OUT_DIR=${OUT_DIR:-$ROOT/docs}
fi
ONLY=${ONLY:-}
case $OUT_DIR in /*) ;; *) OUT_DIR=$ROOT/$OUT_DIR ;; esac
if [ -z "${REAL_DEMS+set}" ]; then
    REAL_DEMS=""
    for name in $(grep -v '^#' "$TSV" | cut -f1); do
        [ -f "$SHARED_REAL/$name" ] && REAL_DEMS="$REAL_DEMS $SHARED_REAL/$name"
    done
fi

IMG_REL=images/gallery
IMG=$OUT_DIR/$IMG_REL
WORK=$(mktemp -d "${TMPDIR:-/tmp}/terrane-gallery.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
mkdir -p "$IMG"
rm -f "$IMG"/*.png
PAGE=$WORK/gallery.md
BODY=$WORK/body.md
SUMMARY=$WORK/summary.md
: >"$BODY"
: >"$SUMMARY"
failures=0
failed_names=""
START=$(date +%s)
LOAD=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo unknown)

# Pictures: overviews at most 512 px wide (small grids enlarged to at least 256 px, a sample a
# block), details the middle 256 x 256 samples at one pixel a sample.
WIDE=512
NARROW=256
DETAIL=256

# fig STATS NAME...: the named figures of a stats JSON, "n/a" where absent (all of them when
# the file does not read, so a failed measurement shows as n/a rather than ending the run).
fig() {
    "$TOOL" figures "$@" 2>/dev/null && return 0
    shift
    for name; do printf 'n/a '; done
    echo
}

# The figure cell of one picture: relief, median slope, closed depressions and exponent b of
# the dry ground, and the two grid fingerprints, each marked against its target.
# figures_cell ALL.json DRY.json [RIVERS]: RIVERS 0 (wind-blown sand, no river network) shows b
# unmarked, as not applying.
figures_cell() {
    rivers=${3:-1}
    set -- $(fig "$1" relief slope_median axis45_ratio periodic_curvature_ratio periodic_axis \
        periodic_period_x periodic_period_z) \
        $(fig "$2" depression_fraction area_exponent axis45_ratio periodic_curvature_ratio \
            periodic_axis periodic_period_x periodic_period_z)
    awk -v relief="$1" -v slope="$2" -v ax_all="$3" -v pc_all="$4" -v pa_all="$5" \
        -v px_all="$6" -v pz_all="$7" -v dep="$8" -v b="$9" -v ax_dry="${10}" -v pc_dry="${11}" \
        -v pa_dry="${12}" -v px_dry="${13}" -v pz_dry="${14}" -v rivers="$rivers" '
    function mark(ok) { return ok ? " ✓" : " ✗" }
    function show(v, f, lo, hi, scale) {
        if (v == "n/a") return "n/a"
        return sprintf(f, v * scale) mark(v + 0 >= lo && v + 0 <= hi)
    }
    BEGIN {
        # The fingerprints of the whole surface (a lake bed is ground too; as terrane stats,
        # bench_realism and the tests measure them), the drainage of the dry ground; the
        # periodic curvature with the axis and period it repeats at.
        ax = ax_all
        pc = pc_all
        pa = pa_all
        period = pa == "x" ? px_all : pz_all
        r = relief == "n/a" ? "n/a" : sprintf(relief >= 10 ? "%.0f m" : "%.1f m", relief)
        s = slope == "n/a" ? "n/a" : sprintf("%.1f°", slope)
        p = show(pc, "%.1f", 0, 2, 1)
        if (pc != "n/a" && (pa == "x" || pa == "z") && period != "n/a")
            p = p sprintf(" (%s, every %.3g)", pa == "x" ? "columns" : "rows", period)
        printf "relief %s, median slope %s<br>depressions %s, b %s<br>45° %s, periodic %s",
            r, s, show(dep, "%.1f%%", -1, 0.0299999, 100),
            rivers == 0 && b != "n/a" ? sprintf("%.2f (no rivers: n/a)", b) : show(b, "%.2f", 0.38, 0.58, 1),
            show(ax, "%.2f", 0, 1.08, 1), p
    }'
}

# The summary row's figure columns (the same figures, one column each).
# summary_cols ALL.json DRY.json [RIVERS]
summary_cols() {
    figures_cell "$1" "$2" "${3:-1}" | sed -e 's/relief //; s/, median slope / | /; s/<br>depressions / | /' \
        -e 's/, b / | /; s/<br>45° / | /; s/, periodic / | /'
}

# A picture of a GeoTIFF: hillshade, its fitted overview and detail.
# picture IN.tif NAME -> $IMG/NAME.png and, when the picture is wider than the overview,
# $IMG/NAME-detail.png; the render JSON goes into $WORK/NAME.render.json
picture() {
    "$TERRANE" render "$1" -o "$WORK/$2.full.png" --multidirectional -q --format json \
        >"$WORK/$2.render.json" || return 1
    "$TOOL" fit "$WORK/$2.full.png" "$IMG/$2.png" $WIDE $NARROW || return 1
    set -- "$@" $(fig "$WORK/$2.render.json" "grid[0]" "grid[1]")
    # A detail only where the overview lost samples (averaged down to WIDE pixels).
    if [ "$3" -gt $WIDE ]; then
        "$TOOL" crop "$WORK/$2.full.png" "$IMG/$2-detail.png" $DETAIL || return 1
    fi
}

# The markdown of a picture and its detail (when there is one) for a table cell.
pictures_md() {
    printf '![%s](%s/%s.png)' "$1" "$IMG_REL" "$1"
    [ -f "$IMG/$1-detail.png" ] &&
        printf '<br>![%s, middle %s² samples](%s/%s-detail.png)' "$1" $DETAIL "$IMG_REL" "$1"
    return 0
}

# One terrain at one grid: generate, draw, measure. Writes the cell's markdown into
# $WORK/NAME.cell and a summary row.
# terrain_at SOURCE CELLS NAME LABEL
terrain_at() {
    if ! "$TOOL" generate "$1" "$2" "$WORK/$3" >"$WORK/$3.gen.json" 2>"$WORK/$3.err" ||
        ! picture "$WORK/$3.tif" "$3" 2>>"$WORK/$3.err" ||
        ! "$TERRANE" stats "$WORK/$3.tif" --format json -q >"$WORK/$3.all.json" 2>>"$WORK/$3.err"
    then
        msg=$(tr '\n|' '  ' <"$WORK/$3.err" | cut -c1-400)
        printf 'failed: %s' "$msg" >"$WORK/$3.cell"
        printf '| %s | %s | failed: %s |||||||\n' "$4" "$2" "$msg" >>"$SUMMARY"
        echo "gallery: $4 at grid $2 failed: $msg" >&2
        return 1
    fi
    set -- "$@" $(fig "$WORK/$3.gen.json" cells_x cells_z cell_x wet_samples seconds rivers)
    # $5 cells_x, $6 cells_z, $7 cell size, $8 wet samples, $9 seconds, ${10} rivers (0: sand)
    rivers=${10}
    [ "$rivers" = 0 ] || rivers=1
    dry=$WORK/$3.all.json
    if [ "$8" != 0 ]; then
        "$TERRANE" stats "$WORK/$3.dry.tif" --format json -q >"$WORK/$3.dry.json" 2>>"$WORK/$3.err" ||
            { printf 'failed: stats of the dry ground' >"$WORK/$3.cell"; return 1; }
        dry=$WORK/$3.dry.json
    fi
    grid=$(awk -v x="$5" -v z="$6" -v c="$7" 'BEGIN { printf "%d × %d samples, %.3g m cells", x + 1, z + 1, c }')
    { pictures_md "$3"; printf '<br>%s<br>' "$grid"; figures_cell "$WORK/$3.all.json" "$dry" "$rivers"; } >"$WORK/$3.cell"
    printf '| %s | %s | %s | %s |\n' "$4" "$grid" "$(summary_cols "$WORK/$3.all.json" "$dry" "$rivers")" \
        "$(awk -v s="$9" 'BEGIN { printf "%.1f s", s }')" >>"$SUMMARY"
}

# ---- Real land ----------------------------------------------------------------------------
REF_NAME=""
REF_CELL="(no real DEM found)"
{
    echo "## Real land"
    echo
    if [ -z "$(echo $REAL_DEMS)" ]; then
        echo "No real DEM was found, so none is shown: the known ones are listed below; pass their"
        echo "paths in REAL_DEMS."
        echo
    fi
} >>"$BODY"
for dem in $REAL_DEMS; do
    base=$(basename "$dem")
    name=real-$(echo "${base%.*}" | tr -c 'A-Za-z0-9_\n-' '-')
    row=$(grep -v '^#' "$TSV" | awk -F '\t' -v f="$base" '$1 == f' | head -n 1)
    if [ ! -f "$dem" ]; then
        printf -- '- `%s`: not found, skipped.\n\n' "$dem" >>"$BODY"
        continue
    fi
    if ! picture "$dem" "$name" 2>"$WORK/$name.err" ||
        ! "$TERRANE" stats "$dem" --format json -q >"$WORK/$name.all.json" 2>>"$WORK/$name.err"; then
        printf -- '- `%s`: failed: %s\n\n' "$base" "$(tr '\n' ' ' <"$WORK/$name.err")" >>"$BODY"
        failures=$((failures + 1))
        failed_names="$failed_names $base"
        continue
    fi
    set -- $(fig "$WORK/$name.render.json" "grid[0]" "grid[1]" "cell_size[0]" "cell_size[1]")
    cell=$(awk -v w="$1" -v h="$2" -v x="$3" -v z="$4" 'BEGIN { printf "%d × %d samples, %.3g × %.3g m cells", w, h, x, z }')
    if [ -n "$row" ]; then
        place=$(echo "$row" | cut -f2)
        origin=$(echo "$row" | awk -F '\t' '{ printf "%s, `%s`, commit %s; %s", $3, $4, $5, $6 }')
    else
        place=$base
        origin="given in REAL_DEMS; where it came from is not recorded in tools/gallery/real_dems.tsv"
    fi
    {
        printf '### %s\n\n%s. From %s. %s.\n\n' "$base" "$place" "$origin" "$cell"
        printf '| whole | figures |\n|---|---|\n| '
        pictures_md "$name"
        printf ' | %s |\n\n' "$(figures_cell "$WORK/$name.all.json" "$WORK/$name.all.json")"
    } >>"$BODY"
    printf '| real: %s | %s | %s | |\n' "$base" "$cell" \
        "$(summary_cols "$WORK/$name.all.json" "$WORK/$name.all.json")" >>"$SUMMARY"
    if [ -z "$REF_NAME" ]; then
        REF_NAME=$name
        REF_CELL="$base: $cell"
        REF_MD="$(pictures_md "$name")<br>$base, $(echo "$cell" | sed 's/.*samples, //')<br>$(figures_cell "$WORK/$name.all.json" "$WORK/$name.all.json")"
    fi
done
missing=""
for name in $(grep -v '^#' "$TSV" | cut -f1); do
    case " $REAL_DEMS " in *"/$name "* | *" $name "*) continue ;; esac
    missing="$missing $name"
done
if [ -n "$missing" ]; then
    {
        echo "Known real DEMs not shown in this run (not in ../shared/testdata/real and not in"
        echo "REAL_DEMS; fetch one and pass its path in REAL_DEMS to include it):"
        echo
        for name in $missing; do
            grep -v '^#' "$TSV" | awk -F '\t' -v f="$name" '$1 == f {
                printf "- `%s`: %s. %s, `%s`, commit %s; %s.\n", $1, $2, $3, $4, $5, $6 }'
        done
        echo
    } >>"$BODY"
fi

# ---- Presets and examples -----------------------------------------------------------------
grid_label=$((GRID + 1))
own_label="own grid"
[ "$OWN_GRID" != 0 ] && own_label="$((OWN_GRID + 1))² (check)"
section() { printf '## %s\n\n' "$1" >>"$BODY"; }
# wanted SHORT: whether ONLY (when set) names it.
wanted() { [ -z "$ONLY" ] || case " $ONLY " in *" $1 "*) true ;; *) false ;; esac; }
terrain() {
    # terrain SOURCE NAME TITLE
    ok=0
    terrain_at "$1" "$OWN_GRID" "$2-own" "$3 ($own_label)" || ok=1
    terrain_at "$1" "$GRID" "$2-$grid_label" "$3 ($grid_label²)" || ok=1
    if [ $ok != 0 ]; then
        failures=$((failures + 1))
        failed_names="$failed_names $3"
    fi
    {
        printf '### %s\n\n' "$3"
        printf '| %s | %s² | real land |\n|---|---|---|\n' "$own_label" "$grid_label"
        printf '| %s | %s | %s |\n\n' "$(cat "$WORK/$2-own.cell")" "$(cat "$WORK/$2-$grid_label.cell")" \
            "${REF_MD:-no real DEM found}"
    } >>"$BODY"
}

section "Built-in presets"
for id in $("$TOOL" presets); do
    short=${id##*/}
    wanted "$short" || continue
    terrain "$id" "preset-$short" "$short"
done
section "Example recipes"
# The recipes are generated from a copy of their folder in which the demo's input files
# (terrane_demo_inputs: heightmap.png, dem.tif, ...) stand beside them, as examples/demo.sh
# lays them out, so a recipe reading a DEM (heightfield_input) has one; files the folder has
# itself are kept.
STAGE=$WORK/recipes
mkdir -p "$STAGE" "$WORK/demo-inputs"
cp "$ROOT"/examples/recipes/* "$STAGE"/ 2>/dev/null || true
if [ -x "$BUILD/terrane_demo_inputs" ] && "$BUILD/terrane_demo_inputs" "$WORK/demo-inputs" 512 >/dev/null; then
    for f in "$WORK"/demo-inputs/*; do
        [ -e "$STAGE/$(basename "$f")" ] || cp "$f" "$STAGE"/
    done
fi
for recipe in "$STAGE"/*.json; do
    [ -f "$recipe" ] || continue
    short=$(basename "$recipe" .json)
    wanted "$short" || continue
    # Other documents beside the recipes (palettes, material sets) are passed over.
    "$TOOL" terrain "$recipe" || continue
    terrain "$recipe" "recipe-$short" "$short.json"
    if grep -q '"heightfield_input"' "$recipe"; then
        printf 'Its input DEM is the demo'"'"'s synthetic one (`terrane_demo_inputs DIR 512`, as\n' >>"$BODY"
        printf '`make demo` makes it), not real land.\n\n' >>"$BODY"
    fi
done
for scene in "$ROOT"/examples/project/*.scene.json; do
    [ -f "$scene" ] || continue
    grep -q '"Terrain3D"' "$scene" || continue
    short=$(basename "$scene" .scene.json)
    wanted "$short" || continue
    section "Example project"
    terrain "$scene" "project-$short" "project/$short.scene.json"
done

END=$(date +%s)
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
VERSION=$("$TERRANE" --version 2>/dev/null | head -n 1 || echo terrane)

# ---- The page -----------------------------------------------------------------------------
{
    cat <<EOF
# Gallery: every preset and example beside real land

Generated by \`make gallery\` (tools/gallery/gallery.sh) from commit $COMMIT ($VERSION) in
$((END - START)) s (load average $LOAD at the start); do not edit by hand. Each built-in
preset, each example recipe in examples/recipes and the terrain of examples/project is shown
at its own grid and at ${grid_label} × ${grid_label} samples over the same extent, beside real
land shaded the same way.

## How to read it

- **Shading.** Every picture is \`terrane render --mode hillshade --multidirectional\`
  (gdaldem's multidirectional hillshade: light from 225, 270, 315 and 360 degrees at 45 degrees
  altitude) at z-factor 1 over the terrain's true cell size, north up. No vertical exaggeration
  anywhere: a slope of a given steepness is the same grey in every picture, generated or
  real, so steep toy-scale relief looks dark and crumpled and gentle land looks pale.
- **Pictures.** The first picture of a cell is the whole terrain, averaged down to $WIDE
  pixels wide (grids under $NARROW samples are enlarged, each sample a square block); the
  second, when the grid is wider than $WIDE samples, is its middle $DETAIL × $DETAIL samples at
  one pixel a sample, where grid-aligned ribs, creases and repeated rills show (smaller grids
  are drawn at one pixel a sample or more already).
- **Figures** (\`terrane stats --format json\`, docs/stats.md): relief (max - min) and median
  slope of the whole surface; closed depressions (share of the dry ground a plain
  depression fill raises) and the drainage-area exponent b, on the dry ground (samples under
  published water left out); on the whole surface, as \`terrane stats\` of the terrain gives
  them, the aspect fingerprint "45°" (\`axis45_ratio\`: slopes facing a
  multiple of 45 degrees, relative to chance) and the periodic curvature "periodic"
  (\`periodic_curvature_ratio\`: the strongest periodic component of the curvature profile,
  relative to shuffled profiles; in brackets the direction it repeats along, columns (x) or
  rows (z), and its period in samples), "n/a" when \`terrane stats\` does not report them.
- **Marks** against the targets of generated land: depressions under 3% ✓, b 0.38-0.58 ✓,
  45° at most 1.08 ✓, periodic at most 2 ✓; ✗ otherwise. Real land is marked too, to show
  what the targets mean. Wind-blown sand (a Dune Field with no landscape evolution) has no
  river network: its b is shown "(no rivers: n/a)", unmarked.
- **Real land** beside every terrain: $REF_CELL.
  The real pictures have their own cell size: compare slopes and textures, not extents.

## Regenerating it

\`make gallery\` builds the Release tree and runs \`sh tools/gallery/gallery.sh build\`, which
rewrites this page and docs/images/gallery/ from scratch. Real DEMs are taken from
\`REAL_DEMS\` (paths separated by spaces), by default those of tools/gallery/real_dems.tsv found in
../shared/testdata/real; DEM files are never copied into the repository.
\`GRID=2048 make gallery\` changes the regridded column. \`make gallery-check\` (or
\`sh tools/gallery/gallery.sh --check\`) runs the same script on a few terrains at small grids
into a temporary folder and fails when a picture or figure is missing.

## Summary

| terrain | grid | relief | median slope | depressions | b | 45° | periodic | generation |
|---|---|---|---|---|---|---|---|---|
EOF
    cat "$SUMMARY"
    echo
    if [ $failures != 0 ]; then
        echo "**Failed in this run:**$failed_names (the cells say why)."
        echo
    fi
    cat "$BODY"
} >"$PAGE"
mv "$PAGE" "$OUT_DIR/gallery.md"

total=$(du -ck "$IMG"/*.png 2>/dev/null | tail -n 1 | cut -f1)
echo "gallery: $OUT_DIR/gallery.md, $(ls "$IMG" | wc -l) pictures, ${total:-0} KiB, $((END - START)) s"

if [ $check = 1 ]; then
    bad=0
    # Every picture the page names exists, is a PNG and has its width: an overview NARROW to
    # WIDE pixels, a detail DETAIL (the IHDR's width, big-endian, at byte 16).
    for png in $(grep -o "$IMG_REL/[A-Za-z0-9_.-]*\.png" "$OUT_DIR/gallery.md" | sort -u); do
        if ! head -c 8 "$OUT_DIR/$png" 2>/dev/null | grep -q PNG; then
            echo "gallery check: $png is missing or not a PNG" >&2
            bad=1
            continue
        fi
        width=$(od -An -tu1 -j16 -N4 "$OUT_DIR/$png" | awk '{ print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }')
        case $png in
        *-detail.png) lo=$DETAIL hi=$DETAIL ;;
        *) lo=$NARROW hi=$WIDE ;;
        esac
        if [ "$width" -lt "$lo" ] || [ "$width" -gt "$hi" ]; then
            echo "gallery check: $png is $width pixels wide, expected $lo to $hi" >&2
            bad=1
        fi
    done
    # Every terrain drawn has its two summary rows, with relief, median slope and closed
    # depressions; some row has an exponent b.
    expected=$(( $(echo $ONLY | wc -w) * 2 ))
    rows=$(grep '^| [a-z].*samples' "$OUT_DIR/gallery.md" | grep -v '^| real' | grep -c . || true)
    if [ "$rows" -lt "$expected" ]; then
        echo "gallery check: $rows terrain rows, expected $expected" >&2
        bad=1
    fi
    if grep '^| [a-z].*samples' "$OUT_DIR/gallery.md" | cut -d'|' -f4-6 | grep -q 'n/a'; then
        echo "gallery check: a row lacks relief, median slope or closed depressions" >&2
        bad=1
    fi
    if ! grep '^| [a-z].*samples' "$OUT_DIR/gallery.md" | cut -d'|' -f7 | grep -q '[0-9]'; then
        echo "gallery check: no row has an exponent b" >&2
        bad=1
    fi
    [ $failures = 0 ] || bad=1
    # A temporary folder of its own is removed when the check passes; a given OUT_DIR is kept.
    if [ $bad = 0 ]; then
        echo "gallery check: passed ($OUT_DIR)"
        [ -n "$own_out" ] || rm -rf "$OUT_DIR"
    fi
    exit $bad
fi
[ $failures = 0 ]
