#!/usr/bin/env bash
# Installs what is needed, builds the explorer and starts it on the bundled
# three-building sample (or on the files given as arguments).
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/install-deps.sh
build=${BUILD_DIR:-build/release}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSCALEACROSS_BUILD_TESTS=OFF
cmake --build "$build" -j "$(nproc)" --target scaleacross-explorer scaleacross
if [[ $# -eq 0 ]]; then
  set -- sample_clusters/scenarios/three-buildings-405b.json
fi
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" && -z "${QT_QPA_PLATFORM:-}" ]]; then
  echo "No display found: starting under Xvfb (xvfb-run)." >&2
  exec xvfb-run -a "$build/app/gui/scaleacross-explorer" "$@"
fi
exec "$build/app/gui/scaleacross-explorer" "$@"
