"""dbtr.Projector on the CPU: the bits of `dbtr project`, arrays of numpy and of a DLPack
producer read and written in place, the refusals that name what they refuse, and the adjoint
(tests/python.cmake runs each test as its own CTest entry, label cpu)."""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest
import tifffile
from helpers import as_double, check_adjoint

import dbtr
from dbtr import _arrays


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


class Producer:
    """A host array known only through DLPack, as a library other than numpy exports one."""

    def __init__(self, a: np.ndarray):
        self.a = a

    def __dlpack__(self, stream=None):
        assert stream is None, "a host array takes no stream"
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def as_type(x: np.ndarray, p: dbtr.Projector) -> np.ndarray:
    """x (float64 values) in the projector's element type: dd as (x, 0) pairs."""
    return np.stack([x, np.zeros_like(x)], -1) if p.precision == "dd" else x.astype(p.dtype)


@pytest.mark.parametrize("precision", ["float", "double", "dd"])
def test_projector_equals_cli_project(cli, tiny, tmp_path, precision):
    """`dbtr project --backend cpu --precision P` projects the float TIFF in P and stores float32;
    Projector(precision=P).forward of the same voxels, rounded to float32 (dd through double,
    as the command converts it), is those bits."""
    cli("project", tiny / "truth.tif", "--geometry", tiny / "scan.h5", "-o", tmp_path / "p.h5", "--backend", "cpu",
        "--precision", precision)
    s = dbtr.read_scan(tiny / "scan.h5")
    truth = tifffile.imread(str(tiny / "truth.tif"))
    with dbtr.Projector(s.geometry, s.grid, backend="cpu", precision=precision) as p:
        assert p.backend == f"cpu-{precision}" and p.device == -1
        mine = as_double(p.forward(as_type(truth.astype(np.float64), p)), precision).astype(np.float32)
    theirs = dbtr.read_scan(tmp_path / "p.h5").projections.astype(np.float32)
    assert same_bits(mine, theirs)


def test_projector_reuse_properties_and_close(tiny):
    s = dbtr.read_scan(tiny / "scan.h5")
    x = np.random.default_rng(1).uniform(0, 0.05, s.grid.shape)
    with dbtr.Projector(s.geometry, s.grid, backend="cpu", precision="double", threads=1) as p:
        assert (p.backend, p.precision, p.dtype, p.device) == ("cpu-double", "double", "float64", -1)
        assert p.shape_volume == (24, 80, 128) and p.shape_projections == (9, 80, 128)
        first, second = p.forward(x), p.forward(x)
        assert same_bits(first, second)
        assert same_bits(first, dbtr.forward(x, s.geometry, s.grid))  # the wrapper: one projector a call
        assert same_bits(p.back(first), dbtr.back(first, s.geometry, s.grid))
    with pytest.raises(ValueError, match="after close"):
        p.forward(x)
    p.close()  # closing twice is safe
    dd = dbtr.Projector(s.geometry, s.grid, backend="cpu", precision="dd")
    assert dd.shape_volume == (24, 80, 128, 2) and dd.dtype == "float64"


def test_projector_dlpack_producer_in_place(tiny):
    """A host DLPack producer is read in place and gives numpy's bits; out= of one is written
    in place; numpy.from_dlpack's (read-only) view is read as any numpy array."""
    s = dbtr.read_scan(tiny / "scan.h5")
    p = dbtr.Projector(s.geometry, s.grid, backend="cpu", precision="float")
    x = np.random.default_rng(2).uniform(0, 0.05, s.grid.shape).astype(np.float32)
    want = p.forward(x)
    got = p.forward(Producer(x))
    assert isinstance(got, np.ndarray) and same_bits(got, want)
    assert same_bits(p.forward(np.from_dlpack(Producer(x))), want)
    buf = np.zeros(p.shape_projections, np.float32)
    out = Producer(buf)
    assert p.forward(x, out=out) is out and same_bits(buf, want)
    vol = np.zeros(p.shape_volume, np.float32)
    p.back(Producer(want), out=Producer(vol))
    assert same_bits(vol, p.back(want))


def test_dlpack_capsule_read_and_freed_once():
    """The capsule reader sees numpy's own pointer, shape, dtype and strides (in elements), and
    the capsule's deleter runs once it is dropped: numpy's manager holds a reference to the
    array until then, and gives it back (no leak; a second free would take one too many)."""
    a = np.arange(24.0).reshape(2, 3, 4)
    view = a[:, ::2, 1:]
    before = sys.getrefcount(a)
    d = _arrays.describe("x", Producer(view))
    assert (d.ptr, d.shape, d.dtype, d.device, d.strides) == (view.ctypes.data, (2, 2, 3), "float64", -1, (12, 8, 1))
    assert not d.contiguous and not d.readonly
    del d
    gc.collect()
    assert sys.getrefcount(a) == before


def test_projector_refuses_naming_the_array_and_copy_converts(tiny):
    s = dbtr.read_scan(tiny / "scan.h5")
    p = dbtr.Projector(s.geometry, s.grid, backend="cpu", precision="double")
    x = np.random.default_rng(3).uniform(0, 0.05, s.grid.shape)
    with pytest.raises(dbtr.InvalidArgument, match=r"volume: a numpy array of shape \(24, 80, 128\), dtype float32, "
                                                   r"in host memory, strides C-contiguous; .*copy=True"):
        p.forward(x.astype(np.float32))
    fortran = np.asfortranarray(x)
    with pytest.raises(dbtr.InvalidArgument, match=r"volume: .* strides \(1, 24, 1920\) \(elements\)"):
        p.forward(fortran)
    assert same_bits(p.forward(fortran, copy=True), p.forward(x))
    assert same_bits(p.forward(x.astype(np.float32), copy=True), p.forward(x.astype(np.float32).astype(np.float64)))
    with pytest.raises(dbtr.InvalidArgument, match="not shape"):
        p.forward(x[1:], copy=True)
    with pytest.raises(TypeError, match="volume: a builtins.list is not an array"):
        p.forward([1.0, 2.0])
    proj = p.forward(x)
    with pytest.raises(dbtr.InvalidArgument, match=r"out: a numpy array of shape \(9, 80, 128\), dtype float32"):
        p.forward(x, out=np.empty(p.shape_projections, np.float32))
    ro = np.empty(p.shape_projections)
    ro.flags.writeable = False
    with pytest.raises(dbtr.InvalidArgument, match="out: .* read-only"):
        p.forward(x, out=ro)
    # One buffer holding the volume and, overlapping its end, the projections.
    nv, n_proj = x.size, proj.size
    buf = np.zeros(nv + n_proj)
    vol = buf[:nv].reshape(x.shape)
    vol[...] = x
    with pytest.raises(dbtr.InvalidArgument, match="out: shares memory with volume"):
        p.forward(vol, out=buf[nv - 8:nv - 8 + n_proj].reshape(proj.shape))
    out = np.empty(p.shape_projections)
    assert p.forward(x, out=out) is out and same_bits(out, proj)


@pytest.mark.parametrize("precision", ["float", "double", "dd"])
def test_projector_adjoint_cpu(tiny, precision):
    """<A x, y> = <x, A^T y> within the bound helpers.adjoint_bound derives for this precision
    and geometry (the tiny system: 24 slices, 9 views, at most 3 x 3 pixels per voxel and
    view; 4.4e-5 in float, 8.1e-14 in double)."""
    s = dbtr.read_scan(tiny / "scan.h5")
    check_adjoint(dbtr.Projector(s.geometry, s.grid, backend="cpu", precision=precision), s.geometry, s.grid)
