#!/bin/sh
# tests/resume.sh DBTR BACKEND: a run stopped after 2 iterations and resumed from its
# checkpoint gives the same bits as an uninterrupted run of 4 (the TIFF files are compared
# byte for byte). BACKEND is cpu or gpu; gpu exits 77 (skip) only where no GPU can be used
# (dbtr's exit 7), and fails when the GPU is there but the probe run fails.
set -eu
dbtr=$1
backend=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
"$dbtr" phantom -o scan.h5 --quiet
if [ "$backend" = gpu ]; then
  set -- --backend gpu --mode cpu-match
  backend_args="$*"
  rc=0
  "$dbtr" recon scan.h5 -o probe.tif --iterations 1 --quiet "$@" 2>probe.txt || rc=$?
  [ "$rc" -eq 7 ] && { echo "SKIP: no GPU"; exit 77; }
  [ "$rc" -eq 0 ] || { echo "FAIL: the GPU probe exited $rc"; cat probe.txt; exit 1; }
else
  set -- --backend cpu
  backend_args="$*"
fi
"$dbtr" recon scan.h5 -o whole.tif --iterations 4 --subsets 3 --quiet "$@"
"$dbtr" recon scan.h5 -o half.tif --iterations 2 --subsets 3 --checkpoint state.ckpt --checkpoint-every 2 --quiet "$@"
"$dbtr" recon scan.h5 -o resumed.tif --iterations 4 --subsets 3 --resume state.ckpt --quiet "$@"
cmp whole.tif resumed.tif
# The interrupted half is not the whole: the comparison above compares real work.
if cmp -s whole.tif half.tif; then
  echo "FAIL: 2 and 4 iterations gave the same volume"
  exit 1
fi
# A checkpoint of another problem is refused with a message naming it.
if "$dbtr" recon scan.h5 -o other.tif --iterations 4 --subsets 2 --resume state.ckpt --quiet "$@" 2>err.txt; then
  echo "FAIL: a checkpoint with 3 subsets resumed a 2-subset run"
  exit 1
fi
grep -q "state.ckpt" err.txt
[ ! -e other.tif ]
# Nor is a checkpoint of another scan of the same size (another seed), or of the same scan
# on another grid (--voxel, --origin; tiny's grid is 1 x 1 x 2 mm from (-63.5, 0.5, 1)): each
# would resume into a plausible wrong volume.
"$dbtr" phantom -o seed2.h5 --seed 2 --quiet
refused() { # why, then the recon arguments
  why=$1
  shift
  if "$dbtr" recon "$@" -o other.tif --iterations 4 --subsets 3 --resume state.ckpt --quiet $backend_args 2>err.txt; then
    echo "FAIL: a checkpoint resumed $why"
    exit 1
  fi
  grep -q "state.ckpt" err.txt || { echo "FAIL: $why: message"; cat err.txt; exit 1; }
  [ ! -e other.tif ]
}
refused "another seed's scan" seed2.h5
refused "another voxel size" scan.h5 --voxel 1,1,1.9
refused "another origin" scan.h5 --origin -63.5,0.5,1.5
echo "resume ($backend): bitwise identical to the uninterrupted run"
