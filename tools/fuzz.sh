#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in build/fuzz, replays
# the seed corpus, then fuzzes each target for a while.
#
#   tools/fuzz.sh                  replay, then 60 s per target
#   tools/fuzz.sh 300              replay, then 300 s per target
#   tools/fuzz.sh 120 plan model   only these targets
#   tools/fuzz.sh --replay         replay the corpus only (what CI can afford)
#
# Targets: cluster model plan scenario evaluate (tests/fuzz/targets.h).
# New inputs go to build/fuzz/corpus/TARGET (the repository's seeds are not
# touched); a crash is written to build/fuzz/artifacts/ and fails the script.
# Minimise one with: build/fuzz/tests/fuzz/fuzz_TARGET -minimize_crash=1 FILE
# Environment: BUILD_DIR (build/fuzz), JOBS (build parallelism, 2),
# FUZZ_ARGS (more libFuzzer flags).
set -euo pipefail
cd "$(dirname "$0")/.."

replay_only=0
seconds=60
if [[ ${1:-} == --replay ]]; then
  replay_only=1
  shift
elif [[ ${1:-} =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(cluster model plan scenario evaluate)
fi

need=()
command -v clang++ >/dev/null || need+=(clang)
dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "install ok installed" ||
  need+=(libclang-rt-14-dev)
if ((${#need[@]})); then
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends \
    -o DPkg::Lock::Timeout=600 "${need[@]}"
fi
./tools/install-deps.sh

build=${BUILD_DIR:-build/fuzz}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DSCALEACROSS_BUILD_FUZZERS=ON -DSCALEACROSS_BUILD_GUI=OFF -DSCALEACROSS_BUILD_TESTS=OFF \
  >/dev/null
cmake --build "$build" -j "${JOBS:-2}" --target $(printf 'fuzz_%s ' "${targets[@]}")

bin="$build/tests/fuzz"
dict=tests/fuzz/json.dict
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

status=0
for t in "${targets[@]}"; do
  echo "== replay $t: $(find "tests/fuzz/corpus/$t" -type f | wc -l) inputs"
  if ! "$bin/fuzz_$t" -runs=0 "tests/fuzz/corpus/$t" >"$build/replay-$t.log" 2>&1; then
    tail -n 40 "$build/replay-$t.log"
    echo "replay of $t FAILED (log: $build/replay-$t.log)"
    status=1
  fi
done
((replay_only)) && exit $status

mkdir -p "$build/artifacts"
for t in "${targets[@]}"; do
  work="$build/corpus/$t"
  mkdir -p "$work"
  cp -n "tests/fuzz/corpus/$t"/* "$work/" 2>/dev/null || true
  log="$build/fuzz-$t.log"
  echo "== fuzz $t for ${seconds}s (log: $log)"
  # One process (the machine is shared); inputs up to 8 KiB, 10 s per input.
  if ! "$bin/fuzz_$t" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
      -dict="$dict" -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" \
      ${FUZZ_ARGS:-} "$work" >"$log" 2>&1; then
    grep -m1 -A30 -E 'ERROR|runtime error|fuzz property|deadly signal|Timeout|out-of-memory' "$log" || tail -n 40 "$log"
    echo "fuzz $t FOUND A PROBLEM: see $log and $build/artifacts/"
    status=1
  fi
  grep -E '^#[0-9]+' "$log" | tail -n 1 || true
  grep -E 'stat::(number_of_executed_units|new_units_added|peak_rss_mb)' "$log" || true
done
exit $status
