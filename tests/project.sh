#!/bin/sh
# tests/project.sh DBTR: `dbtr project` through the CLI. A phantom's ground truth is
# forward-projected with the preset's geometry and with the same geometry read from a scan
# file, as line integrals and as Poisson counts; bad requests end with a message naming
# the flag or file, exit code 2 (usage) or 3 (input), and no output file.
set -eu
dbtr=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() {
  echo "FAIL: $*"
  exit 1
}
"$dbtr" phantom -o phantom.h5 --line-integrals --truth truth.tif --quiet

# The geometry read from a scan file is the preset's, and the writer stores no time stamps:
# the two files are the same bytes.
"$dbtr" project truth.tif --system tiny -o li.h5 --quiet
"$dbtr" project truth.tif --geometry phantom.h5 -o li_geom.h5 --quiet
cmp li.h5 li_geom.h5
"$dbtr" info li.h5 >info.txt
grep -q "9 views of 128 x 80 pixels (columns x rows), line integrals" info.txt || fail "li.h5: $(head -n 2 info.txt)"

# Counts: the same seed gives the same noise, another seed other noise.
"$dbtr" project truth.tif --system tiny --i0 10000 --seed 7 -o c7.h5 --quiet
"$dbtr" project truth.tif --system tiny --i0 10000 --seed 7 -o c7_again.h5 --quiet
"$dbtr" project truth.tif --system tiny --i0 10000 --seed 8 -o c8.h5 --quiet
cmp c7.h5 c7_again.h5
if cmp -s c7.h5 c8.h5; then fail "seeds 7 and 8 gave the same counts"; fi
"$dbtr" info c7.h5 >info.txt
grep -q "counts" info.txt && grep -q "i0 *scalar, 10000 .. 10000" info.txt || fail "c7.h5: $(head -n 4 info.txt)"

# expect CODE NEEDLE OUTPUT ARGS...: exit code CODE, NEEDLE in the message, no OUTPUT.
expect() {
  code=$1 needle=$2 out=$3
  shift 3
  rc=0
  "$dbtr" project "$@" -o "$out" 2>err.txt || rc=$?
  [ "$rc" -eq "$code" ] || fail "project $*: exit $rc, expected $code ($(cat err.txt))"
  grep -q -- "$needle" err.txt || fail "project $*: message lacks '$needle': $(cat err.txt)"
  [ ! -e "$out" ] || fail "project $*: $out was written"
}
expect 2 "exactly one of --system NAME and --geometry" both.h5 truth.tif --system tiny --geometry phantom.h5
expect 2 "exactly one of --system NAME and --geometry" neither.h5 truth.tif
expect 2 "--system: unknown preset 'nosuch'" preset.h5 truth.tif --system nosuch
expect 3 "missing.tif" volume.h5 missing.tif --system tiny
expect 3 "nofile.h5" geometry.h5 truth.tif --geometry nofile.h5
# A volume with a NaN or an infinity is refused at the input, naming the voxel, rather than
# projected into a scan of NaN line integrals that dbtr recon would refuse later.
/usr/bin/python3 - <<'PY' || fail "python3 with tifffile and numpy is needed to write the non-finite volumes"
import numpy as np, tifffile
for name, value in (("nan.tif", np.nan), ("inf.tif", np.inf)):
    v = np.zeros((4, 5, 6), np.float32)
    v[2, 3, 1] = value  # voxel (x, y, z) = (1, 3, 2)
    tifffile.imwrite(name, v, imagej=True, resolution=(1.0, 1.0), metadata={"spacing": 1.0, "unit": "mm"})
PY
expect 2 "nan.tif: voxel (1, 3, 2) is nan" nanscan.h5 nan.tif --system tiny
expect 2 "inf.tif: voxel (1, 3, 2) is inf" infscan.h5 inf.tif --system tiny
# A volume whose declared size exceeds the memory available is refused before it is read
# (a small compressed TIFF can declare gigabytes); DBTR_MEMORY_LIMIT stands in for a small
# machine: the tiny truth is 128 x 80 x 24 floats, 983040 bytes.
rc=0
DBTR_MEMORY_LIMIT=500000 "$dbtr" project truth.tif --system tiny -o big.h5 2>err.txt || rc=$?
[ "$rc" -eq 4 ] && grep -q "truth.tif: projecting its 128 x 80 x 24 voxels (float and double) into 9 views of 128 x 80 needs" err.txt || fail "memory limit: exit $rc ($(cat err.txt))"
[ ! -e big.h5 ] || fail "memory limit: big.h5 was written"
# An existing output is kept, not overwritten, without --force.
cp li.h5 kept.h5
rc=0
"$dbtr" project truth.tif --system tiny --i0 100 -o kept.h5 2>err.txt || rc=$?
[ "$rc" -eq 2 ] && grep -q "kept.h5 exists" err.txt || fail "existing output: exit $rc ($(cat err.txt))"
cmp li.h5 kept.h5
echo "project: preset and scan-file geometry agree bit for bit; counts follow the seed; 9 refusals clean"
