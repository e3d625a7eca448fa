"""The package protects its user (issue 27, item 5): counts never pass for line integrals,
messages name Python parameters, the grid and the geometry are checked, and the public names,
hints and py.typed are there."""

from __future__ import annotations

import inspect
import typing
from pathlib import Path

import numpy as np
import pytest

import dbtr


def test_counts_without_i0_is_an_error(tiny):
    """Counts given as line integrals would reconstruct to nonsense (max 1924 /mm instead of
    0.065) with no error: without i0 the caller must say quantity='line_integral'."""
    s = dbtr.read_scan(tiny / "scan.h5")
    with pytest.raises(dbtr.InvalidArgument, match="quantity: without i0, say what the projections are"):
        dbtr.recon(s.projections, s.geometry, s.grid, backend="cpu", iterations=1)
    with pytest.raises(dbtr.InvalidArgument, match="i0: counts need i0"):
        dbtr.recon(s.projections, s.geometry, s.grid, quantity="counts", backend="cpu", iterations=1)
    with pytest.raises(dbtr.InvalidArgument, match="quantity: without i0"):
        dbtr.validate(s.projections, s.geometry, s.grid, iterations=1, paths=["cpu-float"])
    li = dbtr.read_scan(tiny / "li.h5")
    vol = dbtr.recon(li.projections, li.geometry, li.grid, quantity="line_integral", backend="cpu", iterations=1)
    assert vol.shape == li.grid.shape


def test_messages_use_python_names(tiny):
    s = dbtr.read_scan(tiny / "scan.h5")
    with pytest.raises(dbtr.InvalidArgument) as e:
        dbtr.recon(s.projections, s.geometry, s.grid, i0=s.i0, subsets=10, backend="cpu")
    assert str(e.value).startswith("subsets=10: must be") and "--" not in str(e.value)
    with pytest.raises(dbtr.InvalidArgument, match="referee=True") as e:
        dbtr.validate(s.projections, s.geometry, s.grid, i0=s.i0, iterations=1, paths=["dd"])
    assert "--" not in str(e.value)
    with pytest.raises(dbtr.InvalidArgument, match="gpu_memory=-1"):
        dbtr.Projector(s.geometry, s.grid, gpu_memory=-1)
    with pytest.raises(TypeError, match="mode: a string or None, not int"):
        dbtr.Projector(s.geometry, s.grid, mode=3)
    if not dbtr.gpu_available():
        with pytest.raises(dbtr.NoGpuError) as e:
            dbtr.Projector(s.geometry, s.grid, backend="gpu")
        assert "--" not in str(e.value), e.value


def test_grid_is_checked(tiny):
    s = dbtr.read_scan(tiny / "scan.h5")
    x = np.zeros(s.grid.shape)
    with pytest.raises(TypeError, match="grid: a dbtr.Grid.*not a tuple"):
        dbtr.forward(x, s.geometry, (128, 80, 24))
    with pytest.raises(TypeError, match="grid: a dbtr.Grid"):
        dbtr.recon(s.projections, s.geometry, ((128, 80, 24), (1, 1, 2), (0, 0, 0)), i0=s.i0)
    bad = [(dbtr.Grid((128, 80), (1, 1, 2), (0, 0, 0)), r"grid.dims: three numbers"),
           (dbtr.Grid((128, 80, 2.5), (1, 1, 2), (0, 0, 0)), r"grid.dims: .*positive integers"),
           (dbtr.Grid((128, 80, 24), (1, -1, 2), (0, 0, 0)), r"grid.voxel_size: .*positive, finite"),
           (dbtr.Grid((128, 80, 24), (1, 1, 2), (0, float("nan"), 0)), r"grid.origin: .*finite")]
    for grid, message in bad:
        with pytest.raises(dbtr.InvalidArgument, match=message):
            dbtr.Projector(s.geometry, grid)


def test_geometry_is_checked(tiny):
    s = dbtr.read_scan(tiny / "scan.h5")
    g = s.geometry
    with pytest.raises(TypeError, match="geometry: a dbtr.Geometry"):
        dbtr.Projector((g.source, g.detector_center), s.grid)
    cases = [(dict(detector_u=g.detector_u[:4]), r"geometry.detector_u: shape \(4, 3\), expected \(n_views, 3\)"),
             (dict(source=g.source[:, :2]), r"geometry.source: shape \(9, 2\)"),
             (dict(detector_v=np.where(np.eye(9, 3) > 0, np.inf, g.detector_v)), "geometry.detector_v: not every"),
             (dict(detector_shape=(80,)), r"geometry.detector_shape: \(80,\): two positive integers")]
    for change, message in cases:
        bad = dbtr.Geometry(**{**vars(g), **change})
        with pytest.raises(dbtr.InvalidArgument, match=message):
            dbtr.Projector(bad, s.grid)


def test_public_names_hints_and_py_typed():
    """dir(dbtr) is __all__ (no np, os, ctypes); every public function and method has a hint on
    each parameter and on its result; the package ships py.typed (PEP 561)."""
    assert set(dir(dbtr)) == set(dbtr.__all__)
    assert not {"np", "os", "ctypes", "warnings"} & set(dir(dbtr))
    callables = []
    for name in dbtr.__all__:
        obj = getattr(dbtr, name)
        if inspect.isfunction(obj):
            callables.append(obj)
        elif inspect.isclass(obj) and obj.__module__.startswith("dbtr"):
            callables += [f for n, f in vars(obj).items() if inspect.isfunction(f) and (not n.startswith("_")
                                                                                       or n == "__init__")]
    assert dbtr.Projector.forward in callables and dbtr.recon in callables
    for f in callables:
        hints = typing.get_type_hints(f)
        params = [n for n in inspect.signature(f).parameters if n != "self"]
        missing = [n for n in params + ["return"] if n not in hints]
        assert not missing, f"{f.__qualname__}: no hint on {missing}"
    assert (Path(dbtr.__file__).parent / "py.typed").is_file()
