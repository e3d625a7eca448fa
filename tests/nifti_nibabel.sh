#!/bin/sh
# tests/nifti_nibabel.sh DBTR CHECK_PY: nibabel opens the NIfTI volumes of the dbtr command.
# `dbtr phantom --truth` and `dbtr recon -o` (float32, uint16 and float64) write each volume
# as .nii or .nii.gz and again as .tif from the same inputs (the CPU reference is
# deterministic); tests/nifti_check.py compares each pair: shape, voxel size, affine, units,
# data bit for bit. Fails, never skips, without a python3 with nibabel and tifffile: run.sh
# installs python3-nibabel and python3-tifffile, so CI always runs it.
set -eu
dbtr=$1
check=$2
py=""
for cand in "${DBTR_PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$cand" ] || continue
  if "$cand" -c 'import nibabel, numpy, tifffile' >/dev/null 2>&1; then
    py=$cand
    break
  fi
done
if [ -z "$py" ]; then
  echo "FAIL: no python3 with nibabel and tifffile (Debian: python3-nibabel python3-tifffile; ./run.sh installs them)"
  exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
"$dbtr" phantom -o scan.h5 --truth truth.nii --quiet
"$dbtr" phantom -o scan.h5 --truth truth.tif --force --quiet
# The grid of the ImageJ case (200 x 120 x 25), with sizes and an origin that float32,
# NIfTI-1's type for them, does not hold exactly.
set -- scan.h5 --iterations 1 --backend cpu --quiet --dims 200,120,25 --voxel 0.6,0.6,1.9 --origin -59.7,0.35,1.05
"$dbtr" recon "$@" -o recon.nii.gz
"$dbtr" recon "$@" -o recon.tif
"$dbtr" recon "$@" -o recon16.nii --format uint16 --u16-scale 1000
"$dbtr" recon "$@" -o recon16.tif --format uint16 --u16-scale 1000
# float64 of the referee, dd rounded to double (about 1 s a run on 2 cores).
"$dbtr" recon "$@" -o recon64.nii.gz --format float64 --precision dd
"$dbtr" recon "$@" -o recon64.tif --format float64 --precision dd
"$py" "$check" truth.nii truth.tif recon.nii.gz recon.tif recon16.nii recon16.tif recon64.nii.gz recon64.tif
# Another ending is refused with a message naming the file and the endings accepted.
rc=0
"$dbtr" recon "$@" -o recon.nrrd 2>err.txt || rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: -o recon.nrrd exited $rc, not 2 (invalid argument)"; cat err.txt; exit 1; }
grep -q "recon.nrrd.*\.nii\.gz" err.txt || { echo "FAIL: the message does not name the file and .nii.gz"; cat err.txt; exit 1; }
[ ! -e recon.nrrd ]
echo "nibabel: dbtr's .nii and .nii.gz match the TIFFs of the same runs"
