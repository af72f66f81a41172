#!/bin/sh
# packaging/set-maintainer.sh on copies of debian/control and debian/changelog: the builder's
# name and address fill the Maintainer field and the changelog trailer; no identity, a malformed
# address or a name a Maintainer field cannot hold stops it with nothing changed.
# usage: set_maintainer.sh SOURCE_DIR
set -u
src=$1
script=$src/packaging/set-maintainer.sh
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
bad=0
fresh() {
    rm -rf "$d/t" && mkdir -p "$d/t/debian"
    cp "$src/debian/control" "$src/debian/changelog" "$d/t/debian/"
}
# The tree's own files carry the placeholders, never a made-up address.
grep -q '^Maintainer: @DEBFULLNAME@ <@DEBEMAIL@>$' "$src/debian/control" ||
    { echo "FAIL: debian/control's Maintainer is not the builder placeholder"; bad=1; }
grep -q '^ -- @DEBFULLNAME@ <@DEBEMAIL@>  ' "$src/debian/changelog" ||
    { echo "FAIL: debian/changelog's trailer is not the builder placeholder"; bad=1; }

fresh
out=$(DEBFULLNAME='Jane Doe' DEBEMAIL=jane@example.org sh "$script" "$d/t" 2>&1) ||
    { echo "FAIL: refused a valid identity: $out"; bad=1; }
grep -q '^Maintainer: Jane Doe <jane@example.org>$' "$d/t/debian/control" ||
    { echo "FAIL: control: $(grep Maintainer "$d/t/debian/control")"; bad=1; }
grep -q '^ -- Jane Doe <jane@example.org>  Tue, 1 Dec 2026' "$d/t/debian/changelog" ||
    { echo "FAIL: changelog: $(grep '^ --' "$d/t/debian/changelog")"; bad=1; }

# dch's other form: DEBEMAIL="Name <address>" alone.
fresh
DEBFULLNAME= DEBEMAIL='Jo Roe <jo@example.net>' sh "$script" "$d/t" >/dev/null 2>&1 ||
    { echo "FAIL: refused DEBEMAIL='Name <address>'"; bad=1; }
grep -q '^Maintainer: Jo Roe <jo@example.net>$' "$d/t/debian/control" ||
    { echo "FAIL: control from DEBEMAIL alone: $(grep Maintainer "$d/t/debian/control")"; bad=1; }

refused() { # refused DESCRIPTION MESSAGE-PATTERN env...
    what=$1 pattern=$2
    shift 2
    fresh
    out=$(env "$@" sh "$script" "$d/t" 2>&1)
    rc=$?
    if [ $rc -eq 0 ]; then echo "FAIL: accepted $what"; bad=1; fi
    if ! printf '%s\n' "$out" | grep -q "$pattern"; then echo "FAIL: no '$pattern' for $what: $out"; bad=1; fi
    cmp -s "$src/debian/control" "$d/t/debian/control" ||
        { echo "FAIL: $what changed debian/control"; bad=1; }
}
refused "no identity" "set DEBFULLNAME and DEBEMAIL" -u DEBFULLNAME -u DEBEMAIL
refused "an address without a domain" "is not an e-mail address" DEBFULLNAME=Jane DEBEMAIL=jane@localhost
refused "a name with a pipe" "cannot hold" 'DEBFULLNAME=Jane | Doe' DEBEMAIL=jane@example.org
exit $bad
