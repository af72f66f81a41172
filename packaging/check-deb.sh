#!/bin/sh
# Checks the packages `make deb` built: their contents, lintian, and programs built against the
# unpacked libterrane0 + libterrane-dev (pkg-config shared and static, find_package) and run.
# usage: packaging/check-deb.sh DEB_DIR [SOURCE_DIR]
set -eu
DIR=$(cd "$1" && pwd)
SRC=$(cd "${2:-.}" && pwd)
version=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib=usr/lib/$multiarch

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/terrane-deb.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM HUP
ROOT=$TMP/root

# contains PACKAGE PATH...: the package holds each path (files, links and folders alike).
contains() {
    deb=$DIR/${1}_${version}_$arch.deb
    [ -f "$deb" ] || fail "$deb not built"
    shift
    dpkg-deb -c "$deb" | awk '{ p = $6; sub(/^\.\//, "", p); sub(/\/$/, "", p); print p }' >"$TMP/list"
    for path in "$@"; do
        grep -qx "$path" "$TMP/list" || fail "$(basename "$deb") lacks /$path"
    done
    dpkg-deb -x "$deb" "$ROOT"
    echo "ok: $(basename "$deb"): $(wc -l <"$TMP/list" | tr -d ' ') entries"
}
contains libterrane0 "$lib/libterrane.so.0" "$lib/libterrane.so.$version"
headers=$(cd "$SRC/include" && ls terrane/*.h | sed 's|^|usr/include/|')
# shellcheck disable=SC2086
contains libterrane-dev $headers "$lib/libterrane.so" "$lib/libterrane.a" "$lib/libterrane_runtime.a" "$lib/pkgconfig/terrane.pc" \
    "$lib/cmake/terrane/terraneConfig.cmake" "$lib/cmake/terrane/terraneConfigVersion.cmake" \
    "$lib/cmake/terrane/terraneTargets.cmake" usr/share/doc/libterrane-dev/library.md.gz
contains terrane usr/bin/terrane usr/share/man/man1/terrane.1.gz usr/share/doc/terrane/cli.md.gz \
    "$lib/lua/5.4/terrane.so" usr/share/terrane/examples/recipes/island.json \
    usr/share/terrane/examples/recipes/dem.tif usr/share/terrane/examples/project/world.scene.json \
    usr/share/terrane/examples/terrain_3d/world.scene.json \
    usr/share/terrane/examples/terrain_graph_3d/terrain/landscape.terrain.json
# terrane-mpi, where OpenMPI was there to build it (build-deb.sh says when it was not).
if [ -f "$DIR/terrane-mpi_${version}_$arch.deb" ]; then
    contains terrane-mpi usr/bin/terrane-mpi usr/share/man/man1/terrane-mpi.1.gz
    dpkg-deb -f "$DIR/terrane-mpi_${version}_$arch.deb" Depends | grep -q 'libopenmpi' ||
        fail "terrane-mpi does not depend on OpenMPI's library"
elif dpkg-query -W -f='${Status}' libopenmpi-dev 2>/dev/null | grep -q "install ok installed" &&
    [ -z "${DEB_BUILD_PROFILES-}" ]; then
    fail "OpenMPI is installed but terrane-mpi_${version}_$arch.deb was not built"
fi
# PROJ and libgeotiff (and the CLI's libmicrohttpd) are opened on first use, not linked: every
# package with a program or the library must still depend on them (debian/rules), or a CRS (the
# studio) fails to load on the user's machine.
for pkg in libterrane0 terrane terrane-mpi; do
    deb="$DIR/${pkg}_${version}_$arch.deb"
    [ -f "$deb" ] || continue
    dpkg-deb -f "$deb" Depends | grep -q 'libproj' ||
        fail "$pkg does not depend on PROJ, which it opens on first use"
    dpkg-deb -f "$deb" Depends | grep -q 'libgeotiff' ||
        fail "$pkg does not depend on libgeotiff, which it opens on first use"
done
dpkg-deb -f "$DIR/terrane_${version}_$arch.deb" Depends | grep -q 'libmicrohttpd' ||
    fail "terrane does not depend on libmicrohttpd, which its studio opens on first use"
for deb in "$DIR"/*_"$version"_"$arch".deb; do
    echo "== $(basename "$deb")"
    dpkg-deb -f "$deb" Package Version Depends
done

echo "== lintian"
lintian --fail-on error,warning --display-info "$DIR/terrane_${version}_$arch.changes"
echo "ok: lintian"

# Nothing installed names the folder the packages were built in (dpkg-buildpackage ran in
# DEB_DIR/terrane): such a path makes the build unreproducible and points nowhere on the user's
# machine. The -dbgsym packages keep theirs, as debug information does.
built_in=$(grep -rlaF "$DIR/terrane" "$ROOT" || true)
[ -z "$built_in" ] || fail "these packaged files name the build folder $DIR/terrane: $built_in"
echo "ok: no packaged file names the build folder"
out=$("$ROOT/usr/bin/terrane" --version) || fail "the packaged terrane --version failed"
[ "$out" = "terrane $version" ] || fail "the packaged terrane says '$out', the package is $version"
# The shipped examples, found by name from any folder (TERRANE_EXAMPLES: the unpacked copy stands
# in for /usr/share/terrane/examples).
out=$(cd "$TMP" && TERRANE_EXAMPLES="$ROOT/usr/share/terrane/examples" "$ROOT/usr/bin/terrane" \
    inspect example:island 2>&1) || fail "the packaged terrane inspect example:island: $out"
# The Heightfield Input example finds the DEM it reads beside it.
out=$(cd "$TMP" && TERRANE_EXAMPLES="$ROOT/usr/share/terrane/examples" "$ROOT/usr/bin/terrane" \
    graph check example:dem_level 2>&1) || fail "the packaged terrane graph check example:dem_level: $out"
echo "ok: the packaged examples are found by name"

# Programs against the unpacked packages: terrane.pc says prefix=/usr, pkg-config is told where.
cp "$SRC/tests/install_app.c" "$TMP/app.c"
pc() {
    PKG_CONFIG_PATH="$ROOT/$lib/pkgconfig" pkg-config --define-variable=prefix="$ROOT/usr" "$@"
}
run_app() {
    out=$(LD_LIBRARY_PATH="$ROOT/$lib" "$TMP/$1" "$TMP/$1.ter") || fail "$1 exited with $?"
    [ "$out" = "ok $version TRN_OK" ] || fail "$1 printed '$out'"
    echo "ok: $1"
}
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror "$TMP/app.c" -o "$TMP/app_shared" $(pc --cflags --libs terrane)
run_app app_shared
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror $(pc --cflags terrane) "$TMP/app.c" -o "$TMP/app_static" \
    $(pc --static --libs terrane | sed 's/-lterrane /-l:libterrane.a /')
run_app app_static
mkdir "$TMP/proj"
cp "$TMP/app.c" "$TMP/proj/app.c"
cat >"$TMP/proj/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(terrane_consumer LANGUAGES C)
find_package(terrane $version REQUIRED COMPONENTS shared static)
add_executable(app_cmake_shared app.c)
target_link_libraries(app_cmake_shared PRIVATE terrane::terrane)
add_executable(app_cmake_static app.c)
target_link_libraries(app_cmake_static PRIVATE terrane::terrane_static)
CMAKE
cmake -S "$TMP/proj" -B "$TMP/proj/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$ROOT/usr" \
    >"$TMP/cmake.log" 2>&1 && cmake --build "$TMP/proj/build" >>"$TMP/cmake.log" 2>&1 ||
    { cat "$TMP/cmake.log"; fail "CMake project with find_package(terrane $version)"; }
cp "$TMP/proj/build/app_cmake_shared" "$TMP/proj/build/app_cmake_static" "$TMP/"
run_app app_cmake_shared
run_app app_cmake_static
echo "ok: packages $version checked"
