#!/usr/bin/python3
"""tests/fuzz/make_dicom_seeds.py: writes the seeds and regression inputs of the DICOM
import's fuzz harness (tests/fuzz/fuzz_dicom.c).

    /usr/bin/python3 tests/fuzz/make_dicom_seeds.py [OUT_DIR]   (default: tests/fuzz)

Writes OUT_DIR/corpus_dicom/ (valid files: a multi-frame Breast Projection X-Ray Image with
its isocenter geometry, and a single-frame MG For Processing view) and OUT_DIR/regress_dicom/
(the damaged files of issue 23, each of which must be refused cleanly). They are made by
tests/import_dicom.py's writers on a smaller detector (8 x 6 pixels, 3 views), so that each
is a few KB, well under the fuzz run's -max_len. Committed, so that .ci/fuzz.sh needs no
pydicom; run this again only to change them.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import import_dicom as t  # noqa: E402  (tests/import_dicom.py)
import numpy as np  # noqa: E402
import pydicom  # noqa: E402

t.ROWS, t.COLS = 6, 8
t.ANGLES = [-10.0, 0.0, 10.0]


def main(out):
    corpus, regress = os.path.join(out, "corpus_dicom"), os.path.join(out, "regress_dicom")
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(regress, exist_ok=True)
    c = t.counts(1)
    multi = os.path.join(corpus, "bpxi_multiframe.dcm")
    t.write_multiframe(multi, c)
    single_dir = os.path.join(out, "single.tmp")
    one = sorted(t.write_single_frames(single_dir, c, order_seed=2))[0]
    os.replace(one, os.path.join(corpus, "mg_single_frame.dcm"))
    for f in os.listdir(single_dir):
        os.remove(os.path.join(single_dir, f))
    os.rmdir(single_dir)
    data = open(multi, "rb").read()
    # Cut half way through the pixel data: GDCM reads it with zeros in place of the rest.
    open(os.path.join(regress, "truncated_pixel_data"), "wb").write(data[: len(data) - c.nbytes // 2])
    # Cut inside the meta header: GDCM asserts and aborts (the guarded child's refusal).
    open(os.path.join(regress, "truncated_meta_header"), "wb").write(data[:300])
    ds = pydicom.dcmread(multi)
    ds.PixelData = ds.PixelData[:-32]  # a whole element, 16 pixels short of Rows x Columns x frames
    ds.save_as(os.path.join(regress, "short_pixel_data"), write_like_original=False)
    ds = pydicom.dcmread(multi)
    ds.NumberOfFrames = 2147483647
    ds.save_as(os.path.join(regress, "frames_beyond_pixel_data"), write_like_original=False)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
