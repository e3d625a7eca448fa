#!/bin/sh
# tests/first_hour.sh DBTR CASE README: what a new user meets in the first hour (issue 24), on
# the tiny preset. CUDA_VISIBLE_DEVICES= hides any GPU, so the no-GPU answers are checked on
# every machine. CASE:
#   readme         README.md's worked example for a machine without a GPU, run as written
#                  (the view line: the files it names exist), and no "//" in a path it prints;
#   up_front       validate refuses what cannot run before any work: a GPU mode in --modes or
#                  --expect-identical (exit 7), a path --modes does not run (exit 2);
#   no_empty_dirs  a validate that fails, or is interrupted, leaves no empty --report or
#                  --save-diffs folder it made;
#   interrupt      SIGINT without --checkpoint: exit 130 and one line saying what was
#                  interrupted and that nothing was written (recon, validate, phantom);
#   info_volume    dbtr info VOLUME.tif: grid, spacing, origin, value range;
#   wrote          recon --checkpoint names the checkpoint it wrote, as it names the volume.
set -eu
dbtr=$1
readme=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*"; exit 1; }
CUDA_VISIBLE_DEVICES=
export CUDA_VISIBLE_DEVICES
[ "$2" = readme ] || "$dbtr" phantom -o scan.h5 --quiet

# Runs "$@" in the background, sends SIGINT once it has run $wait seconds, and checks exit
# 130 and the one line in err.txt.
interrupted() {
  want=$1 wait=$2
  shift 2
  "$@" 2>err.txt &
  pid=$!
  sleep "$wait"
  kill -INT $pid
  rc=0
  wait $pid || rc=$?
  [ "$rc" -eq 130 ] || fail "$*: exit $rc after SIGINT, not 130"
  grep -qx "$want" err.txt || { cat err.txt; fail "$*: no line '$want'"; }
}

case $2 in
readme)
  # The two blocks after "A worked example": the example, then the commands without a GPU.
  awk '/^## A worked example/ {on = 1} on && /^```sh$/ {n++; inblock = 1; next} inblock && /^```$/ {inblock = 0;
       if (n == 2) exit} inblock {print}' "$readme" >example.sh
  [ "$(grep -c '^\$dbtr validate' example.sh)" -eq 1 ] || fail "README: no CPU-only validate line"
  # The view line opens a window: its files must be there for it.
  grep '^\$dbtr view ' example.sh >view.txt || fail "README: no view line"
  sed -e 's|^dbtr=build/app/dbtr$|dbtr="$DBTR"|' -e '/^\$dbtr view /d' example.sh >run.sh
  grep -q '^dbtr="$DBTR"$' run.sh || fail "README: the example does not set dbtr=build/app/dbtr"
  DBTR=$dbtr sh -e run.sh >out.txt 2>err.txt || { cat err.txt; fail "README's example failed without a GPU"; }
  for f in $(sed -e 's/^\$dbtr view //' -e 's/ --.*//' view.txt); do [ -s "$f" ] || fail "README: view of missing $f"; done
  ! grep -q '//' err.txt || fail "a doubled slash: $(grep '//' err.txt)"
  grep -q '^dbtr validate: wrote diffs/cpu-float.tif ' err.txt || fail "no wrote line for diffs/cpu-float.tif"
  echo "README: the example without a GPU runs as written"
  ;;
up_front)
  # Each refusal comes before the references run: no progress of any stage, no folder made.
  export DBTR_PROGRESS_SECONDS=0
  check() {
    want=$1
    shift
    rc=0
    "$dbtr" validate scan.h5 --iterations 3 --report rep/ --save-diffs diffs/ "$@" >out.txt 2>err.txt || rc=$?
    [ "$rc" -eq "$want" ] || { cat err.txt; fail "validate $*: exit $rc, not $want"; }
    [ "$(wc -l <err.txt)" -eq 1 ] || { cat err.txt; fail "validate $*: more than the one line"; }
    [ ! -e rep ] && [ ! -e diffs ] || fail "validate $*: a folder was made before the refusal"
  }
  check 7 --modes fast
  grep -q "^dbtr validate: --modes: fast is a GPU mode and no GPU can be used" err.txt || fail "message: $(cat err.txt)"
  check 7 --modes cpu-float,ieee
  check 7 --expect-identical cpu-match,double-match
  grep -q "^dbtr validate: --expect-identical: cpu-match is a GPU mode and no GPU can be used" err.txt ||
    fail "message: $(cat err.txt)"
  check 2 --modes cpu-float --expect-identical cpu-1-thread
  grep -q "cpu-1-thread is not among the paths to run (--modes cpu-float)" err.txt || fail "message: $(cat err.txt)"
  check 2 --expect-identical cpu-fast
  echo "validate: what cannot run is refused before the work"
  ;;
no_empty_dirs)
  # 1 MB cannot hold the tiny problem's working set (9 MB: the CPU reference's backend), so the
  # run fails where it opens, after making its folders.
  rc=0
  env -u TMPDIR DBTR_MEMORY_LIMIT=1000000 "$dbtr" validate scan.h5 --report rep --save-diffs diffs --quiet 2>err.txt ||
    rc=$?
  [ "$rc" -eq 4 ] || { cat err.txt; fail "the memory limit: exit $rc, not 4"; }
  [ ! -e rep ] && [ ! -e diffs ] || fail "a failed validate left its folders"
  # A folder that was there before stays.
  mkdir rep
  rc=0
  env -u TMPDIR DBTR_MEMORY_LIMIT=1000000 "$dbtr" validate scan.h5 --report rep --quiet 2>err.txt || rc=$?
  [ "$rc" -eq 4 ] && [ -d rep ] || fail "a folder the user made was removed"
  rmdir rep
  interrupted "dbtr validate: interrupted; nothing was written" 1 \
    "$dbtr" validate scan.h5 --iterations 10000 --report rep --save-diffs diffs --quiet
  [ ! -e rep ] && [ ! -e diffs ] || fail "an interrupted validate left its folders"
  echo "validate: no empty folders left behind"
  ;;
interrupt)
  interrupted "dbtr recon: interrupted; nothing was written" 1 \
    "$dbtr" recon scan.h5 -o r.tif --backend cpu --iterations 100000 --quiet
  [ ! -e r.tif ] || fail "an interrupted recon wrote its volume"
  # 16 x 16 rays a pixel (the most): 256 times the projecting, some 5 s of CPU, stopped after 1 s.
  interrupted "dbtr phantom: interrupted; nothing was written" 1 \
    "$dbtr" phantom -o p.h5 --supersample 16 --quiet
  [ ! -e p.h5 ] || fail "an interrupted phantom wrote its scan"
  echo "interrupt: one line, exit 130"
  ;;
info_volume)
  "$dbtr" phantom -o p.h5 --truth truth.tif --quiet
  "$dbtr" info truth.tif >out.txt
  # The tiny preset's grid (phantoms/systems.c): 128 x 80 x 24 voxels of 1 x 1 x 2 mm, voxel 0
  # at (-63.5, 0.5, 1) mm (centred along the chest wall, on the detector).
  grep -q '^truth.tif: TIFF volume$' out.txt || fail "$(cat out.txt)"
  grep -q '^  grid         128 x 80 x 24 voxels' out.txt || fail "grid: $(cat out.txt)"
  grep -q '^  spacing      1 x 1 x 2 mm$' out.txt || fail "spacing: $(cat out.txt)"
  grep -q '^  origin       (-63.5, 0.5, 1) mm' out.txt || fail "origin: $(cat out.txt)"
  # The truth is 0 in air and a positive attenuation (1/mm) in tissue.
  grep -Eq '^  values       min 0  mean 0\.0[0-9]+  max 0\.[0-9]+; [0-9]+ voxels' out.txt || fail "values: $(cat out.txt)"
  rc=0
  "$dbtr" info missing.tif 2>err.txt || rc=$?
  [ "$rc" -eq 3 ] && grep -q "missing.tif" err.txt || fail "a missing volume: exit $rc"
  echo "info: a volume's grid, spacing, origin and values"
  ;;
wrote)
  "$dbtr" recon scan.h5 -o r.tif --iterations 2 --checkpoint state.ckpt 2>err.txt
  grep -q '^dbtr recon: wrote state.ckpt (checkpoint: the state after iteration 2, for --resume)$' err.txt ||
    { cat err.txt; fail "the checkpoint is not named"; }
  grep -q '^dbtr recon: wrote r.tif ' err.txt || fail "the volume is not named"
  echo "recon: every file it wrote named"
  ;;
*) fail "unknown case $2" ;;
esac
