#!/bin/sh
# Installs the build into a temporary prefix and links programs against it: pkg-config (shared
# and static libterrane) and find_package(terrane); docs/library.md lists every public header.
# usage: tests/install_test.sh SOURCE_DIR BUILD_DIR [CC] [EXTRA_CFLAGS]
# (exit 77 = skipped: no C compiler, pkg-config or cmake; EXTRA_CFLAGS: the build's sanitizers)
set -u
SRC=$1
BUILD=$2
CC=${3:-cc}
EXTRA=${4:-}

fail() {
    echo "FAIL: $*"
    exit 1
}

# docs/library.md's header table and include/terrane/ name the same headers.
headers=$(cd "$SRC/include" && ls terrane/*.h)
[ -n "$headers" ] || fail "no headers in $SRC/include/terrane"
listed=$(sed -n 's/^| `\(terrane\/[^`]*\.h\)` |.*/\1/p' "$SRC/docs/library.md" | sort)
for h in $headers; do
    printf '%s\n' "$listed" | grep -qx "$h" || fail "docs/library.md's header table lacks $h"
done
for h in $listed; do
    [ -f "$SRC/include/$h" ] || fail "docs/library.md lists $h, which is not in include/terrane/"
done
[ "$(printf '%s\n' "$listed" | uniq -d)" = "" ] || fail "docs/library.md lists a header twice"
echo "ok: docs/library.md lists the $(printf '%s\n' "$headers" | wc -l | tr -d ' ') public headers"

for tool in "$CC" pkg-config cmake; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "$tool not found: skipped"
        exit 77
    fi
done
have_readelf=0
command -v readelf >/dev/null 2>&1 && have_readelf=1

TMP=$(mktemp -d "${TMPDIR:-/tmp}/terrane-install.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM HUP
P=$TMP/prefix

cmake --install "$BUILD" --prefix "$P" >"$TMP/install.log" 2>&1 || {
    cat "$TMP/install.log"
    fail "cmake --install $BUILD --prefix $P"
}

# The CLI, its version, the headers, both libraries with the SONAME, the man page.
[ -x "$P/bin/terrane" ] || fail "bin/terrane not installed"
# The examples, found by name from any folder (TERRANE_EXAMPLES: this prefix, not the build's).
ex=$(find "$P" -path '*/terrane/examples/recipes/island.json')
[ -n "$ex" ] || fail "share/terrane/examples/recipes/island.json not installed"
[ -f "$(dirname "$(dirname "$ex")")/project/world.scene.json" ] || fail "examples/project not installed"
(cd "$TMP" && TERRANE_EXAMPLES=$(dirname "$(dirname "$ex")") "$P/bin/terrane" inspect example:island >"$TMP/ex.log" 2>&1) ||
    fail "installed terrane inspect example:island: $(cat "$TMP/ex.log")"
# The projects of docs/examples.md, and the Heightfield Input example with the DEM it reads.
for f in terrain_3d/world.scene.json terrain_graph_3d/terrain/landscape.terrain.json recipes/dem.tif; do
    [ -f "$(dirname "$(dirname "$ex")")/$f" ] || fail "share/terrane/examples/$f not installed"
done
(cd "$TMP" && TERRANE_EXAMPLES=$(dirname "$(dirname "$ex")") "$P/bin/terrane" graph check example:dem_level >"$TMP/ex.log" 2>&1) ||
    fail "installed terrane graph check example:dem_level: $(cat "$TMP/ex.log")"
echo "ok: the examples are installed and found by name"
version=$("$P/bin/terrane" --version | sed -n 's/^terrane //p')
[ -n "$version" ] || fail "installed terrane --version printed no version"
pc=$(find "$P" -name terrane.pc)
[ -n "$pc" ] && [ -f "$pc" ] || fail "terrane.pc not installed"
libdir=$(dirname "$(dirname "$pc")")
installed=$(cd "$P/include" && ls terrane/*.h)
[ "$installed" = "$headers" ] || fail "installed headers differ from include/terrane/"
[ -f "$libdir/libterrane.a" ] || fail "libterrane.a not in $libdir"
[ -f "$libdir/libterrane_runtime.a" ] || fail "libterrane_runtime.a not in $libdir"
[ -f "$libdir/libterrane.so.$version" ] && [ ! -L "$libdir/libterrane.so.$version" ] ||
    fail "libterrane.so.$version not in $libdir"
[ "$(readlink "$libdir/libterrane.so.0")" = "libterrane.so.$version" ] ||
    fail "libterrane.so.0 is not a link to libterrane.so.$version"
[ "$(readlink "$libdir/libterrane.so")" = "libterrane.so.0" ] ||
    fail "libterrane.so is not a link to libterrane.so.0"
if [ $have_readelf = 1 ]; then
    readelf -d "$libdir/libterrane.so.$version" | grep -q 'SONAME.*\[libterrane\.so\.0\]' ||
        fail "libterrane.so.$version has no SONAME libterrane.so.0"
fi
if grep -q '^TRN_MAN:BOOL=ON$' "$BUILD/CMakeCache.txt"; then
    man=$P/share/man/man1/terrane.1
    [ -f "$man" ] || fail "share/man/man1/terrane.1 not installed"
    grep -q "^\.TH TERRANE 1 \"\" \"terrane $version\"" "$man" || fail "terrane.1 has no .TH line for $version"
    verbs=$("$P/bin/terrane" --help | awk '/^verbs:$/ { f = 1; next } f && /^$/ { exit } f { print $1 }')
    [ -n "$verbs" ] || fail "installed terrane --help lists no verbs"
    for v in $verbs; do
        grep -qx ".SS \"terrane $v\"" "$man" || fail "terrane.1 has no section for 'terrane $v'"
    done
    grep -qx '.SS "terrane beamng import"' "$man" || fail "terrane.1 has no section for 'terrane beamng import'"
fi
echo "ok: installed terrane $version into $P"

# terrane.pc names the prefix installed to, and a staged install (DESTDIR) the final one.
[ "$(sed -n 's/^prefix=//p' "$pc")" = "$P" ] || fail "$pc: prefix is not $P"
DESTDIR=$TMP/stage cmake --install "$BUILD" --prefix /usr >"$TMP/install.log" 2>&1 || {
    cat "$TMP/install.log"
    fail "DESTDIR=$TMP/stage cmake --install $BUILD --prefix /usr"
}
staged=$(find "$TMP/stage" -name terrane.pc)
[ -n "$staged" ] && [ "$(sed -n 's/^prefix=//p' "$staged")" = "/usr" ] ||
    fail "staged terrane.pc: prefix is not /usr"
rm -rf "$TMP/stage"

export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
[ "$(pkg-config --modversion terrane)" = "$version" ] || fail "pkg-config --modversion terrane is not $version"
[ "$(pkg-config --libs terrane | tr -s ' ' | sed 's/ $//')" = "-L$libdir -lterrane" ] ||
    fail "pkg-config --libs terrane: $(pkg-config --libs terrane) (a shared link needs only -lterrane)"

# The program (tests/install_app.c): calls into each dependency, a .ter round trip.
cp "$SRC/tests/install_app.c" "$TMP/app.c"

# needed FILE: the shared libraries FILE names (DT_NEEDED), one a line.
needed() {
    readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}
# check NAME PROGRAM [libterrane.so.0|static]: runs PROGRAM and checks how it links libterrane.
check() {
    out=$("$2" "$TMP/$1.ter") || fail "$1: exited with $? ($out)"
    [ "$out" = "ok $version TRN_OK" ] || fail "$1 printed '$out'"
    [ -s "$TMP/$1.ter" ] || fail "$1 wrote no .ter"
    if [ $have_readelf = 1 ]; then
        if [ "$3" = static ]; then
            needed "$2" | grep -q '^libterrane' && fail "$1 needs $(needed "$2" | grep '^libterrane') (meant static)"
        else
            needed "$2" | grep -qx "$3" || fail "$1 does not need $3"
        fi
    fi
    echo "ok: $1 ($3)"
}

CFLAGS_APP="-std=c11 -Wall -Wextra -Werror $EXTRA"
# shellcheck disable=SC2086,SC2046
$CC $CFLAGS_APP "$TMP/app.c" -o "$TMP/app_pc_shared" $(pkg-config --cflags --libs terrane) ||
    fail "build with pkg-config --cflags --libs terrane"
(
    export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    check pc_shared "$TMP/app_pc_shared" libterrane.so.0
) || exit 1
# Static: the archive by name (-l:libterrane.a), since -lterrane finds the shared one first.
static_libs=$(pkg-config --static --libs terrane | sed 's/-lterrane /-l:libterrane.a /')
case $static_libs in *-l:libterrane.a*) ;; *) fail "no -lterrane in pkg-config --static --libs terrane" ;; esac
# shellcheck disable=SC2086,SC2046
$CC $CFLAGS_APP $(pkg-config --cflags terrane) "$TMP/app.c" -o "$TMP/app_pc_static" $static_libs ||
    fail "build with pkg-config --static --libs terrane: $static_libs"
check pc_static "$TMP/app_pc_static" static

# find_package: the version file refuses the next minor release, the components link.
next_minor=$(echo "$version" | awk -F. '{ print $1 "." $2 + 1 }')
mkdir "$TMP/proj"
cp "$TMP/app.c" "$TMP/proj/app.c"
# The runtime alone: open a payload that is not there and get the library's error back.
cat >"$TMP/proj/rt.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <terrane/runtime.h>
int main(void)
{
    trn_payload *p = NULL;
    trn_error e;
    if (trn_payload_open("missing.terrain.bin", NULL, &p, &e) == TRN_OK || p) return 1;
    char text[1024];
    return strstr(trn_error_format(&e, text, sizeof text), "missing.terrain.bin") ? 0 : 2;
}
EOF
cat >"$TMP/proj/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.20)
project(terrane_consumer LANGUAGES C)
find_package(terrane $next_minor QUIET)
if(terrane_FOUND)
  message(FATAL_ERROR "find_package(terrane $next_minor) accepted terrane $version")
endif()
find_package(terrane $version REQUIRED COMPONENTS shared static)
add_executable(app_cmake_shared app.c)
target_link_libraries(app_cmake_shared PRIVATE terrane::terrane)
add_executable(app_cmake_static app.c)
target_link_libraries(app_cmake_static PRIVATE terrane::terrane_static)
add_executable(app_cmake_runtime rt.c)
target_link_libraries(app_cmake_runtime PRIVATE terrane::terrane_runtime)
EOF
cmake -S "$TMP/proj" -B "$TMP/proj/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$CC" \
    -DCMAKE_C_FLAGS="$EXTRA" -DCMAKE_PREFIX_PATH="$P" >"$TMP/cmake.log" 2>&1 &&
    cmake --build "$TMP/proj/build" >>"$TMP/cmake.log" 2>&1 || {
    cat "$TMP/cmake.log"
    fail "CMake project with find_package(terrane $version)"
}
check cmake_shared "$TMP/proj/build/app_cmake_shared" libterrane.so.0
check cmake_static "$TMP/proj/build/app_cmake_static" static
"$TMP/proj/build/app_cmake_runtime" ||
    fail "terrane::terrane_runtime: a missing payload did not give the runtime's error"
echo "ok: terrane::terrane_runtime links alone and reports a missing payload"
exit 0
