#!/bin/sh
# kernels/ptx_audit.sh: what each floating-point mode (docs/modes.md) asks of the GPU, read
# from the PTX nvcc generates for kernels/backend_mode.cu.
#
# Usage: kernels/ptx_audit.sh [--markdown] [--modes "M ..."] [--totals] [--check] [--keep DIR]
#   --markdown  print a Markdown table (as in docs/modes.md) instead of aligned text
#   --modes L   only these modes (e.g. "fast ieee cpu-match double double-match");
#               default: every mode kernels/CMakeLists.txt builds, variants included
#   --totals    one row per mode (all kernels summed) instead of one per kernel
#   --check     also test the promises docs/modes.md makes; exit 1 if one is broken
#   --keep DIR  leave the .ptx files in DIR
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc),
#              DBTR_PTX_ARCH (default sm_90, the architecture the build targets).
#
# The mode names, their order (which is DBTR_MODE_ID) and their nvcc flags are read from
# kernels/CMakeLists.txt, and the order is checked against kernels/modes.h, so this audit
# compiles what the build compiles. PTX is the input of ptxas, not the machine code: see
# docs/modes.md for what ptxas may still do to it.
set -eu

cd "$(dirname "$0")/.."
fmt=text
check=0
keep=
only=
totals=0
while [ $# -gt 0 ]; do
  case $1 in
    --markdown) fmt=markdown ;;
    --check) check=1 ;;
    --totals) totals=1 ;;
    --modes)
      [ $# -ge 2 ] || { echo "ptx_audit: --modes needs a list" >&2; exit 2; }
      only=$2
      shift ;;
    --keep)
      [ $# -ge 2 ] || { echo "ptx_audit: --keep needs a directory" >&2; exit 2; }
      keep=$2
      shift ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ptx_audit: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

nvcc=${NVCC:-}
if [ -z "$nvcc" ]; then
  nvcc=$(command -v nvcc || true)
  [ -n "$nvcc" ] || nvcc=/usr/local/cuda/bin/nvcc
fi
[ -x "$nvcc" ] || { echo "ptx_audit: no nvcc at '$nvcc' (set NVCC)" >&2; exit 2; }
arch=${DBTR_PTX_ARCH:-sm_90}

cml=kernels/CMakeLists.txt
work=$(mktemp -d "${TMPDIR:-/tmp}/dbtr_ptx.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
# The build numbers the modes by their position in dbtr_mode_names; so does this script.
# shellcheck disable=SC2016 # the CMake text ${id}, not a shell expansion
grep -q 'DBTR_MODE_ID=${id}' "$cml" || {
  echo "ptx_audit: $cml no longer sets DBTR_MODE_ID=\${id} by position; update this script" >&2
  exit 2
}
# Every set() of the file, joined across lines and with earlier ${variables} expanded, then
# one line per mode: ID NAME FLAGS...
awk '
function expand(v,   out, name) {
  out = ""
  while (match(v, /\$\{[A-Za-z0-9_]+\}/)) {
    name = substr(v, RSTART + 2, RLENGTH - 3)
    if (!(name in var)) { print "ptx_audit: '"$cml"': ${" name "} is not set before use" > "/dev/stderr"; exit 2 }
    out = out substr(v, 1, RSTART - 1) var[name]; v = substr(v, RSTART + RLENGTH)
  }
  return out v
}
{ line = $0; sub(/#.*/, "", line) }
line ~ /^[ \t]*set\(/ { stmt = ""; open = 1 }
open { stmt = stmt " " line }
open && line ~ /\)[ \t]*$/ {
  open = 0; sub(/^[ \t]*set\(/, "", stmt); sub(/\)[ \t]*$/, "", stmt); gsub(/[ \t]+/, " ", stmt)
  sub(/^ /, "", stmt); sub(/ $/, "", stmt)
  name = stmt; sub(/ .*/, "", name); val = stmt; sub(/^[^ ]* ?/, "", val)
  var[name] = expand(val)
}
END {
  n = split(var["dbtr_mode_names"], m, " ")
  if (n == 0) { print "ptx_audit: '"$cml"': no dbtr_mode_names" > "/dev/stderr"; exit 2 }
  for (i = 1; i <= n; i++) {
    f = "dbtr_mode_flags_" m[i]
    if (!(f in var)) { print "ptx_audit: '"$cml"': no " f > "/dev/stderr"; exit 2 }
    print i - 1, m[i], var[f]
  }
}' "$cml" >"$work/all.txt"
# kernels/modes.h must give the same names in the same order (MODE_NAME of each branch).
in_cml=$(cut -d' ' -f2 "$work/all.txt" | tr '\n' ' ')
in_h=$(sed -n 's/^#define MODE_NAME \([a-z_]*\)$/\1/p' kernels/modes.h | tr '\n' ' ')
if [ "$in_h" != "$in_cml" ]; then
  echo "ptx_audit: modes in $cml ($in_cml) differ from kernels/modes.h ($in_h)" >&2
  exit 2
fi
# The modes asked for, in the build's order; names may be written with - or _.
if [ -n "$only" ]; then
  want=" $(echo "$only" | tr ',-' ' _') "
  for w in $want; do
    grep -q "^[0-9]* $w " "$work/all.txt" || { echo "ptx_audit: no mode '$w' in $cml" >&2; exit 2; }
  done
  while read -r id m flags; do
    case $want in *" $m "*) echo "$id $m $flags" ;; esac
  done <"$work/all.txt" >"$work/modes.txt"
else
  cp "$work/all.txt" "$work/modes.txt"
fi

while read -r id m flags; do
  # -O3 -DNDEBUG is CMake's Release, the default build type; -std=c++17 is CUDA_STANDARD.
  # $flags is split on purpose: it is a list of options.
  # shellcheck disable=SC2086
  "$nvcc" -ptx -arch="$arch" -O3 -DNDEBUG -std=c++17 -D_POSIX_C_SOURCE=200809L -DDBTR_MODE_ID="$id" -I. \
    $flags kernels/backend_mode.cu -o "$work/$(printf %02d "$id").$m.ptx" </dev/null
done <"$work/modes.txt"
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  cp "$work"/*.ptx "$keep"/
fi

# One awk program classifies every instruction and prints the table (and the checks).
# Columns, each a count of PTX instructions in the kernel:
#   div.full  div.full.f32: the 2-ulp division of -prec-div=false
#   div.apx   div.approx(.ftz).f32: __fdividef
#   div.rn    div.rn(.ftz).f32 / div.rn.f64: correctly rounded division
#   fma       fma.rn.f32 / fma.rn.f64: fused multiply-add, one rounding
#   fma.r?    fma with a directed rounding (rm, rp, rz): libm internals, not contraction
#   rn        mul.rn, add.rn, sub.rn: explicitly rounded, never contracted by ptxas
#   plain     mul, add, sub without a rounding modifier: ptxas may contract them into FMA
#   ex2, lg2  ex2.approx, lg2.approx: the hardware's approximate 2^x and log2
#   sqrt.rn, sqrt.apx  sqrt.rn (f32 and f64), sqrt.approx and rsqrt.approx
#   rcp       rcp in any form
#   ftz       any instruction with .ftz (subnormal inputs and results flushed to zero)
awk -v fmt="$fmt" -v check="$check" -v totals="$totals" -v all="$([ -z "$only" ] && echo 1 || echo 0)" \
  -v modes_file="$work/modes.txt" '
BEGIN {
  ncol = split("div.full div.apx div.rn.f32 div.rn.f64 fma.f32 fma.f64 fma.r? rn.f32 rn.f64 " \
               "plain.f32 plain.f64 ex2 lg2 sqrt.rn sqrt.apx rcp ftz", col, " ")
  while ((getline line < modes_file) > 0) { split(line, w, " "); mname[w[1] + 0] = w[2] }
  nrow = 0
  # Launch order: set-up (ray records, then the separable tables), then those of each iteration.
  n = split("k_rays k_sep_rays k_sep_cross k_sep_slots k_sep_check k_sep_groups k_forward k_reduce " \
            "k_gather_sep k_gather", kn, " ")
  for (i = 1; i <= n; i++) order[kn[i]] = i
}
FNR == 1 {
  # Files are named ID.MODE.ptx (ID in two digits) and so come in ID order.
  f = FILENAME; sub(/.*\//, "", f); split(f, p, "."); mode = mname[p[1] + 0]; gsub(/_/, "-", mode)
  modes[++nmode] = mode; kern = ""
}
/^[ \t]*(\.visible[ \t]+|\.weak[ \t]+)?\.(entry|func)[ \t]/ {
  name = $0; sub(/\(.*/, "", name); sub(/.*[ \t]/, "", name)
  # The kernel name inside the mangled name: k_ and lower case, up to the "E"
  # that closes the name.
  kern = name
  if (match(name, /k_[a-z_]+/)) kern = substr(name, RSTART, RLENGTH)
  if (index($0, ".func")) kern = "func " name
  if (totals) kern = "all"
  key = mode SUBSEP kern
  if (!(key in seen)) { seen[key] = 1; rows[++nrow] = key }
  next
}
kern != "" {
  s = $0; sub(/^[ \t]+/, "", s); sub(/^@!?%?[A-Za-z0-9_]+[ \t]+/, "", s)
  if (s !~ /^[a-z]/) next
  op = s; sub(/[ \t;].*/, "", op)
  n = split(op, part, "."); base = part[1]; type = part[n]
  fl = (type == "f32" || type == "f64")
  key = mode SUBSEP kern
  if (op ~ /\.ftz/) add(key, "ftz")
  if (base == "div" && fl) {
    if (op ~ /\.full/) add(key, "div.full")
    else if (op ~ /\.approx/) add(key, "div.apx")
    else if (op ~ /\.rn/) add(key, "div.rn." type)
  } else if (base == "fma" && fl) {
    if (op ~ /\.rn/) add(key, "fma." type); else add(key, "fma.r?")
  } else if ((base == "mul" || base == "add" || base == "sub") && fl) {
    if (op ~ /\.r[nmpz](\.|$)/) add(key, "rn." type); else add(key, "plain." type)
  } else if (base == "ex2" && op ~ /\.approx/) add(key, "ex2")
  else if (base == "lg2" && op ~ /\.approx/) add(key, "lg2")
  else if (base == "sqrt" && op ~ /\.rn/) add(key, "sqrt.rn")
  else if ((base == "sqrt" || base == "rsqrt") && op ~ /\.approx/) add(key, "sqrt.apx")
  else if (base == "rcp") add(key, "rcp")
  # For --check: every approximate and every fused instruction, whatever its name.
  if (op ~ /\.approx/) add(key, "any.approx")
  if (base == "fma" || (base == "mad" && fl)) add(key, "any.fma")
}
function add(key, c) { cnt[key, c]++; tot[substr(key, 1, index(key, SUBSEP) - 1), c]++ }
function cell(v) { return v == "" ? 0 : v }
END {
  # Kernels in launch order within each mode, then any other entry or device function.
  for (i = 1; i <= nrow; i++) {
    split(rows[i], kk, SUBSEP)
    rank[i] = (kk[2] in order) ? order[kk[2]] : 99
  }
  for (i = 2; i <= nrow; i++)
    for (j = i; j > 1; j--) {
      split(rows[j - 1], a, SUBSEP); split(rows[j], b, SUBSEP)
      if (a[1] == b[1] && rank[j - 1] > rank[j]) {
        t = rows[j]; rows[j] = rows[j - 1]; rows[j - 1] = t; t = rank[j]; rank[j] = rank[j - 1]; rank[j - 1] = t
      }
    }
  if (fmt == "markdown") {
    h = "| mode | kernel |"; sep = "| --- | --- |"
    for (c = 1; c <= ncol; c++) { h = h " " col[c] " |"; sep = sep " ---: |" }
    print h; print sep
    for (i = 1; i <= nrow; i++) {
      split(rows[i], kk, SUBSEP); line = "| " kk[1] " | " kk[2] " |"
      for (c = 1; c <= ncol; c++) line = line " " cell(cnt[rows[i], col[c]]) " |"
      print line
    }
  } else {
    wm = 4; wk = 6
    for (i = 1; i <= nrow; i++) {
      split(rows[i], kk, SUBSEP)
      if (length(kk[1]) > wm) wm = length(kk[1])
      if (length(kk[2]) > wk) wk = length(kk[2])
    }
    printf "%-*s %-*s", wm, "mode", wk, "kernel"
    for (c = 1; c <= ncol; c++) printf " %*s", (length(col[c]) < 4 ? 4 : length(col[c])), col[c]
    printf "\n"
    for (i = 1; i <= nrow; i++) {
      split(rows[i], kk, SUBSEP); printf "%-*s %-*s", wm, kk[1], wk, kk[2]
      for (c = 1; c <= ncol; c++) printf " %*d", (length(col[c]) < 4 ? 4 : length(col[c])), cell(cnt[rows[i], col[c]])
      printf "\n"
    }
  }
  if (!check) exit 0
  # The promises of docs/modes.md, over all kernels of a mode. The single-change variants
  # must each show their one change: that the audit sees it is what makes the clean
  # counts of cpu-match and double-match mean something.
  bad = 0
  for (i = 1; i <= nmode; i++) have[modes[i]] = 1
  n = split("fast ieee cpu-match double double-match", user, " ")
  for (i = 1; i <= n && all; i++)
    if (!(user[i] in have)) { printf "FAIL %s: not among the modes of kernels/CMakeLists.txt\n", user[i]; bad++ }
  for (i = 1; i <= nmode; i++) {
    m = modes[i]
    if (m == "cpu-match" || m == "double-match") {
      bad += none(m, "any.fma", "no fused multiply-add (fma, mad)")
      bad += none(m, "any.approx", "no approximate instruction")
      bad += none(m, "ftz", "no flush to zero")
      bad += none(m, "plain.f32", "no f32 mul/add/sub that ptxas could contract")
      bad += none(m, "plain.f64", "no f64 mul/add/sub that ptxas could contract")
    } else if (m == "fast") {
      bad += some(m, "div.apx", "ex2", "approximate division or exp")
      bad += some(m, "ftz", "", "flush to zero")
    } else if (m == "ieee" || m == "double") {
      bad += none(m, "div.apx", "no approximate division")
      bad += none(m, "div.full", "no 2-ulp division")
      bad += none(m, "sqrt.apx", "no approximate sqrt")
    } else if (m ~ /-fma$/) bad += some(m, "fma.f32", "fma.f64", "the variant contracts into fma")
    else if (m ~ /-approx-div$/) bad += some(m, "div.apx", "div.full", "the variant divides approximately")
    else if (m ~ /-fast-exp$/) bad += some(m, "ex2", "", "the variant uses ex2.approx")
    else if (m ~ /-libm-exp$/) bad += some(m, "any.fma", "any.approx", "the variant has libm fma or approx")
    else if (m ~ /-ftz$/) bad += some(m, "ftz", "", "the variant flushes to zero")
  }
  exit bad ? 1 : 0
}
function none(m, c, what,   v) {
  v = cell(tot[m, c])
  printf "%s %s: %s (%d found)\n", (v == 0 ? "ok  " : "FAIL"), m, what, v
  return v != 0
}
function some(m, c1, c2, what,   v, found) {
  v = cell(tot[m, c1]); found = c1 " " v
  if (c2 != "") { v += cell(tot[m, c2]); found = found ", " c2 " " cell(tot[m, c2]) }
  printf "%s %s: %s (%s)\n", (v > 0 ? "ok  " : "FAIL"), m, what, found
  return v == 0
}
' "$work"/*.ptx
