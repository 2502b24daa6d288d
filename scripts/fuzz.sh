#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang++ with ASan + UBSan) in a build folder of their
# own and runs each for SECONDS (default 20) from its checked-in seed corpus.
#
#   scripts/fuzz.sh [SECONDS]
#
# Environment: WHEELFIT_FUZZ_BUILD (the build folder; default <repo>/build-fuzz), CXX (default
# clang++), JOBS (parallel compile jobs; default 2), FUZZ_TARGETS (space-separated subset).
# Prints one summary line per target; exits 1 when any target crashed, leaked, timed out or
# failed to build (the reproducer is kept under <build>/fuzz-artifacts/), 2 on a usage error.
set -uo pipefail

seconds=${1:-20}
if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds < 1)); then
  echo "usage: scripts/fuzz.sh [SECONDS]   (a positive number of seconds per target; default 20)" >&2
  exit 2
fi
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${WHEELFIT_FUZZ_BUILD:-$repo/build-fuzz}
cxx=${CXX:-clang++}
jobs=${JOBS:-2}
targets=${FUZZ_TARGETS:-"fuzz_binary fuzz_zip fuzz_index fuzz_model fuzz_machine fuzz_config fuzz_policy fuzz_releases fuzz_url fuzz_netrc fuzz_cache_entry fuzz_size fuzz_capi fuzz_locks"}

if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "fuzz.sh: $cxx not found (install clang and libclang-rt-14-dev: scripts/install-deps.sh)" >&2
  exit 1
fi
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi

echo "== configuring $build ($cxx)"
mkdir -p "$build"
if ! cmake -S "$repo" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
     -DCMAKE_CXX_COMPILER="$cxx" -DWHEELFIT_FUZZ=ON -DWHEELFIT_BUILD_TESTS=OFF -DWHEELFIT_BUILD_BENCH=OFF \
     -DWHEELFIT_SANITIZE=OFF >"$build/configure.log" 2>&1; then
  cat "$build/configure.log" >&2
  echo "fuzz.sh: configure failed" >&2
  exit 1
fi
echo "== building: $targets"
# shellcheck disable=SC2086
if ! cmake --build "$build" --parallel "$jobs" --target $targets; then
  echo "fuzz.sh: build failed" >&2
  exit 1
fi

artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=0
summary=()
for t in $targets; do
  exe=$build/tests/fuzz/$t
  seeds=$repo/tests/fuzz/corpus/$t
  work=$build/fuzz-corpus/$t  # what the fuzzer finds: kept between runs, never checked in
  log=$build/fuzz-$t.log
  mkdir -p "$work" "$seeds"
  echo "== $t: ${seconds}s"
  "$exe" "$work" "$seeds" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$t-" >"$log" 2>&1
  rc=$?
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  if ((rc == 0)); then
    summary+=("$(printf '%-12s ok      %10s runs  cov %-6s %s' "$t" "${runs:-?}" "${cov:-?}" "$log")")
  else
    failed=1
    crash=$(ls -t "$artifacts/$t-"* 2>/dev/null | head -1)
    reason=$(grep -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer): [a-zA-Z-]+|runtime error: .*' "$log" | head -1)
    summary+=("$(printf '%-12s FAILED  exit %s: %s; reproducer %s; log %s' "$t" "$rc" "${reason:-see log}" "${crash:-none}" "$log")")
    tail -40 "$log" >&2
  fi
done

echo
echo "== fuzz summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
if ((failed)); then
  echo "fuzz.sh: FAILED (rerun one input with: <build>/tests/fuzz/<target> <reproducer>)"
  exit 1
fi
echo "fuzz.sh: all targets ran without a crash"
