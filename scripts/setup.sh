#!/usr/bin/env bash
# Installs every Debian 12 package opscope needs to build, test and run. Idempotent: prints
# nothing and touches nothing when all packages are already installed.
#   --fuzz   also clang-14 and libFuzzer, for the fuzz targets (bench/fuzz/run.sh)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  qt6-base-dev qt6-charts-dev qt6-svg-dev
  libgraphviz-dev graphviz
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata python3-onnx
  # libdnnl-dev's CMake config calls find_package(OpenCL); ocl-icd-opencl-dev is only its
  # Recommends, which --no-install-recommends skips (a fresh machine then fails at configure).
  libdnnl-dev ocl-icd-opencl-dev libcli11-dev nlohmann-json3-dev libsimdjson-dev
  xvfb xauth imagemagick x11-utils fonts-dejavu-core time
  # profile --ranks and its tests: OpenMPI's headers and libraries, and mpirun.
  libopenmpi-dev openmpi-bin
  # Packaging checks run by the test suite: desktop entry, AppStream metainfo, man pages.
  desktop-file-utils appstream help2man file dpkg-dev
)
for arg in "$@"; do
  case "$arg" in
    --fuzz) packages+=(clang-14 libfuzzer-14-dev libclang-rt-14-dev) ;;
    *) echo "setup: unknown option '$arg' (known: --fuzz)" >&2; exit 1 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    echo "setup: need root to install: ${missing[*]}" >&2; exit 1
  fi
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
