#!/usr/bin/env bash
# Packs what the GPU check machine needs and lacks (it has CUDA, Python, numpy, onnx, but no
# Debian libraries): opscope-cli and tst_cudabackend from BUILD (default build/) and every shared
# library they load except the CUDA ones the machine has (cuBLAS, cuDNN, the driver), the C
# library and its loader included, so they run there whatever that machine's C library is.
# Writes .gpu-bundle/opscope-gpu.tar.xz (an ignored folder: the device `run` carries it).
#   scripts/gpu-bundle.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cli="$build/bin/opscope-cli"
[ -x "$cli" ] || { echo "no $cli: build first (cmake --build $build --target opscope-cli)"; exit 1; }
grep -q 'OPSCOPE_WITH_CUDA:BOOL=ON' "$build/CMakeCache.txt" || { echo "$build is not a CUDA build"; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/opscope/bin" "$stage/opscope/lib"
bins="$cli"
[ -x "$build/bin/tst_cudabackend" ] && bins="$bins $build/bin/tst_cudabackend"
for bin in $bins; do
  cp "$bin" "$stage/opscope/bin/"
  # Every library ldd resolves, less the CUDA libraries (the machine's own must match its driver).
  ldd "$bin" | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libcuda.so*|libcublas*|libcudnn*|libcudart*) ;;
      *) cp -L "$lib" "$stage/opscope/lib/" ;;
    esac
  done
done
cp -L /lib64/ld-linux-x86-64.so.2 "$stage/opscope/lib/"
# Launchers: the carried loader and libraries first, then the machine's CUDA libraries.
for bin in $bins; do
  name=$(basename "$bin")
  {
    echo '#!/usr/bin/env bash'
    echo 'here=$(cd "$(dirname "$0")" && pwd)'
    echo "exec \"\$here/lib/ld-linux-x86-64.so.2\" --library-path \"\$here/lib:\${OPSCOPE_CUDA_LIBS:-}\" \"\$here/bin/$name\" \"\$@\""
  } > "$stage/opscope/$name"
  chmod +x "$stage/opscope/$name"
done
mkdir -p .gpu-bundle
grep -qx '/.gpu-bundle/' .git/info/exclude 2>/dev/null || echo '/.gpu-bundle/' >> .git/info/exclude
git rev-parse --short HEAD > .gpu-bundle/commit 2>/dev/null || true
tar -C "$stage" -cJf .gpu-bundle/opscope-gpu.tar.xz opscope
# The ONNX backend node suite (Debian's libonnx-testdata / python3-onnx): the GPU machine's onnx
# wheel has none.
node=/usr/lib/python3/dist-packages/onnx/backend/test/data/node
[ -d "$node" ] && tar -C "$(dirname "$node")" -cJf .gpu-bundle/onnx-node-tests.tar.xz node
ls -l .gpu-bundle/opscope-gpu.tar.xz
