# terrane: the README's two commands (make demo, make test) and friends.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEBIAN_PACKAGES = build-essential cmake pkg-config libjansson-dev libspng-dev zlib1g-dev libxxhash-dev libzstd-dev libtiff-dev libzip-dev libproj-dev libgeotiff-dev liblua5.4-dev libmicrohttpd-dev
# What `make test` needs beyond the build: headless Chromium drives the studio's browser test,
# through Node (Debian's nodejs 18 is enough: the test brings its own DevTools client);
# OpenMPI builds terrane-mpi, whose tests run under mpirun -np 2 and -np 4 (they skip without it).
TEST_PACKAGES = chromium nodejs libopenmpi-dev openmpi-bin python3-gdal

.PHONY: all deps build demo test bench gallery gallery-check fuzz fuzz-check mutation-check clean format deb

all: build

# Install missing Debian packages when running as root (a fresh Debian 12 machine). EXTRA_PACKAGES
# (make test's Chromium) are installed the same way as root; without root their tests skip.
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES) $(EXTRA_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    required=""; for p in $$missing; do case " $(EXTRA_PACKAGES) " in *" $$p "*) ;; *) required="$$required $$p";; esac; done; \
	    if [ -n "$$required" ]; then echo "missing Debian packages:$$required (run as root or install them)"; exit 1; fi; \
	    echo "note: not installed:$$missing (run as root to install; the tests that need them skip)"; \
	  fi; \
	fi

build: deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build -j $(JOBS)

demo: build
	sh examples/demo.sh build/terrane out/demo

# The Release build of the programs (the library, the command lines, the benchmarks) runs first:
# optimised builds see warnings (maybe-uninitialized) that lower levels miss, and -Werror must
# hold for both. The tests and fuzz replays are compiled once, in the sanitizer build (-O1,
# -Werror): compiling them in Release as well cost CI a minute (`make build` still does).
test:
	$(MAKE) deps EXTRA_PACKAGES="$(TEST_PACKAGES)"
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build -j $(JOBS) --target programs
	cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Debug -DTRN_SANITIZE=ON >/dev/null
	cmake --build build-test -j $(JOBS)
	cd build-test && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

bench: build
	sh bench/run.sh build

# docs/gallery.md and docs/images/gallery/ rewritten from scratch: every preset and example at
# its own grid and at 1025^2 beside real DEMs, shaded and measured alike (a few minutes).
# REAL_DEMS="a.tif b.tif" names the real DEMs (default: tools/gallery/real_dems.tsv's files in
# ../shared/testdata/real); GRID=N changes the regridded column. gallery-check runs the same
# script on a few terrains at small grids into a temporary folder (about 15 s).
gallery: deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build -j $(JOBS) --target terrane terrane_gallery terrane_demo_inputs
	sh tools/gallery/gallery.sh build

gallery-check: deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build -j $(JOBS) --target terrane terrane_gallery terrane_demo_inputs
	sh tools/gallery/gallery.sh --check build

FUZZ_TARGETS = $(basename $(notdir $(wildcard fuzz/fuzz_*.c)))

# The libFuzzer binaries only (tests and tools are not needed instrumented).
fuzz: deps
	cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRN_FUZZ=ON >/dev/null
	cmake --build build-fuzz -j $(JOBS) $(addprefix --target ,$(FUZZ_TARGETS))

# Every fuzz target for FUZZ_SECONDS (default 60) from its corpus; fails on any finding.
fuzz-check: fuzz
	sh tools/fuzz/check.sh build-fuzz

# Each mutation of tools/mutation/mutations.txt applied to a private copy of the tree (never this
# one), built (Release) and tested; fails below a 95% score and lists the survivors. Slow: an hour
# or more on 2 cores (docs/testing.md). MUTATIONS=id1,id2 runs only those.
mutation-check: deps
	nice python3 tools/mutation/run.py --jobs $(JOBS) $(if $(MUTATIONS),--only $(MUTATIONS))

# Debian packages libterrane0, libterrane-dev, terrane and, where OpenMPI (libopenmpi-dev) is
# installed, terrane-mpi (docs/library.md), built by
# dpkg-buildpackage from a copy of this tree in build-deb/ and checked there by lintian and
# packaging/check-deb.sh (packaging/build-deb.sh does both; the deb_lintian test runs it too).
# The version is CMakeLists.txt's project VERSION (debian/rules refuses a debian/changelog that
# disagrees). `make test` runs the tests; DEB_BUILD_OPTIONS= runs them in
# the package build too. The Maintainer is whoever builds: DEBFULLNAME and DEBEMAIL, as dch takes
# them (packaging/set-maintainer.sh fills them into the copy; without them make deb stops).
DEB_DIR = build-deb
DEB_TOOLS = build-essential debhelper devscripts fakeroot lintian
DEB_BUILD_OPTIONS ?= nocheck
deb: deps
	@missing=""; for p in $(DEB_TOOLS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	  else echo "missing Debian packages:$$missing (run as root or install them)"; exit 1; fi; \
	fi
	DEB_BUILD_OPTIONS="$(DEB_BUILD_OPTIONS)" sh packaging/build-deb.sh $(DEB_DIR) . $(JOBS)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-test build-fuzz out
