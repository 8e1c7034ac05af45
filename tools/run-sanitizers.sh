#!/usr/bin/env bash
# Builds the test suite with the `asan` (AddressSanitizer + UBSan) and `tsan`
# (ThreadSanitizer) presets of CMakePresets.json and runs it with ctest.
#
#   tools/run-sanitizers.sh                      asan, then tsan
#   tools/run-sanitizers.sh asan                 one preset
#   tools/run-sanitizers.sh asan -R tst_formats  extra arguments go to ctest
#
# Build dirs: build/asan, build/tsan. Environment:
#   JOBS           build and ctest parallelism (default nproc)
#   SANITIZER_GUI  OFF: configure without the explorer (core, CLI, the
#                  GUI-less tests and tst_jobtracker); default ON
#   TARGETS        build only these targets (space-separated; default all;
#                  restrict the tests to match: TSAN_TESTS or -R)
#   TSAN_TESTS     ctest -R regex for tsan (default or "all": every test)
# Prints the build and test time of each preset; exits non-zero when a test
# fails or a sanitizer reports.
#
# TSan sees only synchronisation in instrumented code and libc, not inside the
# distribution's oneTBB and Qt. Our hand-overs through them (TBB loops, the
# job tracker's thread pool and queued calls) are annotated
# (core/util/tsan_annotations.h); tools/tsan.supp makes TSan ignore what those
# libraries do inside themselves. docs/RELIABILITY.md has the details.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/install-deps.sh

presets=()
while (($#)) && [[ $1 == asan || $1 == tsan ]]; do
  presets+=("$1")
  shift
done
((${#presets[@]})) || presets=(asan tsan)
jobs=${JOBS:-$(nproc)}
configure=(-DSCALEACROSS_BUILD_GUI="${SANITIZER_GUI:-ON}")
targets=()
if [[ -n ${TARGETS:-} ]]; then
  read -ra names <<<"$TARGETS"
  targets=(--target "${names[@]}")
fi

export QT_QPA_PLATFORM=offscreen
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
chmod 700 "$XDG_RUNTIME_DIR"
# halt_on_error: a report fails the test; leaks are not checked (Qt and
# fontconfig keep caches alive until exit).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tools/tsan.supp}

status=0
for preset in "${presets[@]}"; do
  start=$SECONDS
  cmake --preset "$preset" "${configure[@]}" >/dev/null
  cmake --build --preset "$preset" -j "$jobs" "${targets[@]}"
  built=$SECONDS
  args=(--preset "$preset" -j "$jobs" --timeout 1800)
  runner=()
  if [[ $preset == tsan ]]; then
    case ${TSAN_TESTS:-all} in
      all) ;;
      *) args+=(-R "$TSAN_TESTS") ;;
    esac
    # TSan's shadow layout needs fixed mappings: without address-space
    # randomisation, kernels with 28+ bits of mmap entropy work too.
    if setarch "$(uname -m)" -R true 2>/dev/null; then
      runner=(setarch "$(uname -m)" -R)
    fi
  fi
  if ! "${runner[@]}" ctest "${args[@]}" "$@"; then
    status=1
  fi
  echo "== $preset: build $((built - start)) s, tests $((SECONDS - built)) s"
done
exit $status
