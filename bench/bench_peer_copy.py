#!/usr/bin/env python3
"""bench/bench_peer_copy.py: what the link between two GPUs gives a lone copy, the floor of the
several-GPU exchange (docs/performance.md, "Several GPUs"): 1 GiB from GPU 0 to GPU 1 on a
non-blocking stream, by cudaMemcpyPeerAsync, cudaMemcpyAsync device to device and with
cudaMemcpyDefault, first without peer access (the runtime stages the copy through the host),
then with it enabled. GB/s, the mean of 5 copies after one warm-up. Needs CuPy and 2 GPUs.

    python3 bench/bench_peer_copy.py
"""

import time

import cupy as cp

rt = cp.cuda.runtime
N = 1 << 30


def rate(kind: str, dst, src, stream, reps: int = 5) -> float:
    for i in range(reps + 1):
        if i == 1:
            stream.synchronize()
            t = time.perf_counter()
        if kind == "peer":
            rt.memcpyPeerAsync(dst.data.ptr, 1, src.data.ptr, 0, N, stream.ptr)
        else:
            rt.memcpyAsync(dst.data.ptr, src.data.ptr, N,
                           rt.memcpyDeviceToDevice if kind == "d2d" else rt.memcpyDefault, stream.ptr)
    stream.synchronize()
    return reps * N / (time.perf_counter() - t) / 1e9


def main() -> None:
    with cp.cuda.Device(1):
        dst = cp.empty(N, dtype=cp.uint8)
    with cp.cuda.Device(0):
        src = cp.empty(N, dtype=cp.uint8)
        s = cp.cuda.Stream(non_blocking=True)
        print(f"GPU 0 can access GPU 1's memory: {bool(rt.deviceCanAccessPeer(0, 1))}")
        for enabled in (False, True):
            if enabled:
                rt.deviceEnablePeerAccess(1)
            for kind in ("peer", "d2d", "default"):
                print(f"peer access {'on ' if enabled else 'off'}, {kind:8s} {rate(kind, dst, src, s):6.0f} GB/s")


if __name__ == "__main__":
    main()
