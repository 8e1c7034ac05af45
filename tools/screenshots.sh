#!/usr/bin/env bash
# Writes screenshots of the explorer for people to look at (and for the
# README): the main window on the three-building sample, the link heatmap,
# a pipeline stage in the middle of a drag with its preview, the timeline
# (1F1B, interleaved, pinned beside the current plan), the compare panel,
# the charts and the optimizer panel after its default search.
#
#   tools/screenshots.sh [OUTPUT_DIR] [SCENARIO.json]
#
# Builds scaleacross-explorer first if needed (BUILD_DIR, default
# build/screenshots). Runs headless: Qt's offscreen platform, or Xvfb when
# SCREENSHOTS_XVFB=1 (both give the same pixels).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/docs/screenshots}"
scenario="${2:-}"
build="${BUILD_DIR:-$root/build/screenshots}"

if [[ ! -f "$build/build.ninja" && ! -f "$build/Makefile" ]]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DSCALEACROSS_BUILD_TESTS=OFF
fi
cmake --build "$build" --target scaleacross-explorer --parallel "${JOBS:-2}"

exe="$(find "$build" -type f -name scaleacross-explorer -perm -u+x | head -n 1)"
if [[ -z "$exe" ]]; then
  echo "screenshots.sh: scaleacross-explorer was not built in $build" >&2
  exit 1
fi

mkdir -p "$out"
# Fixed settings and fonts so the pictures do not depend on the desktop.
export XDG_CONFIG_HOME="$(mktemp -d)"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
chmod 700 "$XDG_RUNTIME_DIR"
export QT_SCALE_FACTOR=1
trap 'rm -rf "$XDG_CONFIG_HOME"' EXIT

args=(--screenshot "$out")
[[ -n "$scenario" ]] && args+=("$scenario")
if [[ "${SCREENSHOTS_XVFB:-0}" == 1 ]]; then
  xvfb-run -a -s "-screen 0 1920x1200x24" "$exe" "${args[@]}"
else
  QT_QPA_PLATFORM=offscreen "$exe" "${args[@]}"
fi
ls -l "$out"/*.png
