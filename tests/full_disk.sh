#!/bin/sh
# tests/full_disk.sh DBTR: an output that cannot be written whole (here: a file-size limit,
# `ulimit -f`, standing in for a full disk) ends the run with exit 3 and a message naming
# the file, never a signal death or a crash, and leaves no temporary (docs/errors.md).
set -eu
dbtr=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
"$dbtr" phantom -o scan.h5 --quiet
mkdir out
check() { # what rc: the run must have exited 3, named the file, and left out/ empty
  [ "$2" -eq 3 ] || { echo "FAIL: $1 exited $2, not 3"; cat err.txt; exit 1; }
  grep -q "out/$1" err.txt || { echo "FAIL: $1: the message does not name the file"; cat err.txt; exit 1; }
  [ "$(wc -l <err.txt)" -eq 1 ] || { echo "FAIL: $1: more than one line"; cat err.txt; exit 1; }
  # The scan file's failure in words, without libhdf5's raw text (a time, a buffer address,
  # "bytes actually wri"): issue 23, poor messages. libtiff's "Write error at scanline 0"
  # lost the system's reason likewise: the volume's says it too.
  case $1 in *.h5)
    grep -q "file write failed: File too large" err.txt || { echo "FAIL: $1: the reason is not said"; cat err.txt; exit 1; }
    if grep -q "buf = \|time = " err.txt; then echo "FAIL: $1: libhdf5's raw text reached the user"; cat err.txt; exit 1; fi
    ;;
  *.tif)
    grep -q "out/$1: page [0-9]*: File too large" err.txt || { echo "FAIL: $1: the reason is not said"; cat err.txt; exit 1; }
    ;;
  esac
  [ -z "$(ls -A out)" ] || { echo "FAIL: $1 left files behind:"; ls -A out; exit 1; }
}
# 20 blocks of 512 bytes: far less than the 370 kB scan or the 980 kB volume. Each run is
# in a subshell so the limit stays there.
rc=0; (ulimit -f 20; "$dbtr" phantom -o out/big.h5 --quiet 2>err.txt) || rc=$?
check big.h5 "$rc"
rc=0; (ulimit -f 20; "$dbtr" recon scan.h5 -o out/big.tif --iterations 1 --quiet 2>err.txt) || rc=$?
check big.tif "$rc"
echo "full disk: exit 3 with the file named, nothing left behind"
