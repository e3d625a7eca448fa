#!/usr/bin/python3
"""tests/make_bad_scans.py: damaged copies of a valid scan, one fault each, for tests/cli_errors.sh.

    /usr/bin/python3 tests/make_bad_scans.py BASE.h5 OUT_DIR [CASE...]

BASE.h5 is a valid scan written by `dbtr phantom --system tiny` (counts, a scalar /i0, a
/volume grid). For each case (all when none is named) this writes OUT_DIR/CASE.h5, a copy of
BASE.h5 with exactly one thing broken, so that the refusal the test sees can only come from
that one thing. `--list` prints the case names. Exits 77 (the CTest skip code) when h5py is
missing.
"""
import os
import shutil
import sys

try:
    import h5py
    import numpy as np
except ImportError:
    print("SKIP: python3 without h5py/numpy", file=sys.stderr)
    sys.exit(77)


def replace(f, name, data):
    """Writes a new dataset in place of name, keeping its attributes."""
    attrs = dict(f[name].attrs) if name in f else {}
    if name in f:
        del f[name]
    d = f.create_dataset(name, data=data)
    for k, v in attrs.items():
        d.attrs[k] = v


def edit(name, fn):
    """A case that copies the base and changes it with fn(h5py.File)."""
    def make(base, out):
        shutil.copyfile(base, out)
        with h5py.File(out, "r+") as f:
            fn(f)
    return name, make


def raw(name, fn):
    """A case that writes the file itself: fn(base_bytes) -> bytes."""
    def make(base, out):
        with open(base, "rb") as src:
            data = src.read()
        with open(out, "wb") as dst:
            dst.write(fn(data))
    return name, make


def set_value(name, index, value):
    def fn(f):
        a = f[name][...].astype(np.float64)
        a[index] = value
        replace(f, name, a.astype(f[name].dtype) if f[name].dtype.kind == "f" else a)
    return fn


def source_on_detector(f):
    # View 0's source moved into the detector plane: the same z as its detector centre.
    s = f["geometry/source"][...]
    s[0, 2] = f["geometry/detector_center"][0, 2]
    replace(f, "geometry/source", s)


def zero_vector(name):
    def fn(f):
        a = f[name][...]
        a[0, :] = 0.0
        replace(f, name, a)
    return fn


def wrong_rank(f):
    p = f["projections"][...]
    replace(f, "projections", p.reshape(p.shape[0] * p.shape[1], p.shape[2]))


def geometry_shape(f):
    u = f["geometry/detector_u"][...]
    replace(f, "geometry/detector_u", u[:, :2])  # (n_views, 2): a vector needs 3 components


def views_disagree(f):
    s = f["geometry/source"][...]
    replace(f, "geometry/source", np.vstack([s, s[-1:]]))  # one view more than /projections


def i0_shape_disagree(f):
    n_views, n_rows, n_cols = f["projections"].shape
    replace(f, "i0", np.full((n_rows + 1, n_cols), float(f["i0"][()])))  # rank 2: (n_rows, n_cols) wanted


def dims_overflow(f):
    # 2^21 x 2^21 x 2^20 = 2^62 elements: HDF5's own 64-bit count holds it, but as doubles
    # (8 bytes each) it is 2^65 bytes, past size_t. Chunked and never written, the file
    # stays small.
    attrs = dict(f["projections"].attrs)
    del f["projections"]
    d = f.create_dataset("projections", shape=(1 << 21, 1 << 21, 1 << 20), dtype="<f4", chunks=(1, 1, 1024))
    for k, v in attrs.items():
        d.attrs[k] = v


def replace_projections(f, make):
    """/projections rewritten by make(f, shape, dtype, data) -> dataset, keeping attributes."""
    attrs = dict(f["projections"].attrs)
    p = f["projections"][...]
    del f["projections"]
    d = make(f, p.shape, p.dtype, p)
    for k, v in attrs.items():
        d.attrs[k] = v


def external_storage(f):
    # The projections "stored" in /etc/passwd: HDF5 would read that file as pixel values.
    replace_projections(f, lambda f, shape, dtype, p: f.create_dataset(
        "projections", shape=shape, dtype=dtype, external=[("/etc/passwd", 0, h5py.h5f.UNLIMITED)]))


def unwritten_chunks(f):
    # One chunk per view, and only views 0-3 of 9 written: an acquisition writer that
    # stopped. The other views would read as zeros.
    def make(f, shape, dtype, p):
        d = f.create_dataset("projections", shape=shape, dtype=dtype, chunks=(1,) + shape[1:])
        d[:4] = p[:4]
        return d
    replace_projections(f, make)


def lzf_filter(f):
    # h5py's own LZF compression: a plugin filter libhdf5 does not carry.
    replace_projections(f, lambda f, shape, dtype, p: f.create_dataset(
        "projections", data=p, chunks=(1,) + shape[1:], compression="lzf"))


def virtual(source):
    # A virtual dataset mapping /projections of source ("." is this file itself).
    def fn(f):
        def make(f, shape, dtype, p):
            layout = h5py.VirtualLayout(shape=shape, dtype=dtype)
            layout[...] = h5py.VirtualSource(source, "projections", shape=shape)
            return f.create_virtual_dataset("projections", layout, fillvalue=0)
        replace_projections(f, make)
    return fn


def geometry_in_cm(f):
    # Every length divided by 10, the grid's too: a consistent scan in cm that dbtr reads
    # as mm, a system 66 mm tall.
    for name in ("source", "detector_center", "detector_u", "detector_v"):
        replace(f, "geometry/" + name, f["geometry/" + name][...] / 10.0)
    for attr in ("voxel_size", "origin"):
        f["volume"].attrs[attr] = f["volume"].attrs[attr] / 10.0


def counts_are_line_integrals(f):
    # The line integrals log(i0 / y) (clipped at 0) stored under quantity "counts".
    i0 = float(f["i0"][()])
    p = f["projections"][...].astype(np.float64)
    replace(f, "projections", np.maximum(np.log(i0 / np.maximum(p, 0.5)), 0.0).astype(np.float32))


def transposed(f):
    # Each view stored (cols, rows): a valid shape, the wrong image.
    p = f["projections"][...]
    replace(f, "projections", np.ascontiguousarray(p.transpose(0, 2, 1)))


def volume_outside(f):
    # The grid moved 10 m along x: no view sees it (the tiny detector is 128 mm wide).
    o = f["volume"].attrs["origin"].copy()
    o[0] += 10000.0
    f["volume"].attrs["origin"] = o


def counts_above_i0(f):
    # Noise and scatter put counts above i0; they are data and must be accepted.
    p = f["projections"][...]
    i0 = float(f["i0"][()])
    p[0, :4, :4] = 1.5 * i0
    replace(f, "projections", p)


CASES = dict([
    raw("not_hdf5", lambda b: b"this is a text file, not HDF5\n" * 4),
    raw("truncated", lambda b: b[: len(b) // 2]),
    edit("other_format", lambda f: f.attrs.__setitem__("format", "other-scan")),
    edit("other_version", lambda f: f.attrs.__setitem__("format_version", np.int32(2))),
    edit("missing_dataset", lambda f: f.__delitem__("geometry/source")),
    edit("missing_i0", lambda f: f.__delitem__("i0")),
    edit("wrong_rank", wrong_rank),
    edit("wrong_shape", geometry_shape),
    edit("views_disagree", views_disagree),
    edit("i0_shape_disagree", i0_shape_disagree),
    edit("dims_overflow", dims_overflow),
    edit("volume_dims_overflow", lambda f: f["volume"].attrs.__setitem__("dims", np.array([1 << 31] * 3, np.int64))),
    edit("nan_geometry", set_value("geometry/detector_center", (1, 0), np.nan)),
    edit("source_on_detector", source_on_detector),
    edit("zero_u", zero_vector("geometry/detector_u")),
    edit("zero_v", zero_vector("geometry/detector_v")),
    edit("nan_projection", set_value("projections", (2, 3, 4), np.nan)),
    edit("inf_projection", set_value("projections", (1, 0, 0), np.inf)),
    edit("negative_counts", set_value("projections", (0, 5, 7), -3.0)),
    edit("i0_zero", lambda f: replace(f, "i0", 0.0)),
    edit("i0_negative", lambda f: replace(f, "i0", -1000.0)),
    edit("volume_outside_fov", volume_outside),
    edit("counts_above_i0", counts_above_i0),
    edit("external_storage", external_storage),
    edit("unwritten_chunks", unwritten_chunks),
    edit("virtual_missing_source", virtual("missing_source.h5")),
    edit("virtual_self", virtual(".")),
    edit("lzf_filter", lzf_filter),
    edit("geometry_in_cm", geometry_in_cm),
    edit("counts_are_line_integrals", counts_are_line_integrals),
    edit("transposed", transposed),
])


def main(argv):
    if len(argv) > 1 and argv[1] == "--list":
        print("\n".join(CASES))
        return 0
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    base, out = argv[1], argv[2]
    names = argv[3:] or list(CASES)
    os.makedirs(out, exist_ok=True)
    for name in names:
        if name not in CASES:
            print(f"make_bad_scans.py: unknown case {name}", file=sys.stderr)
            return 2
        CASES[name](base, os.path.join(out, name + ".h5"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
