#!/bin/sh
# tests/validate.sh DBTR: `dbtr validate` on the tiny phantom. Without a GPU it compares
# what the CPU has: 1 thread against N must be bitwise identical, float against double must
# differ (and say where first); the report files are written and well formed; and
# --expect-identical turns a difference into exit code 6.
set -eu
dbtr=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
"$dbtr" phantom -o scan.h5 --quiet
"$dbtr" validate scan.h5 --modes cpu-1-thread,cpu-float --iterations 2 --report rep --save-diffs diffs \
  --expect-identical cpu-1-thread >out.txt
grep -q "cpu-1-thread .*bitwise identical to cpu-float" out.txt
grep -q "cpu-float .*differs: first at iteration 1" out.txt
for f in rep/validate.csv rep/validate.json rep/differing.svg rep/max_diff.svg diffs/cpu-float.tif diffs/cpu-float-diff.tif \
  diffs/cpu-double.tif; do
  [ -s "$f" ] || { echo "FAIL: $f missing"; exit 1; }
done
# 1 header + 2 iterations x 2 paths x 2 quantities
[ "$(wc -l <rep/validate.csv)" -eq 9 ] || { echo "FAIL: validate.csv has $(wc -l <rep/validate.csv) lines"; exit 1; }
grep -q '</svg>' rep/differing.svg
# validate.json must parse and say the same: a check that cannot run is a failure, not a
# pass, so a machine without Python fails here (DBTR_PYTHON names another interpreter).
python=
for py in "${DBTR_PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$py" ] && "$py" -c 'import json' 2>/dev/null && { python=$py; break; }
done
[ -n "$python" ] || { echo "FAIL: no Python with json to check validate.json (set DBTR_PYTHON)"; exit 1; }
"$python" -c 'import json,sys; d=json.load(open("rep/validate.json")); p={x["name"]:x for x in d["paths"]}; sys.exit(0 if p["cpu-1-thread"]["identical"] and not p["cpu-float"]["identical"] and len(p["cpu-float"]["iterations"])==2 else 1)' ||
  { echo "FAIL: validate.json is malformed or says otherwise"; exit 1; }
# --lockstep: every path starts each iteration from the reference's state. Iteration 1
# starts from the same volume either way, so its rows must equal the free-running ones;
# later iterations isolate one iteration's difference, so they need not.
"$dbtr" validate scan.h5 --modes cpu-1-thread,cpu-float --iterations 2 --lockstep --report lock \
  --expect-identical cpu-1-thread >lock.txt
grep -q "verdicts (2 iterations, lockstep)" lock.txt
grep -q '"lockstep": true' lock/validate.json
[ "$(grep '^1,' rep/validate.csv)" = "$(grep '^1,' lock/validate.csv)" ] || { echo "FAIL: lockstep iteration 1 differs"; exit 1; }
# A recording that does not fit in memory spills to an unnamed file beside the report and
# gives the same table and files. On tiny (245760 voxels, 92160 pixels) the comparison's
# largest stage, the double CPU reference's backend, takes 9.6 MB and the recording of 2
# iterations 9.1 MB, so a limit of 15 MB spills it; one of 8 MB leaves no room for the
# comparison, which is refused up front with exit 4.
env -u TMPDIR DBTR_MEMORY_LIMIT=15000000 "$dbtr" validate scan.h5 --modes cpu-1-thread,cpu-float --iterations 2 \
  --report spill >spill.txt 2>spill_err.txt
grep -q "unnamed temporary file in spill" spill_err.txt || { echo "FAIL: the recording did not spill"; exit 1; }
"$dbtr" validate scan.h5 --modes cpu-1-thread,cpu-float --iterations 2 --report kept >kept.txt 2>/dev/null
# Everything but the closing times (which no two runs share).
[ "$(sed '/^time:/,$d; s/spill/X/g' spill.txt)" = "$(sed '/^time:/,$d; s/kept/X/g' kept.txt)" ] || { echo "FAIL: a spilled run printed otherwise"; exit 1; }
grep -q "^time: .* s in all" kept.txt || { echo "FAIL: no time line"; exit 1; }
for f in validate.csv validate.json differing.svg max_diff.svg; do
  cmp -s "spill/$f" "kept/$f" || { echo "FAIL: spill/$f differs"; exit 1; }
done
[ "$(ls -A spill | wc -l)" -eq 4 ] || { echo "FAIL: the spill left something behind: $(ls -A spill)"; exit 1; }
rc=0
DBTR_MEMORY_LIMIT=8000000 "$dbtr" validate scan.h5 --modes cpu-1-thread,cpu-float --quiet >/dev/null 2>err.txt || rc=$?
[ "$rc" -eq 4 ] && grep -q "GiB are available" err.txt || { echo "FAIL: no room was not refused (exit $rc)"; exit 1; }
set +e
"$dbtr" validate scan.h5 --modes cpu-float --iterations 1 --expect-identical cpu-float --quiet >/dev/null 2>err.txt
rc=$?
set -e
[ "$rc" -eq 6 ] || { echo "FAIL: --expect-identical of a differing path exited $rc, not 6"; exit 1; }
grep -q "cpu-float differs" err.txt
echo "validate: CPU paths compared, report written, exit codes right"
