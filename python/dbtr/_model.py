"""The geometry and the grid, checked in Python (naming the parameter and the field) and
turned into the C structs of include/dbtr.h."""

from __future__ import annotations

import ctypes
import math
import numbers
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from . import _lib


@dataclass
class Geometry:
    """Per-view vectors, each (n_views, 3) float64 in mm, and the detector's (n_rows, n_cols).
    The centre of pixel (r, c) of view k is
    detector_center[k] + (c - (n_cols-1)/2) detector_u[k] + (r - (n_rows-1)/2) detector_v[k]."""
    source: np.ndarray
    detector_center: np.ndarray
    detector_u: np.ndarray
    detector_v: np.ndarray
    detector_shape: tuple[int, int]

    @property
    def n_views(self) -> int:
        return int(np.shape(self.source)[0])

    @property
    def projection_shape(self) -> tuple[int, int, int]:
        """The projection array's shape, (n_views, n_rows, n_cols)."""
        rows, cols = self.detector_shape
        return (self.n_views, int(rows), int(cols))


@dataclass
class Grid:
    """The reconstruction grid: voxel counts (nx, ny, nz), voxel size (dx, dy, dz) in mm, and
    the centre of voxel (0, 0, 0) in mm."""
    dims: tuple[int, int, int]
    voxel_size: tuple[float, float, float]
    origin: tuple[float, float, float]

    @property
    def shape(self) -> tuple[int, int, int]:
        """The volume array's shape, (nz, ny, nx)."""
        nx, ny, nz = self.dims
        return (int(nz), int(ny), int(nx))


GEOMETRY_FIELDS = ("source", "detector_center", "detector_u", "detector_v")


def _three(name: str, value: Any, kind: str) -> tuple:
    """value as three numbers of kind "count" (positive integers), "size" (positive, finite) or
    "point" (finite), or an InvalidArgument naming name."""
    try:
        items = tuple(value)
    except TypeError:
        items = ()
    if len(items) != 3 or not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in items):
        raise _lib.invalid(f"{name}: three numbers (x, y, z), not {value!r}")
    if kind == "count":
        if not all(isinstance(v, numbers.Integral) and v > 0 for v in items):
            raise _lib.invalid(f"{name}: {value!r}: three positive integers (x, y, z)")
        return tuple(int(v) for v in items)
    out = tuple(float(v) for v in items)
    if not all(math.isfinite(v) and (kind == "point" or v > 0) for v in out):
        raise _lib.invalid(f"{name}: {value!r}: three {'positive, finite' if kind == 'size' else 'finite'} numbers")
    return out


def check_grid(grid: Any, name: str = "grid") -> None:
    """Raises TypeError unless grid is a Grid, InvalidArgument naming the field it refuses."""
    if not isinstance(grid, Grid):
        raise TypeError(f"{name}: a dbtr.Grid(dims=(nx, ny, nz), voxel_size=(dx, dy, dz), origin=(x, y, z)), "
                        f"not a {type(grid).__name__}")
    _three(f"{name}.dims", grid.dims, "count")
    _three(f"{name}.voxel_size", grid.voxel_size, "size")
    _three(f"{name}.origin", grid.origin, "point")


def check_geometry(geometry: Any, name: str = "geometry") -> None:
    """Raises TypeError unless geometry is a Geometry, InvalidArgument naming the field it
    refuses (the C library checks what the vectors describe: rays, angles, the grid's place)."""
    if not isinstance(geometry, Geometry):
        raise TypeError(f"{name}: a dbtr.Geometry (dbtr.read_scan(path).geometry, or four (n_views, 3) arrays and "
                        f"the detector's (n_rows, n_cols)), not a {type(geometry).__name__}")
    n = np.shape(geometry.source)[0] if np.ndim(geometry.source) == 2 else None
    for f in GEOMETRY_FIELDS:
        a = getattr(geometry, f)
        if np.shape(a) != (n, 3) or n == 0:
            raise _lib.invalid(f"{name}.{f}: shape {np.shape(a)}, expected (n_views, 3) with n_views "
                               f"{'as geometry.source has, ' + str(n) if n else '> 0'}")
        if not np.all(np.isfinite(np.asarray(a, dtype=np.float64))):
            raise _lib.invalid(f"{name}.{f}: not every value is finite")
    shape = geometry.detector_shape
    if (not isinstance(shape, (tuple, list)) or len(shape) != 2 or
            not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) and v > 0 for v in shape)):
        raise _lib.invalid(f"{name}.detector_shape: {shape!r}: two positive integers (n_rows, n_cols)")


def doubles(a: Any, shape: Optional[tuple] = None, what: str = "array") -> np.ndarray:
    """a as a C-ordered float64 numpy array (copied only when it is not one), of shape if given."""
    out = np.asarray(a, dtype=np.float64, order="C")
    if shape is not None and out.shape != tuple(shape):
        raise _lib.invalid(f"{what}: shape {out.shape}, expected {tuple(shape)}")
    return out


def double_ptr(a: np.ndarray) -> Any:
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


def c_geom(g: Geometry, keep: list) -> _lib.Geom:
    """The C view of g, checked; the arrays it points at are appended to keep, which must
    outlive it."""
    check_geometry(g)
    n = g.n_views
    arrays = [doubles(getattr(g, f), (n, 3), f"geometry.{f}") for f in GEOMETRY_FIELDS]
    keep.extend(arrays)
    rows, cols = (int(x) for x in g.detector_shape)
    return _lib.Geom(n, rows, cols, *(double_ptr(a) for a in arrays))


def c_grid(g: Grid) -> _lib.Grid:
    check_grid(g)
    nx, ny, nz = (int(x) for x in g.dims)
    dx, dy, dz = (float(x) for x in g.voxel_size)
    return _lib.Grid(nx, ny, nz, dx, dy, dz, (ctypes.c_double * 3)(*(float(x) for x in g.origin)))
