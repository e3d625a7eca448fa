#!/bin/sh
# tests/fuzz/classify.sh LOG...: checks .ci/fuzz_classify.awk on fuzzer reports whose
# name starts with the answer it must give ("ours." or "hdf5."). Paths of this repository
# are written @ROOT@/ in the reports.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
status=0
for log in "$@"; do
  want=$(basename "$log" | cut -d. -f1)
  got=$(awk -v root=@ROOT@/ -f "$root/.ci/fuzz_classify.awk" "$log")
  if [ "$got" = "$want" ]; then
    echo "ok   $got  $log"
  else
    echo "FAIL $log: classified $got, expected $want" >&2
    status=1
  fi
done
exit "$status"
