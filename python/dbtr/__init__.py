"""dbtr from Python: digital breast tomosynthesis scans, projectors, ML-EM and validation, on
numpy arrays and on DLPack and CUDA arrays (CuPy, PyTorch), each returned as the kind it
came as (docs/python.md). dbtr.torch (import it) adds PyTorch autograd.

Every function calls libdbtr, the library the `dbtr` command line is built on, so the same
scan and options give the same bits as the command. The GIL is released while the library
computes. Errors are raised as dbtr.DbtrError subclasses whose message names the cause.

Conventions (docs/ARCHITECTURE.md): lengths in mm; volumes are (nz, ny, nx) arrays, x
fastest; projections are (n_views, n_rows, n_cols); each view's geometry is four 3-vectors
in ASTRA's cone_vec convention.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import _arrays, _lib
from ._lib import DbtrError, DbtrIOError, DbtrMemoryError, FormatError, GpuError, InvalidArgument, NoGpuError
from ._model import Geometry, Grid, c_geom, c_grid, double_ptr, doubles
from ._projector import Projector, backend_opts

__all__ = ["Geometry", "Grid", "Scan", "Projector", "Progress", "DiffStats", "RefereeStats", "QualityChange",
           "QualityExtreme", "QualityVerdict", "ValidationRow",
           "Validation", "ModeInfo", "read_scan", "write_scan", "forward", "back", "recon", "recon_file", "validate",
           "quality", "gpu_available", "modes", "mode_table", "DbtrError", "InvalidArgument", "FormatError", "DbtrIOError",
           "DbtrMemoryError", "NoGpuError", "GpuError", "__version__"]


def __dir__() -> list:
    """The public names only: not the modules the package uses (numpy, ctypes, os)."""
    return sorted(__all__)


__version__ = _lib.lib.dbtr_version().decode()

# libhdf5 as libdbtr uses it is not thread-safe: one scan read or write at a time.
_io_lock = threading.Lock()


@dataclass
class Scan:
    """A dbtr-scan file's content (docs/scan-format.md). projections: (n_views, n_rows,
    n_cols) float64 counts or line integrals; quantity: "counts" or "line_integral"; i0: the
    unattenuated counts, shaped (), (n_views,), (n_rows, n_cols) or like projections (None
    for line integrals); grid: the file's /volume grid or None; dtype: how /projections is
    stored ("float32", "float64", "uint16" or "uint32")."""
    projections: np.ndarray
    geometry: Geometry
    quantity: str = "line_integral"
    i0: Optional[np.ndarray] = None
    grid: Optional[Grid] = None
    dtype: str = "float64"


def _i0_shape(i0: np.ndarray, proj_shape: tuple) -> int:
    n_views, n_rows, n_cols = proj_shape
    shapes = {(): _lib.I0_SCALAR, (n_views,): _lib.I0_PER_VIEW, (n_rows, n_cols): _lib.I0_PER_PIXEL,
              tuple(proj_shape): _lib.I0_FULL}
    if i0.shape not in shapes:
        raise _lib.invalid(f"i0: shape {i0.shape}; expected (), ({n_views},), ({n_rows}, {n_cols}) or "
                              f"{tuple(proj_shape)}")
    return shapes[i0.shape]


def _quantity(i0: Any, quantity: Optional[str]) -> str:
    """What the projections are. Counts need i0; without i0 the caller says line_integral:
    counts taken for line integrals give nonsense with no error to show for it."""
    if quantity is None:
        if i0 is None:
            raise _lib.invalid("quantity: without i0, say what the projections are: quantity='line_integral' "
                               "(counts need i0, the unattenuated counts)")
        return "counts"
    if quantity not in _lib.QUANTITIES:
        raise _lib.invalid(f"quantity={quantity!r}: 'counts' or 'line_integral'")
    if quantity == "counts" and i0 is None:
        raise _lib.invalid("i0: counts need i0, the unattenuated counts (a scalar, per view, per pixel or per "
                           "element)")
    return quantity


def _c_scan(projections: Any, geometry: Geometry, i0: Any, quantity: Optional[str], keep: list) -> _lib.Scan:
    """The C view of a scan. projections and i0 may be numpy, DLPack or CUDA arrays: their
    values are copied to float64 host arrays (the library reads scans in host memory)."""
    quantity = _quantity(i0, quantity)
    geom = c_geom(geometry, keep)
    proj = doubles(_arrays.to_host("projections", projections)[1], geometry.projection_shape, "projections")
    s = _lib.Scan(geom=geom, quantity=_lib.QUANTITIES.index(quantity), proj=double_ptr(proj))
    keep.append(proj)
    if i0 is not None:
        i0 = doubles(_arrays.to_host("i0", i0)[1])
        s.i0_shape, s.i0 = _i0_shape(i0, proj.shape), double_ptr(i0)
        keep.append(i0)
    return s


def _on_device(name: str, x: Any, like: _arrays.Array, shape: Optional[tuple] = None) -> _arrays.Array:
    """x as a C-contiguous float32 or float64 array on like's device, to be read in place: itself
    where it is one; a copy on that device where it has another dtype or layout; a copy from the
    host (through like's library) where it lies there, in float64, as the host route would read it."""
    a = _arrays.describe(name, x, sequences=True)
    if a.device >= 0 and a.device != like.device:
        raise _lib.invalid(f"{name}: {a}; the projections are in {like.where}: both on one GPU")
    if a.device < 0:  # host memory: the projections' library copies it up
        host = np.ascontiguousarray(_arrays.to_host(name, x)[1], dtype=np.float64)
        a = _arrays.describe(name, _arrays.home(name, like, host))
    want = _arrays.Want(tuple(shape if shape is not None else a.shape),
                        a.dtype if a.dtype in ("float32", "float64") else "float64", like.device)
    return a if want.takes(a) else _arrays.convert(name, a, want)


def _device_volume(handle: ctypes.c_void_p, like: _arrays.Array, shape: tuple) -> Any:
    """The volume as like's kind on like's device, written there by the library (no host copy)."""
    prec = _lib.lib.dbtr_recon_precision(handle)
    dd = prec == _lib.PREC_DD
    dtype = "float32" if prec == _lib.PREC_FLOAT else "float64"
    out = _arrays.empty("volume", like, tuple(shape) + ((2,) if dd else ()), dtype, like.device)
    _lib.check(_lib.lib.dbtr_recon_volume_device(handle, _arrays.describe("volume", out).ptr))
    if not dd:
        return out
    hi = out[..., 0]  # (hi, lo) pairs; hi is the value rounded to double
    return hi.contiguous() if like.lib == "torch" else _cupy().ascontiguousarray(hi)


def _cupy() -> Any:
    import cupy
    return cupy


def _open_device(projections: _arrays.Array, geometry: Geometry, grid: Grid, i0: Any, quantity: Optional[str],
                 opts: _lib.ReconOpts) -> ctypes.c_void_p:
    """dbtr_recon_open_device on projections in a GPU's memory (and i0 there too, or copied up)."""
    keep: list = []
    quantity = _quantity(i0, quantity)
    proj = _on_device("projections", projections.obj, projections, geometry.projection_shape)
    s = _lib.Scan(geom=c_geom(geometry, keep), quantity=_lib.QUANTITIES.index(quantity))
    prec = {"float32": _lib.PREC_FLOAT, "float64": _lib.PREC_DOUBLE}
    data = _lib.DeviceData(proj=proj.ptr, proj_type=prec[proj.dtype], device=projections.device)
    if i0 is not None:
        # The shape as given: a 0-d array may come back from its trip to the device as (1,).
        shape = _arrays.describe("i0", i0, sequences=True).shape
        s.i0_shape = _i0_shape(np.empty(shape, dtype=np.uint8), geometry.projection_shape)
        d = _on_device("i0", i0, projections)
        data.i0, data.i0_type = d.ptr, prec[d.dtype]
        keep.append(d)
    keep.append(proj)
    r = ctypes.c_void_p()
    _lib.check(_lib.lib.dbtr_recon_open_device(ctypes.byref(r), ctypes.byref(s), ctypes.byref(data),
                                               ctypes.byref(c_grid(grid)), ctypes.byref(opts)))
    return r


def _copy(ptr, shape: tuple) -> np.ndarray:
    n = int(np.prod(shape))
    return np.ctypeslib.as_array(ptr, (n,)).reshape(shape).copy()


def read_scan(path: str | os.PathLike) -> Scan:
    """Reads and checks a dbtr-scan file. Raises FormatError (naming the file and the dataset)
    for a file dbtr refuses, DbtrIOError for one it cannot read."""
    s = _lib.Scan()
    with _io_lock:
        _lib.check(_lib.lib.dbtr_scan_read(ctypes.byref(s), os.fsencode(path)))
    try:
        g = s.geom
        shape = (g.n_views, g.n_rows, g.n_cols)
        geometry = Geometry(*(_copy(getattr(g, f), (g.n_views, 3))
                              for f in ("source", "detector_center", "detector_u", "detector_v")),
                            detector_shape=(g.n_rows, g.n_cols))
        i0_shapes = {_lib.I0_SCALAR: (), _lib.I0_PER_VIEW: shape[:1], _lib.I0_PER_PIXEL: shape[1:],
                     _lib.I0_FULL: shape}
        i0 = _copy(s.i0, i0_shapes[s.i0_shape]) if s.i0_shape != _lib.I0_NONE else None
        grid = None
        if s.has_grid:
            v = s.grid
            grid = Grid((v.nx, v.ny, v.nz), (v.dx, v.dy, v.dz), tuple(v.origin))
        return Scan(_copy(s.proj, shape), geometry, _lib.QUANTITIES[s.quantity], i0, grid,
                    _lib.DTYPES[s.stored_dtype])
    finally:
        _lib.lib.dbtr_scan_free(ctypes.byref(s))


def write_scan(path: str | os.PathLike, scan: Scan, *, dtype: Optional[str] = None, gzip: int = 0) -> None:
    """Writes scan as a dbtr-scan file, through a temporary file renamed into place (an
    existing file is replaced). dtype: how to store the projections (default scan.dtype;
    integer types are rounded and saturated); gzip: 0 (none) to 9."""
    keep: list = []
    s = _c_scan(scan.projections, scan.geometry, scan.i0, scan.quantity, keep)
    if scan.grid is not None:
        s.has_grid, s.grid = 1, c_grid(scan.grid)
    dtype = dtype or scan.dtype
    if dtype not in _lib.DTYPES:
        raise _lib.invalid(f"dtype '{dtype}': expected one of {', '.join(_lib.DTYPES)}")
    opts = _lib.ScanWriteOpts(_lib.DTYPES.index(dtype), int(gzip))
    with _io_lock:
        _lib.check(_lib.lib.dbtr_scan_write(ctypes.byref(s), os.fsencode(path), ctypes.byref(opts)))


def _oneshot(volume: Any, geometry: Geometry, grid: Grid, backend: str, mode: Optional[str],
             precision: Optional[str], threads: int) -> Projector:
    """The projector forward and back build for one call: the CPU reference in the input's
    precision (float32 in, float; anything else, double) unless a path is named."""
    if precision is None and mode is None and backend == "cpu":
        dtype = getattr(volume, "dtype", None)
        precision = "float" if str(dtype).split(".")[-1] == "float32" else "double"
    return Projector(geometry, grid, backend=backend, mode=mode, precision=precision, threads=threads)


def forward(volume: Any, geometry: Geometry, grid: Grid, *, backend: str = "cpu", mode: Optional[str] = None,
            precision: Optional[str] = None, threads: int = 0) -> Any:
    """A volume: its line integrals A volume, (n_views, n_rows, n_cols), through a Projector
    built for this call (build one to project more than once). By default the CPU reference:
    float32 in, float32 out, anything else in float64. backend, mode, precision: as
    Projector's. The input is converted as needed (Projector's copy=True); the result is of
    its kind, in the projector's dtype. The result does not depend on threads (0: all)."""
    with _oneshot(volume, geometry, grid, backend, mode, precision, threads) as p:
        return p.forward(volume, copy=True)


def back(projections: Any, geometry: Geometry, grid: Grid, *, backend: str = "cpu", mode: Optional[str] = None,
         precision: Optional[str] = None, threads: int = 0) -> Any:
    """The exact transpose of forward: A^T projections, an (nz, ny, nx) volume, as forward."""
    with _oneshot(projections, geometry, grid, backend, mode, precision, threads) as p:
        return p.back(projections, copy=True)


@dataclass
class Progress:
    """What recon's callback receives after each iteration."""
    iteration: int     # 1-based
    iterations: int
    deviance: float    # Poisson deviance of the iteration's forward projections
    backend: str       # "cpu-float", "gpu:cpu-match", ...
    _current: Callable[[], Any] = field(repr=False)

    def volume(self) -> Any:
        """The volume after this iteration (a copy), while the callback runs: a numpy array, or
        where recon runs on the projections' GPU, the projections' kind there."""
        return self._current()


def _volume(handle: ctypes.c_void_p, shape: tuple) -> np.ndarray:
    prec = _lib.lib.dbtr_recon_precision(handle)
    if prec == _lib.PREC_DD:  # (hi, lo) pairs; hi is the value rounded to double
        pairs = np.empty(tuple(shape) + (2,), dtype=np.float64)
        _lib.check(_lib.lib.dbtr_recon_volume(handle, pairs.ctypes.data))
        return np.ascontiguousarray(pairs[..., 0])
    out = np.empty(shape, dtype=np.float32 if prec == _lib.PREC_FLOAT else np.float64)
    _lib.check(_lib.lib.dbtr_recon_volume(handle, out.ctypes.data))
    return out


def recon(projections: Any, geometry: Geometry, grid: Grid, *, i0: Any = None, quantity: Optional[str] = None,
          iterations: int = 10, subsets: int = 1, algorithm: Optional[str] = None, init: float | str = 0.0,
          backend: str = "auto", mode: str = "cpu-match", precision: Optional[str] = None, threads: int = 0,
          gpu_memory: int = 0, gpus: int = 1, fbp_cutoff: float = 0.0, fbp_slice: float = 0.0,
          callback: Optional[Callable[[Progress], None]] = None) -> Any:
    """ML-EM reconstruction, as `dbtr recon` does it, returning the (nz, ny, nx) volume in 1/mm:
    float32 when the backend computes in float, float64 in double.

    projections, i0: numpy arrays, or DLPack or CUDA arrays (CuPy, PyTorch): the volume comes
    back as the projections' kind on their device. CuPy and PyTorch projections on a GPU are
    reconstructed on that GPU where they lie, float32 or float64, C-contiguous (else converted
    there first), and the volume is written there: no data cross the bus, and the bits are those
    of the same values in numpy. Where that cannot be (backend="cpu", gpus other than 1,
    algorithm or init "fbp", another library's arrays) the library reconstructs from a float64
    copy in host memory and the volume is copied back (docs/python.md, "What is copied when").
    i0, quantity: counts need i0 (quantity defaults to "counts" when i0 is given); line
    integrals need quantity="line_integral" (without i0 and quantity, an InvalidArgument: counts
    must never pass for line integrals). algorithm: "transmission" (default for counts) or
    "emission" (default for line integrals), or "fbp": filtered back projection, no iterations
    (docs/fbp.md). init: uniform start value in 1/mm (0: estimated from the data), or "fbp":
    ML-EM starts from the FBP volume, values below 5e-8 /mm raised to it. fbp_cutoff: the Hann
    window's cut-off as a fraction of Nyquist (0: 1); fbp_slice: the slice-thickness filter's
    (0: none). backend: "cpu", "gpu" or "auto" (the GPU when one can be used: a RuntimeWarning
    says why not when it falls back). mode: the GPU floating-point mode (docs/modes.md).
    precision: "float", "double" or "dd" (the double-double referee) on the CPU (None: the
    mode's); dd results, on the CPU or with mode "dd", come back as float64, rounded to nearest.
    gpu_memory: bytes the GPU backend may take (0: what the GPU has free, less a margin; less
    than the problem needs gives the same bits in batches, docs/performance.md). gpus: GPUs to
    spread over (-1: all), with the bits of one. callback(progress) runs after each iteration;
    an exception it raises stops the reconstruction and propagates."""
    given = _arrays.describe("projections", projections, sequences=True)
    if not isinstance(iterations, int) or isinstance(iterations, bool) or iterations < 0:
        raise _lib.invalid(f"iterations={iterations!r}: a whole number, 0 or more")
    start = None
    if isinstance(init, str):
        if init != "fbp":
            raise _lib.invalid(f"init={init!r}: a start value in 1/mm, or 'fbp'")
        start, init = "fbp", 0.0
    enc = (lambda x: x.encode() if x is not None else None)
    opts = _lib.ReconOpts(int(subsets), None if algorithm is None else str(algorithm).encode(), float(init),
                          backend_opts(backend, mode, precision, threads, gpu_memory, gpus), enc(start),
                          _lib.FbpOpts(float(fbp_cutoff), float(fbp_slice)))
    on_device = (given.device >= 0 and given.lib in ("cupy", "torch") and backend != "cpu" and gpus in (0, 1)
                 and algorithm != "fbp" and start is None)
    if on_device:
        r = _open_device(given, geometry, grid, i0, quantity, opts)
    else:
        keep: list = []
        s, v = _c_scan(projections, geometry, i0, quantity, keep), c_grid(grid)
        r = ctypes.c_void_p()
        _lib.check(_lib.lib.dbtr_recon_open(ctypes.byref(r), ctypes.byref(s), ctypes.byref(v), ctypes.byref(opts)))
    running = True

    def current() -> Any:
        if not running:  # the handle is gone: its memory with it
            raise RuntimeError("dbtr: Progress.volume() is only valid during the callback")
        return _device_volume(r, given, grid.shape) if on_device else _volume(r, grid.shape)

    try:
        fallback = _lib.lib.dbtr_recon_fallback(r).decode()
        if fallback:
            warnings.warn(f"dbtr: {fallback}; running on the CPU", RuntimeWarning, stacklevel=2)
        name = _lib.lib.dbtr_recon_backend(r).decode()
        for it in range(1, 0 if algorithm == "fbp" else int(iterations) + 1):  # FBP: ready when opened
            dev = ctypes.c_double()
            _lib.check(_lib.lib.dbtr_recon_iterate(r, ctypes.byref(dev)))
            if callback is not None:
                callback(Progress(it, int(iterations), dev.value, name, current))
        return current() if on_device else _arrays.home("volume", given, _volume(r, grid.shape))
    finally:
        running = False
        _lib.lib.dbtr_recon_close(ctypes.byref(r))


def recon_file(scan_path: str | os.PathLike, out_path: str | os.PathLike, *, iterations: int = 10, subsets: int = 1, algorithm: Optional[str] = None,
               init: float = 0.0, backend: str = "auto", mode: str = "cpu-match", precision: Optional[str] = None,
               threads: int = 0, gpu_memory: int = 0, format: str = "float32", u16_scale: float = 0.0,
               dims: Optional[Sequence[float]] = None, voxel: Optional[Sequence[float]] = None,
               origin: Optional[Sequence[float]] = None, force: bool = False,
               log: Optional[str | os.PathLike] = None) -> str:
    """One scan file to one volume file, exactly as `dbtr recon SCAN -o OUT` makes it (the same
    bits), with its record appended to the JSON Lines file `log` when one is given
    (docs/scale-out.md). The unit a cluster maps over many scans: a top-level function of
    strings and numbers, so Dask and multiprocessing can pickle it. Returns "written", or
    "complete" when `log` records out_path as complete with these options (nothing is done).
    An existing out_path that the log does not record is replaced only with force=True. The
    GPU is the first the process sees: pin each worker to its own with CUDA_VISIBLE_DEVICES.
    dims, voxel, origin: the grid in place of the scan's /volume, in part or whole. Raises
    DbtrError naming the file on failure."""
    enc = (lambda x: os.fsencode(x) if x is not None else None)
    opts = _lib.ReconFileOpts()
    opts.recon = _lib.ReconOpts(int(subsets), enc(algorithm), float(init),
                                _lib.BackendOpts(enc(backend), enc(mode), enc(precision), int(threads),
                                                 int(gpu_memory), 1))
    opts.iterations, opts.format, opts.u16_scale = int(iterations), enc(format), float(u16_scale)
    opts.force, opts.log, opts.threads = int(bool(force)), enc(log), int(threads)
    for name, value in (("dims", dims), ("voxel", voxel), ("origin", origin)):
        if value is not None:
            if len(value) != 3:
                raise _lib.invalid(f"{name}: three values (x, y, z), not {value!r}")
            setattr(opts, name, (ctypes.c_double * 3)(*(float(x) for x in value)))
            setattr(opts, "has_" + name, 1)
    rc = _lib.lib.dbtr_recon_file(enc(os.fspath(scan_path)), enc(os.fspath(out_path)), ctypes.byref(opts))
    _lib.check(rc)
    return "complete" if rc == 1 else "written"


@dataclass(frozen=True)
class DiffStats:
    """How a path's array differs from its reference's: elements compared, elements whose
    bits differ, max and mean |difference|, max and median ULP distance, relative L2,
    elements whose 16-bit display values differ, elements more than 4 ulp apart, and max
    |difference| in ulps of the reference's largest magnitude (scale ulps)."""
    n: int
    n_differ: int
    max_abs: float
    mean_abs: float
    max_ulp: int
    median_ulp: int
    rel_l2: float
    n_differ_u16: int
    beyond_4ulp: int
    scale_ulp: float


@dataclass(frozen=True)
class RefereeStats:
    """How a path's array differs from the referee (the same algorithm in double-double):
    relative L2 against the referee rounded to double; max and median ULP distance, elements
    more than 4 ulp apart and max |difference| in ulps of the referee's largest magnitude, all
    against the referee correctly rounded to the path's precision; the best answer of that
    precision (the referee correctly rounded to it) as its relative L2 from the referee, and
    rel_l2 in units of it."""
    n: int
    rel_l2: float
    max_ulp: int
    median_ulp: int
    beyond_4ulp: int
    scale_ulp: float
    best: float
    best_units: float


@dataclass(frozen=True)
class QualityChange:
    """One test object's measures in a path's volume and in its reference's after one iteration,
    and the change (validate(quality=...), docs/validation.md "Quality"): CNR and contrast
    relative (%), the ASF FWHM absolute (mm). None: not finite, or (a change) not measurable,
    never a silent 0. focus: the in-focus slices, 0-based."""
    object: int
    focus: int
    focus_ref: int
    cnr: Optional[float]
    cnr_ref: Optional[float]
    dcnr_percent: Optional[float]
    fwhm: Optional[float]
    fwhm_ref: Optional[float]
    dfwhm_mm: Optional[float]
    contrast: Optional[float]
    contrast_ref: Optional[float]
    dcontrast_percent: Optional[float]


@dataclass(frozen=True)
class QualityExtreme:
    """The largest |change| of one measure: the signed change (None when none was measurable),
    the object (index) and iteration where it is, and how many changes were not measurable
    (one_sided: of them, where one volume has the value and the other not)."""
    change: Optional[float]
    object: Optional[int]
    iteration: Optional[int]
    not_measurable: int
    one_sided: int


@dataclass(frozen=True)
class QualityVerdict:
    """What `dbtr validate --quality` says of a path: per measure ("cnr", "fwhm", "contrast"),
    the largest change after the last iteration (last) and over every iteration (all)."""
    n_objects: int
    iterations: int
    last: dict
    all: dict


def _fs(p: Optional[str | os.PathLike]) -> Optional[bytes]:
    """A path for C, or None."""
    return None if p is None else os.fsencode(p)


def _finite(x: float) -> Optional[float]:
    return x if np.isfinite(x) else None


def _quality_change(c: _lib.QualityChange) -> QualityChange:
    vals = [_finite(v) for d in c.m for v in (d.value, d.ref, d.change)]
    return QualityChange(c.object, c.focus, c.focus_ref, *vals)


@dataclass(frozen=True)
class ValidationRow:
    """One path after one iteration against its reference: a row of `dbtr validate`. With the
    referee, vs_proj and vs_vol hold the path against it (else None), and referee names its
    backend ("cpu-dd" or "gpu:dd")."""
    iteration: int
    path: str
    reference: str
    explains: Optional[str]  # an --explain variant: the path whose difference it explains
    is_gpu: bool
    proj: DiffStats          # the forward projections (A mu)
    vol: DiffStats           # the volume
    deviance: float
    referee: Optional[str] = None
    vs_proj: Optional[RefereeStats] = None
    vs_vol: Optional[RefereeStats] = None
    quality: Optional[list] = None  # with quality: a QualityChange per test object


@dataclass
class Validation:
    """The rows of a validation, iteration by iteration, in path order."""
    rows: list

    @property
    def paths(self) -> list:
        return list(dict.fromkeys(r.path for r in self.rows))

    def first_difference(self, path: str) -> int:
        """The first iteration at which path differs from its reference (1-based); 0 when it
        is bitwise identical at every one."""
        return next((r.iteration for r in self.rows if r.path == path and (r.proj.n_differ or r.vol.n_differ)), 0)

    def quality_verdict(self, path: str) -> QualityVerdict:
        """With quality: the largest change of each measure of path's objects after the last
        iteration and over all, computed by libdbtr as `dbtr validate --quality` reports it."""
        rows = [r for r in self.rows if r.path == path]
        if not rows or rows[0].quality is None:
            raise _lib.invalid(f"quality_verdict: no quality changes of {path!r} (validate(quality=...))")
        n = len(rows[0].quality)
        changes = (_lib.QualityChange * (len(rows) * n))()
        nan = float("nan")
        for i, c in enumerate(q for r in rows for q in r.quality):
            vals = [nan if v is None else v for v in (c.cnr, c.cnr_ref, c.dcnr_percent, c.fwhm, c.fwhm_ref,
                                                      c.dfwhm_mm, c.contrast, c.contrast_ref, c.dcontrast_percent)]
            changes[i] = _lib.QualityChange(c.object, c.focus, c.focus_ref,
                                            (_lib.QualityDelta * 3)(*(_lib.QualityDelta(*vals[3 * k:3 * k + 3])
                                                                      for k in range(3))))
        v = _lib.QualityVerdict()
        _lib.lib.dbtr_quality_verdict_of(changes, n, len(rows), ctypes.byref(v))

        def ext(e: _lib.QualityExtreme) -> QualityExtreme:
            return QualityExtreme(e.change if e.found else None, e.object if e.found else None,
                                  e.iteration if e.found else None, e.not_measurable, e.one_sided)
        return QualityVerdict(v.n_objects, v.iterations,
                              {m: ext(v.last[k]) for k, m in enumerate(_lib.QUALITY_MEASURES)},
                              {m: ext(v.all[k]) for k, m in enumerate(_lib.QUALITY_MEASURES)})


def _stats(d: _lib.DiffStats) -> DiffStats:
    return DiffStats(*(getattr(d, f) for f, _ in _lib.DiffStats._fields_))


def _referee_stats(d: _lib.RefereeStats) -> RefereeStats:
    return RefereeStats(*(getattr(d, f) for f, _ in _lib.RefereeStats._fields_))


def gpu_available() -> Optional[str]:
    """The name of the GPU dbtr can use, or None (no GPU, or a libdbtr built without CUDA)."""
    name = ctypes.create_string_buffer(256)
    return name.value.decode() if _lib.lib.dbtr_gpu_available(name, 256) else None


def modes() -> list:
    """The GPU floating-point modes ("fast", "ieee", "cpu-match", "double", "double-match", and
    "dd", the double-double referee)."""
    out, i = [], 0
    while (m := _lib.lib.dbtr_mode_name(i)) is not None:
        out.append(m.decode())
        i += 1
    return out


@dataclass(frozen=True)
class ModeInfo:
    """A row of the mode table (docs/modes.md): a path dbtr computes on."""
    name: str                     # "fast", "cpu-match+fma", "cpu-float", "cpu-dd", ...
    precision: str                # "float", "double" or "dd"
    gpu: bool                     # a GPU mode or variant; False: the CPU reference
    variant: bool                 # a single-change variant that validate's explain runs
    threads: int                  # CPU paths: 1 for cpu-1-thread, else 0 (all)
    bitwise_class: Optional[str]  # the CPU path whose bits it gives bit for bit, or None


def mode_table() -> list:
    """Every row of the mode table, in its order: the GPU modes users pick, their explain
    variants, then the CPU reference's paths; read from libdbtr (dbtr_mode_at), the one home of
    the modes, so it is the table the library was built with."""
    out, i = [], 0
    while (p := _lib.lib.dbtr_mode_at(i)):
        r = p.contents
        out.append(ModeInfo(r.name.decode(), ("float", "double", "dd")[r.precision], bool(r.gpu), bool(r.variant),
                            r.threads, r.bitwise_class.decode() if r.bitwise_class else None))
        i += 1
    return out


def validate(projections: Any, geometry: Geometry, grid: Grid, *, i0: Any = None, quantity: Optional[str] = None,
             iterations: int = 6, subsets: int = 1, paths: Optional[Sequence[str]] = None, lockstep: bool = False,
             explain: bool = False, threads: int = 0, gpu_memory: int = 0, gpus: int = 1, referee: bool = False,
             quality: Optional[str | os.PathLike] = None, quality_regions: Optional[str | os.PathLike] = None,
             callback: Optional[Callable[[ValidationRow], None]] = None) -> Validation:
    """Runs the CPU references and the paths side by side, as `dbtr validate` does, and returns
    every row. paths: GPU modes and the CPU paths "cpu-1-thread", "cpu-float" and "cpu-double"
    (default: every mode with a GPU, cpu-1-thread and cpu-float without). gpu_memory, gpus: as
    recon's, for each GPU path. referee: also run the double-double referee (on the GPU where
    there is one, else the CPU; not with lockstep) and give each row's vs_proj and vs_vol.
    quality: the phantom scan file whose test objects (/phantom) to measure, as the command's
    --quality (the arrays carry no objects, so the file is named); quality_regions: a regions
    file instead (--quality-regions). Each row then carries a QualityChange per object, and
    Validation.quality_verdict(path) sums them up. callback(row) sees each row as it is measured; an exception it raises is raised when the
    run ends."""
    if paths is None:
        paths = modes() if gpu_available() else ["cpu-1-thread", "cpu-float"]
    keep: list = []
    s, v = _c_scan(projections, geometry, i0, quantity, keep), c_grid(grid)
    names = (ctypes.c_char_p * len(paths))(*(p.encode() for p in paths))
    opts = _lib.ValidationOpts(names, len(paths), int(iterations), int(subsets), int(lockstep), int(explain),
                               int(threads), int(gpu_memory), int(gpus), int(bool(referee)), _fs(quality),
                               _fs(quality_regions))
    rows: list = []
    errors: list = []

    def on_row(_user, row_p) -> None:
        try:
            r = row_p.contents
            vs = r.has_referee
            row = ValidationRow(r.iteration, r.path.decode(), r.reference.decode(),
                                r.explains.decode() if r.explains else None, bool(r.is_gpu), _stats(r.proj),
                                _stats(r.vol), r.deviance, r.referee.decode() if vs else None,
                                _referee_stats(r.vs_proj) if vs else None, _referee_stats(r.vs_vol) if vs else None,
                                [_quality_change(r.quality[j]) for j in range(r.n_quality)] if r.quality else None)
            rows.append(row)
            if callback is not None:
                callback(row)
        except BaseException as e:  # noqa: BLE001 (C cannot carry it: raised after the run)
            errors.append(e)

    # The quality scan's objects are read from HDF5 as the run opens.
    with _io_lock if quality is not None else contextlib.nullcontext():
        _lib.check(_lib.lib.dbtr_validation_run(ctypes.byref(s), ctypes.byref(v), ctypes.byref(opts),
                                                _lib.ROW_FN(on_row), None))
    if errors:
        raise errors[0]
    return Validation(rows)


def quality(volume: Any, grid: Grid, *, scan: Optional[str | os.PathLike] = None,
            regions: Optional[str | os.PathLike] = None) -> dict:
    """Per object, what a physicist measures on volume ((nz, ny, nx) float32 or float64 on
    grid): the in-focus slice, contrast, CNR and the artifact spread function with its FWHM in
    mm (docs/quality.md). The objects are the phantom scan's (its /phantom group) or the
    regions of a JSON file given by hand: exactly one of scan and regions. Returns what
    `dbtr quality --report` writes as quality.json, parsed: non-finite numbers are None."""
    a = np.asarray(volume)
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float32)
    a = np.ascontiguousarray(a)
    if a.shape != grid.shape:
        raise _lib.invalid(f"volume: shape {a.shape}, expected {grid.shape}")
    if (scan is None) == (regions is None):
        raise _lib.invalid("quality: give exactly one of scan and regions")
    prec = _lib.PREC_FLOAT if a.dtype == np.float32 else _lib.PREC_DOUBLE
    g = c_grid(grid)
    text = ctypes.c_void_p()
    with _io_lock:  # the objects are read from HDF5
        _lib.check(_lib.lib.dbtr_quality_json(a.ctypes.data, prec, ctypes.byref(g), _fs(scan), _fs(regions),
                                              ctypes.byref(text)))
    try:
        return json.loads(ctypes.string_at(text).decode())
    finally:
        _lib.lib.dbtr_quality_json_free(ctypes.byref(text))
