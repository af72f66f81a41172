#!/bin/sh
# Messages of two terrane binaries over bad documents, compared: generates bad documents from the
# example recipes and the document fuzz corpora (gen.py), runs `inspect` and `graph check` on each
# with both binaries and says which outputs differ, and whether only in unknown-key lines
# (cmp.py: a change to the one unknown-key form shows there; anything else is a change of
# behaviour to look at).
# usage: bench/doc_messages/run.sh OLD_TERRANE NEW_TERRANE [WORK_DIR]   (from the source root)
set -eu
old=${1:?old terrane}; new=${2:?new terrane}; work=${3:-/tmp/terrane-doc-messages}
here=$(dirname "$0")
rm -rf "$work"; mkdir -p "$work/corpus"
python3 "$here/gen.py" "$work/docs" examples/recipes/*.json examples/project/presets/*.json \
    fuzz/corpus/fuzz_recipe/*.json fuzz/corpus/fuzz_graph/*.json fuzz/corpus/fuzz_palette/*.json \
    fuzz/corpus/fuzz_material_set/*.json fuzz/corpus/fuzz_preset/*.json \
    fuzz/corpus/fuzz_terrain_json/*.json > /dev/null
for d in fuzz_recipe fuzz_graph fuzz_palette fuzz_material_set fuzz_preset fuzz_terrain_json fuzz_scene; do
    for f in fuzz/corpus/$d/*; do cp "$f" "$work/corpus/${d}_$(basename "$f")"; done
done
outputs() { # TERRANE OUT: "== VERB FILE rc=N" then its output, for every document
    : > "$2"
    for dir in "$work/corpus" "$work/docs"; do
        for f in "$dir"/*; do
            for verb in inspect "graph check"; do
                r=$(cd "$work" && TERRANE_CACHE=0 timeout 20 "$1" $verb "$f" 2>&1) && rc=0 || rc=$?
                printf '== %s %s rc=%s\n%s\n' "$verb" "$(basename "$f")" "$rc" "$r" |
                    sed "s|$dir/||g" >> "$2"
            done
        done
    done
}
outputs "$old" "$work/old.txt"
outputs "$new" "$work/new.txt"
python3 "$here/cmp.py" "$work/old.txt" "$work/new.txt"
