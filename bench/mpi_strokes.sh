#!/bin/sh
# terrane-mpi generate of a 2049^2 landform with sculpt strokes at -np 1, 2 and 4, against the
# same recipe without strokes and 'terrane generate --tiles' (the anchor), tiles of 256: wall
# time and peak resident size (largest process) of each run, the strokes' cost line, and
# whether every run wrote the same heights.
# usage: bench/mpi_strokes.sh BUILD_DIR RUNS [WORKDIR]
set -eu
build=$1 runs=$2 work=${3:-/tmp/terrane-mpi-strokes}
rm -rf "$work" && mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# A chain of overlapping strokes across rows 700-1300 (a band border at 2 and 4 processes), a
# raise at the far corner, a lower at the west edge and a protection snapshot.
edits='{"type": "raise", "radius": 300, "strength": 30, "points": [[4000, 3000], [4100, 3600], [4200, 4200]]},
 {"type": "smooth", "radius": 250, "strength": 1, "falloff": 0, "points": [[4000, 3400], [4050, 3800], [4100, 4200], [4150, 4600], [4200, 5000]]},
 {"type": "flatten", "radius": 350, "target_height": 40, "points": [[2400, 3800], [2700, 4200], [3000, 4600]]},
 {"type": "lower", "radius": 300, "strength": 25, "points": [[4400, 4600], [4500, 5000]]},
 {"type": "raise", "radius": 250, "strength": 20, "center": [8150, 8150]},
 {"type": "lower", "radius": 200, "strength": 15, "center": [20, 1500]},
 {"type": "protect", "grid": [2048, 2048], "samples": [[1000, 1000, 12.5], [1001, 1000, -3]]}'
recipe() {
cat <<JSON
{"size": [8192, 8192], "resolution": [2048, 2048], "seed": 11, "default_landform": "hills",
 "landforms": {"hills": {"height_variation": 300, "feature_size": 1500, "octaves": 7}},
 "default_biome": "g", "biomes": {"g": {"color": [0.4, 0.6, 0.3, 1]}},
 "edits": [$1]}
JSON
}
recipe "$edits" >"$work/strokes.json"
recipe "" >"$work/plain.json"
for k in $(seq "$runs"); do
    for name in strokes plain; do
        /usr/bin/time -f "%e s %M KiB" "$build/terrane" generate "$work/$name.json" --tiles 256 -q \
            -o "$work/cli-$name.tif" 2>"$work/t.txt"
        echo "run $k $name cli --tiles: $(tail -1 "$work/t.txt")"
        for np in 1 2 4; do
            mpirun -np $np --oversubscribe "$build/terrane-mpi" generate "$work/$name.json" \
                --tiles 256 -o "$work/mpi.tif" >"$work/out.txt"
            cmp -s "$work/mpi.tif" "$work/cli-$name.tif" || echo "DIFFERENT BYTES: $name -np $np"
            echo "run $k $name -np $np: $(grep '^time s' "$work/out.txt")"
            if [ "$name" = strokes ] && [ "$k" = 1 ]; then grep '^strokes' "$work/out.txt"; fi
        done
    done
done
cat /proc/loadavg
