# tests/nifti.cmake: NIfTI volumes and the writer that picks the file type from the name
# (io/nifti.c, io/volume.c, docs/volume-format.md).
dbtr_add_test_file(SOURCE test_nifti.c LABELS cpu LIBS dbtr_core dbtr::nifti)
