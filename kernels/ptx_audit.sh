#!/bin/sh
# kernels/ptx_audit.sh: what each floating-point mode (docs/modes.md) asks of the GPU, read
# from the PTX nvcc generates for kernels/mode_kernels.cu, the kernels each row's object holds.
#
# Usage: kernels/ptx_audit.sh [--markdown] [--modes "M ..."] [--totals] [--check] [--keep DIR]
#   --markdown  print a Markdown table (as in docs/modes.md) instead of aligned text
#   --modes L   only these modes (e.g. "fast ieee cpu-match double double-match");
#               default: every row of recon/modes.def, variants included
#   --totals    one row per mode (all kernels summed) instead of one per kernel
#   --check     also test the promises docs/modes.md makes; exit 1 if one is broken
#   --keep DIR  leave the .ptx files in DIR
#   --rows      print the rows of recon/modes.def as this script reads them; compile nothing
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc),
#              DBTR_PTX_ARCH (default sm_90, the architecture the build targets).
#
# The modes, their order, their columns and their nvcc flags are read from recon/modes.def,
# the table kernels/CMakeLists.txt builds from, and each row is compiled as the build
# compiles it (the columns as DBTR_ROW_* definitions, then the flags), so this audit sees
# what the build compiles. The promises checked are derived from the columns. PTX is the
# input of ptxas, not the machine code: see docs/modes.md for what ptxas may still do to it.
set -eu

cd "$(dirname "$0")/.."
fmt=text
check=0
keep=
only=
totals=0
rows=0
while [ $# -gt 0 ]; do
  case $1 in
    --markdown) fmt=markdown ;;
    --check) check=1 ;;
    --totals) totals=1 ;;
    --rows) rows=1 ;;
    --modes)
      [ $# -ge 2 ] || { echo "ptx_audit: --modes needs a list" >&2; exit 2; }
      only=$2
      shift ;;
    --keep)
      [ $# -ge 2 ] || { echo "ptx_audit: --keep needs a directory" >&2; exit 2; }
      keep=$2
      shift ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ptx_audit: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

def=recon/modes.def
work=$(mktemp -d "${TMPDIR:-/tmp}/dbtr_ptx.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
# One line per row of the table, in its order: INDEX ID NAME KIND PREC ARITH DIV SQRT EXP
# GATHER FLAGS... (the variants column is not needed here). A row is DBTR_MODE(...) or
# DBTR_VARIANT(...) on one line, its fields free of commas.
awk -v def="$def" '
/^DBTR_(MODE|VARIANT)\(/ {
  kind = $0 ~ /^DBTR_MODE\(/ ? "mode" : "variant"
  row = $0; sub(/^DBTR_[A-Z]+\(/, "", row); sub(/\)[ \t]*$/, "", row); gsub(/"/, "", row)
  n = split(row, f, ",")
  if (n != 11) { print "ptx_audit: " def ": a row of " n " columns, not 11: " $0 > "/dev/stderr"; exit 2 }
  for (i = 1; i <= n; i++) gsub(/^[ \t]+|[ \t]+$/, "", f[i])
  print rows++, f[1], f[3], kind, f[4], f[5], f[6], f[7], f[8], f[9], f[10]
}
END { if (!rows) { print "ptx_audit: " def ": no rows" > "/dev/stderr"; exit 2 } }' "$def" >"$work/all.txt"
# The modes asked for, in the table's order; names may be written with - and + or with _.
if [ -n "$only" ]; then
  want=" $(echo "$only" | tr ',+-' ' __') "
  for w in $want; do
    grep -q "^[0-9]* $w " "$work/all.txt" || { echo "ptx_audit: no mode '$w' in $def" >&2; exit 2; }
  done
  while read -r idx id rest; do
    case $want in *" $id "*) echo "$idx $id $rest" ;; esac
  done <"$work/all.txt" >"$work/modes.txt"
else
  cp "$work/all.txt" "$work/modes.txt"
fi
if [ $rows = 1 ]; then
  awk -v fmt="$fmt" '
  BEGIN { n = split("mode kind prec arith div sqrt exp gather", h, " ") }
  {
    flags = $11
    for (i = 12; i <= NF; i++) flags = flags " " $i
    if (fmt == "markdown") {
      if (NR == 1) print "| mode | kind | prec | arith | div | sqrt | exp | gather | nvcc flags |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
      printf "| `%s` | %s | %s | %s | %s | %s | %s | %s | `%s` |\n", $3, $4, $5, $6, $7, $8, $9, $10, flags
    } else {
      if (NR == 1) printf "%-22s %-8s %-7s %-6s %-7s %-5s %-7s %-9s %s\n", h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], "nvcc flags"
      printf "%-22s %-8s %-7s %-6s %-7s %-5s %-7s %-9s %s\n", $3, $4, $5, $6, $7, $8, $9, $10, flags
    }
  }' "$work/modes.txt"
  exit 0
fi

nvcc=${NVCC:-}
if [ -z "$nvcc" ]; then
  nvcc=$(command -v nvcc || true)
  [ -n "$nvcc" ] || nvcc=/usr/local/cuda/bin/nvcc
fi
[ -x "$nvcc" ] || { echo "ptx_audit: no nvcc at '$nvcc' (set NVCC)" >&2; exit 2; }
arch=${DBTR_PTX_ARCH:-sm_90}


# shellcheck disable=SC2034 # name and kind are read to reach the columns after them
while read -r idx id name kind prec arith div sqrt exp gather flags; do
  # -O3 -DNDEBUG is CMake's Release, the default build type; -std=c++17 is CUDA_STANDARD.
  # $flags is split on purpose: it is a list of options.
  # shellcheck disable=SC2086
  "$nvcc" -ptx -arch="$arch" -O3 -DNDEBUG -std=c++17 -D_POSIX_C_SOURCE=200809L -I. \
    -DDBTR_ROW_ID="$id" -DDBTR_ROW_PREC="$prec" -DDBTR_ROW_ARITH="$arith" -DDBTR_ROW_DIV="$div" \
    -DDBTR_ROW_SQRT="$sqrt" -DDBTR_ROW_EXP="$exp" -DDBTR_ROW_GATHER="$gather" $flags kernels/mode_kernels.cu \
    -o "$work/$(printf %02d "$idx").$id.ptx" </dev/null
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
awk -v fmt="$fmt" -v check="$check" -v totals="$totals" -v modes_file="$work/modes.txt" '
BEGIN {
  ncol = split("div.full div.apx div.rn.f32 div.rn.f64 fma.f32 fma.f64 fma.r? rn.f32 rn.f64 " \
               "plain.f32 plain.f64 ex2 lg2 sqrt.rn sqrt.apx rcp ftz", col, " ")
  # The rows, by index: the name users write, and the columns the checks derive from.
  while ((getline line < modes_file) > 0) {
    n = split(line, w, " "); mname[w[1] + 0] = w[3]
    prec[w[3]] = w[5]; arith[w[3]] = w[6]; div[w[3]] = w[7]; sqrt_[w[3]] = w[8]; exp_[w[3]] = w[9]
    for (k = 11; k <= n; k++) flags[w[3]] = flags[w[3]] " " w[k]
  }
  nrow = 0
  # Launch order: set-up (ray records, then the separable tables), then those of each iteration.
  nk = split("k_rays k_sep_rays k_sep_cross k_sep_slots k_sep_check k_sep_groups k_sep_bands k_forward " \
             "k_forward_sep k_reduce k_back_terms k_gather_sep k_gather", kn, " ")
  for (i = 1; i <= nk; i++) order[kn[i]] = i
}
FNR == 1 {
  # Files are named ID.MODE.ptx (ID in two digits) and so come in ID order.
  f = FILENAME; sub(/.*\//, "", f); split(f, p, "."); mode = mname[p[1] + 0]
  modes[++nmode] = mode; kern = ""
}
/^[ \t]*(\.visible[ \t]+|\.weak[ \t]+)?\.(entry|func)[ \t]/ {
  # The return value of a function comes before its name, in parentheses of its own.
  name = $0; sub(/\.func[ \t]+\([^)]*\)/, ".func", name); sub(/\(.*/, "", name); sub(/.*[ \t]/, "", name)
  # The kernel name inside the mangled name: k_ and lower case, up to the "E"
  # that closes the name; of a device function, the lower case before its "E".
  kern = name
  if (match(name, /k_[a-z_]+/)) kern = substr(name, RSTART, RLENGTH)
  if (index($0, ".func")) {
    if (match(name, /[a-z_]+E/)) name = substr(name, RSTART, RLENGTH - 1)
    kern = "func " name
  }
  if (kern in order) present[mode, kern] = 1
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
  # The promises of docs/modes.md, over all kernels of a mode, derived from its row: what
  # each column and flag rules out, and what each must show. That every variant shows its
  # one change is what makes the clean counts of cpu-match and double-match mean something.
  bad = 0
  for (i = 1; i <= nmode; i++) bad += promises(modes[i])
  exit bad ? 1 : 0
}
function promises(m,   bad, f, j, missing, div_exact) {
  f = flags[m] " "
  missing = ""
  for (j = 1; j <= nk; j++) if (!((m, kn[j]) in present)) missing = missing " " kn[j]
  printf "%s %s: every kernel audited%s\n", (missing == "" ? "ok  " : "FAIL"), m, (missing == "" ? "" : " (missing" missing ")")
  bad = missing != ""
  # Products, sums and differences.
  if (arith[m] == "rn" || arith[m] == "dd") {
    bad += none(m, "plain.f32", "no f32 mul/add/sub that ptxas could contract")
    bad += none(m, "plain.f64", "no f64 mul/add/sub that ptxas could contract")
    if (arith[m] == "dd") bad += some(m, "fma.f64", "", "fma.rn.f64 for the exact products of double-double")
    else if (exp_[m] != "libm") bad += none(m, "any.fma", "no fused multiply-add (fma, mad)")
  } else if (f ~ / -fmad=true /) bad += some(m, "fma.f32", "fma.f64", "operators contracted into fma")
  # Division and sqrt: the operator is correctly rounded under -prec-div=true and
  # -prec-sqrt=true, and always in double.
  # The division and sqrt of double-double are built of correctly rounded double operations.
  div_exact = div[m] == "rn" || div[m] == "dd" || (div[m] == "op" && (prec[m] == "double" || f ~ / -prec-div=true /))
  if (div_exact) {
    bad += none(m, "div.apx", "no approximate division")
    bad += none(m, "div.full", "no 2-ulp division")
  } else bad += some(m, "div.apx", "div.full", "approximate division")
  # The one sqrt, the path length, is in the geometry, which is double in the float modes too
  # (recon/proj_impl.h), where sqrt is always correctly rounded.
  bad += none(m, "sqrt.apx", "no approximate sqrt")
  # exp: the libm of CUDA is built on fma and ex2.approx, and flushes inside (docs/modes.md, ieee).
  if (exp_[m] == "fast") bad += some(m, "ex2", "", "ex2.approx for __expf")
  else if (exp_[m] == "libm") bad += some(m, "any.fma", "any.approx", "libm fma or approx")
  else if (div_exact) bad += none(m, "any.approx", "no approximate instruction")
  if (f ~ / -ftz=true /) bad += some(m, "ftz", "", "flush to zero")
  else if (exp_[m] != "libm") bad += none(m, "ftz", "no flush to zero")
  return bad
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
