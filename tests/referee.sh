#!/bin/sh
# tests/referee.sh DBTR: `dbtr validate --referee` on the tiny phantom with the CPU paths,
# which every machine has: the referee runs (on the GPU where there is one, else the CPU),
# the second table and the closest-to-exact verdicts are printed, no line of stdout is
# wider than 100 columns (with and without --referee), the report and the volumes carry the
# referee, `--modes dd` is refused pointing to --referee, and vs_referee.svg is an output
# like the others: not replaced without --force.
set -eu
dbtr=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() {
  echo "FAIL: $*"
  exit 1
}
python=
for py in "${DBTR_PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$py" ] && "$py" -c 'import json' 2>/dev/null && { python=$py; break; }
done
[ -n "$python" ] || fail "no Python with json to check validate.json (set DBTR_PYTHON)"

"$dbtr" phantom -o tiny.h5 --quiet
"$dbtr" validate tiny.h5 --referee --modes cpu-float,cpu-double --iterations 2 --report R --save-diffs D \
  >out.txt 2>err.txt || fail "validate --referee exited $? ($(cat err.txt))"
grep -Eq '^against the referee \((cpu-dd|gpu:dd), ' out.txt || fail "no table against the referee"
grep -Eq '^iter +path +what +rel L2 +x best +max ulp +med ulp +>4 ulp +scale ulp$' out.txt ||
  fail "the referee table has no head"
# Rows: 2 iterations x 2 paths x 2 quantities in each table, and in the second the best
# answers of both precisions (2 iterations x 2 precisions x 2 quantities): 8 + 16.
[ "$(grep -Ec '^   [12] (cpu-float|cpu-double|best float|best double|) +(proj|vol) ' out.txt)" -eq 24 ] ||
  fail "expected 8 + 16 rows in the tables: $(cat out.txt)"
grep -Eq '^  closest to exact \(float\): cpu-float, [0-9.e+]+x the best float answer \(rel L2 [0-9.e+-]+\)$' out.txt ||
  fail "no float verdict: $(grep closest out.txt)"
grep -Eq '^  closest to exact \(double\): cpu-double, [0-9.e+]+x the best double answer \(rel L2 [0-9.e+-]+\)$' out.txt ||
  fail "no double verdict: $(grep closest out.txt)"
"$dbtr" validate tiny.h5 --modes cpu-1-thread,cpu-float,cpu-double --iterations 1 >plain.txt 2>/dev/null
for f in out.txt plain.txt; do
  wide=$(awk 'length($0) > 100 { print length($0) ": " $0 }' "$f")
  [ -z "$wide" ] || fail "$f has lines over 100 columns: $wide"
done
grep -Eq '^iter path +what +differ +max\|d\| +max ulp +med ulp +scale ulp +rel L2 +u16 +deviance$' plain.txt ||
  fail "the table's head: $(sed -n 3,4p plain.txt)"
if grep -q 'against the referee' plain.txt; then fail "a table against the referee without --referee"; fi

for f in R/validate.csv R/validate.json R/differing.svg R/max_diff.svg R/vs_referee.svg D/referee.tif; do
  [ -s "$f" ] || fail "$f missing"
done
grep -q '</svg>' R/vs_referee.svg && grep -q '>best float<' R/vs_referee.svg || fail "vs_referee.svg is not the plot"
# referee.tif holds float64: 128 x 80 x 24 voxels of 8 bytes (1966080), and a header of less
# than 64 KiB.
size=$(wc -c <D/referee.tif)
[ "$size" -gt 1966080 ] && [ "$size" -lt 2031616 ] || fail "referee.tif has $size bytes"
"$python" -m json.tool R/validate.json >/dev/null || fail "validate.json does not parse"
"$python" - <<'EOF' || fail "validate.json lacks the referee"
import json, sys
d = json.load(open("R/validate.json"))
keys = {"n", "rel_l2", "max_ulp", "median_ulp", "beyond_4ulp", "scale_ulp", "best", "best_units"}
ok = d["referee"]["backend"] in ("cpu-dd", "gpu:dd") and len(d["referee"]["best"]) == 2
ok = ok and set(d["referee"]["closest"]) == {"float", "double"}
for p in d["paths"]:
    ok = ok and len(p["iterations"]) == 2
    for it in p["iterations"]:
        vs = it["vs_referee"]
        ok = ok and set(vs) == {"projections", "volume"} and all(set(vs[q]) == keys for q in vs)
        ok = ok and vs["volume"]["best_units"] > 0
sys.exit(0 if ok else 1)
EOF
# 1 header + 2 iterations x 2 paths x 2 quantities, every row with the referee's 7 columns filled.
[ "$(grep -c ',,' R/validate.csv)" -eq 0 ] || fail "validate.csv has empty referee columns"

# dd is the referee, not a path.
rc=0
"$dbtr" validate tiny.h5 --modes cpu-float,dd --quiet >/dev/null 2>err.txt || rc=$?
[ "$rc" -eq 2 ] || fail "--modes dd exited $rc, not 2"
grep -q -- '--referee' err.txt || fail "the refusal does not name --referee: $(cat err.txt)"

# An existing vs_referee.svg is refused without --force, before any iteration, and left as it
# was; a run without --referee does not write it, so it does not mind it; --force replaces it.
mkdir R2
echo keep >R2/vs_referee.svg
rc=0
"$dbtr" validate tiny.h5 --referee --modes cpu-float --iterations 1 --report R2 >o2.txt 2>err.txt || rc=$?
[ "$rc" -eq 2 ] && grep -q 'vs_referee.svg exists; use --force' err.txt || fail "vs_referee.svg was not refused ($rc)"
[ "$(cat R2/vs_referee.svg)" = keep ] && [ ! -s o2.txt ] || fail "validate ran although it refused"
"$dbtr" validate tiny.h5 --modes cpu-float --iterations 1 --report R2 --quiet >/dev/null
[ "$(cat R2/vs_referee.svg)" = keep ] || fail "a run without --referee changed vs_referee.svg"
"$dbtr" validate tiny.h5 --referee --modes cpu-float --iterations 1 --report R2 --force --quiet >/dev/null
grep -q '</svg>' R2/vs_referee.svg || fail "--force did not replace vs_referee.svg"
# So is an existing referee.tif of --save-diffs: refused without --force and left as it was, no
# temporary file beside it; --force replaces it.
mkdir D2
echo keep >D2/referee.tif
rc=0
"$dbtr" validate tiny.h5 --referee --modes cpu-float --iterations 1 --save-diffs D2 >o3.txt 2>err.txt || rc=$?
[ "$rc" -eq 2 ] && grep -q 'referee.tif exists; use --force' err.txt || fail "referee.tif was not refused ($rc)"
[ "$(cat D2/referee.tif)" = keep ] && [ "$(ls -A D2)" = referee.tif ] || fail "referee.tif changed, or files were left"
"$dbtr" validate tiny.h5 --referee --modes cpu-float --iterations 1 --save-diffs D2 --force --quiet >/dev/null
[ "$(wc -c <D2/referee.tif)" -gt 1966080 ] || fail "--force did not replace referee.tif with the float64 volume"
echo "referee: tables, verdicts, report and volumes written; dd refused; outputs kept"
