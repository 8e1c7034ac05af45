#!/usr/bin/env bash
# Builds the Debian package with CPack, installs it with apt and runs the
# installed programs: `scaleacross --version`, `scaleacross check` on the
# installed samples and the explorer offscreen, writing screenshots and
# exiting by itself.
#
#   packaging/build-deb.sh            build, install, smoke-test, leave installed
#   packaging/build-deb.sh --remove   ... then remove the package again
#   packaging/build-deb.sh --no-install   build (and lint) the .deb only
#
# Environment: BUILD_DIR (build/pkg), JOBS (build parallelism, nproc).
# Prints the path of the .deb on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."

install=1 remove=0
for a in "$@"; do
  case $a in
    --remove) remove=1 ;;
    --no-install) install=0 ;;
    *) echo "usage: $0 [--remove | --no-install]" >&2; exit 2 ;;
  esac
done
SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"

./tools/install-deps.sh
build=${BUILD_DIR:-build/pkg}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DSCALEACROSS_BUILD_TESTS=OFF -DSCALEACROSS_BUILD_GUI=ON "${launcher[@]}" >/dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}"
rm -f "$build"/scaleacross_*.deb
(cd "$build" && cpack -G DEB)
deb=$(ls "$build"/scaleacross_*.deb)
echo "== contents of $deb"
dpkg-deb --info "$deb" | sed -n '/Package:/,$p'
dpkg-deb --contents "$deb" | awk '{print $6}' | grep -v '/$'

# Lint what has a linter on this machine.
if command -v appstreamcli >/dev/null; then
  appstreamcli validate --no-net packaging/*.metainfo.xml
fi
if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate packaging/scaleacross-explorer.desktop
fi
((install)) || { echo "$deb"; exit 0; }

echo "== install"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=600 "./$deb"

echo "== run the installed programs"
test "$(command -v scaleacross)" = /usr/bin/scaleacross
version=$(/usr/bin/scaleacross --version)
echo "$version"
[[ $version == "scaleacross $(sed -n 's/^project(ScaleAcross VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)" ]]
samples=/usr/share/scaleacross/sample_clusters
/usr/bin/scaleacross check "$samples"/clusters "$samples"/models "$samples"/plans "$samples"/scenarios
/usr/bin/scaleacross evaluate "$samples"/scenarios/two-buildings-405b.json | head -n 5
man -w scaleacross
test -f /usr/share/applications/scaleacross-explorer.desktop
test -f /usr/share/icons/hicolor/scalable/apps/scaleacross.svg

shots=$(mktemp -d)
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
chmod 700 "$XDG_RUNTIME_DIR"
# Offscreen, the explorer opens the installed sample, writes PNGs and exits.
QT_QPA_PLATFORM=offscreen timeout 300 /usr/bin/scaleacross-explorer --screenshot "$shots" \
  "$samples"/scenarios/three-buildings-405b.json
ls -l "$shots"
compgen -G "$shots/*.png" >/dev/null || { echo "the explorer wrote no screenshot" >&2; exit 1; }
rm -rf "$shots"

if ((remove)); then
  echo "== remove"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get remove -y -o DPkg::Lock::Timeout=600 scaleacross
fi
echo "$deb"
