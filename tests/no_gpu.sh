#!/bin/sh
# tests/no_gpu.sh DBTR: on a machine without a usable GPU (CI's), `--backend gpu` exits 7
# ("no usable GPU", docs/errors.md) with a message and no output, and `--backend auto`
# warns and runs on the CPU. Where a GPU exists this case has nothing to check: exit 77.
set -eu
dbtr=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
"$dbtr" phantom -o scan.h5 --quiet
rc=0
"$dbtr" recon scan.h5 -o gpu.tif --iterations 1 --backend gpu --quiet 2>err.txt || rc=$?
if [ "$rc" -eq 0 ]; then echo "SKIP: a GPU is present"; exit 77; fi
[ "$rc" -eq 7 ] || { echo "FAIL: --backend gpu without a GPU exited $rc, not 7"; cat err.txt; exit 1; }
grep -Eq "no CUDA GPU found|built without CUDA" err.txt || { echo "FAIL: message"; cat err.txt; exit 1; }
[ ! -e gpu.tif ]
"$dbtr" recon scan.h5 -o auto.tif --iterations 1 --backend auto 2>warn.txt >/dev/null
grep -q "warning: no GPU can be used; running on the CPU" warn.txt
echo "no GPU: exit 7 on --backend gpu, CPU fallback on --backend auto"
