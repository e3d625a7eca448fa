#!/bin/sh
# tests/project_checks.sh DBTR CASE: one refusal of `dbtr project` per CTest case
# (project.CASE), each on a volume written here: the exit code, the one line naming the
# volume and the cause, and no output left.
set -eu
dbtr=$1 case=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() {
  echo "FAIL: $case: $*"
  exit 1
}
# volume NAME EXPR: a float32 ImageJ TIFF of 6 x 5 x 4 voxels of 1 mm, zeros, then EXPR (numpy,
# on v indexed [z, y, x]).
volume() {
  /usr/bin/python3 - "$1" "$2" <<'PY' || fail "python3 with tifffile and numpy is needed to write the volumes"
import sys
import numpy as np, tifffile
v = np.zeros((4, 5, 6), np.float32)
exec(sys.argv[2])
tifffile.imwrite(sys.argv[1], v, imagej=True, resolution=(1.0, 1.0), metadata={"spacing": 1.0, "unit": "mm"})
PY
}
# expect CODE NEEDLE ARGS...: `dbtr project ARGS -o out.h5` exits CODE, says NEEDLE, writes nothing.
expect() {
  code=$1 needle=$2
  shift 2
  rc=0
  "$dbtr" project "$@" -o out.h5 2>err.txt || rc=$?
  [ "$rc" -eq "$code" ] || fail "project $*: exit $rc, expected $code ($(cat err.txt))"
  grep -q -- "$needle" err.txt || fail "project $*: message lacks '$needle': $(cat err.txt)"
  [ "$(wc -l <err.txt)" -eq 1 ] || fail "project $*: more than one line: $(cat err.txt)"
  [ "$(ls -A)" = "$(ls -A | grep -v '^out.h5$')" ] || fail "project $*: out.h5 was written"
  ls -A | grep -q '\.tmp$' && fail "project $*: a temporary was left: $(ls -A)"
  return 0
}
# The tiny preset's detector is at z = 0: a grid whose bottom is on it, centred in x.
on_detector="--origin -2.5,0,0.5"

case $case in
huge_values)
  # Issue 23, item 4. Finite voxels of 3e38 (float32 holds up to 3.4e38), 4 slices deep: the
  # line integrals reach about 4 x 3e38 x 1 mm, beyond float32, which the scan stores; they
  # were written as inf. Refused, naming the volume, the first such ray and the largest voxel.
  volume huge.tif "v[:, 2, 3] = 3e38"
  expect 2 "huge.tif: the line integral of view .*beyond what float32 holds.*largest value is 3e+38 at voxel (3, 2, 0)" \
    huge.tif --system tiny $on_detector
  ;;
counts_overflow)
  # Negative voxels of -1000/mm make i0 exp(-l) overflow: counts of inf.
  volume neg.tif "v[:] = -1000"
  expect 2 "neg.tif: the line integral of view .*gives counts i0 exp(-l) = 1000 x exp(" neg.tif --system tiny --i0 1000 \
    $on_detector
  ;;
memory_peak)
  # Issue 23, item 7. The reader checks the float volume alone (16 x 64 x 64 x 4 bytes = 256 KiB,
  # within the 1 MB limit); the command then holds it in double too, the projector's tables and
  # the line integrals (about 0.8 MB for the tiny preset's 9 x 80 x 128 pixels in double), over
  # 1 MB in all. It ran to the end (on a real machine: killed part way); now it is refused up front.
  /usr/bin/python3 - <<'PY' || fail "python3 with tifffile and numpy is needed to write the volume"
import numpy as np, tifffile
tifffile.imwrite("peak.tif", np.zeros((16, 64, 64), np.float32), imagej=True, resolution=(1.0, 1.0),
                 metadata={"spacing": 1.0, "unit": "mm"})
PY
  DBTR_MEMORY_LIMIT=1000000 expect 4 "peak.tif: projecting its 64 x 64 x 16 voxels (float and double) into 9 views of 128 x 80 needs .* GiB of memory" \
    peak.tif --system tiny --origin -32,0,0.5
  ;;
origin_hint)
  # Issue 23, poor messages. A TIFF from another tool has no dbtr_origin: its origin reads as
  # 0, the volume hangs half a voxel below the detector, and every layout was refused without
  # saying what to give. The refusal names an --origin that works (6 x 5 x 4 voxels of 1 mm:
  # x from -2.5, y from 0.5, z from 0.5), and that --origin does.
  volume plain.tif "v[:] = 0.01"
  expect 2 "plain.tif: the volume bottom (z = -0.5 mm) lies below the detector.*--origin -2.5,0.5,0.5 places the volume as the presets do" \
    plain.tif --system tiny
  "$dbtr" project plain.tif --system tiny --origin -2.5,0.5,0.5 -o placed.h5 --quiet || fail "the --origin given did not work"
  ;;
*) fail "no such case" ;;
esac
echo "project.$case: refused as expected"
