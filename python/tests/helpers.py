"""What several test files share: a small problem for gradcheck, the adjoint test's inner
products and its bound, derived per mode."""

from __future__ import annotations

import math

import numpy as np

import dbtr


def small_problem() -> tuple:
    """3 views from 150 mm above a 10 x 8 detector of 1 mm pixels, a 6 x 4 x 3 grid of 1 x 1 x
    2 mm just above it: 240 projection values and 72 voxels, small enough for gradcheck's
    Jacobian (one projection per column)."""
    xs = np.array([-30.0, 0.0, 30.0])
    n = len(xs)
    g = dbtr.Geometry(np.stack([xs, np.zeros(n), np.full(n, 150.0)], 1), np.tile([0.0, 4.0, 0.0], (n, 1)),
                      np.tile([1.0, 0.0, 0.0], (n, 1)), np.tile([0.0, 1.0, 0.0], (n, 1)), (8, 10))
    return g, dbtr.Grid((6, 4, 3), (1.0, 1.0, 2.0), (-2.5, 2.5, 3.0))


def as_double(a: np.ndarray, precision: str) -> np.ndarray:
    """A projector's array in float64: a dd array's (hi, lo) pairs rounded to double (hi, the
    pair being normalised)."""
    return np.asarray(a[..., 0] if precision == "dd" else a, dtype=np.float64)


def inner(a: np.ndarray, b: np.ndarray) -> float:
    """<a, b>: each product rounded once in double (exact for float32 operands), summed by
    math.fsum, correctly rounded: 2 roundings of 2^-53 at most on any term."""
    return math.fsum((np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)).ravel())


def adjoint_bound(geometry: dbtr.Geometry, grid: dbtr.Grid, precision: str) -> float:
    """How far <A x, y> / <x, A^T y> may lie from 1 for x, y >= 0 (tests/test_projector.c's
    check_adjoint): both sides sum the same products a_ij x_j y_i, all >= 0, in different
    orders, so each is within gamma_m = m u / (1 - m u) of the exact sum and they differ by at
    most twice that, where m bounds the roundings on any one term's path: a ray sum has nz
    slices of 4 corner products (5 operations each) and one multiply by the length; a voxel's
    gather sums, per view, the pixels whose rays cross its bilinear support (2 x 2 voxels,
    open), 3 operations each; and `inner` adds 2 (3 for dd, whose pairs are first rounded to
    double). The rays through pixel centres cut a slice at z at the pixel pitch scaled by
    (z_source - z) / (z_source - z_detector): at most ceil(2 dx / that) of them cross the
    support along x, likewise along y. u: the unit roundoff of the mode's type; double's for dd,
    whose results are compared rounded to double."""
    src_z = np.asarray(geometry.source)[:, 2]
    det_z = np.asarray(geometry.detector_center)[:, 2]
    z_top = grid.origin[2] + grid.voxel_size[2] * (grid.dims[2] - 0.5)
    shrink = float(np.min((src_z - z_top) / (src_z - det_z)))
    pitch_u = float(np.min(np.linalg.norm(geometry.detector_u, axis=1))) * shrink
    pitch_v = float(np.min(np.linalg.norm(geometry.detector_v, axis=1))) * shrink
    pixels = math.ceil(2 * grid.voxel_size[0] / pitch_u) * math.ceil(2 * grid.voxel_size[1] / pitch_v)
    m = grid.dims[2] * 5 + 1 + geometry.n_views * pixels * 3 + (3 if precision == "dd" else 2)
    u = 2.0 ** -24 if precision == "float" else 2.0 ** -53
    return 2 * m * u / (1 - m * u)


def check_adjoint(p: dbtr.Projector, geometry: dbtr.Geometry, grid: dbtr.Grid, forward=None, back=None) -> None:
    """The dot-product test of p (or of forward and back given as functions of numpy arrays)
    on uniform random x, y in [0.5, 1.5): within adjoint_bound."""
    rng = np.random.default_rng(27)
    xd, yd = rng.uniform(0.5, 1.5, grid.shape), rng.uniform(0.5, 1.5, geometry.projection_shape)
    if p.precision == "dd":
        x, y = np.stack([xd, np.zeros_like(xd)], -1), np.stack([yd, np.zeros_like(yd)], -1)
    else:  # the inner products take the inputs as rounded to the projector's type
        x, y = xd.astype(p.dtype), yd.astype(p.dtype)
        xd, yd = x.astype(np.float64), y.astype(np.float64)
    ax = (forward or p.forward)(x)
    aty = (back or p.back)(y)
    lhs, rhs = inner(as_double(ax, p.precision), yd), inner(xd, as_double(aty, p.precision))
    bound = adjoint_bound(geometry, grid, p.precision)
    assert lhs > 0, "the rays do not cross the grid"
    assert abs(lhs - rhs) <= bound * lhs, f"{p.backend}: {abs(lhs - rhs) / lhs:.3g} beyond {bound:.3g}"
