#!/bin/sh
# tests/gpu_fallback.sh DBTR: GPU memory. With the GPU memory capped below what the
# reconstruction needs even in batches (DBTR_GPU_MAX_BYTES), --backend gpu fails with exit 5
# and a message giving the sizes and what was free; --backend auto warns and runs on the CPU,
# with the CPU's result. --gpu-memory too small says so, naming the flag; a large one changes
# nothing. Exits 77 (skip) only where no GPU can be used at all (dbtr's exit 7); any other
# failure of the GPU probe fails the test. (Batches' bits: test_gpu.)
set -eu
dbtr=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
"$dbtr" phantom -o scan.h5 --quiet
set +e
"$dbtr" recon scan.h5 -o probe.tif --iterations 1 --backend gpu --quiet 2>probe.txt
rc=$?
[ "$rc" -eq 7 ] && { echo "SKIP: no GPU"; exit 77; }
[ "$rc" -eq 0 ] || { echo "FAIL: the GPU probe exited $rc"; cat probe.txt; exit 1; }
DBTR_GPU_MAX_BYTES=1000 "$dbtr" recon scan.h5 -o gpu.tif --iterations 1 --backend gpu --quiet 2>err.txt
rc=$?
set -e
[ "$rc" -eq 5 ] || { echo "FAIL: capped GPU run exited $rc, not 5"; cat err.txt; exit 1; }
grep -q "needs .* GiB (.* GiB with one view's ray records at a time), .* GiB allowed (the GPU has .* GiB free, capped by DBTR_GPU_MAX_BYTES," err.txt
[ ! -e gpu.tif ]
DBTR_GPU_MAX_BYTES=1000 "$dbtr" recon scan.h5 -o auto.tif --iterations 2 --backend auto --mode cpu-match 2>err2.txt
grep -q "warning: GPU memory: .*running on the CPU" err2.txt
"$dbtr" recon scan.h5 -o cpu.tif --iterations 2 --backend cpu --quiet
cmp auto.tif cpu.tif
set +e
"$dbtr" recon scan.h5 -o small.tif --iterations 1 --backend gpu --gpu-memory 64KiB --quiet 2>err3.txt
rc=$?
set -e
[ "$rc" -eq 5 ] || { echo "FAIL: --gpu-memory 64KiB exited $rc, not 5"; cat err3.txt; exit 1; }
grep -q "GiB allowed (--gpu-memory)" err3.txt
[ ! -e small.tif ]
"$dbtr" recon scan.h5 -o probe_large.tif --iterations 1 --backend gpu --gpu-memory 1TiB 2>err4.txt
grep -q "GPU memory: .* GiB needed" err4.txt
cmp probe.tif probe_large.tif
echo "GPU memory: clear messages on --backend gpu and --gpu-memory, CPU fallback with a warning on --backend auto"
