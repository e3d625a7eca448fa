#!/bin/sh
# tests/cli_conventions.sh: the command-line conventions every `dbtr` command keeps
# (app/cli.h, README.md "Command line").
#
#   cli_conventions.sh DBTR WORK_DIR setup   a tiny scan (dbtr phantom) the cases share
#   cli_conventions.sh DBTR WORK_DIR CASE    one case (tests/cli_conventions.cmake: one CTest entry each)
#   cli_conventions.sh DBTR WORK_DIR list    the case names
#
# Each case runs in a folder of its own and prints one line, PASS or FAIL with the reason.
set -u

if [ $# -ne 3 ]; then
  echo "usage: $0 DBTR WORK_DIR setup|list|CASE" >&2
  exit 2
fi
dbtr=$1
work=$2
what=$3
case $dbtr in /*) ;; */*) dbtr=$(pwd)/$dbtr ;; esac
case $work in /*) ;; *) work=$(pwd)/$work ;; esac
scan=$work/scan.h5

COMMANDS="demo phantom project recon validate info view import"
CASES="help_list help_unknown dashdash_operand phantom_i0 demo_output equals_form wrote_lines quiet_silent
validate_report_no_force validate_diffs_no_force validate_force checkpoint_is_input checkpoint_exists
checkpoint_folder_missing checkpoint_resume_same phantom_memory_limit"
for c in $COMMANDS; do CASES="$CASES help_$c version_$c unknown_$c"; done

fail() {
  echo "FAIL: $*"
  exit 1
}

# run NAME ARGS...: runs dbtr with ARGS; $rc, NAME.out (stdout) and NAME.err (stderr).
run() {
  name=$1
  shift
  "$dbtr" "$@" >"$name.out" 2>"$name.err"
  rc=$?
}

# expect_usage_error NAME NEEDLE: exit 2 and one line on stderr that contains NEEDLE.
expect_usage_error() {
  [ "$rc" -eq 2 ] || fail "$1: exit $rc, expected 2 ($(cat "$1.err"))"
  [ "$(wc -l <"$1.err" | tr -d ' ')" -eq 1 ] || fail "$1: stderr is not one line: $(cat "$1.err")"
  grep -q -- "$2" "$1.err" || fail "$1: the message lacks '$2': $(cat "$1.err")"
}

run_case() {
  case $1 in *_view)
    if ! "$dbtr" view --help >/dev/null 2>&1; then
      echo "SKIP: this dbtr was built without the viewer"
      exit 77
    fi
    ;;
  esac
  case $1 in
  help_list)
    run top help
    [ "$rc" -eq 0 ] || fail "dbtr help: exit $rc"
    for c in $COMMANDS; do grep -q "^  $c " top.out || fail "dbtr help does not list $c"; done
    ;;
  help_unknown)
    run nosuch help frobnicate
    expect_usage_error nosuch "unknown command 'frobnicate'"
    ;;
  help_*)
    c=${1#help_}
    run by_help help "$c"
    [ "$rc" -eq 0 ] || fail "dbtr help $c: exit $rc"
    run by_flag "$c" --help
    [ "$rc" -eq 0 ] || fail "dbtr $c --help: exit $rc"
    cmp -s by_help.out by_flag.out || fail "dbtr help $c differs from dbtr $c --help"
    grep -q "^usage: dbtr $c" by_flag.out || fail "dbtr $c --help has no usage line: $(head -n 1 by_flag.out)"
    ;;
  version_*)
    c=${1#version_}
    run top --version
    run cmd "$c" --version
    [ "$rc" -eq 0 ] || fail "dbtr $c --version: exit $rc"
    grep -q '^dbtr [0-9]' cmd.out || fail "dbtr $c --version printed '$(cat cmd.out)'"
    cmp -s top.out cmd.out || fail "dbtr $c --version differs from dbtr --version"
    ;;
  unknown_*)
    c=${1#unknown_}
    run unknown "$c" --frobnicate
    expect_usage_error unknown "unknown option --frobnicate"
    ;;
  dashdash_operand)
    # A file whose name starts with '-' is an operand after `--`, an unknown option before.
    cp "$scan" ./-weird.h5
    run plain info -weird.h5
    expect_usage_error plain "unknown option -weird.h5"
    run ended info -- -weird.h5
    [ "$rc" -eq 0 ] || fail "dbtr info -- -weird.h5: exit $rc ($(cat ended.err))"
    grep -q '^-weird.h5: dbtr-scan v1' ended.out || fail "dbtr info -- -weird.h5 printed: $(head -n 1 ended.out)"
    run recon recon -o out.tif --iterations 1 --backend cpu --quiet -- -weird.h5
    [ "$rc" -eq 0 ] && [ -f out.tif ] || fail "dbtr recon ... -- -weird.h5: exit $rc ($(cat recon.err))"
    ;;
  phantom_i0)
    # --i0 is the unattenuated count per pixel, as in dbtr project; --dose is gone.
    run i0 phantom -o i0.h5 --i0 3000 --quiet
    [ "$rc" -eq 0 ] || fail "phantom --i0: exit $rc ($(cat i0.err))"
    run info info i0.h5
    grep -q "i0 *scalar, 3000 .. 3000" info.out || fail "i0.h5: $(grep i0 info.out)"
    run dose phantom -o dose.h5 --dose 3000 --quiet
    expect_usage_error dose "unknown option --dose"
    ;;
  demo_output)
    run demo demo -o made --iterations 1 --backend cpu --quiet
    [ "$rc" -eq 0 ] || fail "demo -o made: exit $rc ($(cat demo.err))"
    for f in scan.h5 truth.tif recon.tif; do [ -f "made/$f" ] || fail "demo -o made did not write made/$f"; done
    run long demo --output=long --iterations 1 --backend cpu --quiet
    [ "$rc" -eq 0 ] && [ -f long/recon.tif ] || fail "demo --output=long: exit $rc"
    run old demo --out old --iterations 1 --backend cpu --quiet
    expect_usage_error old "unknown option --out"
    ;;
  equals_form)
    # `--name=value` and `--name value` are the same request: the same volume, bit for bit.
    run joined recon "$scan" -o joined.tif --iterations=3 --backend=cpu
    [ "$rc" -eq 0 ] || fail "--iterations=3: exit $rc ($(cat joined.err))"
    run split recon "$scan" -o split.tif --iterations 3 --backend cpu
    [ "$rc" -eq 0 ] || fail "--iterations 3: exit $rc ($(cat split.err))"
    cmp -s joined.tif split.tif || fail "--iterations=3 and --iterations 3 wrote different volumes"
    grep -q "3 iterations" joined.err || fail "--iterations=3: no '3 iterations' in: $(head -n 1 joined.err)"
    ;;
  wrote_lines)
    # One "dbtr CMD: wrote PATH (...)" line on stderr per file written, and nothing on stdout
    # that could be mistaken for one.
    run phantom phantom -o p.h5 --truth t.tif
    grep -q '^dbtr phantom: wrote p.h5 (' phantom.err || fail "phantom: $(cat phantom.err)"
    grep -q '^dbtr phantom: wrote t.tif (' phantom.err || fail "phantom: $(cat phantom.err)"
    run project project t.tif --system tiny -o l.h5
    grep -q '^dbtr project: wrote l.h5 (' project.err || fail "project: $(cat project.err)"
    run recon recon p.h5 -o r.tif --iterations 1 --backend cpu
    grep -q '^dbtr recon: wrote r.tif (' recon.err || fail "recon: $(cat recon.err)"
    run demo demo -o d --iterations 1 --backend cpu
    for f in scan.h5 truth.tif recon.tif; do
      grep -q "^dbtr demo: wrote d/$f (" demo.err || fail "demo: no line for d/$f in: $(cat demo.err)"
    done
    [ "$(cat ./*.err | grep -c ': wrote ')" -eq 7 ] || fail "expected 7 wrote lines: $(cat ./*.err | grep ': wrote ')"
    if cat ./*.out | grep -q ': wrote '; then fail "a wrote line went to stdout"; fi
    ;;
  quiet_silent)
    # --quiet: a successful run says nothing on stderr, wrote lines included.
    run phantom phantom -o p.h5 --truth t.tif --quiet
    run recon recon p.h5 -o r.tif --iterations 1 --backend cpu --quiet
    run demo demo -o d --iterations 1 --backend cpu --quiet
    for n in phantom recon demo; do [ ! -s "$n.err" ] || fail "$n --quiet wrote to stderr: $(cat "$n.err")"; done
    ;;
  validate_report_no_force | validate_diffs_no_force)
    # validate's report and difference volumes are outputs: an existing one is refused
    # without --force before any iteration, and left as it was.
    mkdir out
    case $1 in *report*) f=out/validate.json flag=--report ;; *) f=out/cpu-float.tif flag=--save-diffs ;; esac
    echo keep >"$f"
    run v validate "$scan" --modes cpu-float --iterations 1 "$flag" out --quiet
    expect_usage_error v "$f exists; use --force"
    [ "$(cat "$f")" = keep ] || fail "$f was changed"
    [ ! -s v.out ] || fail "validate ran although it refused: $(head -n 1 v.out)"
    ;;
  validate_force)
    mkdir out d
    echo keep >out/validate.json
    echo keep >d/cpu-float.tif
    run v validate "$scan" --modes cpu-float --iterations 1 --report out --save-diffs d --force
    [ "$rc" -eq 0 ] || fail "validate --force: exit $rc ($(cat v.err))"
    [ "$(cat out/validate.json)" != keep ] && [ "$(cat d/cpu-float.tif)" != keep ] || fail "--force replaced nothing"
    grep -q '^dbtr validate: wrote out/validate.json (' v.err || fail "no wrote line: $(cat v.err)"
    grep -q '^dbtr validate: wrote d/cpu-float-diff.tif (' v.err || fail "no wrote line: $(cat v.err)"
    ;;
  checkpoint_is_input)
    # --checkpoint is an output: naming the input scan by another spelling (./, an absolute
    # path, a symbolic link) is caught by device and inode, and the scan stays intact.
    cp "$scan" s.h5
    ln -s s.h5 link.h5
    for c in ./s.h5 "$(pwd)/s.h5" link.h5; do
      run ck recon s.h5 -o r.tif --iterations 1 --backend cpu --checkpoint "$c" --force --quiet
      [ "$rc" -eq 2 ] || fail "--checkpoint $c: exit $rc, expected 2 ($(cat ck.err))"
      cmp -s s.h5 "$scan" || fail "--checkpoint $c changed the scan"
    done
    ;;
  checkpoint_exists)
    echo keep >old.ckpt
    run ck recon "$scan" -o r.tif --iterations 1 --backend cpu --checkpoint old.ckpt --quiet
    expect_usage_error ck "old.ckpt exists; use --force"
    [ "$(cat old.ckpt)" = keep ] && [ ! -e r.tif ] || fail "old.ckpt or r.tif touched"
    run ck2 recon "$scan" -o r.tif --iterations 1 --backend cpu --checkpoint old.ckpt --force --quiet
    [ "$rc" -eq 0 ] && [ "$(cat old.ckpt)" != keep ] || fail "--force did not replace old.ckpt (exit $rc)"
    ;;
  checkpoint_folder_missing)
    # Found before the first iteration, not after K of them.
    run ck recon "$scan" -o r.tif --iterations 1 --backend cpu --checkpoint nodir/c.ckpt
    [ "$rc" -eq 3 ] || fail "exit $rc, expected 3 ($(cat ck.err))"
    grep -q "nodir/c.ckpt" ck.err || fail "message: $(cat ck.err)"
    if grep -q "iteration " ck.err; then fail "an iteration ran before the refusal: $(cat ck.err)"; fi
    [ ! -e r.tif ] || fail "r.tif written"
    ;;
  phantom_memory_limit)
    # More than the machine has is refused before the simulation starts: the tiny preset
    # holds 9 x 80 x 128 pixels twice in double (1.47 MB); the limit is 1 MB.
    run m phantom -o big.h5 --quiet
    [ "$rc" -eq 0 ] || fail "phantom without a limit: exit $rc"
    DBTR_MEMORY_LIMIT=1000000 "$dbtr" phantom -o limited.h5 --quiet >m.out 2>m.err
    rc=$?
    [ "$rc" -eq 4 ] || fail "phantom under DBTR_MEMORY_LIMIT: exit $rc, expected 4 ($(cat m.err))"
    grep -q "the simulated scan needs" m.err || fail "message: $(cat m.err)"
    [ ! -e limited.h5 ] || fail "limited.h5 was written"
    ;;
  checkpoint_resume_same)
    # Resuming from a checkpoint and saving into the same file is the run's own state: no
    # --force needed, and the file is replaced only once the new state is whole.
    run a recon "$scan" -o a.tif --iterations 1 --backend cpu --checkpoint c.ckpt --quiet
    run b recon "$scan" -o b.tif --iterations 2 --backend cpu --checkpoint c.ckpt --resume c.ckpt --quiet
    [ "$rc" -eq 0 ] || fail "resume into the same checkpoint: exit $rc ($(cat b.err))"
    ;;
  *)
    echo "no case named $1 (see: $0 DBTR WORK_DIR list)" >&2
    return 2
    ;;
  esac
  echo "PASS: $1"
}

case $what in
list) echo $CASES | tr ' ' '\n' ;;
setup)
  rm -rf "$work"
  mkdir -p "$work" && "$dbtr" phantom --system tiny --quiet -o "$scan"
  ;;
*)
  dir=$work/cases/$what
  rm -rf "$dir"
  mkdir -p "$dir" && cd "$dir" || exit 1
  run_case "$what"
  ;;
esac
