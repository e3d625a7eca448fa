"""tests/import_dicom.py DBTR CASE: `dbtr import` round trips and refusals (docs/dicom.md).

Each case writes DICOM files with pydicom from a known geometry (tests/import.cmake lists the
cases, one CTest entry each), runs `dbtr import`, and checks the scan file with h5py:

- the round trips (multiframe, multiframe_mirrored, singleframe_shuffled): counts exactly the
  pixel values, in view order; every source, detector centre, u and v within 1e-3 mm of the
  known geometry; i0, the grid the breast thickness gives, and the provenance notes;
- recon: an imported scan reconstructs (dbtr recon --backend cpu, 2 iterations);
- the refusals: exit code 2, one message naming the file and the attribute by tag and
  keyword, and no output file or temporary left behind.

It fails, never skips, when pydicom, h5py or numpy is missing: run.sh installs them.
"""
import math
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
    import pydicom
    from pydicom.dataset import Dataset, FileMetaDataset
    from pydicom.encaps import encapsulate, generate_pixel_data_frame
    from pydicom.uid import ExplicitVRLittleEndian, generate_uid
except ImportError as e:
    print(f"FAIL: {e}; the DICOM import tests need pydicom, h5py and numpy (run.sh installs python3-pydicom)")
    sys.exit(1)

BPXI_PROCESSING = "1.2.840.10008.5.1.4.1.1.13.1.5"
MG_PROCESSING = "1.2.840.10008.5.1.4.1.1.1.2.1"

# The known geometry: the `ge` preset's pivot (40 mm above the detector) with a 620 mm arm,
# 9 views from -20 to +20 deg, a stationary 64 x 48 detector. The pixels are not square
# (rows 1.0 mm apart, columns 0.8 mm), so a swap of (row, column) spacing shows.
ANGLES = [-20.0 + 5.0 * k for k in range(9)]
PIVOT, ARM = 40.0, 620.0
ROWS, COLS = 48, 64
ROW_MM, COL_MM = 1.0, 0.8
# The breast: 40 mm thick on a support 20 mm above the detector, so Distance Source to
# Patient is the central source's height (660 mm) less 20 mm.
THICKNESS, SUPPORT = 40.0, 20.0
SOD = PIVOT + ARM - SUPPORT
I0 = 10000
TOL = 1e-3  # mm, the brief's bound; DS strings of 12 digits and FL distances are far inside it


def sources():
    """Source k at pivot + ARM (sin a, 0, cos a): a positive angle puts it at +x."""
    a = np.radians(ANGLES)
    return np.stack([ARM * np.sin(a), np.zeros_like(a), PIVOT + ARM * np.cos(a)], axis=1)


def known_geometry():
    n = len(ANGLES)
    return {
        "source": sources(),
        "detector_center": np.tile([0.0, ROWS * ROW_MM / 2, 0.0], (n, 1)),
        "detector_u": np.tile([COL_MM, 0.0, 0.0], (n, 1)),
        "detector_v": np.tile([0.0, ROW_MM, 0.0], (n, 1)),
    }


def counts(seed):
    """Noisy counts with both ends of uint16 in them, so that a lossy store shows."""
    rng = np.random.default_rng(seed)
    c = rng.poisson(1353.0, size=(len(ANGLES), ROWS, COLS)).astype(np.uint16)
    c[0, 0, 0], c[-1, -1, -1] = 0, 65535
    return c


def ds_text(x):
    """A DS value within its 16 characters."""
    return "%.12g" % x


def dataset(sop_class, series, pixels):
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = sop_class
    meta.MediaStorageSOPInstanceUID = generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = Dataset()
    ds.file_meta = meta
    ds.is_little_endian, ds.is_implicit_VR = True, False
    ds.SOPClassUID, ds.SOPInstanceUID = sop_class, meta.MediaStorageSOPInstanceUID
    ds.SeriesInstanceUID = series
    ds.Modality = "MG"
    ds.PresentationIntentType = "FOR PROCESSING"
    ds.ImagerPixelSpacing = [ds_text(ROW_MM), ds_text(COL_MM)]
    ds.BodyPartThickness = ds_text(THICKNESS)
    ds.DistanceSourceToPatient = ds_text(SOD)
    ds.PixelIntensityRelationship = "LIN"
    ds.Rows, ds.Columns = pixels.shape[-2], pixels.shape[-1]
    ds.SamplesPerPixel, ds.PhotometricInterpretation = 1, "MONOCHROME2"
    ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, 16, 15, 0
    ds.PixelData = pixels.astype("<u2").tobytes()
    return ds


def write_single_frames(folder, c, sids=None, order_seed=5):
    """One MG For Processing file per view under a shuffled name; Instance Number k + 1.
    sids: Distance Source to Detector per view; by default the stationary detector's."""
    os.makedirs(folder, exist_ok=True)
    series = generate_uid()
    rng = np.random.default_rng(order_seed)
    names = [f"img{n:04d}.dcm" for n in rng.permutation(9000)[: len(ANGLES)]]
    assert names != sorted(names), "the file names must not sort in view order"
    # Distance to the stationary detector's centre on the chest-wall line, the origin.
    sids = np.linalg.norm(sources(), axis=1) if sids is None else sids
    for k, name in enumerate(names):
        ds = dataset(MG_PROCESSING, series, c[k])
        ds.InstanceNumber = k + 1
        ds.PositionerPrimaryAngle = ds_text(ANGLES[k])
        ds.DistanceSourceToDetector = ds_text(float(sids[k]))
        ds.save_as(os.path.join(folder, name), write_like_original=False)
    return [os.path.join(folder, n) for n in names]


def turn_y(deg):
    """The rotation that turns +Z toward +X by deg about Y (docs/dicom.md)."""
    a = math.radians(deg)
    return np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])


def write_multiframe(path, c, mirrored=False):
    """A Breast Projection X-Ray Image For Processing of the known geometry, stated in an
    isocenter system at the pivot 25 mm in from the chest wall, turned 3 deg about its Y
    axis: the import must undo both. Mirrored, the detector rows run toward -x instead."""
    iso, tilt = np.array([0.0, 25.0, PIVOT]), turn_y(3.0)
    ds = dataset(BPXI_PROCESSING, generate_uid(), c)
    ds.NumberOfFrames = len(ANGLES)
    ds.InstanceNumber = 1
    geometry = Dataset()
    # Every source is the same distance from this isocenter, so the distance is shared.
    geometry.DistanceSourceToIsocenter = float(np.linalg.norm(sources()[0] - iso))
    shared = Dataset()
    shared.XRayGeometrySequence = [geometry]
    ds.SharedFunctionalGroupsSequence = [shared]
    sign = -1.0 if mirrored else 1.0
    corner = [-sign * (COLS - 1) / 2 * COL_MM, ROW_MM / 2, 0.0]  # pixel (0, 0) in detector coordinates
    frames = []
    for s in sources():
        p = tilt @ (s - iso)
        r = Dataset()
        r.XRaySourceIsocenterPrimaryAngle = math.degrees(math.atan2(p[0], p[2]))
        r.XRaySourceIsocenterSecondaryAngle = math.degrees(math.asin(p[1] / np.linalg.norm(p)))
        r.DetectorIsocenterPrimaryAngle, r.DetectorIsocenterSecondaryAngle = 3.0, 0.0
        od = tilt @ (np.zeros(3) - iso)  # the detector reference point: the world origin
        r.DetectorXPositionToIsocenter, r.DetectorYPositionToIsocenter, r.DetectorZPositionToIsocenter = map(float, od)
        r.DetectorActiveAreaTLHCPosition = corner
        r.DetectorActiveAreaOrientation = [sign, 0.0, 0.0, 0.0, 1.0, 0.0]
        f = Dataset()
        f.IsocenterReferenceSystemSequence = [r]
        frames.append(f)
    ds.PerFrameFunctionalGroupsSequence = frames
    ds.save_as(path, write_like_original=False)


def run(args, expect=0):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != expect:
        fail(f"{' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}{p.stderr}")
    return p


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def check_scan(path, c, geometry, notes):
    with h5py.File(path, "r") as f:
        proj = f["projections"][...]
        quantity = f["projections"].attrs["quantity"]
        if quantity not in ("counts", b"counts") or not np.array_equal(proj, c.astype(proj.dtype)):
            fail(f"{path}: /projections differ from the pixel values")
        if proj.dtype != np.uint16:
            fail(f"{path}: /projections stored as {proj.dtype}; uint16 keeps these counts exactly")
        if f["i0"][()] != I0:
            fail(f"{path}: /i0 {f['i0'][()]}")
        for name, want in geometry.items():
            got = f["geometry/" + name][...]
            err = np.abs(got - want).max()
            if err > TOL:
                fail(f"{path}: /geometry/{name} is {err:.3g} mm off:\n{got}\nexpected\n{want}")
        v = f["volume"].attrs
        want_origin = [-(COLS - 1) / 2 * COL_MM, ROW_MM / 2, SUPPORT + 0.5]
        if list(v["dims"]) != [COLS, ROWS, int(THICKNESS)] or np.abs(v["voxel_size"] - [COL_MM, ROW_MM, 1.0]).max() > 1e-12 \
                or np.abs(v["origin"] - want_origin).max() > TOL:
            fail(f"{path}: /volume {dict(v)}; expected the grid of the breast thickness")
        prov = {k: f["provenance"].attrs[k].decode() for k in f["provenance"].attrs}
        for key, needle in notes.items():
            if needle not in prov.get(key, ""):
                fail(f"{path}: /provenance attribute '{key}' lacks '{needle}': {prov}")
    return prov


def case_multiframe(dbtr, work, mirrored=False):
    c = counts(1)
    write_multiframe(os.path.join(work, "bpxi.dcm"), c, mirrored)
    out = os.path.join(work, "scan.h5")
    run([dbtr, "import", os.path.join(work, "bpxi.dcm"), "-o", out, "--i0", str(I0), "--quiet"])
    g = known_geometry()
    if mirrored:  # the import takes the rows' direction as +x: the world comes out mirrored in x
        g["source"][:, 0] *= -1
    check_scan(out, c, g, {"source": "(0018,9543/9544)", "i0": "--i0",
                           "detector": "mirrored in x" if mirrored else "moved rigidly so",
                           "volume": "BodyPartThickness"})
    info = run([dbtr, "info", out]).stdout
    if "provenance" not in info or "(0018,9402) DistanceSourceToIsocenter" not in info:
        fail(f"dbtr info does not show the provenance:\n{info}")
    # One order everywhere, columns x rows (docs/ARCHITECTURE.md, the preset convention), and
    # views counted from 0 as dbtr info's table counts them: the central view the grid note
    # names is the 0 deg one, ANGLES' index 4.
    central = ANGLES.index(0.0)
    if f"DistanceSourceToPatient, view {central})" not in info:
        fail(f"the provenance does not name the central view as dbtr info counts it ({central}):\n{info}")
    said = run([dbtr, "import", os.path.join(work, "bpxi.dcm"), "-o", os.path.join(work, "again.h5"),
                "--i0", str(I0)]).stderr
    if f"{len(ANGLES)} views of {COLS} x {ROWS} pixels" not in said:
        fail(f"dbtr import does not say columns x rows ({COLS} x {ROWS}):\n{said}")
    if f"{len(ANGLES)} views of {COLS} x {ROWS} pixels (columns x rows)" not in info:
        fail(f"dbtr info does not say columns x rows ({COLS} x {ROWS}):\n{info}")


def case_singleframe_shuffled(dbtr, work):
    c = counts(2)
    folder = os.path.join(work, "views")
    write_single_frames(folder, c)
    out = os.path.join(work, "scan.h5")
    run([dbtr, "import", folder, "-o", out, "--system", "ge", "--i0", str(I0), "--quiet"])
    check_scan(out, c, known_geometry(), {"source": "pivot 40 mm above the detector (--system ge)",
                                          "detector": "stationary (--system ge)", "i0": "--i0",
                                          "projections": "InstanceNumber order"})
    info = run([dbtr, "info", out]).stdout
    if "--system ge" not in info:
        fail(f"dbtr info does not say the pivot came from --system ge:\n{info}")


def case_singleframe_rotating(dbtr, work):
    """A detector that turns with the source about the pivot: its chest-wall centre goes to
    (-h sin a, 0, h - h cos a), and the source stays ARM + PIVOT from it."""
    c = counts(8)
    folder = os.path.join(work, "views")
    write_single_frames(folder, c, sids=[ARM + PIVOT] * len(ANGLES))
    out = os.path.join(work, "scan.h5")
    run([dbtr, "import", folder, "-o", out, "--pivot-height", str(PIVOT), "--detector", "rotating",
         "--i0", str(I0), "--quiet"])
    a = np.radians(ANGLES)
    chest = np.stack([-PIVOT * np.sin(a), 0 * a, PIVOT - PIVOT * np.cos(a)], axis=1)
    g = known_geometry()
    g["detector_center"] = chest + [0.0, ROWS * ROW_MM / 2, 0.0]
    g["detector_u"] = COL_MM * np.stack([np.cos(a), 0 * a, -np.sin(a)], axis=1)
    check_scan(out, c, g, {"detector": "turning with the source about the pivot (--detector)",
                           "source": "(--pivot-height)"})


def case_recon(dbtr, work):
    folder = os.path.join(work, "views")
    write_single_frames(folder, counts(3))
    scan, vol = os.path.join(work, "scan.h5"), os.path.join(work, "vol.tif")
    run([dbtr, "import", folder, "-o", scan, "--pivot-height", str(PIVOT), "--detector", "stationary",
         "--i0", str(I0), "--quiet"])
    run([dbtr, "recon", scan, "-o", vol, "--backend", "cpu", "--iterations", "2", "--quiet"])
    if not os.path.getsize(vol):
        fail("dbtr recon wrote an empty volume")


def expect_refusal(dbtr, work, inputs, needle, extra=()):
    out = os.path.join(work, "out", "scan.h5")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    p = run([dbtr, "import", *inputs, "-o", out, "--system", "ge", "--i0", str(I0), *extra], expect=2)
    lines = p.stderr.strip().splitlines()
    if len(lines) != 1 or needle not in lines[0]:
        fail(f"the message should be one line naming '{needle}': {p.stderr!r}")
    left = os.listdir(os.path.dirname(out))
    if left:
        fail(f"a refused import left {left} behind")


def single_folder(work, edit):
    """Single-frame views whose file that sorts last (the import compares each file with
    the first) goes through edit(ds) before it is saved."""
    folder = os.path.join(work, "views")
    path = sorted(write_single_frames(folder, counts(4)))[-1]
    ds = pydicom.dcmread(path)
    edit(ds)
    ds.save_as(path, write_like_original=False)
    return folder, os.path.basename(path)


def case_missing_tag(dbtr, work):
    folder, name = single_folder(work, lambda ds: delattr(ds, "DistanceSourceToDetector"))
    expect_refusal(dbtr, work, [folder], f"{name}: (0018,1110) DistanceSourceToDetector: missing")


def case_absurd_geometry_in_folder(dbtr, work):
    """1e300 in one file of a folder of single frames (not the first view): the message named
    the folder's first file, with the view counted from 0. Now the file that holds it."""
    for attr, needle in [("DistanceSourceToDetector", "(0018,1110) DistanceSourceToDetector: 1e+300 mm"),
                         ("PositionerPrimaryAngle", "the ray to detector corner")]:
        shutil.rmtree(os.path.join(work, "views"), ignore_errors=True)
        folder, name = single_folder(work, lambda ds: setattr(ds, attr, "1e300"))
        if pydicom.dcmread(os.path.join(folder, name)).InstanceNumber == 1:
            fail(f"{name} is the first view: the case needs another")
        expect_refusal(dbtr, work, [folder], f"{name}: {needle}")


def case_inconsistent_spacing(dbtr, work):
    folder, name = single_folder(work, lambda ds: setattr(ds, "ImagerPixelSpacing", ["0.5", "0.5"]))
    expect_refusal(dbtr, work, [folder], f"{name}: (0018,1164) ImagerPixelSpacing: 0.5\\0.5, but ")


def case_mixed_series(dbtr, work):
    folder, name = single_folder(work, lambda ds: setattr(ds, "SeriesInstanceUID", generate_uid()))
    expect_refusal(dbtr, work, [folder], f"{name}: (0020,000E) SeriesInstanceUID: ")


def case_not_dicom(dbtr, work):
    folder = os.path.join(work, "views")
    write_single_frames(folder, counts(5))
    with open(os.path.join(folder, "notes.txt"), "w") as f:
        f.write("acquired on the second unit\n")
    expect_refusal(dbtr, work, [folder], "notes.txt: not a DICOM file")


def case_multiframe_missing_tag(dbtr, work):
    path = os.path.join(work, "bpxi.dcm")
    write_multiframe(path, counts(6))
    ds = pydicom.dcmread(path)
    del ds.PerFrameFunctionalGroupsSequence[3].IsocenterReferenceSystemSequence[0].DetectorActiveAreaOrientation
    ds.save_as(path, write_like_original=False)
    expect_refusal(dbtr, work, [path], "bpxi.dcm: frame 4: (0018,9558) DetectorActiveAreaOrientation: missing")


def case_existing_output(dbtr, work):
    folder = os.path.join(work, "views")
    write_single_frames(folder, counts(7))
    out = os.path.join(work, "scan.h5")
    with open(out, "w") as f:
        f.write("keep me\n")
    p = run([dbtr, "import", folder, "-o", out, "--system", "ge", "--i0", str(I0)], expect=2)
    if "exists; use --force" not in p.stderr or open(out).read() != "keep me\n":
        fail(f"an existing output was not kept: {p.stderr!r}")
    run([dbtr, "import", folder, "-o", out, "--system", "ge", "--i0", str(I0), "--force", "--quiet"])


def truncate(path, keep):
    data = open(path, "rb").read()
    open(path, "wb").write(data[:keep])


# Issue 23, item 2: damaged files were imported as good (zeros in place of the missing
# pixels), or crashed dbtr, or blocked it. Each is now refused in one line naming the file.
def case_truncated_multiframe(dbtr, work):
    """A multi-frame object cut half way through its pixel data (27648 of 55296 bytes)."""
    path = os.path.join(work, "bpxi.dcm")
    c = counts(9)
    write_multiframe(path, c)
    truncate(path, os.path.getsize(path) - c.nbytes // 2)
    expect_refusal(dbtr, work, [path], "bpxi.dcm: the file has")


def case_truncated_in_folder(dbtr, work):
    """One truncated file among single frames: 1000 of its 6144 pixel bytes are gone."""
    folder = os.path.join(work, "views")
    path = sorted(write_single_frames(folder, counts(10)))[3]
    truncate(path, os.path.getsize(path) - 1000)
    expect_refusal(dbtr, work, [folder], os.path.basename(path) + ": the file has")


def case_short_pixel_data(dbtr, work):
    """Pixel data a whole element, but 1536 pixels (3072 bytes) shorter than Rows x Columns x
    NumberOfFrames say."""
    path = os.path.join(work, "bpxi.dcm")
    write_multiframe(path, counts(11))
    ds = pydicom.dcmread(path)
    ds.PixelData = ds.PixelData[:-3072]
    ds.save_as(path, write_like_original=False)
    expect_refusal(dbtr, work, [path], "bpxi.dcm: (7FE0,0010) PixelData: 52224 bytes; Rows x Columns x NumberOfFrames")


def case_truncated_header(dbtr, work):
    """Cut inside its meta header: GDCM asserts and aborts (SIGABRT); the guarded child's
    crash is the refusal, and the assert's own line does not reach the user."""
    path = os.path.join(work, "bpxi.dcm")
    write_multiframe(path, counts(12))
    truncate(path, 300)
    expect_refusal(dbtr, work, [path], "bpxi.dcm: reading the DICOM file crashed GDCM (SIGABRT)")


def case_fifo(dbtr, work):
    """A FIFO would block the read for ever."""
    path = os.path.join(work, "views.dcm")
    os.mkfifo(path)
    expect_refusal(dbtr, work, [path], "views.dcm: is a FIFO; dbtr reads only regular files")


def case_zero_rows(dbtr, work):
    """Rows 0: said what is wrong, not only listed."""
    path = os.path.join(work, "bpxi.dcm")
    write_multiframe(path, counts(13))
    ds = pydicom.dcmread(path)
    ds.Rows = 0
    ds.save_as(path, write_like_original=False)
    expect_refusal(dbtr, work, [path], "bpxi.dcm: (0028,0010) Rows: 0; an image has at least one row")


def case_dicomdir(dbtr, work):
    """A DICOMDIR, the index of a folder, given as if it were an image: said so, not
    "(0008,0016) SOPClassUID: missing"."""
    path = os.path.join(work, "DICOMDIR")
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = "1.2.840.10008.1.3.10"  # Media Storage Directory Storage
    meta.MediaStorageSOPInstanceUID = generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = Dataset()
    ds.file_meta = meta
    ds.is_little_endian, ds.is_implicit_VR = True, False
    ds.FileSetID = "SCANS"
    ds.OffsetOfTheFirstDirectoryRecordOfTheRootDirectoryEntity = 0
    ds.OffsetOfTheLastDirectoryRecordOfTheRootDirectoryEntity = 0
    ds.FileSetConsistencyFlag = 0
    ds.DirectoryRecordSequence = []
    ds.save_as(path, write_like_original=False)
    expect_refusal(dbtr, work, [path], "DICOMDIR: a DICOMDIR (the index of a DICOM folder), not an image")


# JPEG 2000 (the transfer syntax most DBT projections come in): decoded in a guarded child
# (io/dicom_import.c), each frame's header checked against the file's before one is decoded
# (io/dicom.cc). GDCM writes the files (tests/dicom_j2k.cc); pydicom swaps their frames.
def to_j2k(src, dst):
    j2k = os.environ.get("DBTR_DICOM_J2K")
    if not j2k:
        fail("DBTR_DICOM_J2K (tests/dicom_j2k, the JPEG 2000 writer) is not set: tests/import.cmake sets it")
    run([j2k, src, dst])


def j2k_frames(path):
    ds = pydicom.dcmread(path)
    return ds, [bytes(f) for f in generate_pixel_data_frame(ds.PixelData, int(ds.NumberOfFrames))]


def j2k_with_frame(work, edit):
    """The known multi-frame object in JPEG 2000, its frame 4 (index 3) replaced by
    edit(frames), saved as bpxi.dcm."""
    plain, path = os.path.join(work, "plain.dcm"), os.path.join(work, "bpxi.dcm")
    write_multiframe(plain, counts(14))
    to_j2k(plain, path)
    ds, frames = j2k_frames(path)
    frames[3] = edit(frames)
    ds.PixelData = encapsulate(frames)
    ds.save_as(path, write_like_original=False)
    os.remove(plain)
    return path


def other_j2k_frame(work, shape, bits=16):
    """Frame 1 of a JPEG 2000 object of other pixels: shape (rows, columns), bits a sample."""
    src, dst = os.path.join(work, "other.dcm"), os.path.join(work, "other_j2k.dcm")
    c = counts(15)[:, : shape[0], : shape[1]] if shape[0] <= ROWS else np.tile(counts(15), (1, 2, 2))
    ds = dataset(BPXI_PROCESSING, generate_uid(), c)
    ds.NumberOfFrames = len(c)
    if bits == 8:
        ds.BitsAllocated, ds.BitsStored, ds.HighBit = 8, 8, 7
        ds.PixelData = (c % 256).astype(np.uint8).tobytes()
    ds.save_as(src, write_like_original=False)
    to_j2k(src, dst)
    frame = j2k_frames(dst)[1][0]
    os.remove(src)
    os.remove(dst)
    return frame


def case_j2k_multiframe(dbtr, work):
    """A JPEG 2000 multi-frame object imports exactly: the counts are the pixels, bit for bit
    (lossless), decoded in the guarded child and handed back."""
    c = counts(14)
    plain, path = os.path.join(work, "plain.dcm"), os.path.join(work, "bpxi.dcm")
    write_multiframe(plain, c)
    to_j2k(plain, path)
    if pydicom.dcmread(path).file_meta.TransferSyntaxUID != "1.2.840.10008.1.2.4.90":
        fail(f"{path}: not written as JPEG 2000 (lossless)")
    out = os.path.join(work, "scan.h5")
    run([dbtr, "import", path, "-o", out, "--i0", str(I0), "--quiet"])
    check_scan(out, c, known_geometry(), {"source": "(0018,9543/9544)"})


def case_j2k_corrupt_frame(dbtr, work):
    """Frame 4 cut to half its bytes (its end marker kept): OpenJPEG printed its complaint on
    stderr before dbtr's line, which named neither frame. One line, naming the frame."""
    path = j2k_with_frame(work, lambda f: f[3][: len(f[3]) // 2] + b"\xff\xd9")
    expect_refusal(dbtr, work, [path], "bpxi.dcm: frame 4: (7FE0,0010) PixelData: GDCM cannot decode this frame "
                   "(JPEG 2000 Image Compression (Lossless Only))")


def case_j2k_frame_size(dbtr, work):
    """Frame 4 of 24 x 32 pixels in an object of 48 x 64: GDCM imported it as good, the pixels
    shifted; a larger frame overran GDCM's buffer (abort). Each frame's header is checked."""
    frame = other_j2k_frame(work, (24, 32))
    path = j2k_with_frame(work, lambda f: frame)
    expect_refusal(dbtr, work, [path], "bpxi.dcm: frame 4: (7FE0,0010) PixelData: a JPEG 2000 frame of 32 x 24 pixels")
    big = other_j2k_frame(work, (96, 128))
    path = j2k_with_frame(work, lambda f: big)
    expect_refusal(dbtr, work, [path], "bpxi.dcm: frame 4: (7FE0,0010) PixelData: a JPEG 2000 frame of 128 x 96 pixels")


def case_j2k_frame_bits(dbtr, work):
    """Frame 4 of 8-bit samples in an object of 16: GDCM crashed (SIGSEGV or SIGABRT)."""
    frame = other_j2k_frame(work, (ROWS, COLS), bits=8)
    path = j2k_with_frame(work, lambda f: frame)
    expect_refusal(dbtr, work, [path], "bpxi.dcm: frame 4: (7FE0,0010) PixelData: a JPEG 2000 frame of 64 x 48 pixels, "
                   "1 sample of 8 bits")


CASES = {
    "absurd_geometry_in_folder": case_absurd_geometry_in_folder,
    "j2k_multiframe": case_j2k_multiframe,
    "j2k_corrupt_frame": case_j2k_corrupt_frame,
    "j2k_frame_size": case_j2k_frame_size,
    "j2k_frame_bits": case_j2k_frame_bits,
    "dicomdir": case_dicomdir,
    "truncated_multiframe": case_truncated_multiframe,
    "truncated_in_folder": case_truncated_in_folder,
    "short_pixel_data": case_short_pixel_data,
    "truncated_header": case_truncated_header,
    "fifo": case_fifo,
    "zero_rows": case_zero_rows,
    "multiframe": case_multiframe,
    "multiframe_mirrored": lambda dbtr, work: case_multiframe(dbtr, work, mirrored=True),
    "singleframe_shuffled": case_singleframe_shuffled,
    "singleframe_rotating": case_singleframe_rotating,
    "recon": case_recon,
    "missing_tag": case_missing_tag,
    "multiframe_missing_tag": case_multiframe_missing_tag,
    "inconsistent_spacing": case_inconsistent_spacing,
    "not_dicom": case_not_dicom,
    "mixed_series": case_mixed_series,
    "existing_output": case_existing_output,
}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        print(f"usage: {sys.argv[0]} DBTR CASE; cases: {' '.join(CASES)}")
        sys.exit(2)
    with tempfile.TemporaryDirectory(prefix="dbtr-import-") as work:
        CASES[sys.argv[2]](os.path.abspath(sys.argv[1]), work)
    print(f"import.{sys.argv[2]}: ok")
