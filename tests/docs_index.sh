#!/bin/sh
# README.md's list of the documentation ("See `docs/` (...)" paragraph) names every docs/*.md,
# and every page it names exists, so a reader of the README finds each page.
# usage: tests/docs_index.sh SOURCE_DIR
set -u
SRC=$1
# The paragraph from "See `docs/`" to the next blank line.
list=$(awk '/^See `docs\/`/ { on = 1 } on && /^$/ { exit } on { print }' "$SRC/README.md")
[ -n "$list" ] || { echo "FAIL: README.md has no paragraph starting 'See \`docs/\`'"; exit 1; }
bad=0
for page in "$SRC"/docs/*.md; do
    name=$(basename "$page")
    printf '%s\n' "$list" | grep -q "\`\(docs/\)\{0,1\}$name\`" ||
        { echo "FAIL: README.md's docs list lacks $name"; bad=1; }
done
for name in $(printf '%s\n' "$list" | grep -o '`[a-z0-9/-]*\.md`' | tr -d '`' | sed 's|^docs/||'); do
    [ -f "$SRC/docs/$name" ] || { echo "FAIL: README.md's docs list names $name, not in docs/"; bad=1; }
done
[ $bad = 0 ] && echo "ok: README.md names the $(ls "$SRC"/docs/*.md | wc -l | tr -d ' ') pages of docs/"
exit $bad
