#!/bin/sh
# tests/cli_errors.sh: what `dbtr recon` does with bad scans and bad flags (docs/errors.md).
#
#   cli_errors.sh DBTR WORK_DIR setup     valid scan (dbtr phantom --system tiny) + damaged copies
#   cli_errors.sh DBTR WORK_DIR CASE      one case (tests/cli_errors.cmake: one CTest entry each)
#   cli_errors.sh DBTR WORK_DIR all       setup, then every case, as a table
#   cli_errors.sh DBTR WORK_DIR list      the case names
#
# Each case runs `dbtr recon` in a folder of its own holding only its input, and checks
#   - the exit code: 2 for bad input or flags, 3 for I/O (recon/error.h), 0 where accepted;
#   - stderr: exactly one line (the runs are --quiet) naming the file and the dataset, or
#     the flag, that is wrong; nothing at all on success, but for the valid files that look
#     like a mistake (geometry_in_cm, ...), where one warning names the likely cause;
#   - the folder afterwards: no output and no temporary (.*.tmp) left by a failed run, the
#     output present on success, and an existing file the run refused to replace unchanged.
# It prints one table line: case | exit | leftovers | result | message.
# The damaged scans come from tests/make_bad_scans.py (python3 with h5py; DBTR_PYTHON picks
# the interpreter, default /usr/bin/python3). Without h5py those cases exit 77 (skipped).
set -u

if [ $# -ne 3 ]; then
  echo "usage: $0 DBTR WORK_DIR setup|all|list|CASE" >&2
  exit 2
fi
dbtr=$1
work=$2
what=$3
# Each case runs inside its own folder: relative paths are made absolute first.
case $dbtr in /*) ;; */*) dbtr=$(pwd)/$dbtr ;; esac
case $work in /*) ;; *) work=$(pwd)/$work ;; esac
here=$(cd "$(dirname "$0")" && pwd)
py=${DBTR_PYTHON:-/usr/bin/python3}
scans=$work/scans

SCAN_CASES="not_hdf5 truncated other_format other_version missing_dataset missing_i0 wrong_rank wrong_shape
views_disagree i0_shape_disagree dims_overflow volume_dims_overflow nan_geometry source_on_detector zero_u zero_v
nan_projection inf_projection negative_counts i0_zero i0_negative volume_outside_fov counts_above_i0
external_storage unwritten_chunks virtual_missing_source virtual_self lzf_filter
geometry_in_cm counts_are_line_integrals transposed"
OTHER_CASES="missing_file not_regular_file memory_limit negative_iterations bad_gpu_memory bad_gpus unknown_mode unknown_option missing_value missing_output_folder
overwrite_input exists_no_force exists_force uint16_without_scale scale_without_uint16 float64 float64_exists_no_force"
# Files that crash libhdf5 1.10 itself, or make it loop (tests/fuzz/hdf5_known/): dbtr must
# still end with exit 2 and one line naming the file (io/scan_guard.c), whether HDF5 fails
# on them or a later HDF5 refuses them. The crashes are skipped in sanitizer builds
# (DBTR_SANITIZED=1), where AddressSanitizer reports HDF5's bad access first. The loop runs
# with DBTR_SCAN_HEADER_SECONDS=2 (the default, 60 s, would only make the test slow).
HDF5_CASES="hdf5_crash_local_heap hdf5_crash_global_heap hdf5_hang_global_heap"

setup() {
  rm -rf "$scans"
  mkdir -p "$scans" || return 1
  # The tiny preset: 9 views of 128 x 80 pixels, counts, a scalar /i0, a /volume grid.
  if ! "$dbtr" phantom --system tiny --quiet -o "$scans/base.h5"; then
    echo "setup: dbtr phantom failed" >&2
    return 1
  fi
  "$py" "$here/make_bad_scans.py" "$scans/base.h5" "$scans"
  rc=$?
  if [ $rc -eq 77 ] || [ $rc -eq 127 ]; then
    echo "setup: no $py or no h5py for it: the damaged-scan cases will be skipped" >&2
    return 0
  fi
  [ $rc -eq 0 ] || return $rc
  # The two lists of damaged scans must agree, or a case would go untested.
  made=$("$py" "$here/make_bad_scans.py" --list | sort | tr '\n' ' ')
  want=$(echo $SCAN_CASES | tr ' ' '\n' | sort | tr '\n' ' ')
  if [ "$made" != "$want" ]; then
    echo "setup: make_bad_scans.py makes [$made] but cli_errors.sh runs [$want]" >&2
    return 1
  fi
}

# spec CASE: sets
#   scan     the file copied into the case folder as $input ("" for none)
#   input    its name there, given to dbtr recon
#   out      the -o argument
#   args     more arguments, after the others
#   want_rc  the expected exit code
#   needles  '|'-separated strings the message must contain (the file or flag, the dataset)
#   want_out 1 if $out must exist afterwards
#   pre      content of an $out that exists before the run ("" for none)
#   env_vars NAME=VALUE words set for the run ("" for none)
spec() {
  scan=$scans/$1.h5 input=$1.h5 out=out.tif args="--iterations 1" want_rc=2 want_out=0 pre= env_vars= warn=0
  needles="$input"
  case $1 in
  not_hdf5) needles="$needles|not an HDF5 file" ;;
  truncated) needles="$needles|truncated" ;;
  other_format) needles="$needles|'format'|dbtr-scan" ;;
  other_version) needles="$needles|'format_version'" ;;
  missing_dataset) needles="$needles|/geometry/source|missing" ;;
  missing_i0) needles="$needles|/i0|missing" ;;
  wrong_rank) needles="$needles|/projections|rank 3" ;;
  wrong_shape) needles="$needles|/geometry/detector_u|(9, 2)" ;; # tiny has 9 views
  views_disagree) needles="$needles|/geometry/source|/projections" ;;
  i0_shape_disagree) needles="$needles|/i0|/projections" ;;
  dims_overflow) needles="$needles|/projections|overflow" ;;
  volume_dims_overflow) needles="$needles|/volume|2^30" ;;
  nan_geometry) needles="$needles|/geometry/detector_center|not finite" ;;
  source_on_detector) needles="$needles|/geometry|view 0|detector plane" ;;
  zero_u) needles="$needles|/geometry|detector u|zero length" ;;
  zero_v) needles="$needles|/geometry|detector v|zero length" ;;
  nan_projection) needles="$needles|/projections|nan|not finite" ;;
  inf_projection) needles="$needles|/projections|inf|not finite" ;;
  negative_counts) needles="$needles|/projections|negative" ;;
  i0_zero) needles="$needles|/i0|not positive" ;;
  i0_negative) needles="$needles|/i0|not positive" ;;
  volume_outside_fov) needles="$needles|/volume|field of view" ;;
  counts_above_i0) want_rc=0 want_out=1 needles= ;;
  external_storage) needles="$needles|/projections|external" ;;
  unwritten_chunks) needles="$needles|/projections|5 of its 9 chunks were never written" ;; # views 4-8
  virtual_missing_source | virtual_self) needles="$needles|/projections|virtual dataset" ;;
  lzf_filter) needles="$needles|/projections|filter 32000|lzf|GZIP" ;; # 32000: LZF's registered id
  # Valid files that are probably a mistake: the run succeeds with one warning naming the
  # likely cause (recon/doubt.h). tiny's source is 660 mm from the detector, 66 in cm.
  geometry_in_cm) want_rc=0 want_out=1 warn=1 needles="warning: view 0: the source is 66|not cm" ;;
  counts_are_line_integrals) want_rc=0 want_out=1 warn=1 needles="warning: the counts are all below 20|line_integral" ;;
  # The fit's doubt needs 5 iterations (STALL_AFTER).
  transposed) want_rc=0 want_out=1 warn=1 args="--iterations 5" needles="warning: after 5 iterations|transposed" ;;
  missing_file) scan= input=absent.h5 want_rc=3 needles="absent.h5|cannot open" ;;
  # A FIFO as the scan: refused before it is opened, which would block for ever.
  not_regular_file) scan= input=fifo.h5 needles="fifo.h5|a FIFO|regular files" ;;
  hdf5_crash_local_heap) scan=$here/fuzz/hdf5_known/local_heap_lookup_segv ;;
  hdf5_crash_global_heap) scan=$here/fuzz/hdf5_known/vlen_string_global_heap_segv ;;
  hdf5_hang_global_heap) scan=$here/fuzz/hdf5_known/vlen_string_global_heap_hang env_vars=DBTR_SCAN_HEADER_SECONDS=2
    needles="$needles|did not finish in 2 s" ;;
  # Flags and outputs: the valid scan.
  *)
    scan=$scans/base.h5 input=scan.h5
    case $1 in
    negative_iterations) args="--iterations -3" needles="--iterations|-3" ;;
    bad_gpu_memory) args="$args --gpu-memory 16XB" needles="--gpu-memory|16XB|not a size" ;;
    bad_gpus) args="$args --gpus 0" needles="--gpus|'0'|number of GPUs" ;;
    # More than the machine has: refused with the sizes before any buffer of the run exists
    # (the tiny run needs about 11 MB; the limit is 1 MB).
    memory_limit) env_vars=DBTR_MEMORY_LIMIT=1000000 want_rc=4 needles="reconstruction (CPU, float) needs|available" ;;
    unknown_mode) args="$args --mode turbo" needles="--mode|turbo" ;;
    unknown_option) args="$args --frobnicate" needles="--frobnicate" ;;
    missing_value) args="--iterations" needles="--iterations|needs a value" ;;
    missing_output_folder) out=missing_dir/out.tif want_rc=3 needles="missing_dir/out.tif|output folder" ;;
    overwrite_input) out=scan.h5 needles="scan.h5|overwrite the input" ;;
    exists_no_force) pre="an older output" want_out=1 needles="out.tif|--force" ;;
    exists_force) pre="an older output" args="$args --force" want_rc=0 want_out=1 needles= ;;
    # The sample formats (docs/volume-format.md): uint16 needs its scale, and a scale without
    # uint16 would be ignored, so it is refused too; float64 is written like float32.
    uint16_without_scale) args="$args --format uint16" needles="--format uint16|--u16-scale" ;;
    scale_without_uint16) args="$args --format float64 --u16-scale 1000" needles="--u16-scale|--format float64" ;;
    float64) args="$args --format float64 --precision dd" want_rc=0 want_out=1 needles= ;;
    float64_exists_no_force) pre="an older output" args="$args --format float64" want_out=1 needles="out.tif|--force" ;;
    *) return 1 ;;
    esac
    ;;
  esac
  return 0
}

is_tiff() {
  magic=$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')
  [ "$magic" = "49492a00" ] || [ "$magic" = "4d4d002a" ] || [ "$magic" = "49492b00" ] || [ "$magic" = "4d4d002b" ]
}

run_case() {
  name=$1
  if ! spec "$name"; then
    echo "no case named $name (see: $0 DBTR WORK_DIR list)" >&2
    return 2
  fi
  case $name in hdf5_crash_*)
    if [ "${DBTR_SANITIZED:-0}" = 1 ]; then
      echo "SKIP: a sanitizer build reports libhdf5's own bad access on this file first" >&2
      return 77
    fi
    ;;
  esac
  if [ -n "$scan" ] && [ ! -f "$scan" ]; then
    echo "SKIP: $scan was not made (no h5py? run the setup first)" >&2
    return 77
  fi
  dir=$work/cases/$name
  log=$work/cases/$name.stderr
  rm -rf "$dir"
  mkdir -p "$dir"
  [ -n "$scan" ] && cp "$scan" "$dir/$input"
  [ "$name" = not_regular_file ] && mkfifo "$dir/$input"
  [ -n "$pre" ] && printf '%s\n' "$pre" >"$dir/out.tif"
  # shellcheck disable=SC2086 # $args and $env_vars are lists of words
  (cd "$dir" && env $env_vars "$dbtr" recon "$input" -o "$out" --quiet --backend cpu $args) >/dev/null 2>"$log"
  rc=$?

  problems=
  [ "$rc" -eq "$want_rc" ] || problems="$problems exit $rc, expected $want_rc;"
  lines=$(wc -l <"$log" | tr -d ' ')
  msg=$(head -n 1 "$log")
  if [ "$want_rc" -ne 0 ] || [ "$warn" -eq 1 ]; then
    [ "$lines" -eq 1 ] || problems="$problems $lines lines on stderr, expected 1;"
  else
    [ "$lines" -eq 0 ] || problems="$problems stderr not empty;"
  fi
  old_ifs=$IFS
  IFS='|'
  for n in $needles; do
    case $msg in *"$n"*) ;; *) problems="$problems message lacks '$n';" ;; esac
  done
  IFS=$old_ifs

  # Every entry in the folder that is neither the input nor an expected output.
  leftovers=$(cd "$dir" && ls -A | while read -r f; do
    [ "$f" = "$input" ] && continue
    [ "$f" = out.tif ] && [ "$want_out" -eq 1 ] && continue
    printf '%s ' "$f"
  done)
  [ -z "$leftovers" ] || problems="$problems left behind: $leftovers;"
  if [ "$want_out" -eq 1 ] && [ ! -f "$dir/out.tif" ]; then problems="$problems no out.tif;"; fi
  if [ -n "$pre" ] && [ "$want_rc" -ne 0 ] && [ "$(cat "$dir/out.tif")" != "$pre" ]; then
    problems="$problems the existing out.tif was changed;"
  fi
  if [ "$want_rc" -eq 0 ] && [ -f "$dir/out.tif" ] && ! is_tiff "$dir/out.tif"; then
    problems="$problems out.tif is not a TIFF;"
  fi
  if [ "$name" = overwrite_input ] && ! cmp -s "$dir/scan.h5" "$scans/base.h5"; then
    problems="$problems the input was changed;"
  fi

  result=PASS
  [ -z "$problems" ] || result="FAIL:$problems"
  printf '%-22s | %4s | %-9s | %s | %s\n' "$name" "$rc" "${leftovers:-none}" "$result" "${msg:-(none)}"
  [ -z "$problems" ]
}

case $what in
list) echo $SCAN_CASES $OTHER_CASES $HDF5_CASES | tr ' ' '\n' ;;
setup) setup ;;
all)
  setup || exit 1
  printf '%-22s | %4s | %-9s | %s | %s\n' case exit leftovers result "message (stderr)"
  failed=0
  for c in $SCAN_CASES $OTHER_CASES $HDF5_CASES; do
    run_case "$c"
    r=$?
    [ $r -eq 0 ] || [ $r -eq 77 ] || failed=$((failed + 1))
  done
  echo "$failed case(s) failed"
  [ $failed -eq 0 ]
  ;;
*) run_case "$what" ;;
esac
