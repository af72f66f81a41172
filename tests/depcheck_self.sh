#!/bin/sh
# depcheck.sh on made-up edge lists: a cycle and an upward include fail it, downward edges and
# the one known recursion pass. Without this, a check that silently found nothing would pass.
# usage: depcheck_self.sh SOURCE_DIR
set -u
check=$1/tests/depcheck.sh
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
bad=0
expect() { # expect pass|fail GREP-PATTERN: runs on $d/inc and $d/calls
    out=$(sh "$check" --edges "$d/inc" "$d/calls" 2>&1)
    rc=$?
    if [ "$1" = pass ] && [ $rc -ne 0 ]; then echo "FAIL: expected a pass: $out"; bad=1; fi
    if [ "$1" = fail ] && [ $rc -eq 0 ]; then echo "FAIL: expected a failure: $out"; bad=1; fi
    if ! printf '%s\n' "$out" | grep -q "$2"; then echo "FAIL: no '$2' in: $out"; bad=1; fi
}

printf 'src/gen/noise.c src/core/checked.h\n' > "$d/inc"
printf 'src/recipe/generate.c src/graph/graph_eval.c\nsrc/graph/graph_eval.c src/gen/noise.c\n' > "$d/calls"
expect pass "no cycle, none upward"

printf 'src/core/fileio.c src/core/write_set.c\nsrc/core/write_set.c src/core/fileio.c\n' > "$d/calls"
expect fail "call cycle: src/core/fileio.c src/core/write_set.c"

printf 'src/core/a.h src/core/b.h\nsrc/core/b.h src/core/c.h\nsrc/core/c.h src/core/a.h\n' > "$d/inc"
: > "$d/calls"
expect fail "include cycle: src/core/a.h src/core/b.h src/core/c.h"

printf 'src/gen/noise.c src/graph/graph_internal.h\n' > "$d/inc"
expect fail "include upward: src/gen/noise.c (src/gen) -> src/graph/graph_internal.h (src/graph)"

: > "$d/inc"
printf 'tools/terrane/cli/cli.c tools/terrane/main.c\n' > "$d/calls"
expect fail "call upward: tools/terrane/cli/cli.c"

printf 'src/graph/nodes/generators.c src/graph/graph_check.c\nsrc/graph/graph_check.c src/graph/registry.c\nsrc/graph/registry.c src/graph/nodes/generators.c\n' > "$d/calls"
expect pass "known call left out"

[ $bad -eq 0 ] && echo "depcheck_self: 6 cases as expected"
exit $bad
