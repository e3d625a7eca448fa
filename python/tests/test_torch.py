"""dbtr.torch on the CPU reference (label cpu; skipped, exit 77, where torch is not
installed): tensors in and out in place, gradients that are the projector's exact transpose,
gradcheck in double, and a least-squares fit through the layer."""

from __future__ import annotations

import typing

import numpy as np
import pytest
from helpers import check_adjoint, small_problem

import dbtr

torch = pytest.importorskip("torch")
dt = pytest.importorskip("dbtr.torch")


def test_torch_cpu_tensors_in_place(tiny):
    s = dbtr.read_scan(tiny / "scan.h5")
    p = dbtr.Projector(s.geometry, s.grid, backend="cpu", precision="float")
    x = np.random.default_rng(4).uniform(0, 0.05, s.grid.shape).astype(np.float32)
    t = torch.from_numpy(x)
    got = p.forward(t)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
    assert got.numpy().tobytes() == p.forward(x).tobytes()
    out = torch.empty(p.shape_projections, dtype=torch.float32)
    assert p.forward(t, out=out) is out and torch.equal(out, got)
    with pytest.raises(dbtr.InvalidArgument, match=r"volume: a torch array .* dtype float64"):
        p.forward(t.double())
    with pytest.raises(dbtr.InvalidArgument, match=r"volume: a torch array .*strides \(1, 24, 1920\)"):
        p.forward(t.permute(2, 1, 0).contiguous().permute(2, 1, 0))


@pytest.mark.parametrize("precision", ["float", "double"])
def test_torch_gradient_is_the_back_projection(tiny, precision):
    """x.grad of <A x, y> is A^T y, the projector's back projection bit for bit, and y.grad of
    <x, A^T y> is A x; the pair passes the dot-product test within helpers.adjoint_bound."""
    s = dbtr.read_scan(tiny / "scan.h5")
    p = dbtr.Projector(s.geometry, s.grid, backend="cpu", precision=precision)
    layer = dt.Projection(s.geometry, s.grid, backend="cpu", precision=precision)
    dtype = getattr(torch, p.dtype)
    rng = np.random.default_rng(5)
    x = torch.tensor(rng.uniform(0, 1, s.grid.shape), dtype=dtype, requires_grad=True)
    y = torch.tensor(rng.uniform(0, 1, p.shape_projections), dtype=dtype, requires_grad=True)
    (layer(x) * y.detach()).sum().backward()
    assert torch.equal(x.grad, p.back(y.detach()))
    (layer.adjoint(y) * x.detach()).sum().backward()
    assert torch.equal(y.grad, p.forward(x.detach()))

    def fwd(a):
        return layer(torch.from_numpy(a)).numpy()

    def bck(b):
        return layer.adjoint(torch.from_numpy(b)).detach().numpy()

    check_adjoint(p, s.geometry, s.grid, forward=lambda a: fwd(a), back=bck)


def test_torch_gradcheck_cpu_double():
    """gradcheck compares the gradients autograd takes through the projector with finite
    differences, column by column: A is linear, so the central differences are exact but for
    rounding, far inside gradcheck's tolerances in double."""
    g, grid = small_problem()
    p = dbtr.Projector(g, grid, backend="cpu", precision="double")
    x = torch.rand(p.shape_volume, dtype=torch.float64, requires_grad=True)
    y = torch.rand(p.shape_projections, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda v: dt.forward_project(v, p), (x,))
    assert torch.autograd.gradcheck(lambda v: dt.back_project(v, p), (y,))
    with pytest.raises(ValueError, match="double-double projector has no autograd"):
        dt.forward_project(x, dbtr.Projector(g, grid, backend="cpu", precision="dd"))


def test_torch_least_squares_steps(tiny):
    """docs/python.md's PyTorch example: gradient steps on |A x - b|^2 / 2 through the layer
    lower the loss at every step (step 1 / ||A||^2 bounds the step below 2 / L, L the
    gradient's Lipschitz constant, estimated by power iteration)."""
    li = dbtr.read_scan(tiny / "li.h5")
    layer = dt.Projection(li.geometry, li.grid, backend="cpu", precision="double")
    b = torch.from_numpy(li.projections)
    v = torch.ones(li.grid.shape, dtype=torch.float64)
    for _ in range(20):  # power iteration on A^T A for ||A||^2
        v = layer.adjoint(layer(v)).detach()
        norm2 = v.norm()
        v = v / norm2
    step = 1.0 / float(norm2)
    x = torch.zeros(li.grid.shape, dtype=torch.float64, requires_grad=True)
    losses = []
    for _ in range(5):
        loss = 0.5 * ((layer(x) - b) ** 2).sum()
        loss.backward()
        with torch.no_grad():
            x -= step * x.grad
            x.grad.zero_()
        losses.append(float(loss))
    assert all(b < a for a, b in zip(losses, losses[1:])), losses


def test_torch_module_hints():
    for f in (dt.forward_project, dt.back_project, dt.Projection.__init__, dt.Projection.forward):
        hints = typing.get_type_hints(f)
        assert "return" in hints and all(n in hints for n in f.__code__.co_varnames[:f.__code__.co_argcount]
                                         if n != "self"), f
