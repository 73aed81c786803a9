#!/bin/sh
# packaging_runtime_libraries: the binaries the package installs must start on a Debian 12 machine
# without CUDA: no CUDA library may be needed at load time (the toolkit's libraries at
# /usr/local/cuda are not Debian packages, so dpkg-shlibdeps finds no package for them and the
# binaries would not start without them). CUDA's runtime is linked statically and dlopens the
# driver; cuBLAS/cuDNN/CUPTI would have to be loaded with dlopen when a GPU is found.
# Also no RPATH/RUNPATH into a build tree or /usr/local.
# Usage: check-runtime-libraries.sh BINARY...
set -u
fail=0
for bin in "$@"; do
  dyn=$(readelf -d "$bin") || { echo "FAIL: readelf -d $bin"; fail=1; continue; }
  needed=$(echo "$dyn" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "$(basename "$bin") needs: $needed"
  for lib in $needed; do
    case $lib in
      libcuda.so* | libcudart* | libcublas* | libcudnn* | libcupti* | libnvrtc* | libcufft* | \
      libcurand* | libcusparse* | libcusolver* | libnvToolsExt* | libnvJitLink* | libnccl*)
        echo "FAIL: $(basename "$bin") needs $lib at load time (not a Debian package; dlopen it instead)"; fail=1 ;;
    esac
  done
  rpath=$(echo "$dyn" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p')
  case $rpath in
    "") ;;
    */usr/local/* | *build* | *CMakeFiles*) echo "FAIL: $(basename "$bin") has RPATH $rpath"; fail=1 ;;
    *) echo "note: $(basename "$bin") RPATH $rpath" ;;
  esac
done
[ $fail -eq 0 ] && echo PASS || echo FAIL
exit $fail
