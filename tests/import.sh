#!/bin/sh
# tests/import.sh DBTR CASE: one case of tests/import_dicom.py, run by the Python that has
# pydicom, h5py and numpy: DBTR_PYTHON, default /usr/bin/python3 (Debian's python3-pydicom).
exec "${DBTR_PYTHON:-/usr/bin/python3}" "$(dirname "$0")/import_dicom.py" "$@"
