# tests/scan_notes.cmake: the optional /provenance notes of a scan file (io/scan.c,
# io/scan_write.c; docs/scan-format.md), which `dbtr import` writes and `dbtr info` shows.
dbtr_add_test_file(SOURCE test_scan_notes.c LABELS cpu LIBS dbtr_core)
