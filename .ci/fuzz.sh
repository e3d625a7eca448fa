#!/bin/sh
# .ci/fuzz.sh: fuzzes the scan reader (dbtr_scan_read), the TIFF reader (dbtr_tiff_read) and
# the DICOM import (dbtr_dicom_import_guarded) with libFuzzer under AddressSanitizer and
# UndefinedBehaviorSanitizer.
#
#   .ci/fuzz.sh [BUILD_DIR]          (default: build-fuzz in the repository root)
#
# By default the run is reproducible: a fixed number of executions per target from a fixed
# seed, so that the same commit fuzzes the same inputs on every machine and a CI verdict
# can be checked before it is given. To explore beyond them, give another seed or time.
# Environment:
#   FUZZ_RUNS      executions per target (default: scan 15000, tiff 300000, dicom 1000);
#                  -1: no count, FUZZ_SECONDS alone ends the run
#   FUZZ_SEED      libFuzzer's seed for the first round (default 1; 0: a random one, so
#                  a run that cannot be repeated); round r uses FUZZ_SEED + r - 1
#   FUZZ_SECONDS   time cap per target (default 600; with FUZZ_RUNS=-1 the length of
#                  the run); the cap only ends a run early, it never fails one
#   FUZZ_MAX_LEN   largest input in bytes (default 65536: the seeds are under 20 KB, and a
#                  scan or volume that matters to a reader's logic fits well within it)
#   FUZZ_TARGETS   which targets (default "scan tiff dicom"; dicom where GDCM is installed)
#   FUZZ_JOBS      build parallelism (default 2)
#   FUZZ_STRICT    1: a failure inside libhdf5 fails the run too (default 0)
#   FUZZ_BUILD     0: no configure or build; run BUILD_DIR/tests/fuzz_* as they are
#
# Needs clang with libFuzzer (Debian 12: the clang package, 14). Configures BUILD_DIR with
# CC=clang -DDBTR_FUZZ=ON (tests/fuzz.cmake) and builds only the two fuzz targets. Each
# target starts from its committed seeds (tests/fuzz/corpus_*) and keeps what it finds in
# BUILD_DIR/fuzz/corpus_*, so a second run goes on from the first (and is then no longer
# the same as a first run from a fresh BUILD_DIR). A crash, a sanitizer
# report, a leak, an out-of-memory or a timeout on one input, or a breach of the readers'
# contract (the harnesses abort on one) saves the input in BUILD_DIR/fuzz/artifacts_*/ and
# makes this script exit 1. To keep such an input as a regression test, copy it into
# tests/fuzz/regress_scan/ or tests/fuzz/regress_tiff/ (tests/fuzz.cmake picks it up).
# Failures inside libhdf5 itself (docs/errors.md, tests/fuzz/hdf5_known/) are set aside in
# BUILD_DIR/fuzz/hdf5_*/ and counted without failing the run (FUZZ_STRICT=1 fails on them).
# Prints per target libFuzzer's final statistics: executions, and coverage as cov (code
# edges reached) and ft (features: edges with hit counts and comparisons).
set -eu
# The logs hold raw input bytes: in a UTF-8 locale sed would stop at them (and grep needs -a).
export LC_ALL=C

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-600}
seed=${FUZZ_SEED:-1}
max_len=${FUZZ_MAX_LEN:-65536}
targets=${FUZZ_TARGETS:-scan tiff dicom}
jobs=${FUZZ_JOBS:-2}

if [ "${FUZZ_BUILD:-1}" = 1 ]; then
  mkdir -p "$build"
  CC=${CC:-clang} CXX=${CXX:-clang++} cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDBTR_FUZZ=ON \
    -DDBTR_SANITIZE=address,undefined -DDBTR_WITH_CUDA=OFF -DDBTR_WITH_VIEWER=OFF >"$build/configure.log" 2>&1 || {
    cat "$build/configure.log"
    exit 1
  }
  fuzzers=
  for t in $targets; do fuzzers="$fuzzers fuzz_$t"; done
  # shellcheck disable=SC2086 # word splitting of the target list is intended
  cmake --build "$build" -j "$jobs" --target $fuzzers
fi

# Leaks are checked per input; tests/fuzz/lsan.supp excuses the ones inside HDF5 itself
# (it says why, and how our own leaks are still caught).
# A few bytes of header can claim gigabytes (an HDF5 object of 2^62 bytes, a TIFF tile of
# 2 GiB). The run plays a machine where malloc of more than 2 GiB fails: the code must
# then refuse cleanly (DBTR_ENOMEM names the file), which is checked, instead of libFuzzer
# stopping at the first large request (-malloc_limit_mb above the cap keeps it quiet).
# -rss_limit_mb still stops memory really used beyond 2.5 GiB.
# tests/fuzz/asan.supp drops one known HDF5-internal report (it says which, and why).
asan="detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=2048"
export ASAN_OPTIONS="${ASAN_OPTIONS:-$asan:suppressions=$root/tests/fuzz/asan.supp}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# Where a finding happened, "ours" or "hdf5": the rules are in .ci/fuzz_classify.awk.
# With a second argument 1, only where the failing access happened.
classify() {
  awk -v root="$root/" -v access="${2:-0}" -f "$root/.ci/fuzz_classify.awk" "$1"
}
# A memory error's owner as AddressSanitizer reports it depends on the heap's layout (a
# wild address of HDF5's may land next to any buffer). A finding judged ours although the
# access was inside libhdf5 is run again alone in a fresh process; it is HDF5's when that
# report is judged HDF5's. A finding with the access in our code is never run again.
judge() { # target log unit
  verdict=$(classify "$2")
  alone="$build/fuzz/$(basename "$2").alone"
  if [ "$verdict" = ours ] && [ -n "$3" ] &&
    [ "$(classify "$2" 1)" = hdf5 ]; then
    "$build/tests/fuzz_$1" -runs=1 -timeout=10 -rss_limit_mb=2560 -malloc_limit_mb=4096 "$3" >"$alone" 2>&1 ||
      verdict=$(classify "$alone")
  fi
  echo "$verdict"
}

# judge's second opinion, checked before any fuzzing on a report judged ours with the
# access inside libhdf5: it must turn to HDF5's when the input, run alone, fails inside
# libhdf5 (a kept HDF5 bug: a copy from a null buffer, whatever the heap holds), and stay
# ours when the input runs clean (a valid seed).
mkdir -p "$build/fuzz"
case " $targets " in *" scan "*)
  report="$root/tests/fuzz/logs/ours.hdf5_overruns_unattributed_buffer.log"
  a=$(judge scan "$report" "$root/tests/fuzz/hdf5_known/local_heap_lookup_segv")
  b=$(judge scan "$report" "$root/tests/fuzz/corpus_scan/f32_scalar_i0.h5")
  if [ "$a" != hdf5 ] || [ "$b" != ours ]; then
    echo "== the second opinion is broken: $a (expected hdf5) and $b (expected ours)" >&2
    exit 1
  fi
  echo "== second opinion checked: a kept HDF5 failure run alone is HDF5's, a clean input stays ours"
  ;;
esac

status=0
summary=
for t in $targets; do
  work="$build/fuzz/corpus_$t"
  art="$build/fuzz/artifacts_$t/"
  known="$build/fuzz/hdf5_$t/"
  mkdir -p "$work" "$art" "$known"
  # The DICOM import forks a guarded child for GDCM's read of every input: under the
  # sanitizers a fork costs about 0.15 s of system time, so about 6 inputs a second here.
  case $t in scan) runs=15000 ;; dicom) runs=1000 ;; *) runs=300000 ;; esac
  runs=${FUZZ_RUNS:-$runs}
  echo "== fuzz_$t: $runs executions from seed $seed (at most $seconds s), -max_len=$max_len, seeds tests/fuzz/corpus_$t"
  # libFuzzer stops at its first finding. A finding inside HDF5 (a bug of libhdf5 on a
  # damaged file, which dbtr cannot fix; docs/errors.md) is set aside in $known and the
  # run goes on for the executions and time left, with the next seed, unless
  # FUZZ_STRICT=1; a finding in our code ends it.
  start=$(date +%s)
  deadline=$((start + seconds))
  round=0 execs=0 ours=0 hdf5=0 rc=0 log=/dev/null last=
  while :; do
    left=$((deadline - $(date +%s)))
    [ "$left" -gt 0 ] || break
    todo=-1
    if [ "$runs" -ge 0 ]; then
      todo=$((runs - execs))
      [ "$todo" -gt 0 ] || break
    fi
    this_seed=0
    [ "$seed" = 0 ] || this_seed=$((seed + round))
    round=$((round + 1))
    log="$build/fuzz/fuzz_$t.$round.log"
    rc=0
    "$build/tests/fuzz_$t" -seed="$this_seed" -runs="$todo" -max_total_time="$left" -max_len="$max_len" -print_final_stats=1 \
      -artifact_prefix="$art" -timeout=10 -rss_limit_mb=2560 -malloc_limit_mb=4096 \
      "$work" "$root/tests/fuzz/corpus_$t" >"$log" 2>&1 || rc=$?
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    execs=$((execs + ${n:-0}))
    last=$(grep -a -E '^#[0-9]+' "$log" | tail -n 1 || true)
    [ "$rc" -ne 0 ] || break
    unit=$(sed -n "s/.*Test unit written to //p" "$log" | tail -n 1)
    if [ "$(judge "$t" "$log" "$unit")" = hdf5 ] && [ "${FUZZ_STRICT:-0}" != 1 ] && [ -n "$unit" ]; then
      hdf5=$((hdf5 + 1))
      why=$(grep -a -m1 -E 'SUMMARY|ERROR' "$log")
      echo "-- round $round: a failure inside libhdf5 ($why); input set aside in $known"
      mv "$unit" "$known"
      continue
    fi
    ours=$((ours + 1))
    # The report from its first line to its summary (the access and the owner's stacks),
    # then libFuzzer's lines on the input.
    sed -n '/ERROR: \|deadly signal\|timeout after\|runtime error:/,/^SUMMARY/p' "$log" | head -n 80
    grep -a -E '^(MS:|artifact_prefix|Base64)' "$log" || true
    break
  done
  tail -n 12 "$log"
  cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  corpus=$(echo "$last" | sed -n 's/.*corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p')
  summary="$summary
fuzz_$t: $(($(date +%s) - start)) s in $round round(s), executions $execs, cov ${cov:-?}, ft ${ft:-?}, corpus ${corpus:-?},\
 findings in our code $ours, inside HDF5 $hdf5"
  [ "$ours" -eq 0 ] || status=1
done
echo "== summary$summary"
if [ "$status" -ne 0 ]; then
  echo "== a fuzzer found a problem in dbtr: the inputs are in $build/fuzz/artifacts_*/" >&2
  find "$build/fuzz" -path '*artifacts_*' -type f >&2
fi
exit "$status"
