#!/usr/bin/env bash
# Installs the Debian 12 packages needed to build and test ScaleAcross
# Explorer. Idempotent: does nothing when everything is already installed.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  qt6-base-dev libqt6opengl6-dev qt6-charts-dev qt6-svg-dev qt6-qpa-plugins
  libboost-graph-dev nlohmann-json3-dev libtbb-dev libbenchmark-dev
  libcli11-dev libtomlplusplus-dev libyaml-cpp-dev
  xvfb xauth fonts-dejavu-core
  # tests/slurm runs a throwaway single-node cluster. Installing them starts no
  # Slurm daemon: their units and init scripts wait for /etc/slurm/slurm.conf,
  # which nothing here writes; munged may start (the test then uses it).
  slurm-wlm munge
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "Installing: ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends \
  -o DPkg::Lock::Timeout=600 "${missing[@]}"
