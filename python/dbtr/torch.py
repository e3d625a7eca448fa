"""dbtr.torch: dbtr's projectors as differentiable PyTorch operations (docs/python.md,
"PyTorch"). Imported on its own (`import dbtr.torch`): torch is an optional dependency.

The gradient of the forward projection is the projector's back projection, the forward's
exact transpose in every path (the same ray crossings and weights, gathered in a fixed order):
not an approximation of the adjoint, and deterministic, so two runs give the same gradients,
and on the CPU reference or a match mode the gradients of the CPU reference bit for bit.
Tensors go to the projector in place: on its GPU, C-contiguous and of its dtype (zero-copy);
CPU tensors in host memory (a GPU projector copies them to its device and back).
"""

from __future__ import annotations

from typing import Any

import torch

from ._model import Geometry, Grid
from ._projector import Projector

__all__ = ["ForwardProjection", "BackProjection", "forward_project", "back_project", "Projection"]


def _usable(projector: Projector) -> Projector:
    if not isinstance(projector, Projector):
        raise TypeError(f"projector: a dbtr.Projector, not a {type(projector).__name__}")
    if projector.precision == "dd":
        # A double-double pair (hi, lo) is one number in two float64: the map on pairs is not
        # the linear map autograd differentiates.
        raise ValueError("projector: a double-double projector has no autograd; use precision 'double' or a GPU "
                         "mode of float or double")
    return projector


class ForwardProjection(torch.autograd.Function):
    """projections = A volume; its backward is A^T (the projector's back)."""

    @staticmethod
    def forward(ctx: Any, volume: torch.Tensor, projector: Projector) -> torch.Tensor:
        ctx.projector = projector
        return projector.forward(volume.detach())

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple:
        return ctx.projector.back(grad.contiguous()), None


class BackProjection(torch.autograd.Function):
    """volume = A^T projections; its backward is A (the projector's forward)."""

    @staticmethod
    def forward(ctx: Any, projections: torch.Tensor, projector: Projector) -> torch.Tensor:
        ctx.projector = projector
        return projector.back(projections.detach())

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple:
        return ctx.projector.forward(grad.contiguous()), None


def forward_project(volume: torch.Tensor, projector: Projector) -> torch.Tensor:
    """A volume, differentiable in volume: a tensor of projector.shape_volume and dtype, on
    the projector's GPU (or the CPU)."""
    return ForwardProjection.apply(volume, _usable(projector))


def back_project(projections: torch.Tensor, projector: Projector) -> torch.Tensor:
    """A^T projections, differentiable in projections."""
    return BackProjection.apply(projections, _usable(projector))


class Projection(torch.nn.Module):
    """A layer that forward-projects a volume, holding its Projector (built once, with
    Projector's keyword options: backend, mode, precision, device, threads, gpu_memory).
    forward(volume) is A volume; adjoint(projections) is A^T projections; both differentiable.
    No batch axis: one volume of shape projector.shape_volume per call."""

    def __init__(self, geometry: Geometry, grid: Grid, **projector_options: Any) -> None:
        super().__init__()
        self.projector = _usable(Projector(geometry, grid, **projector_options))

    def forward(self, volume: torch.Tensor) -> torch.Tensor:
        return forward_project(volume, self.projector)

    def adjoint(self, projections: torch.Tensor) -> torch.Tensor:
        return back_project(projections, self.projector)

    def extra_repr(self) -> str:
        return repr(self.projector)
