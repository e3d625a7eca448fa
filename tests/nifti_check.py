#!/usr/bin/python3
"""tests/nifti_check.py NII TIF [NII TIF ...]: nibabel opens each NIfTI file dbtr wrote and
finds what the TIFF of the same run (read with tifffile) holds: shape (nx, ny, nz), voxel
size, origin, units mm, and the stored data bit for bit. Exits 1 at the first difference.

NIfTI-1 keeps the voxel size, the affine and the scaling in float32, so each is compared
with the TIFF's exact double (dbtr_voxel_size, dbtr_origin) rounded to float32 once.
"""
import sys

import nibabel as nib
import numpy as np
import tifffile

F32 = np.float32


def fail(path, what):
    print(f"FAIL: {path}: {what}")
    sys.exit(1)


def read_tiff(path):
    """The volume (nz, ny, nx) as stored, and dbtr's keys of the ImageJ description."""
    with tifffile.TiffFile(path) as tif:
        vol = tif.series[0].asarray()
        keys = tif.imagej_metadata
    voxel = [float(s) for s in keys["dbtr_voxel_size"].split(",")]
    origin = [float(s) for s in keys["dbtr_origin"].split(",")]
    scale = float(keys["dbtr_u16_scale"]) if "dbtr_u16_scale" in keys else None
    offset = float(keys.get("dbtr_u16_offset", 0.0))
    return vol, voxel, origin, scale, offset


def check_geometry(path, img, vol, voxel, origin):
    nz, ny, nx = vol.shape
    if img.shape != (nx, ny, nz):
        fail(path, f"shape {img.shape}, want {(nx, ny, nz)}")
    zooms = tuple(F32(v) for v in voxel)
    if img.header.get_zooms() != zooms:
        fail(path, f"zooms {img.header.get_zooms()}, want {zooms}")
    if img.header.get_xyzt_units()[0] != "mm":
        fail(path, f"units {img.header.get_xyzt_units()}, want mm")
    want = np.diag([*zooms, 1.0]).astype(np.float64)  # voxel (i,j,k) -> origin + (i dx, j dy, k dz)
    want[:3, 3] = [F32(o) for o in origin]
    sform, scode = img.get_sform(coded=True)
    qform, qcode = img.get_qform(coded=True)
    if (scode, qcode) != (1, 1):  # NIFTI_XFORM_SCANNER_ANAT, both
        fail(path, f"sform_code {scode}, qform_code {qcode}, want 1 and 1")
    for name, got in (("sform", sform), ("qform", qform), ("affine", img.affine)):
        if not np.array_equal(got, want):
            fail(path, f"{name}\n{got}\nwant\n{want}")


def check_data(path, img, vol, scale, offset):
    raw = np.asanyarray(img.dataobj.get_unscaled())  # (nx, ny, nz) as stored
    if raw.dtype != vol.dtype:
        fail(path, f"data type {raw.dtype}, the TIFF's {vol.dtype}")
    bits = np.dtype(f"u{vol.dtype.itemsize}")  # NaN != NaN: compare the bits, as unsigned integers
    if not np.array_equal(raw.view(bits), vol.transpose(2, 1, 0).view(bits)):
        fail(path, "data differ from the TIFF's")
    slope, inter = img.dataobj.slope, img.dataobj.inter
    if scale is None:
        if (slope, inter) != (1.0, 0.0):
            fail(path, f"{vol.dtype} scaled by {slope}, {inter}")
        return
    if (slope, inter) != (F32(1.0 / scale), F32(offset)):
        fail(path, f"scl_slope {slope}, scl_inter {inter}, want 1/{scale}, {offset}")
    # nibabel's value = slope * stored + inter: slope is 1/scale rounded to float32 (2^-24
    # relative), and nibabel may compute in float32 (another 2^-24 per operation).
    want = vol.transpose(2, 1, 0).astype(np.float64) / scale + offset
    if not np.allclose(np.asarray(img.dataobj, dtype=np.float64), want, rtol=2.0**-21, atol=0.0):
        fail(path, "scaled values differ from stored / scale + offset")


def main(args):
    if len(args) < 2 or len(args) % 2:
        print(__doc__)
        return 2
    for nii, tif in zip(args[::2], args[1::2]):
        vol, voxel, origin, scale, offset = read_tiff(tif)
        with open(nii, "rb") as f:
            gzipped = f.read(2) == b"\x1f\x8b"
        if gzipped != nii.endswith(".gz"):
            fail(nii, "gzip or not, against its name")
        img = nib.load(nii)
        if type(img) is not nib.Nifti1Image:
            fail(nii, f"opened as {type(img).__name__}, not a single-file NIfTI-1")
        check_geometry(nii, img, vol, voxel, origin)
        check_data(nii, img, vol, scale, offset)
        print(f"ok {nii}: {img.shape} {vol.dtype} zooms {img.header.get_zooms()} origin {img.affine[:3, 3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
