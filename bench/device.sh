#!/bin/sh
# bench/device.sh: on a GPU machine (the `device` tool, ../shared/device/README.md), in one
# call: build for sm_90, run the gpu-labelled tests (the bitwise ones included), then the
# benchmark. Logs go to $OUT (or ./device-out); the benchmark's table is printed last.
#
#   sh .device/setup.sh >/dev/null && . /tmp/dbtr-env.sh && sh bench/device.sh [BENCH ARGS]
#
# BENCH ARGS go to bench_modes (default: --no-cpu --repeats 5; without --no-cpu it also
# runs the CPU reference on the full problem, about a minute on 16 cores, and checks the
# match modes bit for bit after one iteration of it).
# Environment: DBTR_BUILD (build folder, default build), DBTR_CMAKE_CUDA_FLAGS (extra nvcc
# flags, for trying a variant in a second build folder).
set -eu
build=${DBTR_BUILD:-build}
out=${OUT:-device-out}/$build
mkdir -p "$out"
[ $# -gt 0 ] || set -- --no-cpu --repeats 5
cmake -S . -B "$build" -DDBTR_WITH_VIEWER=OFF -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_CUDA_FLAGS="${DBTR_CMAKE_CUDA_FLAGS:-}" >"$out/configure.log" 2>&1 ||
  { tail -n 30 "$out/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -n 30; exit 1; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
status=0
ctest --test-dir "$build" -L gpu -j 4 --output-on-failure >"$out/ctest_gpu.log" 2>&1 || status=1
grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/ctest_gpu.log" || true
"./$build/bench/bench_modes" "$@" >"$out/bench.txt" 2>&1 || status=1
cat "$out/bench.txt"
exit "$status"
