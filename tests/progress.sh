#!/bin/sh
# tests/progress.sh DBTR CASE: the progress lines of app/progress.c, as a log (stderr not a
# terminal) writes them. DBTR_PROGRESS_SECONDS=0 puts a line at every report, so a tiny
# scan gives lines at all. CASE:
#   lines      recon, validate and phantom write lines of the documented form, and --quiet
#              writes nothing at all;
#   interrupt  a recon with --checkpoint ended by SIGINT says how to resume, and exits 130.
set -eu
dbtr=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*"; exit 1; }
"$dbtr" phantom -o scan.h5 --quiet
# A duration: "41 s", "2m 53s", "3h 05m". A part: percent, elapsed, and the time left once
# there is a rate to go by.
t='([0-9]+ s|[0-9]+m [0-9]{2}s|[0-9]+h [0-9]{2}m)'
part="[0-9]+%, $t(, about $t left)?"
case $2 in
lines)
  export DBTR_PROGRESS_SECONDS=0
  "$dbtr" recon scan.h5 -o r.tif --backend cpu --iterations 2 --subsets 3 2>err.txt
  grep -Eq "^dbtr recon: iteration 2/2: $part; all 2: $part\$" err.txt || fail "no recon progress line"
  grep -Eq "^dbtr recon: iteration 1/2: [0-9]+%, $t, about $t left; all 2: " err.txt || fail "no time left"
  bad=$(grep '^dbtr recon: iteration' err.txt | grep -Ecv "^dbtr recon: iteration [12]/2: $part; all 2: $part\$") || true
  [ "$bad" -eq 0 ] || fail "$bad recon progress lines of another form"
  grep -q '^  iteration   2/2  deviance' err.txt || fail "the line per iteration is gone"
  "$dbtr" validate scan.h5 --modes cpu-1-thread,cpu-float --iterations 2 >out.txt 2>err.txt
  grep -Eq "^dbtr validate: cpu-double reference \(2 of 4\): iteration 2/2: $part; all 2: $part\$" err.txt ||
    fail "no validate progress line"
  grep -Eq "^dbtr validate: cpu-1-thread \(3 of 4\): iteration 1/2: $part; all 2: $part\$" err.txt ||
    fail "no progress line of a path"
  "$dbtr" phantom -o p.h5 --truth t.tif 2>err.txt
  grep -Eq "^dbtr phantom: projecting the views: $part\$" err.txt || fail "no projection progress"
  grep -Eq "^dbtr phantom: voxelising the ground truth: $part\$" err.txt || fail "no voxelisation progress"
  # --quiet: nothing, on either stream.
  "$dbtr" recon scan.h5 -o q.tif --backend cpu --iterations 2 --subsets 3 --quiet >out.txt 2>err.txt
  "$dbtr" validate scan.h5 --modes cpu-1-thread --iterations 1 --quiet >/dev/null 2>>err.txt
  "$dbtr" phantom -o q.h5 --truth q_truth.tif --quiet >>out.txt 2>>err.txt
  [ ! -s err.txt ] && [ ! -s out.txt ] || { cat out.txt err.txt; fail "--quiet printed"; }
  echo "progress: lines of the documented form, none with --quiet"
  ;;
interrupt)
  # Enough iterations that the run is still going when the signal comes; it is stopped long
  # before it ends.
  "$dbtr" recon scan.h5 -o r.tif --backend cpu --iterations 100000 --checkpoint state.ckpt --quiet 2>err.txt &
  pid=$!
  i=0
  while [ ! -e state.ckpt ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
  [ -e state.ckpt ] || { kill $pid; fail "no checkpoint after 60 s"; }
  # A few more checkpoints, so the signal does not fall between a write and the message.
  sleep 0.5
  kill -INT $pid
  rc=0
  wait $pid || rc=$?
  [ "$rc" -eq 130 ] || fail "exit $rc after SIGINT, not 130"
  grep -q "^dbtr recon: interrupted; to go on, run the same command with --resume state.ckpt\$" err.txt ||
    { cat err.txt; fail "no resume hint"; }
  [ ! -e r.tif ] || fail "an interrupted run wrote its volume"
  echo "progress: an interrupted run says how to resume"
  ;;
*) fail "unknown case $2" ;;
esac
