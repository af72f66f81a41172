#!/bin/sh
# Builds the Debian packages from a copy of the source tree and checks them (check-deb.sh: their
# contents, lintian, programs built against them); make deb and the deb_lintian test run it.
# usage: packaging/build-deb.sh [--keep] DEB_DIR SOURCE_DIR [JOBS]
# The packages land in DEB_DIR, the copy in DEB_DIR/terrane. --keep keeps the copy's compiled
# objects (obj-*/) from the last run, so only what changed is compiled again; the sources are
# copied afresh either way (with their own times, which is what lets make skip the rest).
# DEBFULLNAME and DEBEMAIL name the Maintainer (set-maintainer.sh); DEB_BUILD_OPTIONS and
# DEB_BUILD_PROFILES are passed on.
set -eu
keep=0
if [ "${1-}" = --keep ]; then
    keep=1
    shift
fi
[ $# -ge 2 ] || {
    echo "usage: $0 [--keep] DEB_DIR SOURCE_DIR [JOBS]" >&2
    exit 2
}
mkdir -p "$1"
DIR=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
JOBS=${3:-2}
TREE=$DIR/terrane

if [ $keep = 1 ] && [ -d "$TREE" ]; then
    # Everything but the compiled objects goes: files removed from the source must not linger.
    find "$TREE" -mindepth 1 -maxdepth 1 ! -name 'obj-*' -exec rm -rf {} +
else
    rm -rf "$TREE"
fi
# The last run's packages only (check-deb.sh reads the ones of the changelog's version).
rm -f "$DIR"/libterrane0_*.deb "$DIR"/libterrane0-dbgsym_*.deb "$DIR"/libterrane-dev_*.deb \
    "$DIR"/terrane_*.deb "$DIR"/terrane-dbgsym_*.deb "$DIR"/terrane-mpi_*.deb \
    "$DIR"/terrane-mpi-dbgsym_*.deb "$DIR"/terrane_*.changes "$DIR"/terrane_*.buildinfo
mkdir -p "$TREE"
if git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$SRC" && git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf -)
else
    (cd "$SRC" && tar --exclude='./build*' --exclude=./out --exclude=./.git -cf - .)
fi | tar -xf - -C "$TREE"
sh "$SRC/packaging/set-maintainer.sh" "$TREE"
# -nc: no clean first (the copy is fresh, and a clean would remove the objects --keep kept).
# terrane-mpi needs OpenMPI to build: without libopenmpi-dev the pkg.terrane.nompi profile leaves
# it out (and DEB_BUILD_PROFILES, when set, decides).
if [ -z "${DEB_BUILD_PROFILES+set}" ] &&
    ! dpkg-query -W -f='${Status}' libopenmpi-dev 2>/dev/null | grep -q "install ok installed"; then
    echo "libopenmpi-dev is not installed: building without terrane-mpi (profile pkg.terrane.nompi)"
    DEB_BUILD_PROFILES=pkg.terrane.nompi
    export DEB_BUILD_PROFILES
fi
(cd "$TREE" && dpkg-buildpackage -b -nc -us -uc -J"$JOBS")
sh "$SRC/packaging/check-deb.sh" "$DIR" "$SRC"
