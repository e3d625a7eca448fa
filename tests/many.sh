#!/bin/sh
# tests/many.sh DBTR CASE [BACKEND]: `dbtr recon` of many scans (docs/scale-out.md), one case a
# CTest entry (tests/many.cmake). BACKEND is cpu (default) or gpu; gpu exits 77 (skip) only
# where no GPU can be used (dbtr's exit 7).
#   bits     every output is byte for byte the single run's of its scan (several scans, a folder)
#   resume   a second run skips what the log records as complete; an output without a record,
#            or made with other options, is not taken for done, and is replaced only with --force
#   bad      a damaged scan stops only itself: the others are written, the run exits 8, the
#            failure is said on its line, in the summary and in the record
#   shard    --shard K/N for K = 1..N: disjoint shares that cover the scans, each output as a
#            run of all would write it
set -eu
dbtr=$1
case_=$2
backend=${3:-cpu}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() {
  echo "FAIL: $*"
  exit 1
}
set -- --iterations 2 --subsets 3 --backend "$backend" --mode cpu-match
if [ "$backend" = gpu ]; then
  "$dbtr" phantom --system tiny -o probe.h5 --quiet
  rc=0
  "$dbtr" recon probe.h5 -o probe.tif --iterations 1 --quiet "$@" 2>probe.txt || rc=$?
  [ "$rc" -eq 7 ] && { echo "SKIP: no GPU"; exit 77; }
  [ "$rc" -eq 0 ] || { cat probe.txt; fail "the GPU probe exited $rc"; }
fi
# Four scans of the tiny system: a, b and c (two phantoms, three seeds) of one geometry, so a
# worker re-arms its session from one to the next with other data; d is b with every source 1
# mm further along x, another geometry, so a worker opens a new session for it.
mkdir in
"$dbtr" phantom --system tiny --phantom breast --seed 1 -o in/a.h5 --quiet
"$dbtr" phantom --system tiny --phantom breast --seed 2 -o in/b.h5 --quiet
"$dbtr" phantom --system tiny --phantom acr --seed 3 -o in/c.h5 --quiet
"${DBTR_PYTHON:-/usr/bin/python3}" - <<'PY' || fail "no h5py to make in/d.h5 (run.sh installs python3-h5py)"
import shutil
import h5py
shutil.copy("in/b.h5", "in/d.h5")
with h5py.File("in/d.h5", "r+") as f:
    f["geometry/source"][:, 0] = f["geometry/source"][:, 0] + 1.0
PY
single() { # STEM OPTIONS...: the single run's volume of in/STEM.h5, single/STEM.tif
  stem=$1
  shift
  mkdir -p single
  "$dbtr" recon "in/$stem.h5" -o "single/$stem.tif" --quiet --force "$@"
}

case $case_ in
bits)
  "$dbtr" recon in -o out/ --quiet "$@" || fail "the run of a folder exited $?"
  touch taken
  "$dbtr" recon in/a.h5 in/d.h5 -o taken --quiet "$@" 2>err.txt && fail "-o taken, a file, took two scans"
  grep -q "taken" err.txt || fail "the message does not name -o taken"
  "$dbtr" recon in/d.h5 in/a.h5 -o out2 --quiet "$@" || fail "the run of two files exited $?"
  for s in a b c d; do
    single "$s" "$@"
    cmp "single/$s.tif" "out/$s.tif" || fail "out/$s.tif is not the single run's volume"
  done
  cmp single/a.tif out2/a.tif && cmp single/d.tif out2/d.tif || fail "the two files' run differs from single runs"
  [ "$(wc -l <out/dbtr-recon.jsonl)" -eq 4 ] || fail "the log does not hold one record a scan"
  grep -c '"status":"ok"' out/dbtr-recon.jsonl | grep -qx 4 || fail "not every record is ok"
  ;;
resume)
  "$dbtr" recon in -o out/ --quiet "$@"
  touch -d '2001-01-01' out/a.tif          # as if another program rewrote it: no longer the recorded file
  rm out/b.tif                             # as if lost
  "$dbtr" recon in -o out/ "$@" 2>err.txt && fail "out/a.tif, changed, was taken without --force"
  grep -q "out/a.tif exists" err.txt || fail "the refusal of out/a.tif is not said"
  grep -q "1 written, 2 complete already, 1 failed" err.txt || { cat err.txt; fail "the summary is not as expected"; }
  [ -e out/b.tif ] || fail "the lost out/b.tif was not made again"
  "$dbtr" recon in -o out/ --quiet --force "$@" || fail "--force exited $?"
  single a "$@"
  cmp single/a.tif out/a.tif || fail "out/a.tif made again is not the single run's"
  # Other options: nothing is complete for them, and nothing is replaced without --force.
  "$dbtr" recon in -o out/ --quiet --iterations 3 --subsets 3 --backend "$backend" --mode cpu-match 2>err.txt &&
    fail "outputs of 2 iterations were taken for a run of 3"
  grep -q "4 failed" err.txt || true
  # A log line cut short by a killed run is passed over, the others still count.
  printf '{"scan":"in/a.h5","outp' >>out/dbtr-recon.jsonl
  "$dbtr" recon in -o out/ "$@" 2>err.txt || fail "a cut log line stopped the run"
  grep -q "0 written, 4 complete already" err.txt || { cat err.txt; fail "the cut line changed what is complete"; }
  ;;
bad)
  head -c 2000 in/b.h5 >in/bad.h5
  rc=0
  "$dbtr" recon in -o out/ "$@" 2>err.txt || rc=$?
  [ "$rc" -eq 8 ] || { cat err.txt; fail "a run with a damaged scan exited $rc, not 8"; }
  grep -q "in/bad.h5: " err.txt || fail "the damaged scan's failure is not said on its line"
  grep -q "failed: in/bad.h5" err.txt || fail "the summary does not name the damaged scan"
  for s in a b c d; do [ -e "out/$s.tif" ] || fail "out/$s.tif was not written beside the damaged scan"; done
  [ ! -e out/bad.tif ] || fail "the damaged scan left an output"
  grep '"scan":"in/bad.h5"' out/dbtr-recon.jsonl | grep -q '"status":"failed"' || fail "the failure is not recorded"
  ls -a out | grep -q '\.tmp$' && fail "a temporary was left in out/"
  ;;
shard)
  for k in 1 2 3; do "$dbtr" recon in -o "s$k/" --shard "$k/3" --quiet "$@"; done
  for s in a b c d; do
    c=0
    for k in 1 2 3; do
      if [ -e "s$k/$s.tif" ]; then
        c=$((c + 1))
        cp "s$k/$s.tif" "all_$s.tif"
      fi
    done
    [ "$c" -eq 1 ] || fail "$s.tif was made by $c shards, not 1"
    single "$s" "$@"
    cmp "single/$s.tif" "all_$s.tif" || fail "the shard's $s.tif is not the single run's"
  done
  # The sorted list a b c d, every third from the K-th: shard 1 has a and d.
  [ -e s1/a.tif ] && [ -e s1/d.tif ] && [ -e s2/b.tif ] && [ -e s3/c.tif ] || fail "the shares are not every N-th scan"
  "$dbtr" recon in -o s4/ --shard 4/3 "$@" 2>err.txt && fail "--shard 4/3 was taken"
  grep -q -- "--shard 4/3" err.txt || fail "the message does not name --shard"
  ;;
*)
  fail "unknown case $case_"
  ;;
esac
echo "ok $case_"
