#!/usr/bin/env bash
# Installs what is needed, builds everything and runs every test headless,
# through the `ci` presets of CMakePresets.json (build/ci, RelWithDebInfo,
# warnings as errors).
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/install-deps.sh
cmake --preset ci
cmake --build --preset ci -j "$(nproc)"
export QT_QPA_PLATFORM=offscreen
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
chmod 700 "$XDG_RUNTIME_DIR"
ctest --preset ci -j "$(nproc)" --timeout 600
# Sanitizers (docs/RELIABILITY.md): the GUI-less tests under ASan + UBSan, the
# parallel optimizer, sweep and job tracker under TSan. SCALEACROSS_SANITIZERS=0
# skips them.
if [[ ${SCALEACROSS_SANITIZERS:-1} != 0 ]]; then
  SANITIZER_GUI=OFF ./tools/run-sanitizers.sh asan
  # The random use of the explorer (tst_monkey, which runs the CLI too)
  # under ASan + UBSan: the views built into the same build/asan.
  SANITIZER_GUI=ON TARGETS="tst_monkey scaleacross" ./tools/run-sanitizers.sh asan -R '^tst_monkey$'
  SANITIZER_GUI=OFF TARGETS="tst_optimizer tst_jobtracker tst_sweep_csv" \
    TSAN_TESTS='^(tst_optimizer|tst_jobtracker|tst_sweep_csv)$' ./tools/run-sanitizers.sh tsan
fi
