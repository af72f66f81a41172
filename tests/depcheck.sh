#!/bin/sh
# Dependency check: include and call graphs between the files of src/ and tools/terrane/ hold no
# cycle, and no file of src/ includes or calls into a higher layer (order: docs/architecture.md).
#
# usage: depcheck.sh SOURCE_DIR BUILD_DIR [--dump DIR]
#        depcheck.sh --edges INCLUDES CALLS   (checks given "from to" edge lists; for its own test)
# Includes come from the sources ("..." includes resolved as the compiler does: the including
# file's folder, then src/, tools/terrane/, tools/terrane/cli/). Calls come from the object files
# (nm: global symbols each object defines against those it leaves undefined), so a call through
# a public header counts as well as one through an internal header.
set -eu
given=
dump=
if [ "${1:-}" = "--edges" ]; then
    given_includes=${2:?}
    given_calls=${3:?}
    given=1
else
    srcdir=${1:?}
    build=${2:?}
    if [ "${3:-}" = "--dump" ]; then dump=${4:?}; fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Layers, lowest first; a file may depend on its own layer and the ones before it. Keep in step
# with the table in docs/architecture.md.
cat > "$tmp/layers" <<'EOF'
src/core 0
src/gen 1
src/water 2
src/runtime 3
src/scatter 3
src/analysis 3
src/formats/image 3
src/formats/geotiff 3
src/formats/heightfield 3
src/formats/beamng/ter.c 3
src/formats/beamng/ter_common.c 3
src/formats/beamng/ter_legacy.c 3
src/formats/beamng/ter_internal.h 3
src/recipe/recipe_internal.h 4
src/recipe/recipe_base.c 4
src/recipe/recipe_fields.c 4
src/recipe/recipe_fields.h 4
src/recipe/strokes.c 4
src/graph 5
src/recipe 6
src/formats 7
src/cook 8
tools/terrane/cli 9
tools/terrane 10
EOF

if [ -n "$given" ]; then
    LC_ALL=C sort -u "$given_includes" > "$tmp/includes"
    LC_ALL=C sort -u "$given_calls" > "$tmp/calls"
else
    # 1. Include edges "from to".
    (cd "$srcdir" && find src tools/terrane -name '*.[ch]' | LC_ALL=C sort) > "$tmp/files"
    while read -r f; do
        dir=${f%/*}
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$srcdir/$f" |
        while read -r inc; do
            for cand in "$dir/$inc" "src/$inc" "tools/terrane/$inc" "tools/terrane/cli/$inc"; do
                if [ -f "$srcdir/$cand" ]; then
                    echo "$f $cand"
                    break
                fi
            done
        done
    done < "$tmp/files" | LC_ALL=C sort -u > "$tmp/includes"

    # 2. Call edges "from to" between object files of the library and the CLI.
    if ! command -v nm >/dev/null 2>&1; then
        echo "depcheck: nm not found (binutils): skipped" >&2
        exit 77
    fi
    objs=$(find "$build/CMakeFiles/terrane_obj.dir" "$build/CMakeFiles/terrane.dir" -name '*.c.o' 2>/dev/null |
           LC_ALL=C sort)
    if [ -z "$objs" ]; then
        echo "depcheck: no object files under $build/CMakeFiles (build the library and the CLI first)" >&2
        exit 1
    fi
    for o in $objs; do
        f=${o#*.dir/}
        f=${f%.o}
        case $f in src/*|tools/terrane/*) ;; *) continue ;; esac
        [ -f "$srcdir/$f" ] || continue # a stale object of a moved or deleted source
        nm -P "$o" | awk -v f="$f" '$2 ~ /^[TDBRCVWGS]$/ { print "D", f, $1 } $2 == "U" { print "U", f, $1 }'
    done > "$tmp/syms"
    awk '$1 == "D" { def[$3] = $2; next }
         $1 == "U" { n++; uf[n] = $2; us[n] = $3 }
         END { for (i = 1; i <= n; i++) if ((us[i] in def) && def[us[i]] != uf[i]) print uf[i], def[us[i]] }' \
        "$tmp/syms" | LC_ALL=C sort -u > "$tmp/calls"
fi

if [ -n "$dump" ]; then
    mkdir -p "$dump"
    cp "$tmp/includes" "$tmp/calls" "$tmp/syms" "$dump/"
fi

# 3. Cycles: strongly connected components of more than one file (reachability both ways).
# One call is a known recursion and left out: a landform's evolution parameters are read as a
# Stream Power node's through the whole graph parser and checker (trn_graph_params_parse), whose
# node registry lists the landform node again. Any other cycle fails.
known_edge="src/graph/nodes/generators.c src/graph/graph_check.c"
if grep -qx "$known_edge" "$tmp/calls"; then
    echo "known call left out of the cycle search: ${known_edge% *} -> ${known_edge#* } (trn_graph_params_parse)" >&2
    grep -vx "$known_edge" "$tmp/calls" > "$tmp/calls.cut" || true
    mv "$tmp/calls.cut" "$tmp/calls"
fi
cycles() {
    awk -v kind="$1" '
    { if (!($1 in seen)) { seen[$1] = 1; node[++nn] = $1 }
      if (!($2 in seen)) { seen[$2] = 1; node[++nn] = $2 }
      adj[$1] = adj[$1] " " $2 }
    END {
        for (i = 1; i <= nn; i++) {          # reach[a, b]: b reachable from a
            s = node[i]; top = 0; stack[++top] = s
            while (top > 0) {
                u = stack[top--]; m = split(adj[u], nb, " ")
                for (k = 1; k <= m; k++) if (!((s, nb[k]) in reach)) { reach[s, nb[k]] = 1; stack[++top] = nb[k] }
            }
        }
        bad = 0
        for (i = 1; i <= nn; i++) {
            a = node[i]
            if ((a in done) || !((a, a) in reach)) continue
            line = ""
            for (j = 1; j <= nn; j++) {
                b = node[j]
                if ((a, b) in reach && (b, a) in reach) { done[b] = 1; line = line " " b }
            }
            print kind " cycle:" line; bad = 1
        }
        exit bad
    }' "$2"
}
status=0
cycles include "$tmp/includes" || status=1
cycles call "$tmp/calls" || status=1

# 4. Layers: a file of src/ includes or calls only its own layer or lower ones.
for kind in include call; do
    if [ "$kind" = include ]; then edges=$tmp/includes; else edges=$tmp/calls; fi
    awk -v kind="$kind" '
    FNR == NR { rank[$1] = $2; next }
    function layer(p,   d) {
        if (p in bestd) return bestd[p] == "" ? -1 : rank[bestd[p]]
        bestd[p] = ""
        for (d in rank) if (index(p "/", d "/") == 1 && length(d) > length(bestd[p])) bestd[p] = d
        return bestd[p] == "" ? -1 : rank[bestd[p]]
    }
    {
        lf = layer($1); lt = layer($2)
        if (lf < 0 || lt < 0) next
        if (lt > lf) { print kind " upward: " $1 " (" bestd[$1] ") -> " $2 " (" bestd[$2] ")"; bad = 1 }
    }
    END { exit bad }' "$tmp/layers" "$edges" || status=1
done

if [ "$status" -eq 0 ]; then
    echo "depcheck: $(wc -l < "$tmp/includes") include and $(wc -l < "$tmp/calls") call edges, no cycle, none upward"
fi
exit "$status"
