#!/bin/sh
# docs/library.md quotes terrane.pc's Requires.private and Libs.private as cmake/terrane.pc.in has
# them, so a reader linking libterrane.a by hand gets every library it needs (libzstd included).
# usage: tests/docs_pkgconfig.sh SOURCE_DIR
set -u
SRC=$1
bad=0
for field in Requires.private Libs.private; do
    want=$(sed -n "s/^$field: //p" "$SRC/cmake/terrane.pc.in" | sed 's/ *@[A-Z_]*@//g; s/ *$//')
    [ -n "$want" ] || { echo "FAIL: cmake/terrane.pc.in has no $field"; bad=1; continue; }
    # The documentation's text, joined into one line (it may wrap), between backquotes.
    got=$(tr '\n' ' ' <"$SRC/docs/library.md" | sed -n "s/.*\`$field: \([^\`]*\)\`.*/\1/p" |
        tr -s ' ' | sed 's/ *$//')
    [ "$got" = "$want" ] ||
        { echo "FAIL: docs/library.md's $field is '$got', terrane.pc has '$want'"; bad=1; }
done
for lib in libzstd libxxhash libtiff-4; do
    grep -q "^Requires.private:.* $lib\( \|$\)" "$SRC/cmake/terrane.pc.in" ||
        { echo "FAIL: terrane.pc's Requires.private lacks $lib"; bad=1; }
done
[ $bad = 0 ] && echo "ok: docs/library.md quotes terrane.pc's private requirements"
exit $bad
