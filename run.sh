#!/bin/sh
# run.sh: dbtr's set-up in one command on a fresh Debian machine (README.md).
#
#   ./run.sh demo    install what is missing, build, run `dbtr demo` (a phantom scan,
#                    reconstructed and written to ./dbtr-demo)
#   ./run.sh test    install what is missing, build with warnings as errors, run the tests
#                    (labels cpu, gpu and viewer; gpu tests skip where no GPU is found)
#   ./run.sh asan    the CPU tests again under AddressSanitizer and UndefinedBehaviorSanitizer
#
# Builds go to build/ (build-asan/ for asan). CUDA is used when nvcc is found
# (/usr/local/cuda/bin is searched too); DBTR_CMAKE_ARGS adds CMake options.
set -eu
cd "$(dirname "$0")"
what=${1:-demo}
jobs=$(nproc 2>/dev/null || echo 2)

deps() {
  pkgs="build-essential cmake pkg-config libhdf5-dev libtiff-dev zlib1g-dev libnifti2-dev libjansson-dev libglfw3-dev libgl-dev libpng-dev
        libgl1-mesa-dri xvfb xauth xdotool libmpfr-dev python3 python3-h5py python3-numpy python3-tifffile
        python3-nibabel libgdcm-dev python3-pydicom
        python3-pytest python3-venv python3-setuptools python3-wheel"
  # ImageJ 1.x (with a Java runtime) only for the tests: test_tiff_readers opens volumes in it;
  # Dask, the Python package's optional extra, for the test of docs/scale-out.md's recipe.
  if [ "$what" = test ]; then pkgs="$pkgs imagej python3-dask python3-distributed"; fi
  missing=""
  for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  [ -z "$missing" ] && return 0
  echo "run.sh: installing:$missing"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd=sudo
  # shellcheck disable=SC2086 # the package list is meant to split
  $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq $missing >/dev/null
}

configure() { # build-dir, extra args...
  dir=$1
  shift
  [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null 2>&1 && PATH=/usr/local/cuda/bin:$PATH
  # shellcheck disable=SC2086 # DBTR_CMAKE_ARGS is a list of options
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" ${DBTR_CMAKE_ARGS:-} >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; exit 1; }
  grep -E "dbtr: CUDA" "$dir.configure.log" || true
  cmake --build "$dir" -j "$jobs"
}

deps
case $what in
demo)
  configure build
  ./build/app/dbtr demo
  ;;
test)
  configure build -DDBTR_WERROR=ON -DDBTR_WITH_DICOM=ON -DDBTR_WITH_NIFTI=ON
  # -j2: the viewer tests start their own X servers; the rest is CPU bound.
  ctest --test-dir build -LE slow --output-on-failure -j 2
  ;;
asan)
  configure build-asan -DCMAKE_BUILD_TYPE=Debug -DDBTR_WERROR=ON -DDBTR_WITH_CUDA=OFF -DDBTR_WITH_DICOM=ON -DDBTR_WITH_NIFTI=ON -DDBTR_SANITIZE=address,undefined
  ctest --test-dir build-asan -L cpu -LE slow --output-on-failure -j 2
  ;;
*)
  echo "usage: ./run.sh [demo|test|asan]" >&2
  exit 2
  ;;
esac
