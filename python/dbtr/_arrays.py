"""Arrays in and out of libdbtr: numpy arrays, DLPack producers (PyTorch, CuPy, JAX, numpy) and
__cuda_array_interface__ objects (Numba), each described by its pointer, shape, dtype, device
and strides, and handed to the library in place where it is what the projector computes on.

Why a DLPack reader of our own (ctypes on the capsule's C structs, dlpack.h) rather than
numpy.from_dlpack: numpy (1.24, Debian 12) reads CPU capsules only and marks what it reads
read-only, so it could neither hand the library a CUDA array nor let out= write into a PyTorch
CPU tensor. One reader for every device means that CI, with no GPU, runs on numpy's capsules
the code that reads CuPy's and PyTorch's on a GPU. The capsule is never renamed "used_dltensor"
and its deleter never called here: it is held for the whole library call and then dropped, and
its own destructor (the producer's, as the DLPack Python specification requires) calls the
deleter once. Nothing leaks and nothing is freed twice. __cuda_array_interface__ is read only
for CUDA objects without __dlpack__.

Streams (docs/python.md, "Streams"): the library works on the device's legacy default stream
and returns when the result is complete. A DLPack producer is asked for its capsule with
stream=1 (the legacy default stream, array API standard): it makes that stream wait for the
work queued on its own current stream, on the device, without blocking the host. An
__cuda_array_interface__ object's 'stream' (version 3) is synchronised from the host when it is
another stream than the legacy or per-thread default stream (which the legacy stream already
waits for).
"""

from __future__ import annotations

import ctypes
from ctypes import POINTER, c_int, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from . import _lib

# DLDeviceType values (dlpack.h): memory the host reads, and memory of one CUDA device.
_DL_HOST = {1: "cpu", 3: "cuda host (pinned)"}
_DL_CUDA = {2: "cuda", 13: "cuda managed"}
_DL_TYPES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 5: "complex", 6: "bool"}
_DL_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("device", _DLDevice), ("ndim", c_int32), ("dtype", _DLDataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", _DLPackVersion), ("manager_ctx", c_void_p), ("deleter", c_void_p), ("flags", c_uint64),
                ("dl_tensor", _DLTensor)]


_capsule_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_valid.restype, _capsule_valid.argtypes = c_int, [ctypes.py_object, ctypes.c_char_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = c_void_p, [ctypes.py_object, ctypes.c_char_p]


@dataclass
class Array:
    """An array as the library sees it. strides are in elements (None: C-contiguous, as DLPack
    says it); device is -1 for memory the host reads, else the CUDA device."""
    obj: Any
    lib: str
    shape: tuple
    dtype: str
    device: int
    strides: Optional[tuple]
    ptr: int
    itemsize: int
    readonly: bool
    keep: Any = None  # what must outlive every use of ptr: the DLPack capsule

    @property
    def where(self) -> str:
        return "host memory" if self.device < 0 else f"cuda:{self.device}"

    @property
    def contiguous(self) -> bool:
        if self.strides is None:
            return True
        step = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n != 1 and s != step:
                return False
            step *= n
        return True

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.itemsize

    def __str__(self) -> str:
        strides = "C-contiguous" if self.strides is None else f"{self.strides} (elements)"
        misaligned = "" if self.ptr % self.itemsize == 0 else f", misaligned (address {self.ptr:#x})"
        return (f"a {self.lib} array of shape {self.shape}, dtype {self.dtype}, in {self.where}, strides {strides}"
                f"{misaligned}")


def _lib_of(x: Any) -> str:
    return type(x).__module__.split(".")[0]


def _from_numpy(x: np.ndarray, lib: str = "numpy") -> Array:
    dtype = x.dtype.name if x.dtype.isnative else x.dtype.str
    strides = tuple(s // x.itemsize for s in x.strides) if not x.flags.c_contiguous else None
    if strides is not None and any(s * x.itemsize != b for s, b in zip(strides, x.strides)):
        strides = tuple(x.strides)  # not whole elements: never contiguous, shown as bytes
    return Array(x, lib, tuple(x.shape), dtype, -1, strides, x.ctypes.data, x.itemsize, not x.flags.writeable, x)


def _from_capsule(name: str, x: Any, cap: Any) -> Array:
    if _capsule_valid(cap, b"dltensor_versioned"):
        m = _DLManagedTensorVersioned.from_address(_capsule_pointer(cap, b"dltensor_versioned"))
        if m.version.major != 1:
            raise TypeError(f"{name}: a DLPack {m.version.major}.{m.version.minor} capsule; dbtr reads version 1")
        t, readonly = m.dl_tensor, bool(m.flags & _DL_READ_ONLY)
    elif _capsule_valid(cap, b"dltensor"):
        t, readonly = _DLManagedTensor.from_address(_capsule_pointer(cap, b"dltensor")).dl_tensor, False
    else:
        raise TypeError(f"{name}: {type(x).__name__}.__dlpack__() gave no unused DLPack capsule")
    dt = t.dtype
    dtype = f"{_DL_TYPES.get(dt.code, f'type{dt.code}_')}{dt.bits}" + (f"x{dt.lanes}" if dt.lanes != 1 else "")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
    dev = t.device
    if dev.device_type not in _DL_HOST and dev.device_type not in _DL_CUDA:
        raise TypeError(f"{name}: a {_lib_of(x)} array on DLPack device type {dev.device_type}: dbtr reads host "
                        "memory and CUDA memory")
    device = -1 if dev.device_type in _DL_HOST else int(dev.device_id)
    return Array(x, _lib_of(x), shape, dtype, device, strides, (t.data or 0) + t.byte_offset,
                 dt.bits * dt.lanes // 8, readonly, cap)


def _dlpack(name: str, x: Any) -> Array:
    dev_type, _ = x.__dlpack_device__()
    # Streams: see the module's docstring. A host array takes no stream (the standard says None).
    stream = 1 if int(dev_type) in _DL_CUDA else None
    try:
        cap = x.__dlpack__(stream=stream, max_version=(1, 0))
    except TypeError:  # a producer of DLPack before 1.0 has no max_version
        cap = x.__dlpack__(stream=stream)
    return _from_capsule(name, x, cap)


_cuda = None


def _driver() -> ctypes.CDLL:
    """The CUDA driver (libcuda, present wherever a CUDA array is), for what an
    __cuda_array_interface__ does not say: its device, and the end of its stream's work."""
    global _cuda
    if _cuda is None:
        lib = ctypes.CDLL("libcuda.so.1")
        lib.cuInit.argtypes = [ctypes.c_uint]
        lib.cuPointerGetAttribute.argtypes = [c_void_p, c_int, ctypes.c_uint64]
        lib.cuStreamSynchronize.argtypes = [c_void_p]
        if lib.cuInit(0) != 0:
            raise RuntimeError("dbtr: the CUDA driver does not start (cuInit)")
        _cuda = lib
    return _cuda


def _cai(name: str, x: Any) -> Array:
    d = x.__cuda_array_interface__
    if d.get("mask") is not None:
        raise TypeError(f"{name}: a masked {_lib_of(x)} array")
    ptr, readonly = d["data"]
    dt = np.dtype(d["typestr"])
    shape = tuple(int(n) for n in d["shape"])
    strides = d.get("strides")
    if strides is not None:
        strides = tuple(s // dt.itemsize if s % dt.itemsize == 0 else s for s in strides)
    if hasattr(x, "__dlpack_device__"):
        device = int(x.__dlpack_device__()[1])
    elif ptr:
        ordinal = c_int()
        if _driver().cuPointerGetAttribute(ctypes.byref(ordinal), 9, ptr):  # CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
            raise TypeError(f"{name}: __cuda_array_interface__ points at memory CUDA does not know")
        device = ordinal.value
    else:
        device = 0
    stream = d.get("stream")
    if stream is not None and stream not in (1, 2):  # 1, 2: the legacy and per-thread default streams
        if _driver().cuStreamSynchronize(stream) != 0:
            raise RuntimeError(f"{name}: synchronising its CUDA stream {stream:#x} failed")
    dtype = dt.name if dt.isnative else dt.str
    return Array(x, _lib_of(x), shape, dtype, device, strides, int(ptr or 0), dt.itemsize, bool(readonly), None)


def describe(name: str, x: Any, *, sequences: bool = False) -> Array:
    """x as the library would see it (nothing is copied). sequences: take any array-like
    (lists, scalars) through numpy.asarray."""
    if isinstance(x, np.ndarray):
        return _from_numpy(x)
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        return _dlpack(name, x)
    if hasattr(x, "__cuda_array_interface__"):
        return _cai(name, x)
    if sequences:
        return _from_numpy(np.asarray(x))
    raise TypeError(f"{name}: a {type(x).__module__}.{type(x).__name__} is not an array dbtr takes: a numpy "
                    "array, or an array with __dlpack__ (PyTorch, CuPy, JAX) or __cuda_array_interface__")


@dataclass(frozen=True)
class Want:
    """What a projector reads and writes: a C-contiguous array of shape and dtype, in host
    memory or on device (-1: the CPU reference, host memory only)."""
    shape: tuple
    dtype: str
    device: int

    def takes(self, a: Array) -> bool:
        return (a.shape == self.shape and a.dtype == self.dtype and a.contiguous and a.ptr % a.itemsize == 0 and
                (a.device < 0 or a.device == self.device))

    def refuse(self, name: str, a: Array, extra: str = "") -> Exception:
        where = "host memory" if self.device < 0 else f"host memory or cuda:{self.device}"
        return _lib.invalid(f"{name}: {a}; the projector takes shape {self.shape}, dtype {self.dtype}, "
                            f"C-contiguous, in {where}{extra}")


def _host_view(name: str, a: Array) -> np.ndarray:
    """A numpy array of a's host memory, or of a copy of a's device memory (CuPy, PyTorch)."""
    if a.device < 0:
        if isinstance(a.obj, np.ndarray):
            return a.obj
        if a.lib == "torch":
            return a.obj.detach().numpy()
        if hasattr(a.obj, "__dlpack__"):
            return np.from_dlpack(a.obj)
        return np.asarray(a.obj)
    if a.lib == "cupy":
        return a.obj.get()
    if a.lib == "torch":
        return a.obj.detach().cpu().numpy()
    raise TypeError(f"{name}: {a}: dbtr copies CUDA arrays of CuPy and PyTorch only; copy it to a numpy array")


def to_host(name: str, x: Any) -> tuple[Array, np.ndarray]:
    """x described, and its values as a numpy array (x itself when it is one)."""
    a = describe(name, x, sequences=True)
    return a, _host_view(name, a)


def convert(name: str, a: Array, want: Want) -> Array:
    """A C-contiguous copy of a of want's dtype: on a's device when the projector runs there (no
    host round trip), else in host memory."""
    if a.shape != want.shape:
        raise want.refuse(name, a, " (copy=True converts dtype, layout and device, not shape)")
    if a.device >= 0 and a.device == want.device and a.lib == "cupy":
        import cupy
        with cupy.cuda.Device(a.device):
            return describe(name, cupy.ascontiguousarray(a.obj, dtype=want.dtype))
    if a.device >= 0 and a.device == want.device and a.lib == "torch":
        import torch
        return describe(name, a.obj.detach().to(dtype=getattr(torch, want.dtype)).contiguous())
    return _from_numpy(np.ascontiguousarray(_host_view(name, a), dtype=want.dtype))


def empty(name: str, like: Array, shape: tuple, dtype: str, device: int) -> Any:
    """A new array for a result on device (-1: host memory), of like's library where it is
    numpy, CuPy or PyTorch, else of numpy in host memory."""
    if like.lib == "torch":
        import torch
        return torch.empty(shape, dtype=getattr(torch, dtype), device="cpu" if device < 0 else f"cuda:{device}")
    if like.lib == "cupy" and device >= 0:
        import cupy
        with cupy.cuda.Device(device):
            return cupy.empty(shape, dtype=dtype)
    if device < 0:
        return np.empty(shape, dtype=dtype)
    raise TypeError(f"{name}: {like}: dbtr makes new CUDA arrays with CuPy or PyTorch only; pass out= (a writable "
                    f"array of that device)")


def home(name: str, like: Array, result: Any) -> Any:
    """result (a numpy, CuPy or PyTorch array) as like's kind on like's device: itself where it
    is already; a device copy where like lives on another device than the projector."""
    r = describe(name, result)
    if r.lib == like.lib and r.device == like.device:
        return result
    if like.device >= 0:
        host = _host_view(name, r)
        if like.lib == "cupy":
            import cupy
            with cupy.cuda.Device(like.device):
                return cupy.asarray(host)
        if like.lib == "torch":
            import torch
            return torch.from_numpy(host).to(f"cuda:{like.device}")
        raise TypeError(f"{name}: {like}: dbtr copies CUDA arrays of CuPy and PyTorch only")
    if like.lib == "torch":
        import torch
        return torch.from_numpy(_host_view(name, r))
    ns: Optional[Callable] = getattr(like.obj, "__array_namespace__", None)
    if ns is not None and like.lib != "numpy":
        return ns().from_dlpack(_host_view(name, r))
    return _host_view(name, r)


def overlap(a: Array, b: Array) -> bool:
    """Whether a and b share bytes (on the same side)."""
    return a.device == b.device and a.ptr < b.ptr + b.nbytes and b.ptr < a.ptr + a.nbytes
