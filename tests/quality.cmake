# tests/quality.cmake: the per-object quality measures (quality/quality.h) on volumes with known
# answers, and the phantom's objects in the scan file (phantoms/objects_h5.h).
dbtr_add_test_file(SOURCE test_quality.c LABELS cpu LIBS dbtr_core)
