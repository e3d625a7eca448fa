# tests/scan.cmake: the HDF5 scan file (io/scan.c reads, io/scan_write.c writes; docs/scan-format.md).
dbtr_add_test_file(SOURCE test_scan.c LABELS cpu LIBS dbtr_core)
# The docs_example case runs the h5py example block of docs/scan-format.md.
target_compile_definitions(test_scan PRIVATE DBTR_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
dbtr_add_test_file(SOURCE test_scan_write.c LABELS cpu LIBS dbtr_core)
# The large datasets read in parallel blocks (io/scan_bulk.c).
dbtr_add_test_file(SOURCE test_scan_bulk.c LABELS cpu LIBS dbtr_core)
# The header read in a child process (io/scan_guard.c).
dbtr_add_test_file(SOURCE test_scan_guard.c LABELS cpu LIBS dbtr_core)
target_compile_definitions(test_scan_guard PRIVATE DBTR_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
