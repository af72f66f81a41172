# terrane: the README's two commands (make demo, make test) and friends.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEBIAN_PACKAGES = build-essential cmake pkg-config libjansson-dev libspng-dev zlib1g-dev libxxhash-dev libtiff-dev libzip-dev

.PHONY: all deps build demo test bench fuzz fuzz-check mutation-check clean format

all: build

# Install missing Debian packages when running as root (a fresh Debian 12 machine).
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "missing Debian packages:$$missing (run as root or install them)"; exit 1; fi; \
	fi

build: deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build -j $(JOBS)

demo: build
	sh examples/demo.sh build/terrane out/demo

# The Release build runs first: optimised builds see warnings (maybe-uninitialized) that -O0
# does not, and -Werror must hold for both.
test: deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build -j $(JOBS)
	cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Debug -DTRN_SANITIZE=ON >/dev/null
	cmake --build build-test -j $(JOBS)
	cd build-test && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

bench: build
	sh bench/run.sh build

fuzz: deps
	cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRN_FUZZ=ON >/dev/null
	cmake --build build-fuzz -j $(JOBS)

# Every fuzz target for FUZZ_SECONDS (default 60) from its corpus; fails on any finding.
fuzz-check: fuzz
	sh tools/fuzz/check.sh build-fuzz

# Each mutation of tools/mutation/mutations.txt applied to a private copy of the tree (never this
# one), built (Release) and tested; fails below a 95% score and lists the survivors. Slow: an hour
# or more on 2 cores (docs/testing.md). MUTATIONS=id1,id2 runs only those.
mutation-check: deps
	nice python3 tools/mutation/run.py --jobs $(JOBS) $(if $(MUTATIONS),--only $(MUTATIONS))

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-test build-fuzz out
