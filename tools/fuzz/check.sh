#!/bin/sh
# Run every libFuzzer target for a fixed time from its checked-in corpus; fail on any finding.
# usage: tools/fuzz/check.sh [BUILD_DIR]   (FUZZ_SECONDS per target, default 60; FUZZ_JOBS
# targets at once, default 1; FUZZ_OUT for new inputs and crash files)
set -eu
build=${1:-build-fuzz}
secs=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
out=${FUZZ_OUT:-$build/fuzz-check}
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
targets=$(ls "$build" | grep -E '^fuzz_[a-z_]+$' || true)
[ -n "$targets" ] || { echo "no fuzz targets in $build (run 'make fuzz' first)" >&2; exit 1; }

run_one() {
    name=$1
    dir="$out/$name"
    mkdir -p "$dir/corpus"
    rm -f "$dir/status"
    # New inputs go to a scratch corpus; the checked-in one is only read.
    if "$build/$name" -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$dir/" "$dir/corpus" "$src/fuzz/corpus/$name" >"$dir/log" 2>&1; then
        runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log" | grep -o '[0-9]*$' || echo '?')
        echo "ok    $name: $runs runs in ${secs} s"
    else
        echo "FAIL  $name: see $dir/log and the crash-* / leak-* / timeout-* files in $dir/"
        tail -n 30 "$dir/log" | sed 's/^/      /'
        return 1
    fi
}

failed=0
running=0
for t in $targets; do
    (run_one "$t"; echo $? >"$out/$t/status") &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait
        running=0
    fi
done
wait
for t in $targets; do
    [ "$(cat "$out/$t/status" 2>/dev/null)" = 0 ] || failed=1
done
[ "$failed" -eq 0 ] && echo "fuzz-check: no findings ($(echo $targets | wc -w) targets, ${secs} s each)"
exit "$failed"
