"""dbtr.Projector: the projector pair of one path (the CPU reference or a GPU mode), built once
and run as often as wanted on numpy arrays, DLPack arrays or __cuda_array_interface__ arrays
(docs/python.md, "The projector")."""

from __future__ import annotations

import ctypes
import threading
import warnings
from typing import Any, Optional

from . import _arrays, _lib
from ._model import Geometry, Grid, c_geom, c_grid

_DTYPES = {_lib.PREC_FLOAT: "float32", _lib.PREC_DOUBLE: "float64", _lib.PREC_DD: "float64"}


def _name(value: Optional[str], what: str) -> Optional[bytes]:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{what}: a string or None, not {type(value).__name__}")
    return value.encode()


def backend_opts(backend: str, mode: Optional[str], precision: Optional[str], threads: int, gpu_memory: int,
                 gpus: int) -> _lib.BackendOpts:
    """The C options of a path, each checked for its Python type."""
    for what, v in (("threads", threads), ("gpu_memory", gpu_memory), ("gpus", gpus)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{what}: an integer, not {type(v).__name__}")
    if gpu_memory < 0:
        raise _lib.invalid(f"gpu_memory={gpu_memory}: bytes, 0 or more (0: what the GPU has free)")
    return _lib.BackendOpts(_name(backend, "backend"), _name(mode, "mode"), _name(precision, "precision"), threads,
                            gpu_memory, gpus)


class Projector:
    """The projector pair of one path: A (forward) and its exact transpose A^T (back).

    Built once (ray records, separable tables and, on a GPU, one arena of device memory), then
    `forward(volume)` and `back(projections)` as often as wanted; the results are bitwise
    those of `dbtr project` and of ML-EM on the same path. backend: "cpu", "gpu" or "auto"
    (the GPU when one can be used, else the CPU with a RuntimeWarning); mode: the GPU mode
    (docs/modes.md; None: cpu-match); precision: "float", "double" or "dd" on the CPU (None:
    the mode's); device: the CUDA device; threads: CPU threads (0: all; the bits do not depend
    on it); gpu_memory: bytes the GPU may take (0: what it has free), batched beyond it with
    the same bits.

    Arrays are C-contiguous, of `dtype` (float32 for float, float64 for double, float64 pairs
    (hi, lo) along a trailing axis of 2 for dd), shaped `shape_volume` and
    `shape_projections`: numpy arrays or any host array with __dlpack__ (host memory), or
    arrays on this projector's GPU with __dlpack__ (CuPy, PyTorch, JAX) or
    __cuda_array_interface__, read and written in place (zero-copy). Anything else raises an
    InvalidArgument naming the parameter, its shape, dtype, device and strides, unless
    copy=True, which converts the input (on its device where the projector runs there). The
    result is of the input's kind on the input's device. The calls are synchronous: the
    result is complete when they return (docs/python.md, "Streams")."""

    def __init__(self, geometry: Geometry, grid: Grid, *, backend: str = "auto", mode: Optional[str] = None,
                 precision: Optional[str] = None, device: int = 0, threads: int = 0, gpu_memory: int = 0) -> None:
        self._h: Optional[ctypes.c_void_p] = None
        keep: list = []
        g, v = c_geom(geometry, keep), c_grid(grid)
        if not isinstance(device, int) or isinstance(device, bool):
            raise TypeError(f"device: an integer, not {type(device).__name__}")
        opts = _lib.ProjectorOpts(backend_opts(backend, mode, precision, threads, gpu_memory, 1), device)
        h = ctypes.c_void_p()
        _lib.check(_lib.lib.dbtr_projector_open(ctypes.byref(h), ctypes.byref(g), ctypes.byref(v), ctypes.byref(opts)))
        self._h = h
        self._lock = threading.Lock()
        fallback = _lib.lib.dbtr_projector_fallback(h).decode()
        if fallback:
            warnings.warn(f"dbtr: {fallback}; projecting on the CPU", RuntimeWarning, stacklevel=2)
        prec = _lib.lib.dbtr_projector_precision(h)
        self.backend: str = _lib.lib.dbtr_projector_backend(h).decode()
        self.precision: str = ("float", "double", "dd")[prec]
        self.dtype: str = _DTYPES[prec]
        self.device: int = _lib.lib.dbtr_projector_device(h)
        pair = (2,) if prec == _lib.PREC_DD else ()
        self.shape_volume: tuple = tuple(grid.shape) + pair
        self.shape_projections: tuple = tuple(geometry.projection_shape) + pair

    def forward(self, volume: Any, out: Any = None, *, copy: bool = False) -> Any:
        """A volume: its line integrals, shaped shape_projections (into out when given)."""
        return self._run(_lib.lib.dbtr_projector_forward, "volume", volume, self.shape_volume, out,
                         self.shape_projections, copy)

    def back(self, projections: Any, out: Any = None, *, copy: bool = False) -> Any:
        """A^T projections, the exact transpose of forward, shaped shape_volume (into out when
        given)."""
        return self._run(_lib.lib.dbtr_projector_back, "projections", projections, self.shape_projections, out,
                         self.shape_volume, copy)

    def _run(self, fn: Any, name: str, x: Any, in_shape: tuple, out: Any, out_shape: tuple, copy: bool) -> Any:
        want_in = _arrays.Want(in_shape, self.dtype, self.device)
        given = _arrays.describe(name, x, sequences=copy)
        src = given
        if not want_in.takes(given):
            if not copy:
                raise want_in.refuse(name, given, "; copy=True converts it")
            src = _arrays.convert(name, given, want_in)
        # Both arrays on one side: the library takes one memory kind per call.
        want_out = _arrays.Want(out_shape, self.dtype, src.device)
        if out is not None:
            dst = _arrays.describe("out", out)
            if not want_out.takes(dst) or dst.device != src.device:
                raise _lib.invalid(f"out: {dst}; written in place, it must have shape {out_shape}, dtype "
                                   f"{self.dtype}, be C-contiguous and lie in {src.where} as {name} does")
            if dst.readonly:
                raise _lib.invalid(f"out: {dst} is read-only")
            if _arrays.overlap(src, dst):
                raise _lib.invalid(f"out: shares memory with {name}")
        else:
            dst = _arrays.describe("out", _arrays.empty(name, src, out_shape, self.dtype, src.device))
        with self._lock:
            if self._h is None:
                raise ValueError("dbtr.Projector: used after close()")
            where = _lib.MEMORY_HOST if src.device < 0 else _lib.MEMORY_DEVICE
            _lib.check(fn(self._h, src.ptr, dst.ptr, where))
        return dst.obj if out is not None else _arrays.home("out", given, dst.obj)

    def close(self) -> None:
        """Frees the projector's tables and device memory; closing twice is safe."""
        lock = getattr(self, "_lock", None)
        if lock is None:  # __init__ failed before the projector existed
            return
        with lock:
            if self._h is not None:
                _lib.lib.dbtr_projector_close(ctypes.byref(self._h))
                self._h = None

    def __enter__(self) -> "Projector":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._h is None else f"device {self.device}" if self.device >= 0 else "CPU"
        return (f"dbtr.Projector({self.backend}, {self.precision}, volume {self.shape_volume}, projections "
                f"{self.shape_projections}, {state})")
