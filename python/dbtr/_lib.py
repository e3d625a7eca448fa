"""libdbtr through ctypes: finding the library, the C structs of include/dbtr.h, the
prototypes, and dbtr's error codes as Python exceptions.

ctypes calls a C function with the GIL released, and takes it again to run a Python
callback, so the library computes while other Python threads run.
"""

from __future__ import annotations

import ctypes
import os
import re
from ctypes import POINTER, c_char_p, c_double, c_int, c_size_t, c_uint64, c_void_p
from pathlib import Path

SONAME = "libdbtr.so.0"


def _load() -> ctypes.CDLL:
    """$DBTR_LIBRARY if set; else the copy `pip install` put beside this file; else the
    one the system's loader finds (after `cmake --install`)."""
    given = os.environ.get("DBTR_LIBRARY")
    tried = [given] if given else [str(Path(__file__).with_name(SONAME)), SONAME]
    errors = []
    for name in tried:
        try:
            return ctypes.CDLL(name)
        except OSError as e:
            errors.append(str(e))
    raise ImportError(
        "dbtr: cannot load libdbtr (" + "; ".join(errors) + "). Build it (./run.sh test) and "
        "install the package with `python3 -m pip install ./python`, or set DBTR_LIBRARY to "
        "build/lib/" + SONAME
    )


lib = _load()

# The enums of include/dbtr.h, in their order, and its constants. They and the structs below
# repeat the header, which ctypes cannot read: python/tests/test_struct_layout.py checks them
# against what the C compiler makes of it (tests/struct_layout.c).
QUANTITIES = ("counts", "line_integral")
DTYPES = ("float32", "float64", "uint16", "uint32")
I0_NONE, I0_SCALAR, I0_PER_VIEW, I0_PER_PIXEL, I0_FULL = range(5)
PREC_FLOAT, PREC_DOUBLE, PREC_DD = 0, 1, 2  # dbtr_precision; a dd value is two float64, hi then lo
MEMORY_HOST, MEMORY_DEVICE = 0, 1  # dbtr_memory
SCAN_MAX_NOTES = 8  # DBTR_SCAN_MAX_NOTES

_dp = POINTER(c_double)


class Geom(ctypes.Structure):
    _fields_ = [("n_views", c_size_t), ("n_rows", c_size_t), ("n_cols", c_size_t), ("source", _dp),
                ("detector_center", _dp), ("detector_u", _dp), ("detector_v", _dp)]


class Grid(ctypes.Structure):
    _fields_ = [("nx", c_size_t), ("ny", c_size_t), ("nz", c_size_t), ("dx", c_double), ("dy", c_double),
                ("dz", c_double), ("origin", c_double * 3)]


class ScanNote(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char * 32), ("text", ctypes.c_char * 512)]


class Scan(ctypes.Structure):
    _fields_ = [("geom", Geom), ("quantity", c_int), ("proj", _dp), ("i0_shape", c_int), ("i0", _dp),
                ("has_grid", c_int), ("grid", Grid), ("stored_dtype", c_int), ("n_notes", c_size_t),
                ("notes", ScanNote * SCAN_MAX_NOTES)]


class ScanWriteOpts(ctypes.Structure):
    _fields_ = [("dtype", c_int), ("gzip_level", c_int)]


class BackendOpts(ctypes.Structure):
    _fields_ = [("backend", c_char_p), ("mode", c_char_p), ("precision", c_char_p), ("threads", c_int),
                ("gpu_memory", c_size_t), ("gpus", c_int)]


class FbpOpts(ctypes.Structure):
    _fields_ = [("cutoff", c_double), ("slice", c_double)]


class ReconOpts(ctypes.Structure):
    _fields_ = [("subsets", c_size_t), ("algorithm", c_char_p), ("init", c_double), ("backend", BackendOpts),
                ("start", c_char_p), ("fbp", FbpOpts)]


class DeviceData(ctypes.Structure):
    _fields_ = [("proj", c_void_p), ("proj_type", c_int), ("i0", c_void_p), ("i0_type", c_int), ("device", c_int)]


class ProjectorOpts(ctypes.Structure):
    _fields_ = [("backend", BackendOpts), ("device", c_int)]


class DiffStats(ctypes.Structure):
    _fields_ = [("n", c_size_t), ("n_differ", c_size_t), ("max_abs", c_double), ("mean_abs", c_double),
                ("max_ulp", c_uint64), ("median_ulp", c_uint64), ("rel_l2", c_double), ("n_differ_u16", c_size_t),
                ("beyond_4ulp", c_size_t), ("scale_ulp", c_double)]


class RefereeStats(ctypes.Structure):
    _fields_ = [("n", c_size_t), ("rel_l2", c_double), ("max_ulp", c_uint64), ("median_ulp", c_uint64),
                ("beyond_4ulp", c_size_t), ("scale_ulp", c_double), ("best", c_double), ("best_units", c_double)]


# The measures of dbtr_quality_change.m, in the order of DBTR_QCNR, DBTR_QFWHM, DBTR_QCONTRAST.
QUALITY_MEASURES = ("cnr", "fwhm", "contrast")


class QualityDelta(ctypes.Structure):
    _fields_ = [("value", c_double), ("ref", c_double), ("change", c_double)]


class QualityChange(ctypes.Structure):
    _fields_ = [("object", c_size_t), ("focus", c_size_t), ("focus_ref", c_size_t),
                ("m", QualityDelta * len(QUALITY_MEASURES))]


class QualityExtreme(ctypes.Structure):
    _fields_ = [("found", c_int), ("change", c_double), ("object", c_size_t), ("iteration", c_size_t),
                ("not_measurable", c_size_t), ("one_sided", c_size_t)]


class QualityVerdict(ctypes.Structure):
    _fields_ = [("n_objects", c_size_t), ("iterations", c_size_t), ("last", QualityExtreme * len(QUALITY_MEASURES)),
                ("all", QualityExtreme * len(QUALITY_MEASURES))]


class ValidationOpts(ctypes.Structure):
    _fields_ = [("paths", POINTER(c_char_p)), ("n_paths", c_size_t), ("iterations", c_size_t),
                ("subsets", c_size_t), ("lockstep", c_int), ("explain", c_int), ("threads", c_int),
                ("gpu_memory", c_size_t), ("gpus", c_int), ("referee", c_int), ("quality_scan", c_char_p),
                ("quality_regions", c_char_p)]


class ValidationRow(ctypes.Structure):
    _fields_ = [("iteration", c_size_t), ("path", c_char_p), ("reference", c_char_p), ("explains", c_char_p),
                ("is_gpu", c_int), ("proj", DiffStats), ("vol", DiffStats), ("deviance", c_double),
                ("has_referee", c_int), ("referee", c_char_p), ("vs_proj", RefereeStats), ("vs_vol", RefereeStats),
                ("n_quality", c_size_t), ("quality", POINTER(QualityChange))]


class ReconFileOpts(ctypes.Structure):
    _fields_ = [("recon", ReconOpts), ("iterations", c_size_t), ("format", c_char_p), ("u16_scale", c_double),
                ("force", c_int), ("log", c_char_p), ("threads", c_int), ("dims", c_double * 3),
                ("voxel", c_double * 3), ("origin", c_double * 3), ("has_dims", c_int), ("has_voxel", c_int),
                ("has_origin", c_int)]


class ModeInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("precision", c_int), ("gpu", c_int), ("variant", c_int), ("threads", c_int),
                ("bitwise_class", c_char_p)]


ROW_FN = ctypes.CFUNCTYPE(None, c_void_p, POINTER(ValidationRow))

_PROTOTYPES = {
    "dbtr_strerror": (c_char_p, [c_int]),
    "dbtr_err_name": (c_char_p, [c_int]),
    "dbtr_errmsg": (c_char_p, []),
    "dbtr_version": (c_char_p, []),
    "dbtr_scan_read": (c_int, [POINTER(Scan), c_char_p]),
    "dbtr_scan_write": (c_int, [POINTER(Scan), c_char_p, POINTER(ScanWriteOpts)]),
    "dbtr_scan_free": (None, [POINTER(Scan)]),
    "dbtr_scan_i0_count": (c_size_t, [POINTER(Scan)]),
    "dbtr_cpu_projector_create": (c_int, [POINTER(c_void_p), POINTER(Geom), POINTER(Grid), c_int, c_int]),
    "dbtr_cpu_projector_destroy": (None, [POINTER(c_void_p)]),
    "dbtr_cpu_forward": (c_int, [c_void_p, c_void_p, c_void_p]),
    "dbtr_cpu_back": (c_int, [c_void_p, c_void_p, c_void_p]),
    "dbtr_projector_open": (c_int, [POINTER(c_void_p), POINTER(Geom), POINTER(Grid), POINTER(ProjectorOpts)]),
    "dbtr_projector_backend": (c_char_p, [c_void_p]),
    "dbtr_projector_fallback": (c_char_p, [c_void_p]),
    "dbtr_projector_precision": (c_int, [c_void_p]),
    "dbtr_projector_device": (c_int, [c_void_p]),
    "dbtr_projector_forward": (c_int, [c_void_p, c_void_p, c_void_p, c_int]),
    "dbtr_projector_back": (c_int, [c_void_p, c_void_p, c_void_p, c_int]),
    "dbtr_projector_close": (None, [POINTER(c_void_p)]),
    "dbtr_recon_open": (c_int, [POINTER(c_void_p), POINTER(Scan), POINTER(Grid), POINTER(ReconOpts)]),
    "dbtr_recon_backend": (c_char_p, [c_void_p]),
    "dbtr_recon_fallback": (c_char_p, [c_void_p]),
    "dbtr_recon_precision": (c_int, [c_void_p]),
    "dbtr_recon_iterate": (c_int, [c_void_p, POINTER(c_double)]),
    "dbtr_recon_volume": (c_int, [c_void_p, c_void_p]),
    "dbtr_recon_open_device": (c_int, [POINTER(c_void_p), POINTER(Scan), POINTER(DeviceData), POINTER(Grid),
                                       POINTER(ReconOpts)]),
    "dbtr_recon_volume_device": (c_int, [c_void_p, c_void_p]),
    "dbtr_recon_close": (None, [POINTER(c_void_p)]),
    "dbtr_gpu_available": (c_int, [c_char_p, ctypes.c_ulong]),
    "dbtr_mode_name": (c_char_p, [c_size_t]),
    "dbtr_mode_at": (POINTER(ModeInfo), [c_size_t]),
    "dbtr_recon_file": (c_int, [c_char_p, c_char_p, POINTER(ReconFileOpts)]),
    "dbtr_validation_run": (c_int, [POINTER(Scan), POINTER(Grid), POINTER(ValidationOpts), ROW_FN, c_void_p]),
    "dbtr_quality_json": (c_int, [c_void_p, c_int, POINTER(Grid), c_char_p, c_char_p, POINTER(c_void_p)]),
    "dbtr_quality_json_free": (None, [POINTER(c_void_p)]),
    "dbtr_quality_verdict_of": (None, [POINTER(QualityChange), c_size_t, c_size_t, POINTER(QualityVerdict)]),
}
for _name, (_res, _args) in _PROTOTYPES.items():
    _fn = getattr(lib, _name)
    _fn.restype, _fn.argtypes = _res, _args


class DbtrError(Exception):
    """A libdbtr error: the message names the cause (the file, the dataset, the option);
    `code` is the negative DBTR_E* code and `name` its name."""

    def __init__(self, message: str, code: int, name: str) -> None:
        super().__init__(message)
        self.code, self.name = code, name


class InvalidArgument(DbtrError, ValueError):
    """DBTR_EINVAL, DBTR_EGEOM, DBTR_EOVERFLOW: an argument, a geometry or a size dbtr refuses."""


class FormatError(DbtrError, ValueError):
    """DBTR_EFORMAT: a file whose content dbtr cannot take."""


class DbtrIOError(DbtrError, OSError):
    """DBTR_EIO: a file that cannot be read or written."""


class DbtrMemoryError(DbtrError, MemoryError):
    """DBTR_ENOMEM."""


class NoGpuError(DbtrError, RuntimeError):
    """DBTR_ENOGPU: no GPU can be used (none found, or a libdbtr built without CUDA)."""


class GpuError(DbtrError, RuntimeError):
    """DBTR_EGPU: the GPU failed."""


_CLASSES = {"DBTR_EINVAL": InvalidArgument, "DBTR_EGEOM": InvalidArgument, "DBTR_EOVERFLOW": InvalidArgument,
            "DBTR_EFORMAT": FormatError, "DBTR_EIO": DbtrIOError, "DBTR_ENOMEM": DbtrMemoryError,
            "DBTR_ENOGPU": NoGpuError, "DBTR_EGPU": GpuError}


# Each code's number, from the library's own table.
CODES = {n.decode(): c for c in range(-256, 0) if (n := lib.dbtr_err_name(c)) is not None}


def invalid(message: str) -> InvalidArgument:
    """The exception for an argument the Python layer refuses before calling the library."""
    return InvalidArgument(message, CODES["DBTR_EINVAL"], "DBTR_EINVAL")


# The library's messages name the command line's flags; the package's callers know them as
# keyword arguments: "--subsets 10" reads "subsets=10", "--backend gpu" reads "backend='gpu'"
# and "--referee" reads "referee=True". Flags no Python call takes stay as they are.
_NUMBER_FLAGS = ("subsets", "iterations", "gpus", "threads", "gpu-memory", "init", "u16-scale")
_WORD_FLAGS = ("backend", "mode", "precision", "algorithm", "format")
_SWITCH_FLAGS = ("referee", "lockstep", "explain", "force")
_FLAG = re.compile(r"(?<![\w-])--(" + "|".join(_NUMBER_FLAGS + _WORD_FLAGS + _SWITCH_FLAGS) +
                   r")\b(?:[ =]([-+0-9.e]+\b|[A-Za-z][\w-]*))?")


def _python_names(message: str) -> str:
    def kwarg(m: re.Match) -> str:
        flag, value = m.group(1), m.group(2)
        name = flag.replace("-", "_")
        if flag in _SWITCH_FLAGS:
            return f"{name}=True" + (f" {value}" if value else "")
        if value is None:
            return name
        if flag in _WORD_FLAGS:
            return f"{name}={value!r}"
        if re.fullmatch(r"[-+0-9.e]+", value):
            return f"{name}={value}"
        return f"{name} {value}"
    return _FLAG.sub(kwarg, message)


def check(rc: int) -> None:
    """Raises the exception for a negative return code, with this thread's message, in the
    Python parameters' names."""
    if rc >= 0:
        return
    name = (lib.dbtr_err_name(rc) or b"unknown").decode()
    raise _CLASSES.get(name, DbtrError)(_python_names(lib.dbtr_errmsg().decode(errors="replace")), rc, name)
