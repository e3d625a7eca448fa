#!/usr/bin/env python3
"""bench/bench_python_projector.py: one forward + one back projection through dbtr.Projector on
CuPy arrays (zero-copy: the arrays are on the projector's GPU, of its dtype, C-contiguous),
against bench_modes' forward + back of the same mode on the same problem (issue 27's target:
within 1.10x).

    PYTHONPATH=python DBTR_LIBRARY=build/lib/libdbtr.so.0 python3 bench/bench_python_projector.py \
        [--mode fast] [--repeats 10] [--bench-modes build/bench/bench_modes] [--scan thesis.h5]

The problem is the `thesis` preset's (15 views of 2304 x 1196, a 2304 x 1196 x 45 volume),
read from --scan, or from a scan `dbtr phantom --system thesis --line-integrals` writes into a
temporary folder (the CPU reference projects it once: some seconds). Times are medians of
--repeats after one warm-up, each call timed whole from Python (the calls are synchronous), so
they include the package's own work: describing the arrays and their DLPack capsules.
bench_modes times its kernels with CUDA events; its back projection includes ML-EM's update,
which the projector's plain back projection does not do, so the ratio slightly favours the
projector on back. Prints both times in ms and the ratio. A hidden copy of the volume (0.5 GB
in float) over PCIe would add tens of ms per call; nsys (`nsys profile --trace cuda python3
bench/...`, then `nsys stats --report cuda_gpu_mem_size_sum`) shows no host-device copy of
the arrays' sizes during the timed calls.

Then dbtr.recon of the same scan from CuPy projections (reconstructed where they lie) and from
numpy, whole calls, and whether their volumes are bitwise equal."""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import cupy as cp
import numpy as np

import dbtr

ROOT = Path(__file__).resolve().parents[1]


def bench_modes_ms(exe: str, mode: str) -> tuple:
    """bench_modes' fwd ms and back ms for mode (its table row)."""
    out = subprocess.run([exe, "--system", "thesis", "--no-cpu", "--iterations", "1"], check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(rf"^{re.escape(mode)}\s+([0-9.]+)\s+([0-9.]+)\s", line)
        if m:
            return float(m.group(1)), float(m.group(2))
    raise SystemExit(f"bench_modes printed no row for {mode}:\n{out}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="fast")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--bench-modes", default=str(ROOT / "build" / "bench" / "bench_modes"))
    ap.add_argument("--dbtr", default=str(ROOT / "build" / "app" / "dbtr"))
    ap.add_argument("--scan")
    ap.add_argument("--recon-iterations", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scan = a.scan or os.path.join(tmp, "thesis.h5")
        if not a.scan:
            subprocess.run([a.dbtr, "phantom", "--system", "thesis", "--phantom", "breast", "--line-integrals", "-o",
                            scan, "--quiet"], check=True)
        s = dbtr.read_scan(scan)
    p = dbtr.Projector(s.geometry, s.grid, backend="gpu", mode=a.mode)
    rng = np.random.default_rng(1)
    x = cp.asarray(rng.uniform(0, 0.05, p.shape_volume).astype(p.dtype))
    y = cp.empty(p.shape_projections, dtype=p.dtype)
    v = cp.empty(p.shape_volume, dtype=p.dtype)
    times = []
    for i in range(a.repeats + 1):
        cp.cuda.Device(p.device).synchronize()
        t0 = time.perf_counter()
        p.forward(x, out=y)
        p.back(y, out=v)
        if i:  # the first is the warm-up
            times.append((time.perf_counter() - t0) * 1e3)
    ms = statistics.median(times)
    fwd, back = bench_modes_ms(a.bench_modes, a.mode)
    print(f"bench_python_projector: thesis, {p.backend}, CuPy arrays on cuda:{p.device}")
    print(f"Projector forward + back: {ms:.2f} ms (median of {a.repeats})")
    print(f"bench_modes forward + back: {fwd + back:.2f} ms ({fwd:.2f} + {back:.2f})")
    print(f"ratio: {ms / (fwd + back):.3f}x (target: at most 1.10x)")
    recon_times(s, a.mode, a.recon_iterations)


def recon_times(s: "dbtr.Scan", mode: str, iterations: int) -> None:
    """dbtr.recon of the same scan (line integrals, emission) from CuPy projections, which run where
    they lie, and from numpy, whose data cross the bus both ways: whole calls, set-up included,
    the second of two runs each; and the two volumes' bits."""
    proj = cp.asarray(s.projections)
    kw = dict(quantity="line_integral", iterations=iterations, backend="gpu", mode=mode)
    walls = {}
    for name, data in (("CuPy", proj), ("numpy", s.projections)):
        for _ in range(2):
            cp.cuda.Device(0).synchronize()
            t0 = time.perf_counter()
            vol = dbtr.recon(data, s.geometry, s.grid, **kw)
            cp.cuda.Device(0).synchronize()
            walls[name] = (time.perf_counter() - t0, vol)
    same = walls["CuPy"][1].get().tobytes() == walls["numpy"][1].tobytes()
    print(f"dbtr.recon, {iterations} iterations of {mode}: from CuPy {walls['CuPy'][0]:.3f} s, from numpy "
          f"{walls['numpy'][0]:.3f} s (data {s.projections.nbytes / 1e6:.0f} MB in float64); volumes bitwise equal: "
          f"{same}")


if __name__ == "__main__":
    main()
