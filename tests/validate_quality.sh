#!/bin/sh
# tests/validate_quality.sh DBTR: `dbtr validate --quality` on the tiny breast phantom, on the
# CPU paths CI has (docs/validation.md, "Quality"): quality_changes.csv has a row per path,
# iteration and object; cpu-1-thread, bitwise its reference, changes nothing by exactly 0;
# cpu-float's measures are those `dbtr quality` takes of its saved volume, and its changes are
# the CSV's two values' changes; the verdicts' numbers are the CSV's largest; and a scan without
# /phantom is refused before any work, naming the file.
set -eu
dbtr=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
python=
for py in "${DBTR_PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$py" ] && "$py" -c 'import json, csv' 2>/dev/null && { python=$py; break; }
done
[ -n "$python" ] || { echo "FAIL: no Python with json and csv to check the files (set DBTR_PYTHON)"; exit 1; }

"$dbtr" phantom -o scan.h5 --truth truth.tif --quiet
"$dbtr" validate scan.h5 --modes cpu-1-thread,cpu-float --iterations 3 --quality --report rep --save-diffs diffs \
  --quiet >out.txt
# cpu-float's final volume as validate measured it (--save-diffs writes the path's own float
# state), measured again by `dbtr quality`.
"$dbtr" quality diffs/cpu-float.tif --scan scan.h5 --report q --quiet >/dev/null
"$python" - <<'PY'
import csv, json, math, sys

def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)

rows = list(csv.DictReader(open("rep/quality_changes.csv")))
report = json.load(open("rep/validate.json"))
q = json.load(open("q/quality.json"))
out = open("out.txt").read()
n_obj = report["quality"]["objects"]
objects = [o["index"] for o in q["objects"]]  # every test object of /phantom, as dbtr quality lists them
if n_obj != len(objects):
    fail(f"validate measured {n_obj} objects, dbtr quality lists {len(objects)}")
# A row per path x iteration x object: 2 paths, 3 iterations.
keys = [(r["path"], int(r["iteration"]), int(r["object"])) for r in rows]
want = [(p, it, o) for p in ("cpu-1-thread", "cpu-float") for it in (1, 2, 3) for o in objects]
if keys != want:
    fail(f"quality_changes.csv rows: {len(keys)}, expected {len(want)} in path, iteration, object order")

num = lambda s: math.nan if s == "" else float(s)
measures = (("cnr", "dcnr_percent", True), ("fwhm", "dfwhm_mm", False), ("contrast", "dcontrast_percent", True))

# cpu-1-thread computes cpu-float's bits: every change that can be measured is exactly 0, and
# what cannot be is so in both volumes alike.
for r in rows:
    if r["path"] != "cpu-1-thread":
        continue
    for v, d, _ in measures:
        if r[v] != r[v + "_ref"]:
            fail(f"cpu-1-thread object {r['object']}: {v} {r[v]} against {r[v + '_ref']}")
        if r[v] != "" and math.isfinite(num(r[v])) and num(r[v + "_ref"]) != 0 and num(r[d]) != 0.0:
            fail(f"cpu-1-thread object {r['object']}: {d} = {r[d]}, not 0")
if "cpu-1-thread bitwise identical volumes at every iteration" not in " ".join(out.split()):
    fail("the cpu-1-thread verdict does not say its volumes are bitwise identical")

# cpu-float after the last iteration: its values are dbtr quality's of its saved volume, bit
# for bit (both print 17 digits), and each change is the change of the two values the row holds.
by_obj = {o["index"]: o for o in q["objects"]}
for r in rows:
    if r["path"] != "cpu-float":
        continue
    if int(r["iteration"]) == 3:
        o = by_obj[int(r["object"])]
        for v, key in (("cnr", "cnr"), ("fwhm", "asf_fwhm_mm"), ("contrast", "contrast")):
            mine, theirs = num(r[v]), o.get(key)
            if not (theirs is None and not math.isfinite(mine) or theirs == mine):
                fail(f"cpu-float object {r['object']}: {v} {r[v]}, dbtr quality says {theirs}")
    for v, d, rel in measures:
        a, b = num(r[v]), num(r[v + "_ref"])
        if not (math.isfinite(a) and math.isfinite(b)) or (rel and b == 0):
            if r[d] != "":
                fail(f"cpu-float object {r['object']}: {d} = {r[d]} where it cannot be measured")
            continue
        expect = 100.0 * (a - b) / abs(b) if rel else a - b
        if num(r[d]) != expect:
            fail(f"cpu-float object {r['object']} iteration {r['iteration']}: {d} {r[d]}, expected {expect!r}")

# The verdicts: each path's largest |change| after the last iteration and over all, and what
# is not measurable, are the CSV's; the printed line shows them to 3 digits.
paths = {p["name"]: p for p in report["paths"]}
flat = " ".join(out.split())
for name in ("cpu-1-thread", "cpu-float"):
    qv = paths[name]["quality"]
    for v, d, _ in measures:
        key = {"cnr": "cnr_percent", "fwhm": "fwhm_mm", "contrast": "contrast_percent"}[v]
        for span, its in (("last", (3,)), ("all", (1, 2, 3))):
            sel = [r for r in rows if r["path"] == name and int(r["iteration"]) in its]
            ok = [r for r in sel if r[d] != ""]
            best = None
            for r in ok:  # the first of the largest magnitude, in iteration then object order
                if best is None or abs(num(r[d])) > abs(num(best[d])):
                    best = r
            e = qv[span][key]
            if e["not_measurable"] != len(sel) - len(ok):
                fail(f"{name} {span} {key}: not_measurable {e['not_measurable']}, the CSV has {len(sel) - len(ok)}")
            if best is None:
                continue
            if e["change"] != num(best[d]) or e["object"] != int(best["object"]) or e["iteration"] != int(best["iteration"]):
                fail(f"{name} {span} {key}: {e}, the CSV's largest is {best[d]} of object {best['object']}")
    if name == "cpu-float":
        last = qv["last"]
        words = ("changes no object's CNR by more than %.3g%% (object %d, " % (abs(last["cnr_percent"]["change"]),
                 last["cnr_percent"]["object"]),
                 "no ASF FWHM by more than %.3g mm (object %d, " % (abs(last["fwhm_mm"]["change"]), last["fwhm_mm"]["object"]),
                 "after 3 iterations")
        for w in words:
            if w not in flat or w not in qv["verdict"]:
                fail(f"the cpu-float verdict lacks '{w}': {qv['verdict']}")
        nm = qv["last"]["fwhm_mm"]["not_measurable"]
        if nm and f"the FWHM of {nm} of {n_obj} objects" not in qv["verdict"]:
            fail(f"the cpu-float verdict does not count the {nm} objects whose FWHM cannot be measured")
PY

# A scan without /phantom (projected from the truth: no objects recorded) is refused before any
# work, with exit 2 and the file named, and leaves no report folder behind.
"$dbtr" project truth.tif --system tiny --i0 1000 -o plain.h5 --quiet
rc=0
"$dbtr" validate plain.h5 --modes cpu-1-thread --iterations 1 --quality --report none >/dev/null 2>err.txt || rc=$?
[ "$rc" -eq 2 ] && grep -q "plain.h5: no /phantom objects" err.txt || { echo "FAIL: no /phantom: exit $rc: $(cat err.txt)"; exit 1; }
grep -q "reference" err.txt && { echo "FAIL: the run started before refusing"; exit 1; }
[ ! -e none ] || { echo "FAIL: a refused run left its report folder"; exit 1; }
# Regions by hand take the place of /phantom, and a bad regions file is named.
printf '{"regions": [{"name": "lesion", "center": [0, 40, 24], "half": [5, 5, 4], "contrast": 0.04}]}' >r.json
"$dbtr" validate plain.h5 --modes cpu-1-thread --iterations 1 --quality-regions r.json --report reg --quiet >reg.txt
[ "$(wc -l <reg/quality_changes.csv)" -eq 2 ] || { echo "FAIL: one region, one iteration: $(cat reg/quality_changes.csv)"; exit 1; }
grep -q "1 object of the regions given" reg.txt || { echo "FAIL: the regions are not named: $(cat reg.txt)"; exit 1; }
printf '{"regions": []}' >bad.json
rc=0
"$dbtr" validate plain.h5 --modes cpu-1-thread --quality-regions bad.json --quiet >/dev/null 2>err.txt || rc=$?
[ "$rc" -ne 0 ] && grep -q "bad.json" err.txt || { echo "FAIL: a bad regions file: exit $rc: $(cat err.txt)"; exit 1; }
echo ok
