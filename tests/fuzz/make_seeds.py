#!/usr/bin/python3
"""tests/fuzz/make_seeds.py: writes the seed corpora of the two fuzz harnesses.

    /usr/bin/python3 tests/fuzz/make_seeds.py [OUT_DIR]   (default: tests/fuzz)

Writes OUT_DIR/corpus_scan/*.h5 and OUT_DIR/corpus_tiff/*.tif, and one hand-made regression
input, OUT_DIR/regress_scan/compact_storage_too_small (see compact_storage_too_small()). The seeds are committed, so
.ci/fuzz.sh needs neither h5py nor tifffile; run this again only to change them. Each seed
is a small valid file (a few KB, under the 20 KB the fuzz run's -max_len allows with room)
that takes the reader down a different path: each stored type, each i0 shape, fixed and
variable-length strings, gzip chunks, big-endian data, /volume as a group and as a
dataset; for TIFF, strips and tiles, deflate, both byte orders, BigTIFF, several sample
types, and ImageJ and dbtr descriptions. The fuzzer mutates from there.
"""
import os
import shutil
import sys

import h5py
import numpy as np
import tifffile

N_VIEWS, N_ROWS, N_COLS = 2, 4, 6  # the docs/scan-format.md example: small, and valid


def scan(path, dtype="<f4", quantity="counts", i0="scalar", gzip=False, vlen=False, volume="group"):
    """A valid two-view scan (the geometry of docs/scan-format.md) with the given storage."""
    counts = np.full((N_VIEWS, N_ROWS, N_COLS), 900.0)
    counts[0, 1, 2] = 1100.0  # one count above i0: accepted, and a different value to mutate
    data = counts if quantity == "counts" else np.log(1000.0 / counts)
    with h5py.File(path, "w", libver="earliest") as f:
        if vlen:
            f.attrs["format"] = "dbtr-scan"  # h5py writes str as a variable-length string
        else:
            f.attrs.create("format", np.bytes_("dbtr-scan"))  # fixed length, null padded
        f.attrs["format_version"] = np.int32(1)
        kw = {"chunks": (1, N_ROWS, N_COLS), "compression": "gzip"} if gzip else {}
        d = f.create_dataset("projections", data=data.astype(dtype), **kw)
        d.attrs["quantity"] = quantity if vlen else np.bytes_(quantity)
        if i0 == "scalar":
            f["i0"] = 1000.0
        elif i0 == "view":
            f["i0"] = np.full(N_VIEWS, 1000, dtype=">i4")
        elif i0 == "pixel":
            f["i0"] = np.full((N_ROWS, N_COLS), 1000.0, dtype="<f4")
        elif i0 == "full":
            f["i0"] = np.full((N_VIEWS, N_ROWS, N_COLS), 1000.0)
        g = f.create_group("geometry")
        g["source"] = np.array([[-30.0, 0.0, 660.0], [30.0, 0.0, 660.0]], dtype=dtype if "f" in dtype else "<f8")
        g["detector_center"] = np.zeros((N_VIEWS, 3))
        g["detector_u"] = np.array([[0.1, 0.0, 0.0]] * N_VIEWS)
        g["detector_v"] = np.array([[0.0, 0.1, 0.0]] * N_VIEWS)
        if volume:
            v = f.create_group("volume") if volume == "group" else f.create_dataset("volume", data=np.zeros(1))
            v.attrs["dims"] = np.array([6, 4, 3], dtype=np.int64)
            v.attrs["voxel_size"] = np.array([0.1, 0.1, 1.0])
            v.attrs["origin"] = np.array([-0.25, -0.15, 0.5])


def scans(out):
    os.makedirs(out, exist_ok=True)
    scan(f"{out}/f32_scalar_i0.h5")
    scan(f"{out}/u16_gzip_view_i0_vlen.h5", dtype="<u2", i0="view", gzip=True, vlen=True)
    scan(f"{out}/u32_pixel_i0_volume_dataset.h5", dtype="<u4", i0="pixel", volume="dataset")
    scan(f"{out}/f64be_full_i0_no_volume.h5", dtype=">f8", i0="full", volume=None)
    scan(f"{out}/line_integral_no_i0.h5", quantity="line_integral", i0=None, vlen=True)


def volume(nz=3, ny=5, nx=4, dtype=np.float32):
    """A small ramp, so that every voxel differs."""
    return (np.arange(nz * ny * nx).reshape(nz, ny, nx) % 251).astype(dtype)


def dbtr_description(nz, dz=1.0):
    """The description dbtr's writer puts on page 0 (docs/volume-format.md)."""
    return (f"ImageJ=1.11a\nimages={nz}\nslices={nz}\nunit=mm\nspacing={dz}\nloop=false\n"
            f"dbtr_voxel_size=0.10000000000000001,0.10000000000000001,{dz}\n"
            f"dbtr_origin=-0.15000000000000002,-0.20000000000000001,0.5\n")


def tiffs(out):
    os.makedirs(out, exist_ok=True)
    v = volume()
    # As dbtr writes it: float32, strips, ImageJ + dbtr description, resolution in pixels/mm.
    tifffile.imwrite(f"{out}/dbtr_float32.tif", v, description=dbtr_description(3), metadata=None,
                     resolution=(10.0, 10.0), resolutionunit="NONE", contiguous=True, photometric="minisblack")
    # Without photometric="minisblack" tifffile stores a last axis of 3 or 4 as RGB(A).
    # uint16, deflate, tiled 16 x 16, little-endian, ImageJ metadata in microns.
    tifffile.imwrite(f"{out}/u16_deflate_tiled_imagej_um.tif", volume(2, 20, 18, np.uint16), imagej=True,
                     resolution=(1 / 85.0, 1 / 85.0), metadata={"unit": "um", "spacing": 1000.0},
                     compression="zlib", tile=(16, 16))
    # int16, big-endian, one row per strip, centimetre resolution unit, no description.
    tifffile.imwrite(f"{out}/i16_be_cm.tif", volume(dtype=np.int16) - 100, byteorder=">", rowsperstrip=1,
                     resolution=(100.0, 100.0), resolutionunit="CENTIMETER", metadata=None,
                     photometric="minisblack")
    # float64 BigTIFF, two pages.
    tifffile.imwrite(f"{out}/f64_bigtiff.tif", volume(2, 3, 3, np.float64), bigtiff=True, metadata=None,
                     photometric="minisblack")
    # uint8 single page, plain, and int32 / uint32 pages.
    tifffile.imwrite(f"{out}/u8_one_page.tif", volume(1, 8, 8, np.uint8), metadata=None,
                     photometric="minisblack")
    tifffile.imwrite(f"{out}/i32_deflate.tif", volume(2, 4, 4, np.int32) - 7, compression="zlib", metadata=None,
                     photometric="minisblack")


def compact_storage_too_small(seed, out):
    """A valid scan whose /geometry/detector_u is stored compact (in its object header) and
    whose layout message then says 0 bytes are stored for its 2 x 3 doubles. HDF5 1.10.8
    opens it and H5Dread copies from a null buffer: the reader must check the stored size
    first (the fuzzer found this; this file isolates it)."""
    shutil.copyfile(seed, out)
    with h5py.File(out, "r+") as f:
        u = np.ascontiguousarray(f["geometry/detector_u"][...], dtype="<f8")
        del f["geometry/detector_u"]
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        d = h5py.h5d.create(f["geometry"].id, b"detector_u", h5py.h5t.IEEE_F64LE, h5py.h5s.create_simple(u.shape),
                            dcpl=dcpl)
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, u)
    data = bytearray(open(out, "rb").read())
    # Layout message version 3, class 0 (compact), stored size 48 as uint16 LE, the data.
    pattern = bytes([3, 0, 48, 0]) + u.tobytes()
    assert data.count(pattern) == 1, "the compact layout message was not found exactly once"
    data[data.find(pattern) + 2] = 0
    with open(out, "wb") as g:
        g.write(data)


def main():
    here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    scans(os.path.join(here, "corpus_scan"))
    tiffs(os.path.join(here, "corpus_tiff"))
    os.makedirs(os.path.join(here, "regress_scan"), exist_ok=True)
    compact_storage_too_small(os.path.join(here, "corpus_scan", "f32_scalar_i0.h5"),
                              os.path.join(here, "regress_scan", "compact_storage_too_small"))
    for d in ("corpus_scan", "corpus_tiff"):
        for name in sorted(os.listdir(os.path.join(here, d))):
            size = os.path.getsize(os.path.join(here, d, name))
            print(f"{d}/{name}: {size} bytes")
            assert size < 20000, f"{name}: seeds stay under 20 KB"


if __name__ == "__main__":
    main()
