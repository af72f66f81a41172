#!/bin/sh
# The Debian packages of this tree pass lintian with no error and no warning, hold what they
# should, and programs build against them (pkg-config, find_package): packaging/build-deb.sh
# builds them into WORK_DIR (keeping its compiled objects for the next run) and check-deb.sh
# checks them. The Maintainer is a test-only name at a reserved domain that can never receive
# mail; a real build (make deb) names whoever builds.
# usage: tests/deb_lintian.sh SOURCE_DIR WORK_DIR [JOBS]
# (exit 77 = skipped: lintian, dpkg-buildpackage or debhelper not installed)
set -u
SRC=$1
WORK=$2
JOBS=${3:-2}
for tool in lintian dpkg-buildpackage dh dpkg-parsechangelog cc cmake pkg-config; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "$tool not found: skipped (the packages are checked where lintian, debhelper and" \
            "devscripts are installed: apt-get install lintian debhelper devscripts)"
        exit 77
    fi
done
mkdir -p "$WORK" || exit 1
log=$WORK/build.log
echo "building the packages in $WORK (the first run compiles the library: minutes)"
if DEBFULLNAME='terrane package test' DEBEMAIL=package-test@terrane.invalid \
    DEB_BUILD_OPTIONS=nocheck sh "$SRC/packaging/build-deb.sh" --keep "$WORK" "$SRC" "$JOBS" \
    >"$log" 2>&1; then
    # check-deb.sh's findings: package contents, the lintian run, the programs.
    grep -E '^(ok: |== |[EWIPXO]: |Package: |Depends: )' "$log"
    exit 0
fi
tail -n 60 "$log"
echo "FAIL: the packages did not build or pass their checks (whole log: $log)"
exit 1
