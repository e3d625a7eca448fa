"""dbtr.Projector and dbtr.torch on a GPU, with CuPy and PyTorch CUDA arrays (label gpu; each
test skips, exit 77, where no GPU can be used or CuPy or torch is missing)."""

from __future__ import annotations

import numpy as np
import pytest
import tifffile
from helpers import as_double, check_adjoint, small_problem

import dbtr

pytestmark = pytest.mark.skipif(not dbtr.gpu_available(), reason="no CUDA GPU can be used (or libdbtr was built "
                                                                  "without CUDA)")

# The GPU modes and the CPU path each gives bit for bit (docs/modes.md).
CPU_CLASS = {r.name: r.bitwise_class for r in dbtr.mode_table() if r.gpu and not r.variant}


def modes() -> list:
    return dbtr.modes() if dbtr.gpu_available() else []


def as_type(x: np.ndarray, p: dbtr.Projector) -> np.ndarray:
    return np.stack([x, np.zeros_like(x)], -1) if p.precision == "dd" else x.astype(p.dtype)


class CudaOnly:
    """A CUDA array known only through __cuda_array_interface__ (as Numba's), with a stream."""

    def __init__(self, a):
        self.a = a

    @property
    def __cuda_array_interface__(self):
        return self.a.__cuda_array_interface__


@pytest.mark.parametrize("mode", modes())
def test_gpu_projector_equals_cli_project(cli, tiny, tmp_path, mode):
    """Projector(mode) on CuPy arrays, zero-copy, gives `dbtr project --backend gpu --mode`'s
    bits (stored float32; dd through double, as the command converts it); back as the same
    projector's on host arrays."""
    cp = pytest.importorskip("cupy")
    cli("project", tiny / "truth.tif", "--geometry", tiny / "scan.h5", "-o", tmp_path / "p.h5", "--backend", "gpu",
        "--mode", mode)
    s = dbtr.read_scan(tiny / "scan.h5")
    truth = tifffile.imread(str(tiny / "truth.tif")).astype(np.float64)
    p = dbtr.Projector(s.geometry, s.grid, backend="gpu", mode=mode)
    assert p.backend == f"gpu:{mode}" and p.device == 0
    got = p.forward(cp.asarray(as_type(truth, p)))
    assert isinstance(got, cp.ndarray) and got.device.id == 0
    mine = as_double(got.get(), p.precision).astype(np.float32)
    assert mine.tobytes() == dbtr.read_scan(tmp_path / "p.h5").projections.astype(np.float32).tobytes()
    y = as_type(np.random.default_rng(6).uniform(0, 1, s.geometry.projection_shape), p)
    assert p.back(cp.asarray(y)).get().tobytes() == p.back(y).tobytes()


@pytest.mark.parametrize("mode", [m for m in modes() if CPU_CLASS.get(m)])
def test_gpu_match_modes_equal_cpu(tiny, mode):
    """cpu-match, double-match and dd give their CPU class's bits, forward and back, through
    CuPy arrays."""
    cp = pytest.importorskip("cupy")
    s = dbtr.read_scan(tiny / "scan.h5")
    gpu = dbtr.Projector(s.geometry, s.grid, backend="gpu", mode=mode)
    cpu = dbtr.Projector(s.geometry, s.grid, backend="cpu", precision=gpu.precision)
    assert cpu.backend == CPU_CLASS[mode]
    rng = np.random.default_rng(7)
    x = as_type(rng.uniform(0, 0.05, s.grid.shape), gpu)
    y = as_type(rng.uniform(0, 1, s.geometry.projection_shape), gpu)
    assert gpu.forward(cp.asarray(x)).get().tobytes() == cpu.forward(x).tobytes()
    assert gpu.back(cp.asarray(y)).get().tobytes() == cpu.back(y).tobytes()


@pytest.mark.parametrize("mode", modes())
def test_gpu_adjoint(tiny, mode):
    """The dot-product test per GPU mode, on CuPy arrays, within helpers.adjoint_bound."""
    cp = pytest.importorskip("cupy")
    s = dbtr.read_scan(tiny / "scan.h5")
    p = dbtr.Projector(s.geometry, s.grid, backend="gpu", mode=mode)
    check_adjoint(p, s.geometry, s.grid, forward=lambda a: p.forward(cp.asarray(a)).get(),
                  back=lambda b: p.back(cp.asarray(b)).get())


def test_gpu_in_place_refusals_and_cai(tiny):
    """out= on the device is written in place (same pointer); a device array for a CPU
    projector, or of the wrong dtype, is refused naming its device, unless copy=True; an object
    with only __cuda_array_interface__ is read in place too."""
    cp = pytest.importorskip("cupy")
    s = dbtr.read_scan(tiny / "scan.h5")
    p = dbtr.Projector(s.geometry, s.grid, backend="gpu", mode="cpu-match")
    x = cp.asarray(np.random.default_rng(8).uniform(0, 0.05, s.grid.shape).astype(np.float32))
    out = cp.empty(p.shape_projections, dtype=cp.float32)
    ptr = out.data.ptr
    assert p.forward(x, out=out) is out and out.data.ptr == ptr
    want = out.get()
    # A library dbtr cannot make arrays of (only __cuda_array_interface__): read in place, and
    # its result needs out= (docs/python.md), which is then written in place too.
    with pytest.raises(TypeError, match=r"volume: .*pass out="):
        p.forward(CudaOnly(x))
    out2 = cp.empty_like(out)
    assert p.forward(CudaOnly(x), out=CudaOnly(out2)) is not None and out2.get().tobytes() == want.tobytes()
    with pytest.raises(dbtr.InvalidArgument, match=r"volume: a cupy array .* dtype float64, in cuda:0"):
        p.forward(x.astype(cp.float64))
    assert p.forward(x.astype(cp.float64), copy=True).get().tobytes() == want.tobytes()
    cpu = dbtr.Projector(s.geometry, s.grid, backend="cpu", precision="float")
    with pytest.raises(dbtr.InvalidArgument, match=r"volume: a cupy array .* in cuda:0.*takes .* in host memory"):
        cpu.forward(x)
    back_home = cpu.forward(x, copy=True)
    assert isinstance(back_home, cp.ndarray) and back_home.get().tobytes() == want.tobytes()


def _no_host_copy(monkeypatch) -> None:
    """Fails the test where the package copies a device array to the host."""
    from dbtr import _arrays
    host_view = _arrays._host_view

    def guarded(name, a):
        if a.device >= 0:
            raise AssertionError(f"{name}: copied from {a.where} to the host")
        return host_view(name, a)
    monkeypatch.setattr(_arrays, "_host_view", guarded)


def test_gpu_recon_on_cupy(tiny, monkeypatch):
    """recon takes CuPy projections and i0 and returns a CuPy volume on their device, reconstructed
    there with no copy through the host: the bits of the same reconstruction from numpy."""
    cp = pytest.importorskip("cupy")
    s = dbtr.read_scan(tiny / "scan.h5")
    want = dbtr.recon(s.projections, s.geometry, s.grid, i0=s.i0, iterations=2, backend="gpu")
    proj, i0 = cp.asarray(s.projections), cp.asarray(s.i0)
    _no_host_copy(monkeypatch)
    got = dbtr.recon(proj, s.geometry, s.grid, i0=i0, iterations=2, backend="gpu")
    assert isinstance(got, cp.ndarray) and got.device.id == 0 and got.get().tobytes() == want.tobytes()


@pytest.mark.parametrize("mode", ["cpu-match", "dd"])
def test_gpu_recon_on_torch_float32(tiny, monkeypatch, mode):
    """PyTorch float32 projections (read in place, widened exactly), a float i0 on the host (copied
    up), and the progress volume on the device: the bits of numpy's float64 of the same values; dd
    comes back as float64, rounded to nearest, as from numpy."""
    torch = pytest.importorskip("torch")
    s = dbtr.read_scan(tiny / "scan.h5")
    proj32 = s.projections.astype(np.float32)
    i0 = float(np.asarray(s.i0).flat[0])
    seen = []
    want = dbtr.recon(proj32.astype(np.float64), s.geometry, s.grid, i0=i0, iterations=2, backend="gpu", mode=mode,
                      callback=lambda p: seen.append(p.volume()))
    proj = torch.from_numpy(proj32).to("cuda:0")
    _no_host_copy(monkeypatch)
    got_seen = []
    got = dbtr.recon(proj, s.geometry, s.grid, i0=i0, iterations=2, backend="gpu", mode=mode,
                     callback=lambda p: got_seen.append(p.volume()))
    monkeypatch.undo()
    assert isinstance(got, torch.Tensor) and got.device == proj.device and got.dtype == getattr(torch, want.dtype.name)
    assert got.cpu().numpy().tobytes() == want.tobytes()
    assert [v.cpu().numpy().tobytes() for v in got_seen] == [v.tobytes() for v in seen]


def test_gpu_recon_line_integrals_on_cupy(tiny):
    """Emission of line integrals on the device: numpy's bits."""
    cp = pytest.importorskip("cupy")
    s = dbtr.read_scan(tiny / "scan.h5")
    lines = np.log(np.asarray(s.i0) / np.maximum(s.projections, 0.5))
    want = dbtr.recon(lines, s.geometry, s.grid, quantity="line_integral", iterations=2, backend="gpu")
    got = dbtr.recon(cp.asarray(lines), s.geometry, s.grid, quantity="line_integral", iterations=2, backend="gpu")
    assert got.get().tobytes() == want.tobytes()


def test_gpu_recon_bad_value_on_device(tiny):
    """A NaN in device projections is refused with numpy's message (the flat index named)."""
    cp = pytest.importorskip("cupy")
    s = dbtr.read_scan(tiny / "scan.h5")
    bad = s.projections.copy()
    bad.flat[1234] = np.nan
    with pytest.raises(dbtr.InvalidArgument) as host:
        dbtr.recon(bad, s.geometry, s.grid, i0=s.i0, iterations=1, backend="gpu")
    with pytest.raises(dbtr.InvalidArgument) as dev:
        dbtr.recon(cp.asarray(bad), s.geometry, s.grid, i0=cp.asarray(s.i0), iterations=1, backend="gpu")
    assert "flat index 1234" in str(host.value) and str(dev.value) == str(host.value)


@pytest.mark.parametrize("mode", ["double", "double-match"])
def test_gpu_torch_gradcheck(mode):
    torch = pytest.importorskip("torch")
    dt = pytest.importorskip("dbtr.torch")
    g, grid = small_problem()
    p = dbtr.Projector(g, grid, backend="gpu", mode=mode)
    x = torch.rand(p.shape_volume, dtype=torch.float64, device="cuda:0", requires_grad=True)
    y = torch.rand(p.shape_projections, dtype=torch.float64, device="cuda:0", requires_grad=True)
    assert torch.autograd.gradcheck(lambda v: dt.forward_project(v, p), (x,))
    assert torch.autograd.gradcheck(lambda v: dt.back_project(v, p), (y,))


def test_gpu_torch_side_stream_is_honoured(tiny):
    """A volume written on a PyTorch side stream (non-blocking, so the legacy default stream
    does not wait for it by itself) is projected after that work: __dlpack__(stream=1) orders
    it. The result is the projection of the finished volume, as from the host."""
    torch = pytest.importorskip("torch")
    s = dbtr.read_scan(tiny / "scan.h5")
    p = dbtr.Projector(s.geometry, s.grid, backend="gpu", mode="cpu-match")
    host = np.random.default_rng(9).uniform(0, 0.05, s.grid.shape).astype(np.float32)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = torch.zeros(s.grid.shape, dtype=torch.float32, device="cuda:0")
        torch.cuda._sleep(50_000_000)  # keep the stream busy, so an unordered read would see zeros
        x += torch.from_numpy(host).to("cuda:0", non_blocking=True)
        got = p.forward(x)
    assert got.cpu().numpy().tobytes() == p.forward(host).tobytes()
